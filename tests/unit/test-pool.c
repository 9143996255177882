/* SPDX-License-Identifier: MIT */
/*
 * test-pool.c - node allocator, LRU, file table, counters and rebuild
 * (core/pool.c).
 */
#include "harness.h"

#include <pthread.h>
#include <time.h>

/* ---- node allocator --------------------------------------------------------- */

/* The head of the lock-free free list: the low half of its top word. */

/* The tests' age clock: a tick a MARK that takes a new age, 0 skipped (0 says "none"). */
static uint32_t test_clock;

static uint32_t tick(void)
{
	if (++test_clock == 0)
		test_clock = 1;
	return test_clock;
}

static uint32_t free_head(const struct vl_counters *c)
{
	return (uint32_t)__atomic_load_n(&c->node_top, __ATOMIC_RELAXED);
}

static int node_is_zero_free(const struct vl_region *r, uint32_t n)
{
	const struct vl_node *x = vl_node_at(r, n);

	/* a FREE node's meta holds only the stamp of its push (pool.c) */
	return vl_node_state(x) == VL_NODE_FREE && x->start == 0 && x->end == 0 &&
	       x->seq == 0 && x->left == 0 && x->right == 0 && x->parent == 0 && x->prev == 0 &&
	       (x->meta & ~VL_META_FILE_MASK) == 0;
}

/* The IDLE nodes of fi's chunk (defined with the commit's tests below). */
static uint32_t count_spares(const struct vl_region *r, uint32_t fi);

/*
 * Chunks lowest first, from slot VL_CHUNK (chunk 0 holds the sentinel):
 * a file's first node takes a chunk, whose other nodes become the file's
 * IDLE ones, handed out before the next chunk.
 */
START_TEST(test_alloc_lowest_first)
{
	struct th_region t;
	const struct vl_region *r;
	const struct vl_counters *c;
	uint32_t i, n;

	th_region_init(&t, 16, 4);
	r = &t.r;
	c = &r->hdr->c;
	ck_assert_uint_eq(r->node_cap, 16 + VL_CHUNK);
	ck_assert_uint_eq(c->node_hwm, VL_CHUNK);
	for (i = VL_CHUNK; i < 16 + VL_CHUNK; i++) {
		const struct vl_node *x;

		n = vl_node_alloc(r, 3);
		ck_assert_uint_eq(n, i);
		x = vl_node_at(r, n);
		ck_assert_uint_eq(vl_node_state(x), VL_NODE_PENDING);
		ck_assert_uint_eq(vl_node_file(x), 3);
		ck_assert_int_eq(vl_node_purged(x), 0);
		if (i % VL_CHUNK == 0) /* the others were sealed IDLE: written whole before use */
			ck_assert_uint_eq(x->check, vl_node_sum(r, x));
		ck_assert_uint_eq(th_in_use(r), i - VL_CHUNK + 1);
		ck_assert_uint_eq(c->node_hwm, i - i % VL_CHUNK + VL_CHUNK); /* whole chunks */
		ck_assert_uint_eq(vl_file_at(r, 3)->h.chunk, i - i % VL_CHUNK);
		ck_assert_uint_eq(count_spares(r, 3), VL_CHUNK - 1 - i % VL_CHUNK);
		ck_assert_uint_eq(free_head(c), VL_NIL);
	}
	/* full */
	ck_assert_uint_eq(vl_node_alloc(r, 3), VL_NIL);
	ck_assert_uint_eq(vl_node_alloc(r, 2), VL_NIL);
	ck_assert_uint_eq(th_in_use(r), 16);
	ck_assert_uint_eq(c->node_hwm, r->node_cap);
	ck_assert(th_sentinel_zero(r));
	th_region_fini(&t);
}
END_TEST

/*
 * A node freed is IDLE in its chunk; a chunk none of whose nodes is used
 * goes back to the region, unless it is its file's chunk; chunks on the
 * list come back before the high-water mark grows, to any file.
 */
START_TEST(test_free_list_reuse)
{
	struct th_region t;
	const struct vl_region *r;
	const struct vl_counters *c;
	uint32_t i;

	th_region_init(&t, 16, 4);
	r = &t.r;
	c = &r->hdr->c;
	for (i = VL_CHUNK; i < 4 * VL_CHUNK; i++)
		ck_assert_uint_eq(vl_node_alloc(r, 1), i);
	ck_assert_uint_eq(vl_file_at(r, 1)->h.chunk, 3 * VL_CHUNK);
	/* scribble on a node: a free clears it */
	vl_node_at(r, 5)->start = 77;
	vl_node_at(r, 5)->prev = 9;
	vl_node_free(r, 5);
	ck_assert_uint_eq(vl_node_state(vl_node_at(r, 5)), VL_NODE_IDLE);
	ck_assert_uint_eq(vl_node_file(vl_node_at(r, 5)), 1);
	ck_assert_uint_eq(vl_node_at(r, 5)->start, 0);
	ck_assert_uint_eq(vl_node_at(r, 5)->prev, 0);
	ck_assert_uint_eq(th_in_use(r), 3 * VL_CHUNK - 1);
	ck_assert_uint_eq(free_head(c), VL_NIL); /* the others of its chunk are in use */
	/* a double free, or a free of nothing, changes nothing */
	vl_node_free(r, 5);
	vl_node_free(r, VL_NIL);
	vl_node_free(r, 1);
	vl_node_free(r, r->node_cap);
	vl_node_free(r, UINT32_MAX);
	ck_assert_uint_eq(th_in_use(r), 3 * VL_CHUNK - 1);
	ck_assert(th_sentinel_zero(r));
	vl_node_free(r, 4);
	vl_node_free(r, 6);
	vl_node_free(r, 7); /* chunk 4 unused: back to the region */
	ck_assert_uint_eq(free_head(c), VL_CHUNK);
	for (i = VL_CHUNK; i < 2 * VL_CHUNK; i++)
		ck_assert(node_is_zero_free(r, i));
	for (i = 3 * VL_CHUNK; i < 4 * VL_CHUNK; i++)
		vl_node_free(r, i); /* the file's chunk: kept, IDLE */
	ck_assert_uint_eq(free_head(c), VL_CHUNK);
	ck_assert_uint_eq(count_spares(r, 1), VL_CHUNK);
	ck_assert_uint_eq(th_in_use(r), VL_CHUNK);
	/* the freed chunk comes back before the high-water mark grows, to another file */
	ck_assert_uint_eq(vl_node_alloc(r, 2), VL_CHUNK);
	ck_assert_uint_eq(vl_file_at(r, 2)->h.chunk, VL_CHUNK);
	ck_assert_uint_eq(vl_node_at(r, 5)->meta, vl_meta(2, VL_NODE_IDLE, 0));
	ck_assert_uint_eq(free_head(c), VL_NIL);
	ck_assert_uint_eq(c->node_hwm, 4 * VL_CHUNK);
	ck_assert_uint_eq(vl_node_alloc(r, 2), VL_CHUNK + 1);
	ck_assert_uint_eq(vl_node_alloc(r, 1), 3 * VL_CHUNK); /* its own chunk first */
	ck_assert_uint_eq(c->node_hwm, 4 * VL_CHUNK);
	th_region_fini(&t);
}
END_TEST

/*
 * A free-list head that is not a free chunk is never handed out: a chunk
 * in use is passed over, a head out of range or not a chunk's first is
 * not followed. What the list lost is found again by a sweep, and so is
 * a chunk whose every node is IDLE.
 */
START_TEST(test_corrupt_free_head)
{
	struct th_region t;
	const struct vl_region *r;
	struct vl_counters *c;
	uint32_t i, tag;

	th_region_init(&t, 16, 4);
	r = &t.r;
	c = &r->hdr->c;
	for (i = 0; i < 2 * VL_CHUNK; i++)
		vl_node_alloc(r, 1);
	for (i = VL_CHUNK; i < 2 * VL_CHUNK; i++)
		vl_node_free(r, i);
	ck_assert_uint_eq(free_head(c), VL_CHUNK);
	tag = (uint32_t)(c->node_top >> 32);
	c->node_top = ((uint64_t)tag << 32) | (2 * VL_CHUNK); /* a chunk in use */
	ck_assert_uint_eq(vl_node_alloc(r, 2), 3 * VL_CHUNK);
	ck_assert_uint_eq(vl_node_file(vl_node_at(r, 2 * VL_CHUNK)), 1);
	ck_assert_uint_eq(vl_node_state(vl_node_at(r, 2 * VL_CHUNK)), VL_NODE_PENDING);
	c->node_top = ((uint64_t)tag << 32) | (r->node_cap + 100); /* out of range */
	vl_file_at(r, 2)->h.chunk = VL_NIL;
	ck_assert_uint_eq(vl_node_alloc(r, 2), 4 * VL_CHUNK);
	c->node_top = ((uint64_t)tag << 32) | (VL_CHUNK + 1); /* not a chunk's first */
	vl_file_at(r, 2)->h.chunk = VL_NIL;
	ck_assert_uint_eq(vl_node_alloc(r, 2), VL_NIL); /* the last chunk was taken */
	/* full to the allocator: chunk VL_CHUNK is FREE, but the list lost it */
	ck_assert(node_is_zero_free(r, VL_CHUNK));
	/* a chunk no file has, its nodes all unused, goes back at once */
	vl_node_free(r, 3 * VL_CHUNK);
	ck_assert_uint_eq(free_head(c), 3 * VL_CHUNK);
	ck_assert_uint_eq(vl_nodes_sweep(r), 2 * VL_CHUNK);
	ck_assert_uint_eq(th_in_use(r), VL_CHUNK + 1);
	ck_assert_uint_eq(free_head(c), 3 * VL_CHUNK);
	ck_assert_uint_eq(vl_node_alloc(r, 2), 3 * VL_CHUNK);
	ck_assert_uint_eq(vl_node_alloc(r, 3), VL_CHUNK);
	vl_file_at(r, 2)->h.chunk = VL_NIL;
	vl_file_at(r, 3)->h.chunk = VL_NIL;
	ck_assert_uint_eq(vl_node_alloc(r, 3), VL_NIL);
	ck_assert_uint_eq(vl_nodes_sweep(r), 0);
	ck_assert(th_sentinel_zero(r));
	th_region_fini(&t);
}
END_TEST

/*
 * vl_node_alloc_below hands out never-used chunks only wholly below its
 * limit; freed ones whatever their place.
 */
START_TEST(test_alloc_below)
{
	struct th_region t;
	const struct vl_region *r;
	const struct vl_counters *c;

	th_region_init(&t, 16, 4);
	r = &t.r;
	c = &r->hdr->c;
	ck_assert_uint_eq(vl_node_alloc_below(r, 1, VL_CHUNK), VL_NIL);
	ck_assert_uint_eq(vl_node_alloc_below(r, 1, 2 * VL_CHUNK - 1), VL_NIL);
	ck_assert_uint_eq(vl_node_alloc_below(r, 1, 2 * VL_CHUNK), VL_CHUNK);
	ck_assert_uint_eq(vl_node_alloc_below(r, 1, 2 * VL_CHUNK), VL_CHUNK + 1);
	ck_assert_uint_eq(c->node_hwm, 2 * VL_CHUNK);
	ck_assert_uint_eq(vl_node_alloc_below(r, 2, 2 * VL_CHUNK), VL_NIL);
	ck_assert_uint_eq(vl_node_alloc_below(r, 2, 1000), 2 * VL_CHUNK); /* clamped */
	ck_assert_uint_eq(c->node_hwm, 3 * VL_CHUNK);
	for (uint32_t n = 2 * VL_CHUNK; n < 3 * VL_CHUNK; n++)
		vl_node_free(r, n);
	vl_file_at(r, 2)->h.chunk = VL_NIL;
	vl_node_free(r, 2 * VL_CHUNK + 1); /* nothing: IDLE already */
	vl_nodes_sweep(r); /* the chunk no file has, unused, back */
	ck_assert_uint_eq(vl_node_alloc_below(r, 3, 1), 2 * VL_CHUNK);
	ck_assert_uint_eq(vl_node_file(vl_node_at(r, 2 * VL_CHUNK)), 3);
	ck_assert_uint_eq(th_in_use(r), 3);
	th_region_fini(&t);
}
END_TEST

/*
 * vl_node_take: never-used slots only once make_ready made their pages
 * present, a chunk at a time from the ready mark, the chunk clamped to
 * the capacity; make_ready failing (a full file system) is VL_NIL with
 * nothing claimed, and a full region is VL_NIL without asking it.
 */
static struct {
	int calls, fail;
	uint64_t off, len;
} ready_seen;

static int fake_make_ready(void *base, uint64_t off, uint64_t len)
{
	(void)base;
	ready_seen.calls++;
	ready_seen.off = off;
	ready_seen.len = len;
	return ready_seen.fail ? -1 : 0;
}

START_TEST(test_node_take_ready)
{
	/* slots made ready at a time: whole chunks */
	const uint32_t chunk = VL_READY_CHUNK / sizeof(struct vl_node) / VL_CHUNK * VL_CHUNK;
	struct th_region t;
	const struct vl_region *r;
	const struct vl_counters *c;
	uint32_t i, n;

	th_region_init(&t, chunk + chunk / 2, 4);
	r = &t.r;
	c = &r->hdr->c;
	ck_assert_uint_eq(c->node_ready, 0);
	memset(&ready_seen, 0, sizeof(ready_seen));
	ready_seen.fail = 1;
	ck_assert_uint_eq(vl_node_take(r, 1, fake_make_ready), VL_NIL);
	ck_assert_int_eq(ready_seen.calls, 1);
	ck_assert_uint_eq(c->node_ready, 0);
	ck_assert_uint_eq(c->node_hwm, VL_CHUNK);
	ck_assert_uint_eq(th_in_use(r), 0);

	ready_seen.fail = 0;
	ck_assert_uint_eq(vl_node_take(r, 1, fake_make_ready), VL_CHUNK);
	ck_assert_int_eq(ready_seen.calls, 2);
	ck_assert_uint_eq(ready_seen.off, r->hdr->geo.nodes_off);
	ck_assert_uint_eq(ready_seen.len, (uint64_t)(VL_CHUNK + chunk) * sizeof(struct vl_node));
	ck_assert_uint_eq(c->node_ready, VL_CHUNK + chunk);
	/* the rest of the ready slots without asking again */
	for (i = VL_CHUNK + 1; i < VL_CHUNK + chunk; i++)
		ck_assert_uint_eq(vl_node_take(r, 1, fake_make_ready), i);
	ck_assert_int_eq(ready_seen.calls, 2);
	/* the next ones from the ready mark, clamped to the capacity */
	ck_assert_uint_eq(vl_node_take(r, 2, fake_make_ready), VL_CHUNK + chunk);
	ck_assert_int_eq(ready_seen.calls, 3);
	ck_assert_uint_eq(ready_seen.off, r->hdr->geo.nodes_off +
						  (uint64_t)(VL_CHUNK + chunk) * sizeof(struct vl_node));
	ck_assert_uint_eq(ready_seen.len,
			  (uint64_t)(r->node_cap - VL_CHUNK - chunk) * sizeof(struct vl_node));
	ck_assert_uint_eq(c->node_ready, r->node_cap);
	for (n = VL_CHUNK + chunk + 1; n < r->node_cap; n++)
		ck_assert_uint_eq(vl_node_take(r, 2, fake_make_ready), n);
	/* full: not asked; a chunk freed is handed out again */
	ck_assert_uint_eq(vl_node_take(r, 2, fake_make_ready), VL_NIL);
	ck_assert_int_eq(ready_seen.calls, 3);
	for (n = VL_CHUNK; n < 2 * VL_CHUNK; n++)
		vl_node_free(r, n);
	ck_assert_uint_eq(vl_node_take(r, 3, fake_make_ready), VL_CHUNK);
	ck_assert_uint_eq(vl_node_file(vl_node_at(r, VL_CHUNK)), 3);
	ck_assert_int_eq(ready_seen.calls, 3);
	ck_assert(th_sentinel_zero(r));
	th_region_fini(&t);
}
END_TEST

/*
 * The free list with no lock: threads pop and push on one region at
 * once, each as one file (in loop 1, a sweeper empties and refills the
 * list meanwhile, and takes back the chunks whose nodes are all IDLE,
 * the threads' own chunks included). A node handed out twice would be
 * seen by its second taker while
 * the first still holds it (each holder claims the slot in owner[] and
 * stamps it); at the end every slot is in exactly one place, held or
 * free, and the counters say so.
 */
#define AT_THREADS 4
#define AT_CAP 64
#define AT_ALLOCS 400000L /* nodes taken by the threads together */
#define AT_STEPS_MAX 50000000L /* by one thread: only a list that never gives */

struct alloc_race {
	struct th_region t;
	const struct vl_region *r;
	uint32_t owner[AT_CAP + VL_CHUNK];
	uint32_t held[AT_THREADS][AT_CAP];
	uint32_t nheld[AT_THREADS];
	long twice, bad, allocs, allocs_seen, sweeps;
	int start, stop;
};

struct alloc_arg {
	struct alloc_race *x;
	uint32_t id; /* 1..AT_THREADS, also the "file" its nodes name */
};

static void *alloc_racer(void *arg)
{
	struct alloc_arg *a = arg;
	struct alloc_race *x = a->x;
	const struct vl_region *r = x->r;
	uint32_t *held = x->held[a->id - 1], n = 0;
	uint64_t rng = 1000 + a->id;
	long twice = 0, bad = 0, allocs = 0;

	while (!__atomic_load_n(&x->start, __ATOMIC_ACQUIRE))
		;
	/*
	 * Until the threads together have taken AT_ALLOCS nodes: a count of
	 * steps would not do, since how many of them find the list empty
	 * depends on the scheduler (under ASan on two CPUs, most of them).
	 */
	for (long step = 0; step < AT_STEPS_MAX; step++) {
		if ((step & 255) == 0 &&
		    __atomic_load_n(&x->allocs_seen, __ATOMIC_RELAXED) >= AT_ALLOCS)
			break;
		if (n < AT_CAP && (n == 0 || th_below(&rng, 2))) {
			uint32_t k = vl_node_alloc(r, a->id), none = 0;
			struct vl_node *nd;

			if (k == VL_NIL)
				continue;
			if ((++allocs & 255) == 0)
				__atomic_fetch_add(&x->allocs_seen, 256, __ATOMIC_RELAXED);
			if (k >= r->node_cap ||
			    !__atomic_compare_exchange_n(&x->owner[k], &none, a->id, 0, __ATOMIC_ACQ_REL,
							 __ATOMIC_RELAXED)) {
				twice++;
				continue;
			}
			nd = vl_node_at(r, k);
			if (vl_node_state(nd) != VL_NODE_PENDING || vl_node_file(nd) != a->id)
				bad++;
			nd->start = ((uint64_t)a->id << 32) | k; /* our stamp */
			held[n++] = k;
		} else {
			uint32_t i = (uint32_t)th_below(&rng, n), k = held[i];
			struct vl_node *nd = vl_node_at(r, k);

			if (nd->start != (((uint64_t)a->id << 32) | k) || vl_node_file(nd) != a->id)
				bad++; /* someone else wrote our node */
			held[i] = held[--n];
			__atomic_store_n(&x->owner[k], 0, __ATOMIC_RELEASE);
			vl_node_free(r, k);
		}
	}
	x->nheld[a->id - 1] = n;
	__atomic_fetch_add(&x->twice, twice, __ATOMIC_RELAXED);
	__atomic_fetch_add(&x->bad, bad, __ATOMIC_RELAXED);
	__atomic_fetch_add(&x->allocs, allocs, __ATOMIC_RELAXED);
	return NULL;
}

