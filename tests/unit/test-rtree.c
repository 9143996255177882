/* SPDX-License-Identifier: MIT */
/*
 * test-rtree.c - the red-black tree of ranges, linked by index
 * (core/rtree.c).
 *
 * Key k is the range [3k+1, 3k+3): ranges are disjoint, never touch, and
 * every x in [0, 3*NKEYS+3] is either before, inside, at the end of, or
 * between ranges, so vl_rb_end_at_least meets every case.
 */
#include "harness.h"

#define NKEYS 600

static uint64_t kstart(int k)
{
	return 3ull * (uint64_t)k + 1;
}

static uint64_t kend(int k)
{
	return kstart(k) + 2;
}

struct rt {
	struct th_region t;
	struct vl_region *r;
	uint32_t fi;
	uint32_t *root;
	uint32_t node_of[NKEYS]; /* VL_NIL: key absent */
	int count;
	int near; /* insert next to the key's neighbour (vl_rb_insert_next_to) where there is one */
};

static void rt_init(struct rt *x)
{
	int k;

	memset(x, 0, sizeof(*x));
	th_region_init(&x->t, NKEYS, 4);
	x->r = &x->t.r;
	x->fi = th_file_new(x->r, 1, 1);
	x->root = th_root(x->r, x->fi);
	ck_assert_uint_eq(*x->root, VL_NIL);
	for (k = 0; k < NKEYS; k++)
		x->node_of[k] = VL_NIL;
}

static void rt_fini(struct rt *x)
{
	th_region_fini(&x->t);
}

static void rt_insert(struct rt *x, int k)
{
	uint32_t n;

	th_check((x->node_of[k]) == (VL_NIL));
	n = th_node_live(x->r, x->fi, kstart(k), kend(k), k % 3 == 0, (uint32_t)k);
	if (x->near) {
		int after = k + 1, before = k - 1;

		while (after < NKEYS && x->node_of[after] == VL_NIL)
			after++;
		while (before >= 0 && x->node_of[before] == VL_NIL)
			before--;
		/* before the next key, or after the one before, in turn: both ways are walked */
		if (after < NKEYS && (k % 2 == 0 || before < 0))
			th_check(vl_rb_insert_next_to(x->r, x->root, n, x->node_of[after], 0) == 0);
		else if (before >= 0)
			th_check(vl_rb_insert_next_to(x->r, x->root, n, x->node_of[before], 1) == 0);
		else
			th_check(vl_rb_insert(x->r, x->root, n) == 0);
	} else {
		th_check((vl_rb_insert(x->r, x->root, n)) == (0));
	}
	x->node_of[k] = n;
	x->count++;
}

static void rt_erase(struct rt *x, int k)
{
	uint32_t n = x->node_of[k];

	th_check((n) != (VL_NIL));
	vl_rb_erase(x->r, x->root, n);
	/* erase leaves the node unlinked */
	th_check((vl_node_at(x->r, n)->left) == (VL_NIL));
	th_check((vl_node_at(x->r, n)->right) == (VL_NIL));
	th_check((vl_node_at(x->r, n)->parent) == (VL_NIL));
	vl_node_free(x->r, n);
	x->node_of[k] = VL_NIL;
	x->count--;
}

/* Depth of the deepest node (the root has depth 1), bounded. */
static int depth_of(const struct vl_region *r, uint32_t n, int d)
{
	int a, b;

	if (n == VL_NIL || d > 200)
		return d - 1;
	a = depth_of(r, vl_node_at(r, n)->left, d + 1);
	b = depth_of(r, vl_node_at(r, n)->right, d + 1);
	return a > b ? a : b;
}

/* The model's answer: first key whose end is >= x (> x if strict). */
static uint32_t model_end_at_least(const struct rt *x, uint64_t v, int strict)
{
	int k;

	for (k = 0; k < NKEYS; k++) {
		if (x->node_of[k] == VL_NIL)
			continue;
		if (kend(k) > v || (!strict && kend(k) == v))
			return x->node_of[k];
	}
	return VL_NIL;
}

