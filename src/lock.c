/* SPDX-License-Identifier: MIT */
/*
 * lock.c - the region's locks (see lock.h and layout.h).
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
 *     (self.c): it registers a slot of its own, so its parent's token is
 *     never its own, and its death is seen as its own.
 * A word that names no live slot at all (scribbled) is taken over the
 * same way, and what it guarded repaired: the word is only ever read by
 * this code, so garbage in it costs a repair, never a crash.
 *
 * Nothing here is a cancellation point: futex and /proc reads go through
 * syscall(), which glibc does not make cancellable.
 */
#include "lock.h"

#include "core/compiler.h"
#include "core/fault.h"
#include "env.h"
#include "log.h"
#include "self.h"
#include "sys.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
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

static int register_here(const struct vl_region *r, uint32_t *token)
{
	struct vl_self_id me;
	int err;

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

	return futex(&l->word, FUTEX_WAIT, w, &ts) != 0 && errno == ETIMEDOUT;
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
 * vl_lock_take's way (lock.h) when the lock is not free at once, or this
 * process has no token in the region yet. The wait is bounded (issue 15;
 * DESIGN 11): a holder that is alive but does not let go (stopped,
 * traced, frozen) costs its waiters VOLATILE_LOCK_WAIT, then -EAGAIN,
 * with nothing done. Every caller takes its locks before it changes
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
		if (!wait_on(l, w) || __atomic_load_n(&l->word, __ATOMIC_RELAXED) != w ||
		    vl_token_alive(r, w & VL_TOKEN_MASK))
			continue;
		/* the holder is gone: its token, as read, becomes ours, or someone beat us to it */
		if (__atomic_compare_exchange_n(&l->word, &w, me | VL_LOCK_WAITERS, 0,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			vl_log("lock holder %#x is gone: taken over, to be repaired", w & VL_TOKEN_MASK);
			return 1;
		}
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
