/* SPDX-License-Identifier: MIT */
/*
 * status_print.c - `volatile status` printed: text, JSON, and the frame
 * of --watch, from a snapshot (status.h).
 */
#include "cli.h"
#include "status.h"

#include "env.h"
#include "lock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

/* ranges a file shows in the text without --ranges: its oldest */
#define OLDEST_SHOWN 5

/* The length of the valid UTF-8 sequence at s (1 to 4), or 0 if it is not one. */
static int utf8_len(const unsigned char *s)
{
	int n = s[0] < 0x80 ? 1 : s[0] >= 0xc2 && s[0] <= 0xdf ? 2
				 : s[0] >= 0xe0 && s[0] <= 0xef ? 3
				 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
								: 0;

	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* overlong three- and four-byte forms, surrogates, past U+10FFFF */
	if ((n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0))) ||
	    (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))))
		return 0;
	return n;
}

/*
 * A name (a path, an ashmem region's name: anything a program chose) as a
 * JSON string: a byte that is not UTF-8 as U+FFFD, so that the output is
 * always valid JSON.
 */
static void json_string(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	putchar('"');
	while (*p) {
		int n = utf8_len(p);

		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			printf("\\u%04x", *p);
		else if (n == 0)
			printf("\\ufffd");
		else
			fwrite(p, 1, (size_t)n, stdout);
		p += n ? n : 1;
	}
	putchar('"');
}

/*
 * A name in the text: control bytes and bytes that are not UTF-8 as \xNN,
 * a backslash doubled, so that no name can move the cursor or clear a
 * terminal (--watch draws on one) or break a line.
 */
static void text_name(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		int n = utf8_len(p);

		if (*p == '\\')
			fputs("\\\\", stdout);
		else if (*p < 0x20 || *p == 0x7f || n == 0)
			printf("\\x%02x", *p);
		else
			fwrite(p, 1, (size_t)n, stdout);
		p += n ? n : 1;
	}
}

static void json_limit(const char *key, uint64_t v)
{
	if (v == VL_UNLIMITED)
		printf(", \"%s\": null", key);
	else
		printf(", \"%s\": %llu", key, (unsigned long long)v);
}

/* The newest max of the region's last purges: when, why, how much, by whom. */
static void print_purges(const struct snapshot *s, int max)
{
	char a[32];

	if (s->npurges == 0) {
		printf("last purges: none logged\n");
		return;
	}
	printf("last purges:\n");
	for (int i = 0; i < s->npurges && i < max; i++) {
		const struct vl_purge_entry *e = &s->purges[i];
		uint64_t ago = s->now_ms > e->at_ms ? s->now_ms - e->at_ms : 0;

		printf("  %7llu.%01llu s ago  %-8s %s in %u range%s, by pid %d\n",
		       (unsigned long long)(ago / 1000), (unsigned long long)(ago % 1000 / 100),
		       vl_purge_reason_name(e->reason), human(e->bytes, a, sizeof(a)), e->ranges,
		       e->ranges == 1 ? "" : "s", e->pid);
	}
}

/* a file's unpurged bytes, from its copied ranges */
static uint64_t volatile_bytes_of(const struct file_out *f)
{
	uint64_t v = 0;

	for (size_t k = 0; k < f->n; k++)
		if (!f->ranges[k].purged)
			v += f->ranges[k].end - f->ranges[k].start;
	return v;
}

/* a file and its unpurged bytes, summed once for the sort */
struct by_bytes {
	const struct file_out *f;
	uint64_t vbytes;
};

static int more_volatile_first(const void *a, const void *b)
{
	uint64_t x = ((const struct by_bytes *)a)->vbytes, y = ((const struct by_bytes *)b)->vbytes;

	return (x < y) - (x > y);
}

#define WATCH_FILES 8
#define WATCH_PURGES 10

/* "4.2 s", "12 min", "3 h", "2 days": how long ago, or for how long */
static const char *span(double seconds, char *buf, size_t size)
{
	if (seconds < 0)
		seconds = 0;
	if (seconds < 60)
		snprintf(buf, size, "%.1f s", seconds);
	else if (seconds < 3600)
		snprintf(buf, size, "%.0f min", seconds / 60);
	else if (seconds < 2 * 86400)
		snprintf(buf, size, "%.0f h", seconds / 3600);
	else
		snprintf(buf, size, "%.0f days", seconds / 86400);
	return buf;
}

