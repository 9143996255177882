/* SPDX-License-Identifier: MIT */
/*
 * sysorder.c - the machine's daemon's protocol checks and its pick
 * (sysorder.h, DESIGN 22). Pure: no system call, nothing shared.
 */
#include "sysorder.h"

#include "layout.h"

#include <string.h>

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

/* A cgroup path as struct vl_sys_ask says: "/", or "/a/b": no "//", no NUL, no "/" last. */
static int cgroup_path_ok(const char *p, uint32_t len)
{
	if (len == 0 || p[0] != '/')
		return 0;
	for (uint32_t i = 1; i < len; i++)
		if (p[i] == '\0' || (p[i] == '/' && p[i - 1] == '/'))
			return 0;
	return len == 1 || p[len - 1] != '/';
}

int vl_sys_ask_ok(const struct vl_sys_ask *q, size_t len)
{
	if (len < offsetof(struct vl_sys_ask, cgroup) || q->magic != VL_SYS_MAGIC)
		return 0;
	if (q->op != VL_SYS_REPORT && q->op != VL_SYS_PURGE)
		return 0;
	if (q->cg_len > VL_SYS_CGROUP_MAX || len != vl_sys_ask_len(q))
		return 0;
	if (q->cg_version == 0)
		return q->cg_len == 0;
	return q->cg_version <= 2 && cgroup_path_ok(q->cgroup, q->cg_len);
}

/* Is the path p (n bytes) q's cgroup or below it? */
static int path_below(const struct vl_sys_ask *q, const char *p, size_t n)
{
	if (q->cg_len == 1)
		return n >= 1 && p[0] == '/';
	if (n < q->cg_len || memcmp(p, q->cgroup, q->cg_len) != 0)
		return 0;
	return n == q->cg_len || p[q->cg_len] == '/';
}

/* Does a v1 line's controller list (n bytes, comma separated) name "memory"? */
static int names_memory(const char *c, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t j = i;

		while (j < n && c[j] != ',')
			j++;
		if (j - i == 6 && memcmp(c + i, "memory", 6) == 0)
			return 1;
		i = j + 1;
	}
	return 0;
}

int vl_sys_cgroup_holds(const struct vl_sys_ask *q, const char *text, size_t len)
{
	size_t i = 0;

	if (q->cg_version == 0)
		return 1;
	/* each line "ID:CONTROLLERS:PATH\n"; one cut short (no newline) is not read */
	while (i < len) {
		const char *line = text + i, *nl = memchr(line, '\n', len - i);
		const char *c1, *c2;
		size_t n;

		if (nl == NULL)
			return 0;
		n = (size_t)(nl - line);
		i += n + 1;
		c1 = memchr(line, ':', n);
		c2 = c1 != NULL ? memchr(c1 + 1, ':', (size_t)(line + n - (c1 + 1))) : NULL;
		if (c2 == NULL)
			continue;
		if (q->cg_version == 2 ? (c1 - line == 1 && line[0] == '0' && c2 == c1 + 1)
				       : names_memory(c1 + 1, (size_t)(c2 - (c1 + 1))))
			return path_below(q, c2 + 1, (size_t)(line + n - (c2 + 1)));
	}
	return 0;
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
