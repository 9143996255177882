/*
 * test-pool.c - node allocator, LRU, file table, counters and rebuild
 * (core/pool.c).
 */
#include "harness.h"

/* ---- node allocator --------------------------------------------------------- */

static int node_is_zero_free(const struct vl_region *r, uint32_t n)
{
	const struct vl_node *x = vl_node_at(r, n);

	return vl_node_state(x) == VL_NODE_FREE && x->start == 0 && x->end == 0 &&
	       x->seq == 0 && x->left == 0 && x->right == 0 && x->parent == 0 && x->prev == 0 &&
	       x->meta == 0;
}

START_TEST(test_alloc_lowest_first)
{
	struct th_region t;
	const struct vl_region *r;
	const struct vl_counters *c;
	uint32_t i, n;

	th_region_init(&t, 16, 4);
	r = &t.r;
	c = &r->hdr->c;
	ck_assert_uint_eq(r->node_cap, 17);
	for (i = 1; i <= 16; i++) {
		const struct vl_node *x;

		n = vl_node_alloc(r, 3);
		ck_assert_uint_eq(n, i); /* slot 0 is never handed out */
		x = vl_node_at(r, n);
		ck_assert_uint_eq(vl_node_state(x), VL_NODE_PENDING);
		ck_assert_uint_eq(vl_node_file(x), 3);
		ck_assert_int_eq(vl_node_purged(x), 0);
		ck_assert_uint_eq(x->check, vl_node_sum(r, x));
		ck_assert_uint_eq(c->nodes_used, i);
		ck_assert_uint_eq(c->node_hwm, i + 1);
		ck_assert_uint_eq(c->node_free, VL_NIL);
	}
	/* full */
	ck_assert_uint_eq(vl_node_alloc(r, 3), VL_NIL);
	ck_assert_uint_eq(vl_node_alloc(r, 3), VL_NIL);
	ck_assert_uint_eq(c->nodes_used, 16);
	ck_assert_uint_eq(c->node_hwm, 17);
	ck_assert(th_sentinel_zero(r));
	th_region_fini(&t);
}
END_TEST

START_TEST(test_free_list_reuse)
{
	struct th_region t;
	const struct vl_region *r;
	const struct vl_counters *c;
	uint32_t i, n, got[3];
	int seen[32] = { 0 };

	th_region_init(&t, 16, 4);
	r = &t.r;
	c = &r->hdr->c;
	for (i = 1; i <= 10; i++)
		ck_assert_uint_eq(vl_node_alloc(r, 1), i);
	/* scribble on a node: a free clears it */
	vl_node_at(r, 5)->start = 77;
	vl_node_at(r, 5)->prev = 9;
	vl_node_free(r, 5);
	vl_node_free(r, 3);
	vl_node_free(r, 9);
	ck_assert_uint_eq(c->nodes_used, 7);
	ck_assert_uint_eq(c->node_hwm, 11);
	ck_assert(node_is_zero_free(r, 3));
	ck_assert(node_is_zero_free(r, 5));
	ck_assert(node_is_zero_free(r, 9));
	/* a double free, or a free of nothing, changes nothing */
	vl_node_free(r, 5);
	vl_node_free(r, VL_NIL);
	vl_node_free(r, r->node_cap);
	vl_node_free(r, UINT32_MAX);
	ck_assert_uint_eq(c->nodes_used, 7);
	ck_assert(th_sentinel_zero(r));
	/* the freed slots come back before the high-water mark grows */
	for (i = 0; i < 3; i++) {
		got[i] = vl_node_alloc(r, 2);
		ck_assert(got[i] == 3 || got[i] == 5 || got[i] == 9);
		ck_assert(!seen[got[i]]);
		seen[got[i]] = 1;
		ck_assert_uint_eq(c->node_hwm, 11);
		ck_assert_uint_eq(vl_node_file(vl_node_at(r, got[i])), 2);
		ck_assert_uint_eq(vl_node_at(r, got[i])->start, 0);
		ck_assert_uint_eq(vl_node_at(r, got[i])->next, 0);
	}
	ck_assert_uint_eq(c->node_free, VL_NIL);
	n = vl_node_alloc(r, 2);
	ck_assert_uint_eq(n, 11);
	ck_assert_uint_eq(c->node_hwm, 12);
	ck_assert_uint_eq(c->nodes_used, 11);
	th_region_fini(&t);
}
END_TEST