/* One sweeper at a time (the region lock's), racing the allocators. */
static void *alloc_sweeper(void *arg)
{
	struct alloc_race *x = arg;

	while (!__atomic_load_n(&x->start, __ATOMIC_ACQUIRE))
		;
	while (!__atomic_load_n(&x->stop, __ATOMIC_ACQUIRE)) {
		vl_nodes_sweep(x->r);
		x->sweeps++;
		for (volatile int i = 0; i < 2000; i++)
			;
	}
	return NULL;
}

START_TEST(test_alloc_concurrent)
{
	struct alloc_race *x = calloc(1, sizeof(*x));
	struct alloc_arg args[AT_THREADS];
	pthread_t th[AT_THREADS], sweeper;
	const struct vl_counters *c;
	static unsigned char seen[AT_CAP + VL_CHUNK];
	uint32_t nheld = 0, nfree = 0, nidle = 0, n;

	ck_assert_ptr_nonnull(x);
	th_region_init(&x->t, AT_CAP, 4);
	x->r = &x->t.r;
	c = &x->r->hdr->c;
	ck_assert_uint_eq(x->r->node_cap, AT_CAP + VL_CHUNK);
	for (int i = 0; i < AT_THREADS; i++) {
		args[i].x = x;
		args[i].id = (uint32_t)i + 1;
		ck_assert_int_eq(pthread_create(&th[i], NULL, alloc_racer, &args[i]), 0);
	}
	if (_i)
		ck_assert_int_eq(pthread_create(&sweeper, NULL, alloc_sweeper, x), 0);
	__atomic_store_n(&x->start, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < AT_THREADS; i++)
		pthread_join(th[i], NULL);
	if (_i) {
		__atomic_store_n(&x->stop, 1, __ATOMIC_RELEASE);
		pthread_join(sweeper, NULL);
		ck_assert_int_gt(x->sweeps, 0);
	}
	ck_assert_msg(x->twice == 0, "%ld nodes handed out while another thread held them",
		      x->twice);
	ck_assert_msg(x->bad == 0, "%ld nodes not ours, or written by another holder", x->bad);
	ck_assert_int_ge(x->allocs, AT_ALLOCS);
	/* every slot in exactly one place: held by one thread, or on the free list */
	memset(seen, 0, sizeof(seen));
	for (int i = 0; i < AT_THREADS; i++) {
		for (uint32_t j = 0; j < x->nheld[i]; j++) {
			n = x->held[i][j];
			ck_assert_msg(!seen[n], "node %u held twice", n);
			seen[n] = 1;
			ck_assert_uint_eq(vl_node_state(vl_node_at(x->r, n)), VL_NODE_PENDING);
			ck_assert_uint_eq(vl_node_file(vl_node_at(x->r, n)), (uint32_t)i + 1);
			nheld++;
		}
	}
	for (n = free_head(c); n != VL_NIL; n = vl_node_at(x->r, n)->next) {
		ck_assert_uint_lt(n, x->r->node_cap);
		ck_assert_uint_eq(n % VL_CHUNK, 0);
		for (uint32_t i = n; i < n + VL_CHUNK; i++) {
			ck_assert_msg(!seen[i], "node %u on the free list and %s", i,
				      seen[i] == 1 ? "held" : "on it before");
			seen[i] = 2;
			ck_assert_uint_eq(vl_node_state(vl_node_at(x->r, i)), VL_NODE_FREE);
			nfree++;
		}
	}
	for (n = VL_CHUNK; n < c->node_hwm; n++) {
		if (vl_node_state(vl_node_at(x->r, n)) != VL_NODE_IDLE)
			continue;
		ck_assert_msg(!seen[n], "node %u IDLE and %s", n,
			      seen[n] == 1 ? "held" : "on the free list");
		seen[n] = 3;
		nidle++;
	}
	for (n = VL_CHUNK; n < c->node_hwm; n++)
		ck_assert_msg(seen[n], "node %u is nowhere: lost", n);
	ck_assert_uint_eq(th_in_use(x->r), nheld);
	ck_assert_uint_eq(c->nodes_used + nfree + VL_CHUNK, c->node_hwm); /* chunks in use */
	ck_assert_uint_eq(nheld + nfree + nidle + VL_CHUNK, c->node_hwm);
	ck_assert(th_sentinel_zero(x->r));
	th_region_fini(&x->t);
	free(x);
}
END_TEST

/*
 * Every way a chunk changes hands, at once: four threads, each one
 * file's lock holder, take nodes (their chunk's IDLE ones, the list's,
 * new ones), let them go (IDLE kept as the file's spare, or freed: the
 * chunk back to the region once unused) and let their chunk go; a fifth,
 * the region lock's holder and a fifth file's, sweeps and steals any
 * file's IDLE node. No node is handed out twice or written while another
 * holds it (each holder stamps its nodes), and at the end every slot is
 * in exactly one place: held, on the free list, or IDLE.
 */
#define CR_FILES 4
#define CR_CAP 48
/* steps per thread; CR_STEPS=N for a longer run, CR_SAY=1 to print what was done */
#define CR_STEPS (getenv("CR_STEPS") ? atol(getenv("CR_STEPS")) : 300000L)

struct chunk_race {
	struct th_region t;
	const struct vl_region *r;
	uint32_t file[CR_FILES + 1];
	uint32_t owner[CR_CAP + 2 * VL_CHUNK];
	uint32_t held[CR_FILES + 1][CR_CAP + 2 * VL_CHUNK];
	uint32_t nheld[CR_FILES + 1];
	long twice, bad, taken, steals, sweeps;
	int start;
};

struct chunk_arg {
	struct chunk_race *x;
	uint32_t id; /* 0..CR_FILES: file[id]; CR_FILES also holds the region lock */
};

static uint64_t cr_stamp(uint32_t id, uint32_t n)
{
	return ((uint64_t)(id + 1) << 32) | n;
}

/* n, just handed to thread id: no one else may hold it, and it must be its file's PENDING node */
static void cr_hold(struct chunk_race *x, uint32_t id, uint32_t n, uint32_t *nh, long *bad,
		    long *twice)
{
	const struct vl_region *r = x->r;
	uint32_t none = 0;
	struct vl_node *nd;

	if (n >= r->node_cap ||
	    !__atomic_compare_exchange_n(&x->owner[n], &none, id + 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED)) {
		(*twice)++;
		return;
	}
	nd = vl_node_at(r, n);
	if (vl_node_state(nd) != VL_NODE_PENDING || vl_node_file(nd) != x->file[id])
		(*bad)++;
	nd->start = cr_stamp(id, n);
	nd->end = cr_stamp(id, n);
	x->held[id][(*nh)++] = n;
}

/* held node i of thread id let go, kept as its file's spare or freed */
static void cr_let_go(struct chunk_race *x, uint32_t id, uint32_t i, uint32_t *nh, long *bad,
		      uint64_t *rng)
{
	const struct vl_region *r = x->r;
	uint32_t n = x->held[id][i];
	struct vl_node *nd = vl_node_at(r, n);

	if (nd->start != cr_stamp(id, n) || nd->end != cr_stamp(id, n) ||
	    vl_node_file(nd) != x->file[id] || vl_node_state(nd) != VL_NODE_PENDING)
		(*bad)++; /* someone else wrote our node */
	x->held[id][i] = x->held[id][--(*nh)];
	__atomic_store_n(&x->owner[n], 0, __ATOMIC_RELEASE);
	if (th_below(rng, 2))
		vl_spare_keep(r, x->file[id], n);
	else
		vl_node_free(r, n);
}

static void *chunk_racer(void *arg)
{
	struct chunk_arg *a = arg;
	struct chunk_race *x = a->x;
	const struct vl_region *r = x->r;
	uint32_t id = a->id, fi = x->file[id], nh = 0;
	uint64_t rng = 7000 + id;
	long twice = 0, bad = 0, taken = 0, steals = 0, sweeps = 0;
	int region = id == CR_FILES;

	while (!__atomic_load_n(&x->start, __ATOMIC_ACQUIRE))
		;
	for (long step = 0; step < CR_STEPS; step++) {
		uint64_t dice = th_below(&rng, 64);

		if (dice == 0) {
			vl_chunk_let_go(r, fi);
		} else if (region && dice < 4) {
			vl_nodes_sweep(r);
			sweeps++;
		} else if (nh < CR_CAP / 2 && (nh == 0 || dice < 34)) {
			uint32_t n = region && dice < 20 ? vl_spare_steal(r, fi) : vl_node_alloc(r, fi);

			if (n == VL_NIL)
				continue;
			taken++;
			steals += region && dice < 20;
			cr_hold(x, id, n, &nh, &bad, &twice);
		} else {
			cr_let_go(x, id, (uint32_t)th_below(&rng, nh), &nh, &bad, &rng);
		}
	}
	x->nheld[id] = nh;
	__atomic_fetch_add(&x->twice, twice, __ATOMIC_RELAXED);
	__atomic_fetch_add(&x->bad, bad, __ATOMIC_RELAXED);
	__atomic_fetch_add(&x->taken, taken, __ATOMIC_RELAXED);
	__atomic_fetch_add(&x->steals, steals, __ATOMIC_RELAXED);
	__atomic_fetch_add(&x->sweeps, sweeps, __ATOMIC_RELAXED);
	return NULL;
}

START_TEST(test_chunk_race)
{
	struct chunk_race *x = calloc(1, sizeof(*x));
	struct chunk_arg args[CR_FILES + 1];
	pthread_t th[CR_FILES + 1];
	const struct vl_counters *c;
	static unsigned char seen[CR_CAP + 4 * VL_CHUNK];
	uint32_t nheld = 0, nfree = 0, nidle = 0, n;

	ck_assert_ptr_nonnull(x);
	th_region_init(&x->t, CR_CAP, 8);
	x->r = &x->t.r;
	c = &x->r->hdr->c;
	ck_assert_uint_le(x->r->node_cap, CR_CAP + 2 * VL_CHUNK);
	for (uint32_t i = 0; i <= CR_FILES; i++)
		x->file[i] = th_file_new(x->r, 9, 100 + i + (uint32_t)_i * 10);
	for (uint32_t i = 0; i <= CR_FILES; i++) {
		args[i].x = x;
		args[i].id = i;
		ck_assert_int_eq(pthread_create(&th[i], NULL, chunk_racer, &args[i]), 0);
	}
	__atomic_store_n(&x->start, 1, __ATOMIC_RELEASE);
	for (uint32_t i = 0; i <= CR_FILES; i++)
		pthread_join(th[i], NULL);
	if (getenv("CR_SAY"))
		fprintf(stderr, "chunk race %d: %ld taken, %ld stolen, %ld sweeps\n", _i, x->taken,
			x->steals, x->sweeps);
	ck_assert_int_gt(x->sweeps, 0);
	ck_assert_int_gt(x->steals, 0);
	ck_assert_msg(x->twice == 0, "%ld nodes handed out while another thread held them",
		      x->twice);
	ck_assert_msg(x->bad == 0, "%ld nodes not ours, or written by another holder", x->bad);
	memset(seen, 0, sizeof(seen));
	for (uint32_t i = 0; i <= CR_FILES; i++) {
		for (uint32_t j = 0; j < x->nheld[i]; j++) {
			n = x->held[i][j];
			ck_assert_msg(!seen[n], "node %u held twice", n);
			seen[n] = 1;
			ck_assert_uint_eq(vl_node_state(vl_node_at(x->r, n)), VL_NODE_PENDING);
			nheld++;
		}
	}
	for (n = free_head(c); n != VL_NIL; n = vl_node_at(x->r, n)->next) {
		ck_assert_uint_lt(n, x->r->node_cap);
		ck_assert_uint_eq(n % VL_CHUNK, 0);
		for (uint32_t i = n; i < n + VL_CHUNK; i++) {
			ck_assert_msg(!seen[i], "node %u on the free list and %s", i,
				      seen[i] == 1 ? "held" : "on it before");
			seen[i] = 2;
			ck_assert_msg(vl_node_state(vl_node_at(x->r, i)) == VL_NODE_FREE,
				      "node %u on the free list, state %u", i,
				      vl_node_state(vl_node_at(x->r, i)));
			nfree++;
		}
	}
	for (n = VL_CHUNK; n < c->node_hwm; n++) {
		if (vl_node_state(vl_node_at(x->r, n)) != VL_NODE_IDLE)
			continue;
		ck_assert_msg(!seen[n], "node %u IDLE and %s", n,
			      seen[n] == 1 ? "held" : "on the free list");
		seen[n] = 3;
		nidle++;
	}
	for (n = VL_CHUNK; n < c->node_hwm; n++)
		ck_assert_msg(seen[n], "node %u is nowhere: lost (meta %#x)", n,
			      vl_node_at(x->r, n)->meta);
	ck_assert_uint_eq(nheld + nfree + nidle + VL_CHUNK, c->node_hwm);
	ck_assert_uint_eq(c->nodes_used + nfree + VL_CHUNK, c->node_hwm); /* chunks in use */
	ck_assert(th_sentinel_zero(x->r));
	th_region_fini(&x->t);
	free(x);
}
END_TEST

/*
 * Random allocs and frees of two files against a model of used slots:
 * never a node handed out twice; the high-water mark grows only when the
 * file's chunk has no IDLE node and no chunk is on the list; a chunk in
 * use names one file.
 */
START_TEST(test_alloc_random)
{
	struct th_region t;
	const struct vl_region *r;
	const struct vl_counters *c;
	static unsigned char used[256 + VL_CHUNK];
	uint64_t rng = 99;
	uint32_t nused = 0;
	int step;

	th_region_init(&t, 256, 4);
	r = &t.r;
	c = &r->hdr->c;
	memset(used, 0, sizeof(used));
	for (step = 0; step < 20000; step++) {
		uint32_t fi = 1 + (uint32_t)th_below(&rng, 2);

		if (th_below(&rng, 100) < (step % 4000 < 2000 ? 60u : 40u)) {
			uint32_t hwm = c->node_hwm;
			int fresh = count_spares(r, fi) == 0 && free_head(c) == VL_NIL;
			uint32_t n = vl_node_alloc(r, fi);

			if (n == VL_NIL) {
				th_check(fresh && hwm == r->node_cap);
				continue;
			}
			th_check(n >= VL_CHUNK && n < r->node_cap && !used[n]);
			th_check(vl_node_at(r, n)->meta == vl_meta(fi, VL_NODE_PENDING, 0));
			th_check_msg((c->node_hwm > hwm) == fresh, "hwm %u -> %u, fresh %d", hwm,
				     c->node_hwm, fresh);
			used[n] = 1;
			nused++;
		} else if (nused > 0) {
			uint32_t n;

			do
				n = VL_CHUNK + (uint32_t)th_below(&rng, c->node_hwm - VL_CHUNK);
			while (!used[n]);
			vl_node_free(r, n);
			used[n] = 0;
			nused--;
		}
		th_check(th_in_use(r) == nused);
	}
	for (uint32_t k = VL_CHUNK; k < c->node_hwm; k += VL_CHUNK)
		for (uint32_t n = k + 1; n < k + VL_CHUNK; n++)
			th_check(vl_node_state(vl_node_at(r, k)) == VL_NODE_FREE ||
				 vl_node_file(vl_node_at(r, n)) == vl_node_file(vl_node_at(r, k)));
	th_region_fini(&t);
}
END_TEST

/* ---- LRU ----------------------------------------------------------------------- */

#define LN 40

struct lru_model {
	uint32_t a[LN];
	int n;
};

static int lm_find(const struct lru_model *m, uint32_t x)
{
	int i;

	for (i = 0; i < m->n; i++)
		if (m->a[i] == x)
			return i;
	return -1;
}

static void lm_remove(struct lru_model *m, uint32_t x)
{
	int i = lm_find(m, x);

	if (i < 0)
		return;
	memmove(&m->a[i], &m->a[i + 1], (size_t)(m->n - i - 1) * sizeof(m->a[0]));
	m->n--;
}

static void lm_insert_at(struct lru_model *m, int pos, uint32_t x)
{
	memmove(&m->a[pos + 1], &m->a[pos], (size_t)(m->n - pos) * sizeof(m->a[0]));
	m->a[pos] = x;
	m->n++;
}

/* File fi's age order is m, both ways, and its oldest once published is m's head's age. */
static void lru_verify(const struct vl_region *r, uint32_t fi, const struct lru_model *m)
{
	const struct vl_file *f = vl_file_at(r, fi);
	uint32_t n = f->h.lru_head, prev = VL_NIL;
	int i;

	for (i = 0; i < m->n; i++) {
		th_check_msg(n == m->a[i], "file %u position %d: %u, want %u", fi, i, n, m->a[i]);
		th_check_msg(vl_node_at(r, n)->prev == prev, "node %u: prev %u, want %u", n,
			     vl_node_at(r, n)->prev, prev);
		th_check(vl_lru_linked(r, fi, n));
		prev = n;
		n = vl_node_at(r, n)->next;
	}
	th_check_msg(n == VL_NIL, "file %u: age order longer than %d", fi, m->n);
	th_check(f->h.lru_tail == prev);
	for (n = 1; n < r->node_cap; n++)
		if (vl_node_file(vl_node_at(r, n)) == fi)
			th_check_msg(vl_lru_linked(r, fi, n) == (lm_find(m, n) >= 0),
				     "node %u linked %d", n, vl_lru_linked(r, fi, n));
	th_check(!vl_lru_linked(r, fi, VL_NIL));
	vl_lru_publish(r, fi);
	th_check_msg(f->h.oldest == (m->n == 0 ? 0 : vl_node_at(r, m->a[0])->seq),
		     "file %u: oldest %u", fi, f->h.oldest);
	th_check(th_sentinel_zero(r));
}

START_TEST(test_lru_basic)
{
	struct th_region t;
	const struct vl_region *r;
	struct lru_model m = { .n = 0 }, g;
	uint32_t i, n[9];

	th_region_init(&t, 16, 4);
	r = &t.r;
	for (i = 1; i <= 6; i++)
		n[i] = th_node_live(r, 1, i * 10, i * 10 + 5, 0, i);
	/* file 2's own age order, beside file 1's */
	n[7] = th_node_live(r, 2, 0, 5, 0, 7);
	n[8] = th_node_live(r, 2, 10, 15, 0, 8);
	vl_lru_append(r, 2, n[8]);
	vl_lru_append(r, 2, n[7]);
	g = (struct lru_model){ { n[8], n[7] }, 2 };
	lru_verify(r, 2, &g);
	lru_verify(r, 1, &m);
	vl_lru_append(r, 1, n[1]);
	vl_lru_append(r, 1, n[2]);
	vl_lru_append(r, 1, n[3]);
	m = (struct lru_model){ { n[1], n[2], n[3] }, 3 };
	lru_verify(r, 1, &m);
	/* append moves to the tail; appending the tail again changes nothing */
	vl_lru_append(r, 1, n[2]);
	m = (struct lru_model){ { n[1], n[3], n[2] }, 3 };
	lru_verify(r, 1, &m);
	vl_lru_append(r, 1, n[2]);
	lru_verify(r, 1, &m);
	vl_lru_append(r, 1, n[1]);
	m = (struct lru_model){ { n[3], n[2], n[1] }, 3 };
	lru_verify(r, 1, &m);
	/* unlink, twice */
	vl_lru_unlink(r, 1, n[2]);
	m = (struct lru_model){ { n[3], n[1] }, 2 };
	lru_verify(r, 1, &m);
	vl_lru_unlink(r, 1, n[2]);
	lru_verify(r, 1, &m);
	vl_lru_unlink(r, 1, VL_NIL);
	lru_verify(r, 1, &m);
	/* insert at the head, in the middle, at the tail */
	vl_lru_insert_after(r, 1, VL_NIL, n[4]);
	m = (struct lru_model){ { n[4], n[3], n[1] }, 3 };
	lru_verify(r, 1, &m);
	vl_lru_insert_after(r, 1, n[4], n[5]);
	m = (struct lru_model){ { n[4], n[5], n[3], n[1] }, 4 };
	lru_verify(r, 1, &m);
	vl_lru_insert_after(r, 1, n[1], n[6]);
	m = (struct lru_model){ { n[4], n[5], n[3], n[1], n[6] }, 5 };
	lru_verify(r, 1, &m);
	/* insert of a linked node moves it */
	vl_lru_insert_after(r, 1, n[4], n[6]);
	m = (struct lru_model){ { n[4], n[6], n[5], n[3], n[1] }, 5 };
	lru_verify(r, 1, &m);
	vl_lru_insert_after(r, 1, n[1], VL_NIL); /* nothing */
	lru_verify(r, 1, &m);
	/* the head unlinked: the next one is the oldest */
	vl_lru_unlink(r, 1, n[4]);
	m = (struct lru_model){ { n[6], n[5], n[3], n[1] }, 4 };
	lru_verify(r, 1, &m);
	vl_lru_unlink(r, 1, n[5]);
	vl_lru_unlink(r, 1, n[1]);
	m = (struct lru_model){ { n[6], n[3] }, 2 };
	lru_verify(r, 1, &m);
	/* file 2's untouched by all of it */
	lru_verify(r, 2, &g);
	vl_lru_unlink(r, 1, n[6]);
	vl_lru_unlink(r, 1, n[3]);
	m.n = 0;
	lru_verify(r, 1, &m);
	ck_assert_uint_eq(vl_file_at(r, 1)->h.lru_head, VL_NIL);
	ck_assert_uint_eq(vl_file_at(r, 1)->h.lru_tail, VL_NIL);
	ck_assert_uint_eq(vl_file_at(r, 1)->h.oldest, 0);
	lru_verify(r, 2, &g);
	th_region_fini(&t);
}
END_TEST