static void rt_check_end_at_least(const struct rt *x, uint64_t v)
{
	int strict;

	for (strict = 0; strict <= 1; strict++) {
		uint32_t got = vl_rb_end_at_least(x->r, *x->root, v, strict);
		uint32_t want = model_end_at_least(x, v, strict);

		th_check_msg(got == want, "end_at_least(%" PRIu64 ", strict %d) = %u, want %u", v,
			      strict, got, want);
	}
}

static void rt_verify(const struct rt *x, uint64_t *rng, int full_sweep)
{
	const struct vl_region *r = x->r;
	uint32_t n, last = VL_NIL;
	int k, seen = 0, bound, d;
	long got = vl_rb_check(r, *x->root, x->fi);

	th_check_msg(got == x->count, "vl_rb_check = %ld, want %d", got, x->count);
	if (*x->root != VL_NIL)
		th_check((vl_node_at(r, *x->root)->parent >> 1) == (VL_NIL));

	/* forward: first/next visit the keys in order */
	n = vl_rb_first(r, *x->root);
	for (k = 0; k < NKEYS; k++) {
		if (x->node_of[k] == VL_NIL)
			continue;
		th_check_msg(n == x->node_of[k], "in-order walk: node %u, want %u (key %d)", n,
			      x->node_of[k], k);
		last = n;
		n = vl_rb_next(r, n);
		seen++;
	}
	th_check((n) == (VL_NIL));
	th_check((seen) == (x->count));
	/* last: the rightmost node, where the reverse walk starts */
	th_check_msg(vl_rb_last(r, *x->root) == last, "vl_rb_last = %u, want %u",
		     vl_rb_last(r, *x->root), last);

	/* backward: prev from the last */
	n = last;
	for (k = NKEYS - 1; k >= 0; k--) {
		if (x->node_of[k] == VL_NIL)
			continue;
		th_check_msg(n == x->node_of[k], "reverse walk: node %u, want %u (key %d)", n,
			      x->node_of[k], k);
		n = vl_rb_prev(r, n);
	}
	th_check((n) == (VL_NIL));

	/* balanced: a red-black tree of n nodes is at most 2 log2(n+1) deep */
	d = depth_of(r, *x->root, 1);
	for (bound = 0; (1 << (bound / 2)) <= x->count; bound += 2)
		;
	th_check_msg(d <= bound, "depth %d for %d nodes", d, x->count);

	if (full_sweep) {
		uint64_t v;

		for (v = 0; v <= kend(NKEYS - 1) + 1; v++)
			rt_check_end_at_least(x, v);
	} else {
		int i;

		rt_check_end_at_least(x, 0);
		rt_check_end_at_least(x, UINT64_MAX);
		for (i = 0; i < 6; i++)
			rt_check_end_at_least(x, th_below(rng, kend(NKEYS - 1) + 3));
	}
	th_check(th_sentinel_zero(r));
}

START_TEST(test_empty)
{
	struct rt x;
	uint64_t rng = 1;

	rt_init(&x);
	ck_assert_int_eq(vl_rb_check(x.r, VL_NIL, x.fi), 0);
	ck_assert_uint_eq(vl_rb_first(x.r, VL_NIL), VL_NIL);
	ck_assert_uint_eq(vl_rb_last(x.r, VL_NIL), VL_NIL);
	ck_assert_uint_eq(vl_rb_end_at_least(x.r, VL_NIL, 0, 0), VL_NIL);
	ck_assert_uint_eq(vl_rb_end_at_least(x.r, VL_NIL, 0, 1), VL_NIL);
	rt_verify(&x, &rng, 1);
	rt_insert(&x, 5);
	rt_verify(&x, &rng, 1);
	ck_assert_uint_eq(vl_rb_first(x.r, *x.root), x.node_of[5]);
	ck_assert_uint_eq(vl_rb_last(x.r, *x.root), x.node_of[5]);
	ck_assert_uint_eq(vl_rb_next(x.r, x.node_of[5]), VL_NIL);
	ck_assert_uint_eq(vl_rb_prev(x.r, x.node_of[5]), VL_NIL);
	/* the single node is the root and black */
	ck_assert_uint_eq(*x.root, x.node_of[5]);
	ck_assert_uint_eq(vl_node_at(x.r, *x.root)->parent, 1);
	rt_erase(&x, 5);
	ck_assert_uint_eq(*x.root, VL_NIL);
	rt_verify(&x, &rng, 1);
	rt_fini(&x);
}
END_TEST

