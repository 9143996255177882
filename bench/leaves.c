/* SPDX-License-Identifier: MIT */
/*
 * leaves.c - the core of a MARK+UNMARK pair, format 10's leaves
 * (core/leaves.c) against format 9's red-black tree (core/ranges.c over
 * core/rtree.c, committed by core/pool.c), in heap memory: no region file,
 * no lock, no system call; what issue 28's second and third targets are
 * about once the runtime's share is taken out.
 *
 *   make bench-leaves            CPU time a pair, each layout, both formats
 *   make bench-leaves-callgrind  instructions and last-level misses a pair
 *                                (callgrind --cache-sim=yes)
 *
 * bench/leaves [--pairs N] [--ranges N] [--only NAME] [--callgrind]
 *
 * Layouts (NAME is FORMAT-LAYOUT, FORMAT lv or f9):
 *   one    the file's only range is [0, 2); the pair marks [4, 5)
 *   hot    N ranges [8k, 8k + 2); the pair at one spot, [8k + 4, 8k + 5)
 *   rand   the same ranges; the pair at a spot drawn uniformly each time
 *   apart  1,000 ranges [8k, 8k + 4); the pair at [8k + 5, 8k + 6), random k
 *   touch  the same; the pair fills [8k + 4, 8k + 8): a MARK that joins
 *          three ranges, an UNMARK that splits them again
 * The ranges are marked in a random order. Spots are drawn before the
 * timed loop. --callgrind: run the one layout with the loop alone
 * collected (valgrind/callgrind.h's client requests), a warm-up of as
 * many pairs before it instrumented but not counted.
 */
#include "core/layout.h"
#include "core/leaves.h"
#include "core/pool.h"
#include "core/ranges.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND_H 1
#endif
#endif
#ifndef HAVE_CALLGRIND_H
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_TOGGLE_COLLECT
#endif

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "bench/leaves: %s: %d\n", what, err);
	exit(1);
}

/* ---- format 10: the leaves, with a stack of free blocks for an allocator ---- */

struct lv {
	union vl_lv_block *b;
	uint32_t *free, nfree;
	struct vl_lv_root root;
	struct vl_lv t;
	struct vl_lv_res res;
};

static void lv_init(struct lv *x, uint32_t ranges)
{
	uint32_t cap = ranges / 4 + 64, i;

	if (posix_memalign((void **)&x->b, 64, (size_t)cap * sizeof(*x->b)))
		die("memory", ENOMEM);
	memset(x->b, 0, (size_t)cap * sizeof(*x->b));
	x->free = malloc(cap * sizeof(uint32_t));
	x->nfree = 0;
	for (i = cap - 1; i >= 1; i--)
		x->free[x->nfree++] = i;
	x->root = (struct vl_lv_root){ 0, 0 };
	x->t = (struct vl_lv){ .b = x->b, .cap = cap, .file = 1, .root = &x->root };
	x->res.n = 0;
}

static inline void lv_refill(struct lv *x)
{
	uint32_t need = vl_lv_need(&x->t);

	while (x->res.n < need && x->nfree > 0)
		x->res.blk[x->res.n++] = x->free[--x->nfree];
}

static inline void lv_back(struct lv *x, const struct vl_lv_change *c)
{
	uint32_t b = c->freed, k;

	for (k = 0; k < c->nfreed; k++, b = x->b[b].next_free)
		x->free[x->nfree++] = b;
}

static uint32_t age;

static inline void lv_mark(struct lv *x, uint64_t s, uint64_t e)
{
	struct vl_lv_change c;
	int err;

	lv_refill(x);
	err = vl_lv_mark(&x->t, s, e, ++age, &x->res, &c);
	if (err)
		die("vl_lv_mark", err);
	lv_back(x, &c);
}

static inline void lv_unmark(struct lv *x, uint64_t s, uint64_t e)
{
	struct vl_lv_change c;
	int err;

	lv_refill(x);
	err = vl_lv_unmark(&x->t, s, e, &x->res, &c);
	if (err)
		die("vl_lv_unmark", err);
	lv_back(x, &c);
}

/* ---- format 9: a region in heap memory, one file ------------------------------ */

struct f9 {
	struct vl_geometry g;
	void *base;
	struct vl_region r;
	uint32_t fi;
};

static void f9_init(struct f9 *x, uint32_t ranges)
{
	struct vl_ident id;
	int fresh;

	vl_geometry_plan(&x->g, ranges + 64, 4);
	x->base = aligned_alloc(4096, (size_t)x->g.region_size);
	if (x->base == NULL)
		die("memory", ENOMEM);
	memset(x->base, 0, (size_t)x->g.region_size);
	vl_region_format(x->base, &x->g);
	vl_region_bind(&x->r, x->base, (size_t)x->g.region_size);
	memset(&id, 0, sizeof(id));
	id.dev = 1;
	id.ino = 2;
	id.btime_sec = 3;
	x->fi = vl_file_create(&x->r, &id, &fresh);
	if (x->fi == VL_NIL)
		die("vl_file_create", ENOSPC);
}

