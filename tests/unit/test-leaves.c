/* SPDX-License-Identifier: MIT */
/*
 * test-leaves.c - format 10's B+tree of leaves (core/leaves.c) against
 * the model of DESIGN 3 (tests/unit/model.c), and against stray writes
 * (DESIGN 18).
 *
 * The differential runs: every answer, every change report (punch,
 * counts) and the range list after each step, with the tree's shape
 * checked (fill, keys, intervals, least ages) and every block accounted
 * for (in the tree, in the reservation, or free).
 */
#include "harness.h"
#include "model.h"

#include "core/leaves.h"

void model_fail(const char *msg)
{
	ck_abort_msg("%s", msg);
	abort();
}

/* ---- a tree in heap memory, with the caller's allocator ------------------- */

struct lt {
	union vl_lv_block *b;
	uint32_t cap;
	struct vl_lv_root root;
	struct vl_lv t;
	uint32_t *free;   /* a stack of free blocks */
	uint32_t nfree;
	struct vl_lv_res res;
};

static void lt_init(struct lt *x, uint32_t cap, uint32_t file)
{
	uint32_t i;

	memset(x, 0, sizeof(*x));
	x->cap = cap;
	th_check(posix_memalign((void **)&x->b, 64, (size_t)cap * sizeof(*x->b)) == 0);
	memset(x->b, 0, (size_t)cap * sizeof(*x->b));
	x->free = malloc(cap * sizeof(uint32_t));
	for (i = cap - 1; i >= 1; i--)
		x->free[x->nfree++] = i;
	x->t = (struct vl_lv){ .b = x->b, .cap = cap, .file = file, .root = &x->root };
}

static void lt_fini(struct lt *x)
{
	free(x->b);
	free(x->free);
}

/* The reservation filled to what a change needs. */
static void lt_reserve(struct lt *x)
{
	while (x->res.n < vl_lv_need(&x->t) && x->nfree > 0)
		x->res.blk[x->res.n++] = x->free[--x->nfree];
}

/* What a change let go, back to the allocator. */
static void lt_commit(struct lt *x, const struct vl_lv_change *c)
{
	uint32_t b = c->freed, k;

	for (k = 0; k < c->nfreed; k++) {
		th_check(b != 0 && b < x->cap);
		x->free[x->nfree++] = b;
		b = x->b[b].next_free;
	}
	th_check(b == 0);
}

static void leaf_of(const struct lt *x, uint32_t b, struct vl_lv_leafcopy *L);

/* For a failure's reader: the tree, on stderr (LT_DUMP=1). */
static void lt_dump(const struct lt *x, uint32_t b, uint32_t level, int depth)
{
	uint32_t i;

	if (level == 0) {
		struct vl_lv_leafcopy L;

		leaf_of(x, b, &L);
		fprintf(stderr, "%*sleaf %u [%" PRIu64 ", %" PRIu64 "):", depth * 2, "", b, L.lo, L.hi);
		for (i = 0; i < L.n; i++)
			fprintf(stderr, " [%" PRIu64 ",%" PRIu64 ")%s%u", L.r[i].start, L.r[i].end,
				L.r[i].purged ? "P" : "a", L.r[i].age);
		fprintf(stderr, "\n");
		return;
	}
	fprintf(stderr, "%*sinner %u hdr %x:", depth * 2, "", b, x->b[b].in.hdr);
	for (i = 0; i < (x->b[b].in.hdr & 0xff); i++)
		fprintf(stderr, " %" PRIu64 "->%u(%u)", x->b[b].in.key[i], x->b[b].in.child[i],
			x->b[b].in.minage[i]);
	fprintf(stderr, "\n");
	for (i = 0; i < (x->b[b].in.hdr & 0xff); i++)
		lt_dump(x, x->b[b].in.child[i], level - 1, depth + 1);
}

static void lt_dump_all(const struct lt *x)
{
	if (getenv("LT_DUMP") && x->root.height)
		lt_dump(x, x->root.block, x->root.height - 1, 0);
}

/* ---- the tree's shape ------------------------------------------------------- */

struct shape {
	uint64_t lo, hi; /* the subtree's interval */
	uint32_t min;    /* least unpurged age */
	uint32_t blocks;
	uint64_t ranges;
};

static void leaf_of(const struct lt *x, uint32_t b, struct vl_lv_leafcopy *L)
{
	const struct vl_lv_line *l = x->b[b].line;
	uint32_t i;

	L->n = l[0].age[0] & 0xffff;
	th_check((l[0].age[0] & 0xffff0000u) == VL_LV_LEAF && L->n <= VL_LV_CAP);
	L->lo = l[0].start[0];
	L->hi = l[0].end[0];
	for (i = 0; i < L->n; i++) {
		const struct vl_lv_line *y = &l[(i + 1) / 3];
		unsigned j = (i + 1) % 3;

		L->r[i].start = y->start[j] & ~VL_LV_PURGED;
		L->r[i].purged = (int)(y->start[j] >> 63);
		L->r[i].end = y->end[j];
		L->r[i].age = y->age[j];
	}
}

