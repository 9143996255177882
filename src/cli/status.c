/* SPDX-License-Identifier: MIT */
/*
 * status.c - `volatile status [--json]`.
 *
 * Read with no lock: each file's record and ranges between two equal even
 * values of its `vers` (odd while its lock is held), the counters as they
 * are (atomic adds). A file whose lock a live process keeps (stopped,
 * traced) for STATUS_WAIT_MS is listed as not read, with that process
 * named; one whose holder is gone is taken, so that it is repaired.
 */
#include "cli.h"

#include "env.h"
#include "lock.h"
#include "core/ashmem_rules.h"
#include "core/pool.h"
#include "core/rtree.h"
#include "pressure.h"
#include "reach.h"
#include "region.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static const char help[] =
	"Usage: volatile status [--ranges] [--json]\n"
	"Show the region: its files with volatile ranges, each with a summary and its\n"
	"oldest ranges (offset, length, purged or not, age in MARKs since), the\n"
	"volatile and purged bytes, capacity, the budget in force for this\n"
	"environment, and available memory.\n"
	"  --ranges every range of every file, in offset order\n"
	"  --json   one JSON object instead of text, every range in it\n";

/* ranges a file shows in the text without --ranges: its oldest */
#define OLDEST_SHOWN 5

struct range_out {
	uint64_t start, end;
	uint32_t age;
	int purged;
};

struct file_out {
	struct vl_target t;
	int unread;                      /* its lock was kept by a live process */
	int32_t holder;                  /* ... this one (0: not known) */
	size_t n;
	struct range_out *ranges;
	int ashmem;                      /* an ashmem region: its name and size */
	char ash_name[VL_ASH_NAME_LEN];
	uint64_t ash_size;
};

struct snapshot {
	int exists;
	int waiting;          /* made anew, older regions not moved in yet (ESTALE) */
	int retired;          /* its records moved to the region new processes find */
	struct vl_counters c;
	struct vl_geometry g;
	uint64_t region_bytes;
	size_t nfiles;
	struct file_out *files;
	uint32_t with_ranges; /* files of the list with a range (records: c.files_used) */
};

static void *grow(void *p, size_t n, size_t size)
{
	p = realloc(p, n * size);
	if (p == NULL)
		die("out of memory");
	return p;
}

#define STATUS_TRIES 20    /* ms of looking with no lock before the lock is asked for */
#define STATUS_WAIT_MS "100"

/* The pid of the process that holds l, as its slot says (0: none, or not known). */
static int32_t holder_pid(const struct vl_region *r, const struct vl_lock *l)
{
	uint32_t t = vl_lock_holder(l);

	return t == 0 ? 0 : (int32_t)__atomic_load_n(&vl_proc_at(r, VL_TOKEN_SLOT(t))->pid,
						      __ATOMIC_RELAXED);
}

/*
 * The ranges of file f, as they are now (no lock: the caller checks vers
 * after), each with its MARK's stamp where its age goes (ages_now).
 */
static void copy_ranges(const struct vl_region *r, const struct vl_file *f,
			struct file_out *out)
{
	size_t cap = 0;
	uint32_t n, steps = 0;

	free(out->ranges);
	out->ranges = NULL;
	out->n = 0;
	/* a tree changing under the walk is read as garbage, bounded, and thrown away */
	for (n = vl_rb_first(r, f->h.root); n != VL_NIL && steps++ < f->h.nranges + 1 &&
					    steps < r->node_cap;
	     n = vl_rb_next(r, n)) {
		const struct vl_node *x = vl_node_at(r, n);

		if (out->n == cap) {
			cap = cap ? 2 * cap : 16;
			out->ranges = grow(out->ranges, cap, sizeof(*out->ranges));
		}
		out->ranges[out->n].start = x->start;
		out->ranges[out->n].end = x->end;
		out->ranges[out->n].purged = vl_node_purged(x);
		out->ranges[out->n].age = x->seq;
		out->n++;
	}
}

/* File fi's record (its ways, an ashmem region's state) and ranges, as they are now. */
static void copy_record(const struct vl_region *r, uint32_t fi, struct file_out *out)
{
	const struct vl_file *f = vl_file_at(r, fi);

	vl_target_copy(r, fi, &out->t);
	out->ashmem = (f->h.flags & VL_FF_ASHMEM) && vl_ash_state_ok(&f->ash);
	if (out->ashmem) {
		memcpy(out->ash_name, f->ash.name, sizeof(out->ash_name));
		out->ash_name[sizeof(out->ash_name) - 1] = '\0';
		out->ash_size = f->ash.size;
	}
	copy_ranges(r, f, out);
}