/* As ops.c takes a spare: the file's kept one, else a new one. */
static inline uint32_t f9_spare(struct f9 *x)
{
	uint32_t n = vl_spare_take(&x->r, x->fi);

	return n != VL_NIL ? n : vl_node_alloc(&x->r, x->fi);
}

static inline void f9_mark(struct f9 *x, uint64_t s, uint64_t e)
{
	struct vl_change c;
	uint32_t spare = f9_spare(x);
	int err = vl_ranges_mark(&x->r, &vl_file_at(&x->r, x->fi)->h.root, x->fi, s, e, spare, &c);

	if (err)
		die("vl_ranges_mark", err);
	c.age = ++age;
	vl_commit(&x->r, x->fi, &c, spare);
}

static inline void f9_unmark(struct f9 *x, uint64_t s, uint64_t e)
{
	uint32_t *root = &vl_file_at(&x->r, x->fi)->h.root, spare = VL_NIL;
	struct vl_change c;
	int err = vl_ranges_unmark_taking(&x->r, root, x->fi, s, e, &spare, &c);

	if (err == -ENOMEM) {
		spare = vl_node_alloc(&x->r, x->fi);
		err = vl_ranges_unmark(&x->r, root, x->fi, s, e, spare, &c);
	}
	if (err)
		die("vl_ranges_unmark", err);
	vl_commit(&x->r, x->fi, &c, spare);
}

/* ---- layouts and the loops ------------------------------------------------------ */

enum layout { ONE, HOT, RAND, APART, TOUCH };
static const char *const layout_name[] = { "one", "hot", "rand", "apart", "touch" };

struct bench {
	int f10;
	enum layout lay;
	struct lv lv;
	struct f9 f9;
	uint64_t *spot; /* k of each pair */
	uint64_t pairs;
};

static inline void mark(struct bench *b, uint64_t s, uint64_t e)
{
	if (b->f10)
		lv_mark(&b->lv, s, e);
	else
		f9_mark(&b->f9, s, e);
}

static inline void unmark(struct bench *b, uint64_t s, uint64_t e)
{
	if (b->f10)
		lv_unmark(&b->lv, s, e);
	else
		f9_unmark(&b->f9, s, e);
}

/* Ranges k = 0..n-1 of width w at 8k, marked in a random order. */
static void fill(struct bench *b, uint64_t n, uint64_t w)
{
	uint64_t *k = malloc(n * sizeof(*k)), i;

	for (i = 0; i < n; i++)
		k[i] = i;
	for (i = n; i > 1; i--) {
		uint64_t j = rnd() % i, t = k[i - 1];

		k[i - 1] = k[j];
		k[j] = t;
	}
	for (i = 0; i < n; i++)
		mark(b, 8 * k[i], 8 * k[i] + w);
	free(k);
}

static void setup(struct bench *b, uint64_t ranges)
{
	uint64_t n = b->lay == ONE ? 1 : b->lay == APART || b->lay == TOUCH ? 1000 : ranges, i;

	if (b->f10)
		lv_init(&b->lv, (uint32_t)n + 1000);
	else
		f9_init(&b->f9, (uint32_t)n + 1000);
	fill(b, n, b->lay == APART || b->lay == TOUCH ? 4 : 2);
	b->spot = malloc(b->pairs * sizeof(*b->spot));
	for (i = 0; i < b->pairs; i++)
		b->spot[i] = b->lay == ONE ? 0 : b->lay == HOT ? n / 2 : rnd() % (n - 1);
}

/* The loops, one a layout's kind of pair: what callgrind's toggles bracket. */
static __attribute__((noinline)) void pairs_gap(struct bench *b, uint64_t from, uint64_t to)
{
	for (uint64_t i = from; i < to; i++) {
		uint64_t s = 8 * b->spot[i] + (b->lay == APART ? 5 : 4);

		mark(b, s, s + 1);
		unmark(b, s, s + 1);
	}
}

static __attribute__((noinline)) void pairs_touch(struct bench *b, uint64_t from, uint64_t to)
{
	for (uint64_t i = from; i < to; i++) {
		uint64_t s = 8 * b->spot[i] + 4;

		mark(b, s, s + 4);
		unmark(b, s, s + 4);
	}
}

static void run(struct bench *b, uint64_t from, uint64_t to)
{
	if (b->lay == TOUCH)
		pairs_touch(b, from, to);
	else
		pairs_gap(b, from, to);
}

