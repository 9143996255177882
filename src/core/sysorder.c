/* SPDX-License-Identifier: MIT */
/*
 * sysorder.c - the machine's daemon's protocol checks and its pick
 * (sysorder.h, DESIGN 22). Pure: no system call, nothing shared.
 */
#include "sysorder.h"

#include "layout.h"

/* An oldest age may lie at most this far behind the reader's now (sysorder.h). */
#define OLDEST_BACK_MAX 0x7fffffffu
/* errno values are small positive numbers; anything else is no errno */
#define ERRNO_MAX 4095

/* The oldest age and unpurged bytes agree, and the age is one a region may hold now. */
static int oldest_ok(const struct vl_sys_answer *a, uint32_t now)
{
	if (a->oldest == 0)
		return a->unpurged == 0;
	/* unsigned: an age ahead of now is further than 2^31 - 1 behind it */
	return now - a->oldest <= OLDEST_BACK_MAX;
}

static int purge_counts_ok(const struct vl_sys_ask *ask, const struct vl_sys_answer *a)
{
	if (ask->op != VL_SYS_PURGE)
		return a->purged == 0 && a->ranges == 0;
	return (a->purged == 0) == (a->ranges == 0);
}

int vl_sys_answer_ok(const struct vl_sys_ask *ask, const struct vl_sys_answer *a, size_t len,
		     uint32_t now)
{
	if (len != sizeof(*a))
		return 0;
	if (a->magic != VL_SYS_MAGIC || a->seq != ask->seq || a->pad != 0)
		return 0;
	if (a->err < 0 || a->err > ERRNO_MAX)
		return 0;
	return oldest_ok(a, now) && purge_counts_ok(ask, a);
}

static int has_bytes(const struct vl_sys_seen *s)
{
	return s->usable && s->oldest != 0;
}

int vl_sys_pick(const struct vl_sys_seen *s, int n, int last, uint32_t now, uint32_t *until)
{
	int best = -1;

	*until = 0;
	if (s == NULL || n <= 0)
		return -1;
	/* a last out of the array (the regions changed) starts the turn at the first */
	if (last < 0 || last >= n)
		last = n - 1;
	/* from the one after last, wrapping: the first of equal ages is the next in turn */
	for (int k = 1; k <= n; k++) {
		int i = (last + k) % n;

		if (has_bytes(&s[i]) && (best < 0 || vl_age_older(s[i].oldest, s[best].oldest, now)))
			best = i;
	}
	if (best < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (i != best && has_bytes(&s[i]) &&
		    (*until == 0 || vl_age_older(s[i].oldest, *until, now)))
			*until = s[i].oldest;
	return best;
}