/* Sequential patterns: every rotation case, both sides. */
START_TEST(test_sequential)
{
	struct rt x;
	uint64_t rng = 2;
	int k, i;

	rt_init(&x);
	for (k = 0; k < NKEYS; k++) {
		rt_insert(&x, k);
		rt_verify(&x, &rng, 0);
	}
	rt_verify(&x, &rng, 1);
	for (k = 0; k < NKEYS; k++) {
		rt_erase(&x, k);
		rt_verify(&x, &rng, 0);
	}
	for (k = NKEYS - 1; k >= 0; k--) {
		rt_insert(&x, k);
		rt_verify(&x, &rng, 0);
	}
	for (k = NKEYS - 1; k >= 0; k--) {
		rt_erase(&x, k);
		rt_verify(&x, &rng, 0);
	}
	/* evens, then odds; then erase from the middle outwards */
	for (k = 0; k < NKEYS; k += 2)
		rt_insert(&x, k);
	rt_verify(&x, &rng, 1);
	for (k = 1; k < NKEYS; k += 2) {
		rt_insert(&x, k);
		rt_verify(&x, &rng, 0);
	}
	for (i = 0; i < NKEYS / 2; i++) {
		rt_erase(&x, NKEYS / 2 - 1 - i);
		rt_verify(&x, &rng, 0);
		rt_erase(&x, NKEYS / 2 + i);
		rt_verify(&x, &rng, 0);
	}
	ck_assert_uint_eq(*x.root, VL_NIL);
	ck_assert_uint_eq(th_in_use(x.r), 0);
	rt_fini(&x);
}
END_TEST

/* Random inserts and erases against a sorted model, fixed seeds. */
/* Inserts and erases at random, the fill drifting; every insert next to a neighbour if near. */
static void random_run(uint64_t rng, int near)
{
	struct rt x;
	int step, target = NKEYS / 2;

	rt_init(&x);
	x.near = near;
	for (step = 0; step < 6000; step++) {
		int k = (int)th_below(&rng, NKEYS);

		/* drift the fill between nearly empty and nearly full */
		if (step % 1000 == 0)
			target = (int)th_below(&rng, NKEYS);
		if (x.node_of[k] == VL_NIL && (x.count < target || th_below(&rng, 4) == 0))
			rt_insert(&x, k);
		else if (x.node_of[k] != VL_NIL && (x.count >= target || th_below(&rng, 4) == 0))
			rt_erase(&x, k);
		else
			continue;
		rt_verify(&x, &rng, step % 997 == 0);
	}
	/* the pool saw every node come and go */
	ck_assert_uint_eq(th_in_use(x.r), (uint32_t)x.count);
	rt_verify(&x, &rng, 1);
	rt_fini(&x);
}

static const uint64_t seeds[] = { 0x1234, 0xfeedface, 42, 7777777 };

START_TEST(test_random)
{
	random_run(seeds[_i], 0);
}
END_TEST

/* The same, every insert linked next to its neighbour: the tree ends as sound. */
START_TEST(test_random_next_to)
{
	random_run(seeds[_i], 1);
}
END_TEST

/* A tree of keys 0..n-1 for the corruption tests. */
static void rt_fill(struct rt *x, int n)
{
	int k;

	for (k = 0; k < n; k++)
		rt_insert(x, (k * 7) % n);
	ck_assert_int_eq(vl_rb_check(x->r, *x->root, x->fi), n);
}

