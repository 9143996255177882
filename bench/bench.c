/* SPDX-License-Identifier: MIT */
/*
 * bench.c - libvolatile's costs as ratios to the raw call, in one run.
 *
 * Run it with the shim preloaded (make bench does): "through the shim"
 * calls fallocate() (interposed), "raw" calls libc's own fallocate found
 * with dlopen("libc.so.6", RTLD_NOLOAD). Each figure is the median of
 * several rounds of many calls, and a figure and the raw call it is
 * compared with are measured in alternating rounds, so that a machine that
 * slows down for a while slows both. Calls are timed in the thread's CPU
 * time (CLOCK_THREAD_CPUTIME_ID, user and system), so that other programs
 * taking the CPUs do not count; two processes' throughput, the daemon's
 * reaction and a MARK that purges a file only a forked child holds
 * (bench/reach.c) are wall-clock times. Ratios compare figures of this run.
 *
 *   bench [--json FILE] [--ranges N] [--files N] [--volatile PATH] [--trials N]
 *         [--only GROUP] [--rt]
 *
 * --volatile names the `volatile` command, for the daemon's reaction time
 * (bench/reaction.c); without it that figure is skipped. --only runs one
 * group: passthrough, purge, pair, procs, counts, files, ranges, million,
 * llmiss, seccomp, ashmem, reach, reaction or system (million: the ranges
 * group's random spot in CPU time and its bytes per range, without the
 * steps; system: the machine's daemon, bench/system.c, root only).
 */
#include "bench.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <volatile.h>

#define ROUNDS 15
#define SPACING 16384 /* ranges of 4 KiB every 16 KiB: the pair's range touches none */

typedef int (*fallocate_fn)(int, int, off_t, off_t);

static fallocate_fn raw_fallocate;
/*
 * fallocate as the program resolves it (the shim's), called through a
 * pointer like libc's: a program pays its PLT jump with or without the
 * shim, so neither side of the passthrough row pays it here.
 */
static fallocate_fn shim_fallocate;
static int64_t (*api_purge)(uint64_t);
static int (*api_stats)(struct volatile_stats *, size_t);

#define MAX_FIGURES 64

static struct figure figures[MAX_FIGURES];
static int nfigures;

/* ---- clock, medians, figures ----------------------------------------------- */

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The CPU time of this thread, user and system: what one process's calls
 * cost, whatever else the machine runs meanwhile (a busy machine makes
 * wall-clock rounds wait for a CPU).
 */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time so far, user and system, from getrusage: of the process or the thread (who) */
static uint64_t rusage_ns(int who)
{
	struct rusage ru;

	if (getrusage(who, &ru) != 0)
		return 0;
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct figure *add_figure(const char *key, const char *label)
{
	struct figure *f = &figures[nfigures < MAX_FIGURES - 1 ? nfigures++ : MAX_FIGURES - 1];

	memset(f, 0, sizeof(*f));
	f->key = key;
	snprintf(f->label, sizeof(f->label), "%s", label);
	return f;
}

int met_if(int ok)
{
	return ok ? MET : MISSED;
}

static void die(const char *what)
{
	fprintf(stderr, "bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ---- the calls measured ------------------------------------------------------- */

struct ctx {
	int fd;
	off_t off;
	uint32_t n;   /* pair_random: ranges in the file */
	uint64_t rng; /* pair_random: xorshift state */
};

static double time_calls(void (*fn)(struct ctx *), struct ctx *c, int n)
{
	uint64_t t0 = cpu_ns();

	for (int i = 0; i < n; i++)
		fn(c);
	return (double)(cpu_ns() - t0) / n;
}

/*
 * ns per call of a(ca) and of b(cb), in rounds that alternate the two
 * (a b, b a, a b...): the medians of `rounds`, and the median of the
 * ratios b/a of each round (what the tables print as the ratio).
 */
static double measure2(void (*a)(struct ctx *), struct ctx *ca, int na, void (*b)(struct ctx *),
		       struct ctx *cb, int nb, int rounds, double *ra, double *rb)
{
	double x[MAX_ROUNDS], y[MAX_ROUNDS], q[MAX_ROUNDS];

	for (int k = 0; k < rounds; k++) {
		if (k % 2 == 0) {
			x[k] = time_calls(a, ca, na);
			y[k] = time_calls(b, cb, nb);
		} else {
			y[k] = time_calls(b, cb, nb);
			x[k] = time_calls(a, ca, na);
		}
		q[k] = y[k] / x[k];
	}
	*ra = median(x, rounds);
	*rb = median(y, rounds);
	return median(q, rounds);
}

/* an allocation of one page already allocated: cheap, and really done */
static void shim_keep(struct ctx *c)
{
	if (shim_fallocate(c->fd, FALLOC_FL_KEEP_SIZE, 0, 4096) != 0)
		abort();
}

static void raw_keep(struct ctx *c)
{
	if (raw_fallocate(c->fd, FALLOC_FL_KEEP_SIZE, 0, 4096) != 0)
		abort();
}

/* one syscall the kernel rejects (shmem refuses this mode) */
static void raw_rejected(struct ctx *c)
{
	if (raw_fallocate(c->fd, FALLOC_FL_ZERO_RANGE, 0, 4096) == 0)
		abort();
}

static void mark(int fd, off_t off, off_t len)
{
	if (fallocate(fd, FALLOC_FL_MARK_VOLATILE, off, len) != 0)
		die("MARK");
}

static void pair_at(int fd, off_t off)
{
	if (fallocate(fd, FALLOC_FL_MARK_VOLATILE, off, 4096) != 0 ||
	    fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, off, 4096) != 0)
		abort();
}

static void pair(struct ctx *c)
{
	pair_at(c->fd, c->off);
}

/*
 * The four system calls a pair makes, each call's two, raw: fallocate's
 * own checks (a punch past the largest size, which fails with EFBIG having
 * run every check of the kernel) and the statx that says which file the
 * fd is. What the pair costs beyond these is the library's own work.
 */
static void pair_syscalls(struct ctx *c)
{
	struct statx sx;

	for (int i = 0; i < 2; i++) {
		if (syscall(SYS_fallocate, c->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			    (off_t)INT64_MAX, (off_t)1) == 0 ||
		    syscall(SYS_statx, c->fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
			    STATX_TYPE | STATX_NLINK | STATX_INO | STATX_BTIME, &sx) != 0)
			abort();
	}
}

/* the pair between two ranges chosen at random: cold caches */
static void pair_random(struct ctx *c)
{
	c->rng ^= c->rng << 13;
	c->rng ^= c->rng >> 7;
	c->rng ^= c->rng << 17;
	pair_at(c->fd, (off_t)(c->rng % c->n) * SPACING + 8192);
}

static int new_memfd(const char *name, off_t size)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, size) != 0)
		die("memfd");
	return fd;
}

