/* SPDX-License-Identifier: MIT */
/*
 * policy.h - the purge decision (DESIGN 6): when to purge, and how much.
 *
 * purge.c is the mechanism (the locks, the checks, the records, the
 * punch): given a goal (bytes, or a ceiling; a device), it purges oldest
 * first, a batch of ranges a visit, until the goal is met; which file a
 * visit goes to, whether that choice stands under the file's lock, whether
 * the goal is met and how far a batch goes are asked here. What sets a goal is here too:
 *   - VOLATILE_BUDGET, at a MARK whose commit left the region over it;
 *   - VOLATILE_MIN_AVAILABLE, memory (the system's or the cgroup's
 *     headroom): at a MARK, looked at every VL_PRESSURE_EVERY_MS, and by the
 *     daemon (cli/daemon.c), each in rounds while a round purges;
 *   - VOLATILE_TMPFS_MIN_FREE, a tmpfs's free space: the same.
 * The measuring is mem_state.c's; the thresholds' arithmetic
 * core/pressure.c's (pure, unit-tested).
 */
#ifndef VL_POLICY_H
#define VL_POLICY_H

#include "age.h"
#include "core/index.h"
#include "core/layout.h"
#include "region.h"
#include "env.h"
#include "ident.h"
#include "mem_state.h"
#include "purge.h"
#include "sys.h"

#include <stdint.h>

/*
 * Rounds of memory relief, at most: freed memory shows at once, so a
 * round that purged and left memory low purges again; the rounds bound
 * the work if it does not. A MARK takes fewer (the caller waits).
 */
#define VL_MARK_MEMORY_ROUNDS 4
#define VL_DAEMON_MEMORY_ROUNDS 8

/*
 * Room beyond VOLATILE_MIN_AVAILABLE that a memory purge makes (at
 * least; vl_purge_need), so that the next look does not purge at once:
 * the library's and the machine's daemon's (cli/system.c).
 */
#define VL_MEMORY_ROOM (1u << 20)

/*
 * The region's unpurged bytes as this process can tell them at once: the
 * shared total plus its own slot's deltas (core/pool.h vl_totals_read).
 * Its callers (a budget's) have made the region's totals shared
 * (vl_totals_share): the other slots hold nothing once its recount is
 * made; until then (owed) they may hold up to VL_FOLD_BYTES each either
 * way, so every slot is read while a recount is owed. Read with no lock:
 * a reader between a carry's two adds sees it 2^64 short (layout.h).
 */
struct vl_u128 vl_volatile_guess(const struct vl_region *r);

/*
 * The region's oldest unpurged age (the oldest any LIVE file publishes,
 * vl_pick_oldest) and in *unpurged its unpurged volatile bytes
 * (saturated), both read with no lock: what a user's worker reports to
 * the machine's daemon (DESIGN 22). 0 and *unpurged 0 when no file
 * publishes an age. A guess: the purge checks it under the locks.
 */
uint32_t vl_region_oldest(const struct vl_region *r, uint64_t *unpurged);
/*
 * The same over the files g leaves in (g->held_by: a cgroup's holders'),
 * *unpurged the sum of their unpurged bytes (saturated; every file slot
 * in use read once, a bounded walk). g NULL: vl_region_oldest.
 */
uint32_t vl_region_oldest_of(const struct vl_region *r, const struct vl_goal *g,
			     uint64_t *unpurged);

/*
 * Is the region over this process's budget (vl_volatile_guess; file fi's
 * lock held, its MARK committed)? A budget needs the totals exact: the
 * first MARK with one in a region makes every commit count on the shared
 * totals from then on (vl_totals_share). A count read torn makes this
 * MARK enforce nothing; the next one will. Inline: every MARK's commit
 * asks.
 */
static inline int vl_over_budget(const struct vl_region *r, uint32_t fi)
{
	const struct vl_config *cfg = vl_config();
	struct vl_u128 v;

	if (!cfg->has_budget)
		return 0;
	if (__atomic_load_n(&r->hdr->c.shared_totals, __ATOMIC_RELAXED) == 0)
		vl_totals_share(r, fi);
	v = vl_volatile_guess(r);
	return vl_u128_cmp(&v, cfg->budget) > 0;
}

/*
 * Memory and tmpfs space are looked at on MARK at most every 250 ms per
 * process (a coarse clock read and a compare the rest of the time), so
 * the check costs nothing a benchmark of MARK can see.
 */
#define VL_PRESSURE_EVERY_MS 250
extern uint64_t vl_pressure_checked_ms;

/* The commit of a MARK found the region over the budget: purge, oldest first. */
void vl_enforce_budget(const struct vl_region *r, const struct vl_hint *h);
/* A MARK's look at memory and st's tmpfs, when due: purge what is low. */
void vl_relieve_pressure(const struct vl_region *r, const struct vl_hint *h,
			 const struct vl_stat *st);

/*
 * After a MARK of the file that h names, committed and its lock let go:
 * purge to the budget if the commit found the region over it
 * (over_budget), and, if it is time, relieve memory and st's tmpfs.
 * Inline: the common case is two compares and a clock compare.
 */
static inline void vl_after_mark(const struct vl_region *r, const struct vl_hint *h,
				 const struct vl_stat *st, int over_budget, uint64_t now_ms)
{
	const struct vl_config *cfg = vl_config();

	if (over_budget)
		vl_enforce_budget(r, h);
	if (!vl_threshold_on(&cfg->min_available) && !vl_threshold_on(&cfg->tmpfs_min_free))
		return;
	if (vl_due(&vl_pressure_checked_ms, VL_PRESSURE_EVERY_MS, now_ms))
		vl_relieve_pressure(r, h, st);
}

/* ---- in a pass (purge.c): which range, the goal, how much one visit takes ---- */

