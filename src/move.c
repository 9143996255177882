/* SPDX-License-Identifier: MIT */
/*
 * move.c - a region whose name no longer leads to it hands its records
 * to the region new processes find (see move.h and layout.h).
 *
 * Why no process answers from one region what the other contradicts:
 *
 *   1. A region made anew is born waiting (attach.c): it answers nothing
 *      until its maker, or any process that finds it so, has looked at
 *      every region mapped by the user's processes and moved in those it
 *      could reach; one it could not reach (its name removed, only mapped)
 *      is left to its own users, who move it in when they next find their
 *      region stale (attach.c). Until then the new one waits, or, past its
 *      young period, serves "blind" (attach.c, DESIGN 16: why the two never
 *      contradict each other).
 *   2. Moving starts by retiring the old region, then takes each of its
 *      file locks in turn: an operation that held one finishes first and
 *      its result is moved; one that takes it after sees the region
 *      retired and fails with ESTALE, changing nothing (its caller moves to
 *      the new region and tries again). So what is moved is everything the
 *      old region ever answered, and nothing is answered from it after.
 *   3. Purged ranges are moved as purged, without a punch: UNMARK in the
 *      new region says 1 wherever it said 1 in the old one; and so are
 *      the old region's tombstones (evict.c) and its records' tombstone
 *      flags, which stand for purged ranges it no longer has. Unpurged ranges
 *      are moved as unpurged; a purged range moved over an unpurged one
 *      makes it purged, unpunched: UNMARK says 1 over bytes that may be
 *      intact, the safe direction (doc/decisions.md).
 *
 * A mover takes the locks of two regions: in the order of core/layout.h
 * (struct vl_lock), old before new, so movers and operations cannot
 * deadlock.
 */
#include "move.h"

#include "age.h"
#include "core/index.h"
#include "core/tomb.h"
#include "lock.h"
#include "log.h"
#include "region.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

int vl_region_moved_in(const struct vl_region *cur, uint64_t dev, uint64_t ino)
{
	const struct vl_fate *f = &cur->hdr->fate;
	uint32_t n = __atomic_load_n(&f->nmoved, __ATOMIC_ACQUIRE);

	if (n > VL_MOVED_MAX)
		n = VL_MOVED_MAX;
	for (uint32_t i = 0; i < n; i++)
		if (f->moved_from[i].dev == dev && f->moved_from[i].ino == ino)
			return 1;
	return 0;
}

/* Note (dev, ino) in cur's list (region lock held); the oldest goes when it is full. */
static void note_moved(const struct vl_region *cur, uint64_t dev, uint64_t ino)
{
	struct vl_fate *f = &cur->hdr->fate;
	uint32_t n = f->nmoved > VL_MOVED_MAX ? VL_MOVED_MAX : f->nmoved;

	VL_ASSERT_HELD(cur, &cur->hdr->lock);
	if (vl_region_moved_in(cur, dev, ino))
		return;
	if (n == VL_MOVED_MAX) {
		memmove(&f->moved_from[0], &f->moved_from[1], sizeof(f->moved_from[0]) * (n - 1));
		n--;
	}
	f->moved_from[n].dev = dev;
	f->moved_from[n].ino = ino;
	__atomic_store_n(&f->nmoved, n + 1, __ATOMIC_RELEASE);
}

/* The record of id in cur, made if missing, locked: 0 and *fi, or -errno. */
static int record_locked(const struct vl_region *cur, const struct vl_ident *id, uint32_t *fi)
{
	for (int tries = 0; tries < 64; tries++) {
		uint32_t gen;
		int err = vl_lock_region(cur);

		if (err)
			return err;
		err = vl_file_lookup(cur, id, fi);
		if (err == 0 && *fi == VL_NIL)
			err = vl_file_new(cur, id, fi);
		gen = err ? 0 : vl_file_at(cur, *fi)->h.gen;
		vl_unlock_region(cur);
		if (err)
			return err;
		err = vl_lock_file(cur, *fi);
		if (err)
			return err;
		if (vl_file_at(cur, *fi)->h.gen == gen &&
		    vl_file_at(cur, *fi)->h.state == VL_FILE_LIVE)
			return 0;
		vl_unlock_file(cur, *fi);
	}
	return -EAGAIN;
}

/* Add [s, e), purged or not, to file fi of cur (its lock held); nothing is punched. */
static int add_range(const struct vl_region *cur, uint32_t fi, uint64_t s, uint64_t e,
		     int purged)
{
	struct vl_ix_res res;

	VL_ASSERT_HELD(cur, &vl_file_at(cur, fi)->h.lock);
	if (!vl_ix_reserve_kept(cur, fi, &res))
		vl_ix_reserve_new(cur, fi, &res);
	return vl_ix_put(cur, fi, s, e, purged, vl_age_stamp(vl_age_now_of(vl_now_ms())), &res);
}