static void shape_of(const struct lt *x, uint32_t b, uint32_t level, int root, struct shape *s)
{
	uint32_t i;

	th_check(b != 0 && b < x->cap);
	s->blocks = 1;
	s->ranges = 0;
	s->min = VL_LV_NOAGE;
	if (level == 0) {
		struct vl_lv_leafcopy L;

		leaf_of(x, b, &L);
		th_check_msg(root || L.n >= VL_LV_MIN, "leaf %u holds %u ranges", b, L.n);
		s->lo = L.lo;
		s->hi = L.hi;
		s->ranges = L.n;
		for (i = 0; i < L.n; i++) {
			th_check(L.r[i].start >= L.lo && L.r[i].start < L.hi);
			if (!L.r[i].purged && L.r[i].age < s->min)
				s->min = L.r[i].age;
		}
		return;
	} else {
		const struct vl_lv_inner *in = &x->b[b].in;
		uint32_t n = in->hdr & 0xff;

		th_check((in->hdr & 0xff000000u) == VL_LV_INNER && ((in->hdr >> 8) & 0xff) == level);
		th_check_msg(n <= VL_LV_FAN && n >= (root ? 2 : VL_LV_FAN_MIN),
			     "inner %u holds %u children", b, n);
		for (i = 0; i < n; i++) {
			struct shape c;

			shape_of(x, in->child[i], level - 1, 0, &c);
			th_check_msg(c.lo == in->key[i], "inner %u key %u: %" PRIu64 ", child lo %" PRIu64,
				     b, i, in->key[i], c.lo);
			th_check_msg(c.min == in->minage[i], "inner %u minage %u: %u, below %u", b, i,
				     in->minage[i], c.min);
			if (i == 0)
				s->lo = c.lo;
			else
				th_check(c.lo == s->hi);
			s->hi = c.hi;
			if (c.min < s->min)
				s->min = c.min;
			s->blocks += c.blocks;
			s->ranges += c.ranges;
		}
	}
}

/* The tree's shape sound, every block accounted for: its ranges. */
static uint64_t lt_verify(struct lt *x)
{
	struct shape s = { 0 };
	uint32_t leaves, inner;
	uint64_t ranges;

	if (x->root.height != 0) {
		shape_of(x, x->root.block, x->root.height - 1, 1, &s);
		th_check(s.lo == 0 && s.hi == VL_LV_END);
	}
	th_check_msg(s.blocks + x->nfree + x->res.n == x->cap - 1,
		     "blocks: %u in the tree, %u free, %u reserved, of %u", s.blocks, x->nfree,
		     x->res.n, x->cap - 1);
	th_check(vl_lv_count(&x->t, &leaves, &inner, &ranges) == 0);
	th_check(leaves + inner == s.blocks && ranges == s.ranges);
	return s.ranges;
}

/* ---- the model, as big as the tree: windows of it run through model.c ------------ */

struct big {
	struct mr *a;
	uint32_t n, cap;
};

static void big_init(struct big *m, uint32_t cap)
{
	m->a = calloc(cap, sizeof(*m->a));
	m->n = 0;
	m->cap = cap;
}