static double seconds_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) / 1e9;
}

/*
 * One line per daemon serving the region, or why none matters: without
 * one, an idle program's cache is purged by nobody.
 */
static void print_daemons(const struct snapshot *s)
{
	char since[32], ran[32], woke[32];

	if (s->ndaemons == 0)
		printf("daemon:   none (idle programs' caches are purged only while one runs: "
		       "volatile daemon)\n");
	for (int i = 0; i < s->ndaemons; i++) {
		const struct daemon_seen *d = &s->daemons[i];
		struct timespec start = { .tv_sec = (time_t)d->since };
		time_t t = (time_t)d->since;
		struct tm tm;

		if (d->since <= 0 || localtime_r(&t, &tm) == NULL ||
		    strftime(since, sizeof(since), "%Y-%m-%d %H:%M:%S", &tm) == 0)
			snprintf(since, sizeof(since), "an unknown time");
		printf("%s pid %d (the %s's), since %s (up %s), last woke %s ago\n",
		       i ? "         " : "daemon:  ", (int)d->pid, d->kind, since,
		       d->since > 0 ? span(seconds_since(&start), ran, sizeof(ran)) : "?",
		       span(seconds_since(&d->woke), woke, sizeof(woke)));
	}
}

static void print_daemons_json(const struct snapshot *s)
{
	printf(", \"daemons\": [");
	for (int i = 0; i < s->ndaemons; i++) {
		const struct daemon_seen *d = &s->daemons[i];
		double ago = seconds_since(&d->woke);

		printf("%s{\"kind\": \"%s\", \"pid\": %d, \"since\": %lld, \"woke_ago_ms\": %llu}",
		       i ? ", " : "", d->kind, (int)d->pid, d->since,
		       (unsigned long long)(ago > 0 ? ago * 1000 : 0));
	}
	printf("]");
}

void print_watch(const struct snapshot *s, const struct vl_config *cfg)
{
	struct by_bytes *all;
	char a[32], b[32], d[40];
	struct pressure p;
	size_t n = 0;

	pressure_now(&p);
	printf("volatile status --watch   region %s%s\n", cfg->region,
	       s->exists ? "" : " (not created yet)");
	printf("volatile: %-12s in %u range%s of %u file%s; purged: %s in %u range%s\n",
	       human128(&s->c.volatile_bytes, a, sizeof(a)), s->c.ranges - s->c.ranges_purged,
	       plural(s->c.ranges - s->c.ranges_purged), s->with_ranges, plural(s->with_ranges),
	       human128(&s->c.purged_bytes, b, sizeof(b)), s->c.ranges_purged,
	       plural(s->c.ranges_purged));
	printf("purges:   %llu so far, %s bytes in all\n", (unsigned long long)s->c.purges,
	       dec128(&s->c.purged_total, d));
	if (!p.known)
		printf("memory:   unknown\n");
	else if (!vl_threshold_on(&cfg->min_available))
		printf("memory:   %s available; pressure purging off\n",
		       human(p.ms.available, a, sizeof(a)));
	else
		printf("memory:   %s available, threshold %s: %s\n", human(p.ms.available, a, sizeof(a)),
		       human(p.threshold, b, sizeof(b)), p.low ? "LOW, purging" : "ok");
	if (cfg->has_budget)
		printf("budget:   %s\n", human(cfg->budget, a, sizeof(a)));
	print_daemons(s);
	all = malloc((s->nfiles ? s->nfiles : 1) * sizeof(*all));
	if (all == NULL)
		die("out of memory");
	for (size_t i = 0; i < s->nfiles; i++)
		if (!s->files[i].unread && s->files[i].n > 0) {
			all[n].f = &s->files[i];
			all[n++].vbytes = volatile_bytes_of(&s->files[i]);
		}
	qsort(all, n, sizeof(*all), more_volatile_first);
	printf("\nfiles with the most volatile bytes:\n");
	if (n == 0)
		printf("  none\n");
	for (size_t i = 0; i < n && i < WATCH_FILES; i++) {
		const struct file_out *f = all[i].f;

		printf("  %-10s %6zu range%s  ", human(all[i].vbytes, a, sizeof(a)), f->n,
		       f->n == 1 ? " " : "s");
		if (f->ashmem || f->t.path_len)
			text_name(f->ashmem ? f->ash_name : f->t.path);
		else
			printf("%s", (f->t.flags & VL_FF_ANON) ? "(memfd or unlinked)" : "(no path)");
		printf("\n");
	}
	free(all);
	printf("\n");
	print_purges(s, WATCH_PURGES);
}