START_TEST(test_lru_random)
{
	struct th_region t;
	const struct vl_region *r;
	struct lru_model m = { .n = 0 };
	uint64_t rng = 4242;
	uint32_t i;
	int step;

	th_region_init(&t, LN, 4);
	r = &t.r;
	for (i = 1; i <= LN; i++) /* VL_CHUNK to VL_CHUNK + LN - 1: the file's chunks */
		ck_assert_uint_eq(th_node_live(r, 1, i * 10, i * 10 + 5, 0, i), VL_CHUNK + i - 1);
	for (step = 0; step < 20000; step++) {
		uint32_t x = VL_CHUNK + (uint32_t)th_below(&rng, LN);

		switch (th_below(&rng, 4)) {
		case 0:
			vl_lru_append(r, 1, x);
			lm_remove(&m, x);
			lm_insert_at(&m, m.n, x);
			break;
		case 1:
			vl_lru_unlink(r, 1, x);
			lm_remove(&m, x);
			break;
		default: {
			/* after a linked node, or at the head */
			uint32_t after = m.n > 0 && th_below(&rng, 5) ? m.a[th_below(&rng, (uint64_t)m.n)]
								   : VL_NIL;

			if (after == x)
				break;
			vl_lru_insert_after(r, 1, after, x);
			lm_remove(&m, x);
			lm_insert_at(&m, after == VL_NIL ? 0 : lm_find(&m, after) + 1, x);
			break;
		}
		}
		lru_verify(r, 1, &m);
	}
	th_region_fini(&t);
}
END_TEST

/*
 * Ages: never 0, compared by their distance back from the reader's now,
 * across the wrap; a stamp ahead of now reads as now (DESIGN 10).
 */
START_TEST(test_age_older)
{
	uint32_t now = 1000;

	ck_assert_uint_eq(vl_age_stamp(0), UINT32_MAX);
	ck_assert_uint_eq(vl_age_stamp(7), 7);
	ck_assert(vl_age_older(UINT32_MAX, 1, 1));
	ck_assert(!vl_age_older(1, UINT32_MAX, 1));
	ck_assert(!vl_age_older(5, 5, 9));
	ck_assert(vl_age_older(UINT32_MAX - 10, UINT32_MAX - 9, 5));
	ck_assert(vl_age_older(3, 4, 4));
	/* a stamp 5 ms ahead of the reader is the youngest, not 49.7 days old */
	ck_assert_uint_eq(vl_age_back(now + 5, now), 0);
	ck_assert(!vl_age_older(now + 5, now - 1, now));
	ck_assert(vl_age_older(now - 1, now + 5, now));
	/* the oldest an age reads, and one further back: ahead */
	ck_assert_uint_eq(vl_age_back(now - VL_AGE_PAST_MS, now), VL_AGE_PAST_MS);
	ck_assert_uint_eq(vl_age_back(now - VL_AGE_PAST_MS - 1, now), 0);
	ck_assert_uint_lt(VL_AGE_RESTAMP_MS, VL_AGE_PAST_MS);
}
END_TEST

/* ---- file table ----------------------------------------------------------------- */

/* The table's home slot (pool.c hash_of), to force collisions; checked below. */
static uint32_t home_of(const struct vl_region *r, uint64_t dev, uint64_t ino)
{
	struct vl_ident id = { .dev = dev, .ino = ino };

	return (uint32_t)(vl_ident_hash(&id) >> 32) & (r->hash_cap - 1);
}

#define NID 420

/*
 * Identities 2k and 2k+1 are twins: the same (dev, ino), born at other
 * times (as tmpfs and memfd inode numbers wrap). They are two files, with
 * the same home slot, so always on one probe run.
 */
static int twin_of(int i)
{
	return i ^ 1;
}

static int same_id(const struct vl_ident *a, const struct vl_ident *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->btime_sec == b->btime_sec &&
	       a->btime_nsec == b->btime_nsec;
}

struct ftab {
	struct th_region t;
	const struct vl_region *r;
	struct vl_ident id[NID];
	uint32_t live_fi[NID]; /* model: the LIVE file of each identity, or VL_NIL */
	/* model, by slot */
	uint32_t state[1024];
	uint32_t gen[1024];
	int ident_of[1024];
	uint32_t hwm;
	uint32_t used;
	/* what a run met */
	long twins_together;  /* identity lookups with its twin LIVE too */
	long twin_left_alone; /* releases of a file whose twin stayed LIVE */
};

/*
 * Identities whose home slots crowd into a few places, one of them across
 * the end of the table, so probe runs are long, cross each other and wrap.
 * Odd identities are twins of the even one before them: some born in
 * another second, some in the same second at another nanosecond.
 */
static void ftab_init(struct ftab *x, uint32_t files)
{
	static const uint32_t homes_from_end[] = { 3, 2, 1 };
	uint64_t ino = 1;
	int i;

	memset(x, 0, sizeof(*x));
	th_region_init(&x->t, 16, files);
	x->r = &x->t.r;
	ck_assert_uint_le(x->r->file_cap, 1024);
	x->hwm = 1;
	for (i = 0; i < NID; i++) {
		uint32_t want;
		uint64_t dev;
		int k = i / 2;

		x->live_fi[i] = VL_NIL;
		if (i % 2 == 1) {
			x->id[i] = x->id[i - 1];
			if (k % 2 == 0)
				x->id[i].btime_sec += 1000003;
			else
				x->id[i].btime_nsec = (x->id[i].btime_nsec + 1) % 1000000000u;
			continue;
		}
		switch (k % 6) {
		case 0:
		case 1:
		case 2:
			want = x->r->hash_cap - homes_from_end[k % 3];
			break;
		case 3:
			want = 0;
			break;
		case 4:
			want = x->r->hash_cap / 2;
			break;
		default:
			want = UINT32_MAX; /* anywhere */
			break;
		}
		dev = 0x800 + (uint64_t)(k % 2);
		for (;; ino++)
			if (want == UINT32_MAX || home_of(x->r, dev, ino) == want)
				break;
		x->id[i] = th_ident(dev, ino++);
	}
}

static void ftab_verify(struct ftab *x)
{
	const struct vl_region *r = x->r;
	const struct vl_counters *c = &r->hdr->c;
	uint32_t j, fi, nlive = 0, nin = 0;
	int i;

	/* every identity is found exactly where the model says, twins apart */
	for (i = 0; i < NID; i++) {
		int err = vl_file_lookup(r, &x->id[i], &fi);

		th_check_msg(err == 0, "lookup %d: %d", i, err);
		th_check_msg(fi == x->live_fi[i], "lookup of identity %d: file %u, want %u", i, fi,
			     x->live_fi[i]);
		/* with no writer at work, the lock-free probe's guess is exact */
		th_check_msg(vl_file_probe(r, &x->id[i]) == fi, "probe of identity %d: file %u, "
			     "lookup %u", i, vl_file_probe(r, &x->id[i]), fi);
		x->twins_together += fi != VL_NIL && x->live_fi[twin_of(i)] != VL_NIL;
	}
	/* (dev, ino) of files in the table, born at a time no file was: nothing */
	for (i = 0; i < NID; i += 2) {
		struct vl_ident ghost = x->id[i];
		int err;

		ghost.btime_sec = -1 - (int64_t)i;
		err = vl_file_lookup(r, &ghost, &fi);
		th_check_msg(err == 0 && fi == VL_NIL, "lookup of a ghost of %d: %d, file %u", i,
			     err, fi);
		th_check_msg(vl_file_probe(r, &ghost) == VL_NIL, "probe of a ghost of %d", i);
	}
	/*
	 * the table holds exactly the LIVE files, on unbroken probe runs (each
	 * once: as many entries as LIVE files, and every LIVE file is found)
	 */
	for (j = 0; j < r->hash_cap; j++) {
		uint32_t h, k;

		fi = r->hash[j];
		if (fi == VL_NIL)
			continue;
		nin++;
		th_check_msg(fi < r->file_cap && x->state[fi] == VL_FILE_LIVE,
			     "hash slot %u holds file %u (state %u)", j, fi, x->state[fi]);
		h = home_of(r, vl_file_at(r, fi)->h.ident.dev, vl_file_at(r, fi)->h.ident.ino);
		for (k = h; k != j; k = (k + 1) & (r->hash_cap - 1))
			th_check_msg(r->hash[k] != VL_NIL,
				     "file %u at slot %u, home %u: hole at %u breaks its probe run", fi,
				     j, h, k);
	}
	for (fi = 1; fi < x->hwm; fi++) {
		const struct vl_file *f = vl_file_at(r, fi);

		th_check_msg(f->h.state == x->state[fi], "file %u: state %u, want %u", fi,
			     f->h.state, x->state[fi]);
		th_check_msg(f->h.gen == x->gen[fi], "file %u: gen %u, want %u", fi, f->h.gen,
			     x->gen[fi]);
		th_check(vl_file_ok(r, f));
		nlive += x->state[fi] == VL_FILE_LIVE;
		if (x->state[fi] == VL_FILE_LIVE)
			th_check_msg(same_id(&f->h.ident, &x->id[x->ident_of[fi]]),
				     "file %u: not the identity %d it was created with", fi,
				     x->ident_of[fi]);
	}
	th_check_msg(nin == nlive, "table holds %u files, %u are LIVE", nin, nlive);
	th_check_msg(c->files_used == x->used, "files_used %u, want %u", c->files_used, x->used);
	th_check(c->file_hwm == x->hwm);
}

static uint32_t ftab_create(struct ftab *x, int i)
{
	int fresh = -1;
	uint32_t fi = vl_file_create(x->r, &x->id[i], &fresh);

	if (x->used == x->r->file_cap - 1) {
		th_check_msg(fi == VL_NIL, "create in a full table gave %u", fi);
		return VL_NIL;
	}
	th_check_msg(fi != VL_NIL && fi < x->r->file_cap && fi < 1024, "create: %u", fi);
	th_check_msg(x->state[fi] == VL_FILE_FREE, "create reused busy slot %u", fi);
	th_check_msg(fresh == (fi >= x->hwm), "create: slot %u fresh %d, hwm %u", fi, fresh,
		     x->hwm);
	if (fi >= x->hwm) {
		th_check_msg(fi == x->hwm, "create took slot %u past hwm %u", fi, x->hwm);
		x->hwm++;
	}
	th_check(vl_file_at(x->r, fi)->h.root == VL_NIL);
	th_check(vl_file_at(x->r, fi)->h.nranges == 0);
	th_check(vl_file_at(x->r, fi)->h.npurged == 0);
	th_check(vl_file_at(x->r, fi)->h.gone_since == 0);
	th_check(vl_file_at(x->r, fi)->h.checked_at == 0);
	x->state[fi] = VL_FILE_LIVE;
	x->ident_of[fi] = i;
	x->live_fi[i] = fi;
	x->used++;
	return fi;
}

static void ftab_release(struct ftab *x, uint32_t fi)
{
	int i;

	vl_file_release(x->r, fi);
	if (fi == VL_NIL || fi >= x->hwm || x->state[fi] == VL_FILE_FREE)
		return;
	i = x->ident_of[fi];
	x->twin_left_alone += x->live_fi[twin_of(i)] != VL_NIL;
	x->live_fi[i] = VL_NIL;
	x->state[fi] = VL_FILE_FREE;
	x->gen[fi]++;
	x->used--;
}

START_TEST(test_hash_copy_matches)
{
	struct ftab *x = malloc(sizeof(*x));
	int i;

	ck_assert_ptr_nonnull(x);
	ftab_init(x, 200);
	/* one file in an empty table sits at its home: the test's hash is the table's */
	for (i = 0; i < 6; i++) {
		uint32_t fi = ftab_create(x, i);
		uint32_t h = home_of(x->r, x->id[i].dev, x->id[i].ino);

		ck_assert_msg(x->r->hash[h] == fi,
			      "the test's copy of hash_of() no longer matches pool.c");
		ftab_release(x, fi);
		ftab_verify(x);
	}
	th_region_fini(&x->t);
	free(x);
}
END_TEST

START_TEST(test_file_basic)
{
	struct ftab *x = malloc(sizeof(*x));
	const struct vl_region *r;
	uint32_t a, b, t, fi, h, mask;

	ck_assert_ptr_nonnull(x);
	ftab_init(x, 8);
	r = x->r;
	mask = r->hash_cap - 1;
	/* identities 0 and 1 are twins; 2 is another file, homed right after them */
	ck_assert(x->id[0].dev == x->id[1].dev && x->id[0].ino == x->id[1].ino);
	ck_assert(!same_id(&x->id[0], &x->id[1]));
	h = home_of(r, x->id[0].dev, x->id[0].ino);
	ck_assert_uint_eq(home_of(r, x->id[2].dev, x->id[2].ino), (h + 1) & mask);
	a = ftab_create(x, 0);
	b = ftab_create(x, 2);
	ck_assert_uint_eq(a, 1);
	ck_assert_uint_eq(b, 2);
	ftab_verify(x);
	ck_assert_uint_eq(vl_file_at(r, a)->h.gen, 0);

	/* a twin: another file, in a slot of its own, in the table beside the first */
	t = ftab_create(x, 1);
	ck_assert_uint_eq(t, 3);
	ftab_verify(x);
	ck_assert_uint_eq(r->hash[h], a);
	ck_assert_uint_eq(r->hash[(h + 1) & mask], b);
	ck_assert_uint_eq(r->hash[(h + 2) & mask], t); /* past b, on the same probe run */
	ck_assert_int_eq(vl_file_lookup(r, &x->id[0], &fi), 0);
	ck_assert_uint_eq(fi, a);
	ck_assert_int_eq(vl_file_lookup(r, &x->id[1], &fi), 0);
	ck_assert_uint_eq(fi, t);
	ck_assert(same_id(&vl_file_at(r, t)->h.ident, &x->id[1]));
	ck_assert_uint_eq(vl_file_at(r, t)->h.state, VL_FILE_LIVE);

	/* the first twin goes: the second is pulled back across b, still found */
	ftab_release(x, a);
	ftab_verify(x);
	ck_assert_uint_eq(r->hash[h], t);
	ck_assert_uint_eq(r->hash[(h + 1) & mask], b);
	ck_assert_uint_eq(r->hash[(h + 2) & mask], VL_NIL);
	ck_assert_int_eq(vl_file_lookup(r, &x->id[0], &fi), 0);
	ck_assert_uint_eq(fi, VL_NIL);
	ck_assert_int_eq(vl_file_lookup(r, &x->id[1], &fi), 0);
	ck_assert_uint_eq(fi, t);
	ck_assert_uint_eq(vl_file_at(r, a)->h.gen, 1);
	ck_assert_uint_eq(vl_file_at(r, a)->h.state, VL_FILE_FREE);
	ftab_release(x, a); /* twice: nothing, no second bump */
	ftab_verify(x);
	ck_assert_uint_eq(vl_file_at(r, a)->h.gen, 1);
	vl_file_release(r, VL_NIL);
	vl_file_release(r, r->file_cap + 1);
	ftab_verify(x);

	/* the first identity comes again: the freed slot, its gen kept, twins again */
	fi = ftab_create(x, 0);
	ck_assert_uint_eq(fi, a);
	ck_assert_uint_eq(vl_file_at(r, fi)->h.gen, 1);
	ftab_verify(x);
	ck_assert_uint_eq(r->hash[(h + 2) & mask], a);

	/* now the second twin goes (the one nearer home): the first moves up */
	ftab_release(x, t);
	ftab_verify(x);
	ck_assert_uint_eq(r->hash[h], a);
	ck_assert_uint_eq(r->hash[(h + 2) & mask], VL_NIL);
	ck_assert_uint_eq(vl_file_at(r, t)->h.gen, 1);

	/* and the other file */
	ftab_release(x, b);
	ftab_verify(x);
	ck_assert_uint_eq(vl_file_at(r, b)->h.gen, 1);
	ck_assert_uint_eq(r->hash[h], a);
	ck_assert_uint_eq(r->hash[(h + 1) & mask], VL_NIL);
	ftab_release(x, a);
	ftab_verify(x);
	ck_assert_uint_eq(r->hash[h], VL_NIL);
	ck_assert_uint_eq(r->hdr->c.files_used, 0);
	th_region_fini(&x->t);
	free(x);
}
END_TEST

START_TEST(test_file_full)
{
	struct ftab *x = malloc(sizeof(*x));
	uint32_t i;

	ck_assert_ptr_nonnull(x);
	ftab_init(x, 4);
	ck_assert_uint_eq(x->r->file_cap, 5);
	for (i = 0; i < 4; i++)
		ck_assert_uint_ne(ftab_create(x, (int)i), VL_NIL);
	ck_assert_uint_eq(ftab_create(x, 10), VL_NIL);
	ck_assert_uint_eq(ftab_create(x, 5), VL_NIL); /* a twin needs a slot of its own */
	ftab_verify(x);
	ftab_release(x, 2);
	ck_assert_uint_eq(ftab_create(x, 10), 2);
	ftab_verify(x);
	th_region_fini(&x->t);
	free(x);
}
END_TEST

/* Thousands of random creates and releases, twins among them, on crowded probe runs. */
START_TEST(test_file_random)
{
	static const uint64_t seeds[] = { 5, 6, 7 };
	static const uint32_t sizes[] = { 200, 60, 7 };
	struct ftab *x = malloc(sizeof(*x));
	uint64_t rng = seeds[_i];
	long twin_births = 0;
	int step;

	ck_assert_ptr_nonnull(x);
	ftab_init(x, sizes[_i]);
	for (step = 0; step < 6000; step++) {
		uint32_t op = (uint32_t)th_below(&rng, 100);
		int i = (int)th_below(&rng, NID);
		uint32_t fi = 1 + (uint32_t)th_below(&rng, x->hwm > 1 ? x->hwm - 1 : 1);
		/* the fill drifts: mostly creating in the first half of each 1000 steps */
		uint32_t create_pct = step % 1000 < 500 ? 50 : 25;

		if (op < create_pct) {
			if (x->live_fi[i] == VL_NIL)
				ftab_create(x, i);
		} else if (op < create_pct + 15) {
			/* the twin of a LIVE file is born */
			if (fi < x->hwm && x->state[fi] == VL_FILE_LIVE &&
			    x->live_fi[twin_of(x->ident_of[fi])] == VL_NIL)
				twin_births += ftab_create(x, twin_of(x->ident_of[fi])) != VL_NIL;
		} else if (op < create_pct + 30) {
			/* one of two LIVE twins goes, found by its identity */
			if (fi < x->hwm && x->state[fi] == VL_FILE_LIVE &&
			    x->live_fi[twin_of(x->ident_of[fi])] != VL_NIL) {
				int k = th_below(&rng, 2) ? x->ident_of[fi] : twin_of(x->ident_of[fi]);
				uint32_t found;

				th_check(vl_file_lookup(x->r, &x->id[k], &found) == 0);
				th_check(found == x->live_fi[k]);
				ftab_release(x, found);
			}
		} else if (fi < x->hwm) {
			ftab_release(x, fi);
		}
		ftab_verify(x);
	}
	/* the run met what it was meant to meet */
	ck_assert_int_gt(twin_births, 100);
	ck_assert_int_gt(x->twin_left_alone, 100);
	ck_assert_int_gt(x->twins_together, 1000);
	th_region_fini(&x->t);
	free(x);
}
END_TEST

