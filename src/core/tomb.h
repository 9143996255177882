/* SPDX-License-Identifier: MIT */
/*
 * tomb.h - tombstones: the identities of files whose records were
 * forgotten with purged ranges (purge.c point 5, evict.c), kept in the
 * region so that a later UNMARK of such a file says 1 (DESIGN 15).
 *
 * A record forgotten with a purged range takes with it what that range
 * said: that an UNMARK of those bytes must answer 1. The tombstones keep
 * that answer, for every forgotten identity at once, in a fixed 64 KiB:
 *
 *   - an exact table of fingerprints (a 64-bit hash of the whole
 *     vl_ident), VL_TOMB_SETS sets of VL_TOMB_WAYS ways, each way a
 *     fingerprint and the identity's birth time (ns, statx's btime);
 *   - a HORIZON, a birth time that only ever rises: an entry leaves the
 *     table only by raising the horizon to its birth first.
 *
 * An identity is tombstoned iff its birth <= horizon, or its fingerprint
 * is in its set. So no false negative, by construction: an identity
 * added is in the table, or was pushed out by raising the horizon over
 * it, and the horizon never falls. An identity with no birth time counts
 * as born at 1 ns: under any horizon once there is one (a false 1).
 *
 * Which entry goes when a set is full: the one born first, the newcomer
 * included. The horizon rises as little as it can, and what the table
 * keeps is the newest-born forgotten identities (about 1,800 of them:
 * the horizon is where the first of 255 sets overflows its 16 ways).
 * Entries already under the horizon are free ways.
 *
 * The false 1s (tests/unit/test-tomb.c, 1,000,000 identities forgotten,
 * born over 10,000 s in jittered order):
 *   - an identity born after the horizon: only a fingerprint collision
 *     in its set, 16 in 2^64 (measured: 0 in 1,000,000; the test asserts
 *     fewer than 1 in 100,000);
 *   - an identity born at or before the horizon: 1, always. Those are
 *     files born before the ~1,800 newest-born forgotten purged files were
 *     born; a record made again for one (its old one freed: it was empty
 *     and the table was full, or forgotten) is TOMB (DESIGN 15 says what
 *     that costs, and when it happens).
 * A wall clock stepped back makes later births look older: more false
 * 1s, never a false 0.
 *
 * Written under the region lock only. Read with no lock by an UNMARK
 * that found no record (after taking the region lock that told it so)
 * and by vl_file_publish (under it): a writer raises the horizon, then
 * overwrites a way with a release store of its fingerprint; a reader
 * loads the set's fingerprints (acquire), then the horizon, so one that
 * misses an identity pushed out sees the horizon raised over it. Every
 * index is reduced into the table, so a scribbled region can make an
 * answer wrong (as any scribble can), never a read stray.
 */
#ifndef VL_CORE_TOMB_H
#define VL_CORE_TOMB_H

#include "layout.h"

#include <stdint.h>

#define VL_TOMB_BYTES 65536u
#define VL_TOMB_WAYS 16u
#define VL_TOMB_SETS 255u
#define VL_TOMB_HEAD 32u /* words before the table: the horizon, counts, room */
#define VL_TOMB_LEFT 8u  /* older regions left, watched (attach.c) */

struct vl_tomb {
	uint64_t horizon; /* ns; 0: none yet. Only rises */
	uint64_t added;   /* identities written into the table (hints, for status) */
	uint64_t pushed;  /* entries pushed out of it, each raising the horizon */
	/*
	 * Older regions this one saw left to their users (dev, ino; 0 0: a
	 * free entry), whose records may yet go with those users, unmoved:
	 * attach.c raises the horizon when one goes so (DESIGN 16). In what
	 * was room: a region made before reads none.
	 */
	uint64_t left[VL_TOMB_LEFT][2];
	uint64_t room[VL_TOMB_HEAD - 3 - 2 * VL_TOMB_LEFT];
	uint64_t fp[VL_TOMB_SETS][VL_TOMB_WAYS];    /* 0: a free way */
	uint64_t birth[VL_TOMB_SETS][VL_TOMB_WAYS]; /* ns, >= 1; read by writers only */
};

_Static_assert(sizeof(struct vl_tomb) == VL_TOMB_BYTES, "the tombstones fill their 64 KiB");

/*
 * Where the tombstones lie in a region: right after its header, on the
 * next page (every region's geometry is this one: vl_geometry_check). So
 * a function given only the tombstones finds the lock that guards them,
 * the region lock, for the debug build's check (VL_ASSERT_MINE).
 */
#define VL_TOMB_OFF (((uint64_t)sizeof(struct vl_header) + 4095u) & ~(uint64_t)4095u)

static inline const struct vl_lock *vl_tomb_region_lock(const struct vl_tomb *t)
{
	return &((const struct vl_header *)(const void *)((const char *)t - VL_TOMB_OFF))->lock;
}

/* The identity's fingerprint (never 0) and birth time in ns (never 0). */
uint64_t vl_tomb_fp(const struct vl_ident *id);
uint64_t vl_tomb_birth(const struct vl_ident *id);

/* Remember id (region lock held). */
void vl_tomb_add(struct vl_tomb *t, const struct vl_ident *id);
/* The same, for a fingerprint and birth already made (a move, region lock held). */
void vl_tomb_add_fp(struct vl_tomb *t, uint64_t fp, uint64_t birth);
/* Raise the horizon to at least h (region lock held). */
void vl_tomb_raise(struct vl_tomb *t, uint64_t h);
/* Is id tombstoned? 1 if it was added (or, seldom, see above), else 0. */
int vl_tomb_has(const struct vl_tomb *t, const struct vl_ident *id);

#endif