/* The region, its state and its counters (the "region" ... "budget" fields). */
static void json_region(const struct snapshot *s, const struct vl_config *cfg)
{
	char d[40];

	printf("{\"region\": ");
	json_string(cfg->region);
	printf(", \"region_why\": ");
	json_string(cfg->region_why);
	printf(", \"exists\": %s", s->exists ? "true" : "false");
	printf(", \"state\": \"%s\"", !s->exists ? "none" : s->retired ? "retired" : s->waiting ? "waiting" : "in use");
	printf(", \"older_left\": %s", s->blind ? "true" : "false");
	printf(", \"files\": %u, \"records\": %u, \"ranges\": %u, \"ranges_purged\": %u",
	       s->with_ranges, s->c.files_used, s->c.ranges, s->c.ranges_purged);
	/* exact, past 2^64 too: a JSON number has no bound */
	printf(", \"volatile_bytes\": %s", dec128(&s->c.volatile_bytes, d));
	printf(", \"purged_bytes\": %s", dec128(&s->c.purged_bytes, d));
	printf(", \"purges\": %llu, \"purged_total\": %s", (unsigned long long)s->c.purges,
	       dec128(&s->c.purged_total, d));
	printf(", \"evicted\": %u", s->c.evicted);
	printf(", \"tombstones\": %llu, \"tombstones_pushed\": %llu, \"tomb_horizon_ns\": %llu",
	       (unsigned long long)s->tomb_added, (unsigned long long)s->tomb_pushed,
	       (unsigned long long)s->tomb_horizon);
	printf(", \"capacity_ranges\": %u, \"capacity_files\": %u",
	       s->exists ? s->g.node_cap - VL_CHUNK : 0, s->exists ? s->g.file_cap - 1 : 0);
	printf(", \"region_bytes\": %llu", (unsigned long long)s->region_bytes);
	if (cfg->has_budget)
		printf(", \"budget\": %llu", (unsigned long long)cfg->budget);
	else
		printf(", \"budget\": null");
}

/* The "memory" object: what this process's memory state reads now. */
static void json_memory(const struct pressure *p)
{
	printf(", \"memory\": {\"available\": %llu, \"total\": %llu",
	       (unsigned long long)p->ms.available, (unsigned long long)p->ms.total);
	printf(", \"mem_available\": %llu, \"mem_total\": %llu",
	       (unsigned long long)p->ms.mem_available, (unsigned long long)p->ms.mem_total);
	printf(", \"cgroup\": ");
	if (p->have_cg)
		json_string(p->cg.dir);
	else
		printf("null");
	printf(", \"cgroup_version\": %d", p->have_cg ? p->cg.version : 0);
	json_limit("cgroup_limit", p->ms.cg_limit);
	json_limit("cgroup_headroom", p->ms.cg_headroom);
	printf("}");
}

/* The "pressure" object: the thresholds and where memory stands against them. */
static void json_pressure(const struct pressure *p, const struct vl_config *cfg)
{
	char a[32], b[32];

	printf(", \"pressure\": {\"state\": \"%s\", \"min_available\": \"%s\""
	       ", \"min_available_bytes\": %llu, \"tmpfs_min_free\": \"%s\"}",
	       !vl_threshold_on(&cfg->min_available) ? "off"
	       : !p->known                            ? "unknown"
	       : p->low                               ? "low"
						      : "ok",
	       threshold_text(&cfg->min_available, a, sizeof(a)), (unsigned long long)p->threshold,
	       threshold_text(&cfg->tmpfs_min_free, b, sizeof(b)));
}

