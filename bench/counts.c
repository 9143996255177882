/* SPDX-License-Identifier: MIT */
/*
 * counts.c - instructions per MARK+UNMARK pair, as callgrind counts them:
 * a figure that does not depend on the machine or its load (the table's
 * times do). The bench runs itself under valgrind (bench --pairs N LAYOUT
 * [RANGES]), N pairs and then 2N, each in a region of its own; the
 * difference over N is what one pair costs in user space, library and libc
 * together, with what the process does once taken out. Only the loop of
 * pairs is counted (callgrind's --toggle-collect): attaching the region
 * scans /proc, whose cost follows the machine's processes and differed
 * between the two runs by up to 500 instructions a pair.
 * The pressure rules are off in those runs: they look at memory every
 * 250 ms of the clock, and valgrind's slowness would make that a share
 * of each pair that depends on the machine. Skipped when valgrind is not
 * installed.
 *
 * Four layouts of the file around the pair (group "counts"), and the pair
 * at a random spot among 1,000,000 ranges with callgrind's cache
 * simulation (group "llmiss"): its last-level misses per pair, what the
 * random pair's time is made of on a machine that gives no hardware
 * counters. Building a million ranges under full instrumentation would take
 * minutes, so that run starts uninstrumented and the loop turns the
 * instrumentation on (a client request of valgrind/callgrind.h).
 */
#include "bench.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND_H 1
#endif
#endif

#ifndef FALLOC_FL_MARK_VOLATILE
#define FALLOC_FL_MARK_VOLATILE 0x10000000
#define FALLOC_FL_UNMARK_VOLATILE 0x20000000
#endif

#define GAP 16384 /* ranges of 4 KiB every 16 KiB: the pair between two touches neither */

/* The pairs alone: what callgrind counts (its name is in collected()'s command). */
static __attribute__((noinline, noclone)) int pairs_loop(int fd, off_t at, int n)
{
	for (int i = 0; i < n; i++)
		if (fallocate(fd, FALLOC_FL_MARK_VOLATILE, at, 4096) != 0 ||
		    fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, at, 4096) != 0)
			return 1;
	return 0;
}

/* The pairs between two of `ranges` ranges chosen at random, uniform over all of them. */
static __attribute__((noinline, noclone)) int random_loop(int fd, uint32_t ranges, int n)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull;

	for (int i = 0; i < n; i++) {
		off_t at;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		at = (off_t)(rng % ranges) * GAP + 8192;
		if (fallocate(fd, FALLOC_FL_MARK_VOLATILE, at, 4096) != 0 ||
		    fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, at, 4096) != 0)
			return 1;
	}
	return 0;
}

static int mark_every(int fd, int count, off_t step)
{
	for (int i = 0; i < count; i++)
		if (fallocate(fd, FALLOC_FL_MARK_VOLATILE, (off_t)i * step, 4096) != 0)
			return 1;
	return 0;
}

/*
 * bench --pairs N LAYOUT [RANGES]: N pairs on a memfd laid out as
 *   only      the pair's range is the file's only one
 *   other     one other range, 1 MiB away (its record stays)
 *   apart     RANGES ranges 16 KiB apart, the pair between the middle two, touching neither
 *   touching  RANGES ranges on every other page, the pair on the middle gap: each MARK
 *             merges three ranges and its UNMARK splits them again
 *   random    RANGES ranges 16 KiB apart, each pair between two chosen at random
 */
int pairs_main(int argc, char **argv)
{
	const char *layout;
	int n, ranges, fd;

	if (argc < 3 || argc > 4)
		return 2;
	n = atoi(argv[1]);
	layout = argv[2];
	ranges = argc == 4 ? atoi(argv[3]) : 0;
	fd = memfd_create("pairs", 0);
	if (fd < 0 || ftruncate(fd, (off_t)1 << 36) != 0)
		return 1;
	if (strcmp(layout, "only") == 0)
		return pairs_loop(fd, 0, n);
	if (strcmp(layout, "other") == 0)
		return fallocate(fd, FALLOC_FL_MARK_VOLATILE, 1 << 20, 4096) != 0 ||
		       pairs_loop(fd, 0, n);
	if (ranges < 2)
		return 2;
	if (strcmp(layout, "apart") == 0)
		return mark_every(fd, ranges, GAP) || pairs_loop(fd, (off_t)(ranges / 2) * GAP + 8192, n);
	if (strcmp(layout, "touching") == 0)
		return mark_every(fd, ranges, 8192) ||
		       pairs_loop(fd, (off_t)(ranges / 2 - 1) * 8192 + 4096, n);
	if (strcmp(layout, "random") == 0) {
		if (mark_every(fd, ranges, GAP))
			return 1;
#ifdef HAVE_CALLGRIND_H
		CALLGRIND_START_INSTRUMENTATION;
#endif
		return random_loop(fd, (uint32_t)ranges, n);
	}
	return 2;
}

static int have_valgrind(void)
{
	return system("valgrind --version >/dev/null 2>&1") == 0;
}

/* the digits of s with its thousands' commas dropped, as a number */
static double number_at(const char *s)
{
	char digits[64];
	size_t d = 0;

	for (; *s == ' '; s++)
		;
	for (; *s && *s != '\n' && *s != ' ' && d + 1 < sizeof(digits); s++)
		if (*s != ',')
			digits[d++] = *s;
	digits[d] = '\0';
	return d ? strtod(digits, NULL) : -1;
}

/*
 * The caches simulated: fixed, so that the figure is the same on every
 * machine, and of a common size (32 KiB first levels, 8 MiB last level).
 * Callgrind would otherwise copy this machine's, and this VM says its
 * last level is 480 MiB: a million ranges' 48 MiB of nodes would fit in it
 * and only first touches would miss.
 */
