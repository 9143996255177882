/* SPDX-License-Identifier: MIT */
/*
 * lock.c - the region's locks (see lock.h; what each guards, and their
 * order: core/layout.h, at struct vl_lock): the primitive, then the
 * region's locks taken with their repair (region.h), and the check of a
 * function's "(... lock held)" in the debug build (VL_ASSERT_HELD).
 *
 * A lock is one 32-bit futex word in the region: 0 when free, else the
 * token of the process that holds it. A token names a slot of the
 * region's table of processes and that slot's generation; the slot holds
 * what a waiter in another process needs to tell whether the holder is
 * alive: its pid in the /proc it registered through, its start time, the
 * start of its stack (new at each exec), and its time namespace.
 *
 *   take:  compare-and-swap 0 -> our token. Taken: done. Else spin a
 *          little reading the word (a holder keeps it for a few hundred
 *          nanoseconds), then sleep on the futex, VL_LOCK_WAITERS set so
 *          the holder wakes us; every POLL_MS the sleeper looks at the
 *          holder: if its slot was given to someone else since, or its
 *          process is gone, the sleeper swaps the holder's token for its
 *          own and returns 1: the caller repairs what the lock guards.
 *   drop:  exchange the word with 0; wake one sleeper if there were any.
 *
 * Why a dead holder is always found, and a live one never taken from:
 *   - every process that takes a lock has a slot first, its identity
 *     written before the slot is marked done (VL_PROC_DONE), and keeps
 *     it for as long as it lives: a slot is freed only by someone who
 *     found its process gone (reclaim), and freeing it bumps nothing
 *     but makes its next owner take a new generation, so the dead
 *     holder's token, still in its lock words, names nobody;
 *   - "gone" is decided only through the same /proc the holder saw
 *     itself in (the same pid namespace's view), in the same time
 *     namespace: a holder seen from elsewhere is alive as far as we can
 *     tell, and is waited for (up to the bound, below);
 *   - a child made by fork, _Fork or clone gets a zeroed self page
 *     (this_process.c): it registers a slot of its own, so its parent's token is
 *     never its own, and its death is seen as its own.
 * A word that names no live slot at all (scribbled) is taken over the
 * same way, and what it guarded repaired: the word is only ever read by
 * this code, so garbage in it costs a repair, never a crash.
 *
 * Nothing here is a cancellation point: futex and /proc reads go through
 * syscall(), which glibc does not make cancellable.
 */
#include "lock.h"

#include "age.h"
#include "core/compiler.h"
#include "core/fault.h"
#include "core/index.h"
#include "env.h"
#include "log.h"
#include "region.h"
#include "this_process.h"
#include "sys.h"

#include <errno.h>
#include <stdarg.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SPINS 200
#define POLL_MS 10
#define RECLAIM_PEEK 2 /* slots looked at, and freed if dead, per registration */

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield")
#else
#define cpu_relax() ((void)0)
#endif

static long futex(uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
	return vl_raw_futex(word, op, val, ts);
}

/* ---- the table of processes ---------------------------------------------- */

static void proc_id(const struct vl_proc *p, struct vl_self_id *id)
{
	id->pid = __atomic_load_n(&p->pid, __ATOMIC_RELAXED);
	id->start = __atomic_load_n(&p->start, __ATOMIC_RELAXED);
	id->stack = __atomic_load_n(&p->stack, __ATOMIC_RELAXED);
	id->procdev = __atomic_load_n(&p->procdev, __ATOMIC_RELAXED);
	id->timens = __atomic_load_n(&p->timens, __ATOMIC_RELAXED);
}

/*
 * Slot i, taken (tag), found to belong to a process that is gone: free
 * it, keeping its generation for the next owner to bump. A slot still
 * being written (LIVE, not DONE) is left alone: its owner is registering.
 */
static void reclaim(const struct vl_region *r, uint32_t i, uint32_t tag)
{
	struct vl_proc *p = vl_proc_at(r, i);
	struct vl_self_id who;

	if (!(tag & VL_PROC_LIVE) || !(tag & VL_PROC_DONE))
		return;
	proc_id(p, &who);
	if (vl_proc_alive(&who))
		return;
	if (__atomic_compare_exchange_n(&p->tag, &tag, tag & VL_TOKEN_MASK, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_RELAXED))
		vl_log("process slot %u: pid %u is gone; freed", i, who.pid);
}