/* ---- passthrough ---------------------------------------------------------------- */

static void bench_passthrough(void)
{
	struct ctx c = { .fd = new_memfd("pass", 65536) };
	struct figure *f;
	double raw, shim;

	if (raw_fallocate(c.fd, 0, 0, 4096) != 0)
		die("fallocate");
	/* the same raw call against itself: how far apart two equal things come out */
	f = add_figure("passthrough_control", "raw fallocate(KEEP_SIZE, 4K) vs itself");
	f->ratio = measure2(raw_keep, &c, 5000, raw_keep, &c, 5000, MAX_ROUNDS, &raw, &shim);
	f->value = shim;
	f->unit = "ns";
	f->base = raw;
	f->ratio_of = "the same raw call (the noise of this measure)";
	f->status = NA;
	f = add_figure("passthrough", "passthrough fallocate(KEEP_SIZE, 4K)");
	f->ratio = measure2(raw_keep, &c, 5000, shim_keep, &c, 5000, MAX_ROUNDS, &raw, &shim);
	f->value = shim;
	f->unit = "ns";
	f->base = raw;
	f->ratio_of = "raw fallocate, same call";
	f->target = "<= 1.02x";
	f->status = met_if(f->ratio <= 1.02);
	close(c.fd);
}

/* ---- purge throughput ---------------------------------------------------------------- */

static void fill(int fd, off_t size)
{
	static char buf[1 << 20];

	memset(buf, 0x5a, sizeof(buf));
	for (off_t o = 0; o < size; o += (off_t)sizeof(buf)) {
		size_t n = size - o < (off_t)sizeof(buf) ? (size_t)(size - o) : sizeof(buf);

		if (pwrite(fd, buf, n, o) != (ssize_t)n)
			die("pwrite");
	}
}

/* ns to punch n ranges of rs bytes, step apart, freshly filled */
static double raw_punches(int fd, off_t n, off_t step, off_t rs, off_t span)
{
	uint64_t t0;

	fill(fd, span);
	t0 = cpu_ns();
	for (off_t i = 0; i < n; i++)
		if (raw_fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, i * step, rs) != 0)
			die("punch");
	return (double)(cpu_ns() - t0);
}

/*
 * `total` bytes in ranges of `rs` bytes, a page apart (so that they do not
 * merge), purged oldest first by volatile_purge(), against raw PUNCH_HOLEs
 * of the same ranges. Only the purge, or the punches, are timed.
 */
static void bench_purge(const char *key, off_t rs, off_t total, int rounds)
{
	off_t step = rs + 4096, n = total / rs, span = n * step;
	int fd = new_memfd("purge", span);
	double raw[MAX_ROUNDS], vol[MAX_ROUNDS], q[MAX_ROUNDS];
	struct figure *f;
	struct stat st;
	char label[64];

	for (int k = 0; k < rounds; k++) {
		uint64_t t0;
		int64_t got;
		double before = raw_punches(fd, n, step, rs, span);

		fill(fd, span);
		for (off_t i = 0; i < n; i++)
			mark(fd, i * step, rs);
		t0 = cpu_ns();
		got = api_purge(VOLATILE_PURGE_ALL);
		vol[k] = (double)(cpu_ns() - t0);
		if (got < (int64_t)total) {
			fprintf(stderr, "bench: volatile_purge freed %lld of %lld bytes\n",
				(long long)got, (long long)total);
			exit(1);
		}
		if (fstat(fd, &st) == 0 && (off_t)st.st_blocks * 512 > span - total + 65536) {
			fprintf(stderr, "bench: the purge left %lld bytes allocated\n",
				(long long)st.st_blocks * 512);
			exit(1);
		}
		for (off_t i = 0; i < n; i++)
			if (fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, i * step, rs) != 1)
				die("UNMARK after purge");
		/* the raw punches on both sides of the purge: the machine's drift cancels */
		raw[k] = (before + raw_punches(fd, n, step, rs, span)) / 2;
		q[k] = raw[k] / vol[k];
	}
	snprintf(label, sizeof(label), "purge, %lld ranges of %lld KiB", (long long)n,
		 (long long)rs / 1024);
	f = add_figure(key, label);
	f->unit = "B/s";
	f->value = (double)total / (median(vol, rounds) / 1e9);
	f->base = (double)total / (median(raw, rounds) / 1e9);
	f->ratio = median(q, rounds);
	f->ratio_of = "raw PUNCH_HOLE of the same ranges";
	f->target = ">= 0.95x";
	f->status = met_if(f->ratio >= 0.95);
	close(fd);
}