/*
 * A copy found whole: each range's age, the MARKs made since its own,
 * against the region's count read now, after the copy. Not against one
 * count read before all the files: a range marked since would have a
 * later stamp than it, and its age would wrap to some 2^32 (listed as
 * the oldest). Every stamp copied was taken (an atomic add) before its
 * file's vers or lock let us see it, so none is later than this count.
 */
static void ages_now(const struct vl_region *r, struct file_out *out)
{
	uint32_t now;

	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	now = __atomic_load_n(&r->hdr->c.seq, __ATOMIC_RELAXED);
	for (size_t k = 0; k < out->n; k++)
		out->ranges[k].age = now - out->ranges[k].age;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Copy file fi with no lock: its record and ranges, read between two
 * equal even values of its `vers` (odd while its lock is held) and the
 * same generation, for STATUS_TRIES ms; then under its lock, waited for
 * STATUS_WAIT_MS. A file whose lock a live process keeps that long is
 * reported as not read, with that process; one whose holder is gone is
 * taken, so that it is repaired, and read again.
 * Returns 0 if the slot holds no file (any more), or a record with
 * nothing to show (no range, not an ashmem region).
 */
static int copy_file(const struct vl_region *r, uint32_t fi, struct file_out *out)
{
	struct vl_file *f = vl_file_at(r, fi);
	int repaired = 0;

	memset(out, 0, sizeof(*out));
	for (int waited = 0; waited <= STATUS_TRIES;) {
		uint32_t v1 = __atomic_load_n(&f->h.vers, __ATOMIC_ACQUIRE), gen, v2;
		uint32_t holder = vl_lock_holder(&f->h.lock);

		if (__atomic_load_n(&f->h.state, __ATOMIC_ACQUIRE) == VL_FILE_FREE)
			return 0;
		if (v1 & 1) {
			if (holder != 0 && !repaired && !vl_token_alive(r, holder) &&
			    vl_lock_file(r, fi) == 0) {
				vl_unlock_file(r, fi); /* taken over: repaired */
				repaired = 1;
				continue;
			}
			sleep_ms(1);
			waited++;
			continue;
		}
		gen = __atomic_load_n(&f->h.gen, __ATOMIC_ACQUIRE);
		copy_record(r, fi, out);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		v2 = __atomic_load_n(&f->h.vers, __ATOMIC_RELAXED);
		if (v1 == v2 && gen == __atomic_load_n(&f->h.gen, __ATOMIC_RELAXED) &&
		    gen == out->t.gen) {
			ages_now(r, out);
			return out->n > 0 || out->ashmem;
		}
		sleep_ms(1);
		waited++;
	}
	/*
	 * Still changing, or held: a file marked and unmarked without a
	 * pause may never show two equal values; its lock is then waited for
	 * (STATUS_WAIT_MS: VOLATILE_LOCK_WAIT, set by cmd_status).
	 */
	if (vl_lock_file(r, fi) == 0) {
		int show = 0;

		if (f->h.state == VL_FILE_LIVE) {
			copy_record(r, fi, out);
			ages_now(r, out);
			show = out->n > 0 || out->ashmem;
		}
		vl_unlock_file(r, fi);
		return show;
	}
	free(out->ranges);
	memset(out, 0, sizeof(*out));
	out->unread = 1;
	out->holder = holder_pid(r, &f->h.lock);
	return 1;
}

static void take_snapshot(struct snapshot *s)
{
	struct vl_region r;
	uint32_t hwm;
	size_t cap = 0;

	memset(s, 0, sizeof(*s));
	if (open_region(&r, 0) != 0)
		return;
	s->exists = 1;
	/* counters changed by atomic adds: each read at once, with no lock (pool.h) */
	s->c = r.hdr->c;
	s->c.volatile_bytes = vl_u128_load(&r.hdr->c.volatile_bytes);
	s->c.purged_bytes = vl_u128_load(&r.hdr->c.purged_bytes);
	s->c.purged_total = vl_u128_load(&r.hdr->c.purged_total);
	s->g = r.hdr->geo;
	s->waiting = __atomic_load_n(&r.hdr->fate.waiting, __ATOMIC_ACQUIRE) != 0;
	s->retired = __atomic_load_n(&r.hdr->fate.retired, __ATOMIC_ACQUIRE) != 0;
	s->region_bytes = s->g.files_off + (uint64_t)s->c.file_hwm * sizeof(struct vl_file) +
			  (uint64_t)s->g.hash_cap * sizeof(uint32_t) +
			  (uint64_t)s->c.node_hwm * sizeof(struct vl_node);
	hwm = s->c.file_hwm < r.file_cap ? s->c.file_hwm : r.file_cap;
	for (uint32_t fi = 1; fi < hwm; fi++) {
		if (s->nfiles == cap) {
			cap = cap ? 2 * cap : 16;
			s->files = grow(s->files, cap, sizeof(*s->files));
		}
		if (copy_file(&r, fi, &s->files[s->nfiles]))
			s->with_ranges += s->files[s->nfiles++].n > 0;
	}
	vl_region_unmap(&r);
}

/* Memory as the library sees it for this process (DESIGN 6). */
struct pressure {
	struct vl_cgroup cg;
	int have_cg;
	struct vl_memstate ms;
	int known;
	uint64_t threshold;
	int low;
};

static void pressure_now(struct pressure *p)
{
	const struct vl_config *cfg = vl_config();

	memset(p, 0, sizeof(*p));
	p->have_cg = vl_own_cgroup(&p->cg) == 0;
	p->known = vl_memstate_read(p->have_cg ? &p->cg : NULL, &p->ms) == 0;
	if (!p->known)
		return;
	p->threshold = vl_threshold_bytes(&cfg->min_available, p->ms.total);
	p->low = p->ms.available < p->threshold;
}

/* hi * 2^64 + lo, in binary units */
static const char *human2(uint64_t hi, uint64_t lo, char *buf, size_t size)
{
	static const char units[] = "BKMGTPE";
	double d = (double)hi * 18446744073709551616.0 + (double)lo;
	int u = 0;

	while (d >= 1024 && u < 6) {
		d /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%lluB", (unsigned long long)lo);
	else
		snprintf(buf, size, "%.1f%c", d, units[u]);
	return buf;
}

static const char *human(uint64_t v, char *buf, size_t size)
{
	return human2(0, v, buf, size);
}

static const char *human128(const struct vl_u128 *v, char *buf, size_t size)
{
	return human2(v->hi, v->lo, buf, size);
}

/*
 * A region's count in decimal, exactly (up to 39 digits). Long division
 * by 10 of its four 32-bit limbs, so each step fits in 64 bits.
 */
static const char *dec128(const struct vl_u128 *v, char buf[40])
{
	uint32_t limb[4] = { (uint32_t)(v->hi >> 32), (uint32_t)v->hi, (uint32_t)(v->lo >> 32),
			     (uint32_t)v->lo };
	char *p = buf + 39;

	*p = '\0';
	do {
		uint64_t rem = 0;

		for (int i = 0; i < 4; i++) {
			uint64_t cur = rem << 32 | limb[i];

			limb[i] = (uint32_t)(cur / 10);
			rem = cur % 10;
		}
		*--p = (char)('0' + rem);
	} while (limb[0] | limb[1] | limb[2] | limb[3]);
	return p;
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void json_limit(const char *key, uint64_t v)
{
	if (v == VL_UNLIMITED)
		printf(", \"%s\": null", key);
	else
		printf(", \"%s\": %llu", key, (unsigned long long)v);
}

/* Over 80 lines: one printf per field of the JSON, in the order they appear. */
static void print_json(const struct snapshot *s, const struct vl_config *cfg)
{
	struct pressure p;
	char a[32], b[32], d[40];

	pressure_now(&p);
	printf("{\"region\": ");
	json_string(cfg->region);
	printf(", \"region_why\": ");
	json_string(cfg->region_why);
	printf(", \"exists\": %s", s->exists ? "true" : "false");
	printf(", \"state\": \"%s\"", !s->exists ? "none" : s->retired ? "retired" : s->waiting ? "waiting" : "in use");
	printf(", \"files\": %u, \"records\": %u, \"ranges\": %u, \"ranges_purged\": %u",
	       s->with_ranges, s->c.files_used, s->c.ranges, s->c.ranges_purged);
	/* exact, past 2^64 too: a JSON number has no bound */
	printf(", \"volatile_bytes\": %s", dec128(&s->c.volatile_bytes, d));
	printf(", \"purged_bytes\": %s", dec128(&s->c.purged_bytes, d));
	printf(", \"purges\": %llu, \"purged_total\": %s", (unsigned long long)s->c.purges,
	       dec128(&s->c.purged_total, d));
	printf(", \"evicted\": %u", s->c.evicted);
	printf(", \"capacity_ranges\": %u, \"capacity_files\": %u",
	       s->exists ? s->g.node_cap - 1 : 0, s->exists ? s->g.file_cap - 1 : 0);
	printf(", \"region_bytes\": %llu", (unsigned long long)s->region_bytes);
	if (cfg->has_budget)
		printf(", \"budget\": %llu", (unsigned long long)cfg->budget);
	else
		printf(", \"budget\": null");
	printf(", \"memory\": {\"available\": %llu, \"total\": %llu",
	       (unsigned long long)p.ms.available, (unsigned long long)p.ms.total);
	printf(", \"mem_available\": %llu, \"mem_total\": %llu",
	       (unsigned long long)p.ms.mem_available, (unsigned long long)p.ms.mem_total);
	printf(", \"cgroup\": ");
	if (p.have_cg)
		json_string(p.cg.dir);
	else
		printf("null");
	printf(", \"cgroup_version\": %d", p.have_cg ? p.cg.version : 0);
	json_limit("cgroup_limit", p.ms.cg_limit);
	json_limit("cgroup_headroom", p.ms.cg_headroom);
	printf("}, \"pressure\": {\"state\": \"%s\", \"min_available\": \"%s\""
	       ", \"min_available_bytes\": %llu, \"tmpfs_min_free\": \"%s\"}",
	       !vl_threshold_on(&cfg->min_available) ? "off"
	       : !p.known                             ? "unknown"
	       : p.low                                ? "low"
						      : "ok",
	       threshold_text(&cfg->min_available, a, sizeof(a)), (unsigned long long)p.threshold,
	       threshold_text(&cfg->tmpfs_min_free, b, sizeof(b)));
	printf(", \"file_list\": [");
	for (size_t i = 0; i < s->nfiles; i++) {
		const struct file_out *f = &s->files[i];
		int first = 1;

		printf("%s{\"dev\": \"%u:%u\", \"ino\": %llu, \"path\": ", i ? ", " : "",
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
		       ", \"gone\": %s, \"holders\": [",
		       (long long)f->t.id.btime_sec, f->t.id.btime_nsec,
		       (f->t.flags & VL_FF_ANON) ? "true" : "false", f->t.checked_at ? "true" : "false",
		       f->t.gone_since ? "true" : "false");
		for (int h = 0; h < VL_HOLDERS; h++) {
			if (f->t.holders[h].pid <= 0)
				continue;
			printf("%s{\"pid\": %d, \"fd\": %d}", first ? "" : ", ", f->t.holders[h].pid,
			       f->t.holders[h].fd);
			first = 0;
		}
		printf("], \"ranges\": [");
		for (size_t k = 0; k < f->n; k++)
			printf("%s{\"offset\": %llu, \"length\": %llu, \"purged\": %s, \"age\": %u}",
			       k ? ", " : "", (unsigned long long)f->ranges[k].start,
			       (unsigned long long)(f->ranges[k].end - f->ranges[k].start),
			       f->ranges[k].purged ? "true" : "false", f->ranges[k].age);
		printf("]}");
	}
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

static void print_text(const struct snapshot *s, const struct vl_config *cfg, int all_ranges)
{
	char a[32], b[32], c[32], d[40];
	struct pressure p;

	pressure_now(&p);
	printf("region:   %s%s%s\n", cfg->region, s->exists ? "" : " (not created yet)",
	       s->retired ? " (retired: its records are moved to a newer one)"
	       : s->waiting ? " (waiting: older regions still in use are not moved in yet)" : "");
	printf("          (%s)\n", cfg->region_why);
	printf("files:    %u with volatile ranges", s->with_ranges);
	if (s->c.files_used != s->with_ranges) /* ashmem regions keep a record without */
		printf(" (%u records in all)", s->c.files_used);
	printf("\n");
	printf("ranges:   %u (%u purged)\n", s->c.ranges, s->c.ranges_purged);
	printf("volatile: %s bytes (%s) not purged\n", dec128(&s->c.volatile_bytes, d),
	       human128(&s->c.volatile_bytes, a, sizeof(a)));
	printf("purged:   %s bytes (%s) in purged ranges;", dec128(&s->c.purged_bytes, d),
	       human128(&s->c.purged_bytes, a, sizeof(a)));
	printf(" %s bytes in %llu purges so far\n", dec128(&s->c.purged_total, d),
	       (unsigned long long)s->c.purges);
	if (s->c.evicted)
		printf("evicted:  %u records of silent, unreachable files, to make room\n",
		       s->c.evicted);
	if (s->exists)
		printf("capacity: %u ranges, %u files; the region uses %s\n", s->g.node_cap - 1,
		       s->g.file_cap - 1, human(s->region_bytes, a, sizeof(a)));
	if (cfg->has_budget)
		printf("budget:   %llu bytes (%s)\n", (unsigned long long)cfg->budget,
		       human(cfg->budget, a, sizeof(a)));
	else
		printf("budget:   none\n");
	printf("memory:   %s available of %s%s\n", human(p.ms.available, a, sizeof(a)),
	       human(p.ms.total, b, sizeof(b)), p.ms.by_cgroup ? " (the cgroup's headroom)" : "");
	if (p.have_cg)
		printf("cgroup:   %s (v%d), limit %s\n", p.cg.dir, p.cg.version,
		       p.ms.cg_limit == VL_UNLIMITED ? "none" : human(p.ms.cg_limit, c, sizeof(c)));
	if (!vl_threshold_on(&cfg->min_available))
		printf("pressure: off (VOLATILE_MIN_AVAILABLE=0)\n");
	else
		printf("pressure: %s; purging below %s available (%s)\n",
		       !p.known ? "unknown" : p.low ? "LOW" : "ok",
		       threshold_text(&cfg->min_available, a, sizeof(a)),
		       human(p.threshold, b, sizeof(b)));
	if (!vl_threshold_on(&cfg->tmpfs_min_free))
		printf("tmpfs:    off (VOLATILE_TMPFS_MIN_FREE=0)\n");
	else
		printf("tmpfs:    purging a tmpfs's own ranges below %s of it free\n",
		       threshold_text(&cfg->tmpfs_min_free, c, sizeof(c)));
	for (size_t i = 0; i < s->nfiles; i++) {
		const struct file_out *f = &s->files[i];

		if (f->unread) {
			printf("\nfile not read: its lock is held by pid %d, which has not let go in "
			       "%s ms (stopped?)\n", f->holder, STATUS_WAIT_MS);
			continue;
		}
		printf("\nfile %u:%u:%llu ", major(f->t.id.dev), minor(f->t.id.dev),
		       (unsigned long long)f->t.id.ino);
		if (f->ashmem)
			printf("ashmem region \"%s\", %llu bytes", f->ash_name,
			       (unsigned long long)f->ash_size);
		else
			printf("%s", f->t.path_len ? f->t.path
				     : (f->t.flags & VL_FF_ANON) ? "(memfd or unlinked)" : "(no path)");
		printf("%s", f->t.gone_since ? " (gone, to be forgotten)"
			     : f->t.checked_at ? " (unreachable)" : "");
		for (int h = 0; h < VL_HOLDERS; h++)
			if (f->t.holders[h].pid > 0)
				printf(" [pid %d fd %d]", f->t.holders[h].pid, f->t.holders[h].fd);
		printf("\n");
		print_ranges(f, all_ranges);
	}
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
					      { "ranges", no_argument, NULL, 'r' },
					      { "help", no_argument, NULL, 'h' },
					      { 0 } };
	struct snapshot s;
	int c, json = 0, all_ranges = 0;

	optind = 1;
	while ((c = next_opt(argc, argv, "+jrh", opts, help)) != -1) {
		if (c == 'j')
			json = 1;
		else if (c == 'r')
			all_ranges = 1;
	}
	if (optind != argc)
		die("status takes no arguments (try 'volatile status --help')");
	/* a look, not a wait: a lock a live process keeps is reported, not waited for */
	setenv("VOLATILE_LOCK_WAIT", STATUS_WAIT_MS, 1);
	vl_config_reload();
	take_snapshot(&s);
	if (json)
		print_json(&s, vl_config());
	else
		print_text(&s, vl_config(), all_ranges);
	for (size_t i = 0; i < s.nfiles; i++)
		free(s.files[i].ranges);
	free(s.files);
	return fflush(stdout) == 0 ? 0 : EXIT_USAGE;
}
