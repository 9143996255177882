/* SPDX-License-Identifier: MIT */
/*
 * evict.c - a full file table makes room (see evict.h).
 *
 * The records nobody can clear. A record with a purged range is kept
 * until its file is taken for gone (purge.c, point 5: by the kernel's
 * ESTALE, or by /proc twice). Where neither can be had (a process of the
 * user that cannot be looked into, and no CAP_DAC_READ_SEARCH for
 * inode_gone.c's), such records stayed for good, and enough of them (an ashmem
 * test suite left 8 a run) filled the table: every MARK of a new file
 * failed with ENOMEM from then on.
 *
 * So a MARK (or a new ashmem region) that finds the table full makes
 * room. It frees the records of files that
 *   - have shown no sign of life for EVICT_AGE seconds: not made, not
 *     changed by a MARK or UNMARK, not reached by an eviction (alive_at);
 *   - and that no route reaches now: a purge failed to reach them since
 *     and less than LOOK_FRESH s ago (checked_at), or this eviction tries
 *     (vl_reach, EVICT_LOOKS of them at most per call) and fails too;
 * longest silent first, up to EVICT_BATCH per scan of the table (a scan
 * reads every record: amortised over a batch). A record whose inode the
 * kernel says is gone (inode_gone.c) is dropped outright (vl_drop_file: its
 * purged ranges leave a tombstone, as every forgetting's do).
 * Records of files in use (changed within the minute, or reachable) are
 * never evicted: a table full of those still says ENOMEM.
 *
 * Why that keeps THE INVARIANT. Unpurged ranges may always be forgotten.
 * A record with purged ranges, or flagged (vl_file_flagged: a repair lost
 * a purged range of it), leaves its identity in the tombstones
 * (core/tomb.h) under both its locks, before its slot is freed: from
 * then on an UNMARK of that identity that finds no record says 1, and a
 * record made for it again is flagged VL_FF_TOMB as it is made (pool.c),
 * and every UNMARK of that one says 1 too. Every UNMARK, not only those
 * touching bytes outside its own ranges: a MARK over bytes of the evicted
 * purged range makes an unpurged range of the new record over zeros, and
 * its UNMARK must still say 1 (DESIGN 3: the range it merged into had been
 * purged while volatile). So an UNMARK of an evicted file never says 0
 * again: over bytes its purged ranges covered that is the answer DESIGN 3
 * asks for; anywhere else a 1 costs the program a rebuild of bytes that
 * were intact, never its data.
 *
 * The costs: false 1s, for the evicted files (a live one that could not
 * be reached, whose holder unmarks later) and for files the tombstones
 * take for them (born before their horizon, tomb.h); and an evicted
 * ashmem region's record takes its name, size and prot mask with it, so
 * the region is a plain memfd from then on (doc/limits.md).
 */
#include "evict.h"

#include "core/fault.h"
#include "core/index.h"
#include "core/tomb.h"
#include "env.h"
#include "log.h"
#include "purge.h"
#include "file_route.h"
#include "region.h"
#include "inode_gone.h"
#include "sys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EVICT_AGE 60   /* s of silence before a record may be evicted */
#define LOOK_FRESH 60  /* s a purge's failed reach stands for */
#define EVICT_BATCH 8  /* records evicted at most per scan of the table */
#define EVICT_LOOKS 4  /* reaches an eviction makes itself, at most */

/* (the test suite's copy may be told a shorter silence: env.h) */
static uint32_t min_age(void)
{
	return vl_test_seconds("VOLATILE_FAULT_EVICT_AGE", EVICT_AGE);
}

struct cand {
	uint32_t fi, gen;
	uint32_t alive_at;
	uint32_t quiet; /* seconds since alive_at; UINT32_MAX: never alive */
};