START_TEST(test_lookup_corrupt)
{
	struct ftab *x = malloc(sizeof(*x));
	const struct vl_region *r;
	struct vl_ident other = th_ident(1, 2);
	uint32_t a, t, fi, h, j;

	ck_assert_ptr_nonnull(x);
	ftab_init(x, 8);
	r = x->r;
	a = ftab_create(x, 0);
	h = home_of(r, x->id[0].dev, x->id[0].ino);
	ck_assert_uint_eq(r->hash[h], a);
	/* the slot points at a file that is not LIVE */
	vl_file_at(r, a)->h.state = VL_FILE_FREE;
	vl_file_seal(r, vl_file_at(r, a));
	ck_assert_int_eq(vl_file_lookup(r, &x->id[0], &fi), -EUCLEAN);
	vl_file_at(r, a)->h.state = VL_FILE_LIVE;
	/* a bad sum */
	ck_assert_int_eq(vl_file_lookup(r, &x->id[0], &fi), -EUCLEAN);
	vl_file_seal(r, vl_file_at(r, a));
	ck_assert_int_eq(vl_file_lookup(r, &x->id[0], &fi), 0);
	ck_assert_uint_eq(fi, a);
	/* a bad record before a twin on its probe run: the twin is not taken on trust */
	t = ftab_create(x, 1);
	ck_assert_uint_eq(r->hash[(h + 1) & (r->hash_cap - 1)], t);
	vl_file_at(r, a)->h.ident.btime_nsec ^= 1;
	ck_assert_int_eq(vl_file_lookup(r, &x->id[1], &fi), -EUCLEAN);
	vl_file_at(r, a)->h.ident.btime_nsec ^= 1;
	ck_assert_int_eq(vl_file_lookup(r, &x->id[1], &fi), 0);
	ck_assert_uint_eq(fi, t);
	/* out of range */
	r->hash[h] = r->file_cap + 3;
	ck_assert_int_eq(vl_file_lookup(r, &x->id[0], &fi), -EUCLEAN);
	/* no empty slot anywhere: the probe ends */
	for (j = 0; j < r->hash_cap; j++)
		r->hash[j] = a;
	ck_assert_int_eq(vl_file_lookup(r, &other, &fi), -EUCLEAN);
	th_region_fini(&x->t);
	free(x);
}
END_TEST

/* ---- vl_commit and vl_pool_rebuild ------------------------------------------------ */

static void pmark(const struct vl_region *r, uint32_t fi, uint64_t s, uint64_t e)
{
	struct vl_change c;
	uint32_t spare = vl_spare_take(r, fi);
	int err;

	if (spare == VL_NIL) /* as ops.c: a kept spare, else a new node */
		spare = vl_node_alloc(r, fi);
	err = vl_ranges_mark(r, th_root(r, fi), fi, s, e, spare, &c);

	ck_assert_int_eq(err, 0);
	if (c.keep_aged)
		c.age = tick();
	vl_commit(r, fi, &c, spare);
}

static int punmark(const struct vl_region *r, uint32_t fi, uint64_t s, uint64_t e)
{
	struct vl_change c;
	uint32_t spare = VL_NIL;
	int err = vl_ranges_unmark(r, th_root(r, fi), fi, s, e, VL_NIL, &c);

	if (err == -ENOMEM) {
		spare = vl_spare_take(r, fi);
		if (spare == VL_NIL)
			spare = vl_node_alloc(r, fi);
		ck_assert_uint_ne(spare, VL_NIL);
		err = vl_ranges_unmark(r, th_root(r, fi), fi, s, e, spare, &c);
	}
	ck_assert_int_eq(err, 0);
	vl_commit(r, fi, &c, spare);
	return c.was_purged;
}

/*
 * The region's oldest unpurged range, as purgers find it with no lock:
 * the head of the file whose published age is the oldest. VL_NIL if none.
 */
static uint32_t oldest_head(const struct vl_region *r)
{
	uint32_t now = test_clock, hwm = vl_file_hwm(r), age = 0, n = VL_NIL;

	for (uint32_t fi = 1; fi < hwm; fi++) {
		const struct vl_file *f = vl_file_at(r, fi);

		if (f->h.state == VL_FILE_LIVE && f->h.oldest != 0 &&
		    (n == VL_NIL || vl_age_older(f->h.oldest, age, now))) {
			age = f->h.oldest;
			n = f->h.lru_head;
		}
	}
	return n;
}

/* The IDLE nodes of fi's chunk: what its next changes take first. */
static uint32_t count_spares(const struct vl_region *r, uint32_t fi)
{
	uint32_t c = vl_file_at(r, fi)->h.chunk, k = 0;

	if (c == VL_NIL || c >= r->node_cap)
		return 0;
	for (uint32_t n = c; n < c + VL_CHUNK; n++)
		k += vl_node_at(r, n)->meta == vl_meta(fi, VL_NODE_IDLE, 0);
	return k;
}

/*
 * Everything about the nodes, ages and totals that commits keep:
 *  - every node slot below the mark in exactly one place: a range in the
 *    tree of a file, IDLE (empty) in a chunk in use, or in a chunk
 *    on the free list (FREE); nodes_used those of chunks in use; a chunk in use holds
 *    one file's nodes;
 *  - each file's age order exactly its unpurged ranges, oldest first
 *    (wrap-aware), linked both ways, lru_tail its last, `oldest` its
 *    head's age (0: none);
 *  - the region's oldest unpurged range is the oldest of the files' heads;
 *  - each file's counts are its tree, the region's totals their sum.
 * (Records that fail their sum are included: rebuild quarantines them,
 * nothing frees their nodes.)
 */
/*
 * The chunks in use below the mark: their IDLE nodes empty
 * (marked 3 in where), none FREE, all naming one file.
 */
static void check_chunks(const struct vl_region *r, unsigned char *where)
{
	for (uint32_t c = VL_CHUNK; c < r->hdr->c.node_hwm; c += VL_CHUNK) {
		uint32_t owner = VL_NIL;

		if (vl_node_state(vl_node_at(r, c)) == VL_NODE_FREE)
			continue;
		for (uint32_t n = c; n < c + VL_CHUNK; n++) {
			const struct vl_node *x = vl_node_at(r, n);

			ck_assert_msg(vl_node_state(x) != VL_NODE_FREE, "node %u FREE in chunk %u in use",
				      n, c);
			ck_assert_msg(owner == VL_NIL || vl_node_file(x) == owner,
				      "chunk %u holds nodes of files %u and %u", c, owner,
				      vl_node_file(x));
			owner = vl_node_file(x);
			if (vl_node_state(x) != VL_NODE_IDLE)
				continue;
			ck_assert_msg(!where[n], "idle node %u seen before", n);
			where[n] = 3;
			ck_assert(x->start == 0 && x->end == 0); /* empty; unsealed */
		}
	}
}

static void check_pool(const struct vl_region *r)
{
	const struct vl_counters *c = &r->hdr->c;
	unsigned char *where = calloc(1, r->node_cap);
	uint32_t now = test_clock, hwm = vl_file_hwm(r), used = 0, ranges = 0, purged = 0, nfree = 0;
	uint32_t gold = 0, best_age = 0, n;
	int any = 0, best = 0;
	struct vl_u128 vb = { 0, 0 }, pb = { 0, 0 };

	ck_assert_ptr_nonnull(where);
	for (uint32_t fi = 1; fi < hwm; fi++) {
		const struct vl_file *f = vl_file_at(r, fi);
		uint32_t nr = 0, np = 0, nunp = 0, k = 0, prev = VL_NIL;
		uint64_t fvb = 0, fpb = 0;

		for (n = vl_rb_first(r, f->h.root); n != VL_NIL; n = vl_rb_next(r, n)) {
			const struct vl_node *x = vl_node_at(r, n);

			ck_assert_msg(n < r->node_cap && !where[n], "node %u: in file %u's tree, and "
				      "seen before (%d)", n, fi, where[n]);
			where[n] = 1;
			ck_assert_uint_eq(vl_node_state(x), VL_NODE_LIVE);
			ck_assert_uint_eq(vl_node_file(x), fi);
			nr++;
			if (vl_node_purged(x)) {
				np++;
				fpb += x->end - x->start;
				continue;
			}
			nunp++;
			fvb += x->end - x->start;
			if (!any || vl_age_older(x->seq, gold, now))
				gold = x->seq;
			any = 1;
		}
		ck_assert_msg(f->h.nranges == nr && f->h.npurged == np && f->h.vbytes == fvb &&
				      f->h.pbytes == fpb,
			      "file %u counts %u %u %" PRIu64 " %" PRIu64 ", its tree %u %u %" PRIu64
			      " %" PRIu64, fi, f->h.nranges, f->h.npurged, f->h.vbytes, f->h.pbytes,
			      nr, np, fvb, fpb);
		ranges += nr;
		purged += np;
		vl_u128_add(&vb, fvb);
		vl_u128_add(&pb, fpb);
		used += nr;
		/* its age order */
		for (n = f->h.lru_head; n != VL_NIL; n = vl_node_at(r, n)->next) {
			const struct vl_node *x = vl_node_at(r, n);

			ck_assert_msg(n < r->node_cap && where[n] == 1,
				      "file %u's age order: node %u not a range of its tree, or twice", fi,
				      n);
			where[n] = 2;
			ck_assert(!vl_node_purged(x));
			ck_assert_uint_eq(x->prev, prev);
			if (prev != VL_NIL) {
				const struct vl_node *y = vl_node_at(r, prev);

				ck_assert_msg(!vl_age_older(x->seq, y->seq, now) &&
						      (x->seq != y->seq || y->end < x->start),
					      "file %u: age %u after %u (now %u)", fi, x->seq, y->seq,
					      now);
			}
			prev = n;
			k++;
		}
		ck_assert_uint_eq(k, nunp);
		ck_assert_uint_eq(f->h.lru_tail, prev);
		ck_assert_uint_eq(f->h.oldest,
				  f->h.lru_head == VL_NIL ? 0 : vl_node_at(r, f->h.lru_head)->seq);
		if (f->h.oldest != 0 && (!best || vl_age_older(f->h.oldest, best_age, now))) {
			best = 1;
			best_age = f->h.oldest;
		}
	}
	check_chunks(r, where);
	for (n = free_head(c); n != VL_NIL; n = vl_node_at(r, n)->next) {
		ck_assert_msg(n < c->node_hwm && n % VL_CHUNK == 0 && !where[n],
			      "free chunk %u not a chunk, or seen before (%d)", n,
			      n < r->node_cap ? where[n] : -1);
		for (uint32_t i = n; i < n + VL_CHUNK; i++) {
			ck_assert_msg(!where[i], "node %u of free chunk %u seen before", i, n);
			where[i] = 4;
			ck_assert(node_is_zero_free(r, i));
		}
	}
	for (n = VL_CHUNK; n < c->node_hwm; n++) {
		ck_assert_msg(where[n], "node %u (meta %#x) is nowhere: lost", n,
			      vl_node_at(r, n)->meta);
		nfree += where[n] == 4;
	}
	ck_assert_uint_eq(th_in_use(r), used);
	ck_assert_uint_eq(c->nodes_used + nfree + VL_CHUNK, c->node_hwm); /* chunks in use */
	ck_assert_uint_eq(c->ranges, ranges);
	ck_assert_uint_eq(c->ranges_purged, purged);
	th_counts_eq(c->volatile_bytes, vb);
	th_counts_eq(c->purged_bytes, pb);
	/* what the purge relies on */
	ck_assert_int_eq(best, any);
	if (any)
		ck_assert_msg(best_age == gold, "the oldest of the files' heads is %u, the oldest "
			      "unpurged range %u", best_age, gold);
	ck_assert(th_sentinel_zero(r));
	free(where);
}

static void ppurge_oldest(const struct vl_region *r)
{
	uint32_t n = oldest_head(r), fi;
	struct vl_change c;

	ck_assert_uint_ne(n, VL_NIL);
	fi = vl_node_file(vl_node_at(r, n));
	ck_assert_int_eq(vl_ranges_purge(r, th_root(r, fi), fi, n, &c), 0);
	vl_commit(r, fi, &c, VL_NIL);
}

/*
 * Ranges near the wrap are brought up to VL_AGE_RESTAMP_MS, from the
 * file's oldest on, in their place: the younger ones keep their ages, and
 * the file publishes its oldest's new age.
 */
START_TEST(test_lru_restamp)
{
	struct th_region t;
	const struct vl_region *r;
	uint32_t fi, h, now;

	th_region_init(&t, 16, 4);
	r = &t.r;
	fi = th_file_new(r, 1, 1);
	test_clock = 100;
	pmark(r, fi, 0, 10);  /* 101 */
	pmark(r, fi, 20, 30); /* 102 */
	pmark(r, fi, 40, 50); /* 103 */
	now = 103 + VL_AGE_RESTAMP_MS; /* 101 and 102 are past the limit, 103 at it */
	ck_assert_uint_eq(vl_lru_restamp(r, fi, now), 2);
	h = vl_file_at(r, fi)->h.lru_head;
	ck_assert_uint_eq(vl_node_at(r, h)->start, 0);
	ck_assert_uint_eq(vl_node_at(r, h)->seq, now - VL_AGE_RESTAMP_MS);
	ck_assert(vl_node_ok(r, vl_node_at(r, h)));
	h = vl_node_at(r, h)->next;
	ck_assert_uint_eq(vl_node_at(r, h)->start, 20);
	ck_assert_uint_eq(vl_node_at(r, h)->seq, now - VL_AGE_RESTAMP_MS);
	h = vl_node_at(r, h)->next;
	ck_assert_uint_eq(vl_node_at(r, h)->start, 40);
	ck_assert_uint_eq(vl_node_at(r, h)->seq, 103);
	ck_assert_uint_eq(vl_file_at(r, fi)->h.oldest, now - VL_AGE_RESTAMP_MS);
	ck_assert_int_eq(vl_lru_check(r, fi), 0);
	/* nothing older than the limit left: nothing to do */
	ck_assert_uint_eq(vl_lru_restamp(r, fi, now), 0);
	check_pool(r);
	th_region_fini(&t);
}
END_TEST

/* A spare that the change does not use is kept by the file for its next change. */
START_TEST(test_commit_keeps_unused_spare)
{
	struct th_region t;
	const struct vl_region *r;
	uint32_t fi;

	th_region_init(&t, 16, 4);
	r = &t.r;
	fi = th_file_new(r, 1, 1);
	pmark(r, fi, 0, 10);
	ck_assert_uint_eq(th_in_use(r), 1);
	ck_assert_uint_eq(count_spares(r, fi), VL_CHUNK - 1);
	pmark(r, fi, 5, 20); /* merges: the spare is not used, but kept */
	ck_assert_uint_eq(th_in_use(r), 1);
	ck_assert_uint_eq(count_spares(r, fi), VL_CHUNK - 1);
	pmark(r, fi, 2, 3); /* inside: a kept one taken and kept again */
	ck_assert_uint_eq(th_in_use(r), 1);
	ck_assert_uint_eq(test_clock, 2);
	check_pool(r);
	pmark(r, fi, 30, 40); /* a kept one used: no new chunk */
	ck_assert_uint_eq(th_in_use(r), 2);
	ck_assert_uint_eq(r->hdr->c.node_hwm, 2 * VL_CHUNK);
	ck_assert_uint_eq(count_spares(r, fi), VL_CHUNK - 2);
	ck_assert_int_eq(punmark(r, fi, 0, 100), 0);
	/* both ranges' nodes kept IDLE in the file's chunk */
	ck_assert_uint_eq(count_spares(r, fi), VL_CHUNK);
	ck_assert_uint_eq(th_in_use(r), 0);
	ck_assert_uint_eq(r->hdr->c.ranges, 0);
	th_count_eq(r->hdr->c.volatile_bytes, 0);
	ck_assert_uint_eq(vl_file_at(r, fi)->h.lru_head, VL_NIL);
	ck_assert_uint_eq(vl_file_at(r, fi)->h.oldest, 0);
	ck_assert_uint_eq(vl_file_at(r, fi)->h.nranges, 0);
	check_pool(r);
	vl_file_release(r, fi); /* its chunk goes with the record */
	ck_assert_uint_eq(free_head(&r->hdr->c), VL_CHUNK);
	th_region_fini(&t);
}
END_TEST

/*
 * A commit under a lock that names a process's slot counts its change in
 * that slot's deltas, on the process's own line, and writes nothing of
 * the shared totals' line until the deltas reach VL_FOLD_RANGES ranges or
 * VL_FOLD_BYTES bytes, when they are folded in; a change of 2^62 bytes
 * goes there at once. Readers that add every slot see the exact totals
 * throughout; a slot's deltas forgotten (a recount) leave the shared ones.
 */