START_TEST(test_check_detects_faults)
{
	struct rt x;
	struct vl_node *a, saved;
	uint32_t n, m;
	long ok;

	rt_init(&x);
	rt_fill(&x, 100);
	ok = vl_rb_check(x.r, *x.root, x.fi);
	ck_assert_int_eq(ok, 100);
	n = x.node_of[40];
	a = vl_node_at(x.r, n);
	saved = *a;

	/* a scribbled sum */
	a->check ^= 0x10;
	ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi), -EUCLEAN);
	*a = saved;
	/* another owner, or not LIVE */
	ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi + 1), -EUCLEAN);
	a->meta = vl_meta(x.fi + 1, VL_NODE_LIVE, 0);
	vl_node_seal(x.r, a);
	ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi), -EUCLEAN);
	a->meta = vl_meta(x.fi, VL_NODE_PENDING, 0);
	vl_node_seal(x.r, a);
	ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi), -EUCLEAN);
	a->meta = vl_meta(x.fi, VL_NODE_FREE, 0);
	vl_node_seal(x.r, a);
	ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi), -EUCLEAN);
	*a = saved;
	ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi), ok);
	/* out of order, overlapping, empty: sealed, so only the order check sees it */
	a->start = kstart(41);
	a->end = kend(41);
	vl_node_seal(x.r, a);
	ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi), -EUCLEAN);
	a->start = kstart(40);
	a->end = kstart(41) + 1;
	vl_node_seal(x.r, a);
	ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi), -EUCLEAN);
	a->start = kstart(39) + 1;
	a->end = kend(40);
	vl_node_seal(x.r, a);
	ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi), -EUCLEAN);
	a->start = a->end = kstart(40);
	vl_node_seal(x.r, a);
	ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi), -EUCLEAN);
	*a = saved;
	ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi), ok);
	/* a wrong parent link */
	a->parent ^= 2;
	ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi), -EUCLEAN);
	*a = saved;
	/* a red root */
	m = *x.root;
	vl_node_at(x.r, m)->parent &= ~1u;
	ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi), -EUCLEAN);
	vl_node_at(x.r, m)->parent |= 1u;
	ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi), ok);
	/* every colour flip of a single node of the tree breaks a rule */
	for (m = vl_rb_first(x.r, *x.root); m != VL_NIL; m = vl_rb_next(x.r, m)) {
		vl_node_at(x.r, m)->parent ^= 1u;
		ck_assert_msg(vl_rb_check(x.r, *x.root, x.fi) == -EUCLEAN,
			      "colour flip of node %u not seen", m);
		vl_node_at(x.r, m)->parent ^= 1u;
	}
	ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi), ok);
	/* a subtree hung twice (a shared child) */
	n = vl_rb_first(x.r, *x.root);
	m = vl_rb_next(x.r, vl_rb_next(x.r, n));
	ck_assert_uint_eq(vl_node_at(x.r, n)->left, VL_NIL);
	vl_node_at(x.r, n)->left = m;
	ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi), -EUCLEAN);
	vl_node_at(x.r, n)->left = VL_NIL;
	ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi), ok);
	ck_assert(th_sentinel_zero(x.r));
	rt_fini(&x);
}
END_TEST

/*
 * A tree with all black heights equal whose only fault is a red node under
 * a red node: R(black, key 2) <- L(red, key 1) <- LL(red, key 0).
 */
START_TEST(test_check_red_red)
{
	struct rt x;
	uint32_t R, L, LL;

	rt_init(&x);
	LL = th_node_live(x.r, x.fi, kstart(0), kend(0), 0, 1);
	L = th_node_live(x.r, x.fi, kstart(1), kend(1), 0, 2);
	R = th_node_live(x.r, x.fi, kstart(2), kend(2), 0, 3);
	vl_node_at(x.r, R)->parent = VL_NIL << 1 | 1;
	vl_node_at(x.r, R)->left = L;
	vl_node_at(x.r, L)->parent = R << 1; /* red */
	vl_node_at(x.r, L)->left = LL;
	vl_node_at(x.r, LL)->parent = L << 1; /* red */
	*x.root = R;
	ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi), -EUCLEAN);
	/* recoloured into a valid tree: black L, red LL is fine... */
	vl_node_at(x.r, L)->parent |= 1;
	ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi), -EUCLEAN); /* ...but heights differ */
	/* the proper shape: L the black root, LL and R its red children */
	*x.root = L;
	vl_node_at(x.r, L)->parent = VL_NIL << 1 | 1;
	vl_node_at(x.r, L)->left = LL;
	vl_node_at(x.r, L)->right = R;
	vl_node_at(x.r, LL)->parent = L << 1;
	vl_node_at(x.r, R)->parent = L << 1;
	vl_node_at(x.r, R)->left = VL_NIL;
	ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi), 3);
	rt_fini(&x);
}
END_TEST