/*
 * Seconds a file found unreachable is left alone: by every purger when
 * its record says so (checked_at), by this process only when a MARK's
 * cheap routes missed it (purge.c, unreached).
 */
#define VL_RECHECK 10

/*
 * The file a visit goes to, chosen with no lock: the one whose oldest
 * unpurged range is the oldest of all (each file publishes its oldest
 * range's age, pool.h), among the files worth trying: not set aside by the
 * pass (set_aside(ctx, fi): skipped), not found unreachable less than
 * VL_RECHECK seconds before now, not outside the goal (its device, its
 * age limit: vl_goal_excludes, against age_now). *age: the age it
 * published; *second: the next oldest file's oldest (0: none), up to which
 * the visit may take more of its ranges (vl_batch_next). VL_NIL: none. A
 * guess, checked under the file's lock (vl_choice_stands).
 */
uint32_t vl_choose_file(const struct vl_region *r, const struct vl_goal *g, uint32_t now,
			uint32_t age_now, int (*set_aside)(void *ctx, uint32_t fi), void *ctx,
			uint32_t last, uint32_t *age, uint32_t *second);

/*
 * Does the choice stand: is the file's oldest unpurged range still the
 * one of the age it was chosen by (its lock held, its age order checked:
 * vl_ix_check_steering)? If not, a MARK, UNMARK or purge of it came between.
 */
int vl_choice_stands(const struct vl_region *r, uint32_t fi, uint32_t age);

/*
 * Is the goal met: goal->bytes purged (rep), or with use_ceiling the
 * region's unpurged volatile bytes at or under the ceiling?
 */
int vl_goal_met(const struct vl_region *r, const struct vl_goal *g,
		const struct vl_purge_report *rep);

/*
 * Is file fi outside the goal: another device than the full tmpfs's, its
 * oldest unpurged range (the age it publishes) younger than the goal's
 * age limit for a reader whose age clock reads now, or, with held_by,
 * none of its recorded holders accepted by it? No lock: a guess (purge.c
 * checks the age it chose by again; a holder is only ever the region's
 * word, DESIGN 22).
 */
int vl_goal_excludes(const struct vl_region *r, const struct vl_goal *g, uint32_t fi,
		     uint32_t now);

/* Is a range of this age younger than the goal's age limit (none: no)? Ties are not. */
static inline int vl_goal_too_young(const struct vl_goal *g, uint32_t age, uint32_t now)
{
	return g->use_until && vl_age_older(g->until, age, now);
}

/*
 * How far a visit's batch may go in age (vl_batch_more's second): the
 * older of second (the next oldest file's oldest; 0: none) and the
 * goal's age limit, so that a batch stops at a range younger than either.
 */
static inline uint32_t vl_goal_second(const struct vl_goal *g, uint32_t second, uint32_t now)
{
	if (!g->use_until || (second != 0 && !vl_age_older(g->until, second, now)))
		return second;
	return g->until;
}

/*
 * Ranges flagged in one visit to a file: the oldest, and the ranges that
 * come right after it in age while they are the same file's, up to
 * VL_BATCH of them or VL_BATCH_BYTES. The file lock is held across all
 * their punches, so a MARK of that file may wait for them: punching 2 MiB
 * takes about 100 us here.
 */
#define VL_BATCH 32
#define VL_BATCH_BYTES (2u << 20)

/*
 * Is next, the file's next range in age, another range to flag in this visit
 * (bytes flagged in it so far): the goal not met, and not younger than
 * any other file's oldest (second; 0: there is none) for a reader whose
 * age clock reads now: a tie is taken (DESIGN 6)? (file fi's lock held)
 */
int vl_batch_more(const struct vl_region *r, const struct vl_goal *g,
		  const struct vl_purge_report *rep, uint32_t fi, const struct vl_ix_aged *next,
		  uint32_t second, uint32_t now, uint64_t bytes);

/*
 * Is there a range to flag after the got ranges (bytes) a visit flagged
 * so far: next, the file's next in age after the last, while got is under
 * VL_BATCH and vl_batch_more says so? If not, the last was the visit's
 * last (the file's lock held). Inline: called once a range flagged.
 */
static inline int vl_batch_next(const struct vl_region *r, const struct vl_goal *g,
				const struct vl_purge_report *rep, uint32_t fi,
				const struct vl_ix_aged *next, uint32_t second, uint32_t now,
				uint64_t bytes, int got)
{
	return got < VL_BATCH && vl_batch_more(r, g, rep, fi, next, second, now, bytes);
}

/*
 * The two rules of DESIGN 6 that MARK and the daemon both apply, one
 * round each: the caller repeats while a round purges and logs it its way.
 *
 * Memory: read the state (of cg's processes when cg is given) and, below
 * VOLATILE_MIN_AVAILABLE, purge oldest first toward it. Returns 1 if it
 * purged (rep says what), 0 if memory was not low, -errno if it could not
 * read; *ms and *threshold are what it saw, whatever it returns but -errno.
 */
int vl_relieve_memory(const struct vl_region *r, const struct vl_cgroup *cg,
		      const struct vl_hint *hint, int thorough, struct vl_memstate *ms,
		      uint64_t *threshold, struct vl_purge_report *rep);

/*
 * A tmpfs (device dev) with free_bytes of size_bytes free: below
 * VOLATILE_TMPFS_MIN_FREE, purge its own ranges oldest first toward it.
 * Returns 1 if it purged (rep says what), else 0; *threshold as above.
 */
int vl_relieve_tmpfs(const struct vl_region *r, uint64_t dev, uint64_t free_bytes,
		     uint64_t size_bytes, const struct vl_hint *hint, int thorough,
		     uint64_t *threshold, struct vl_purge_report *rep);

#endif
