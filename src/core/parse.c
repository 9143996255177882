/* SPDX-License-Identifier: MIT */
/*
 * parse.c - sizes and thresholds (see parse.h).
 */
#include "parse.h"

#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <stddef.h>

/* Decimal digits at *p, none before them: as vl_parse_decimal. */
static int digits(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t n = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (n > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		n = n * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*v = n;
	return 0;
}

static int shift_of(char c)
{
	switch (c) {
	case 'k': case 'K': return 10;
	case 'm': case 'M': return 20;
	case 'g': case 'G': return 30;
	case 't': case 'T': return 40;
	default: return -1;
	}
}

int vl_parse_size(const char *s, uint64_t *out)
{
	uint64_t n;
	int shift = 0, err;

	if (s == NULL)
		return -EINVAL;
	err = digits(&s, &n);
	if (err)
		return err;
	if (*s != '\0') {
		shift = shift_of(*s++);
		if (shift < 0)
			return -EINVAL;
		if (s[0] == 'i' && s[1] == 'B')
			s += 2;
		else if (s[0] == 'B' || s[0] == 'b')
			s++;
		if (*s != '\0')
			return -EINVAL;
	}
	if (n > ((uint64_t)INT64_MAX >> shift))
		return -ERANGE;
	*out = n << shift;
	return 0;
}

int vl_parse_ms(const char *s, uint64_t max_ms, uint64_t *out)
{
	uint64_t n, unit;
	int err;

	if (s == NULL)
		return -EINVAL;
	err = digits(&s, &n);
	if (err)
		return err;
	if (*s == '\0' || strcmp(s, "ms") == 0)
		unit = 1;
	else if (strcmp(s, "s") == 0)
		unit = 1000;
	else
		return -EINVAL;
	if (n > max_ms / unit)
		return -ERANGE;
	*out = n * unit;
	return 0;
}

int vl_parse_threshold(const char *s, struct vl_threshold *t)
{
	const char *p = s;
	uint64_t n;
	int err;

	if (s == NULL)
		return -EINVAL;
	err = digits(&p, &n);
	if (err == 0 && p[0] == '%' && p[1] == '\0') {
		if (n > 100)
			return -ERANGE;
		t->is_percent = 1;
		t->percent = (uint32_t)n;
		t->bytes = 0;
		return 0;
	}
	err = vl_parse_size(s, &t->bytes);
	if (err)
		return err;
	t->is_percent = 0;
	t->percent = 0;
	return 0;
}

/* The unsigned decimal field that starts at p, or -1. */
static int field_u64(const char *p, uint64_t *v)
{
	char *end;

	if (*p < '0' || *p > '9')
		return -1;
	*v = strtoull(p, &end, 10);
	return *end == ' ' || *end == '\0' || *end == '\n' ? 0 : -1;
}

int vl_parse_proc_stat(const char *line, struct vl_proc_stat *out)
{
	const char *p = strrchr(line, ')');
	int field = 3; /* what p points at, once past ") " */

	if (p == NULL || p[1] != ' ' || p[2] == '\0')
		return -1;
	p += 2;
	out->state = *p;
	while (*p != '\0' && field < 28) {
		if (*p++ == ' ') {
			field++;
			if (field == 22 && field_u64(p, &out->start) != 0)
				return -1;
		}
	}
	return field == 28 && field_u64(p, &out->stack) == 0 ? 0 : -1;
}

/* The kernel's dev_t: as glibc's makedev(), without needing <sys/sysmacros.h> here. */
static uint64_t kernel_dev(unsigned long long maj, unsigned long long min)
{
	return ((maj & 0xfffff000ull) << 32) | ((maj & 0xfffull) << 8) |
	       ((min & 0xffffff00ull) << 12) | (min & 0xffull);
}

/* Past the blanks, then past one word and its blanks. */
static const char *next_word(const char *p)
{
	while (*p == ' ')
		p++;
	while (*p != '\0' && *p != ' ')
		p++;
	while (*p == ' ')
		p++;
	return p;
}

int vl_parse_lock_line(const char *line, uint64_t *dev, uint64_t *ino, uint64_t *start)
{
	const char *p = strchr(line, ':');
	unsigned long long maj, min, i, st;
	char *end;

	if (p == NULL || strstr(line, "->") != NULL)
		return -1;
	p++;
	while (*p == ' ')
		p++;
	if (strncmp(p, "OFDLCK ", 7) != 0)
		return -1;
	p = next_word(next_word(next_word(next_word(p)))); /* type, kind, access, pid */
	maj = strtoull(p, &end, 16);
	if (end == p || *end != ':')
		return -1;
	p = end + 1;
	min = strtoull(p, &end, 16);
	if (end == p || *end != ':')
		return -1;
	p = end + 1;
	i = strtoull(p, &end, 10);
	if (end == p || *end != ' ')
		return -1;
	p = end + 1;
	st = strtoull(p, &end, 10);
	if (end == p)
		return -1;
	*dev = kernel_dev(maj, min);
	*ino = i;
	*start = st;
	return 0;
}

int vl_parse_decimal(const char **p, uint64_t *v)
{
	while (**p == ' ' || **p == '\t')
		(*p)++;
	return digits(p, v);
}

int vl_id_map_inside(const char *line, uint64_t outside, uint64_t *inside)
{
	uint64_t in, out, count;

	if (vl_parse_decimal(&line, &in) != 0 || vl_parse_decimal(&line, &out) != 0 ||
	    vl_parse_decimal(&line, &count) != 0)
		return -1;
	if (outside < out || outside - out >= count || outside - out > UINT64_MAX - in)
		return -1;
	*inside = in + (outside - out);
	return 0;
}

/* The blank-separated field at or after p: its start in *f and length in *len; NULL if none. */
static const char *next_field(const char *p, const char **f, size_t *len)
{
	while (*p == ' ')
		p++;
	if (*p == '\0' || *p == '\n')
		return NULL;
	*f = p;
	*len = strcspn(p, " \n");
	return p + *len;
}

int vl_parse_mount_line(const char *line, struct vl_mount_fields *m)
{
	const char *sep = strstr(line, " - "), *p = line, *f;
	unsigned long long maj, min;
	size_t len;
	char *end;

	if (sep == NULL)
		return -1;
	for (int i = 0; i < 5; i++) { /* ID PARENT MAJ:MIN ROOT POINT */
		p = next_field(p, &f, &len);
		if (p == NULL || p > sep)
			return -1;
		if (i == 0) {
			if (*f < '0' || *f > '9')
				return -1;
			m->id = strtoull(f, &end, 10);
			if (end != f + len)
				return -1;
		} else if (i == 2) {
			maj = strtoull(f, &end, 10);
			if (end == f || *end != ':')
				return -1;
			min = strtoull(end + 1, &end, 10);
			if (end != f + len || end[-1] == ':')
				return -1;
			m->dev = kernel_dev(maj, min);
		} else if (i == 3) {
			m->root = f;
			m->root_len = len;
		} else if (i == 4) {
			m->point = f;
			m->point_len = len;
		}
	}
	p = next_field(sep + 3, &m->fstype, &m->fstype_len);
	if (p == NULL || (p = next_field(p, &f, &len)) == NULL) /* the source */
		return -1;
	if (next_field(p, &m->superopts, &m->superopts_len) == NULL) {
		m->superopts = p;
		m->superopts_len = 0;
	}
	return 0;
}

int vl_fdinfo_field(const char *text, const char *name, int base, uint64_t *out)
{
	size_t len = strlen(name);
	const char *p = text;
	unsigned long long v;
	char *end;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, name, len) == 0 && p[len] == ':') {
			p += len + 1;
			while (*p == '\t' || *p == ' ')
				p++;
			if (*p < '0' || *p > (base == 8 ? '7' : '9'))
				return -1;
			errno = 0;
			v = strtoull(p, &end, base);
			if (errno != 0 || (*end != '\n' && *end != '\0'))
				return -1;
			*out = v;
			return 0;
		}
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return -1;
}