/* Every read-only walk on a corrupt tree must end; none may write. */
static void poke_all(struct rt *x)
{
	const struct vl_region *r = x->r;
	uint64_t v;
	uint32_t n, i;
	int steps;

	for (v = 0; v <= kend(NKEYS - 1) + 1; v += 1) {
		n = vl_rb_end_at_least(r, *x->root, v, (int)(v & 1));
		th_check(n == VL_NIL || n < r->node_cap);
	}
	(void)vl_rb_first(r, *x->root);
	(void)vl_rb_last(r, *x->root);
	for (i = 0; i < r->node_cap + 3; i++) {
		(void)vl_rb_next(r, i);
		(void)vl_rb_prev(r, i);
	}
	/* a walk the caller bounds, as ranges.c does */
	n = vl_rb_first(r, *x->root);
	for (steps = 0; n != VL_NIL && steps < (int)r->node_cap * 2; steps++)
		n = vl_rb_next(r, n);
	th_check(vl_rb_check(r, *x->root, x->fi) == -EUCLEAN);
}

/* Insert a key into a corrupt tree: an error or a bounded success. */
static void insert_into_corrupt(struct rt *x, uint64_t start)
{
	const struct vl_region *r = x->r;
	uint32_t n = th_node_get(r, x->fi);
	struct vl_node *a = vl_node_at(r, n);
	int err;

	ck_assert_uint_ne(n, VL_NIL);
	a->start = start;
	a->end = start + 1;
	a->meta = vl_meta(x->fi, VL_NODE_LIVE, 0);
	vl_node_seal(r, a);
	err = vl_rb_insert(r, x->root, n);
	ck_assert(err == 0 || err == -EUCLEAN);
}

START_TEST(test_corrupt_cycle)
{
	struct rt x;
	uint32_t first, last, root;
	size_t nodes_bytes;
	void *snap;

	rt_init(&x);
	rt_fill(&x, 200);
	root = *x.root;
	first = vl_rb_first(x.r, root);
	last = x.node_of[199];
	ck_assert_uint_eq(vl_node_at(x.r, first)->left, VL_NIL);
	ck_assert_uint_eq(vl_node_at(x.r, last)->right, VL_NIL);

	/* the leftmost node's left link points back at the root */
	vl_node_at(x.r, first)->left = root;
	poke_all(&x);
	ck_assert(th_sentinel_zero(x.r));
	/* an insert that descends into the cycle fails, and writes nothing */
	nodes_bytes = (size_t)x.r->node_cap * sizeof(struct vl_node);
	snap = malloc(nodes_bytes);
	ck_assert_ptr_nonnull(snap);
	{
		uint32_t n = th_node_get(x.r, x.fi);
		struct vl_node *a = vl_node_at(x.r, n);

		a->start = 0;
		a->end = 1;
		a->meta = vl_meta(x.fi, VL_NODE_LIVE, 0);
		vl_node_seal(x.r, a);
		memcpy(snap, x.r->nodes, nodes_bytes);
		ck_assert_int_eq(vl_rb_insert(x.r, x.root, n), -EUCLEAN);
		ck_assert(memcmp(snap, x.r->nodes, nodes_bytes) == 0);
		ck_assert_uint_eq(*x.root, root);
	}
	vl_node_at(x.r, first)->left = VL_NIL;

	/* the rightmost node's right link points back at the root */
	vl_node_at(x.r, last)->right = root;
	poke_all(&x);
	ck_assert(th_sentinel_zero(x.r));
	memcpy(snap, x.r->nodes, nodes_bytes);
	{
		uint32_t n = th_node_get(x.r, x.fi);
		struct vl_node *a = vl_node_at(x.r, n);

		a->start = kend(NKEYS);
		a->end = a->start + 1;
		a->meta = vl_meta(x.fi, VL_NODE_LIVE, 0);
		vl_node_seal(x.r, a);
		memcpy(snap, x.r->nodes, nodes_bytes);
		ck_assert_int_eq(vl_rb_insert(x.r, x.root, n), -EUCLEAN);
		ck_assert(memcmp(snap, x.r->nodes, nodes_bytes) == 0);
	}
	vl_node_at(x.r, last)->right = VL_NIL;

	/* a node that is its own child and its own parent */
	vl_node_at(x.r, first)->left = first;
	vl_node_at(x.r, first)->right = first;
	vl_node_at(x.r, first)->parent = first << 1 | 1;
	poke_all(&x);
	ck_assert(th_sentinel_zero(x.r));
	insert_into_corrupt(&x, 0);
	free(snap);
	rt_fini(&x);
}
END_TEST