static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double bytes_a_range(struct bench *b)
{
	uint32_t leaves, inner;
	uint64_t ranges;

	if (!b->f10)
		return (double)sizeof(struct vl_node);
	if (vl_lv_count(&b->lv.t, &leaves, &inner, &ranges) != 0 || ranges == 0)
		die("vl_lv_count", EUCLEAN);
	return (double)(leaves + inner) * VL_LV_BLOCK / (double)ranges;
}

/* One layout of one format: CPU ns a pair (best of three runs of the pairs). */
static double measure(int f10, enum layout lay, uint64_t ranges, uint64_t pairs, double *bpr,
		      uint32_t *height)
{
	struct bench b = { .f10 = f10, .lay = lay, .pairs = pairs };
	double best = 0;
	int t;

	setup(&b, ranges);
	*bpr = bytes_a_range(&b);
	*height = f10 ? b.lv.root.height : 0;
	for (t = 0; t < 3; t++) {
		double t0 = cpu_ns(), ns;

		run(&b, 0, pairs);
		ns = (cpu_ns() - t0) / (double)pairs;
		if (t == 0 || ns < best)
			best = ns;
	}
	free(b.spot);
	if (f10) {
		free(b.lv.b);
		free(b.lv.free);
	} else {
		free(b.f9.base);
	}
	return best;
}

static int parse_only(const char *s, int *f10, enum layout *lay)
{
	int i;

	if (strncmp(s, "lv-", 3) == 0)
		*f10 = 1;
	else if (strncmp(s, "f9-", 3) == 0)
		*f10 = 0;
	else
		return -1;
	for (i = 0; i <= TOUCH; i++) {
		if (strcmp(s + 3, layout_name[i]) == 0) {
			*lay = (enum layout)i;
			return 0;
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	uint64_t ranges = 1000000, pairs = 200000;
	const char *only = NULL;
	int callgrind = 0, i, f10 = 1;
	enum layout lay = ONE;
	double ns[2][5], bpr[2][5];
	uint32_t h[2][5];

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--pairs") == 0 && i + 1 < argc)
			pairs = strtoull(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "--ranges") == 0 && i + 1 < argc)
			ranges = strtoull(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
			only = argv[++i];
		else if (strcmp(argv[i], "--callgrind") == 0)
			callgrind = 1;
		else {
			fprintf(stderr, "usage: %s [--pairs N] [--ranges N] [--only lv|f9-"
					"one|hot|rand|apart|touch] [--callgrind]\n",
				argv[0]);
			return 2;
		}
	}
	if (ranges < 2 || pairs < 1 || (only && parse_only(only, &f10, &lay) != 0)) {
		fprintf(stderr, "bench/leaves: bad arguments\n");
		return 2;
	}
	if (callgrind) {
		struct bench b = { .f10 = f10, .lay = lay, .pairs = 2 * pairs };

		setup(&b, ranges);
		CALLGRIND_START_INSTRUMENTATION;
		run(&b, 0, pairs); /* warm: the caches as a run of pairs leaves them */
		CALLGRIND_TOGGLE_COLLECT;
		run(&b, pairs, 2 * pairs);
		CALLGRIND_TOGGLE_COLLECT;
		printf("%s %" PRIu64 " pairs, %.1f bytes a range\n", only, pairs, bytes_a_range(&b));
		return 0;
	}
	printf("CPU ns a MARK+UNMARK pair, core only (best of 3 x %" PRIu64 " pairs), %" PRIu64
	       " ranges for hot/rand\n",
	       pairs, ranges);
	printf("%-8s %10s %10s %12s %12s %8s\n", "layout", "f9 ns", "f10 ns", "f9 B/range",
	       "f10 B/range", "height");
	for (i = 0; i <= TOUCH; i++) {
		int f;

		if (only && i != (int)lay)
			continue;
		for (f = 0; f < 2; f++)
			ns[f][i] = measure(f, (enum layout)i, ranges, pairs, &bpr[f][i], &h[f][i]);
		printf("%-8s %10.1f %10.1f %12.1f %12.1f %8u\n", layout_name[i], ns[0][i], ns[1][i],
		       bpr[0][i], bpr[1][i], h[1][i]);
	}
	if (!only) {
		printf("rand / one:   f9 %.2fx   f10 %.2fx   (issue 28: <= 1.8x)\n",
		       ns[0][RAND] / ns[0][ONE], ns[1][RAND] / ns[1][ONE]);
		printf("rand / hot:   f9 %.2fx   f10 %.2fx\n", ns[0][RAND] / ns[0][HOT],
		       ns[1][RAND] / ns[1][HOT]);
		printf("touch / apart: f9 %.2fx   f10 %.2fx   (issue 28: <= 1.1x)\n",
		       ns[0][TOUCH] / ns[0][APART], ns[1][TOUCH] / ns[1][APART]);
	}
	return 0;
}