/* The "last_purges" array, newest first as the region's log gives them. */
static void json_last_purges(const struct snapshot *s)
{
	printf(", \"last_purges\": [");
	for (int i = 0; i < s->npurges; i++) {
		const struct vl_purge_entry *e = &s->purges[i];

		printf("%s{\"ago_ms\": %llu, \"reason\": \"%s\", \"bytes\": %llu, \"ranges\": %u"
		       ", \"pid\": %d}",
		       i ? ", " : "",
		       (unsigned long long)(s->now_ms > e->at_ms ? s->now_ms - e->at_ms : 0),
		       vl_purge_reason_name(e->reason), (unsigned long long)e->bytes, e->ranges, e->pid);
	}
	printf("]");
}

/* A file's "holders" array: the holders its record names, each seen gone or not. */
static void json_holders(const struct file_out *f)
{
	int first = 1;

	printf("\"holders\": [");
	for (int h = 0; h < VL_HOLDERS; h++) {
		if (f->t.holders[h].pid <= 0)
			continue;
		printf("%s{\"pid\": %d, \"fd\": %d, \"gone\": %s}", first ? "" : ", ",
		       f->t.holders[h].pid, f->t.holders[h].fd,
		       f->holder_gone[h] ? "true" : "false");
		first = 0;
	}
	printf("]");
}

/* A file's "ranges" array, in offset order. */
static void json_ranges(const struct file_out *f)
{
	printf("\"ranges\": [");
	for (size_t k = 0; k < f->n; k++)
		printf("%s{\"offset\": %llu, \"length\": %llu, \"purged\": %s, \"age\": %u}",
		       k ? ", " : "", (unsigned long long)f->ranges[k].start,
		       (unsigned long long)(f->ranges[k].end - f->ranges[k].start),
		       f->ranges[k].purged ? "true" : "false", f->ranges[k].age);
	printf("]");
}

/* One object of "file_list": the file's identity and name, its holders, its ranges. */
static void json_file(const struct file_out *f, int first)
{
	printf("%s{\"dev\": \"%u:%u\", \"ino\": %llu, \"path\": ", first ? "" : ", ",
	       major(f->t.id.dev), minor(f->t.id.dev), (unsigned long long)f->t.id.ino);
	if (f->t.path_len)
		json_string(f->t.path);
	else
		printf("null");
	printf(", \"ashmem\": ");
	if (f->ashmem) {
		printf("{\"name\": ");
		json_string(f->ash_name);
		printf(", \"size\": %llu}", (unsigned long long)f->ash_size);
	} else {
		printf("null");
	}
	printf(", \"unread\": %s", f->unread ? "true" : "false");
	if (f->unread)
		printf(", \"locked_by\": %d", f->holder);
	printf(", \"birth\": \"%lld.%09u\", \"anonymous\": %s, \"unreachable\": %s"
	       ", \"gone\": %s, ",
	       (long long)f->t.id.btime_sec, f->t.id.btime_nsec,
	       (f->t.flags & VL_FF_ANON) ? "true" : "false", f->t.checked_at ? "true" : "false",
	       f->t.gone_since ? "true" : "false");
	json_holders(f);
	printf(", \"holders_gone\": %s, ", f->holders_gone ? "true" : "false");
	printf("\"unsound\": %s, ", f->unsound ? "true" : "false");
	printf("\"unmark_says_purged\": %s, ", (f->t.flags & VL_FF_TOMB) ? "true" : "false");
	json_ranges(f);
	printf("}");
}

/* The whole snapshot as one JSON object, section by section. */
void print_json(const struct snapshot *s, const struct vl_config *cfg)
{
	struct pressure p;

	pressure_now(&p);
	json_region(s, cfg);
	json_memory(&p);
	json_pressure(&p, cfg);
	print_daemons_json(s);
	json_last_purges(s);
	printf(", \"file_list\": [");
	for (size_t i = 0; i < s->nfiles; i++)
		json_file(&s->files[i], i == 0);
	printf("]}\n");
}

static void print_range(const struct range_out *x)
{
	printf("  %-20llu %-20llu %-8s %u\n", (unsigned long long)x->start,
	       (unsigned long long)(x->end - x->start), x->purged ? "purged" : "volatile", x->age);
}