/* ---- the pair, at 1 range, N files, N ranges -------------------------------------------- */

/* the pair's cost at one range, and as a ratio to a rejected raw call beside it */
static double pair1_ns, pair1_ratio;

struct point {
	double count, pair_ns, rej_ns, ratio; /* ratio: pair over rejected, per round */
};

static struct point by_files[8], by_ranges[12];
static int nby_files, nby_ranges;

static void measure_pair(struct ctx *c, void (*fn)(struct ctx *), int rounds, int n,
			 struct point *p)
{
	p->ratio = measure2(raw_rejected, c, n * 4, fn, c, n, rounds, &p->rej_ns, &p->pair_ns);
}

/* pair at N, relative to the pair at 1, each normalised by the rejected call beside it */
static void scaled_figure(const char *key, const char *label, const struct point *p,
			  const char *note)
{
	struct figure *f = add_figure(key, label);

	f->value = p->pair_ns;
	f->unit = "ns";
	f->base = pair1_ns;
	f->ratio = p->ratio / pair1_ratio;
	f->ratio_of = "the pair at 1 range (each over a rejected raw call beside it)";
	f->target = "<= 1.5x";
	f->status = met_if(f->ratio <= 1.5);
	if (note)
		snprintf(f->note, sizeof(f->note), "%s", note);
}

/* A figure of p against the rejected raw call measured beside it */
static struct figure *rejected_figure(const char *key, const char *label, const struct point *p)
{
	struct figure *f = add_figure(key, label);

	f->value = p->pair_ns;
	f->unit = "ns";
	f->base = p->rej_ns;
	f->ratio = p->ratio;
	f->ratio_of = "raw fallocate rejected by shmem, same memfd";
	return f;
}

static void bench_pair(void)
{
	struct ctx c = { .fd = new_memfd("one", 1 << 20), .off = 8192 };
	struct point p;
	struct figure *f;

	mark(c.fd, 0, 4096); /* the file's one range: its record stays */
	measure_pair(&c, pair, ROUNDS, 25000, &p);
	pair1_ns = p.pair_ns;
	pair1_ratio = p.ratio;
	f = rejected_figure("pair", "MARK+UNMARK pair, 1 range in the file", &p);
	f->target = "<= 6x";
	f->status = met_if(f->ratio <= 6);
	p.count = 1;
	by_files[nby_files++] = p;
	by_ranges[nby_ranges++] = p;

	measure_pair(&c, pair_syscalls, ROUNDS, 25000, &p);
	f = rejected_figure("pair_syscalls", "the pair's 4 system calls alone, raw", &p);
	snprintf(f->note, sizeof(f->note), "the floor of the pair's ratio: the library's own "
					   "work is the pair less these");
	close(c.fd);
}

static void bench_files(int nfiles)
{
	static const int at[] = { 10, 100, 1000, 10000, 100000 };
	int *fds = calloc((size_t)nfiles, sizeof(int)), have = 0;
	char label[64];

	if (fds == NULL)
		die("calloc");
	for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
		int want = at[k] < nfiles ? at[k] : nfiles;
		struct ctx c;
		struct point p;

		if (want <= have)
			break;
		while (have < want) {
			fds[have] = new_memfd("f", 65536);
			mark(fds[have], 0, 4096);
			have++;
		}
		c.fd = fds[have - 1];
		c.off = 8192;
		measure_pair(&c, pair, have == nfiles ? ROUNDS : 9, have == nfiles ? 25000 : 5000,
			     &p);
		p.count = have;
		by_files[nby_files++] = p;
	}
	snprintf(label, sizeof(label), "MARK+UNMARK pair, %d files with ranges", have);
	scaled_figure("pair_files", label, &by_files[nby_files - 1], NULL);
	/* the files stay open, with their ranges, for what follows */
}

static uint64_t region_blocks(void)
{
	const char *region = getenv("VOLATILE_REGION");
	struct stat st;

	return region && stat(region, &st) == 0 ? (uint64_t)st.st_blocks * 512 : 0;
}

/* CPU time of this thread, from getrusage (the other load of a shared machine does not count) */
static double thread_rusage_calls(void (*fn)(struct ctx *), struct ctx *c, int n)
{
	uint64_t t0 = rusage_ns(RUSAGE_THREAD);

	for (int i = 0; i < n; i++)
		fn(c);
	return (double)(rusage_ns(RUSAGE_THREAD) - t0) / n;
}

