/* SPDX-License-Identifier: MIT */
/*
 * pressure.c - parsing /proc and cgroup files; threshold arithmetic.
 */
#include "pressure.h"

#include "parse.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Read an unsigned decimal at *p, skipping blanks first. */
static int number(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t n = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (n > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		n = n * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*v = n;
	return 0;
}

/* The value of "Key:   N kB" in /proc/meminfo, in bytes. */
static int meminfo_key(const char *text, const char *key, uint64_t *bytes)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p != NULL && *p) {
		if (strncmp(p, key, klen) == 0 && p[klen] == ':') {
			const char *q = p + klen + 1;
			uint64_t kb;

			if (number(&q, &kb) != 0 || kb > UINT64_MAX / 1024)
				return -EINVAL;
			*bytes = kb * 1024;
			return 0;
		}
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return -EINVAL;
}

int vl_parse_meminfo(const char *text, struct vl_meminfo *m)
{
	if (meminfo_key(text, "MemTotal", &m->total) != 0 ||
	    meminfo_key(text, "MemAvailable", &m->available) != 0)
		return -EINVAL;
	return 0;
}

static int copy(char *dst, size_t size, const char *src, size_t len)
{
	if (len >= size)
		return -1;
	memcpy(dst, src, len);
	dst[len] = '\0';
	return 0;
}

int vl_cgroup_line(const char *line, char *path, size_t size)
{
	const char *c1 = strchr(line, ':'), *c2, *end;

	if (c1 == NULL || (c2 = strchr(c1 + 1, ':')) == NULL)
		return 0;
	end = line + strcspn(line, "\n");
	if (c2 == c1 + 1 && strncmp(line, "0:", 2) == 0)
		return copy(path, size, c2 + 1, (size_t)(end - c2 - 1)) == 0 ? 2 : 0;
	/* the controllers are a comma-separated list between the colons */
	for (const char *p = c1 + 1; p < c2;) {
		size_t n = strcspn(p, ",:");

		if (n == 6 && strncmp(p, "memory", 6) == 0)
			return copy(path, size, c2 + 1, (size_t)(end - c2 - 1)) == 0 ? 1 : 0;
		p += n + 1;
	}
	return 0;
}

int vl_mountinfo_line(const char *line, int version, char *mnt, size_t mnt_size, char *root,
		      size_t root_size)
{
	struct vl_mount_fields m;

	if (vl_parse_mount_line(line, &m) != 0)
		return 0;
	if (version == 2) {
		if (!vl_field_is(m.fstype, m.fstype_len, "cgroup2"))
			return 0;
	} else {
		const char *p = m.superopts, *stop = m.superopts + m.superopts_len;
		int memory = 0;

		if (!vl_field_is(m.fstype, m.fstype_len, "cgroup"))
			return 0;
		while (p < stop) {
			size_t n = strcspn(p, ", \n");

			if (n == 6 && strncmp(p, "memory", 6) == 0)
				memory = 1;
			p += n + 1;
		}
		if (!memory)
			return 0;
	}
	return vl_mount_unescape(mnt, mnt_size, m.point, m.point_len) == 0 &&
	       vl_mount_unescape(root, root_size, m.root, m.root_len) == 0;
}

int vl_cgroup_dir_of(const char *mnt, const char *root, const char *path, char *dir,
		     size_t size)
{
	size_t rl = strlen(root);
	int n;

	/* the mount shows the hierarchy from root: path must lie under it */
	if (strcmp(root, "/") != 0) {
		if (strncmp(path, root, rl) != 0 || (path[rl] != '/' && path[rl] != '\0'))
			return -ENOENT;
		path += rl;
	}
	while (*path == '/')
		path++;
	n = snprintf(dir, size, "%s%s%s", mnt, *path ? "/" : "", path);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

int vl_parse_cgroup_value(const char *text, uint64_t *v)
{
	const char *p = text;

	while (*p == ' ' || *p == '\t')
		p++;
	if (strncmp(p, "max", 3) == 0 && (p[3] == '\0' || p[3] == '\n')) {
		*v = VL_UNLIMITED;
		return 0;
	}
	if (number(&p, v) != 0 || (*p != '\0' && *p != '\n'))
		return -EINVAL;
	if (*v >= (1ull << 62)) /* v1 prints PAGE_COUNTER_MAX pages for "no limit" */
		*v = VL_UNLIMITED;
	return 0;
}

int vl_parse_stat_key(const char *text, const char *key, uint64_t *v)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p != NULL && *p) {
		if (strncmp(p, key, klen) == 0 && p[klen] == ' ') {
			const char *q = p + klen;

			return number(&q, v) == 0 ? 0 : -EINVAL;
		}
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return -ENOENT;
}

uint64_t vl_cgroup_headroom(uint64_t limit, uint64_t usage, uint64_t reclaimable)
{
	if (limit == VL_UNLIMITED)
		return VL_UNLIMITED;
	if (reclaimable > usage)
		reclaimable = usage;
	usage -= reclaimable;
	return usage >= limit ? 0 : limit - usage;
}

uint64_t vl_threshold_bytes(const struct vl_threshold *t, uint64_t whole)
{
	if (!t->is_percent)
		return t->bytes;
	if (whole == VL_UNLIMITED)
		return 0; /* a percentage of no limit: nothing to measure against */
	return whole / 100 * t->percent + whole % 100 * t->percent / 100;
}

uint64_t vl_purge_need(uint64_t have, uint64_t threshold, uint64_t min_room)
{
	uint64_t room;

	if (threshold == 0 || have >= threshold)
		return 0;
	room = threshold / 4 > min_room ? threshold / 4 : min_room;
	return threshold - have + room;
}

unsigned vl_poll_ms(uint64_t gap, uint64_t rate, unsigned min_ms, unsigned max_ms)
{
	uint64_t per_ms = rate / 1000, ms;

	if (rate == 0)
		ms = max_ms;
	else
		ms = gap / (per_ms ? per_ms : 1);
	if (ms > max_ms)
		ms = max_ms;
	if (ms < min_ms)
		ms = min_ms;
	return (unsigned)ms;
}

uint64_t vl_fall_rate(uint64_t had, uint64_t have, uint64_t dt_ns, uint64_t least)
{
	double seen;

	if (dt_ns == 0 || have >= had)
		return least;
	seen = (double)(had - have) * 1e9 / (double)dt_ns;
	if (seen <= (double)least)
		return least;
	return seen >= 1.8e19 ? UINT64_MAX : (uint64_t)seen;
}