/* Keep c among the EVICT_BATCH longest silent of list, in that order. */
static void keep_cand(struct cand *list, int *n, const struct cand *c)
{
	int i = *n;

	if (i == EVICT_BATCH) {
		if (c->quiet <= list[i - 1].quiet)
			return;
		i--; /* the least silent makes way */
	} else {
		(*n)++;
	}
	while (i > 0 && list[i - 1].quiet < c->quiet) {
		list[i] = list[i - 1];
		i--;
	}
	list[i] = *c;
}

/* The longest silent records, silent for age s at least (region lock held). */
static int candidates(const struct vl_region *r, uint32_t now, uint32_t age, struct cand *list)
{
	uint32_t hwm = vl_file_hwm(r);
	int n = 0;

	VL_ASSERT_HELD(r, &r->hdr->lock);
	for (uint32_t fi = 1; fi < hwm; fi++) {
		const struct vl_file *f = vl_file_at(r, fi);
		struct cand c = { fi, f->h.gen, f->h.alive_at,
				  f->h.alive_at ? now - f->h.alive_at : UINT32_MAX };

		/* sums are checked on the few chosen, under their locks */
		if (f->h.state == VL_FILE_LIVE && c.quiet >= age)
			keep_cand(list, &n, &c);
	}
	return n;
}

/* Is c's record still that file's, sound, and silent since? (region lock held) */
static int still(const struct vl_region *r, const struct cand *c)
{
	const struct vl_file *f = vl_file_at(r, c->fi);

	VL_ASSERT_HELD(r, &r->hdr->lock);
	return f->h.gen == c->gen && f->h.state == VL_FILE_LIVE && vl_file_ok(r, f) &&
	       f->h.alive_at == c->alive_at;
}

/* Did a purge fail to reach it lately, and after its last sign of life? (region lock held) */
static int failed_lately(const struct vl_region *r, const struct cand *c, uint32_t now)
{
	uint32_t at = vl_file_at(r, c->fi)->h.checked_at;

	VL_ASSERT_HELD(r, &r->hdr->lock);
	return at != 0 && (int32_t)(at - c->alive_at) >= 0 && now - at < LOOK_FRESH;
}

/*
 * Does a route reach c's file now? 1: yes, and its record says so (it
 * is alive: not a candidate for another EVICT_AGE s); 0: no.
 */
static int reached(const struct vl_region *r, const struct cand *c, const struct vl_target *t,
		   struct vl_reach_ctx *ctx, uint32_t now)
{
	struct vl_reached got;
	int fd = vl_reach(t, ctx, &got);

	if (fd < 0)
		return 0;
	vl_raw_close(fd);
	if (vl_lock_region(r) == 0) {
		struct vl_file *f = vl_file_at(r, c->fi);

		if (still(r, c)) {
			f->h.alive_at = now;
			f->h.checked_at = 0;
			f->h.gone_since = 0;
		}
		vl_unlock_region(r);
	}
	return 1;
}

/* Free c's record, leaving a tombstone if it had purged ranges. */
static int evict(const struct vl_region *r, const struct cand *c)
{
	struct vl_file *f = vl_file_at(r, c->fi);
	struct vl_change ch;
	int err = vl_lock_file(r, c->fi);

	if (err)
		return err;
	err = vl_lock_region(r);
	if (err)
		goto out;
	if (!still(r, c)) {
		err = -ESTALE; /* freed, or changed: alive after all */
	} else {
		/*
		 * The tombstone before anything goes: a MARK may make a new record
		 * for the file as soon as this slot is free, and must find it. A
		 * crash between the two leaves a tombstone and the record: a
		 * false 1 at worst.
		 */
		int tomb = vl_file_tomb_before(f, 0);

		if (tomb)
			vl_tomb_add(r->tomb, &f->h.ident);
		VL_STEP("evict: tombstone set, record kept");
		err = vl_ix_clear(r, c->fi, &ch);
		/* a purged range the count missed: its tombstone, still before the slot goes */
		if (err == 0 && vl_file_tomb_after(tomb, 0, ch.d_purged))
			vl_tomb_add(r->tomb, &f->h.ident);
		if (err == 0) {
			vl_ix_commit(r, c->fi, &ch);
			vl_file_release(r, c->fi);
			r->hdr->c.evicted++;
		}
	}
	vl_unlock_region(r);
out:
	vl_unlock_file(r, c->fi);
	return err;
}

