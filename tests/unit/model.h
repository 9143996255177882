/* SPDX-License-Identifier: MIT */
/*
 * model.h - a naive model of the rules of DESIGN 3, and a "world"
 * that drives the real core (tree, pool, commit) through the runtime's
 * steps next to the model and compares the two after every operation.
 *
 * Shared by tests/unit/test-ranges.c (check) and tests/fuzz/fuzz-ranges.c
 * (libFuzzer). Nothing here depends on either: a mismatch calls
 * model_fail(), which each program defines (ck_abort_msg, or abort()).
 *
 * The model is a sorted array of ranges {start, end, purged, age} per
 * file that implements the DESIGN 3 sentences literally. Besides the model, a
 * byte map per file plays the data: a byte is "lost" once a punch covered
 * it, until UNMARK gives it back to the program. So "the purged flag never
 * lies" and "libvolatile never changes a byte that is not inside a
 * volatile range" (THE INVARIANT) are checked byte by byte, independently
 * of how ranges are cut.
 */
#ifndef VL_TEST_MODEL_H
#define VL_TEST_MODEL_H

#include <inttypes.h>
#include <stdint.h>

#include "core/layout.h"
#include "core/pool.h"
#include "core/ranges.h"
#include "core/rtree.h"

#define SPACE_MAX 256
#define MODEL_NF_MAX 4
#define MAXR (SPACE_MAX + 2)
#define HIST 10