/* oldest first: the largest age */
static int older_first(const void *a, const void *b)
{
	const struct range_out *x = *(const struct range_out *const *)a;
	const struct range_out *y = *(const struct range_out *const *)b;

	return x->age != y->age ? (x->age < y->age ? 1 : -1) : (x->start > y->start) - (x->start < y->start);
}

/*
 * A file's ranges in the text: a summary, then every range in offset order
 * (--ranges), or its OLDEST_SHOWN oldest, oldest first (the next to go),
 * however many it has:
 * a file of a million ranges is a few lines, not a million.
 */
static void print_ranges(const struct file_out *f, int all)
{
	const struct range_out **by_age;
	uint64_t vbytes = 0, pbytes = 0;
	size_t purged = 0, shown;

	for (size_t k = 0; k < f->n; k++) {
		uint64_t len = f->ranges[k].end - f->ranges[k].start;

		purged += f->ranges[k].purged != 0;
		*(f->ranges[k].purged ? &pbytes : &vbytes) += len;
	}
	printf("  %zu range%s (%zu purged): %llu bytes volatile, %llu bytes purged\n", f->n,
	       f->n == 1 ? "" : "s", purged, (unsigned long long)vbytes,
	       (unsigned long long)pbytes);
	if (f->n == 0)
		return;
	printf("  %-20s %-20s %-8s %s\n", "offset", "length", "state", "age");
	if (all) {
		for (size_t k = 0; k < f->n; k++)
			print_range(&f->ranges[k]);
		return;
	}
	by_age = malloc(f->n * sizeof(*by_age));
	if (by_age == NULL)
		die("out of memory");
	for (size_t k = 0; k < f->n; k++)
		by_age[k] = &f->ranges[k];
	qsort(by_age, f->n, sizeof(*by_age), older_first);
	shown = f->n < OLDEST_SHOWN ? f->n : OLDEST_SHOWN;
	for (size_t k = 0; k < shown; k++)
		print_range(by_age[k]);
	if (f->n > shown)
		printf("  ... and %zu more, newer (volatile status --ranges lists them all)\n",
		       f->n - shown);
	free(by_age);
}

/*
 * The tombstones (DESIGN 15): a file forgotten with a purged range
 * answers 1 from them; so does every file born at or before the horizon,
 * which is worth seeing when a program asks why its UNMARKs say 1.
 */
static void print_tombs(const struct snapshot *s)
{
	char when[64] = "";
	time_t t = (time_t)(s->tomb_horizon / 1000000000ull);
	struct tm tm;

	printf("tombs:    %llu file%s forgotten with purged ranges: their UNMARKs say 1",
	       (unsigned long long)s->tomb_added, s->tomb_added == 1 ? "" : "s");
	if (s->tomb_horizon != 0 && gmtime_r(&t, &tm) != NULL &&
	    strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm) > 0)
		printf(";\n          so do those of files born before %s whose records are made again",
		       when);
	printf("\n");
}

/* The region, its state and counters, its capacity and the budget. */
static void text_region(const struct snapshot *s, const struct vl_config *cfg)
{
	char a[32], d[40];

	printf("region:   %s%s%s\n", cfg->region, s->exists ? "" : " (not created yet)",
	       s->retired ? " (retired: its records are moved to a newer one)"
	       : s->waiting ? " (waiting: older regions still in use are not moved in yet)"
	       : s->blind ? " (older removed regions, still in use, are left to their users: UNMARK "
			    "says 1 of what this one does not hold)"
			  : "");
	printf("          (%s)\n", cfg->region_why);
	printf("files:    %u with volatile ranges", s->with_ranges);
	if (s->c.files_used != s->with_ranges) /* ashmem regions keep a record without */
		printf(" (%u record%s in all)", s->c.files_used, plural(s->c.files_used));
	printf("\n");
	printf("ranges:   %u (%u purged)\n", s->c.ranges, s->c.ranges_purged);
	printf("volatile: %s bytes (%s) not purged\n", dec128(&s->c.volatile_bytes, d),
	       human128(&s->c.volatile_bytes, a, sizeof(a)));
	printf("purged:   %s bytes (%s) in purged ranges;", dec128(&s->c.purged_bytes, d),
	       human128(&s->c.purged_bytes, a, sizeof(a)));
	printf(" %s bytes in %llu purge%s so far\n", dec128(&s->c.purged_total, d),
	       (unsigned long long)s->c.purges, plural(s->c.purges));
	if (s->c.evicted)
		printf("evicted:  %u record%s of silent, unreachable files, to make room\n",
		       s->c.evicted, plural(s->c.evicted));
	if (s->tomb_added)
		print_tombs(s);
	if (s->exists)
		printf("capacity: %u ranges, %u files; the region uses %s\n", s->g.node_cap - VL_CHUNK,
		       s->g.file_cap - 1, human(s->region_bytes, a, sizeof(a)));
	if (cfg->has_budget)
		printf("budget:   %llu bytes (%s)\n", (unsigned long long)cfg->budget,
		       human(cfg->budget, a, sizeof(a)));
	else
		printf("budget:   none\n");
}

