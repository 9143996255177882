/* SPDX-License-Identifier: MIT */
/*
 * move.h - moving the records of a region whose name no longer leads to
 * it into the region new processes find (DESIGN 16; layout.h, struct vl_fate).
 */
#ifndef VL_MOVE_H
#define VL_MOVE_H

#include "core/layout.h"

/*
 * Retire old (every file lock of it says ESTALE from now on) and move its
 * records into cur: each file's ranges, purged ones as purged (nothing is
 * punched), and the ways to reach it; an ashmem region's state. A file
 * whose lock is broken, so that its ranges cannot be read, gets one purged
 * range over all of it in cur: UNMARK of it says 1 from then on, never 0.
 * Then old is VL_MOVED and cur lists it in moved_from. One mover at a
 * time; a mover that died is taken over and its work done again (adding
 * what is already there changes nothing). 0, or -errno (old left retiring:
 * cur keeps waiting for it).
 */
int vl_region_move(const struct vl_region *old, const struct vl_region *cur);

/* Is the region file (dev, ino) one whose records cur already has? (region lock not needed) */
int vl_region_moved_in(const struct vl_region *cur, uint64_t dev, uint64_t ino);

#endif