/* A free-list head that is not a free node is dropped, not followed. */
START_TEST(test_corrupt_free_head)
{
	struct th_region t;
	const struct vl_region *r;
	struct vl_counters *c;
	uint32_t i;

	th_region_init(&t, 8, 4);
	r = &t.r;
	c = &r->hdr->c;
	for (i = 1; i <= 4; i++)
		vl_node_alloc(r, 1);
	vl_node_free(r, 2);
	c->node_free = 3; /* a PENDING node */
	ck_assert_uint_eq(vl_node_alloc(r, 1), 5);
	ck_assert_uint_eq(vl_node_file(vl_node_at(r, 3)), 1);
	ck_assert_uint_eq(vl_node_state(vl_node_at(r, 3)), VL_NODE_PENDING);
	c->node_free = r->node_cap + 100; /* out of range */
	ck_assert_uint_eq(vl_node_alloc(r, 1), 6);
	ck_assert_uint_eq(c->node_free, VL_NIL);
	ck_assert(th_sentinel_zero(r));
	th_region_fini(&t);
}
END_TEST

/* Random allocs and frees against a model of used slots. */
START_TEST(test_alloc_random)
{
	struct th_region t;
	const struct vl_region *r;
	const struct vl_counters *c;
	static unsigned char used[257];
	uint64_t rng = 99;
	uint32_t hwm = 1, nused = 0, nfree_slots = 0;
	int step;

	th_region_init(&t, 256, 4);
	r = &t.r;
	c = &r->hdr->c;
	memset(used, 0, sizeof(used));
	for (step = 0; step < 20000; step++) {
		if (th_below(&rng, 100) < (step % 4000 < 2000 ? 60u : 40u)) {
			uint32_t n = vl_node_alloc(r, 1);

			if (nused == 256) {
				th_check(n == VL_NIL);
				continue;
			}
			th_check(n != VL_NIL && n < r->node_cap && !used[n]);
			if (nfree_slots > 0) {
				th_check_msg(n < hwm, "hwm grew (%u) with %u free slots", n, nfree_slots);
				nfree_slots--;
			} else {
				th_check_msg(n == hwm, "alloc %u, want the next fresh slot %u", n, hwm);
				hwm++;
			}
			used[n] = 1;
			nused++;
		} else if (nused > 0) {
			uint32_t n;

			do
				n = 1 + (uint32_t)th_below(&rng, hwm - 1);
			while (!used[n]);
			vl_node_free(r, n);
			used[n] = 0;
			nused--;
			nfree_slots++;
		}
		th_check(c->nodes_used == nused);
		th_check(c->node_hwm == hwm);
	}
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

static void lru_verify(const struct vl_region *r, const struct lru_model *m)
{
	const struct vl_counters *c = &r->hdr->c;
	uint32_t n = c->lru_head, prev = VL_NIL;
	int i;

	for (i = 0; i < m->n; i++) {
		th_check_msg(n == m->a[i], "LRU position %d: %u, want %u", i, n, m->a[i]);
		th_check_msg(vl_node_at(r, n)->prev == prev, "LRU node %u: prev %u, want %u", n,
			     vl_node_at(r, n)->prev, prev);
		th_check(vl_lru_linked(r, n));
		prev = n;
		n = vl_node_at(r, n)->next;
	}
	th_check_msg(n == VL_NIL, "LRU longer than %d", m->n);
	th_check(c->lru_tail == prev);
	for (n = 1; n < r->node_cap; n++)
		th_check_msg(vl_lru_linked(r, n) == (lm_find(m, n) >= 0), "node %u linked %d", n,
			     vl_lru_linked(r, n));
	th_check(!vl_lru_linked(r, VL_NIL));
	th_check(th_sentinel_zero(r));
}

START_TEST(test_lru_basic)
{
	struct th_region t;
	const struct vl_region *r;
	struct lru_model m = { .n = 0 };
	uint32_t i;

	th_region_init(&t, 16, 4);
	r = &t.r;
	for (i = 1; i <= 6; i++)
		th_node_live(r, 1, i * 10, i * 10 + 5, 0, i);
	lru_verify(r, &m);
	vl_lru_append(r, 1);
	vl_lru_append(r, 2);
	vl_lru_append(r, 3);
	m = (struct lru_model){ { 1, 2, 3 }, 3 };
	lru_verify(r, &m);
	/* append moves to the tail; appending the tail again changes nothing */
	vl_lru_append(r, 2);
	m = (struct lru_model){ { 1, 3, 2 }, 3 };
	lru_verify(r, &m);
	vl_lru_append(r, 2);
	lru_verify(r, &m);
	vl_lru_append(r, 1);
	m = (struct lru_model){ { 3, 2, 1 }, 3 };
	lru_verify(r, &m);
	/* unlink, twice */
	vl_lru_unlink(r, 2);
	m = (struct lru_model){ { 3, 1 }, 2 };
	lru_verify(r, &m);
	vl_lru_unlink(r, 2);
	lru_verify(r, &m);
	vl_lru_unlink(r, VL_NIL);
	lru_verify(r, &m);
	/* insert at the head, in the middle, at the tail */
	vl_lru_insert_after(r, VL_NIL, 4);
	m = (struct lru_model){ { 4, 3, 1 }, 3 };
	lru_verify(r, &m);
	vl_lru_insert_after(r, 4, 5);
	m = (struct lru_model){ { 4, 5, 3, 1 }, 4 };
	lru_verify(r, &m);
	vl_lru_insert_after(r, 1, 6);
	m = (struct lru_model){ { 4, 5, 3, 1, 6 }, 5 };
	lru_verify(r, &m);
	/* insert of a linked node moves it */
	vl_lru_insert_after(r, 4, 6);
	m = (struct lru_model){ { 4, 6, 5, 3, 1 }, 5 };
	lru_verify(r, &m);
	vl_lru_insert_after(r, 1, VL_NIL); /* nothing */
	lru_verify(r, &m);
	/* free unlinks */
	vl_node_free(r, 5);
	m = (struct lru_model){ { 4, 6, 3, 1 }, 4 };
	lru_verify(r, &m);
	vl_node_free(r, 4);
	vl_node_free(r, 1);
	m = (struct lru_model){ { 6, 3 }, 2 };
	lru_verify(r, &m);
	vl_lru_unlink(r, 6);
	vl_lru_unlink(r, 3);
	m.n = 0;
	lru_verify(r, &m);
	ck_assert_uint_eq(r->hdr->c.lru_head, VL_NIL);
	ck_assert_uint_eq(r->hdr->c.lru_tail, VL_NIL);
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
	for (i = 1; i <= LN; i++)
		th_node_live(r, 1, i * 10, i * 10 + 5, 0, i);
	for (step = 0; step < 20000; step++) {
		uint32_t x = 1 + (uint32_t)th_below(&rng, LN);

		switch (th_below(&rng, 4)) {
		case 0:
			vl_lru_append(r, x);
			lm_remove(&m, x);
			lm_insert_at(&m, m.n, x);
			break;
		case 1:
			vl_lru_unlink(r, x);
			lm_remove(&m, x);
			break;
		default: {
			/* after a linked node, or at the head */
			uint32_t after = m.n > 0 && th_below(&rng, 5) ? m.a[th_below(&rng, (uint64_t)m.n)]
								   : VL_NIL;

			if (after == x)
				break;
			vl_lru_insert_after(r, after, x);
			lm_remove(&m, x);
			lm_insert_at(&m, after == VL_NIL ? 0 : lm_find(&m, after) + 1, x);
			break;
		}
		}
		lru_verify(r, &m);
	}
	th_region_fini(&t);
}
END_TEST

/* ---- file table ----------------------------------------------------------------- */

/* The table's hash (pool.c hash_of), to force collisions; checked below. */
static uint32_t home_of(const struct vl_region *r, uint64_t dev, uint64_t ino)
{
	uint64_t h = (ino ^ (dev * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;

	return (uint32_t)(h >> 32) & (r->hash_cap - 1);
}

#define NID 420

struct ftab {
	struct th_region t;
	const struct vl_region *r;
	uint64_t dev[NID], ino[NID];
	uint32_t live_fi[NID]; /* model: the LIVE file of each identity, or VL_NIL */
	/* model, by slot */
	uint32_t state[1024];
	uint32_t gen[1024];
	int ident_of[1024];
	uint32_t hwm;
	uint32_t used;
};

/*
 * Identities whose home slots crowd into a few places, one of them across
 * the end of the table, so probe runs are long, cross each other and wrap.
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

		switch (i % 6) {
		case 0:
		case 1:
		case 2:
			want = x->r->hash_cap - homes_from_end[i % 3];
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
		x->dev[i] = 0x800 + (uint64_t)(i % 2);
		for (;; ino++)
			if (want == UINT32_MAX || home_of(x->r, x->dev[i], ino) == want)
				break;
		x->ino[i] = ino++;
		x->live_fi[i] = VL_NIL;
	}
}

static void ftab_verify(struct ftab *x)
{
	const struct vl_region *r = x->r;
	const struct vl_counters *c = &r->hdr->c;
	uint32_t j, fi, nlive = 0, nin = 0;
	int i;

	/* every identity is found exactly where the model says */
	for (i = 0; i < NID; i++) {
		int err = vl_file_lookup(r, x->dev[i], x->ino[i], &fi);

		th_check_msg(err == 0, "lookup %d: %d", i, err);
		th_check_msg(fi == x->live_fi[i], "lookup of identity %d: file %u, want %u", i, fi,
			     x->live_fi[i]);
	}
	/* the table holds exactly the LIVE files, each once, on unbroken probe runs */
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
		if (x->state[fi] != VL_FILE_FREE) {
			th_check(f->h.ident.dev == x->dev[x->ident_of[fi]]);
			th_check(f->h.ident.ino == x->ino[x->ident_of[fi]]);
		}
	}
	th_check_msg(nin == nlive, "table holds %u files, %u are LIVE", nin, nlive);
	th_check_msg(c->files_used == x->used, "files_used %u, want %u", c->files_used, x->used);
	th_check(c->file_hwm == x->hwm);
}

static uint32_t ftab_create(struct ftab *x, int i)
{
	struct vl_ident id = th_ident(x->dev[i], x->ino[i]);
	int fresh = -1;
	uint32_t fi = vl_file_create(x->r, &id, &fresh);

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
	x->state[fi] = VL_FILE_LIVE;
	x->ident_of[fi] = i;
	x->live_fi[i] = fi;
	x->used++;
	return fi;
}

static void ftab_unhash(struct ftab *x, uint32_t fi)
{
	vl_file_unhash(x->r, fi);
	if (x->state[fi] == VL_FILE_LIVE) {
		x->state[fi] = VL_FILE_STALE;
		x->live_fi[x->ident_of[fi]] = VL_NIL;
	}
}

static void ftab_release(struct ftab *x, uint32_t fi)
{
	vl_file_release(x->r, fi);
	if (x->state[fi] == VL_FILE_FREE)
		return;
	if (x->state[fi] == VL_FILE_LIVE)
		x->live_fi[x->ident_of[fi]] = VL_NIL;
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
		uint32_t h = home_of(x->r, x->dev[i], x->ino[i]);

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
	uint32_t a, b, fi;

	ck_assert_ptr_nonnull(x);
	ftab_init(x, 8);
	a = ftab_create(x, 0);
	b = ftab_create(x, 1);
	ck_assert_uint_eq(a, 1);
	ck_assert_uint_eq(b, 2);
	ftab_verify(x);
	ck_assert_uint_eq(vl_file_at(x->r, a)->h.gen, 0);
	/* unhash: STALE, out of the table, the same identity can come again */
	ftab_unhash(x, a);
	ftab_verify(x);
	ck_assert_uint_eq(vl_file_at(x->r, a)->h.state, VL_FILE_STALE);
	fi = ftab_create(x, 0);
	ck_assert_uint_eq(fi, 3);
	ftab_verify(x);
	ftab_unhash(x, a); /* twice: nothing */
	ftab_verify(x);
	/* release: FREE, gen bumped, slot reused with the same gen */
	ftab_release(x, a);
	ftab_verify(x);
	ck_assert_uint_eq(vl_file_at(x->r, a)->h.gen, 1);
	ck_assert_uint_eq(vl_file_at(x->r, a)->h.state, VL_FILE_FREE);
	ftab_release(x, a); /* twice: nothing, no second bump */
	ftab_verify(x);
	ck_assert_uint_eq(vl_file_at(x->r, a)->h.gen, 1);
	vl_file_release(x->r, VL_NIL);
	vl_file_release(x->r, x->r->file_cap + 1);
	ftab_verify(x);
	fi = ftab_create(x, 7);
	ck_assert_uint_eq(fi, a);
	ck_assert_uint_eq(vl_file_at(x->r, fi)->h.gen, 1);
	ftab_verify(x);
	/* release of a LIVE file takes it out of the table too */
	ftab_release(x, b);
	ftab_verify(x);
	ck_assert_uint_eq(vl_file_at(x->r, b)->h.gen, 1);
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
	ftab_verify(x);
	ftab_unhash(x, 2); /* STALE still holds its slot */
	ck_assert_uint_eq(ftab_create(x, 10), VL_NIL);
	ftab_release(x, 2);
	ck_assert_uint_eq(ftab_create(x, 10), 2);
	ftab_verify(x);
	th_region_fini(&x->t);
	free(x);
}
END_TEST

/* Thousands of random creates, unhashes and releases on crowded probe runs. */
START_TEST(test_file_random)
{
	static const uint64_t seeds[] = { 5, 6, 7 };
	static const uint32_t sizes[] = { 200, 60, 7 };
	struct ftab *x = malloc(sizeof(*x));
	uint64_t rng = seeds[_i];
	int step;

	ck_assert_ptr_nonnull(x);
	ftab_init(x, sizes[_i]);
	for (step = 0; step < 6000; step++) {
		uint32_t op = (uint32_t)th_below(&rng, 100);
		int i = (int)th_below(&rng, NID);
		/* the fill drifts: mostly creating in the first half of each 1000 steps */
		uint32_t create_pct = step % 1000 < 500 ? 55 : 30;

		if (op < create_pct) {
			if (x->live_fi[i] == VL_NIL)
				ftab_create(x, i);
		} else if (op < create_pct + 20) {
			uint32_t fi = 1 + (uint32_t)th_below(&rng, x->hwm > 1 ? x->hwm - 1 : 1);

			if (fi < x->hwm)
				ftab_unhash(x, fi);
		} else {
			uint32_t fi = 1 + (uint32_t)th_below(&rng, x->hwm > 1 ? x->hwm - 1 : 1);

			if (fi < x->hwm)
				ftab_release(x, fi);
		}
		ftab_verify(x);
	}
	th_region_fini(&x->t);
	free(x);
}
END_TEST

START_TEST(test_lookup_corrupt)
{
	struct ftab *x = malloc(sizeof(*x));
	const struct vl_region *r;
	uint32_t a, fi, h, j;

	ck_assert_ptr_nonnull(x);
	ftab_init(x, 8);
	r = x->r;
	a = ftab_create(x, 0);
	h = home_of(r, x->dev[0], x->ino[0]);
	ck_assert_uint_eq(r->hash[h], a);
	/* the slot points at a file that is not LIVE */
	vl_file_at(r, a)->h.state = VL_FILE_FREE;
	vl_file_seal(r, vl_file_at(r, a));
	ck_assert_int_eq(vl_file_lookup(r, x->dev[0], x->ino[0], &fi), -EUCLEAN);
	vl_file_at(r, a)->h.state = VL_FILE_LIVE;
	/* a bad sum */
	ck_assert_int_eq(vl_file_lookup(r, x->dev[0], x->ino[0], &fi), -EUCLEAN);
	vl_file_seal(r, vl_file_at(r, a));
	ck_assert_int_eq(vl_file_lookup(r, x->dev[0], x->ino[0], &fi), 0);
	ck_assert_uint_eq(fi, a);
	/* out of range */
	r->hash[h] = r->file_cap + 3;
	ck_assert_int_eq(vl_file_lookup(r, x->dev[0], x->ino[0], &fi), -EUCLEAN);
	/* no empty slot anywhere: the probe ends */
	for (j = 0; j < r->hash_cap; j++)
		r->hash[j] = a;
	ck_assert_int_eq(vl_file_lookup(r, 1, 2, &fi), -EUCLEAN);
	th_region_fini(&x->t);
	free(x);
}
END_TEST

/* ---- vl_commit and vl_pool_rebuild ------------------------------------------------ */

static void pmark(const struct vl_region *r, uint32_t fi, uint64_t s, uint64_t e)
{
	struct vl_change c;
	uint32_t spare = vl_node_alloc(r, fi);
	int err = vl_ranges_mark(r, th_root(r, fi), fi, s, e, spare, &c);

	ck_assert_int_eq(err, 0);
	vl_commit(r, fi, &c, spare);
}

static int punmark(const struct vl_region *r, uint32_t fi, uint64_t s, uint64_t e)
{
	struct vl_change c;
	uint32_t spare = VL_NIL;
	int err = vl_ranges_unmark(r, th_root(r, fi), fi, s, e, VL_NIL, &c);

	if (err == -ENOMEM) {
		spare = vl_node_alloc(r, fi);
		ck_assert_uint_ne(spare, VL_NIL);
		err = vl_ranges_unmark(r, th_root(r, fi), fi, s, e, spare, &c);
	}
	ck_assert_int_eq(err, 0);
	vl_commit(r, fi, &c, spare);
	return c.was_purged;
}

static void ppurge_oldest(const struct vl_region *r)
{
	uint32_t n = r->hdr->c.lru_head, fi;
	struct vl_change c;

	ck_assert_uint_ne(n, VL_NIL);
	fi = vl_node_file(vl_node_at(r, n));
	ck_assert_int_eq(vl_ranges_purge(r, th_root(r, fi), fi, n, &c), 0);
	vl_commit(r, fi, &c, VL_NIL);
}

/* A spare that the change does not use goes back to the free list. */
START_TEST(test_commit_frees_unused_spare)
{
	struct th_region t;
	const struct vl_region *r;
	uint32_t fi;

	th_region_init(&t, 16, 4);
	r = &t.r;
	fi = th_file_new(r, 1, 1);
	pmark(r, fi, 0, 10);
	ck_assert_uint_eq(r->hdr->c.nodes_used, 1);
	pmark(r, fi, 5, 20); /* merges: the spare is not used */
	ck_assert_uint_eq(r->hdr->c.nodes_used, 1);
	pmark(r, fi, 2, 3); /* inside */
	ck_assert_uint_eq(r->hdr->c.nodes_used, 1);
	ck_assert_uint_eq(r->hdr->c.seq, 2);
	pmark(r, fi, 30, 40);
	ck_assert_uint_eq(r->hdr->c.nodes_used, 2);
	ck_assert_int_eq(punmark(r, fi, 0, 100), 0);
	ck_assert_uint_eq(r->hdr->c.nodes_used, 0);
	ck_assert_uint_eq(r->hdr->c.ranges, 0);
	ck_assert_uint_eq(r->hdr->c.volatile_bytes, 0);
	ck_assert_uint_eq(r->hdr->c.lru_head, VL_NIL);
	ck_assert_uint_eq(vl_file_at(r, fi)->h.nranges, 0);
	th_region_fini(&t);
}
END_TEST

struct pool_snap {
	struct vl_counters c;
	uint32_t lru[512];
	uint32_t lru_seq[512];
	int nlru;
	unsigned char node_free[512];
	uint32_t file_state[64];
	uint32_t file_gen[64];
};

static void take_snap(const struct vl_region *r, struct pool_snap *s)
{
	uint32_t n, i;

	memset(s, 0, sizeof(*s));
	s->c = r->hdr->c;
	for (n = r->hdr->c.lru_head; n != VL_NIL; n = vl_node_at(r, n)->next) {
		ck_assert_int_lt(s->nlru, 512);
		s->lru_seq[s->nlru] = vl_node_at(r, n)->seq;
		s->lru[s->nlru++] = n;
	}
	for (i = 1; i < r->hdr->c.node_hwm; i++)
		s->node_free[i] = vl_node_state(vl_node_at(r, i)) == VL_NODE_FREE;
	for (i = 1; i < r->hdr->c.file_hwm; i++) {
		s->file_state[i] = vl_file_at(r, i)->h.state;
		s->file_gen[i] = vl_file_at(r, i)->h.gen;
	}
}

/* Scribble on everything the region lock guards (a holder died mid-way). */
static void scramble(const struct vl_region *r, uint64_t *rng)
{
	struct vl_counters *c = &r->hdr->c;
	uint32_t i;

	c->node_free = (uint32_t)th_rand(rng);
	c->nodes_used = (uint32_t)th_rand(rng);
	c->file_free = (uint32_t)th_rand(rng) % r->file_cap;
	c->files_used = 12345;
	c->lru_head = (uint32_t)th_rand(rng) % r->node_cap;
	c->lru_tail = (uint32_t)th_rand(rng);
	c->ranges = 7;
	c->ranges_purged = 9;
	c->volatile_bytes = th_rand(rng);
	c->purged_bytes = th_rand(rng);
	for (i = 1; i < r->node_cap; i++) {
		vl_node_at(r, i)->prev = (uint32_t)th_rand(rng);
		vl_node_at(r, i)->next = (uint32_t)th_rand(rng);
	}
	for (i = 0; i < r->hash_cap; i++)
		r->hash[i] = (uint32_t)th_below(rng, 3) == 0 ? (uint32_t)th_rand(rng) : 0;
	for (i = 1; i < r->file_cap; i++)
		vl_file_at(r, i)->h.next_free = (uint32_t)th_rand(rng);
}

static void check_rebuilt(const struct vl_region *r, const struct pool_snap *s, int exact_lru)
{
	const struct vl_counters *c = &r->hdr->c;
	uint32_t n, i, prev = VL_NIL, expect_next;
	int k;

	ck_assert_uint_eq(c->nodes_used, s->c.nodes_used);
	ck_assert_uint_eq(c->ranges, s->c.ranges);
	ck_assert_uint_eq(c->ranges_purged, s->c.ranges_purged);
	ck_assert_uint_eq(c->volatile_bytes, s->c.volatile_bytes);
	ck_assert_uint_eq(c->purged_bytes, s->c.purged_bytes);
	ck_assert_uint_eq(c->files_used, s->c.files_used);
	ck_assert_uint_eq(c->node_hwm, s->c.node_hwm);
	ck_assert_uint_eq(c->file_hwm, s->c.file_hwm);
	ck_assert_uint_eq(c->seq, s->c.seq);

	/* the LRU: the same ranges, oldest first (age = seq - node seq, wrap-safe) */
	for (k = 0, n = c->lru_head; n != VL_NIL; k++, n = vl_node_at(r, n)->next) {
		const struct vl_node *x = vl_node_at(r, n);

		ck_assert_int_lt(k, s->nlru);
		ck_assert_uint_eq(x->prev, prev);
		ck_assert_uint_eq(x->seq, s->lru_seq[k]);
		if (exact_lru)
			ck_assert_uint_eq(n, s->lru[k]);
		if (prev != VL_NIL)
			ck_assert_uint_le(c->seq - vl_node_at(r, n)->seq,
					  c->seq - vl_node_at(r, prev)->seq);
		prev = n;
	}
	ck_assert_int_eq(k, s->nlru);
	ck_assert_uint_eq(c->lru_tail, prev);
	for (k = 0; k < s->nlru; k++)
		ck_assert(vl_lru_linked(r, s->lru[k]));

	/* the free list: every free slot, lowest first */
	expect_next = 1;
	for (n = c->node_free; n != VL_NIL; n = vl_node_at(r, n)->next) {
		while (expect_next < c->node_hwm && !s->node_free[expect_next])
			expect_next++;
		ck_assert_uint_eq(n, expect_next);
		ck_assert(node_is_zero_free(r, n));
		expect_next++;
	}
	while (expect_next < c->node_hwm && !s->node_free[expect_next])
		expect_next++;
	ck_assert_uint_eq(expect_next, c->node_hwm);

	/* files: LIVE ones found, others not; states and gens kept; free ones listed */
	for (i = 1; i < c->file_hwm; i++) {
		const struct vl_file *f = vl_file_at(r, i);
		uint32_t fi;

		ck_assert_uint_eq(f->h.state, s->file_state[i]);
		ck_assert_uint_eq(f->h.gen, s->file_gen[i]);
		ck_assert(vl_file_ok(r, f));
		if (f->h.state == VL_FILE_FREE)
			continue;
		ck_assert_int_eq(vl_file_lookup(r, f->h.ident.dev, f->h.ident.ino, &fi), 0);
		if (f->h.state == VL_FILE_LIVE)
			ck_assert_uint_eq(fi, i);
		else
			ck_assert_uint_ne(fi, i);
	}
	for (i = 0; i < r->hash_cap; i++)
		if (r->hash[i] != VL_NIL)
			ck_assert_uint_eq(vl_file_at(r, r->hash[i])->h.state, VL_FILE_LIVE);
	expect_next = 1;
	for (n = c->file_free; n != VL_NIL; n = vl_file_at(r, n)->h.next_free) {
		while (expect_next < c->file_hwm && s->file_state[expect_next] != VL_FILE_FREE)
			expect_next++;
		ck_assert_uint_eq(n, expect_next);
		expect_next++;
	}
	while (expect_next < c->file_hwm && s->file_state[expect_next] != VL_FILE_FREE)
		expect_next++;
	ck_assert_uint_eq(expect_next, c->file_hwm);
	ck_assert(th_sentinel_zero(r));
}

/*
 * Files 1..6 with ranges (some purged, none split); file 7 released;
 * file 3 unhashed (STALE, keeps its ranges). seq starts at `seq0`.
 */
static void build_pool(const struct vl_region *r, uint32_t seq0, uint64_t *rng, uint32_t *files)
{
	uint32_t f, i;

	r->hdr->c.seq = seq0;
	for (f = 0; f < 7; f++)
		files[f] = th_file_new(r, 0x801, 500 + f);
	for (i = 0; i < 120; i++) {
		uint32_t fi = files[th_below(rng, 6)];
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
	vl_file_unhash(r, files[2]);
}

START_TEST(test_rebuild)
{
	static const uint32_t seq0[] = { 0, 0xffffffc0u };
	struct th_region t;
	const struct vl_region *r;
	struct pool_snap *s = malloc(sizeof(*s));
	uint32_t files[7];
	uint64_t rng = 31337 + (uint64_t)_i;

	ck_assert_ptr_nonnull(s);
	th_region_init(&t, 400, 16);
	r = &t.r;
	build_pool(r, seq0[_i], &rng, files);
	ck_assert_uint_gt(r->hdr->c.ranges_purged, 3);
	ck_assert_uint_gt(r->hdr->c.ranges - r->hdr->c.ranges_purged, 10);
	ck_assert_uint_lt(r->hdr->c.nodes_used + 1, r->hdr->c.node_hwm); /* some free slots */
	if (seq0[_i] != 0) /* the ages wrapped around 2^32 during the build */
		ck_assert_uint_lt(r->hdr->c.seq, 1000);
	take_snap(r, s);
	scramble(r, &rng);
	vl_pool_rebuild(r);
	check_rebuilt(r, s, 1);
	/* a second rebuild of a sound pool changes nothing */
	vl_pool_rebuild(r);
	check_rebuilt(r, s, 1);
	/* and it works on: the lowest free slot is handed out first */
	{
		uint32_t lowest = r->hdr->c.node_free;

		ck_assert_uint_ne(lowest, VL_NIL);
		ck_assert_uint_eq(vl_node_alloc(r, files[0]), lowest);
	}
	free(s);
	th_region_fini(&t);
}
END_TEST

/* The halves of a split share an age: the rebuilt LRU keeps them, in age order. */
START_TEST(test_rebuild_with_splits)
{
	struct th_region t;
	const struct vl_region *r;
	struct pool_snap *s = malloc(sizeof(*s));
	uint32_t fi, gi;
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
	take_snap(r, s);
	ck_assert_int_eq(s->nlru, 8);
	scramble(r, &rng);
	vl_pool_rebuild(r);
	check_rebuilt(r, s, 0);
	free(s);
	th_region_fini(&t);
}
END_TEST

/* hwm counters out of range are clamped, not trusted */
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
	ck_assert_uint_eq(r->hdr->c.node_hwm, r->node_cap);
	ck_assert_uint_eq(r->hdr->c.file_hwm, 1);
	ck_assert_uint_eq(r->hdr->c.nodes_used, 2);
	ck_assert_uint_eq(r->hdr->c.ranges, 2);
	ck_assert_uint_eq(r->hdr->c.volatile_bytes, 20);
	ck_assert(th_sentinel_zero(r));
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
	tcase_add_test(tc, test_alloc_random);
	suite_add_tcase(s, tc);
	tc = th_tcase("lru", 30);
	tcase_add_test(tc, test_lru_basic);
	tcase_add_test(tc, test_lru_random);
	suite_add_tcase(s, tc);
	tc = th_tcase("files", 30);
	tcase_add_test(tc, test_hash_copy_matches);
	tcase_add_test(tc, test_file_basic);
	tcase_add_test(tc, test_file_full);
	tcase_add_loop_test(tc, test_file_random, 0, 3);
	tcase_add_test(tc, test_lookup_corrupt);
	suite_add_tcase(s, tc);
	tc = th_tcase("commit", 30);
	tcase_add_test(tc, test_commit_frees_unused_spare);
	tcase_add_loop_test(tc, test_rebuild, 0, 2);
	tcase_add_test(tc, test_rebuild_with_splits);
	tcase_add_test(tc, test_rebuild_clamps_hwm);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return th_run(pool_suite());
}