int vl_fdinfo_mnt_id(const char *text, uint64_t *id)
{
	return vl_fdinfo_field(text, "mnt_id", 10, id);
}

int vl_mount_unescape(char *dst, size_t size, const char *src, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		char c = src[i];

		if (c == '\\' && i + 3 < len && src[i + 1] >= '0' && src[i + 1] <= '3' &&
		    src[i + 2] >= '0' && src[i + 2] <= '7' && src[i + 3] >= '0' && src[i + 3] <= '7') {
			c = (char)(((src[i + 1] - '0') << 6) | ((src[i + 2] - '0') << 3) |
				   (src[i + 3] - '0'));
			i += 3;
		}
		if (o + 1 >= size)
			return -1;
		dst[o++] = c;
	}
	dst[o] = '\0';
	return 0;
}

int vl_mount_hides_pids(const struct vl_mount_fields *m)
{
	const char *p = m->superopts, *stop = m->superopts + m->superopts_len;

	if (!vl_field_is(m->point, m->point_len, "/proc") ||
	    !vl_field_is(m->fstype, m->fstype_len, "proc"))
		return 0;
	while (p < stop) {
		size_t n = strcspn(p, ", \n");

		if (n > 8 && strncmp(p, "hidepid=", 8) == 0)
			return !vl_field_is(p + 8, n - 8, "0") && !vl_field_is(p + 8, n - 8, "off");
		p += n + 1;
	}
	return 0;
}