/* First range that ends at s or after. */
static uint32_t big_first_end(const struct big *m, uint64_t s)
{
	uint32_t lo = 0, hi = m->n;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (m->a[mid].e < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The window of ranges [s, e) may change: those it meets or touches and
 * two more either side (a join reaches one neighbour each side, DESIGN 3's
 * ranges never touch in the same state). Copied into w; *i0: its place.
 */
static void big_window(const struct big *m, uint64_t s, uint64_t e, struct mfile *w, uint32_t *i0,
		       uint32_t *len)
{
	uint32_t a = big_first_end(m, s), z = a;

	while (z < m->n && m->a[z].s <= e)
		z++;
	a = a >= 2 ? a - 2 : 0;
	z = z + 2 <= m->n ? z + 2 : m->n;
	th_check(z - a + 2 <= MAXR);
	w->n = (int)(z - a);
	memcpy(w->a, &m->a[a], (z - a) * sizeof(struct mr));
	*i0 = a;
	*len = z - a;
}

static void big_splice(struct big *m, uint32_t i0, uint32_t len, const struct mfile *w)
{
	th_check(m->n - len + (uint32_t)w->n <= m->cap);
	memmove(&m->a[i0 + (uint32_t)w->n], &m->a[i0 + len], (m->n - i0 - len) * sizeof(struct mr));
	memcpy(&m->a[i0], w->a, (size_t)w->n * sizeof(struct mr));
	m->n = m->n - len + (uint32_t)w->n;
}

/* ---- the differential run ----------------------------------------------------------- */

struct run {
	struct lt x;
	struct big m;
	uint64_t space;
	uint32_t seq;
	uint64_t rng;
	int step;
};

static uint64_t rnd(struct run *r)
{
	r->rng ^= r->rng << 13;
	r->rng ^= r->rng >> 7;
	r->rng ^= r->rng << 17;
	return r->rng;
}

static void totals(const struct mr *a, uint32_t n, int64_t *v, int64_t *p, int32_t *nr,
		   int32_t *np)
{
	uint32_t i;

	*v = *p = 0;
	*nr = (int32_t)n;
	*np = 0;
	for (i = 0; i < n; i++) {
		if (a[i].p) {
			*p += (int64_t)(a[i].e - a[i].s);
			++*np;
		} else {
			*v += (int64_t)(a[i].e - a[i].s);
		}
	}
}

/* The change report's counts are the model's before and after. */
static void check_counts(struct run *r, const struct mfile *before, const struct mfile *after,
			 const struct vl_lv_change *c, const char *op)
{
	int64_t v0, p0, v1, p1;
	int32_t n0, q0, n1, q1;

	totals(before->a, (uint32_t)before->n, &v0, &p0, &n0, &q0);
	totals(after->a, (uint32_t)after->n, &v1, &p1, &n1, &q1);
	th_check_msg(c->d_vbytes == v1 - v0 && c->d_pbytes == p1 - p0 && c->d_ranges == n1 - n0 &&
			     c->d_purged == q1 - q0,
		     "step %d %s: counts %" PRId64 " %" PRId64 " %d %d, model %" PRId64 " %" PRId64
		     " %d %d",
		     r->step, op, c->d_vbytes, c->d_pbytes, c->d_ranges, c->d_purged, v1 - v0,
		     p1 - p0, n1 - n0, q1 - q0);
}

/* The tree's ranges from i0 on, len of them, are the model's (all of them: len = n). */
static void compare(struct run *r, uint32_t i0, uint32_t len)
{
	struct vl_lv_walk w;
	struct vl_lv_range g;
	uint32_t k = 0;
	int got;

	if (i0 + len > r->m.n)
		len = r->m.n - i0;
	vl_lv_walk_init(&w, &r->x.t);
	if (i0 == 0) {
		while (k < len && (got = vl_lv_walk_next(&w, &g)) == 1) {
			const struct mr *a = &r->m.a[k];

			th_check_msg(g.start == a->s && g.end == a->e && g.purged == a->p &&
					     (a->p || g.age == a->age),
				     "step %d: range %u is [%" PRIu64 ", %" PRIu64 ") p%d age %u,"
				     " model [%" PRIu64 ", %" PRIu64 ") p%d age %u",
				     r->step, k, g.start, g.end, g.purged, g.age, a->s, a->e, a->p,
				     a->age);
			k++;
		}
		th_check_msg(k == len, "step %d: %u ranges, model %u", r->step, k, len);
		if (len == r->m.n)
			th_check(vl_lv_walk_next(&w, &g) == 0);
	}
}

static void window_compare(struct run *r, uint64_t s, uint64_t e)
{
	struct mfile w;
	uint32_t i0, len, k;

	big_window(&r->m, s, e, &w, &i0, &len);
	for (k = 0; k < len; k++) {
		const struct mr *a = &r->m.a[i0 + k];
		int any = vl_lv_any_in(&r->x.t, a->s, a->e);

		th_check_msg(any == 1, "step %d: range [%" PRIu64 ", %" PRIu64 ") not found (%d)",
			     r->step, a->s, a->e, any);
	}
}

static void op_mark(struct run *r, uint64_t s, uint64_t e)
{
	struct mfile *w = malloc(2 * sizeof(*w)), *before = &w[1];
	struct vl_lv_change c;
	uint32_t i0, len;
	int i, err, purged = 0, first = -1, last = -1;
	uint64_t ps = 0, pe = 0;

	big_window(&r->m, s, e, w, &i0, &len);
	*before = *w;
	for (i = 0; i < w->n; i++) {
		if (w->a[i].s < e && w->a[i].e > s) {
			if (first < 0)
				first = i;
			last = i;
			purged |= w->a[i].p;
		}
	}
	r->seq++;
	lt_reserve(&r->x);
	if (getenv("LT_DUMP") && r->step == atoi(getenv("LT_DUMP")))
		lt_dump_all(&r->x);
	err = vl_lv_mark(&r->x.t, s, e, r->seq, &r->x.res, &c);
	if (err)
		lt_dump_all(&r->x);
	th_check_msg(err == 0, "step %d: mark [%" PRIu64 ", %" PRIu64 "): %d", r->step, s, e, err);
	lt_commit(&r->x, &c);
	if (m_mark(w, s, e, r->seq) && purged) {
		ps = !w[1].a[first].p && w[1].a[first].s < s ? w[1].a[first].s : s;
		pe = !w[1].a[last].p && w[1].a[last].e > e ? w[1].a[last].e : e;
	}
	th_check_msg(c.punch_start == ps && c.punch_end == pe,
		     "step %d: mark [%" PRIu64 ", %" PRIu64 ") punches [%" PRIu64 ", %" PRIu64
		     "), model [%" PRIu64 ", %" PRIu64 ")",
		     r->step, s, e, c.punch_start, c.punch_end, ps, pe);
	check_counts(r, before, w, &c, "mark");
	big_splice(&r->m, i0, len, w);
	free(w);
}

static void op_unmark(struct run *r, uint64_t s, uint64_t e)
{
	struct mfile *w = malloc(2 * sizeof(*w)), *before = &w[1];
	struct vl_lv_change c;
	uint32_t i0, len;
	int err, wp;

	big_window(&r->m, s, e, w, &i0, &len);
	*before = *w;
	lt_reserve(&r->x);
	err = vl_lv_unmark(&r->x.t, s, e, &r->x.res, &c);
	th_check_msg(err == 0, "step %d: unmark [%" PRIu64 ", %" PRIu64 "): %d", r->step, s, e,
		     err);
	lt_commit(&r->x, &c);
	wp = m_unmark(w, s, e);
	th_check_msg(c.was_purged == wp, "step %d: unmark [%" PRIu64 ", %" PRIu64 ") says %d, model %d",
		     r->step, s, e, c.was_purged, wp);
	th_check(c.punch_start == c.punch_end);
	check_counts(r, before, w, &c, "unmark");
	big_splice(&r->m, i0, len, w);
	free(w);
}

/* A range put back as it was (a moved file's, a repair's): joined as model.c's m_merge_in. */
static void op_absorb(struct run *r, uint64_t s, uint64_t e, int p)
{
	struct mfile *w = malloc(2 * sizeof(*w)), *before = &w[1];
	struct vl_lv_change c;
	uint32_t i0, len;
	int err;

	big_window(&r->m, s, e, w, &i0, &len);
	*before = *w;
	r->seq++;
	lt_reserve(&r->x);
	err = vl_lv_absorb(&r->x.t, s, e, p, r->seq, &r->x.res, &c);
	th_check_msg(err == 0, "step %d: absorb [%" PRIu64 ", %" PRIu64 "): %d", r->step, s, e, err);
	lt_commit(&r->x, &c);
	m_merge_in(w, s, e, p, r->seq);
	th_check(c.punch_start == c.punch_end);
	check_counts(r, before, w, &c, "absorb");
	big_splice(&r->m, i0, len, w);
	free(w);
}

static void op_purge_oldest(struct run *r)
{
	struct mfile *w = malloc(2 * sizeof(*w)), *before = &w[1];
	struct vl_lv_range o;
	struct vl_lv_change c;
	uint32_t i, best = UINT32_MAX, i0, len;
	int got, j;

	for (i = 0; i < r->m.n; i++)
		if (!r->m.a[i].p && (best == UINT32_MAX || r->m.a[i].age < r->m.a[best].age))
			best = i;
	got = vl_lv_oldest(&r->x.t, &o);
	th_check_msg(got == (best != UINT32_MAX), "step %d: oldest says %d", r->step, got);
	if (!got) {
		free(w);
		return;
	}
	th_check_msg(o.start == r->m.a[best].s && o.end == r->m.a[best].e && o.age == r->m.a[best].age,
		     "step %d: oldest [%" PRIu64 ", %" PRIu64 ") age %u, model [%" PRIu64
		     ", %" PRIu64 ") age %u",
		     r->step, o.start, o.end, o.age, r->m.a[best].s, r->m.a[best].e,
		     r->m.a[best].age);
	big_window(&r->m, o.start, o.end, w, &i0, &len);
	*before = *w;
	th_check(vl_lv_purge(&r->x.t, o.start, &c) == 0);
	lt_commit(&r->x, &c);
	j = m_find_start(w, o.start);
	th_check(j >= 0);
	m_purge(w, j);
	th_check(c.punch_start == o.start && c.punch_end == o.end);
	check_counts(r, before, w, &c, "purge");
	big_splice(&r->m, i0, len, w);
	free(w);
}

static void op_restamp(struct run *r, uint32_t floor)
{
	uint32_t i;
	int want = 0, got;

	for (i = 0; i < r->m.n; i++) {
		if (!r->m.a[i].p && r->m.a[i].age < floor) {
			r->m.a[i].age = floor;
			want++;
		}
	}
	got = vl_lv_restamp(&r->x.t, floor);
	th_check_msg(got == want, "step %d: restamped %d, model %d", r->step, got, want);
}

static void op_forget(struct run *r)
{
	struct vl_lv_change c;
	struct big *m = &r->m;
	int64_t v0, p0, v1, p1;
	int32_t n0, q0, n1, q1;
	uint32_t i, k = 0;

	totals(m->a, m->n, &v0, &p0, &n0, &q0);
	th_check(vl_lv_forget_unpurged(&r->x.t, &c) == 0);
	lt_commit(&r->x, &c);
	for (i = 0; i < m->n; i++)
		if (m->a[i].p)
			m->a[k++] = m->a[i];
	m->n = k;
	totals(m->a, m->n, &v1, &p1, &n1, &q1);
	th_check(c.d_vbytes == v1 - v0 && c.d_pbytes == p1 - p0 && c.d_ranges == n1 - n0 &&
		 c.d_purged == q1 - q0);
}

static void op_clear(struct run *r)
{
	struct vl_lv_change c;
	int64_t v0, p0;
	int32_t n0, q0;

	totals(r->m.a, r->m.n, &v0, &p0, &n0, &q0);
	th_check(vl_lv_clear(&r->x.t, &c) == 0);
	lt_commit(&r->x, &c);
	th_check(c.d_vbytes == -v0 && c.d_pbytes == -p0 && c.d_ranges == -n0 && c.d_purged == -q0);
	th_check(r->x.root.height == 0);
	r->m.n = 0;
}

static void run_init(struct run *r, uint32_t cap, uint64_t space, uint64_t seed)
{
	memset(r, 0, sizeof(*r));
	lt_init(&r->x, cap, 7);
	big_init(&r->m, cap * VL_LV_CAP);
	r->space = space;
	r->rng = seed * 0x9e3779b97f4a7c15ull + 1;
}

static void run_fini(struct run *r)
{
	lt_fini(&r->x);
	free(r->m.a);
}

/* One random step: short ranges in a small space touch, overlap, split and merge. */
static void run_step(struct run *r, unsigned maxlen, int full, int wipes)
{
	uint64_t s = rnd(r) % r->space, len = 1 + rnd(r) % maxlen, e;
	unsigned op = (unsigned)(rnd(r) % 100);

	e = s + len > r->space ? r->space : s + len;
	if (e == s)
		e = s + 1;
	r->step++;
	if (op < 48)
		op_mark(r, s, e);
	else if (op < 50)
		op_absorb(r, s, e, (int)(rnd(r) % 2));
	else if (op < 85)
		op_unmark(r, s, e);
	else if (op < 97)
		op_purge_oldest(r);
	else if (op < 98 || !wipes)
		op_restamp(r, r->seq > 50 ? r->seq - 50 : 0);
	else if (op < 99 && rnd(r) % 8 == 0)
		op_forget(r);
	else if (rnd(r) % 16 == 0)
		op_clear(r);
	if (full) {
		compare(r, 0, r->m.n);
		th_check(lt_verify(&r->x) == r->m.n);
	} else {
		window_compare(r, s, e);
	}
}

START_TEST(small_space)
{
	struct run r;
	int seed, i, seeds = getenv("LT_SEEDS") ? atoi(getenv("LT_SEEDS")) : 40; /* more: a soak */

	for (seed = 1; seed <= seeds; seed++) {
		run_init(&r, 256, 24 + (uint64_t)seed * 4, (uint64_t)seed);
		for (i = 0; i < 3000; i++)
			run_step(&r, 1 + (unsigned)seed % 9, 1, 1);
		run_fini(&r);
	}
}
END_TEST

START_TEST(grows_high)
{
	struct run r;
	uint32_t leaves, inner;
	uint64_t ranges;
	int i;

	/* ranges at every third offset, mostly marked: tens of thousands, height >= 3 */
	run_init(&r, 40000, 3 * 60000, 99);
	for (i = 0; i < 150000; i++) {
		uint64_t s = 3 * (rnd(&r) % 60000);

		r.step++;
		if (rnd(&r) % 10 < 8)
			op_mark(&r, s, s + 1 + rnd(&r) % 2);
		else
			run_step(&r, 8, 0, 0);
		if (i % 10000 == 0) {
			compare(&r, 0, r.m.n);
			lt_verify(&r.x);
		}
	}
	compare(&r, 0, r.m.n);
	th_check(lt_verify(&r.x) == r.m.n);
	ck_assert_uint_ge(r.x.root.height, 3);
	ck_assert_uint_ge(r.m.n, 20000);
	th_check(vl_lv_count(&r.x.t, &leaves, &inner, &ranges) == 0);
	fprintf(stderr, "grows_high: %" PRIu64 " ranges, height %u, %u leaves, %u inner: %.1f bytes a range\n",
		ranges, r.x.root.height, leaves, inner,
		(double)(leaves + inner) * VL_LV_BLOCK / (double)ranges);
	ck_assert(((uint64_t)leaves + inner) * VL_LV_BLOCK <= 64 * ranges);
	/* and back down: every range taken out by UNMARKs and purges */
	for (i = 0; i < 400000 && r.m.n > 0; i++) {
		uint64_t s = 3 * (rnd(&r) % 60000);

		r.step++;
		if (rnd(&r) % 4)
			op_unmark(&r, s, s + 1 + rnd(&r) % 60);
		else
			op_purge_oldest(&r);
		if (i % 20000 == 0) {
			compare(&r, 0, r.m.n);
			lt_verify(&r.x);
		}
	}
	op_clear(&r);
	compare(&r, 0, r.m.n);
	th_check(lt_verify(&r.x) == 0);
	run_fini(&r);
}
END_TEST

START_TEST(short_reservation)
{
	struct run r;
	struct vl_lv_change c;
	struct vl_lv_res none = { 0 };
	int i;

	run_init(&r, 512, 3000, 5);
	for (i = 0; i < 600; i++)
		op_mark(&r, 4 * (uint64_t)i, 4 * (uint64_t)i + 2);
	th_check(lt_verify(&r.x) == 600);
	/* a new range, a split: -ENOMEM, nothing changed */
	ck_assert_int_eq(vl_lv_mark(&r.x.t, 2401, 2402, 1, &none, &c), -ENOMEM);
	ck_assert_int_eq(vl_lv_unmark(&r.x.t, 4, 5, &none, &c), -ENOMEM);
	/* joining, trimming, already inside: no block needed */
	ck_assert_int_eq(vl_lv_mark(&r.x.t, 2, 3, 1, &none, &c), 0);
	ck_assert_int_eq(vl_lv_mark(&r.x.t, 0, 1, 1, &none, &c), 0);
	ck_assert_int_eq(vl_lv_unmark(&r.x.t, 2, 3, &none, &c), 0);
	ck_assert_int_eq(c.d_vbytes, -1);
	ck_assert_int_eq(vl_lv_mark(&r.x.t, 2, 3, 1, &none, &c), 0);
	ck_assert_int_eq(vl_lv_mark(&r.x.t, 5000, 4000, 1, &none, &c), -EINVAL);
	ck_assert_int_eq(vl_lv_unmark(&r.x.t, 1, 1, &none, &c), -EINVAL);
	th_check(lt_verify(&r.x) == 600);
	run_fini(&r);
}
END_TEST

/* ---- stray writes (DESIGN 18) ---------------------------------------------------- */

/*
 * What the program did, byte by byte, whatever the tree says: vol, the
 * bytes it marked and has not unmarked; lost, the bytes a punch took that
 * no UNMARK has given back. The promise: a punch takes only vol bytes,
 * and an UNMARK over a lost byte says so.
 */
struct scrib {
	struct lt x;
	uint64_t space, rng;
	uint32_t age;
	unsigned char *vol, *lost, *isfree;
};

static uint64_t srnd(struct scrib *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return s->rng;
}

static void sc_refill(struct scrib *s)
{
	while (s->x.res.n < vl_lv_need(&s->x.t) && s->x.nfree > 0) {
		uint32_t b = s->x.free[--s->x.nfree];

		s->isfree[b] = 0;
		s->x.res.blk[s->x.res.n++] = b;
	}
}

/* What a change let go, back to the allocator: never twice, a scribbled tree may say so. */
static void sc_commit(struct scrib *s, const struct vl_lv_change *c)
{
	uint32_t b = c->freed, k;

	for (k = 0; k < c->nfreed && b != 0 && b < s->x.cap; k++) {
		uint32_t next = s->x.b[b].next_free;

		if (!s->isfree[b]) {
			s->isfree[b] = 1;
			s->x.free[s->x.nfree++] = b;
		}
		b = next;
	}
}

static void sc_punch(struct scrib *s, const struct vl_lv_change *c, const char *what)
{
	uint64_t b;

	for (b = c->punch_start; b < c->punch_end; b++) {
		th_check_msg(b < s->space && s->vol[b],
			     "%s punches byte %" PRIu64 ", which is not volatile", what, b);
		s->lost[b] = 1;
	}
}

/* One operation of the program's, the promise checked: 0, or the tree's error. */
static int sc_op(struct scrib *s, int marks)
{
	unsigned op = (unsigned)(srnd(s) % 100);
	uint64_t a = srnd(s) % s->space, e = a + 1 + srnd(s) % 6, b;
	struct vl_lv_change c;
	struct vl_lv_range o;
	int rc, lost = 0;

	if (e > s->space)
		e = s->space;
	if (op < 40u + (unsigned)marks) {
		sc_refill(s);
		rc = vl_lv_mark(&s->x.t, a, e, ++s->age, &s->x.res, &c);
		if (rc == 0) {
			memset(&s->vol[a], 1, e - a);
			sc_punch(s, &c, "a MARK");
			sc_commit(s, &c);
		}
	} else if (op < 75) {
		sc_refill(s);
		rc = vl_lv_unmark(&s->x.t, a, e, &s->x.res, &c);
		if (rc == 0) {
			for (b = a; b < e; b++)
				lost |= s->lost[b];
			th_check_msg(!lost || c.was_purged,
				     "UNMARK [%" PRIu64 ", %" PRIu64 ") says 0 over purged bytes", a, e);
			th_check(c.punch_start == c.punch_end);
			memset(&s->vol[a], 0, e - a);
			memset(&s->lost[a], 0, e - a);
			sc_commit(s, &c);
		}
	} else if (op < 92) {
		rc = vl_lv_oldest(&s->x.t, &o);
		if (rc == 1) {
			rc = vl_lv_purge(&s->x.t, o.start, &c);
			if (rc == 0) {
				sc_punch(s, &c, "a purge");
				sc_commit(s, &c);
			}
		}
	} else {
		rc = vl_lv_any_in(&s->x.t, a, e);
	}
	return rc < 0 ? rc : 0;
}

/* The tree's blocks, found from its root: leaves and inner nodes. */
static void sc_blocks(const struct lt *x, uint32_t b, uint32_t level, uint32_t *leaves,
		      uint32_t *nl, uint32_t *inner, uint32_t *ni)
{
	uint32_t i;

	if (level == 0) {
		leaves[(*nl)++] = b;
		return;
	}
	inner[(*ni)++] = b;
	for (i = 0; i < (x->b[b].in.hdr & 0xff); i++)
		sc_blocks(x, x->b[b].in.child[i], level - 1, leaves, nl, inner, ni);
}

/*
 * After a -EUCLEAN: the repair, given every block the allocator does not
 * hold (leaves.h, vl_lv_repair), and the tree sound again.
 */
static void sc_repair(struct scrib *s)
{
	uint32_t *list = malloc(s->x.cap * sizeof(uint32_t)), i, n = 0, k;
	struct vl_lv_change c;

	for (i = 1; i < s->x.cap; i++) {
		int held = s->isfree[i];

		for (k = 0; k < s->x.res.n; k++)
			held |= s->x.res.blk[k] == i;
		if (!held)
			list[n++] = i;
	}
	th_check(vl_lv_repair(&s->x.t, list, n, s->x.cap, &s->x.res, &c) == 0);
	sc_commit(s, &c);
	lt_verify(&s->x);
	free(list);
}

enum { SC_END, SC_PURGED, SC_CHILD, SC_KEY, SC_COUNT, SC_INTERVAL, SC_HEIGHT, SC_MINAGE, SC_KINDS };
static const char *const sc_name[] = { "range end", "purged bit", "child index", "inner key",
				       "count", "leaf interval", "height", "least age" };

static uint64_t near(struct scrib *s, uint64_t v)
{
	switch (srnd(s) % 4) {
	case 0:
		return v + 1;
	case 1:
		return v - 1;
	case 2:
		return v + 1 + srnd(s) % 16;
	default:
		return srnd(s) % (s->space + 8);
	}
}

/* A stray write of one field of kind k, somewhere in the tree. */
static void sc_scribble(struct scrib *s, int k, const uint32_t *leaves, uint32_t nl,
			const uint32_t *inner, uint32_t ni)
{
	uint32_t lb = leaves[srnd(s) % nl], ib = ni ? inner[srnd(s) % ni] : 0;
	struct vl_lv_line *l = s->x.b[lb].line;
	uint32_t n = l[0].age[0] & 0xffff, i = n ? (uint32_t)(srnd(s) % n) : 0;
	struct vl_lv_line *rl = &l[(i + 1) / 3];
	unsigned j = (i + 1) % 3;
	struct vl_lv_inner *in = &s->x.b[ib].in;
	uint32_t ic = ni ? (uint32_t)(srnd(s) % (in->hdr & 0xff)) : 0;

	if (ni == 0 && (k == SC_CHILD || k == SC_KEY || k == SC_MINAGE))
		k = SC_HEIGHT;
	switch (k) {
	case SC_END:
		rl->end[j] = near(s, rl->end[j]);
		break;
	case SC_PURGED:
		rl->start[j] ^= VL_LV_PURGED;
		break;
	case SC_CHILD:
		in->child[ic] = srnd(s) % 3 == 0 ? (uint32_t)(srnd(s) % (s->x.cap + 4))
			      : srnd(s) % 2 ? leaves[srnd(s) % nl] : in->child[srnd(s) % (in->hdr & 0xff)];
		break;
	case SC_KEY:
		in->key[ic] = near(s, in->key[ic]);
		break;
	case SC_COUNT:
		if (ni && srnd(s) % 2)
			in->hdr = (in->hdr & ~0xffu) | (uint32_t)(srnd(s) % 17);
		else
			l[0].age[0] = VL_LV_LEAF | (uint32_t)(srnd(s) % 13);
		break;
	case SC_INTERVAL:
		if (srnd(s) % 2)
			l[0].start[0] = near(s, l[0].start[0]);
		else
			l[0].end[0] = near(s, l[0].end[0]);
		break;
	case SC_HEIGHT:
		s->x.root.height = (uint32_t)(srnd(s) % 17);
		break;
	default:
		in->minage[ic] = (uint32_t)(srnd(s) % (s->age + 2));
		break;
	}
}

START_TEST(stray_writes)
{
	struct scrib s, base;
	uint32_t *leaves, *inner, nl = 0, ni = 0, cap = 3000;
	size_t bytes = (size_t)cap * sizeof(union vl_lv_block);
	int k, trial, i, caught[SC_KINDS] = { 0 }, ops[SC_KINDS] = { 0 };

	memset(&s, 0, sizeof(s));
	lt_init(&s.x, cap, 11);
	s.space = 12000;
	s.rng = 77;
	s.vol = calloc(s.space, 1);
	s.lost = calloc(s.space, 1);
	s.isfree = calloc(cap, 1);
	for (i = 0; i < (int)s.x.nfree; i++)
		s.isfree[s.x.free[i]] = 1;
	/* a tree of some thousand ranges, a third of them purged */
	for (i = 0; i < 12000; i++)
		ck_assert_int_eq(sc_op(&s, 30), 0);
	ck_assert_uint_ge(s.x.root.height, 3);
	leaves = malloc(cap * sizeof(uint32_t));
	inner = malloc(cap * sizeof(uint32_t));
	sc_blocks(&s.x, s.x.root.block, s.x.root.height - 1, leaves, &nl, inner, &ni);

	base = s;
	base.x.b = malloc(bytes);
	memcpy(base.x.b, s.x.b, bytes);
	base.x.free = malloc(cap * sizeof(uint32_t));
	memcpy(base.x.free, s.x.free, cap * sizeof(uint32_t));
	base.vol = malloc(s.space);
	memcpy(base.vol, s.vol, s.space);
	base.lost = malloc(s.space);
	memcpy(base.lost, s.lost, s.space);
	base.isfree = malloc(cap);
	memcpy(base.isfree, s.isfree, cap);

	for (k = 0; k < SC_KINDS; k++) {
		for (trial = 0; trial < 60; trial++) {
			/* the tree as it was, then one stray write */
			memcpy(s.x.b, base.x.b, bytes);
			memcpy(s.x.free, base.x.free, cap * sizeof(uint32_t));
			s.x.nfree = base.x.nfree;
			s.x.res = base.x.res;
			s.x.root = base.x.root;
			memcpy(s.vol, base.vol, s.space);
			memcpy(s.lost, base.lost, s.space);
			memcpy(s.isfree, base.isfree, cap);
			s.age = base.age;
			s.rng = 1000003ull * (uint64_t)(k * 100 + trial + 1);
			sc_scribble(&s, k, leaves, nl, inner, ni);
			for (i = 0; i < 400; i++) {
				ops[k]++;
				if (sc_op(&s, 0) != 0) {
					caught[k]++;
					break;
				}
			}
			if (i == 400)
				continue;
			/* repaired, the promise holds on, and nothing fails again */
			sc_repair(&s);
			for (i = 0; i < 200; i++) {
				ops[k]++;
				th_check_msg(sc_op(&s, 0) == 0, "a repaired tree fails (a %s)", sc_name[k]);
			}
			lt_verify(&s.x);
		}
		fprintf(stderr, "stray write of a %s: 60 trees, -EUCLEAN in %d (each repaired, 200 operations more), %d operations, the promise held\n",
			sc_name[k], caught[k], ops[k]);
	}
	ck_assert_int_gt(caught[SC_END] + caught[SC_PURGED] + caught[SC_CHILD], 0);
	free(leaves);
	free(inner);
	free(base.x.b);
	free(base.x.free);
	free(base.vol);
	free(base.lost);
	free(base.isfree);
	free(s.vol);
	free(s.lost);
	free(s.isfree);
	lt_fini(&s.x);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("leaves");
	TCase *tc = tcase_create("model");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, small_space);
	tcase_add_test(tc, grows_high);
	tcase_add_test(tc, short_reservation);
	suite_add_tcase(s, tc);
	tc = tcase_create("untrusted");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, stray_writes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