START_TEST(test_corrupt_out_of_range)
{
	static const uint32_t bad[] = { 0, 1, 1000, 0x7fffffffu, 0xffffffffu };
	struct rt x;
	uint32_t first, last, mid;
	size_t i;

	rt_init(&x);
	rt_fill(&x, 150);
	first = vl_rb_first(x.r, *x.root);
	last = x.node_of[149];
	mid = x.node_of[75];
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint32_t v = x.r->node_cap + bad[i];
		struct vl_node sf = *vl_node_at(x.r, first), sl = *vl_node_at(x.r, last),
			       sm = *vl_node_at(x.r, mid);

		if (bad[i] >= 0x7fffffffu)
			v = bad[i];
		vl_node_at(x.r, first)->left = v;
		poke_all(&x);
		ck_assert(th_sentinel_zero(x.r));
		*vl_node_at(x.r, first) = sf;

		vl_node_at(x.r, last)->right = v;
		poke_all(&x);
		ck_assert(th_sentinel_zero(x.r));
		*vl_node_at(x.r, last) = sl;

		vl_node_at(x.r, mid)->parent = v << 1 | (sm.parent & 1);
		poke_all(&x);
		ck_assert(th_sentinel_zero(x.r));
		*vl_node_at(x.r, mid) = sm;

		/* the root itself out of range */
		{
			uint32_t root = *x.root;
			uint64_t v2;

			*x.root = v;
			for (v2 = 0; v2 < 50; v2++)
				ck_assert_uint_eq(vl_rb_end_at_least(x.r, *x.root, v2, 0), VL_NIL);
			ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi), -EUCLEAN);
			ck_assert(th_sentinel_zero(x.r));
			*x.root = root;
		}
		ck_assert_int_eq(vl_rb_check(x.r, *x.root, x.fi), 150);
	}
	/* inserting below a link out of range fails without writing */
	vl_node_at(x.r, first)->left = x.r->node_cap + 5;
	{
		uint32_t n = th_node_get(x.r, x.fi);
		struct vl_node *a = vl_node_at(x.r, n);

		a->start = 0;
		a->end = 1;
		a->meta = vl_meta(x.fi, VL_NODE_LIVE, 0);
		vl_node_seal(x.r, a);
		ck_assert_int_eq(vl_rb_insert(x.r, x.root, n), -EUCLEAN);
		ck_assert_uint_eq(vl_node_at(x.r, first)->left, x.r->node_cap + 5);
		ck_assert(th_sentinel_zero(x.r));
	}
	rt_fini(&x);
}
END_TEST

/*
 * Erasing a node whose own links were scribbled out of range: the erase
 * must end, and (rtree.c: "VL_NIL ... is never written, so slot 0 stays
 * zero whatever shape the tree is in") must not write into slot 0.
 */
START_TEST(test_corrupt_erase_keeps_sentinel)
{
	struct rt x;
	uint32_t n;

	rt_init(&x);
	rt_fill(&x, 60);
	n = x.node_of[30];
	vl_node_at(x.r, n)->parent = (x.r->node_cap + 9) << 1 | (vl_node_at(x.r, n)->parent & 1);
	vl_rb_erase(x.r, x.root, n);
	ck_assert_msg(th_sentinel_zero(x.r),
		      "erase of a node with an out-of-range parent link wrote into slot 0");
	rt_fini(&x);
}
END_TEST

START_TEST(test_corrupt_erase_child_keeps_sentinel)
{
	struct rt x;
	uint32_t n;

	rt_init(&x);
	rt_fill(&x, 60);
	/* a leaf whose child link is scribbled, then erased */
	n = vl_rb_first(x.r, *x.root);
	vl_node_at(x.r, n)->right = x.r->node_cap + 9;
	vl_rb_erase(x.r, x.root, n);
	ck_assert_msg(th_sentinel_zero(x.r),
		      "erase of a node with an out-of-range child link wrote into slot 0");
	rt_fini(&x);
}
END_TEST