/*
 * The pair at a random spot among the `big` ranges of c's file (uniform
 * over all of them) against the pair on a file of one range, in rounds
 * that alternate the two, CPU time from getrusage.
 */
static void bench_random_spot(struct ctx *c, int big)
{
	const int rounds = 15, n = 10000;
	struct ctx one = { .fd = new_memfd("one", 1 << 20), .off = 8192 };
	double x[MAX_ROUNDS], y[MAX_ROUNDS], q[MAX_ROUNDS];
	struct figure *f;
	char label[64];

	mark(one.fd, 0, 4096);
	c->n = (uint32_t)big;
	c->rng = 0x2545f4914f6cdd1dull;
	for (int k = 0; k < rounds; k++) {
		if (k % 2 == 0) {
			x[k] = thread_rusage_calls(pair, &one, n);
			y[k] = thread_rusage_calls(pair_random, c, n);
		} else {
			y[k] = thread_rusage_calls(pair_random, c, n);
			x[k] = thread_rusage_calls(pair, &one, n);
		}
		q[k] = y[k] / x[k];
	}
	snprintf(label, sizeof(label), "CPU per pair, %d ranges, random spot", big);
	f = add_figure("pair_random_cpu", label);
	f->unit = "ns";
	f->value = median(y, rounds);
	f->base = median(x, rounds);
	f->ratio = median(q, rounds);
	f->ratio_of = "the pair on a file of 1 range (getrusage, alternate rounds)";
	f->target = "<= 1.8x";
	f->status = met_if(f->ratio <= 1.8);
	snprintf(f->note, sizeof(f->note), "%d random pairs in %d rounds, spots uniform over "
					   "all %d ranges", rounds * n, rounds, big);
	close(one.fd);
}

/*
 * A file of `big` ranges, built up step by step; with steps, the pair at
 * each step (a hot spot, and a random one at the end) against the pair at
 * 1 range; then the pair at a random spot in CPU time, and the region's
 * bytes per range.
 */
static void bench_ranges(int big, int steps)
{
	struct ctx c = { .fd = new_memfd("big", (off_t)big * SPACING + 65536) };
	struct volatile_stats s0, s1;
	uint64_t b0, b1;
	struct point p;
	struct figure *f;
	char label[64];
	int have = 0;

	if (api_stats(&s0, sizeof(s0)) != 0)
		die("volatile_stats");
	b0 = region_blocks();
	for (int want = 10; have < big; want *= 10) {
		if (want > big)
			want = big;
		for (; have < want; have++)
			mark(c.fd, (off_t)have * SPACING, 4096);
		if (!steps)
			continue;
		c.off = (off_t)(have / 2) * SPACING + 8192; /* between two ranges */
		measure_pair(&c, pair, have == big ? ROUNDS : 9, have == big ? 25000 : 5000, &p);
		p.count = have;
		by_ranges[nby_ranges++] = p;
	}
	if (steps) {
		snprintf(label, sizeof(label), "MARK+UNMARK pair, %d ranges in the file", big);
		scaled_figure("pair_ranges", label, &p, "the same spot each time: hot caches");
		c.n = (uint32_t)big;
		c.rng = 0x9e3779b97f4a7c15ull;
		measure_pair(&c, pair_random, ROUNDS, 10000, &p);
		snprintf(label, sizeof(label), "MARK+UNMARK pair, %d ranges, random spot", big);
		scaled_figure("pair_ranges_random", label, &p,
			      "a random spot of the file each time: cold caches");
	}
	bench_random_spot(&c, big);

	if (api_stats(&s1, sizeof(s1)) != 0)
		die("volatile_stats");
	b1 = region_blocks();
	f = add_figure("region_bytes_per_range", "region bytes per range");
	snprintf(f->label, sizeof(f->label), "region bytes per range, %llu ranges",
		 (unsigned long long)s1.ranges);
	f->unit = "bytes";
	f->value = (double)(b1 - b0) / (double)(s1.ranges - s0.ranges);
	f->target = "<= 64";
	/*
	 * The region makes its pages ready 64 KiB ahead of use (region.c), so
	 * a difference of two page counts is exact to 64 KiB either way.
	 */
	f->status = met_if(f->value <= 64.0 + 65536.0 / (double)(s1.ranges - s0.ranges));
	snprintf(f->note, sizeof(f->note),
		 "each range added, to within the 64 KiB made ready ahead (%.2f bytes per "
		 "range here); the whole file: %.1f bytes per range (%.1f MiB)",
		 65536.0 / (double)(s1.ranges - s0.ranges), (double)b1 / (double)s1.ranges,
		 (double)b1 / 1048576.0);
	close(c.fd);
}

/* ---- many processes ------------------------------------------------------------------ */

/*
 * --rt: each process of the procs group on a CPU of its own (process i on
 * CPU i modulo the CPUs) and SCHED_FIFO for its loop, so that processes
 * really run at once on a machine that other work keeps busy; after each
 * run the bench sleeps as long as it took, so that real-time work stays
 * under half the time (the kernel throttles it past 95%). Root only.
 */
static int procs_rt;