#define SIMULATED_CACHES "--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"

/*
 * What callgrind counted for `bench --pairs n layout ranges`: the
 * instructions (ir), and with cache_sim the last-level misses (ll, data
 * and instructions); -1 on failure.
 */
static int collected(int n, const char *layout, int ranges, int cache_sim, double *ir, double *ll)
{
	char cmd[768], line[256];
	const char *region = getenv("VOLATILE_REGION");
	FILE *p;

	if (region == NULL)
		region = "/dev/shm/libvolatile-bench";
	snprintf(cmd, sizeof(cmd),
		 "VOLATILE_REGION=%s.cg VOLATILE_MIN_AVAILABLE=0 VOLATILE_TMPFS_MIN_FREE=0 "
		 "valgrind --tool=callgrind --callgrind-out-file=/dev/null "
		 "--toggle-collect=%s %s "
		 "/proc/%d/exe --pairs %d %s %d 2>&1; rm -f %s.cg %s.cg.daemon",
		 region, cache_sim ? "random_loop" : "pairs_loop",
		 cache_sim ? "--cache-sim=yes --instr-atstart=no " SIMULATED_CACHES : "",
		 (int)getpid(), n, layout,
		 ranges, region, region);
	*ir = *ll = -1;
	p = popen(cmd, "r");
	if (p == NULL)
		return -1;
	while (fgets(line, sizeof(line), p) != NULL) {
		const char *c;

		if ((c = strstr(line, "Collected : ")) != NULL)
			*ir = number_at(c + 12); /* Ir is the first event */
		else if ((c = strstr(line, "LL misses:")) != NULL)
			*ll = number_at(c + 10);
	}
	if (pclose(p) != 0 || *ir < 0 || (cache_sim && *ll < 0))
		return -1;
	return 0;
}

/* instructions of one pair in this layout: (Ir of 2,000 pairs - Ir of 1,000) / 1,000 */
static double count_row(const char *key, const char *label, const char *layout, int ranges)
{
	struct figure *f = add_figure(key, label);
	double a, b, ll;

	f->unit = "instr";
	if (collected(1000, layout, ranges, 0, &a, &ll) != 0 ||
	    collected(2000, layout, ranges, 0, &b, &ll) != 0) {
		f->status = SKIPPED;
		snprintf(f->note, sizeof(f->note), "skipped: valgrind failed");
		return -1;
	}
	f->value = (b - a) / 1000;
	f->status = NA;
	snprintf(f->note, sizeof(f->note), "callgrind, user space (library and libc): "
					   "(Ir of 2,000 pairs - Ir of 1,000) / 1,000");
	return f->value;
}

static struct figure *valgrind_missing(const char *key, const char *label)
{
	struct figure *f = add_figure(key, label);

	f->status = SKIPPED;
	snprintf(f->note, sizeof(f->note), "skipped: valgrind is not installed");
	return f;
}

/*
 * The four layouts of the instruction target, and touching over apart:
 * a pair between touching neighbours should cost within 1.1x the one
 * between neighbours it does not touch. No target on the counts
 * themselves: they may not rise above the figures doc/performance.md
 * gives for the code they were measured on.
 */
void bench_counts(void)
{
	double apart, touching;
	struct figure *f;

	if (!have_valgrind()) {
		valgrind_missing("instr_pair", "instructions per pair (callgrind)");
		return;
	}
	count_row("instr_pair_only", "instructions per pair, the file's only range", "only", 0);
	count_row("instr_pair", "instructions per pair, the file's only other range", "other", 0);
	apart = count_row("instr_pair_1000", "instructions per pair, among 1,000 ranges",
			  "apart", 1000);
	touching = count_row("instr_pair_touching",
			     "instr. per pair, 1,000 ranges, merging 3", "touching", 1000);
	if (apart <= 0 || touching <= 0)
		return;
	f = add_figure("instr_touching_ratio", "instr. per pair, touching / not touching");
	f->unit = "instr";
	f->value = touching;
	f->base = apart;
	f->ratio = touching / apart;
	f->ratio_of = "the pair among 1,000 ranges touching neither";
	f->target = "<= 1.1x";
	f->status = met_if(f->ratio <= 1.1);
}

/*
 * Last-level misses per pair at a random spot among `ranges` ranges, in
 * callgrind's cache simulation (of this machine's caches, as callgrind
 * reads them): (misses of 2N pairs - misses of N) / N, the building of
 * the ranges uninstrumented.
 */
void bench_llmiss(int ranges)
{
	const int n = 20000;
	double ir1, ir2, ll1, ll2;
	struct figure *f;
	char label[64];

	snprintf(label, sizeof(label), "LL misses per pair, %d ranges, random", ranges);
	if (!have_valgrind()) {
		valgrind_missing("ll_miss_random", label);
		return;
	}
	f = add_figure("ll_miss_random", label);
#ifndef HAVE_CALLGRIND_H
	f->status = SKIPPED;
	snprintf(f->note, sizeof(f->note), "skipped: no valgrind/callgrind.h at build time");
	return;
#endif
	if (collected(n, "random", ranges, 1, &ir1, &ll1) != 0 ||
	    collected(2 * n, "random", ranges, 1, &ir2, &ll2) != 0) {
		f->status = SKIPPED;
		snprintf(f->note, sizeof(f->note), "skipped: valgrind failed");
		return;
	}
	f->unit = "misses";
	f->value = (ll2 - ll1) / n;
	f->status = NA;
	snprintf(f->note, sizeof(f->note),
		 "callgrind --cache-sim=yes, 8 MiB LL, (LL misses of %d pairs - of %d) / %d; "
		 "%.0f instructions a pair there", 2 * n, n, n, (ir2 - ir1) / n);
}