START_TEST(test_commit_counts_in_own_slot)
{
	struct th_region t;
	const struct vl_region *r;
	const struct vl_counters *k;
	struct vl_totals tot;
	uint32_t fi, gi, i;

	th_region_init(&t, 256, 4);
	r = &t.r;
	k = &r->hdr->c;
	fi = th_file_new(r, 1, 1);
	gi = th_file_new(r, 1, 2);
	/* held by the processes of slots 3 and 5 (someone waits on the second) */
	vl_file_at(r, fi)->h.lock.word = VL_TOKEN(3, 1);
	vl_file_at(r, gi)->h.lock.word = VL_TOKEN(5, 7) | VL_LOCK_WAITERS;
	pmark(r, fi, 0, 10);
	pmark(r, gi, 0, 4096);
	ck_assert_uint_eq(k->ranges, 0);
	th_count_eq(k->volatile_bytes, 0);
	ck_assert_int_eq(vl_proc_at(r, 3)->d_vbytes, 10);
	ck_assert_int_eq(vl_proc_at(r, 5)->d_ranges, 1);
	vl_totals_read(r, NULL, &tot);
	ck_assert_uint_eq(tot.ranges, 2);
	th_count_eq(tot.volatile_bytes, 4106);
	vl_totals_read(r, vl_proc_at(r, 3), &tot);
	th_count_eq(tot.volatile_bytes, 10);
	/* purged and unmarked in the same slot: its deltas go down, the shared line still untouched */
	ppurge_oldest(r);
	ck_assert_int_eq(punmark(r, fi, 0, 10), 1);
	th_count_eq(k->volatile_bytes, 0);
	th_count_eq(k->purged_bytes, 0);
	ck_assert_int_eq(vl_proc_at(r, 3)->d_vbytes, 0);
	/* the 64th range in slot 3 folds: the shared totals take them all, the slot is empty */
	for (i = 0; i < VL_FOLD_RANGES; i++)
		pmark(r, fi, 100 * i, 100 * i + 10);
	ck_assert_uint_eq(k->ranges, VL_FOLD_RANGES);
	th_count_eq(k->volatile_bytes, 10 * VL_FOLD_RANGES);
	ck_assert_int_eq(vl_proc_at(r, 3)->d_ranges, 0);
	ck_assert_int_eq(vl_proc_at(r, 3)->d_vbytes, 0);
	/* slot 5 at VL_FOLD_BYTES: all of it folded at once */
	pmark(r, gi, 1u << 30, (1u << 30) + VL_FOLD_BYTES - 4097);
	th_count_eq(k->volatile_bytes, 10 * VL_FOLD_RANGES);
	ck_assert_int_eq(vl_proc_at(r, 5)->d_vbytes, VL_FOLD_BYTES - 1);
	pmark(r, gi, 1u << 31, (1u << 31) + 1);
	th_count_eq(k->volatile_bytes, 10 * VL_FOLD_RANGES + VL_FOLD_BYTES);
	ck_assert_int_eq(vl_proc_at(r, 5)->d_vbytes, 0);
	ck_assert_int_eq(vl_proc_at(r, 5)->d_ranges, 0);
	/* and a change of 2^62 bytes or more goes straight there */
	pmark(r, gi, 1ull << 32, (1ull << 32) + (1ull << 62));
	th_count_eq(k->volatile_bytes, 10 * VL_FOLD_RANGES + VL_FOLD_BYTES + (1ull << 62));
	ck_assert_int_eq(vl_proc_at(r, 5)->d_ranges, 0);
	vl_totals_read(r, NULL, &tot);
	ck_assert_uint_eq(tot.ranges, VL_FOLD_RANGES + 4);
	th_count_eq(tot.volatile_bytes, 10 * VL_FOLD_RANGES + VL_FOLD_BYTES + (1ull << 62));
	pmark(r, gi, 5 << 20, (5 << 20) + 1); /* one in slot 5 */
	ck_assert_int_eq(vl_proc_at(r, 5)->d_vbytes, 1);
	/* with no holder named (an orphaned lock), straight to the shared totals */
	vl_file_at(r, fi)->h.lock.word = VL_TOKEN(VL_NIL, 1);
	pmark(r, fi, 1u << 20, (1u << 20) + 5);
	th_count_eq(k->volatile_bytes, 10 * VL_FOLD_RANGES + VL_FOLD_BYTES + 5 + (1ull << 62));
	vl_totals_forget_slots(r);
	ck_assert_int_eq(vl_proc_at(r, 5)->d_vbytes, 0);
	ck_assert_int_eq(vl_proc_at(r, 5)->d_ranges, 0);
	vl_totals_read(r, NULL, &tot);
	th_counts_eq(tot.volatile_bytes, k->volatile_bytes);
	/* a region whose totals a budget needs exact: every commit counts on the shared line */
	r->hdr->c.shared_totals = 1;
	pmark(r, gi, 6 << 20, (6 << 20) + 3);
	ck_assert_int_eq(vl_proc_at(r, 5)->d_vbytes, 0);
	th_count_eq(k->volatile_bytes, 10 * VL_FOLD_RANGES + VL_FOLD_BYTES + 8 + (1ull << 62));
	th_region_fini(&t);
}
END_TEST

/*
 * Three files marked [0, LLONG_MAX): the region's counts pass 2^64 and
 * stay exact through commits, purges, a file's repair and a rebuild, and
 * come back to 0 when all is unmarked.
 */
START_TEST(test_commit_counts_past_2_64)
{
	const uint64_t len = (uint64_t)INT64_MAX;
	const struct vl_counters *k;
	struct th_region t;
	const struct vl_region *r;
	uint32_t fi[3];
	int i;

	th_region_init(&t, 16, 4);
	r = &t.r;
	k = &r->hdr->c;
	for (i = 0; i < 3; i++) {
		fi[i] = th_file_new(r, 1, 10 + (uint64_t)i);
		pmark(r, fi[i], 0, len);
	}
	/* 3 * (2^63 - 1) = 2^64 + 2^63 - 3 */
	ck_assert_uint_eq(k->volatile_bytes.hi, 1);
	ck_assert_uint_eq(k->volatile_bytes.lo, (1ull << 63) - 3);
	th_count_eq(k->purged_bytes, 0);
	vl_file_repair(r, fi[1], test_clock);
	vl_pool_rebuild(r);
	ck_assert_uint_eq(k->volatile_bytes.hi, 1);
	ck_assert_uint_eq(k->volatile_bytes.lo, (1ull << 63) - 3);
	ppurge_oldest(r);
	th_count_eq(k->volatile_bytes, 2 * len);
	th_count_eq(k->purged_bytes, len);
	ppurge_oldest(r);
	ppurge_oldest(r);
	th_count_eq(k->volatile_bytes, 0);
	ck_assert_uint_eq(k->purged_bytes.hi, 1);
	ck_assert_uint_eq(k->purged_bytes.lo, (1ull << 63) - 3);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(punmark(r, fi[i], 0, len), 1);
	th_count_eq(k->volatile_bytes, 0);
	th_count_eq(k->purged_bytes, 0);
	th_region_fini(&t);
}
END_TEST

/* ---- lock-free probes racing creates and releases ------------------------------ */

/*
 * The protocol of ops.c, in threads: a writer makes and frees records of
 * a few identities (a release holds the file's lock and then the region
 * lock, a create the region lock alone); readers probe with no lock, lock the
 * slot guessed, and check it. A guess that passes the check must be the
 * record the locked lookup finds, and stay so while its lock is held.
 * Under ThreadSanitizer this is also a race check of the probe's reads.
 */
#define RACE_IDS 6
#define RACE_VERIFIED 1000 /* per reader */
#define RACE_CHANGES 100   /* records the writer makes, and lets go, at least */

struct probe_race {
	struct th_region t;
	const struct vl_region *r;
	pthread_mutex_t region; /* stands for the region lock */
	pthread_mutex_t file[64]; /* and these for the file locks, by slot */
	struct vl_ident id[RACE_IDS];
	int stop;
	long creates, releases, verified, misses, wrong;
};