static int run_at_once(long i)
{
	struct sched_param sp = { .sched_priority = 1 };
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET((int)(i % sysconf(_SC_NPROCESSORS_ONLN)), &set);
	return sched_setaffinity(0, sizeof(set), &set) == 0 &&
	       sched_setscheduler(0, SCHED_FIFO, &sp) == 0;
}

/* what one forked process reports: its loop's wall-clock start and end, its CPU time */
struct proc_report {
	uint64_t start, end, cpu;
};

/*
 * The child of run_procs: n pairs (or raw rejected calls) once told to go,
 * by the end of file on go: the parent's close wakes every child at once.
 * A byte for each would not: a pipe's write wakes one reader, which wakes
 * the next once it has read, and under --rt a child woken behind another
 * on its CPU reads only when that one's loop is done (measured: two
 * processes on two files ran one after the other, "1.01 of them at once",
 * in some runs, eight 1.57 of two CPUs).
 */
static void proc_child(int fd, off_t off, int raw, int n, int ready, int go, int res)
{
	struct proc_report r;
	uint64_t cpu0;
	char b;

	if (procs_rt && !run_at_once(off / SPACING))
		_exit(3);
	if (write(ready, "r", 1) != 1 || read(go, &b, 1) != 0)
		_exit(1);
	cpu0 = rusage_ns(RUSAGE_SELF);
	r.start = now_ns();
	for (int i = 0; i < n; i++) {
		if (raw) {
			struct ctx c = { .fd = fd };

			raw_rejected(&c);
		} else {
			pair_at(fd, off);
		}
	}
	r.end = now_ns();
	r.cpu = rusage_ns(RUSAGE_SELF) - cpu0;
	_exit(write(res, &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
}

/*
 * Pairs per second of `procs` processes doing n pairs each, started
 * together (wall clock, first start to last end); raw: n rejected raw calls
 * each instead, the machine's own scaling. *cpu_per_call: the processes'
 * CPU time per call (getrusage, each its own), their mean; *at_once: how
 * many of them ran at once on average (their CPU time over the wall time):
 * processes that took turns on a busy machine did not contend.
 */
static double run_procs(int procs, int same_file, int raw, int n, double *cpu_per_call,
			double *at_once)
{
	int ready[2], go[2], res[2], shared = -1;
	uint64_t first = UINT64_MAX, last = 0, cpu = 0;

	if (pipe(ready) != 0 || pipe(go) != 0 || pipe(res) != 0)
		die("pipe");
	if (same_file) {
		shared = new_memfd("shared", 1 << 20);
		mark(shared, 0, 4096);
	}
	for (int p = 0; p < procs; p++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			int fd = shared;

			if (fd < 0) {
				fd = new_memfd("own", 1 << 20);
				mark(fd, 0, 4096);
			}
			close(go[1]); /* the parent's close is then the end of file */
			proc_child(fd, 8192 + (off_t)p * SPACING, raw, n, ready[1], go[0], res[1]);
		}
	}
	for (int p = 0; p < procs; p++) {
		char b;

		if (read(ready[0], &b, 1) != 1) {
			fprintf(stderr, "bench: a process of the procs group did not start%s\n",
				procs_rt ? " (--rt: SCHED_FIFO and CPU affinity need root)" : "");
			exit(1);
		}
	}
	close(go[1]);
	for (int p = 0; p < procs; p++) {
		struct proc_report r;

		if (read(res[0], &r, sizeof(r)) != (ssize_t)sizeof(r))
			die("child");
		first = r.start < first ? r.start : first;
		last = r.end > last ? r.end : last;
		cpu += r.cpu;
	}
	while (wait(NULL) > 0)
		;
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(res[0]);
	close(res[1]);
	if (shared >= 0)
		close(shared);
	if (procs_rt) {
		struct timespec rest = { .tv_sec = (time_t)((last - first) / 1000000000u),
					 .tv_nsec = (long)((last - first) % 1000000000u) };

		nanosleep(&rest, NULL);
	}
	if (cpu_per_call)
		*cpu_per_call = (double)cpu / ((double)procs * n);
	if (at_once)
		*at_once = (double)cpu / (double)(last - first);
	return (double)procs * n / ((double)(last - first) / 1e9);
}

/* one round's figures of bench_procs */
struct procs_round {
	double one, two, same, eight;             /* pairs/s */
	double raw1, raw2, raw8;                  /* rejected raw calls/s */
	double cpu1, cpu2, cpus, cpu8;            /* CPU ns per pair */
	double at2, ats, at8;                     /* processes running at once */
};

static void procs_round(struct procs_round *r, int n)
{
	double a, b;

	/* one process on both sides of the others: the machine's drift cancels */
	r->raw1 = run_procs(1, 0, 1, 5 * n, NULL, NULL) / 2;
	r->one = run_procs(1, 0, 0, n, &a, NULL) / 2;
	r->two = run_procs(2, 0, 0, n, &r->cpu2, &r->at2);
	r->same = run_procs(2, 1, 0, n, &r->cpus, &r->ats);
	r->eight = run_procs(8, 0, 0, n / 4, &r->cpu8, &r->at8);
	r->raw8 = run_procs(8, 0, 1, 5 * n / 4, NULL, NULL);
	r->raw2 = run_procs(2, 0, 1, 5 * n, NULL, NULL);
	r->one += run_procs(1, 0, 0, n, &b, NULL) / 2;
	r->raw1 += run_procs(1, 0, 1, 5 * n, NULL, NULL) / 2;
	r->cpu1 = (a + b) / 2;
}

/* the median over rounds of the field at `at` of each round, or of its ratio to `to` */
static double round_median(const struct procs_round *r, int rounds, size_t at, ssize_t to)
{
	double v[MAX_ROUNDS];

	for (int k = 0; k < rounds; k++) {
		const char *base = (const char *)&r[k];

		v[k] = *(const double *)(base + at);
		if (to >= 0)
			v[k] /= *(const double *)(base + to);
	}
	return median(v, rounds);
}

#define MED(field) round_median(r, rounds, offsetof(struct procs_round, field), -1)
#define RATIO(field, of)                                                                  \
	round_median(r, rounds, offsetof(struct procs_round, field),                      \
		     (ssize_t)offsetof(struct procs_round, of))

/* CPU ns per pair of several processes, against one process's, from getrusage */
static void cpu_figure(const char *key, const char *label, double value, double base,
		       double ratio, double at_once, const char *target)
{
	struct figure *f = add_figure(key, label);

	f->unit = "ns";
	f->value = value;
	f->base = base;
	f->ratio = ratio;
	f->ratio_of = "1 process's CPU per pair (getrusage)";
	f->target = target;
	f->status = target ? met_if(ratio <= 1.1) : NA;
	snprintf(f->note, sizeof(f->note),
		 "%.2f of them ran at once on average (CPU time / wall time; 2 CPUs, shared): "
		 "below 2, they contended less than on an idle machine", at_once);
}

/*
 * Wall throughput of several processes against one: the target holds only
 * where the machine itself (raw rejected calls, same rounds) scales to
 * 1.9x; where it does not, there is no verdict, and the note says why.
 */
static void wall_figure(const char *key, const char *label, double value, double base,
			double ratio, double machine)
{
	struct figure *f = add_figure(key, label);

	f->unit = "pairs/s";
	f->value = value;
	f->base = base;
	f->ratio = ratio;
	f->ratio_of = "1 process's throughput";
	f->target = ">= 1.8x";
	if (machine >= 1.9) {
		f->status = met_if(ratio >= 1.8);
		snprintf(f->note, sizeof(f->note),
			 "the machine itself gave %.2fx in these rounds (raw calls)", machine);
	} else {
		f->status = NA;
		snprintf(f->note, sizeof(f->note),
			 "no verdict: the machine itself gave %.2fx (< 1.9x) in these rounds "
			 "(raw calls; shared CPUs)", machine);
	}
}

static void bench_procs(void)
{
	static struct procs_round r[MAX_ROUNDS];
	const int rounds = 11, n = 60000;
	double cpu1;
	struct figure *f;

	for (int k = 0; k < rounds; k++)
		procs_round(&r[k], n);
	cpu1 = MED(cpu1);
	f = add_figure("procs_cpu_one", "CPU per pair, 1 process (getrusage)");
	f->unit = "ns";
	f->value = cpu1;
	f->status = NA;
	snprintf(f->note, sizeof(f->note), "%d pairs a process, median of %d rounds%s", n, rounds,
		 procs_rt ? "; --rt: each process pinned to a CPU, SCHED_FIFO" : "");
	cpu_figure("procs_cpu_two_files", "CPU per pair, 2 processes, 2 files", MED(cpu2), cpu1,
		   RATIO(cpu2, cpu1), MED(at2), "<= 1.1x");
	cpu_figure("procs_cpu_eight_files", "CPU per pair, 8 processes, 8 files", MED(cpu8), cpu1,
		   RATIO(cpu8, cpu1), MED(at8), NULL);
	cpu_figure("procs_cpu_same_file", "CPU per pair, 2 processes, 1 file", MED(cpus), cpu1,
		   RATIO(cpus, cpu1), MED(ats), NULL);
	f = add_figure("procs_raw", "2 processes, raw rejected calls (the machine)");
	f->unit = "calls/s";
	f->value = MED(raw2);
	f->base = MED(raw1);
	f->ratio = RATIO(raw2, raw1);
	f->ratio_of = "1 process's throughput";
	f->status = NA;
	f = add_figure("procs_raw_eight", "8 processes, raw rejected calls (the machine)");
	f->unit = "calls/s";
	f->value = MED(raw8);
	f->base = MED(raw1);
	f->ratio = RATIO(raw8, raw1);
	f->ratio_of = "1 process's throughput";
	f->status = NA;
	wall_figure("procs_two_files", "2 processes marking, 2 files", MED(two), MED(one),
		    RATIO(two, one), RATIO(raw2, raw1));
	wall_figure("procs_eight_files", "8 processes marking, 8 files", MED(eight), MED(one),
		    RATIO(eight, one), RATIO(raw8, raw1));
	f = add_figure("procs_same_file", "2 processes marking, 1 file");
	f->unit = "pairs/s";
	f->value = MED(same);
	f->base = MED(one);
	f->ratio = RATIO(same, one);
	f->ratio_of = "1 process's throughput";
	f->status = NA;
}

#undef MED
#undef RATIO

/* ---- output ---------------------------------------------------------------------------- */

static const char *status_text(enum status s)
{
	return s == MET ? "met" : s == MISSED ? "MISSED" : s == SKIPPED ? "skipped" : "";
}

static void human(char *buf, size_t size, double v, const char *unit)
{
	if (strcmp(unit, "B/s") == 0)
		snprintf(buf, size, "%.2f GB/s", v / 1e9);
	else if (strcmp(unit, "pairs/s") == 0 || strcmp(unit, "calls/s") == 0)
		snprintf(buf, size, "%.0f %s", v, unit);
	else if (strcmp(unit, "ns") == 0)
		snprintf(buf, size, "%.0f ns", v);
	else if (strcmp(unit, "ms") == 0 || (strcmp(unit, "us") == 0 && v >= 10000))
		snprintf(buf, size, "%.1f ms", strcmp(unit, "us") == 0 ? v / 1e3 : v);
	else if (strcmp(unit, "bytes") == 0)
		snprintf(buf, size, "%.2f bytes", v);
	else
		snprintf(buf, size, "%.1f %s", v, unit);
}

static void print_table(FILE *out, const char *machine)
{
	fprintf(out, "libvolatile bench: %s; medians of 7 to 101 rounds\n", machine);
	fprintf(out, "%-46s %15s %15s %8s %9s  %s\n", "figure", "value", "compared with", "ratio",
		"target", "status");
	for (int i = 0; i < nfigures; i++) {
		const struct figure *f = &figures[i];
		char v[32] = "", b[32] = "", r[16] = "";

		if (f->status == SKIPPED) {
			fprintf(out, "%-46s %s\n", f->label, f->note);
			continue;
		}
		human(v, sizeof(v), f->value, f->unit);
		if (f->base > 0)
			human(b, sizeof(b), f->base, f->unit);
		if (f->ratio > 0)
			snprintf(r, sizeof(r), "%.3fx", f->ratio);
		fprintf(out, "%-46s %15s %15s %8s %9s  %s\n", f->label, v, b, r,
			f->target ? f->target : "", status_text(f->status));
	}
	fprintf(out, "(ratio: the median of each round's value / compared with; for the pair at\n"
		     " N ranges or files, each round's pair is first divided by a rejected raw\n"
		     " fallocate measured beside it, and that by the same at 1 range)\n");
}

static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, out);
	}
	fputc('"', out);
}