/* c's target, if c is still what it was: 1 and *fresh, else 0. */
static int target_of(const struct vl_region *r, const struct cand *c, uint32_t now,
		     struct vl_target *t, int *fresh)
{
	int ok;

	if (vl_lock_region(r) != 0)
		return 0;
	ok = still(r, c);
	if (ok) {
		vl_target_copy(r, c->fi, t);
		*fresh = failed_lately(r, c, now);
	}
	vl_unlock_region(r);
	return ok;
}

#define EMPTY_BATCH 64 /* empty records freed at most per call */

/*
 * Records with nothing in them: no range, no ashmem state. A record is
 * kept while its file has no range (made once per file, not at every
 * MARK: DESIGN 12), so a table that fills is first made room in by
 * freeing those: nothing is lost, the next MARK of the file makes it
 * again (a tombstoned identity's flag with it: pool.c). Locks that are
 * not free at once are passed over.
 */
static int free_empty(const struct vl_region *r)
{
	uint32_t hwm = vl_file_hwm(r);
	int freed = 0;

	for (uint32_t fi = 1; fi < hwm && freed < EMPTY_BATCH; fi++) {
		struct vl_file *f = vl_file_at(r, fi);

		if (__atomic_load_n(&f->h.state, __ATOMIC_ACQUIRE) != VL_FILE_LIVE ||
		    __atomic_load_n(&f->h.nranges, __ATOMIC_RELAXED) != 0 || vl_file_holds_state(f) ||
		    vl_trylock_file(r, fi) != 0)
			continue;
		if (vl_trylock_region(r) == 0) {
			if (f->h.state == VL_FILE_LIVE && f->h.nranges == 0 && !vl_file_holds_state(f) &&
			    vl_file_ok(r, f)) {
				/* empty, but a flagged one's lost purged ranges need a tombstone */
				if (vl_file_tomb_before(f, 0))
					vl_tomb_add(r->tomb, &f->h.ident);
				vl_file_release(r, fi);
				freed++;
			}
			vl_unlock_region(r);
		}
		vl_unlock_file(r, fi);
	}
	return freed;
}

int vl_evict(const struct vl_region *r)
{
	struct cand list[EVICT_BATCH];
	struct vl_reach_ctx ctx;
	uint32_t now = vl_now_s();
	int n, freed = free_empty(r), looks = 0;

	if (freed > 0) {
		vl_log("table full: %d records with no range freed", freed);
		return freed;
	}
	memset(&ctx, 0, sizeof(ctx));
	if (vl_lock_region(r) != 0)
		return 0;
	n = candidates(r, now, min_age(), list);
	vl_unlock_region(r);
	for (int i = 0; i < n; i++) {
		const struct cand *c = &list[i];
		struct vl_target t;
		int fresh = 0;

		if (!target_of(r, c, now, &t, &fresh))
			continue;
		if (vl_gone_by_handle(&t.id) == 1) {
			if (vl_drop_file(r, c->fi, c->gen, VL_DROP_ALL) == 0) {
				vl_log("file %u is gone (no such inode): its record is dropped", c->fi);
				freed++;
			}
			continue;
		}
		if (!fresh && (looks++ >= EVICT_LOOKS || reached(r, c, &t, &ctx, now) != 0))
			continue;
		if (evict(r, c) == 0) {
			vl_log("table full: file %u, silent %u s and unreachable, is evicted", c->fi,
			       c->quiet);
			freed++;
		}
	}
	return freed;
}