static void race_create(struct probe_race *x, int k)
{
	const struct vl_region *r = x->r;
	uint32_t fi;
	int fresh;

	pthread_mutex_lock(&x->region);
	if (vl_file_lookup(r, &x->id[k], &fi) == 0 && fi == VL_NIL &&
	    (fi = vl_file_take(r, &fresh)) != VL_NIL) {
		vl_file_publish(r, fi, &x->id[k]);
		__atomic_add_fetch(&x->creates, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&x->region);
}

static void race_release(struct probe_race *x, int k)
{
	const struct vl_region *r = x->r;
	uint32_t fi, again;

	pthread_mutex_lock(&x->region);
	if (vl_file_lookup(r, &x->id[k], &fi) != 0)
		fi = VL_NIL;
	pthread_mutex_unlock(&x->region);
	if (fi == VL_NIL)
		return;
	pthread_mutex_lock(&x->file[fi]);
	pthread_mutex_lock(&x->region);
	if (vl_file_lookup(r, &x->id[k], &again) == 0 && again == fi) {
		vl_file_release(r, fi);
		__atomic_add_fetch(&x->releases, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&x->region);
	pthread_mutex_unlock(&x->file[fi]);
}

static void *race_writer(void *arg)
{
	struct probe_race *x = arg;
	uint64_t rng = 7;

	while (!__atomic_load_n(&x->stop, __ATOMIC_RELAXED)) {
		int k = (int)th_below(&rng, RACE_IDS);

		if (th_below(&rng, 2))
			race_create(x, k);
		else
			race_release(x, k);
	}
	return NULL;
}

/* The writer has not yet made and let go enough records for the race to have been run. */
static int writer_short(struct probe_race *x)
{
	return __atomic_load_n(&x->creates, __ATOMIC_RELAXED) <= RACE_CHANGES ||
	       __atomic_load_n(&x->releases, __ATOMIC_RELAXED) <= RACE_CHANGES;
}

static void *race_reader(void *arg)
{
	struct probe_race *x = arg;
	const struct vl_region *r = x->r;
	uint64_t rng = (uint64_t)(uintptr_t)&rng;
	long verified = 0, misses = 0, wrong = 0;
	/*
	 * Gives up (and the test fails on its count) only long after a loaded
	 * machine needs to get there: under ASan beside other tests and busy
	 * loops the writer may get little CPU. Below the case's timeout (30 s).
	 */
	time_t give_up = time(NULL) + 25;

	/*
	 * Run on until the writer has been seen at work, and has done its
	 * share: on two cores the readers can take both and finish a fixed
	 * count of probes, all misses, before the writer has made its first
	 * record (or, loaded, its hundredth: "verified 2000, creates 8,
	 * releases 5").
	 */
	for (long i = 0; i < 200000 || verified < RACE_VERIFIED || writer_short(x); i++) {
		int k = (int)th_below(&rng, RACE_IDS);
		uint32_t fi = vl_file_probe(r, &x->id[k]), found;
		struct vl_file *f;

		if ((i & 1023) == 0 && time(NULL) > give_up)
			break;
		if (fi == VL_NIL) {
			misses++;
			continue;
		}
		f = vl_file_at(r, fi);
		pthread_mutex_lock(&x->file[fi]);
		if (__atomic_load_n(&f->h.state, __ATOMIC_ACQUIRE) == VL_FILE_LIVE &&
		    vl_file_ok(r, f) && vl_ident_same(&f->h.ident, &x->id[k])) {
			verified++;
			pthread_mutex_lock(&x->region);
			if (vl_file_lookup(r, &x->id[k], &found) != 0 || found != fi ||
			    f->h.state != VL_FILE_LIVE)
				wrong++;
			pthread_mutex_unlock(&x->region);
		}
		pthread_mutex_unlock(&x->file[fi]);
	}
	pthread_mutex_lock(&x->region);
	x->verified += verified;
	x->misses += misses;
	x->wrong += wrong;
	pthread_mutex_unlock(&x->region);
	return NULL;
}

START_TEST(test_probe_race)
{
	struct probe_race *x = calloc(1, sizeof(*x));
	pthread_t w, rd[2];

	ck_assert_ptr_nonnull(x);
	th_region_init(&x->t, 16, 8); /* fewer slots than identities: slots are reused */
	x->r = &x->t.r;
	pthread_mutex_init(&x->region, NULL);
	for (size_t i = 0; i < sizeof(x->file) / sizeof(x->file[0]); i++)
		pthread_mutex_init(&x->file[i], NULL);
	ck_assert_uint_le(x->r->file_cap, sizeof(x->file) / sizeof(x->file[0]));
	for (int k = 0; k < RACE_IDS; k++)
		x->id[k] = th_ident(3, (uint64_t)(k % 3) + 1); /* twins: same (dev, ino) */
	for (int k = 3; k < RACE_IDS; k++)
		x->id[k].btime_sec += 1000;
	ck_assert_int_eq(pthread_create(&w, NULL, race_writer, x), 0);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&rd[i], NULL, race_reader, x), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(rd[i], NULL);
	__atomic_store_n(&x->stop, 1, __ATOMIC_RELAXED);
	pthread_join(w, NULL);
	ck_assert_msg(x->wrong == 0, "%ld probes passed the check under the file lock but were "
		      "not the record the locked lookup finds", x->wrong);
	/* the race was run: records came and went under the readers */
	ck_assert_msg(x->verified >= 2 * RACE_VERIFIED && x->creates > RACE_CHANGES &&
			      x->releases > RACE_CHANGES,
		      "verified %ld, creates %ld, releases %ld", x->verified, x->creates,
		      x->releases);
	th_region_fini(&x->t);
	free(x);
}
END_TEST

/* ---- a file's chunk: its spares ------------------------------------------- */

/* A node of fi's, made IDLE again as a change that did not use it would. */
static uint32_t keep_new_spare(const struct vl_region *r, uint32_t fi)
{
	uint32_t n = vl_node_alloc(r, fi);

	ck_assert_uint_ne(n, VL_NIL);
	vl_spare_keep(r, fi, n);
	return n;
}

START_TEST(test_spare_keep_take)
{
	struct th_region t;
	const struct vl_region *r;
	uint32_t a, b, n, m;

	th_region_init(&t, 16, 4);
	r = &t.r;
	a = th_file_new(r, 1, 1);
	b = th_file_new(r, 1, 2);
	ck_assert_uint_eq(vl_spare_take(r, a), VL_NIL); /* a new record has no chunk */
	n = keep_new_spare(r, a);
	ck_assert_uint_eq(vl_file_at(r, a)->h.chunk, n);
	ck_assert_uint_eq(count_spares(r, a), VL_CHUNK);
	ck_assert_uint_eq(vl_spare_take(r, b), VL_NIL);
	for (uint32_t k = 0; k < VL_CHUNK; k++) /* its chunk's nodes, lowest first */
		ck_assert_uint_eq(vl_spare_take(r, a), n + k);
	ck_assert_uint_eq(vl_spare_take(r, a), VL_NIL);
	ck_assert_uint_eq(th_in_use(r), VL_CHUNK);
	for (uint32_t k = 0; k < VL_CHUNK; k++)
		vl_spare_keep(r, a, n + k);
	ck_assert_uint_eq(th_in_use(r), 0);
	ck_assert_uint_eq(count_spares(r, a), VL_CHUNK); /* its chunk stays its own */

	/* what a scribble could leave there is never handed out */
	vl_file_at(r, a)->h.chunk = r->node_cap + 5;
	ck_assert_uint_eq(vl_spare_take(r, a), VL_NIL);
	vl_file_at(r, a)->h.chunk = n + 1; /* not a chunk's first slot */
	ck_assert_uint_eq(vl_spare_take(r, a), VL_NIL);
	m = keep_new_spare(r, b);
	vl_file_at(r, a)->h.chunk = m; /* b's */
	ck_assert_uint_eq(vl_spare_take(r, a), VL_NIL);
	ck_assert_uint_eq(vl_spare_take(r, b), m);
	vl_file_at(r, a)->h.chunk = n;
	pmark(r, a, 0, 10); /* a LIVE node, in its chunk */
	ck_assert_uint_eq(vl_file_at(r, a)->h.root, n);
	ck_assert_uint_eq(vl_spare_take(r, a), n + 1); /* passed over */
	/*
	 * An IDLE node of a whose sum fails is a's all the same: handed out
	 * (every field of a spare is written before it is used), not lost.
	 */
	vl_node_at(r, n + 2)->seq = 77;
	ck_assert_uint_eq(vl_spare_take(r, a), n + 2);
	th_region_fini(&t);
}
END_TEST

START_TEST(test_spare_used)
{
	struct vl_change c;

	memset(&c, 0, sizeof(c));
	ck_assert(!vl_spare_used(&c, VL_NIL));
	ck_assert(!vl_spare_used(&c, 5));
	c.keep = 5;
	ck_assert(!vl_spare_used(&c, 5)); /* an old range absorbed the new one */
	c.keep_new = 1;
	ck_assert(vl_spare_used(&c, 5));
	memset(&c, 0, sizeof(c));
	c.split = 5;
	ck_assert(vl_spare_used(&c, 5));
	ck_assert(!vl_spare_used(&c, 6));
}
END_TEST

START_TEST(test_spare_freed_with_record)
{
	struct th_region t;
	const struct vl_region *r;
	uint32_t a, n;

	th_region_init(&t, 16, 4);
	r = &t.r;
	a = th_file_new(r, 1, 1);
	n = keep_new_spare(r, a);
	ck_assert_uint_eq(th_in_use(r), 0);
	vl_file_release(r, a);
	ck_assert_uint_eq(free_head(&r->hdr->c), n); /* the chunk went back */
	for (uint32_t k = 0; k < VL_CHUNK; k++)
		ck_assert(node_is_zero_free(r, n + k));
	/* the slot's next file starts with none */
	ck_assert_uint_eq(th_file_new(r, 1, 9), a);
	ck_assert_uint_eq(vl_file_at(r, a)->h.chunk, VL_NIL);
	check_pool(r);
	th_region_fini(&t);
}
END_TEST

/*
 * A dead holder of the file's lock: the repair makes the PENDING nodes it
 * held IDLE again, in the file's chunk, which stays the file's.
 */
START_TEST(test_spare_freed_by_repair)
{
	struct th_region t;
	const struct vl_region *r;
	uint32_t a, n;

	th_region_init(&t, 16, 4);
	r = &t.r;
	a = th_file_new(r, 1, 1);
	pmark(r, a, 0, 10);
	n = vl_spare_take(r, a); /* held by a holder that dies */
	ck_assert_uint_ne(n, VL_NIL);
	ck_assert_uint_eq(th_in_use(r), 2);
	vl_file_repair(r, a, test_clock);
	ck_assert_uint_eq(vl_node_state(vl_node_at(r, n)), VL_NODE_IDLE);
	ck_assert_uint_eq(th_in_use(r), 1);
	ck_assert_uint_eq(vl_file_at(r, a)->h.nranges, 1);
	ck_assert_uint_eq(vl_file_at(r, a)->h.chunk, VL_CHUNK);
	ck_assert_uint_eq(count_spares(r, a), VL_CHUNK - 1);
	check_pool(r);
	/* a region rebuild leaves them: its file's lock holder may take one any time */
	vl_pool_rebuild(r);
	ck_assert_uint_eq(vl_spare_take(r, a), n);
	th_region_fini(&t);
}
END_TEST

/* A full region: the last nodes are anyone's, IDLE ones of any chunk included. */
START_TEST(test_spare_steal)
{
	struct th_region t;
	const struct vl_region *r;
	uint32_t a, b, c, n, m, filled;

	th_region_init(&t, 8, 4);
	r = &t.r;
	a = th_file_new(r, 1, 1);
	b = th_file_new(r, 1, 2);
	c = th_file_new(r, 1, 3);
	ck_assert_uint_eq(vl_spare_steal(r, c), VL_NIL); /* nobody keeps one */
	n = keep_new_spare(r, a);
	m = keep_new_spare(r, b);
	ck_assert_uint_ne(n / VL_CHUNK, m / VL_CHUNK); /* two files, two chunks */
	for (uint64_t k = 0;; k++) { /* fill the region with ranges of c */
		uint32_t x = vl_node_alloc(r, c);
		struct vl_change ch;

		if (x == VL_NIL)
			break;
		ck_assert_int_eq(vl_ranges_mark(r, th_root(r, c), c, 20 * k, 20 * k + 10, x, &ch),
				 0);
		vl_commit(r, c, &ch, x);
	}
	filled = vl_file_at(r, c)->h.nranges;
	/* the sentinel's chunk and a's and b's */
	ck_assert_uint_eq(filled, r->node_cap - 3 * VL_CHUNK);
	ck_assert_uint_eq(vl_spare_steal(r, c), n); /* the lowest IDLE node */
	ck_assert_uint_eq(vl_node_file(vl_node_at(r, n)), c);
	ck_assert_uint_eq(vl_node_state(vl_node_at(r, n)), VL_NODE_PENDING);
	ck_assert_uint_eq(vl_node_at(r, n)->check, vl_node_sum(r, vl_node_at(r, n)));
	ck_assert_uint_eq(vl_spare_take(r, a), n + 1); /* a's others are still a's */
	/* the stolen node serves its new file */
	{
		struct vl_change ch;

		ck_assert_int_eq(vl_ranges_mark(r, th_root(r, c), c, 1 << 20, 2 << 20, n, &ch), 0);
		ck_assert(vl_spare_used(&ch, n));
		vl_commit(r, c, &ch, n);
	}
	ck_assert_uint_eq(vl_file_at(r, c)->h.nranges, filled + 1);
	for (uint32_t k = 0; k < 2 * VL_CHUNK - 2; k++)
		ck_assert_uint_ne(vl_spare_steal(r, c), VL_NIL);
	ck_assert_uint_eq(vl_spare_steal(r, c), VL_NIL);
	th_region_fini(&t);
}
END_TEST

/*
 * A full region's repair looks only at the files holding PENDING nodes:
 * each once, in slot order, never the caller's own, never a slot a
 * scribbled meta names beyond the table, and no more than asked for.
 */
START_TEST(test_pending_owners)
{
	struct th_region t;
	const struct vl_region *r;
	uint32_t a, b, n, m, owner[4];

	th_region_init(&t, 8, 4);
	r = &t.r;
	a = th_file_new(r, 1, 1);
	b = th_file_new(r, 1, 2);
	ck_assert_uint_eq(vl_pending_owners(r, 0, owner, 4), 0);
	ck_assert_uint_ne(vl_node_alloc(r, b), VL_NIL);
	m = vl_node_alloc(r, a);
	ck_assert_uint_ne(m, VL_NIL);
	n = vl_node_alloc(r, b);
	ck_assert_uint_ne(n, VL_NIL);
	ck_assert_uint_eq(vl_pending_owners(r, 0, owner, 4), 2);
	ck_assert_uint_eq(owner[0], b);
	ck_assert_uint_eq(owner[1], a);
	ck_assert_uint_eq(vl_pending_owners(r, b, owner, 4), 1);
	ck_assert_uint_eq(owner[0], a);
	ck_assert_uint_eq(vl_pending_owners(r, 0, owner, 1), 1);
	ck_assert_uint_eq(owner[0], b);
	vl_node_at(r, m)->meta = vl_meta(r->file_cap, VL_NODE_PENDING, 0);
	ck_assert_uint_eq(vl_pending_owners(r, 0, owner, 4), 1);
	ck_assert_uint_eq(owner[0], b);
	vl_node_at(r, n)->meta = vl_meta(a, VL_NODE_IDLE, 0);
	ck_assert_uint_eq(vl_pending_owners(r, 0, owner, 4), 1);
	th_region_fini(&t);
}
END_TEST

/*
 * The look starts where the last one that found all it could take
 * stopped: files that stay PENDING owners in the first slots cannot be
 * its whole answer every time. A scribbled start is the first slot.
 */
START_TEST(test_pending_owners_rotate)
{
	struct th_region t;
	const struct vl_region *r;
	uint32_t a, b, owner[4];

	th_region_init(&t, 8, 4);
	r = &t.r;
	a = th_file_new(r, 1, 1);
	b = th_file_new(r, 1, 2);
	ck_assert_uint_ne(vl_node_alloc(r, b), VL_NIL);
	ck_assert_uint_ne(vl_node_alloc(r, a), VL_NIL);
	ck_assert_uint_eq(vl_pending_owners(r, 0, owner, 1), 1);
	ck_assert_uint_eq(owner[0], b);
	ck_assert_uint_eq(vl_pending_owners(r, 0, owner, 1), 1);
	ck_assert_uint_eq(owner[0], a);
	ck_assert_uint_eq(vl_pending_owners(r, 0, owner, 1), 1);
	ck_assert_uint_eq(owner[0], b);
	/* not all it could take: the start stays, the look goes round to it */
	ck_assert_uint_eq(vl_pending_owners(r, 0, owner, 4), 2);
	ck_assert_uint_eq(owner[0], a);
	ck_assert_uint_eq(owner[1], b);
	vl_counters(r)->repair_from = 0xffffffffu;
	ck_assert_uint_eq(vl_pending_owners(r, 0, owner, 1), 1);
	ck_assert_uint_eq(owner[0], b);
	th_region_fini(&t);
}
END_TEST

/*
 * A change that lets nodes go keeps them IDLE in their chunks: a file's
 * chunk stays its own; another chunk left unused goes back to the region,
 * or becomes the file's when the file's own has nothing left.
 */
START_TEST(test_chunk_kept_or_back)
{
	struct th_region t;
	const struct vl_region *r;
	uint32_t fi, first, k;
	struct vl_change c;

	th_region_init(&t, 32, 4);
	r = &t.r;
	fi = th_file_new(r, 1, 1);
	for (k = 0; k < 3 * VL_CHUNK; k++)
		pmark(r, fi, 20 * k, 20 * k + 10);
	first = VL_CHUNK;
	ck_assert_uint_eq(r->hdr->c.node_hwm, 4 * VL_CHUNK);
	ck_assert_uint_eq(vl_file_at(r, fi)->h.chunk, 3 * VL_CHUNK); /* the last one taken */
	ck_assert_uint_eq(count_spares(r, fi), 0);
	check_pool(r);
	/* one range of the first chunk goes: the file's own chunk has nothing, so this one is it */
	ck_assert_int_eq(punmark(r, fi, 0, 10), 0);
	ck_assert_uint_eq(vl_file_at(r, fi)->h.chunk, first);
	ck_assert_uint_eq(count_spares(r, fi), 1);
	/* the second chunk's four go: unused, and not the file's, so back to the region */
	ck_assert_int_eq(punmark(r, fi, 20 * VL_CHUNK, 20 * 2 * VL_CHUNK), 0);
	ck_assert_uint_eq(free_head(&r->hdr->c), 2 * VL_CHUNK);
	ck_assert_uint_eq(vl_file_at(r, fi)->h.chunk, first);
	check_pool(r);
	/* all of them, with an unused spare: the file keeps one chunk, the other goes back */
	k = vl_node_alloc(r, fi);
	ck_assert_uint_eq(k, first);
	ck_assert_int_eq(vl_ranges_clear(r, th_root(r, fi), fi, &c), 0);
	vl_commit(r, fi, &c, k);
	ck_assert_uint_eq(th_in_use(r), 0);
	k = vl_file_at(r, fi)->h.chunk;
	ck_assert(k == first || k == 3 * VL_CHUNK);
	ck_assert_uint_eq(count_spares(r, fi), VL_CHUNK);
	ck_assert_uint_eq(free_head(&r->hdr->c), k == first ? 3 * VL_CHUNK : first);
	check_pool(r);
	th_region_fini(&t);
}
END_TEST

/*
 * An UNMARK takes a node of the file's chunk only when it splits a range
 * (vl_ranges_unmark_taking): before anything changes, and none otherwise.
 */
START_TEST(test_unmark_takes_spare_to_split)
{
	struct th_region t;
	const struct vl_region *r;
	uint32_t fi, spare;
	struct vl_change c;

	th_region_init(&t, 16, 4);
	r = &t.r;
	fi = th_file_new(r, 1, 1);
	pmark(r, fi, 0, 100);
	pmark(r, fi, 200, 300);
	ck_assert_uint_eq(count_spares(r, fi), VL_CHUNK - 2);
	/* the end of a range: no split, no spare */
	ck_assert_int_eq(vl_ranges_unmark_taking(r, th_root(r, fi), fi, 250, 300, &spare, &c), 0);
	ck_assert_uint_eq(spare, VL_NIL);
	vl_commit(r, fi, &c, spare);
	ck_assert_uint_eq(count_spares(r, fi), VL_CHUNK - 2);
	/* the middle: a spare of its chunk, in the tree as the right half */
	ck_assert_int_eq(vl_ranges_unmark_taking(r, th_root(r, fi), fi, 40, 60, &spare, &c), 0);
	ck_assert_uint_ne(spare, VL_NIL);
	ck_assert_uint_eq(spare / VL_CHUNK, vl_file_at(r, fi)->h.chunk / VL_CHUNK);
	ck_assert_uint_eq(c.split, spare);
	vl_commit(r, fi, &c, spare);
	ck_assert_uint_eq(vl_file_at(r, fi)->h.nranges, 3);
	ck_assert_uint_eq(count_spares(r, fi), VL_CHUNK - 3);
	/* the chunk spent: -ENOMEM, nothing changed */
	pmark(r, fi, 400, 500);
	ck_assert_uint_eq(count_spares(r, fi), 0);
	ck_assert_int_eq(vl_ranges_unmark_taking(r, th_root(r, fi), fi, 410, 420, &spare, &c),
			 -ENOMEM);
	ck_assert_uint_eq(spare, VL_NIL);
	ck_assert_uint_eq(vl_file_at(r, fi)->h.nranges, 4);
	check_pool(r);
	th_region_fini(&t);
}
END_TEST

/*
 * The point of the chunks: two files changed in turn never have nodes in
 * one 64-byte line of the region (each chunk is three whole lines).
 */
START_TEST(test_chunks_share_no_line)
{
	struct th_region t;
	const struct vl_region *r;
	uint32_t a, b;

	th_region_init(&t, 256, 4);
	r = &t.r;
	a = th_file_new(r, 1, 1);
	b = th_file_new(r, 1, 2);
	ck_assert_uint_eq(r->hdr->geo.nodes_off % 64, 0);
	for (uint64_t k = 0; k < 40; k++) {
		pmark(r, a, 20 * k, 20 * k + 10);
		pmark(r, b, 20 * k, 20 * k + 10);
		if (k % 3 == 2) { /* nodes come and go, merged, split, freed */
			pmark(r, a, 20 * k - 15, 20 * k + 5);
			ck_assert_int_eq(punmark(r, b, 20 * k - 38, 20 * k - 33), 0);
		}
	}
	check_pool(r);
	for (uint32_t n = 1; n + 1 < r->hdr->c.node_hwm; n++) {
		const struct vl_node *x = vl_node_at(r, n), *y = vl_node_at(r, n + 1);
		uint64_t end = r->hdr->geo.nodes_off + (uint64_t)(n + 1) * sizeof(*x) - 1;

		/* neighbours on one line: n's last byte and n + 1's first */
		if (end / 64 != (end + 1) / 64 || vl_node_state(x) == VL_NODE_FREE ||
		    vl_node_state(y) == VL_NODE_FREE)
			continue;
		ck_assert_msg(vl_node_file(x) == vl_node_file(y),
			      "node %u (file %u) and node %u (file %u) share a cache line", n,
			      vl_node_file(x), n + 1, vl_node_file(y));
	}
	th_region_fini(&t);
}
END_TEST

/* A create cut after the fresh slot's lock was initialised, before publishing. */
START_TEST(test_rebuild_unpublished_slot)
{
	struct th_region t;
	const struct vl_region *r;
	uint32_t a, fi;
	int fresh;

	th_region_init(&t, 16, 4);
	r = &t.r;
	a = th_file_new(r, 1, 1);
	fi = vl_file_take(r, &fresh);
	ck_assert_int_eq(fresh, 1);
	memset(&vl_file_at(r, fi)->h.lock, 0x5a, sizeof(struct vl_lock));
	ck_assert_uint_eq(vl_file_probe(r, &(struct vl_ident){ 0 }), VL_NIL);
	vl_pool_rebuild(r);
	ck_assert_uint_eq(r->hdr->c.files_used, 1);
	ck_assert_uint_eq(vl_file_take(r, &fresh), fi);
	ck_assert_msg(fresh == 1, "the slot must be handed out as new, its lock cleared again");
	(void)a;
	th_region_fini(&t);
}
END_TEST

struct pool_snap {
	struct vl_counters c;
	struct vl_node nodes[512]; /* rebuild touches none */
	uint32_t file_state[64];
	uint32_t file_gen[64];
	unsigned char file_bad[64]; /* a record rebuild must quarantine */
};

static void take_snap(const struct vl_region *r, struct pool_snap *s)
{
	uint32_t i;

	memset(s, 0, sizeof(*s));
	s->c = r->hdr->c;
	ck_assert_uint_le(r->node_cap, 512);
	ck_assert_uint_le(r->hdr->c.file_hwm, 64);
	memcpy(s->nodes, r->nodes, r->node_cap * sizeof(struct vl_node));
	for (i = 1; i < r->hdr->c.file_hwm; i++) {
		s->file_state[i] = vl_file_at(r, i)->h.state;
		s->file_gen[i] = vl_file_at(r, i)->h.gen;
	}
}

/*
 * Scribble on everything the region lock guards (a holder died mid-way):
 * the file table, its free list and count. The rest is no longer the
 * region lock's to guard, and a scribble there is not rebuild's to mend.
 */
static void scramble(const struct vl_region *r, uint64_t *rng)
{
	struct vl_counters *c = &r->hdr->c;
	uint32_t i;

	c->file_free = (uint32_t)th_rand(rng) % r->file_cap;
	c->files_used = 12345;
	for (i = 0; i < r->hash_cap; i++)
		r->hash[i] = (uint32_t)th_below(rng, 3) == 0 ? (uint32_t)th_rand(rng) : 0;
	for (i = 1; i < r->file_cap; i++)
		vl_file_at(r, i)->h.next_free = (uint32_t)th_rand(rng);
}

/* The sums of the counters of the sound LIVE file records. */
static void record_totals(const struct vl_region *r, struct vl_counters *sum)
{
	uint32_t i;

	memset(sum, 0, sizeof(*sum));
	for (i = 1; i < r->hdr->c.file_hwm; i++) {
		const struct vl_file *f = vl_file_at(r, i);

		if (!vl_file_ok(r, f) || f->h.state != VL_FILE_LIVE)
			continue;
		sum->ranges += f->h.nranges;
		sum->ranges_purged += f->h.npurged;
		vl_u128_add(&sum->volatile_bytes, f->h.vbytes);
		vl_u128_add(&sum->purged_bytes, f->h.pbytes);
	}
}

/* Every sound LIVE file's counters say what its tree holds. */
static void check_file_counters(const struct vl_region *r)
{
	uint32_t i;

	for (i = 1; i < r->hdr->c.file_hwm; i++) {
		const struct vl_file *f = vl_file_at(r, i);
		uint64_t vb = 0, pb = 0;
		uint32_t n, np = 0;
		long cnt;

		if (!vl_file_ok(r, f) || f->h.state != VL_FILE_LIVE)
			continue;
		cnt = vl_rb_check(r, f->h.root, i);
		ck_assert_int_eq(cnt, f->h.nranges);
		for (n = vl_rb_first(r, f->h.root); n != VL_NIL; n = vl_rb_next(r, n)) {
			const struct vl_node *x = vl_node_at(r, n);

			if (vl_node_purged(x)) {
				pb += x->end - x->start;
				np++;
			} else {
				vb += x->end - x->start;
			}
		}
		ck_assert_uint_eq(f->h.npurged, np);
		ck_assert_uint_eq(f->h.vbytes, vb);
		ck_assert_uint_eq(f->h.pbytes, pb);
	}
}

/*
 * What rebuild now guarantees: the file table, its free list and count
 * made again from the records; the nodes, the allocator's counters, the
 * ages and the totals left exactly as they were.
 */
static void check_rebuilt(const struct vl_region *r, const struct pool_snap *s)
{
	const struct vl_counters *c = &r->hdr->c;
	uint32_t n, i, expect_next, nlive = 0, nin = 0;

	ck_assert(memcmp(s->nodes, r->nodes, r->node_cap * sizeof(struct vl_node)) == 0);
	ck_assert_uint_eq(c->node_top, s->c.node_top);
	ck_assert_uint_eq(c->node_hwm, s->c.node_hwm);
	ck_assert_uint_eq(c->nodes_used, s->c.nodes_used);
	ck_assert_uint_eq(c->age_clock, s->c.age_clock);
	ck_assert_uint_eq(c->ranges, s->c.ranges);
	ck_assert_uint_eq(c->ranges_purged, s->c.ranges_purged);
	th_counts_eq(c->volatile_bytes, s->c.volatile_bytes);
	th_counts_eq(c->purged_bytes, s->c.purged_bytes);
	ck_assert_uint_eq(c->files_used, s->c.files_used);
	ck_assert_uint_eq(c->file_hwm, s->c.file_hwm);
	/* files: sound LIVE ones found as themselves; states and gens kept */
	for (i = 1; i < c->file_hwm; i++) {
		const struct vl_file *f = vl_file_at(r, i);
		uint32_t fi;

		if (s->file_bad[i]) {
			ck_assert_msg(!vl_file_ok(r, f), "quarantined file %u was resealed", i);
			continue;
		}
		ck_assert_uint_eq(f->h.state, s->file_state[i]);
		ck_assert_uint_eq(f->h.gen, s->file_gen[i]);
		ck_assert(vl_file_ok(r, f));
		if (f->h.state == VL_FILE_FREE)
			continue;
		ck_assert_uint_eq(f->h.state, VL_FILE_LIVE);
		nlive++;
		ck_assert_int_eq(vl_file_lookup(r, &f->h.ident, &fi), 0);
		ck_assert_uint_eq(fi, i);
	}
	/* the table: exactly those, each once */
	for (i = 0; i < r->hash_cap; i++) {
		uint32_t fi = r->hash[i], j;

		if (fi == VL_NIL)
			continue;
		nin++;
		ck_assert_uint_lt(fi, c->file_hwm);
		ck_assert_msg(!s->file_bad[fi], "quarantined file %u is in the table", fi);
		ck_assert_uint_eq(vl_file_at(r, fi)->h.state, VL_FILE_LIVE);
		for (j = 0; j < i; j++)
			ck_assert_uint_ne(r->hash[j], fi);
	}
	ck_assert_uint_eq(nin, nlive);
	/* the free list: every sound FREE slot, lowest first; never a quarantined one */
	expect_next = 1;
	for (n = c->file_free; n != VL_NIL; n = vl_file_at(r, n)->h.next_free) {
		while (expect_next < c->file_hwm &&
		       (s->file_state[expect_next] != VL_FILE_FREE || s->file_bad[expect_next]))
			expect_next++;
		ck_assert_uint_eq(n, expect_next);
		expect_next++;
	}
	while (expect_next < c->file_hwm &&
	       (s->file_state[expect_next] != VL_FILE_FREE || s->file_bad[expect_next]))
		expect_next++;
	ck_assert_uint_eq(expect_next, c->file_hwm);
	ck_assert(th_sentinel_zero(r));
}

/*
 * Files 1..6 with ranges (some purged, none split) and, in slot 8, a twin
 * of file 3 (same dev and ino, born later) with ranges too: two files on
 * one probe run. File 7 released. seq starts at `seq0`.
 */
#define NFILES 8
#define TWIN_OF 2 /* files[7] is the twin of files[2] */

static struct vl_ident pool_ident(int f)
{
	struct vl_ident id = th_ident(0x801, 500 + (uint64_t)(f == NFILES - 1 ? TWIN_OF : f));

	if (f == NFILES - 1)
		id.btime_sec += 86400;
	return id;
}

static void build_pool(const struct vl_region *r, uint32_t seq0, uint64_t *rng, uint32_t *files)
{
	uint32_t f, i;

	test_clock = seq0;
	for (f = 0; f < NFILES; f++) {
		struct vl_ident id = pool_ident((int)f);
		int fresh;

		files[f] = vl_file_create(r, &id, &fresh);
		ck_assert_uint_eq(files[f], f + 1);
	}
	for (i = 0; i < 140; i++) {
		uint32_t k = (uint32_t)th_below(rng, 7);
		uint32_t fi = files[k == 6 ? NFILES - 1 : k];
		uint64_t s = th_below(rng, 40) * 10;

		pmark(r, fi, s, s + 1 + th_below(rng, 9));
		if (i % 5 == 4)
			ppurge_oldest(r);
		if (i % 7 == 6) /* trims and removals only: no split */
			punmark(r, fi, s, s + 10);
	}
	/* leave holes in the used slots */
	punmark(r, files[0], 0, 120);
	punmark(r, files[1], 200, 300);
	vl_file_release(r, files[6]);
}

START_TEST(test_rebuild)
{
	static const uint32_t seq0[] = { 0, 0xffffffc0u };
	struct th_region t;
	const struct vl_region *r;
	struct pool_snap *s = malloc(sizeof(*s));
	struct vl_counters sum;
	struct vl_ident id, twin;
	uint32_t files[NFILES], fi;
	uint64_t rng = 31337 + (uint64_t)_i;

	ck_assert_ptr_nonnull(s);
	th_region_init(&t, 400, 16);
	r = &t.r;
	build_pool(r, seq0[_i], &rng, files);
	ck_assert_uint_gt(r->hdr->c.ranges_purged, 3);
	ck_assert_uint_gt(r->hdr->c.ranges - r->hdr->c.ranges_purged, 10);
	ck_assert_uint_lt(th_in_use(r) + VL_CHUNK, r->hdr->c.node_hwm); /* some unused slots */
	if (seq0[_i] != 0) /* the ages wrapped around 2^32 during the build */
		ck_assert_uint_lt(test_clock, 1000);
	/* the twins: both LIVE, both with ranges, each found as itself */
	id = pool_ident(TWIN_OF);
	twin = pool_ident(NFILES - 1);
	ck_assert_uint_gt(vl_file_at(r, files[TWIN_OF])->h.nranges, 0);
	ck_assert_uint_gt(vl_file_at(r, files[NFILES - 1])->h.nranges, 0);
	ck_assert_int_eq(vl_file_lookup(r, &id, &fi), 0);
	ck_assert_uint_eq(fi, files[TWIN_OF]);
	ck_assert_int_eq(vl_file_lookup(r, &twin, &fi), 0);
	ck_assert_uint_eq(fi, files[NFILES - 1]);
	/* what commit kept: each file's counters are its tree, the region's their sum */
	check_file_counters(r);
	record_totals(r, &sum);
	ck_assert_uint_eq(r->hdr->c.ranges, sum.ranges);
	ck_assert_uint_eq(r->hdr->c.ranges_purged, sum.ranges_purged);
	th_counts_eq(r->hdr->c.volatile_bytes, sum.volatile_bytes);
	th_counts_eq(r->hdr->c.purged_bytes, sum.purged_bytes);
	check_pool(r);
	take_snap(r, s);
	scramble(r, &rng);
	vl_pool_rebuild(r);
	check_rebuilt(r, s);
	check_file_counters(r);
	ck_assert_int_eq(vl_file_lookup(r, &id, &fi), 0);
	ck_assert_uint_eq(fi, files[TWIN_OF]);
	ck_assert_int_eq(vl_file_lookup(r, &twin, &fi), 0);
	ck_assert_uint_eq(fi, files[NFILES - 1]);
	/* a second rebuild of a sound pool changes nothing */
	vl_pool_rebuild(r);
	check_rebuilt(r, s);
	check_pool(r);
	/* and it works on: the free list's head is handed out first (once the file's chunk is spent) */
	{
		uint32_t head = free_head(&r->hdr->c), n;

		vl_file_at(r, files[0])->h.chunk = VL_NIL;
		n = vl_node_alloc(r, files[0]);
		ck_assert_uint_ne(n, VL_NIL);
		ck_assert_uint_eq(vl_node_at(r, n)->meta, vl_meta(files[0], VL_NODE_PENDING, 0));
		if (head != VL_NIL)
			ck_assert_uint_eq(n, head);
	}
	ck_assert_uint_eq(r->hdr->c.file_free, files[6]);
	ck_assert_uint_eq(th_file_new(r, 0x802, 1), files[6]);
	free(s);
	th_region_fini(&t);
}
END_TEST

/*
 * A holder of file v's lock died mid-change: its age order, `oldest`,
 * spare chain and counts are scribbled, and PENDING nodes of it (the
 * dead holder's spares) lie about. The region's totals agree with the
 * file's (wrong) counts, as they do when a change died before its
 * commit. vl_file_repair makes the age order again from the ranges'
 * ages (wrap-aware: the ages wrap during the build of case 1), frees the
 * PENDING nodes, recounts the file and corrects the region's totals by
 * the difference; the tree keeps its ranges.
 */
START_TEST(test_repair_age_order)
{
	static const uint32_t seq0[] = { 0, 0xffffffc0u };
	static struct vl_node before[512];
	struct th_region t;
	const struct vl_region *r;
	uint32_t files[NFILES], v, n, orphan[2], nr;
	uint64_t rng = 8080 + (uint64_t)_i;
	struct vl_file *f;
	long k;

	th_region_init(&t, 400, 16);
	r = &t.r;
	build_pool(r, seq0[_i], &rng, files);
	if (seq0[_i] != 0)
		ck_assert_uint_lt(test_clock, 1000);
	check_pool(r);
	for (int vi = 0; vi < NFILES; vi++) {
		v = files[vi];
		f = vl_file_at(r, v);
		if (f->h.state != VL_FILE_LIVE)
			continue;
		nr = f->h.nranges;
		memcpy(before, r->nodes, r->node_cap * sizeof(struct vl_node));
		/* the dead holder's spares, and a chunk that is its, or a scribble */
		orphan[0] = vl_node_alloc(r, v);
		orphan[1] = vl_node_alloc(r, v);
		ck_assert(orphan[0] != VL_NIL && orphan[1] != VL_NIL);
		if (th_below(&rng, 2))
			f->h.chunk = (uint32_t)th_rand(&rng);
		for (n = vl_rb_first(r, f->h.root); n != VL_NIL; n = vl_rb_next(r, n)) {
			vl_node_at(r, n)->prev = (uint32_t)th_rand(&rng) % r->node_cap;
			vl_node_at(r, n)->next = (uint32_t)th_rand(&rng);
		}
		f->h.lru_head = (uint32_t)th_rand(&rng) % r->node_cap;
		f->h.lru_tail = (uint32_t)th_rand(&rng);
		f->h.oldest = (uint32_t)th_rand(&rng);
		/* counts off, and the region's with them */
		f->h.nranges += 3;
		f->h.npurged += 1;
		f->h.vbytes += 1000;
		f->h.pbytes += 77;
		r->hdr->c.ranges += 3;
		r->hdr->c.ranges_purged += 1;
		vl_u128_add(&r->hdr->c.volatile_bytes, 1000);
		vl_u128_add(&r->hdr->c.purged_bytes, 77);

		vl_file_repair(r, v, test_clock);
		ck_assert_uint_eq(f->h.nranges, nr);
		/* the spares it held are unused again: IDLE, or their chunk back in the region */
		ck_assert_uint_ne(vl_node_state(vl_node_at(r, orphan[0])), VL_NODE_PENDING);
		ck_assert_uint_ne(vl_node_state(vl_node_at(r, orphan[1])), VL_NODE_PENDING);
		ck_assert_uint_eq(th_in_use(r), r->hdr->c.ranges);
		k = vl_rb_check(r, f->h.root, v);
		ck_assert_int_eq(k, nr);
		/* the same ranges, with their ages */
		for (n = vl_rb_first(r, f->h.root); n != VL_NIL; n = vl_rb_next(r, n)) {
			const struct vl_node *x = vl_node_at(r, n);

			ck_assert_uint_eq(x->start, before[n].start);
			ck_assert_uint_eq(x->end, before[n].end);
			ck_assert_uint_eq(x->seq, before[n].seq);
			ck_assert_uint_eq(x->meta, before[n].meta);
		}
		check_pool(r);
	}
	/* and it works on */
	for (int i = 0; i < 20; i++)
		ppurge_oldest(r);
	pmark(r, files[1], 1000, 1010);
	check_pool(r);
	th_region_fini(&t);
}
END_TEST

/* Leave out the file slot ctx points at (vl_pick_oldest's callback). */
static int leave_one(void *ctx, uint32_t fi)
{
	return fi == *(const uint32_t *)ctx;
}

/* A live file of the pool whose age order holds two unpurged ranges at least. */
static uint32_t file_with_order(const struct vl_region *r, const uint32_t *files)
{
	for (int i = 0; i < NFILES; i++) {
		const struct vl_file *f = vl_file_at(r, files[i]);

		if (f->h.state == VL_FILE_LIVE && f->h.lru_head != VL_NIL &&
		    f->h.lru_head != f->h.lru_tail)
			return files[i];
	}
	ck_abort_msg("no file with two unpurged ranges");
	return VL_NIL;
}

/*
 * What steers a purge and no sum covers (DESIGN 10):
 * vl_lru_check says 0 on every file a commit left; 1 after a scribble of
 * `oldest` alone, which it mends (the head's age, or 0 with no range);
 * -EUCLEAN when an end of the age order is not the file's own or a link
 * next to an end is cut, which vl_file_repair mends. vl_pick_oldest
 * passes over a free record with an age, and over what leave() says.
 */
START_TEST(test_lru_check)
{
	struct th_region t;
	const struct vl_region *r;
	uint32_t files[NFILES], v, w, h, tl, age, second, picked, other, none = VL_NIL;
	uint64_t rng = 4242;
	struct vl_file *f;

	th_region_init(&t, 400, 16);
	r = &t.r;
	build_pool(r, 0, &rng, files);
	check_pool(r);
	for (int i = 0; i < NFILES; i++)
		ck_assert_int_eq(vl_lru_check(r, files[i]), 0);
	v = file_with_order(r, files);
	f = vl_file_at(r, v);
	h = f->h.lru_head;
	tl = f->h.lru_tail;

	/* oldest alone: mended from the head */
	f->h.oldest = 1;
	ck_assert_int_eq(vl_lru_check(r, v), 1);
	ck_assert_uint_eq(f->h.oldest, vl_node_at(r, h)->seq);
	ck_assert_int_eq(vl_lru_check(r, v), 0);

	/* a record with no unpurged range and an age: mended to 0 */
	punmark(r, files[5], 0, 1000);
	ck_assert_uint_eq(vl_file_at(r, files[5])->h.lru_head, VL_NIL);
	vl_file_at(r, files[5])->h.oldest = 1;
	ck_assert_int_eq(vl_lru_check(r, files[5]), 1);
	ck_assert_uint_eq(vl_file_at(r, files[5])->h.oldest, 0);
	check_pool(r);

	/* a head that is another file's range */
	w = files[0] == v ? files[2] : files[0];
	pmark(r, w, 5000, 5010);
	other = vl_file_at(r, w)->h.lru_tail;
	ck_assert(vl_range_ok(r, other, w));
	f->h.lru_head = other;
	ck_assert_int_eq(vl_lru_check(r, v), -EUCLEAN);
	vl_file_repair(r, v, test_clock);
	ck_assert_int_eq(vl_lru_check(r, v), 0);
	ck_assert_uint_eq(f->h.lru_head, h);
	check_pool(r);

	/* a tail out of the table, as one random flip left it */
	f->h.lru_tail = 0x4000000;
	ck_assert_int_eq(vl_lru_check(r, v), -EUCLEAN);
	vl_file_repair(r, v, test_clock);
	ck_assert_int_eq(vl_lru_check(r, v), 0);
	ck_assert_uint_eq(f->h.lru_tail, tl);
	check_pool(r);

	/* the chain cut right after the head */
	vl_node_at(r, h)->next = VL_NIL;
	ck_assert_int_eq(vl_lru_check(r, v), -EUCLEAN);
	vl_file_repair(r, v, test_clock);
	ck_assert_int_eq(vl_lru_check(r, v), 0);
	check_pool(r);

	/* both ends gone while the counts say there are unpurged ranges */
	f->h.lru_head = f->h.lru_tail = VL_NIL;
	f->h.oldest = 0;
	ck_assert_int_eq(vl_lru_check(r, v), -EUCLEAN);
	vl_file_repair(r, v, test_clock);
	ck_assert_int_eq(vl_lru_check(r, v), 0);
	check_pool(r);

	/* a head flagged purged */
	h = f->h.lru_head;
	vl_node_at(r, h)->meta |= VL_META_PURGED;
	vl_node_seal(r, vl_node_at(r, h));
	ck_assert_int_eq(vl_lru_check(r, v), -EUCLEAN);
	vl_node_at(r, h)->meta &= ~VL_META_PURGED;
	vl_node_seal(r, vl_node_at(r, h));
	ck_assert_int_eq(vl_lru_check(r, v), 0);

	/* the choice: a free record's age is no one's; leave() is heeded */
	picked = vl_pick_oldest(r, test_clock, NULL, NULL, VL_NIL, &age, &second);
	ck_assert_uint_ne(picked, VL_NIL);
	ck_assert_uint_eq(age, vl_file_at(r, picked)->h.oldest);
	ck_assert_uint_eq(vl_file_at(r, files[6])->h.state, VL_FILE_FREE);
	/* the oldest an age reads */
	vl_file_at(r, files[6])->h.oldest = test_clock - VL_AGE_PAST_MS;
	ck_assert_uint_eq(vl_pick_oldest(r, test_clock, NULL, NULL, VL_NIL, &age, &second), picked);
	vl_file_at(r, files[6])->h.oldest = 0;
	w = vl_pick_oldest(r, test_clock, leave_one, &picked, VL_NIL, &age, &second);
	ck_assert_uint_ne(w, picked);
	ck_assert_uint_ne(w, VL_NIL);
	ck_assert_uint_eq(vl_pick_oldest(r, test_clock, leave_one, &none, VL_NIL, &age, &second), picked);
	th_region_fini(&t);
}
END_TEST

/*
 * A scribbled end of one file's age order names another file's range: the
 * commits of the first file's changes write no link of the other's (its
 * order stays whole, its check says 0); the first file's check finds its
 * own order wrong, and a repair mends it.
 */
START_TEST(test_lru_no_spread)
{
	struct th_region t;
	const struct vl_region *r;
	uint32_t files[NFILES], v, w, x, head;
	uint64_t rng = 777;

	th_region_init(&t, 400, 16);
	r = &t.r;
	build_pool(r, 0, &rng, files);
	v = file_with_order(r, files);
	w = files[0] == v ? files[2] : files[0];
	pmark(r, w, 6000, 6010);
	pmark(r, w, 6100, 6110);
	x = vl_file_at(r, w)->h.lru_tail;
	head = vl_file_at(r, w)->h.lru_head;
	ck_assert_int_eq(vl_lru_check(r, w), 0);

	/* v's tail is w's tail: v's next MARK appends after it */
	vl_file_at(r, v)->h.lru_tail = x;
	pmark(r, v, 7000, 7010);
	ck_assert_uint_eq(vl_node_at(r, x)->next, VL_NIL);
	ck_assert_int_eq(vl_lru_check(r, w), 0);
	ck_assert_uint_eq(vl_file_at(r, w)->h.lru_head, head);
	ck_assert_int_eq(vl_lru_check(r, v), -EUCLEAN);
	vl_file_repair(r, v, test_clock);
	ck_assert_int_eq(vl_lru_check(r, v), 0);
	check_pool(r);

	/* v's head is w's tail: an UNMARK of v's oldest unlinks it */
	head = vl_file_at(r, v)->h.lru_head;
	vl_node_at(r, head)->prev = x;
	vl_lru_unlink(r, v, head);
	ck_assert_uint_eq(vl_node_at(r, x)->next, VL_NIL);
	ck_assert_int_eq(vl_lru_check(r, w), 0);
	vl_file_repair(r, v, test_clock);
	ck_assert_int_eq(vl_lru_check(r, v), 0);
	check_pool(r);
	th_region_fini(&t);
}
END_TEST

/* The halves of a split share an age: the repaired age order keeps them side by side. */
START_TEST(test_repair_with_splits)
{
	struct th_region t;
	const struct vl_region *r;
	struct pool_snap *s = malloc(sizeof(*s));
	uint32_t fi, gi, n, want[6], k = 0;
	uint64_t rng = 5;

	ck_assert_ptr_nonnull(s);
	th_region_init(&t, 64, 4);
	r = &t.r;
	fi = th_file_new(r, 1, 1);
	gi = th_file_new(r, 1, 2);
	pmark(r, fi, 0, 100);
	pmark(r, gi, 0, 100);
	pmark(r, fi, 200, 300);
	ck_assert_int_eq(punmark(r, fi, 40, 50), 0);
	ck_assert_int_eq(punmark(r, fi, 10, 20), 0);
	ck_assert_int_eq(punmark(r, fi, 70, 80), 0);
	pmark(r, gi, 150, 160);
	ck_assert_int_eq(punmark(r, fi, 250, 260), 0);
	check_pool(r);
	for (n = vl_file_at(r, fi)->h.lru_head; n != VL_NIL; n = vl_node_at(r, n)->next) {
		ck_assert_uint_lt(k, 6);
		want[k++] = n;
	}
	ck_assert_uint_eq(k, 6);
	take_snap(r, s);
	scramble(r, &rng);
	vl_pool_rebuild(r);
	check_rebuilt(r, s);
	/* scribble fi's age order away, and repair it */
	for (n = 1; n < r->hdr->c.node_hwm; n++)
		if (vl_node_file(vl_node_at(r, n)) == fi)
			vl_node_at(r, n)->prev = vl_node_at(r, n)->next = (uint32_t)th_rand(&rng);
	vl_file_at(r, fi)->h.lru_head = vl_file_at(r, fi)->h.lru_tail = VL_NIL;
	vl_file_repair(r, fi, test_clock);
	check_pool(r);
	k = 0;
	for (n = vl_file_at(r, fi)->h.lru_head; n != VL_NIL; n = vl_node_at(r, n)->next)
		ck_assert_uint_eq(vl_node_at(r, n)->start, vl_node_at(r, want[k++])->start);
	ck_assert_uint_eq(k, 6);
	free(s);
	th_region_fini(&t);
}
END_TEST

/*
 * The file mark out of range is clamped, not trusted, and raised past
 * the records above it (a live one left out of the table would have its
 * UNMARK say 0 over purged bytes: fuzz-region's regress-rebuild-hwm-lowered).
 * The node mark is the allocator's (no lock): rebuild leaves it, and an
 * allocator that finds it out of range hands out no new slot (freed ones
 * still).
 */
START_TEST(test_rebuild_clamps_hwm)
{
	struct th_region t;
	const struct vl_region *r;
	uint32_t fi;

	th_region_init(&t, 32, 4);
	r = &t.r;
	fi = th_file_new(r, 1, 1);
	pmark(r, fi, 0, 10);
	pmark(r, fi, 20, 30);
	r->hdr->c.node_hwm = UINT32_MAX;
	r->hdr->c.file_hwm = 0;
	vl_pool_rebuild(r);
	ck_assert_uint_eq(r->hdr->c.node_hwm, UINT32_MAX);
	ck_assert_uint_eq(r->hdr->c.file_hwm, 2);
	ck_assert_uint_eq(th_in_use(r), 2);
	vl_file_at(r, fi)->h.chunk = VL_NIL; /* its IDLE nodes aside: the region's alone */
	ck_assert_uint_eq(vl_node_alloc(r, fi), VL_NIL);
	/* the record above the mark is found again; the totals are left */
	ck_assert_uint_eq(r->hdr->c.files_used, 1);
	ck_assert_uint_eq(r->hdr->c.ranges, 2);
	th_count_eq(r->hdr->c.volatile_bytes, 20);
	r->hdr->c.file_hwm = 2;
	r->hdr->c.node_hwm = 2 * VL_CHUNK; /* the true marks again */
	vl_pool_rebuild(r);
	ck_assert_uint_eq(r->hdr->c.files_used, 1);
	ck_assert_uint_eq(r->hdr->c.ranges, 2);
	th_count_eq(r->hdr->c.volatile_bytes, 20);
	check_pool(r);
	ck_assert(th_sentinel_zero(r));
	th_region_fini(&t);
}
END_TEST

/*
 * File slots at or above the true high-water mark were never used: all
 * zero, their locks never initialised. A create cut off right after it
 * took such a slot (file_hwm++ done, nothing written yet), or a scribbled
 * file_hwm, must not make rebuild lose them: they are handed out again,
 * as fresh slots (*fresh set, so the caller initialises the lock), and
 * the region can still be filled to its capacity.
 */
START_TEST(test_rebuild_never_used_file_slots)
{
	struct th_region t;
	const struct vl_region *r;
	struct vl_ident id;
	uint32_t fi, a, i;
	int fresh;

	th_region_init(&t, 32, 4);
	r = &t.r;
	a = th_file_new(r, 1, 1);
	pmark(r, a, 0, 10);
	if (_i == 0)
		r->hdr->c.file_hwm++; /* the create that took slot 2 died here */
	else
		r->hdr->c.file_hwm = UINT32_MAX;
	vl_pool_rebuild(r);
	ck_assert_uint_eq(r->hdr->c.ranges, 1);
	th_count_eq(r->hdr->c.volatile_bytes, 10);
	ck_assert_msg(r->hdr->c.files_used == 1,
		      "files_used %u after rebuild: never-used (all zero) file slots were "
		      "quarantined as records that fail their sum",
		      r->hdr->c.files_used);
	for (i = 2; i < r->file_cap; i++) {
		id = th_ident(2, i);
		fresh = -1;
		fi = vl_file_create(r, &id, &fresh);
		ck_assert_msg(fi != VL_NIL, "file %u of %u: the region is full after rebuild", i,
			      r->file_cap - 1);
		ck_assert_uint_ne(fi, a);
		ck_assert_msg(fresh == 1, "never-used slot %u handed out with fresh %d: its lock "
			      "would not be initialised", fi, fresh);
	}
	th_region_fini(&t);
}
END_TEST

/*
 * A holder of a file's lock half way through a change, its commit still
 * to come: rebuild (the file table's) leaves the totals alone, and the
 * file's repair counts the tree as it is and corrects the region's
 * totals by the difference.
 */
START_TEST(test_repair_corrects_totals)
{
	struct th_region t;
	const struct vl_region *r;
	struct vl_change c;
	uint32_t fi, gi, spare;
	struct vl_u128 vb;

	th_region_init(&t, 32, 4);
	r = &t.r;
	fi = th_file_new(r, 1, 1);
	gi = th_file_new(r, 1, 2);
	pmark(r, fi, 0, 10);
	pmark(r, fi, 20, 30);
	pmark(r, gi, 0, 100);
	ppurge_oldest(r);
	vb = r->hdr->c.volatile_bytes;
	th_count_eq(vb, 110);
	th_count_eq(r->hdr->c.purged_bytes, 10);
	/* the ranges change, the commit has not come yet */
	spare = vl_node_alloc(r, fi);
	ck_assert_int_eq(vl_ranges_mark(r, th_root(r, fi), fi, 40, 50, spare, &c), 0);
	ck_assert_int_eq(vl_ranges_unmark(r, th_root(r, fi), fi, 20, 25, VL_NIL, &c), 0);
	vl_pool_rebuild(r);
	ck_assert_uint_eq(r->hdr->c.ranges, 3);
	ck_assert_uint_eq(r->hdr->c.ranges_purged, 1);
	th_counts_eq(r->hdr->c.volatile_bytes, vb);
	th_count_eq(r->hdr->c.purged_bytes, 10);
	ck_assert_uint_eq(th_in_use(r), 4); /* the nodes are all there */
	ck_assert_uint_eq(r->hdr->c.files_used, 2);
	/* [0,10)P [25,30)U [40,50)U: the file and the region count them */
	vl_file_repair(r, fi, test_clock);
	ck_assert_uint_eq(vl_file_at(r, fi)->h.nranges, 3);
	ck_assert_uint_eq(vl_file_at(r, fi)->h.vbytes, 15);
	ck_assert_uint_eq(r->hdr->c.ranges, 4);
	ck_assert_uint_eq(r->hdr->c.ranges_purged, 1);
	th_count_eq(r->hdr->c.volatile_bytes, 115);
	th_count_eq(r->hdr->c.purged_bytes, 10);
	check_pool(r);
	/* a second repair of a sound file changes nothing */
	vl_file_repair(r, fi, test_clock);
	th_count_eq(r->hdr->c.volatile_bytes, 115);
	check_pool(r);
	th_region_fini(&t);
}
END_TEST

/*
 * A release cut off after writing the state (and maybe the gen), before
 * the sum: the record is read as it now is, resealed, and placed by it.
 * A change of gen alone likewise.
 */
START_TEST(test_rebuild_torn_state)
{
	struct th_region t;
	const struct vl_region *r;
	struct pool_snap *s = malloc(sizeof(*s));
	uint32_t files[NFILES], e[3], fi, i;
	struct vl_ident eid[3], grown;
	uint64_t rng = 777;
	struct vl_file *f;

	ck_assert_ptr_nonnull(s);
	th_region_init(&t, 400, 16);
	r = &t.r;
	build_pool(r, 100, &rng, files);
	/* three empty files, as a file is before its release */
	for (i = 0; i < 3; i++) {
		int fresh;

		eid[i] = th_ident(0x803, 10 + i);
		e[i] = vl_file_create(r, &eid[i], &fresh);
		ck_assert_uint_ne(e[i], VL_NIL);
	}
	ck_assert_uint_eq(e[0], files[6]); /* the freed slot first, gen 1 */
	ck_assert_uint_eq(vl_file_at(r, e[0])->h.gen, 1);
	/* the third has been through many files: its gen is about to wrap */
	vl_file_at(r, e[2])->h.gen = UINT32_MAX;
	vl_file_seal(r, vl_file_at(r, e[2]));
	take_snap(r, s);

	/* e0: state written, gen not yet: rebuild finishes the release, gen++ */
	f = vl_file_at(r, e[0]);
	f->h.state = VL_FILE_FREE;
	ck_assert(!vl_file_ok(r, f));
	s->file_state[e[0]] = VL_FILE_FREE;
	s->file_gen[e[0]]++;
	s->c.files_used--;
	/* e1: state and gen written */
	f = vl_file_at(r, e[1]);
	f->h.state = VL_FILE_FREE;
	f->h.gen++;
	ck_assert(!vl_file_ok(r, f));
	s->file_state[e[1]] = VL_FILE_FREE;
	s->file_gen[e[1]]++;
	s->c.files_used--;
	/* e2: state and gen written, the gen wrapped to 0 */
	f = vl_file_at(r, e[2]);
	f->h.state = VL_FILE_FREE;
	f->h.gen++;
	ck_assert_uint_eq(f->h.gen, 0);
	ck_assert(!vl_file_ok(r, f));
	s->file_state[e[2]] = VL_FILE_FREE;
	s->file_gen[e[2]] = 0;
	s->c.files_used--;
	/* files[3], LIVE with ranges: a new gen, the sum not yet */
	f = vl_file_at(r, files[3]);
	ck_assert_uint_gt(f->h.nranges, 0);
	f->h.gen++;
	ck_assert(!vl_file_ok(r, f));
	s->file_gen[files[3]]++;

	scramble(r, &rng);
	vl_pool_rebuild(r);
	check_rebuilt(r, s);
	for (i = 0; i < 3; i++) {
		ck_assert(vl_file_ok(r, vl_file_at(r, e[i])));
		ck_assert_int_eq(vl_file_lookup(r, &eid[i], &fi), 0);
		ck_assert_uint_eq(fi, VL_NIL);
	}
	/* the LIVE one with its new gen: in the table, its ranges counted */
	f = vl_file_at(r, files[3]);
	ck_assert(vl_file_ok(r, f));
	ck_assert_uint_eq(f->h.state, VL_FILE_LIVE);
	ck_assert_uint_eq(f->h.gen, s->file_gen[files[3]]);
	grown = pool_ident(3);
	ck_assert_int_eq(vl_file_lookup(r, &grown, &fi), 0);
	ck_assert_uint_eq(fi, files[3]);
	ck_assert_uint_eq(r->hdr->c.ranges, s->c.ranges);
	/* sealed now: a second rebuild changes nothing */
	vl_pool_rebuild(r);
	check_rebuilt(r, s);
	/* the freed slots are handed out, lowest first, with the gens they had */
	ck_assert(e[0] < e[1] && e[1] < e[2]);
	for (i = 0; i < 3; i++) {
		fi = th_file_new(r, 0x804, 1 + i);
		ck_assert_uint_eq(fi, e[i]);
		ck_assert_uint_eq(vl_file_at(r, fi)->h.gen, s->file_gen[fi]);
	}
	fi = th_file_new(r, 0x804, 9); /* then a fresh slot */
	ck_assert_uint_eq(fi, r->hdr->c.file_hwm - 1);
	ck_assert_uint_gt(fi, e[2]);
	free(s);
	th_region_fini(&t);
}
END_TEST

/*
 * A record whose sum fails for any other reason is quarantined: its
 * identity cannot be trusted, so it is neither found nor reused, and it
 * and its ranges are left as they are.
 */
START_TEST(test_rebuild_quarantine)
{
	struct th_region t;
	const struct vl_region *r;
	struct pool_snap *s = malloc(sizeof(*s));
	static struct vl_node before[512];
	static unsigned char mine[512];
	struct vl_file rec;
	struct vl_ident old, now, id;
	uint32_t files[NFILES], v, fi, i, n, made = 0, free_slots = 0;
	uint64_t rng = 4000 + (uint64_t)_i;
	struct vl_file *f;
	int was_live, nmine = 0;

	ck_assert_ptr_nonnull(s);
	th_region_init(&t, 400, 16);
	r = &t.r;
	build_pool(r, 0, &rng, files);
	switch (_i) {
	case 0: /* the twin, identity scribbled */
	case 1:
		v = files[NFILES - 1];
		break;
	case 2: /* the first twin, identity scribbled */
		v = files[TWIN_OF];
		break;
	case 3: /* a state that does not exist */
	case 4: /* a gen two ahead: not a torn change */
	case 5: /* a gen one behind */
		v = files[3 + (uint32_t)_i % 3];
		break;
	case 6: /* a scribbled check word */
		v = files[5];
		break;
	default: /* a free slot, identity scribbled */
		v = files[6];
		break;
	}
	f = vl_file_at(r, v);
	was_live = f->h.state == VL_FILE_LIVE;
	ck_assert(vl_file_ok(r, f));
	ck_assert_int_eq(was_live, _i != 7);
	if (was_live)
		ck_assert_uint_gt(f->h.nranges, 0);
	old = f->h.ident;
	take_snap(r, s);
	/* the nodes that name it */
	for (n = 1; n < r->hdr->c.node_hwm; n++) {
		before[n] = *vl_node_at(r, n);
		mine[n] = vl_node_state(vl_node_at(r, n)) == VL_NODE_LIVE &&
			  vl_node_file(vl_node_at(r, n)) == v;
		nmine += mine[n];
	}
	ck_assert_int_eq(nmine, was_live ? (int)f->h.nranges : 0);

	switch (_i) {
	case 0:
		f->h.ident.ino ^= 0x10;
		break;
	case 1:
		f->h.ident.dev ^= 1;
		break;
	case 2:
		f->h.ident.btime_nsec ^= 1;
		break;
	case 3:
		f->h.state = 2;
		break;
	case 4:
		f->h.gen += 2;
		break;
	case 5:
		f->h.gen -= 1;
		break;
	case 6:
		f->h.check ^= 0x40;
		break;
	default:
		f->h.ident.dev ^= 1;
		break;
	}
	ck_assert(!vl_file_ok(r, f));
	now = f->h.ident;
	s->file_bad[v] = 1;
	if (!was_live)
		s->c.files_used++; /* a slot that is not free */

	scramble(r, &rng);
	rec = *f;
	vl_pool_rebuild(r);
	check_rebuilt(r, s);
	/* left as it is, byte for byte */
	ck_assert(memcmp(&rec, f, sizeof(rec)) == 0);
	/* found under neither identity */
	ck_assert_int_eq(vl_file_lookup(r, &old, &fi), 0);
	ck_assert_uint_eq(fi, VL_NIL);
	ck_assert_int_eq(vl_file_lookup(r, &now, &fi), 0);
	ck_assert_uint_eq(fi, VL_NIL);
	/* while its twin, on the same probe run, is */
	if (v == files[NFILES - 1] || v == files[TWIN_OF]) {
		id = pool_ident(v == files[TWIN_OF] ? NFILES - 1 : TWIN_OF);
		ck_assert_int_eq(vl_file_lookup(r, &id, &fi), 0);
		ck_assert_uint_eq(fi, v == files[TWIN_OF] ? files[NFILES - 1] : files[TWIN_OF]);
	}
	/* its nodes are untouched (but for the LRU links) and still count as used */
	for (n = 1; n < r->hdr->c.node_hwm; n++) {
		const struct vl_node *x = vl_node_at(r, n);

		if (!mine[n])
			continue;
		ck_assert_uint_eq(x->start, before[n].start);
		ck_assert_uint_eq(x->end, before[n].end);
		ck_assert_uint_eq(x->seq, before[n].seq);
		ck_assert_uint_eq(x->check, before[n].check);
		ck_assert_uint_eq(x->left, before[n].left);
		ck_assert_uint_eq(x->right, before[n].right);
		ck_assert_uint_eq(x->parent, before[n].parent);
		ck_assert_uint_eq(x->meta, before[n].meta);
		ck_assert(vl_node_ok(r, x));
	}
	if (was_live)
		ck_assert_int_eq(vl_rb_check(r, f->h.root, v), nmine);
	/* a second rebuild: still quarantined, still untouched */
	vl_pool_rebuild(r);
	check_rebuilt(r, s);
	ck_assert(memcmp(&rec, f, sizeof(rec)) == 0);
	/* its slot is never handed out: fill the region */
	for (i = 1; i < r->hdr->c.file_hwm; i++)
		free_slots += !s->file_bad[i] && s->file_state[i] == VL_FILE_FREE;
	for (;;) {
		int fresh;

		id = th_ident(0x805, 1 + made);
		fi = vl_file_create(r, &id, &fresh);
		if (fi == VL_NIL)
			break;
		ck_assert_uint_ne(fi, v);
		made++;
		ck_assert_uint_le(made, r->file_cap);
	}
	ck_assert_uint_eq(made, free_slots + (r->file_cap - s->c.file_hwm));
	ck_assert_uint_eq(r->hdr->c.files_used, r->file_cap - 1);
	ck_assert(memcmp(&rec, f, sizeof(rec)) == 0);
	for (i = 0; i < made; i++) {
		id = th_ident(0x805, 1 + i);
		ck_assert_int_eq(vl_file_lookup(r, &id, &fi), 0);
		ck_assert_uint_ne(fi, VL_NIL);
	}
	free(s);
	th_region_fini(&t);
}
END_TEST

/*
 * A node with a bad sum may be one a file's lock holder is rewriting right
 * now: rebuild never frees it, and leaves it as it is.
 */
START_TEST(test_rebuild_keeps_bad_nodes)
{
	struct th_region t;
	const struct vl_region *r;
	struct pool_snap *s = malloc(sizeof(*s));
	struct vl_node saved[3];
	uint32_t fi, bad[3], k;
	uint64_t rng = 99;

	ck_assert_ptr_nonnull(s);
	th_region_init(&t, 64, 4);
	r = &t.r;
	fi = th_file_new(r, 1, 1);
	pmark(r, fi, 0, 10);
	pmark(r, fi, 20, 30);
	pmark(r, fi, 40, 50);
	pmark(r, fi, 60, 70);
	ppurge_oldest(r);                 /* [0,10) purged */
	bad[0] = vl_file_at(r, fi)->h.lru_head; /* [20,30), unpurged */
	bad[1] = vl_rb_first(r, *th_root(r, fi)); /* [0,10), purged */
	bad[2] = vl_node_alloc(r, fi);    /* a spare, PENDING */
	ck_assert_uint_eq(vl_node_at(r, bad[0])->start, 20);
	ck_assert(vl_node_purged(vl_node_at(r, bad[1])));
	/* cut off between writing a node's fields and its sum */
	vl_node_at(r, bad[0])->end = 33;
	vl_node_at(r, bad[1])->start = 2;
	vl_node_at(r, bad[2])->start = 5;
	vl_node_at(r, bad[2])->end = 6;
	for (k = 0; k < 3; k++) {
		ck_assert(!vl_node_ok(r, vl_node_at(r, bad[k])));
		saved[k] = *vl_node_at(r, bad[k]);
	}
	take_snap(r, s);
	scramble(r, &rng);
	vl_pool_rebuild(r);
	check_rebuilt(r, s);
	ck_assert_uint_eq(vl_node_state(vl_node_at(r, bad[0])), VL_NODE_LIVE);
	ck_assert_uint_eq(vl_node_state(vl_node_at(r, bad[1])), VL_NODE_LIVE);
	ck_assert_uint_eq(vl_node_state(vl_node_at(r, bad[2])), VL_NODE_PENDING);
	for (k = 0; k < 3; k++) {
		const struct vl_node *x = vl_node_at(r, bad[k]);

		ck_assert_uint_eq(x->start, saved[k].start);
		ck_assert_uint_eq(x->end, saved[k].end);
		ck_assert_uint_eq(x->seq, saved[k].seq);
		ck_assert_uint_eq(x->check, saved[k].check);
		ck_assert_uint_eq(x->meta, saved[k].meta);
		ck_assert_uint_eq(x->left, saved[k].left);
		ck_assert_uint_eq(x->right, saved[k].right);
		ck_assert_uint_eq(x->parent, saved[k].parent);
	}
	/* allocation goes on past them */
	for (k = 0; k < 3; k++)
		ck_assert_uint_ne(vl_node_alloc(r, fi), bad[k]);
	free(s);
	th_region_fini(&t);
}
END_TEST

static Suite *pool_suite(void)
{
	Suite *s = suite_create("pool");
	TCase *tc = th_tcase("nodes", 30);

	tcase_add_test(tc, test_alloc_lowest_first);
	tcase_add_test(tc, test_free_list_reuse);
	tcase_add_test(tc, test_corrupt_free_head);
	tcase_add_test(tc, test_alloc_below);
	tcase_add_test(tc, test_node_take_ready);
	tcase_add_test(tc, test_alloc_random);
	tcase_add_loop_test(tc, test_alloc_concurrent, 0, 2); /* 1: with a sweeper */
	tcase_add_loop_test(tc, test_chunk_race, 0, 4);
	suite_add_tcase(s, tc);
	tc = th_tcase("lru", 30);
	tcase_add_test(tc, test_lru_basic);
	tcase_add_test(tc, test_lru_random);
	tcase_add_test(tc, test_age_older);
	tcase_add_test(tc, test_lru_restamp);
	suite_add_tcase(s, tc);
	tc = th_tcase("files", 30);
	tcase_add_test(tc, test_hash_copy_matches);
	tcase_add_test(tc, test_file_basic);
	tcase_add_test(tc, test_file_full);
	tcase_add_loop_test(tc, test_file_random, 0, 3);
	tcase_add_test(tc, test_lookup_corrupt);
	tcase_add_test(tc, test_probe_race);
	suite_add_tcase(s, tc);
	tc = th_tcase("commit", 30);
	tcase_add_test(tc, test_commit_keeps_unused_spare);
	tcase_add_test(tc, test_commit_counts_past_2_64);
	tcase_add_test(tc, test_commit_counts_in_own_slot);
	tcase_add_loop_test(tc, test_rebuild, 0, 2);
	tcase_add_loop_test(tc, test_repair_age_order, 0, 2);
	tcase_add_test(tc, test_lru_check);
	tcase_add_test(tc, test_lru_no_spread);
	tcase_add_test(tc, test_repair_with_splits);
	tcase_add_test(tc, test_rebuild_clamps_hwm);
	tcase_add_test(tc, test_repair_corrects_totals);
	tcase_add_test(tc, test_rebuild_torn_state);
	tcase_add_loop_test(tc, test_rebuild_quarantine, 0, 8);
	tcase_add_test(tc, test_rebuild_keeps_bad_nodes);
	tcase_add_loop_test(tc, test_rebuild_never_used_file_slots, 0, 2);
	tcase_add_test(tc, test_rebuild_unpublished_slot);
	suite_add_tcase(s, tc);
	tc = th_tcase("spare", 30);
	tcase_add_test(tc, test_spare_keep_take);
	tcase_add_test(tc, test_chunk_kept_or_back);
	tcase_add_test(tc, test_chunks_share_no_line);
	tcase_add_test(tc, test_unmark_takes_spare_to_split);
	tcase_add_test(tc, test_spare_used);
	tcase_add_test(tc, test_spare_freed_with_record);
	tcase_add_test(tc, test_spare_freed_by_repair);
	tcase_add_test(tc, test_spare_steal);
	tcase_add_test(tc, test_pending_owners);
	tcase_add_test(tc, test_pending_owners_rotate);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return th_run(pool_suite());
}