static void json_points(FILE *out, const char *name, const struct point *p, int n)
{
	fprintf(out, "  \"%s\": [", name);
	for (int i = 0; i < n; i++)
		fprintf(out,
			"%s{\"count\": %.0f, \"pair_ns\": %.1f, \"rejected_ns\": %.1f, "
			"\"ratio\": %.3f}",
			i ? ",\n    " : "\n    ", p[i].count, p[i].pair_ns, p[i].rej_ns, p[i].ratio);
	fprintf(out, "]");
}

static void print_json(FILE *out, const char *machine)
{
	fprintf(out, "{\n  \"machine\": ");
	json_string(out, machine);
	fprintf(out, ",\n  \"rounds\": %d,\n  \"figures\": [\n", ROUNDS);
	for (int i = 0; i < nfigures; i++) {
		const struct figure *f = &figures[i];

		fprintf(out, "    {\"key\": \"%s\", \"label\": ", f->key);
		json_string(out, f->label);
		if (f->status != SKIPPED) {
			fprintf(out, ", \"value\": %.3f, \"unit\": \"%s\"", f->value, f->unit);
			if (f->base > 0)
				fprintf(out, ", \"base\": %.3f", f->base);
			if (f->ratio > 0) {
				fprintf(out, ", \"ratio\": %.4f, \"ratio_of\": ", f->ratio);
				json_string(out, f->ratio_of ? f->ratio_of : "");
			}
		}
		if (f->target) {
			fprintf(out, ", \"target\": ");
			json_string(out, f->target);
		}
		fprintf(out, ", \"status\": \"%s\"",
			f->status == MET ? "met" : f->status == MISSED ? "missed" :
			f->status == SKIPPED ? "skipped" : "none");
		if (f->note[0]) {
			fprintf(out, ", \"note\": ");
			json_string(out, f->note);
		}
		fprintf(out, "}%s\n", i + 1 < nfigures ? "," : "");
	}
	fprintf(out, "  ],\n");
	json_points(out, "pair_by_ranges_in_one_file", by_ranges, nby_ranges);
	fprintf(out, ",\n");
	json_points(out, "pair_by_files", by_files, nby_files);
	fprintf(out, "\n}\n");
}