/* Claim a free slot for me; its token, or 0 if none is free. */
static uint32_t claim(const struct vl_region *r, const struct vl_self_id *me)
{
	uint32_t first = 1 + me->pid % (VL_PROCS - 1);

	for (uint32_t k = 0; k < VL_PROCS - 1; k++) {
		uint32_t i = 1 + (first - 1 + k) % (VL_PROCS - 1);
		struct vl_proc *p = vl_proc_at(r, i);
		uint32_t tag = __atomic_load_n(&p->tag, __ATOMIC_ACQUIRE), token;

		if (tag & VL_PROC_LIVE)
			continue;
		token = VL_TOKEN(i, VL_TOKEN_GEN(tag) + 1);
		if (!__atomic_compare_exchange_n(&p->tag, &tag, token | VL_PROC_LIVE, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		VL_STEP("proc: slot claimed, not written");
		__atomic_store_n(&p->pid, me->pid, __ATOMIC_RELAXED);
		__atomic_store_n(&p->start, me->start, __ATOMIC_RELAXED);
		__atomic_store_n(&p->stack, me->stack, __ATOMIC_RELAXED);
		__atomic_store_n(&p->procdev, me->procdev, __ATOMIC_RELAXED);
		__atomic_store_n(&p->timens, me->timens, __ATOMIC_RELAXED);
		__atomic_store_n(&p->tag, token | VL_PROC_LIVE | VL_PROC_DONE, __ATOMIC_RELEASE);
		/* a few slots after ours: dead ones are freed as we go, so the table keeps room */
		for (uint32_t j = 1; j <= RECLAIM_PEEK; j++) {
			uint32_t s = 1 + (i - 1 + j) % (VL_PROCS - 1);

			reclaim(r, s, __atomic_load_n(&vl_proc_at(r, s)->tag, __ATOMIC_ACQUIRE));
		}
		return token;
	}
	return 0;
}

static int register_here(const struct vl_region *r, uint32_t *token);

/*
 * Slots that name this very process (pid, start time, stack, /proc, time
 * namespace) but not a token it holds: this process before an exec that
 * kept all of those (no address space randomisation: the stack starts
 * where it did). A thread of that image may have died holding a lock in
 * the exec; its slot would be taken for alive for ever. Freed.
 */
static void reclaim_former_self(const struct vl_region *r, const struct vl_self_id *me,
				uint32_t mine)
{
	for (uint32_t i = 1; i < VL_PROCS; i++) {
		struct vl_proc *p = vl_proc_at(r, i);
		uint32_t tag = __atomic_load_n(&p->tag, __ATOMIC_ACQUIRE);
		struct vl_self_id who;

		if (!(tag & VL_PROC_LIVE) || !(tag & VL_PROC_DONE) ||
		    (tag & VL_TOKEN_MASK) == mine || vl_self_owns_token(tag & VL_TOKEN_MASK))
			continue;
		proc_id(p, &who);
		if (who.pid != me->pid || who.start != me->start || who.stack != me->stack ||
		    who.procdev != me->procdev || who.timens != me->timens)
			continue;
		if (__atomic_compare_exchange_n(&p->tag, &tag, tag & VL_TOKEN_MASK, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			vl_log("process slot %u: this process before an exec; freed", i);
	}
}

/* Our token in r: registered at our first lock in this region (and in each child). */
static int my_token(const struct vl_region *r, uint32_t *token)
{
	*token = vl_self_token(r->serial);
	if (*token != 0)
		return 0;
	vl_self_register_lock();
	int err = register_here(r, token);
	vl_self_register_unlock();
	return err;
}

/* Take a slot in r's table of processes (the registration lock held). */
static int register_here(const struct vl_region *r, uint32_t *token)
{
	struct vl_self_id me;
	int err;

	VL_ASSERT_SELF_HELD(VL_SELF_REGISTERING);
	*token = vl_self_token(r->serial);
	if (*token != 0)
		return 0; /* another thread of ours registered meanwhile */
	err = vl_self_id(&me);
	if (err)
		return err;
	*token = claim(r, &me);
	if (*token == 0) {
		/* full: free every slot of a process that is gone, and try once more */
		for (uint32_t i = 1; i < VL_PROCS; i++)
			reclaim(r, i, __atomic_load_n(&vl_proc_at(r, i)->tag, __ATOMIC_ACQUIRE));
		*token = claim(r, &me);
	}
	if (*token == 0) {
		vl_log("no room for this process in the region's table of %u", VL_PROCS - 1);
		return -ENOMEM;
	}
	vl_self_set_token(r->serial, *token);
	reclaim_former_self(r, &me, *token);
	return 0;
}

int vl_token_alive(const struct vl_region *r, uint32_t token)
{
	uint32_t slot = VL_TOKEN_SLOT(token), tag;
	struct vl_proc *p;
	struct vl_self_id who;

	if (slot == VL_NIL || slot >= VL_PROCS)
		return 0; /* names no slot: a scribble */
	p = vl_proc_at(r, slot);
	tag = __atomic_load_n(&p->tag, __ATOMIC_ACQUIRE);
	if (!(tag & VL_PROC_LIVE) || (tag & VL_TOKEN_MASK) != (token & VL_TOKEN_MASK))
		return 0; /* its slot was freed, or given to another process since */
	if (!(tag & VL_PROC_DONE))
		return 1;
	proc_id(p, &who);
	return vl_proc_alive(&who);
}

/* ---- the locks ------------------------------------------------------------ */

uint32_t vl_lock_holder(const struct vl_lock *l)
{
	uint32_t w = __atomic_load_n(&l->word, __ATOMIC_RELAXED);

	return (w & VL_LOCK_BROKEN) ? 0 : w & VL_TOKEN_MASK;
}

/* Sleep while the word is w. 1 if it stayed so for POLL_MS: time to look at the holder. */
static int wait_on(struct vl_lock *l, uint32_t w)
{
	struct timespec ts = { 0, POLL_MS * 1000000L };

	return futex(&l->word, FUTEX_WAIT, w, &ts) == -ETIMEDOUT;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int vl_lock_try(const struct vl_region *r, struct vl_lock *l)
{
	uint32_t me, w = 0;
	int err = my_token(r, &me);

	if (err)
		return err;
	return __atomic_compare_exchange_n(&l->word, &w, me, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)
		       ? 0
		       : -EBUSY;
}

/*
 * Lock l, read as held by w (not broken), taken over if w's holder is
 * gone: its token, as read, becomes me (the waiters bit kept, so that our
 * drop wakes them), or someone else was first. 1 if it is ours now, to
 * be repaired; the one way a dead holder's lock changes hands.
 */
static int take_over_if_gone(const struct vl_region *r, struct vl_lock *l, uint32_t w,
			     uint32_t me)
{
	if (vl_token_alive(r, w & VL_TOKEN_MASK) ||
	    !__atomic_compare_exchange_n(&l->word, &w, me | (w & VL_LOCK_WAITERS), 0,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0;
	vl_log("lock holder %#x is gone: taken over, to be repaired", w & VL_TOKEN_MASK);
	return 1;
}

/*
 * vl_lock_take's way (lock.h) when the lock is not free at once, or this
 * process has no token in the region yet. The wait is bounded (DESIGN
 * 11): a holder that is alive but does not let go (stopped, traced,
 * frozen) costs its waiters VOLATILE_LOCK_WAIT, then -EAGAIN, with
 * nothing done. Every caller takes its locks before it changes
 * anything, so giving up is always clean.
 */
VL_COLD int vl_lock_take_slow(const struct vl_region *r, struct vl_lock *l)
{
	uint32_t me, w = 0;
	uint64_t deadline = 0;
	int err = my_token(r, &me);

	if (err)
		return err;
	if (__atomic_compare_exchange_n(&l->word, &w, me, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0;
	for (int i = 0; i < SPINS && __atomic_load_n(&l->word, __ATOMIC_RELAXED) != 0; i++)
		cpu_relax();
	for (;;) {
		if (deadline == 0) {
			deadline = now_ms() + vl_config()->lock_wait_ms;
		} else if (now_ms() >= deadline) {
			vl_log("lock held by %#x for %u ms: not taken",
			       __atomic_load_n(&l->word, __ATOMIC_RELAXED) & VL_TOKEN_MASK,
			       vl_config()->lock_wait_ms);
			return -EAGAIN;
		}
		w = __atomic_load_n(&l->word, __ATOMIC_RELAXED);
		if (w & VL_LOCK_BROKEN)
			return -EUCLEAN;
		if (w == 0) {
			/* others may sleep behind us: keep the flag so our drop wakes them */
			if (__atomic_compare_exchange_n(&l->word, &w, me | VL_LOCK_WAITERS, 0,
							__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
				return 0;
			continue;
		}
		if (!(w & VL_LOCK_WAITERS) &&
		    !__atomic_compare_exchange_n(&l->word, &w, w | VL_LOCK_WAITERS, 0,
						 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			continue;
		w |= VL_LOCK_WAITERS;
		/* a holder that lets go wakes us: only one that does not is looked at */
		if (!wait_on(l, w) || __atomic_load_n(&l->word, __ATOMIC_RELAXED) != w)
			continue;
		if (take_over_if_gone(r, l, w, me))
			return 1;
	}
}

/* vl_lock_drop's way when someone may sleep on the lock (lock.h) */
void vl_lock_wake(struct vl_lock *l)
{
	futex(&l->word, FUTEX_WAKE, 1, NULL);
}

void vl_lock_orphan(struct vl_lock *l)
{
	/* slot 0 is nobody's: the next waiter judges it gone at once */
	__atomic_store_n(&l->word, VL_TOKEN(VL_NIL, 1), __ATOMIC_RELEASE);
	futex(&l->word, FUTEX_WAKE, INT32_MAX, NULL);
}

void vl_lock_break(struct vl_lock *l)
{
	__atomic_store_n(&l->word, VL_LOCK_BROKEN, __ATOMIC_RELEASE);
	futex(&l->word, FUTEX_WAKE, INT32_MAX, NULL);
}

/* ---- the region's locks, taken with their repair (region.h) ------------------ */

/*
 * Taken from a holder that died, what a lock guards is repaired before
 * anyone goes on: the region lock's by
 * rebuilding the lists and counters, a file lock's by rebuilding the
 * file's tree (which needs the region lock too). A repair that cannot be
 * done leaves the lock broken: every taker gets EUCLEAN from then on,
 * rather than work on what may be half changed.
 */
int vl_lock_region(const struct vl_region *r)
{
	int e = vl_lock_take(r, &r->hdr->lock);

	if (e == 1) {
		vl_log("region lock holder died: rebuilding lists and counters");
		vl_pool_rebuild(r);
		VL_STEP("lock_region: rebuilt, not dropped");
		return 0;
	}
	return e;
}

int vl_trylock_region(const struct vl_region *r)
{
	/* a holder to repair after is left to the next vl_lock_region */
	return vl_lock_try(r, &r->hdr->lock);
}

void vl_unlock_region(const struct vl_region *r)
{
	vl_lock_drop(r, &r->hdr->lock);
}

/*
 * The region's totals, summed again from the file records, with every
 * file's lock held (taken in slot order, file `held` being ours already)
 * and the region lock: no change is then half done anywhere, so the sum
 * is exact. Why it is needed: a commit counts a change into its file and
 * then into the region's totals by atomic adds (pool.c); a process killed
 * between the two leaves the totals off by that change, and no one can
 * tell from the file which of the adds were made (nor which went to the
 * deltas of its slot in the table of processes, pool.c). So after a
 * file's repair the totals are made exact again, the slots' deltas
 * emptied. A lock that is not free at
 * once leaves them as they are, for the next repair to count.
 */
static void recount(const struct vl_region *r, uint32_t held)
{
	struct vl_counters *c = vl_counters(r);
	struct vl_u128 vb = { 0, 0 }, pb = { 0, 0 };
	uint32_t hwm = vl_file_hwm(r), fi, nr = 0, np = 0;
	int whole = 1;

	VL_ASSERT_HELD(r, &r->hdr->lock);
	VL_ASSERT_HELD(r, &vl_file_at(r, held)->h.lock);
	for (fi = 1; fi < hwm; fi++) {
		struct vl_file *f = vl_file_at(r, fi);
		/*
		 * Tried, not waited for: a live holder (stopped, say) would make
		 * this repair, and the call that needs it, wait the bound for a
		 * file it is not about; a dead one's file is repaired by its next
		 * taker, whose recount comes then.
		 */
		int e = fi == held ? 0 : vl_lock_try(r, &f->h.lock);

		if (e != 0) {
			whole = 0;
			break;
		}
		if (f->h.state != VL_FILE_LIVE)
			continue;
		vl_u128_add(&vb, f->h.vbytes);
		vl_u128_add(&pb, f->h.pbytes);
		nr += f->h.nranges;
		np += f->h.npurged;
	}
	if (whole) {
		/* the counts hold every slot's deltas: forgotten, or counted twice */
		vl_totals_forget_slots(r);
		__atomic_store_n(&c->volatile_bytes.lo, vb.lo, __ATOMIC_RELAXED);
		__atomic_store_n(&c->volatile_bytes.hi, vb.hi, __ATOMIC_RELAXED);
		__atomic_store_n(&c->purged_bytes.lo, pb.lo, __ATOMIC_RELAXED);
		__atomic_store_n(&c->purged_bytes.hi, pb.hi, __ATOMIC_RELAXED);
		__atomic_store_n(&c->ranges, nr, __ATOMIC_RELAXED);
		__atomic_store_n(&c->ranges_purged, np, __ATOMIC_RELAXED);
	}
	/* not whole: owed, tried again at a later drop of a file lock (vl_unlock_file) */
	__atomic_store_n(&c->recount_owed, whole ? 0u : 1u, __ATOMIC_RELAXED);
	VL_STEP("recount: counted, files locked");
	while (fi-- > 1)
		if (fi != held)
			vl_lock_drop(r, &vl_file_at(r, fi)->h.lock);
	vl_log("totals counted again: %s", whole ? "exact" : "a file lock was kept, left as they were");
}

VL_COLD void vl_totals_share(const struct vl_region *r, uint32_t fi)
{
	struct vl_counters *c = vl_counters(r);

	VL_ASSERT_HELD(r, &vl_file_at(r, fi)->h.lock);
	if (__atomic_exchange_n(&c->shared_totals, 1u, __ATOMIC_SEQ_CST) != 0)
		return;
	vl_log("a budget: the region's totals are counted on its shared line from now on");
	/*
	 * A commit that read 0 holds its file's lock: a recount, which tries
	 * every file lock, is then not whole and stays owed until one is.
	 */
	if (vl_trylock_region(r) == 0) {
		recount(r, fi);
		vl_unlock_region(r);
	} else {
		__atomic_store_n(&c->recount_owed, 1u, __ATOMIC_RELAXED);
	}
}

/*
 * A file's `vers`: made odd by whoever takes its lock (whatever a dead
 * holder left there), even again at the drop. A reader with no lock
 * (volatile status) trusts what it read between two equal even values.
 */
static void vers_odd(struct vl_file *f)
{
	uint32_t *v = &f->h.vers;

	__atomic_store_n(v, __atomic_load_n(v, __ATOMIC_RELAXED) | 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

/* File fi's lock, taken over from a dead holder: repair what it left. */
static VL_COLD int repair_taken(const struct vl_region *r, uint32_t fi)
{
	struct vl_lock *l = &vl_file_at(r, fi)->h.lock;
	int e;

	vl_log("lock holder of file %u died: repairing", fi);
	e = vl_lock_region(r);
	if (e == -EAGAIN) {
		/* the region lock's holder is alive and slow: the next taker repairs */
		vl_lock_orphan(l);
		return e;
	}
	if (e != 0) {
		vl_log("file %u cannot be repaired (%s): its lock is broken", fi, strerror(-e));
		vl_lock_break(l);
		return -EUCLEAN;
	}
	vl_age_attach();
	vl_ix_repair(r, fi, vl_age_now_of(vl_now_ms()));
	VL_STEP("lock_file: repaired, region locked");
	vl_log("file %u repaired: %u ranges", fi, vl_file_at(r, fi)->h.nranges);
	recount(r, fi);
	vl_unlock_region(r);
	return 0;
}

int vl_lock_file_retired(const struct vl_region *r, uint32_t fi)
{
	struct vl_file *f = vl_file_at(r, fi);
	int e = vl_lock_take(r, &f->h.lock);

	if (e < 0)
		return e;
	vers_odd(f);
	return e == 0 ? 0 : repair_taken(r, fi);
}

/* vl_lock_file's way when the take did not simply succeed: an error, or a repair first */
static VL_COLD int lock_file_slow(const struct vl_region *r, uint32_t fi, int e)
{
	if (e < 0)
		return e;
	vers_odd(vl_file_at(r, fi));
	e = repair_taken(r, fi);
	if (e == 0 && __atomic_load_n(&r->hdr->fate.retired, __ATOMIC_SEQ_CST) != 0) {
		vl_unlock_file(r, fi);
		return -ESTALE;
	}
	return e;
}

/*
 * vl_lock_file_retired and the retired check in one frame: the take and
 * the check are what every MARK and UNMARK pays; the rest is out of line.
 */
int vl_lock_file(const struct vl_region *r, uint32_t fi)
{
	struct vl_file *f = vl_file_at(r, fi);
	int e = vl_lock_take(r, &f->h.lock);

	if (e != 0)
		return lock_file_slow(r, fi, e);
	vers_odd(f);
	/*
	 * The region is being moved (move.c): nothing more is answered from
	 * it. Read after the lock is taken: a mover sets it first, then takes
	 * every file lock, so whoever holds one here either started before
	 * the mover reaches this file (and is moved with it) or sees this.
	 */
	if (__atomic_load_n(&r->hdr->fate.retired, __ATOMIC_SEQ_CST) != 0) {
		vl_unlock_file(r, fi);
		return -ESTALE;
	}
	return 0;
}

/* File fi's lock, if a holder that is gone holds it: taken over and repaired, then let go: 1 */
static VL_COLD int repair_if_dead(const struct vl_region *r, uint32_t fi)
{
	struct vl_lock *l = &vl_file_at(r, fi)->h.lock;
	uint32_t me, w = __atomic_load_n(&l->word, __ATOMIC_ACQUIRE);

	if (w == 0 || (w & VL_LOCK_BROKEN) || my_token(r, &me) != 0 ||
	    !take_over_if_gone(r, l, w, me))
		return 0;
	vers_odd(vl_file_at(r, fi));
	/* not repaired: repair_taken left the lock orphaned or broken, not ours */
	if (repair_taken(r, fi) != 0)
		return 0;
	vl_unlock_file(r, fi);
	return 1;
}

/*
 * Only the files that hold PENDING nodes, and at most VL_REPAIR_AT_FULL
 * of them: a repair gives back only those, and the walk is one read of
 * each node, as the sweep before it made. Every file record with its lock
 * word and /proc asked for each held one was work in proportion to the
 * files a dead recounter held (thousands, in a storm: a twentieth of the
 * calls made), with our own file's lock held. A live holder's PENDING
 * nodes are there only while it makes its change; a dead one's stay, and
 * are repaired here VL_REPAIR_AT_FULL at a time, each look starting where
 * the last stopped (vl_pending_owners): a live one stopped there, or a
 * broken lock's file, is passed over by the next.
 */
#define VL_REPAIR_AT_FULL 32u
/*
 * Looks a call makes while each finds VL_REPAIR_AT_FULL files and none
 * can be repaired (their holders alive): so that a MARK the region has
 * room for is not refused for the first 32 it met, within a bound.
 */
#define VL_REPAIR_LOOKS 4u

uint32_t vl_repair_dead_holders(const struct vl_region *r, uint32_t mine)
{
	uint32_t owner[VL_REPAIR_AT_FULL], n = 0;

	for (uint32_t look = 0; look < VL_REPAIR_LOOKS && n == 0; look++) {
		uint32_t k = vl_pending_owners(r, mine, owner, VL_REPAIR_AT_FULL);

		for (uint32_t i = 0; i < k; i++)
			if (__atomic_load_n(&vl_file_at(r, owner[i])->h.state, __ATOMIC_RELAXED) ==
			    VL_FILE_LIVE)
				n += (uint32_t)repair_if_dead(r, owner[i]);
		if (k < VL_REPAIR_AT_FULL)
			break; /* the look went round: every owner there is was met */
	}
	return n;
}

int vl_trylock_file(const struct vl_region *r, uint32_t fi)
{
	int e = vl_lock_try(r, &vl_file_at(r, fi)->h.lock);

	if (e == 0)
		vers_odd(vl_file_at(r, fi));
	return e;
}

/*
 * A recount a repair could not make is owed (recount_owed): until it is
 * made, the totals stay off by what the dead process's commit did not
 * add, for good; an UNMARK of those bytes then takes the unpurged total
 * below zero, where it wraps to 2^128 - N, and a budget purges every
 * range at every MARK. So whoever drops a file lock, its change done,
 * tries it again (the region lock and every other file lock, as the
 * repair did: tried, never waited for), at most once a second per
 * process, as long as it is owed.
 */
static uint32_t recount_tried_at;

/* A recount is owed (recount): tried once a second, with fi's lock still held. */
static VL_COLD void recount_owed(const struct vl_region *r, uint32_t fi)
{
	uint32_t now = vl_now_s();

	VL_ASSERT_HELD(r, &vl_file_at(r, fi)->h.lock);
	if (__atomic_exchange_n(&recount_tried_at, now, __ATOMIC_RELAXED) != now &&
	    vl_trylock_region(r) == 0) {
		if (__atomic_load_n(&vl_counters(r)->recount_owed, __ATOMIC_RELAXED) != 0)
			recount(r, fi);
		vl_unlock_region(r);
	}
}

void vl_unlock_file(const struct vl_region *r, uint32_t fi)
{
	struct vl_file *f = vl_file_at(r, fi);
	uint32_t *v = &f->h.vers;

	if (__atomic_load_n(&vl_counters(r)->recount_owed, __ATOMIC_RELAXED) != 0)
		recount_owed(r, fi);
	__atomic_store_n(v, (__atomic_load_n(v, __ATOMIC_RELAXED) | 1) + 1, __ATOMIC_RELEASE);
	vl_lock_drop(r, &f->h.lock);
}

/* ---- the check of a precondition, debug build only (core/layout.h) ---------- */

#ifdef VL_DEBUG_LOCKS
/* Which of r's locks l is, in words: the region lock, file N's, the move lock. */
static void lock_name(const struct vl_region *r, const struct vl_lock *l, char *buf, size_t size)
{
	const char *p = (const char *)l, *files = (const char *)r->files;

	if (l == &r->hdr->lock)
		snprintf(buf, size, "the region lock");
	else if (l == &r->hdr->fate.move_lock)
		snprintf(buf, size, "the move lock");
	else if (p >= files && p < files + (size_t)r->file_cap * sizeof(struct vl_file))
		snprintf(buf, size, "the lock of file %zu",
			 (size_t)(p - files) / sizeof(struct vl_file));
	else
		snprintf(buf, size, "a lock outside the region");
}

void vl_lock_check_failed(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0)
		(void)vl_raw_write(STDERR_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	abort();
}

/* A function that needs l held was called without it. */
static VL_COLD __attribute__((noreturn)) void not_held(const char *func, const char *name,
						       const char *lock, uint32_t w, uint32_t me)
{
	vl_lock_check_failed("libvolatile: %s: %s (%s) is not held by this process "
			     "(word %#x, token %#x)\n",
			     func, name, lock, w, me);
}

VL_COLD void vl_lock_assert_held(const struct vl_region *r, const struct vl_lock *l,
				 const char *lock, const char *func)
{
	uint32_t w = __atomic_load_n(&l->word, __ATOMIC_RELAXED), me = vl_self_token(r->serial);
	char name[64];

	if (me != 0 && !(w & VL_LOCK_BROKEN) && (w & VL_TOKEN_MASK) == me)
		return;
	lock_name(r, l, name, sizeof(name));
	not_held(func, name, lock, w, me);
}

/* The same without the region: any token of this process's (core/layout.h). */
VL_COLD void vl_lock_assert_mine(const struct vl_lock *l, const char *lock, const char *func)
{
	uint32_t w = __atomic_load_n(&l->word, __ATOMIC_RELAXED), t = w & VL_TOKEN_MASK;

	if (t != 0 && !(w & VL_LOCK_BROKEN) && vl_self_owns_token(t))
		return;
	not_held(func, "a lock of a region", lock, w, 0);
}
#endif
