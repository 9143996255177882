/* SPDX-License-Identifier: MIT */
/*
 * default_place.h - where the user's region lives by default (DESIGN 9).
 */
#ifndef VL_DEFAULT_PLACE_H
#define VL_DEFAULT_PLACE_H

#include <stddef.h>

/*
 * The default region of this user, and in why a few words saying why
 * there: in a directory only the user can make names in (the user's
 * runtime directory, /run/user/EUID; for root, /run), else in /dev/shm,
 * where anyone can.
 */
void vl_region_default(char *buf, size_t size, char *why, size_t wsize);

/*
 * Is path one of this user's default names (whichever place is chosen
 * now)? A region there is the default one, whoever named it: it takes in
 * and is taken in by default regions (move.c, attach.c's settling).
 */
int vl_is_default_name(const char *path);

/* The directories a default name may be in (this user's): how many, at most max. */
int vl_default_dirs(char dirs[][64], int max);

/*
 * Spell an absolute path one way: no "//", no ".", ".." taken back
 * (lexically: the region's path follows no symlink). Regions are known by
 * the name they were made with, and "/d//region" is "/d/region".
 */
void vl_path_normalize(char *path);

#endif