/* ---- main ------------------------------------------------------------------------------ */

static double loadavg(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "re");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

static int files_possible(int want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)want + 256) {
		fprintf(stderr, "bench: only %llu fds: fewer files\n",
			(unsigned long long)rl.rlim_cur);
		return rl.rlim_cur > 512 ? (int)rl.rlim_cur - 256 : 256;
	}
	return want;
}

/* --only GROUP: one group of figures, for working on it */
static int wanted(const char *only, const char *group)
{
	return only == NULL || strcmp(only, group) == 0;
}

int main(int argc, char **argv)
{
	int big = 1000000, nfiles = 10000, trials = 7;
	const char *json = NULL, *volatile_bin = NULL, *only = NULL;
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	char machine[512];
	struct utsname u;
	uint64_t t0 = now_ns();

	if (argc > 1 && strcmp(argv[1], "--holder") == 0)
		return holder_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "--sys-holder") == 0)
		return sys_holder_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "--marker") == 0)
		return marker_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "--pairs") == 0)
		return pairs_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "--supervised") == 0)
		return supervised_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "--threads") == 0)
		return threads_main(argc - 1, argv + 1);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (v && strcmp(a, "--json") == 0)
			json = v;
		else if (v && strcmp(a, "--ranges") == 0)
			big = atoi(v);
		else if (v && strcmp(a, "--files") == 0)
			nfiles = atoi(v);
		else if (v && strcmp(a, "--volatile") == 0)
			volatile_bin = v;
		else if (v && strcmp(a, "--trials") == 0)
			trials = atoi(v);
		else if (v && strcmp(a, "--only") == 0)
			only = v;
		else if (strcmp(a, "--rt") == 0) {
			procs_rt = 1;
			continue;
		} else {
			fprintf(stderr, "usage: bench [--json FILE] [--ranges N] [--files N] "
					"[--volatile PATH] [--trials N] [--only GROUP] [--rt]\n");
			return 2;
		}
		i++;
	}
	if (big < 10 || nfiles < 10 || trials < 1 || trials > MAX_ROUNDS) {
		fprintf(stderr, "bench: --ranges and --files at least 10, --trials 1 to %d\n",
			MAX_ROUNDS);
		return 2;
	}
	raw_fallocate = libc ? (fallocate_fn)dlsym(libc, "fallocate") : NULL;
	shim_fallocate = (fallocate_fn)dlsym(RTLD_DEFAULT, "fallocate");
	api_purge = (int64_t(*)(uint64_t))dlsym(RTLD_DEFAULT, "volatile_purge");
	api_stats = (int (*)(struct volatile_stats *, size_t))dlsym(RTLD_DEFAULT, "volatile_stats");
	if (raw_fallocate == NULL || raw_fallocate == fallocate || shim_fallocate != fallocate ||
	    !api_purge || !api_stats) {
		fprintf(stderr, "bench: run with libvolatile.so preloaded (make bench)\n");
		return 1;
	}
	uname(&u);
	snprintf(machine, sizeof(machine), "%ld CPUs, Linux %s %s, load average %.1f at start",
		 sysconf(_SC_NPROCESSORS_ONLN), u.release, u.machine, loadavg());
	nfiles = files_possible(nfiles);

	/* each step prints where it is: the whole run takes a while */
	if (wanted(only, "passthrough")) {
		fprintf(stderr, "bench: passthrough\n");
		bench_passthrough();
	}
	if (wanted(only, "purge")) {
		fprintf(stderr, "bench: purge throughput\n");
		bench_purge("purge_1m", 1 << 20, 64 << 20, 9);
		bench_purge("purge_64k", 64 << 10, 64 << 20, 9);
	}
	/* the pair at one range is what the pair at many files or ranges is compared with */
	if (wanted(only, "pair") || wanted(only, "files") || wanted(only, "ranges")) {
		fprintf(stderr, "bench: MARK+UNMARK pair\n");
		bench_pair();
	}
	if (wanted(only, "procs")) {
		fprintf(stderr, "bench: one, two and eight processes (CPU and wall clock)\n");
		bench_procs();
	}
	if (wanted(only, "counts")) {
		fprintf(stderr, "bench: instructions per pair (callgrind)\n");
		bench_counts();
	}
	if (wanted(only, "files")) {
		fprintf(stderr, "bench: %d files\n", nfiles);
		bench_files(nfiles);
	}
	if (wanted(only, "ranges") || (only && strcmp(only, "million") == 0)) {
		fprintf(stderr, "bench: %d ranges in one file\n", big);
		bench_ranges(big, wanted(only, "ranges"));
	}
	if (wanted(only, "llmiss")) {
		fprintf(stderr, "bench: last-level misses per pair among %d ranges (callgrind)\n",
			big);
		bench_llmiss(big);
	}
	if (wanted(only, "seccomp")) {
		fprintf(stderr, "bench: the pair through volatile run's supervisor\n");
		bench_seccomp(volatile_bin);
	}
	if (wanted(only, "ashmem")) {
		fprintf(stderr, "bench: ashmem region life\n");
		bench_ashmem();
	}
	if (wanted(only, "reach")) {
		fprintf(stderr, "bench: a MARK purging a file only a child holds\n");
		bench_mark_reach();
	}
	if (wanted(only, "reaction")) {
		fprintf(stderr, "bench: the daemon's reaction\n");
		bench_reaction(volatile_bin, trials);
	}
	if (wanted(only, "system")) {
		fprintf(stderr, "bench: the machine's daemon among 100 users' regions\n");
		bench_system(volatile_bin, trials);
	}

	print_table(stdout, machine);
	printf("(%.0f s)\n", (double)(now_ns() - t0) / 1e9);
	if (json) {
		FILE *out = strcmp(json, "-") == 0 ? stdout : fopen(json, "w");

		if (out == NULL)
			die(json);
		print_json(out, machine);
		if (out != stdout && fclose(out) != 0)
			die(json);
		if (out != stdout)
			printf("JSON: %s\n", json);
	}
	return 0;
}
