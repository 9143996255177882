/* SPDX-License-Identifier: MIT */
/*
 * age.h - the age clock (DESIGN 10): the host's CLOCK_MONOTONIC_COARSE in
 * milliseconds, whatever time namespace a process is in, so that ages of
 * every region and user compare; and the look that keeps ages from the
 * wrap.
 */
#ifndef VL_AGE_H
#define VL_AGE_H

#include "sys.h"

#include <stdint.h>

struct vl_region;

/*
 * What turns a reading of vl_now_ms() into the host's: minus this
 * process's time namespace's monotonic offset (read once, vl_age_attach),
 * plus, in the test builds only, VOLATILE_FAULT_AGE_SHIFT seconds.
 */
extern int64_t vl_age_delta_ms;

/*
 * Read this process's time namespace offset, once (the first attach of a
 * region; later calls return at once). Unreadable (no /proc): taken as 0,
 * the host's own clock, and said under VOLATILE_DEBUG (DESIGN 10).
 */
void vl_age_attach(void);

/* The host's clock, in ms, of a reading now_ms of vl_now_ms(). */
static inline uint64_t vl_age_ms(uint64_t now_ms)
{
	return now_ms + (uint64_t)vl_age_delta_ms;
}

/* The age clock, 32 bits, of the same reading: an age, or a reader's now. */
static inline uint32_t vl_age_now_of(uint64_t now_ms)
{
	return (uint32_t)vl_age_ms(now_ms);
}

/*
 * At most once an hour in the region, restamp the ranges near the wrap:
 * every LIVE file whose published oldest is more than VL_AGE_RESTAMP_MS
 * old gets vl_ix_restamp under its lock, if that is free at once (a busy
 * file is looked at next time). now_ms: a reading of vl_now_ms(). No lock
 * held. At the start of every purge pass; and vl_ages_tend below.
 */
void vl_ages_tend_now(const struct vl_region *r, uint64_t now_ms);

#define VL_AGES_LOOK_EVERY_MS (60u * 1000u)
extern uint64_t vl_ages_looked_ms;

/*
 * vl_ages_tend_now, looked at once a minute at most in this process (the
 * region's time is on a line other processes write): by a call on its way
 * to its region once a second at most (attach.c get_attaching), and the
 * daemon at each wake-up. No lock held.
 */
static inline void vl_ages_tend(const struct vl_region *r, uint64_t now_ms)
{
	if (now_ms - __atomic_load_n(&vl_ages_looked_ms, __ATOMIC_RELAXED) >=
		    VL_AGES_LOOK_EVERY_MS &&
	    vl_due(&vl_ages_looked_ms, VL_AGES_LOOK_EVERY_MS, now_ms))
		vl_ages_tend_now(r, now_ms);
}

#endif