/* Report a mismatch and do not return. Defined by each program. */
void model_fail(const char *msg) __attribute__((noreturn));
void model_failf(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* Assertions for hot loops: they cost nothing until they fail. */
#define m_check(expr)                                                             \
	do {                                                                      \
		if (!(expr))                                                      \
			model_failf("Assertion '%s' failed", #expr);              \
	} while (0)
#define m_check_msg(expr, ...)                                                    \
	do {                                                                      \
		if (!(expr))                                                      \
			model_failf(__VA_ARGS__);                                 \
	} while (0)

/* ---- the model ------------------------------------------------------------ */

struct mr {
	uint64_t s, e;
	int p;        /* purged */
	uint32_t age; /* meaningful while unpurged */
};

struct mfile {
	int n;
	struct mr a[MAXR];
};

uint64_t umin(uint64_t a, uint64_t b);
uint64_t umax(uint64_t a, uint64_t b);
/* Index of the range that holds [s, e) entirely, or -1. */
int m_inside(const struct mfile *m, uint64_t s, uint64_t e);
int m_find_start(const struct mfile *m, uint64_t s);
/*
 * Put [s, e) (purged p) into m: overlapping ranges merge into one, purged
 * if any part was; ranges that touch it merge when in the same state;
 * the result takes `age`.
 */
void m_merge_in(struct mfile *m, uint64_t s, uint64_t e, int p, uint32_t age);
/* MARK [s, e). Returns 0 if [s, e) was inside a range (nothing changes). */
int m_mark(struct mfile *m, uint64_t s, uint64_t e, uint32_t age);
/* UNMARK [s, e): trim, split, remove. Returns was_purged. */
int m_unmark(struct mfile *m, uint64_t s, uint64_t e);
int m_needs_split(const struct mfile *m, uint64_t s, uint64_t e);
/* Purge range i: flag it, and merge it with touching purged ranges. */
void m_purge(struct mfile *m, int i);
/* Byte map of a file: 0 not volatile, 1 volatile, 2 purged. */
void m_bytes(const struct mfile *m, uint64_t space, unsigned char *map);

/* ---- the world: a region, its files, and the model -------------------------- */

/* A region in ordinary heap memory; nothing in src/core locks. */
struct model_region {
	struct vl_geometry g;
	void *base;
	struct vl_region r;
};

struct world {
	struct model_region t;
	struct vl_region *r;
	int nf;         /* files in use, at most MODEL_NF_MAX */
	uint32_t fi[MODEL_NF_MAX];
	uint32_t gen[MODEL_NF_MAX]; /* identities handed out to file f so far */
	struct mfile m[MODEL_NF_MAX];
	struct mfile scratch[2]; /* the model before and after an operation */
	uint32_t seq;   /* the model's last age */
	uint32_t cap;   /* usable node slots */
	uint64_t space; /* offsets used: [0, space) */
	unsigned char lost[MODEL_NF_MAX][SPACE_MAX];
	void *snap;
	unsigned char *seen; /* node_cap: where world_verify found each node */
	int stolen;     /* a node taken from another file's chunk (the region was full) */
	/* for failure messages */
	uint64_t seed;
	int step;
	char hist[HIST][96];
	int nhist;
	char msg[8192];
};

/* A region for `ranges` ranges with two files, offsets [0, space). */
struct world *world_new(uint32_t ranges, uint64_t space);
/* The same with nf files (1 to MODEL_NF_MAX). */
struct world *world_new_nf(uint32_t ranges, uint64_t space, int nf);
/* ... and room for `files` file records. */
struct world *world_new_cap(uint32_t ranges, uint32_t files, uint64_t space, int nf);
void world_free(struct world *w);

void world_note(struct world *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The context of a failure: seed, step, the last operations, the files. */
const char *world_ctx(struct world *w);
int m_total(const struct world *w);
/* Everything the region shows must be what the model says. */
void world_verify(struct world *w);
/*
 * Slot 0 of the nodes and of the files reads all zeros: every bad index
 * reads it (vl_node_at, vl_file_at), so no write may ever land there.
 */
int model_sentinels_zero(const struct vl_region *r);

void world_snapshot(struct world *w);
int world_unchanged(struct world *w);

uint32_t *world_root(const struct world *w, int f);
uint32_t node_with_start(struct world *w, int f, uint64_t s);
/* Node of the i-th range of file f. */
uint32_t nth_node(struct world *w, int f, int i);
/*
 * A LIVE node of file fi for [start, end), sealed, in no tree (allocated
 * from the pool, or an IDLE node of any chunk when the region is full
 * otherwise: w->stolen; so the node counters see it).
 */
uint32_t model_node_live(struct world *w, uint32_t fi, uint64_t start, uint64_t end, int purged,
			 uint32_t seq);

/* ---- operations, as the runtime performs them (src/ops.c, src/purge.c) ------ */

/* The bare steps: MARK (spare, mark, commit); returns the error. */
int rt_mark(struct world *w, int f, uint64_t s, uint64_t e, struct vl_change *c);
/* UNMARK (without a spare, then with one); *first: the first call's result. */
int rt_unmark(struct world *w, int f, uint64_t s, uint64_t e, struct vl_change *c, int *first);
/* The punch of an operation hits the data: only bytes of purged ranges may be hit. */
void apply_punch(struct world *w, int f, const struct vl_change *c);

/* MARK; checks against the model; returns the error. */
int do_mark(struct world *w, int f, uint64_t s, uint64_t e);
/* UNMARK; returns what UNMARK returns. */
int do_unmark(struct world *w, int f, uint64_t s, uint64_t e);
/* Purge range n of file f (as the purger does, any range; usually the oldest). */
void do_purge(struct world *w, int f, uint32_t n);
/*
 * Purge the oldest unpurged range (the head of the file with the oldest
 * published age); returns its file, or -1 if there is none.
 */
int do_purge_oldest(struct world *w);
void do_clear(struct world *w, int f);
/* Forget the unpurged ranges of file f (a file that cannot be reached). */
void do_forget_unpurged(struct world *w, int f);
/* Absorb a LIVE node [s,e) into file f, as crash repair does; then commit. */
void do_absorb(struct world *w, int f, uint64_t s, uint64_t e, int purged);
/*
 * File f has no ranges: its record is released (as the runtime does) and
 * the file replaced by a new one, whose record is made again (the slot
 * may be reused). Returns 0, or -1 if f still has ranges.
 */
int do_recycle(struct world *w, int f);

#endif /* VL_TEST_MODEL_H */
