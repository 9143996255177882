/*
 * where.h - where the user's region lives by default (SPEC 9).
 */
#ifndef VL_WHERE_H
#define VL_WHERE_H

#include <stddef.h>

/*
 * The default region of this user, and in why a few words saying why
 * there: in a directory only the user can make names in (the user's
 * runtime directory, /run/user/EUID; for root, /run), else in /dev/shm,
 * where anyone can.
 */
void vl_region_default(char *buf, size_t size, char *why, size_t wsize);

#endif