/* Memory now (and the cgroup's), and the thresholds of memory and tmpfs relief. */
static void text_memory(const struct pressure *p, const struct vl_config *cfg)
{
	char a[32], b[32], c[32];

	printf("memory:   %s available of %s%s\n", human(p->ms.available, a, sizeof(a)),
	       human(p->ms.total, b, sizeof(b)), p->ms.by_cgroup ? " (the cgroup's headroom)" : "");
	if (p->have_cg)
		printf("cgroup:   %s (v%d), limit %s\n", p->cg.dir, p->cg.version,
		       p->ms.cg_limit == VL_UNLIMITED ? "none" : human(p->ms.cg_limit, c, sizeof(c)));
	if (!vl_threshold_on(&cfg->min_available))
		printf("pressure: off (VOLATILE_MIN_AVAILABLE=0)\n");
	else
		printf("pressure: %s; purging below %s available (%s)\n",
		       !p->known ? "unknown" : p->low ? "LOW" : "ok",
		       threshold_text(&cfg->min_available, a, sizeof(a)),
		       human(p->threshold, b, sizeof(b)));
	if (!vl_threshold_on(&cfg->tmpfs_min_free))
		printf("tmpfs:    off (VOLATILE_TMPFS_MIN_FREE=0)\n");
	else
		printf("tmpfs:    purging a tmpfs's own ranges below %s of it free\n",
		       threshold_text(&cfg->tmpfs_min_free, c, sizeof(c)));
}

/* One file: its identity and name, what is known of it, its live holders, its ranges. */
static void text_file(const struct file_out *f, int all_ranges)
{
	if (f->unread) {
		printf("\nfile not read: its lock is held by pid %d, which has not let go in "
		       "%s ms (stopped?)\n", f->holder, STATUS_WAIT_MS);
		return;
	}
	printf("\nfile %u:%u:%llu ", major(f->t.id.dev), minor(f->t.id.dev),
	       (unsigned long long)f->t.id.ino);
	if (f->ashmem) {
		printf("ashmem region \"");
		text_name(f->ash_name);
		printf("\", %llu bytes", (unsigned long long)f->ash_size);
	} else if (f->t.path_len) {
		text_name(f->t.path);
	} else {
		printf("%s", (f->t.flags & VL_FF_ANON) ? "(memfd or unlinked)" : "(no path)");
	}
	printf("%s", f->t.gone_since ? " (gone, to be forgotten)"
		     : f->t.checked_at ? " (unreachable)" : "");
	if (f->holders_gone)
		printf(" (holders gone)");
	if (f->t.flags & VL_FF_TOMB)
		printf(" (every UNMARK says 1: a repair or a tombstone)");
	for (int h = 0; h < VL_HOLDERS; h++)
		if (f->t.holders[h].pid > 0 && !f->holder_gone[h])
			printf(" [pid %d fd %d]", f->t.holders[h].pid, f->t.holders[h].fd);
	printf("\n");
	if (f->unsound)
		printf("  ranges not read: its index does not end within its bound (a stray "
		       "write made a loop of it?)\n");
	else
		print_ranges(f, all_ranges);
}

void print_text(const struct snapshot *s, const struct vl_config *cfg, int all_ranges)
{
	struct pressure p;

	pressure_now(&p);
	text_region(s, cfg);
	text_memory(&p, cfg);
	print_daemons(s);
	print_purges(s, 5);
	for (size_t i = 0; i < s->nfiles; i++)
		text_file(&s->files[i], all_ranges);
}
