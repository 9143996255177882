/* SPDX-License-Identifier: MIT */
/*
 * sysorder.c - the machine's daemon's protocol checks and its pick
 * (sysorder.h, DESIGN 22). A stand-in: it refuses every answer and picks
 * nothing, until the rules are written.
 */
#include "sysorder.h"

int vl_sys_answer_ok(const struct vl_sys_ask *ask, const struct vl_sys_answer *a, size_t len,
		     uint32_t now)
{
	(void)ask;
	(void)a;
	(void)len;
	(void)now;
	return 0;
}

int vl_sys_pick(const struct vl_sys_seen *s, int n, int last, uint32_t now, uint32_t *until)
{
	(void)s;
	(void)n;
	(void)last;
	(void)now;
	*until = 0;
	return -1;
}
