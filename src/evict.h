/* SPDX-License-Identifier: MIT */
/*
 * evict.h - a full file table makes room (doc/limits.md).
 */
#ifndef VL_EVICT_H
#define VL_EVICT_H

#include "core/layout.h"

/*
 * The file table is full and a new record is needed: free the records of
 * files that have shown no sign of life for a while and that no route
 * reaches now (evict.c says which, and why it is safe). Call with no lock
 * held. Returns how many records were freed (0: none may go; the table
 * is full of files in use, and the caller fails with ENOMEM).
 */
int vl_evict(const struct vl_region *r);

#endif
