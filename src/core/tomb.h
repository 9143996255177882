/* SPDX-License-Identifier: MIT */
/*
 * tomb.h - tombstones: the identities of files whose records were evicted
 * with purged ranges (evict.c), in a Bloom filter in the region.
 *
 * A record evicted from a full table takes with it what its purged
 * ranges said: that an UNMARK of those bytes must answer 1. The filter
 * keeps that answer, for every evicted identity at once, in a fixed
 * size: an identity it holds always tests true (no false negative), so
 * UNMARK never says 0 over bytes an evicted purged range covered. The
 * price is the other direction: an identity never added tests true with
 * a small probability (about 1 in 35,000 after 10,000 evictions, 1 in 40
 * after 65,536), and such a file's UNMARKs say 1. Bits are only ever set;
 * they clear when the region is made anew.
 *
 * Bits are set under the region lock, with atomic ORs, and read with
 * atomic loads: a reader with no lock sees a bit set by a writer whose
 * region lock it took after. Every index is masked into the filter, so a
 * scribbled region can make an answer wrong, never a read stray.
 */
#ifndef VL_CORE_TOMB_H
#define VL_CORE_TOMB_H

#include "layout.h"

#include <stdint.h>

#define VL_TOMB_BYTES 65536u                 /* 2^19 bits */
#define VL_TOMB_BITS (VL_TOMB_BYTES * 8u)
#define VL_TOMB_WORDS (VL_TOMB_BYTES / 8u)
#define VL_TOMB_K 4                          /* bits per identity */

/* Remember id in the filter of VL_TOMB_WORDS words. */
void vl_tomb_add(uint64_t *bits, const struct vl_ident *id);
/* Was id added? 1 if it was (or, seldom, if another identity's bits say so), else 0. */
int vl_tomb_has(const uint64_t *bits, const struct vl_ident *id);
/* The K bit numbers of id, for tests. */
void vl_tomb_bits_of(const struct vl_ident *id, uint32_t out[VL_TOMB_K]);

#endif