/* The ways to reach the file, and an ashmem region's state, as old had them (both locked). */
static void adopt(const struct vl_region *cur, uint32_t fi, const struct vl_file *from)
{
	struct vl_file *f = vl_file_at(cur, fi);

	if (vl_lock_region(cur) != 0)
		return;
	if ((from->h.flags & VL_FF_ASHMEM) && !(f->h.flags & VL_FF_ASHMEM)) {
		f->ash = from->ash;
		f->h.flags |= VL_FF_ASHMEM;
		f->h.path_len = 0;
	}
	if (!(f->h.flags & VL_FF_ASHMEM) && f->h.path_len == 0 && from->h.path_len != 0 &&
	    from->h.path_len < VL_PATH_MAX && !(from->h.flags & VL_FF_ASHMEM)) {
		memcpy(f->path, from->path, from->h.path_len);
		f->h.path_len = from->h.path_len;
	}
	for (int i = 0; i < VL_HOLDERS; i++)
		if (f->h.holders[i].pid == 0)
			f->h.holders[i] = from->h.holders[i];
	/* a file whose purged ranges were evicted answers 1 in the new region too */
	f->h.flags |= from->h.flags & (VL_FF_ANON | VL_FF_TOMB);
	vl_unlock_region(cur);
}

/* Move file fi of old (its lock held) into cur. */
static int move_file(const struct vl_region *old, uint32_t fi, const struct vl_region *cur)
{
	const struct vl_file *from = vl_file_at(old, fi);
	struct vl_ix_walk w;
	struct vl_ix_range x;
	uint32_t to;
	int err, got;

	VL_ASSERT_HELD(old, &vl_file_at(old, fi)->h.lock);
	if (from->h.state != VL_FILE_LIVE || !vl_file_ok(old, from))
		return 0; /* a record we cannot read names no file we could answer for */
	if (vl_ix_empty(old, fi) && !(from->h.flags & (VL_FF_ASHMEM | VL_FF_TOMB)))
		return 0; /* nothing to say about it */
	err = record_locked(cur, &from->h.ident, &to);
	if (err)
		return err;
	vl_ix_walk_init(&w, old, fi);
	while (err == 0 && (got = vl_ix_walk_next(&w, &x)) != 0) {
		if (got < 0) {
			/*
			 * a range we cannot read, or a walk that did not end within
			 * its bound (a loop hides what follows it): all of the file
			 * counts as purged
			 */
			err = add_range(cur, to, 0, INT64_MAX, 1);
			break;
		}
		err = add_range(cur, to, x.start, x.end, x.purged);
	}
	if (err == 0)
		adopt(cur, to, from);
	vl_unlock_file(cur, to);
	return err;
}

/* A file of old whose lock is broken: its ranges cannot be read; all of it counts as purged. */
static int move_unreadable(const struct vl_region *old, uint32_t fi, const struct vl_region *cur)
{
	const struct vl_file *from = vl_file_at(old, fi);
	uint32_t to;
	int err;

	if (from->h.state != VL_FILE_LIVE || !vl_file_ok(old, from))
		return 0;
	err = record_locked(cur, &from->h.ident, &to);
	if (err)
		return err;
	err = add_range(cur, to, 0, INT64_MAX, 1);
	vl_unlock_file(cur, to);
	return err;
}

int vl_region_move(const struct vl_region *old, const struct vl_region *cur)
{
	struct vl_fate *fate = &old->hdr->fate;
	uint32_t hwm;
	int err;

	if (old->file_dev == cur->file_dev && old->file_ino == cur->file_ino)
		return -EINVAL; /* one file, mapped twice: nothing to move, nothing to retire */
	err = vl_lock_take(old, &fate->move_lock);
	if (err < 0)
		return err;
	if (__atomic_load_n(&fate->retired, __ATOMIC_ACQUIRE) == VL_MOVED)
		goto done;
	__atomic_store_n(&fate->retired, VL_RETIRING, __ATOMIC_SEQ_CST);
	vl_log("region %llu:%llu is no longer the one new processes find: moving its records",
	       (unsigned long long)old->file_dev, (unsigned long long)old->file_ino);
	hwm = vl_file_hwm(old);
	for (uint32_t fi = 1; fi < hwm && err == 0; fi++) {
		int e = vl_lock_file_retired(old, fi);

		if (e == -EUCLEAN) {
			err = move_unreadable(old, fi, cur);
			continue;
		}
		if (e < 0) {
			err = e;
			break;
		}
		err = move_file(old, fi, cur);
		vl_unlock_file(old, fi);
	}
	if (err == 0)
		err = vl_lock_region(cur);
	if (err == 0) {
		/*
		 * The tombstones too: what forgotten records said must still be
		 * said. The horizon first, then every entry (one the new table
		 * has no room for raises it further): no identity the old
		 * tombstones held is without one in the new.
		 */
		vl_tomb_raise(cur->tomb, __atomic_load_n(&old->tomb->horizon, __ATOMIC_ACQUIRE));
		for (uint32_t s = 0; s < VL_TOMB_SETS; s++)
			for (uint32_t w = 0; w < VL_TOMB_WAYS; w++) {
				uint64_t fp = __atomic_load_n(&old->tomb->fp[s][w], __ATOMIC_ACQUIRE);

				if (fp != 0)
					vl_tomb_add_fp(cur->tomb, fp, old->tomb->birth[s][w]);
			}
		note_moved(cur, old->file_dev, old->file_ino);
		for (uint32_t i = 0; i < fate->nmoved && i < VL_MOVED_MAX; i++)
			note_moved(cur, fate->moved_from[i].dev, fate->moved_from[i].ino);
		vl_unlock_region(cur);
		__atomic_store_n(&fate->retired, VL_MOVED, __ATOMIC_RELEASE);
		vl_log("region %llu:%llu moved", (unsigned long long)old->file_dev,
		       (unsigned long long)old->file_ino);
	}
done:
	vl_lock_drop(old, &fate->move_lock);
	return err;
}
