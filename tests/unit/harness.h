/* SPDX-License-Identifier: MIT */
/*
 * harness.h - shared helpers of the unit tests of src/core.
 *
 * Every helper is static inline, so a test program that does not use one
 * gets no unused-function warning.
 *
 * A test region lives in ordinary heap memory: plan a geometry, allocate
 * and zero region_size bytes, format, bind. Nothing in src/core locks, so
 * the region's lock words stay zero (free) and are never touched.
 */
#ifndef VL_TEST_HARNESS_H
#define VL_TEST_HARNESS_H

#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "core/pool.h"
#include "core/ranges.h"
#include "core/rtree.h"

/*
 * Assertions for hot loops. A passing ck_assert costs a write(2) (check
 * records the last good line); these cost nothing until they fail.
 */
#define th_check(expr)                                                            \
	do {                                                                      \
		if (!(expr))                                                      \
			ck_abort_msg("Assertion '%s' failed", #expr);             \
	} while (0)
#define th_check_msg(expr, ...)                                                   \
	do {                                                                      \
		if (!(expr))                                                      \
			ck_abort_msg(__VA_ARGS__);                                \
	} while (0)

/* A count of the region (128 bits) is exactly v, or exactly the count b. */
#define th_count_eq(a, v)                                                         \
	ck_assert_msg(vl_u128_cmp(&(a), (v)) == 0,                                \
		      "%s = %" PRIu64 " * 2^64 + %" PRIu64 ", want %" PRIu64, #a, \
		      (a).hi, (a).lo, (uint64_t)(v))
#define th_counts_eq(a, b)                                                        \
	ck_assert_msg((a).hi == (b).hi && (a).lo == (b).lo,                       \
		      "%s = %" PRIu64 " * 2^64 + %" PRIu64 ", %s = %" PRIu64      \
		      " * 2^64 + %" PRIu64, #a, (a).hi, (a).lo, #b, (b).hi, (b).lo)

/* ---- an in-memory region ------------------------------------------------ */

struct th_region {
	struct vl_geometry g;
	void *base;
	struct vl_region r;
};

static inline void th_region_init(struct th_region *t, uint32_t ranges, uint32_t files)
{
	vl_geometry_plan(&t->g, ranges, files);
	ck_assert_uint_eq(t->g.region_size % 4096, 0);
	t->base = aligned_alloc(4096, (size_t)t->g.region_size);
	ck_assert_ptr_nonnull(t->base);
	memset(t->base, 0, (size_t)t->g.region_size);
	vl_region_format(t->base, &t->g);
	ck_assert_int_eq(vl_geometry_check(&((struct vl_header *)t->base)->geo, t->g.region_size),
			 0);
	vl_region_bind(&t->r, t->base, (size_t)t->g.region_size);
	ck_assert_uint_eq(t->r.node_cap, t->g.node_cap);
	ck_assert_uint_eq(t->r.file_cap, t->g.file_cap);
	ck_assert_uint_eq(t->r.hash_cap, t->g.hash_cap);
}

static inline void th_region_fini(struct th_region *t)
{
	free(t->base);
	t->base = NULL;
}

/* ---- deterministic pseudo-random numbers (splitmix64) -------------------- */

static inline uint64_t th_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform in [0, n), n > 0 */
static inline uint64_t th_below(uint64_t *state, uint64_t n)
{
	return th_rand(state) % n;
}

/* ---- files and nodes ---------------------------------------------------- */

static inline struct vl_ident th_ident(uint64_t dev, uint64_t ino)
{
	struct vl_ident id;

	memset(&id, 0, sizeof(id));
	id.dev = dev;
	id.ino = ino;
	id.btime_sec = (int64_t)(ino * 7 + 1);
	id.btime_nsec = (uint32_t)(ino % 1000000000u);
	return id;
}

/* A new LIVE file with identity (dev, ino); fails the test if full. */
static inline uint32_t th_file_new(const struct vl_region *r, uint64_t dev, uint64_t ino)
{
	struct vl_ident id = th_ident(dev, ino);
	int fresh = -1;
	uint32_t fi = vl_file_create(r, &id, &fresh);

	ck_assert_uint_ne(fi, VL_NIL);
	ck_assert_uint_lt(fi, r->file_cap);
	ck_assert(fresh == 0 || fresh == 1);
	return fi;
}

static inline uint32_t *th_root(const struct vl_region *r, uint32_t fi)
{
	return &vl_file_at(r, fi)->h.root;
}

/*
 * A LIVE node of file fi for [start, end), sealed, in no tree (allocated
 * from the pool, so the node counters see it).
 */
/*
 * Nodes in use below the mark: PENDING or LIVE. (The region's nodes_used
 * counts the nodes of chunks in use, IDLE ones too: VL_CHUNK a chunk.)
 */
static inline uint32_t th_in_use(const struct vl_region *r)
{
	uint32_t hwm = r->hdr->c.node_hwm < r->node_cap ? r->hdr->c.node_hwm : r->node_cap, k = 0;

	for (uint32_t n = VL_CHUNK; n < hwm; n++) {
		unsigned st = vl_node_state(&r->nodes[n]);

		k += st == VL_NODE_PENDING || st == VL_NODE_LIVE;
	}
	return k;
}

/*
 * A PENDING node of fi as the runtime gets one (ops.c reserve): its
 * chunk's, a new chunk's, else (the region full) a sweep's, else an IDLE
 * node of another chunk (vl_spare_steal). VL_NIL: none left.
 */
static inline uint32_t th_node_get(const struct vl_region *r, uint32_t fi)
{
	uint32_t n = vl_node_alloc(r, fi);

	if (n == VL_NIL && vl_nodes_sweep(r) > 0)
		n = vl_node_alloc(r, fi);
	return n != VL_NIL ? n : vl_spare_steal(r, fi);
}

static inline uint32_t th_node_live(const struct vl_region *r, uint32_t fi, uint64_t start,
				    uint64_t end, int purged, uint32_t seq)
{
	uint32_t n = th_node_get(r, fi);
	struct vl_node *x;

	th_check(n != VL_NIL);
	x = vl_node_at(r, n);
	x->start = start;
	x->end = end;
	x->seq = seq;
	x->meta = vl_meta(fi, VL_NODE_LIVE, purged);
	vl_node_seal(r, x);
	return n;
}

/* Slot 0 is the sentinel: it must stay all zero. */
static inline int th_sentinel_zero(const struct vl_region *r)
{
	static const struct vl_node zero;

	return memcmp(&r->nodes[VL_NIL], &zero, sizeof(zero)) == 0;
}

/* ---- running a suite ----------------------------------------------------- */

/* Run every test of s (fork mode unless CK_FORK=no); 0 if all passed. */
static inline int th_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

/* A test case with a generous timeout (random runs take a few seconds). */
static inline TCase *th_tcase(const char *name, double timeout)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, timeout);
	return tc;
}

#endif /* VL_TEST_HARNESS_H */