/*
 * Erasing a node with two children whose right link was scribbled: the
 * successor search stops at the bad index, and what erase then writes to
 * "the successor" must not land in slot 0 (vl_node_at reads it there).
 */
START_TEST(test_corrupt_erase_successor_keeps_sentinel)
{
	struct rt x;
	uint32_t z;

	rt_init(&x);
	rt_fill(&x, 60);
	z = *x.root;
	ck_assert_uint_ne(vl_node_at(x.r, z)->left, VL_NIL);
	ck_assert_uint_ne(vl_node_at(x.r, z)->right, VL_NIL);
	vl_node_at(x.r, z)->right = x.r->node_cap + 9;
	vl_rb_erase(x.r, x.root, z);
	ck_assert_msg(th_sentinel_zero(x.r),
		      "erase of a node whose right link is out of range wrote into slot 0");
	rt_fini(&x);
}
END_TEST

/*
 * One link of one node scribbled, then the tree used: every key erased,
 * new ones inserted. Whatever that does to the tree, slot 0 must read all
 * zeros after every operation. Each link of each node, with indices out
 * of range and VL_NIL where a node was (a parent link of 0 below the root).
 */
#define SCRIBBLE_KEYS 40

enum { LINK_LEFT, LINK_RIGHT, LINK_PARENT, NLINKS };

static void scribble(struct rt *x, uint32_t n, int link, uint32_t v)
{
	struct vl_node *a = vl_node_at(x->r, n);

	if (link == LINK_LEFT)
		a->left = v;
	else if (link == LINK_RIGHT)
		a->right = v;
	else
		a->parent = v << 1 | (a->parent & 1);
}

static void scribble_run(uint32_t victim, int link, uint32_t v)
{
	static const char *const names[NLINKS] = { "left", "right", "parent" };
	struct rt x;
	int k, i;

	rt_init(&x);
	rt_fill(&x, SCRIBBLE_KEYS);
	scribble(&x, x.node_of[victim], link, v);
	for (i = 0; i < SCRIBBLE_KEYS; i++) {
		k = (i * 7) % SCRIBBLE_KEYS;
		vl_rb_erase(x.r, x.root, x.node_of[k]);
		th_check_msg(th_sentinel_zero(x.r),
			     "key %u's %s link set to %u: erase of key %d wrote into slot 0",
			     victim, names[link], v, k);
		if (k % 3 == 0) {
			insert_into_corrupt(&x, kstart(SCRIBBLE_KEYS + k));
			th_check_msg(th_sentinel_zero(x.r),
				     "key %u's %s link set to %u: an insert wrote into slot 0",
				     victim, names[link], v);
		}
	}
	rt_fini(&x);
}

START_TEST(test_corrupt_links_keep_sentinel)
{
	uint32_t cap = NKEYS + 1; /* the slots of th_region_init(NKEYS) */
	const uint32_t bad[] = { VL_NIL, cap + 9, 0x7fffffffu, 0xffffffffu };
	uint32_t k;
	size_t i;
	int link;

	for (k = 0; k < SCRIBBLE_KEYS; k++)
		for (link = 0; link < NLINKS; link++)
			for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
				scribble_run(k, link, bad[i]);
}
END_TEST

static Suite *rtree_suite(void)
{
	Suite *s = suite_create("rtree");
	TCase *tc = th_tcase("model", 60);

	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_sequential);
	tcase_add_loop_test(tc, test_random, 0, 4);
	tcase_add_loop_test(tc, test_random_next_to, 0, 4);
	suite_add_tcase(s, tc);
	tc = th_tcase("corruption", 60);
	tcase_add_test(tc, test_check_detects_faults);
	tcase_add_test(tc, test_check_red_red);
	tcase_add_test(tc, test_corrupt_cycle);
	tcase_add_test(tc, test_corrupt_out_of_range);
	suite_add_tcase(s, tc);
	tc = th_tcase("sentinel", 60);
	tcase_add_test(tc, test_corrupt_erase_keeps_sentinel);
	tcase_add_test(tc, test_corrupt_erase_child_keeps_sentinel);
	tcase_add_test(tc, test_corrupt_erase_successor_keeps_sentinel);
	tcase_add_test(tc, test_corrupt_links_keep_sentinel);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return th_run(rtree_suite());
}
