/* SPDX-License-Identifier: MIT */
/*
 * lock.h - the region's locks: shared by processes, repaired when their
 * holder dies, never handed to glibc (layout.h, struct vl_lock).
 */
#ifndef VL_LOCK_H
#define VL_LOCK_H

#include "core/layout.h"
#include "this_process.h"

/*
 * Take l, waiting for a live holder VOLATILE_LOCK_WAIT at most (1 s by
 * default: env.h). Returns
 *   0        taken;
 *   1        taken from a holder that is gone: what l guards may be half
 *            changed; repair it, then vl_lock_drop (or vl_lock_break if
 *            the repair failed);
 *   -EUCLEAN l is broken (a repair failed before);
 *   -ENOMEM  this process has no slot in the region's table of processes
 *            and none is free;
 *   -errno   /proc could not be read to say who we are.
 * Nothing the library holds is a cancellation point here.
 */
static inline int vl_lock_take(const struct vl_region *r, struct vl_lock *l);
/* (and -EAGAIN: a live holder kept it for the whole wait; nothing was done) */
static inline void vl_lock_drop(const struct vl_region *r, struct vl_lock *l);
/* Take l only if it is free now: 0, or -EBUSY (or vl_lock_take's errors). */
int vl_lock_try(const struct vl_region *r, struct vl_lock *l);

/*
 * Let go of l, taken over from a dead holder (vl_lock_take said 1),
 * without the repair it needs: the next taker finds a holder that is
 * gone, takes it over and repairs.
 */
void vl_lock_orphan(struct vl_lock *l);

/* The repair of what l guards failed: l gives -EUCLEAN to every taker from now on. */
void vl_lock_break(struct vl_lock *l);

/*
 * Test hooks, and `volatile status`: who holds l (0: nobody), and is that
 * holder alive? (1 alive or cannot tell, 0 gone)
 */
uint32_t vl_lock_holder(const struct vl_lock *l);
int vl_token_alive(const struct vl_region *r, uint32_t token);

/*
 * The take when the lock is free and this process has its token, and
 * the drop when no one sleeps on it, inline: every MARK and UNMARK takes
 * and drops its file's lock, and the calls into lock.c were a tenth of
 * the locking's instructions. Everything else is lock.c's.
 */
int vl_lock_take_slow(const struct vl_region *r, struct vl_lock *l);
void vl_lock_wake(struct vl_lock *l);

static inline int vl_lock_take(const struct vl_region *r, struct vl_lock *l)
{
	uint32_t me = vl_self_token(r->serial), w = 0;

	if (me != 0 &&
	    __atomic_compare_exchange_n(&l->word, &w, me, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0;
	return vl_lock_take_slow(r, l);
}

static inline void vl_lock_drop(const struct vl_region *r, struct vl_lock *l)
{
	(void)r;
	if (__atomic_exchange_n(&l->word, 0, __ATOMIC_RELEASE) & VL_LOCK_WAITERS)
		vl_lock_wake(l);
}

#ifdef VL_DEBUG_LOCKS
/*
 * A lock check of the debug build failed (VL_ASSERT_HELD, VL_ASSERT_MINE,
 * VL_ASSERT_SELF_HELD): a bug of the library. One line on stderr, whatever
 * VOLATILE_DEBUG says, then abort: going on would change what the lock
 * guards under another holder's feet.
 */
void vl_lock_check_failed(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2), cold));
#endif

#endif
