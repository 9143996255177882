/*
 * test-ranges.c - the rules of SPEC section 4 (core/ranges.c), driven
 * through the real pool exactly as the runtime drives them (src/ops.c,
 * src/purge.c):
 *
 *   MARK:    spare = vl_node_alloc(r, fi); err = vl_ranges_mark(..., spare, &c);
 *            on error c is zeroed; vl_commit(r, fi, &c, spare)
 *   UNMARK:  err = vl_ranges_unmark(..., VL_NIL, &c); on -ENOMEM
 *            spare = vl_node_alloc() and again; vl_commit(r, fi, &c, spare)
 *   PURGE:   vl_ranges_purge(..., n, &c); vl_commit(r, fi, &c, VL_NIL)
 *
 * and compared, after every operation, with a naive model: a sorted array
 * of ranges {start, end, purged, age} per file that implements the SPEC
 * sentences literally. Besides the model, a byte map per file plays the
 * data: a byte is "lost" once a punch covered it, until UNMARK gives it
 * back to the program. So "the purged flag never lies" and "libvolatile
 * never changes a byte that is not inside a volatile range" are checked
 * byte by byte, independently of how ranges are cut.
 */
#include "harness.h"

#include <stdarg.h>

#define SPACE_MAX 256
#define NF 2
#define MAXR (SPACE_MAX + 2)
#define HIST 10

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

static uint64_t umin(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t umax(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static void m_sort(struct mfile *m)
{
	int i, j;

	for (i = 1; i < m->n; i++) {
		struct mr x = m->a[i];

		for (j = i; j > 0 && m->a[j - 1].s > x.s; j--)
			m->a[j] = m->a[j - 1];
		m->a[j] = x;
	}
}

/* Index of the range that holds [s, e) entirely, or -1. */
static int m_inside(const struct mfile *m, uint64_t s, uint64_t e)
{
	int i;

	for (i = 0; i < m->n; i++)
		if (m->a[i].s <= s && e <= m->a[i].e)
			return i;
	return -1;
}

static int m_find_start(const struct mfile *m, uint64_t s)
{
	int i;

	for (i = 0; i < m->n; i++)
		if (m->a[i].s == s)
			return i;
	return -1;
}

/*
 * Put [s, e) (purged p) into m: overlapping ranges merge into one, purged
 * if any part was; ranges that touch it merge when in the same state;
 * the result takes `age`.
 */
static void m_merge_in(struct mfile *m, uint64_t s, uint64_t e, int p, uint32_t age)
{
	char gone[MAXR];
	struct mfile out;
	int i, changed;

	memset(gone, 0, sizeof(gone));
	for (i = 0; i < m->n; i++) {
		if (m->a[i].s < e && m->a[i].e > s) {
			gone[i] = 1;
			p |= m->a[i].p;
			s = umin(s, m->a[i].s);
			e = umax(e, m->a[i].e);
		}
	}
	do {
		changed = 0;
		for (i = 0; i < m->n; i++) {
			if (gone[i] || m->a[i].p != p)
				continue;
			if (m->a[i].e == s || m->a[i].s == e) {
				gone[i] = 1;
				s = umin(s, m->a[i].s);
				e = umax(e, m->a[i].e);
				changed = 1;
			}
		}
	} while (changed);
	out.n = 0;
	for (i = 0; i < m->n; i++)
		if (!gone[i])
			out.a[out.n++] = m->a[i];
	out.a[out.n].s = s;
	out.a[out.n].e = e;
	out.a[out.n].p = p;
	out.a[out.n].age = age;
	out.n++;
	m_sort(&out);
	*m = out;
}

/* MARK [s, e). Returns 0 if [s, e) was inside a range (nothing changes). */
static int m_mark(struct mfile *m, uint64_t s, uint64_t e, uint32_t age)
{
	if (m_inside(m, s, e) >= 0)
		return 0;
	m_merge_in(m, s, e, 0, age);
	return 1;
}

/* UNMARK [s, e): trim, split, remove. Returns was_purged. */
static int m_unmark(struct mfile *m, uint64_t s, uint64_t e)
{
	struct mfile out;
	int i, wp = 0;

	out.n = 0;
	for (i = 0; i < m->n; i++) {
		struct mr a = m->a[i];

		if (!(a.s < e && a.e > s)) {
			out.a[out.n++] = a;
			continue;
		}
		wp |= a.p;
		if (a.s < s) {
			out.a[out.n] = a;
			out.a[out.n++].e = s;
		}
		if (a.e > e) {
			out.a[out.n] = a;
			out.a[out.n++].s = e;
		}
	}
	*m = out;
	return wp;
}

static int m_needs_split(const struct mfile *m, uint64_t s, uint64_t e)
{
	int i;

	for (i = 0; i < m->n; i++)
		if (m->a[i].s < s && m->a[i].e > e)
			return 1;
	return 0;
}

/* Purge range i: flag it, and merge it with touching purged ranges. */
static void m_purge(struct mfile *m, int i)
{
	struct mr a = m->a[i];
	int j;

	if (a.p)
		return;
	for (j = i; j + 1 < m->n; j++)
		m->a[j] = m->a[j + 1];
	m->n--;
	m_merge_in(m, a.s, a.e, 1, a.age);
}

/* Byte map of a file: 0 not volatile, 1 volatile, 2 purged. */
static void m_bytes(const struct mfile *m, uint64_t space, unsigned char *map)
{
	int i;
	uint64_t b;

	memset(map, 0, space);
	for (i = 0; i < m->n; i++)
		for (b = m->a[i].s; b < m->a[i].e && b < space; b++)
			map[b] = m->a[i].p ? 2 : 1;
}

/* ---- the world: a region, its files, and the model -------------------------- */

struct world {
	struct th_region t;
	struct vl_region *r;
	uint32_t fi[NF];
	struct mfile m[NF];
	uint32_t seq;   /* the model's last age */
	uint32_t cap;   /* usable node slots */
	uint64_t space; /* offsets used: [0, space) */
	unsigned char lost[NF][SPACE_MAX];
	void *snap;
	/* for failure messages */
	uint64_t seed;
	int step;
	char hist[HIST][96];
	int nhist;
	char msg[8192];
};

static struct world *world_new(uint32_t ranges, uint64_t space)
{
	struct world *w = calloc(1, sizeof(*w));
	int f;

	ck_assert_ptr_nonnull(w);
	ck_assert_uint_le(space, SPACE_MAX);
	th_region_init(&w->t, ranges, 8);
	w->r = &w->t.r;
	w->cap = w->r->node_cap - 1;
	w->space = space;
	for (f = 0; f < NF; f++) {
		w->fi[f] = th_file_new(w->r, 0x900 + (uint64_t)f, 1000 + (uint64_t)f);
		ck_assert_uint_eq(*th_root(w->r, w->fi[f]), VL_NIL);
	}
	w->snap = malloc(w->t.g.region_size);
	ck_assert_ptr_nonnull(w->snap);
	return w;
}

static void world_free(struct world *w)
{
	free(w->snap);
	th_region_fini(&w->t);
	free(w);
}

static void note(struct world *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct world *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->hist[w->nhist % HIST], sizeof(w->hist[0]), fmt, ap);
	va_end(ap);
	w->nhist++;
}

static const char *show_file(struct world *w, int f, char *p, char *end)
{
	const struct vl_region *r = w->r;
	uint32_t n = vl_rb_first(r, *th_root(r, w->fi[f]));
	int i, steps = 0;

	p += snprintf(p, (size_t)(end - p), "\n  file %d tree: ", f);
	for (; n != VL_NIL && steps < 300 && p < end - 40; n = vl_rb_next(r, n), steps++) {
		const struct vl_node *x = vl_node_at(r, n);

		p += snprintf(p, (size_t)(end - p), "[%" PRIu64 ",%" PRIu64 ")%c@%u ", x->start,
			      x->end, vl_node_purged(x) ? 'P' : 'U', x->seq);
	}
	p += snprintf(p, (size_t)(end - p), "\n  file %d model: ", f);
	for (i = 0; i < w->m[f].n && p < end - 40; i++)
		p += snprintf(p, (size_t)(end - p), "[%" PRIu64 ",%" PRIu64 ")%c@%u ",
			      w->m[f].a[i].s, w->m[f].a[i].e, w->m[f].a[i].p ? 'P' : 'U',
			      w->m[f].a[i].p ? 0 : w->m[f].a[i].age);
	return p;
}

/* The context of a failure: seed, step, the last operations, both files. */
static const char *ctx(struct world *w)
{
	char *p = w->msg, *end = w->msg + sizeof(w->msg);
	int i, f;

	p += snprintf(p, (size_t)(end - p), "seed %" PRIu64 " step %d; last ops:", w->seed,
		      w->step);
	for (i = w->nhist > HIST ? w->nhist - HIST : 0; i < w->nhist; i++)
		p += snprintf(p, (size_t)(end - p), "\n    %s", w->hist[i % HIST]);
	for (f = 0; f < NF && p < end - 100; f++)
		p = (char *)show_file(w, f, p, end);
	return w->msg;
}

static int m_total(const struct world *w)
{
	int f, t = 0;

	for (f = 0; f < NF; f++)
		t += w->m[f].n;
	return t;
}

struct lru_want {
	int f;
	const struct mr *a;
};

static int lru_cmp(const void *pa, const void *pb)
{
	const struct lru_want *x = pa, *y = pb;

	if (x->a->age != y->a->age)
		return x->a->age < y->a->age ? -1 : 1;
	if (x->f != y->f)
		return x->f < y->f ? -1 : 1;
	return x->a->s < y->a->s ? -1 : x->a->s > y->a->s;
}

/* Everything the region shows must be what the model says. */
static void verify(struct world *w)
{
	const struct vl_region *r = w->r;
	const struct vl_counters *k = &r->hdr->c;
	static struct lru_want want[NF * MAXR];
	uint64_t vb = 0, pb = 0;
	uint32_t nr = 0, np = 0, n, prev, nfree;
	int f, i, nw = 0;

	for (f = 0; f < NF; f++) {
		const struct mfile *m = &w->m[f];
		const struct vl_file *F = vl_file_at(r, w->fi[f]);
		uint64_t fvb = 0, fpb = 0, b;
		unsigned char map[SPACE_MAX];
		long cnt = vl_rb_check(r, F->h.root, w->fi[f]);

		th_check_msg(cnt == m->n, "vl_rb_check of file %d = %ld, model has %d ranges\n%s",
			     f, cnt, m->n, ctx(w));
		n = vl_rb_first(r, F->h.root);
		for (i = 0; i < m->n; i++) {
			const struct mr *a = &m->a[i];
			const struct vl_node *x = vl_node_at(r, n);

			th_check_msg(n != VL_NIL && x->start == a->s && x->end == a->e &&
					     vl_node_purged(x) == a->p,
				     "file %d range %d: tree has [%" PRIu64 ",%" PRIu64
				     ")%c, model [%" PRIu64 ",%" PRIu64 ")%c\n%s",
				     f, i, x->start, x->end, vl_node_purged(x) ? 'P' : 'U', a->s,
				     a->e, a->p ? 'P' : 'U', ctx(w));
			th_check_msg(a->p || x->seq == a->age,
				     "file %d range [%" PRIu64 ",%" PRIu64
				     "): age %u, model says %u\n%s",
				     f, a->s, a->e, x->seq, a->age, ctx(w));
			if (a->p) {
				fpb += a->e - a->s;
				np++;
			} else {
				fvb += a->e - a->s;
				want[nw].f = f;
				want[nw].a = a;
				nw++;
			}
			n = vl_rb_next(r, n);
		}
		th_check_msg(n == VL_NIL, "file %d: tree has more than %d ranges\n%s", f, m->n,
			     ctx(w));
		th_check_msg(F->h.nranges == (uint32_t)m->n && F->h.vbytes == fvb &&
				     F->h.pbytes == fpb,
			     "file %d counters: nranges %u vbytes %" PRIu64 " pbytes %" PRIu64
			     ", model %d %" PRIu64 " %" PRIu64 "\n%s",
			     f, F->h.nranges, F->h.vbytes, F->h.pbytes, m->n, fvb, fpb, ctx(w));
		nr += (uint32_t)m->n;
		vb += fvb;
		pb += fpb;

		/* the flag never lies; no byte outside a purged range was punched */
		m_bytes(m, w->space, map);
		for (b = 0; b < w->space; b++)
			th_check_msg(w->lost[f][b] == (map[b] == 2),
				     "file %d byte %" PRIu64 ": punched %d, in a purged range %d\n%s",
				     f, b, w->lost[f][b], map[b] == 2, ctx(w));
	}
	th_check_msg(k->ranges == nr && k->ranges_purged == np && k->volatile_bytes == vb &&
			     k->purged_bytes == pb && k->nodes_used == nr,
		     "region counters: ranges %u purged %u vbytes %" PRIu64 " pbytes %" PRIu64
		     " nodes_used %u; model %u %u %" PRIu64 " %" PRIu64 "\n%s",
		     k->ranges, k->ranges_purged, k->volatile_bytes, k->purged_bytes,
		     k->nodes_used, nr, np, vb, pb, ctx(w));
	th_check_msg(k->seq == w->seq, "region seq %u, model %u\n%s", k->seq, w->seq, ctx(w));

	/* the LRU: exactly the unpurged ranges, oldest first */
	qsort(want, (size_t)nw, sizeof(want[0]), lru_cmp);
	prev = VL_NIL;
	n = k->lru_head;
	for (i = 0; n != VL_NIL; i++) {
		const struct vl_node *x = vl_node_at(r, n);

		th_check_msg(i < nw, "LRU holds more than the %d unpurged ranges\n%s", nw, ctx(w));
		th_check_msg(n < r->node_cap && x->prev == prev,
			     "LRU position %d: node %u, prev %u, want prev %u\n%s", i, n, x->prev,
			     prev, ctx(w));
		th_check_msg(vl_node_state(x) == VL_NODE_LIVE && !vl_node_purged(x) &&
				     vl_node_file(x) == w->fi[want[i].f] &&
				     x->start == want[i].a->s && x->end == want[i].a->e,
			     "LRU position %d: node %u [%" PRIu64 ",%" PRIu64
			     ")%c of file %u, want [%" PRIu64 ",%" PRIu64 ") of file %d (age %u)\n%s",
			     i, n, x->start, x->end, vl_node_purged(x) ? 'P' : 'U', vl_node_file(x),
			     want[i].a->s, want[i].a->e, want[i].f, want[i].a->age, ctx(w));
		if (prev != VL_NIL) {
			const struct vl_node *y = vl_node_at(r, prev);

			/* only the halves of a split share an age, side by side, in order */
			th_check_msg(y->seq < x->seq ||
					     (y->seq == x->seq && vl_node_file(y) == vl_node_file(x) &&
					      y->end < x->start),
				     "LRU ages not increasing at position %d: %u then %u\n%s", i,
				     y->seq, x->seq, ctx(w));
		}
		prev = n;
		n = x->next;
	}
	th_check_msg(i == nw, "LRU holds %d ranges, want %d\n%s", i, nw, ctx(w));
	th_check_msg(k->lru_tail == prev, "lru_tail %u, want %u\n%s", k->lru_tail, prev, ctx(w));

	/* no node leaks: every used slot is a range, the others are on the free list */
	nfree = 0;
	for (n = k->node_free; n != VL_NIL; n = vl_node_at(r, n)->next) {
		th_check_msg(n < k->node_hwm && vl_node_state(vl_node_at(r, n)) == VL_NODE_FREE &&
				     nfree <= w->cap,
			     "free list: bad node %u\n%s", n, ctx(w));
		nfree++;
	}
	th_check_msg(nfree + k->nodes_used + 1 == k->node_hwm,
		     "free list %u + used %u + 1 != hwm %u\n%s", nfree, k->nodes_used, k->node_hwm,
		     ctx(w));
	th_check(th_sentinel_zero(r));
}

/* ---- operations, as the runtime performs them ------------------------------ */

static int rt_mark(struct world *w, int f, uint64_t s, uint64_t e, struct vl_change *c)
{
	const struct vl_region *r = w->r;
	uint32_t fi = w->fi[f];
	uint32_t spare = vl_node_alloc(r, fi);
	int err = vl_ranges_mark(r, th_root(r, fi), fi, s, e, spare, c);

	if (err)
		memset(c, 0, sizeof(*c));
	vl_commit(r, fi, c, spare);
	return err;
}

/* Returns what UNMARK returns (0, 1 or -errno); *first: the first call's result. */
static int rt_unmark(struct world *w, int f, uint64_t s, uint64_t e, struct vl_change *c,
		     int *first)
{
	const struct vl_region *r = w->r;
	uint32_t fi = w->fi[f], spare = VL_NIL;
	int err = vl_ranges_unmark(r, th_root(r, fi), fi, s, e, VL_NIL, c);

	*first = err;
	if (err == -ENOMEM) {
		spare = vl_node_alloc(r, fi);
		err = spare == VL_NIL ? -ENOMEM
				      : vl_ranges_unmark(r, th_root(r, fi), fi, s, e, spare, c);
	}
	if (err)
		memset(c, 0, sizeof(*c));
	vl_commit(r, fi, c, spare);
	return err ? err : c->was_purged;
}

/* The punch of an operation hits the data: only volatile bytes may be hit. */
static void apply_punch(struct world *w, int f, const struct vl_change *c)
{
	unsigned char map[SPACE_MAX];
	uint64_t b;

	if (c->punch_end <= c->punch_start)
		return;
	m_bytes(&w->m[f], w->space, map);
	for (b = c->punch_start; b < c->punch_end; b++) {
		th_check_msg(b < w->space && map[b] == 2,
			     "punch [%" PRIu64 ",%" PRIu64 ") hits byte %" PRIu64
			     " which is not in a purged range\n%s",
			     c->punch_start, c->punch_end, b, ctx(w));
		w->lost[f][b] = 1;
	}
}

static uint32_t node_with_start(struct world *w, int f, uint64_t s)
{
	const struct vl_region *r = w->r;
	uint32_t n = vl_rb_first(r, *th_root(r, w->fi[f]));
	int steps = 0;

	for (; n != VL_NIL && steps <= MAXR; n = vl_rb_next(r, n), steps++)
		if (vl_node_at(r, n)->start == s)
			return n;
	return VL_NIL;
}

static void snapshot(struct world *w)
{
	memcpy(w->snap, w->t.base, w->t.g.region_size);
}

static int unchanged(struct world *w)
{
	return memcmp(w->snap, w->t.base, w->t.g.region_size) == 0;
}

/* MARK through the runtime's steps; checks against the model; returns the error. */
static int do_mark(struct world *w, int f, uint64_t s, uint64_t e)
{
	struct mfile *before = malloc(sizeof(*before)), *after = malloc(sizeof(*after));
	unsigned char was[SPACE_MAX];
	struct vl_change c;
	int in, need = 0, nomem = 0, err;

	th_check(before && after);
	note(w, "mark   f%d [%" PRIu64 ",%" PRIu64 ")", f, s, e);
	*before = w->m[f];
	*after = w->m[f];
	in = m_inside(before, s, e);
	if (in < 0) {
		m_mark(after, s, e, w->seq + 1);
		need = after->n > before->n;
		nomem = need && m_total(w) == (int)w->cap;
	}
	if (nomem)
		snapshot(w);
	err = rt_mark(w, f, s, e, &c);
	if (nomem) {
		th_check_msg(err == -ENOMEM, "mark with the region full: %d, want -ENOMEM\n%s", err,
			     ctx(w));
		th_check_msg(unchanged(w), "mark failed with -ENOMEM but changed the region\n%s",
			     ctx(w));
		verify(w);
		free(before);
		free(after);
		return err;
	}
	th_check_msg(err == 0, "mark: %d, want 0\n%s", err, ctx(w));
	if (in >= 0) {
		th_check_msg(c.punch_start == c.punch_end,
			     "mark inside a range punched [%" PRIu64 ",%" PRIu64 ")\n%s",
			     c.punch_start, c.punch_end, ctx(w));
		th_check_msg(c.keep == node_with_start(w, f, before->a[in].s),
			     "mark inside a range: keep %u\n%s", c.keep, ctx(w));
	} else {
		int j = m_inside(after, s, e);
		const struct mr *mg = &after->a[j];

		th_check(j >= 0);
		w->seq++;
		if (mg->p) {
			uint64_t b;

			/* the flag must not lie: what was not purged is punched now */
			th_check_msg(c.punch_start < c.punch_end && mg->s <= c.punch_start &&
					     c.punch_end <= mg->e && c.punch_start <= s &&
					     e <= c.punch_end,
				     "mark into purged [%" PRIu64 ",%" PRIu64 "): punch [%" PRIu64
				     ",%" PRIu64 ")\n%s",
				     mg->s, mg->e, c.punch_start, c.punch_end, ctx(w));
			m_bytes(before, w->space, was);
			for (b = mg->s; b < mg->e; b++)
				th_check_msg(was[b] == 2 || (c.punch_start <= b && b < c.punch_end),
					     "byte %" PRIu64 " joins purged [%" PRIu64 ",%" PRIu64
					     ") unpunched\n%s",
					     b, mg->s, mg->e, ctx(w));
		} else {
			th_check_msg(c.punch_start == c.punch_end,
				     "mark into unpurged range punched [%" PRIu64 ",%" PRIu64 ")\n%s",
				     c.punch_start, c.punch_end, ctx(w));
		}
		th_check_msg(c.keep == node_with_start(w, f, mg->s), "mark: keep %u\n%s", c.keep,
			     ctx(w));
	}
	w->m[f] = *after;
	apply_punch(w, f, &c);
	verify(w);
	free(before);
	free(after);
	return err;
}

/* UNMARK through the runtime's steps; returns what UNMARK returns. */
static int do_unmark(struct world *w, int f, uint64_t s, uint64_t e)
{
	struct mfile *after = malloc(sizeof(*after));
	struct vl_change c;
	int split, wp, nomem, rc, first;
	uint64_t b;

	th_check(after != NULL);
	note(w, "unmark f%d [%" PRIu64 ",%" PRIu64 ")", f, s, e);
	*after = w->m[f];
	split = m_needs_split(after, s, e);
	wp = m_unmark(after, s, e);
	nomem = split && m_total(w) == (int)w->cap;
	if (nomem)
		snapshot(w);
	rc = rt_unmark(w, f, s, e, &c, &first);
	th_check_msg(first == (split ? -ENOMEM : 0),
		     "unmark without a spare: %d, want %d (split needed: %d)\n%s", first,
		     split ? -ENOMEM : 0, split, ctx(w));
	if (nomem) {
		th_check_msg(rc == -ENOMEM, "unmark split with the region full: %d\n%s", rc,
			     ctx(w));
		th_check_msg(unchanged(w), "unmark failed with -ENOMEM but changed the region\n%s",
			     ctx(w));
		verify(w);
		free(after);
		return rc;
	}
	th_check_msg(rc == wp, "unmark returned %d, want %d\n%s", rc, wp, ctx(w));
	th_check_msg(c.punch_start == c.punch_end, "unmark punched\n%s", ctx(w));
	/* THE INVARIANT: 0 means every byte it covered is intact */
	for (b = s; b < e && b < w->space; b++) {
		if (rc == 0)
			th_check_msg(!w->lost[f][b],
				     "unmark returned 0 but byte %" PRIu64 " was punched\n%s", b,
				     ctx(w));
		w->lost[f][b] = 0; /* the program has its bytes back (and rewrites them) */
	}
	w->m[f] = *after;
	verify(w);
	free(after);
	return rc;
}

/* Purge range n of file f (as the purger does, any range; usually the oldest). */
static void do_purge(struct world *w, int f, uint32_t n)
{
	const struct vl_region *r = w->r;
	const struct vl_node *x = vl_node_at(r, n);
	struct vl_change c;
	int i, err, already;
	uint64_t s = x->start, e = x->end;

	note(w, "purge  f%d [%" PRIu64 ",%" PRIu64 ")%s", f, s, e, vl_node_purged(x) ? "P" : "");
	i = m_find_start(&w->m[f], s);
	th_check_msg(i >= 0, "purge: no model range starts at %" PRIu64 "\n%s", s, ctx(w));
	already = w->m[f].a[i].p;
	err = vl_ranges_purge(r, th_root(r, w->fi[f]), w->fi[f], n, &c);
	th_check_msg(err == 0, "purge: %d\n%s", err, ctx(w));
	vl_commit(r, w->fi[f], &c, VL_NIL);
	if (already) {
		th_check_msg(c.punch_start == c.punch_end && c.keep == n,
			     "purge of a purged range: punch [%" PRIu64 ",%" PRIu64 ") keep %u\n%s",
			     c.punch_start, c.punch_end, c.keep, ctx(w));
	} else {
		th_check_msg(c.punch_start == s && c.punch_end == e,
			     "purge of [%" PRIu64 ",%" PRIu64 "): punch [%" PRIu64 ",%" PRIu64
			     ")\n%s",
			     s, e, c.punch_start, c.punch_end, ctx(w));
		m_purge(&w->m[f], i);
	}
	apply_punch(w, f, &c);
	verify(w);
}

/* Purge the head of the LRU: the oldest unpurged range of the region. */
static int do_purge_oldest(struct world *w)
{
	uint32_t n = w->r->hdr->c.lru_head;
	int f;

	if (n == VL_NIL) {
		for (f = 0; f < NF; f++)
			for (int i = 0; i < w->m[f].n; i++)
				th_check_msg(w->m[f].a[i].p, "LRU empty with unpurged ranges\n%s",
					     ctx(w));
		return -1;
	}
	for (f = 0; f < NF; f++)
		if (vl_node_file(vl_node_at(w->r, n)) == w->fi[f])
			break;
	th_check_msg(f < NF, "LRU head %u of no file\n%s", n, ctx(w));
	do_purge(w, f, n);
	return f;
}

static void do_clear(struct world *w, int f)
{
	const struct vl_region *r = w->r;
	struct vl_change c;
	int err;

	note(w, "clear  f%d", f);
	err = vl_ranges_clear(r, th_root(r, w->fi[f]), w->fi[f], &c);
	th_check_msg(err == 0, "clear: %d\n%s", err, ctx(w));
	vl_commit(r, w->fi[f], &c, VL_NIL);
	th_check(*th_root(r, w->fi[f]) == VL_NIL);
	w->m[f].n = 0;
	memset(w->lost[f], 0, sizeof(w->lost[f]));
	verify(w);
}

/* ---- explicit expectations (not through the model) ------------------------- */

/* "0-10u 10-20p": the ranges of file f, in order. */
static void expect(struct world *w, int f, const char *spec)
{
	const struct vl_region *r = w->r;
	uint32_t n = vl_rb_first(r, *th_root(r, w->fi[f]));
	const char *p = spec;
	char *q;
	int i = 0;

	while (*p) {
		uint64_t s, e;
		int purged;
		const struct vl_node *x;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		s = strtoull(p, &q, 10);
		ck_assert_msg(*q == '-', "bad spec \"%s\"", spec);
		e = strtoull(q + 1, &q, 10);
		purged = *q == 'p';
		p = q + 1;
		x = vl_node_at(r, n);
		ck_assert_msg(n != VL_NIL && x->start == s && x->end == e &&
				      vl_node_purged(x) == purged,
			      "file %d range %d: want [%" PRIu64 ",%" PRIu64 ")%c, have %s%s", f, i,
			      s, e, purged ? 'P' : 'U', n == VL_NIL ? "none" : "", ctx(w));
		n = vl_rb_next(r, n);
		i++;
	}
	ck_assert_msg(n == VL_NIL, "file %d: more ranges than \"%s\"%s", f, spec, ctx(w));
}

static uint32_t age_at(struct world *w, int f, uint64_t s)
{
	uint32_t n = node_with_start(w, f, s);

	ck_assert_uint_ne(n, VL_NIL);
	return vl_node_at(w->r, n)->seq;
}

/* Purge the range of file f that starts at s. */
static void purge_at(struct world *w, int f, uint64_t s)
{
	uint32_t n = node_with_start(w, f, s);

	ck_assert_uint_ne(n, VL_NIL);
	do_purge(w, f, n);
}

/* ---- the sentences of SPEC section 4, one test each -------------------------- */

START_TEST(test_mark_new)
{
	struct world *w = world_new(64, 256);

	ck_assert_int_eq(do_mark(w, 0, 10, 20), 0);
	expect(w, 0, "10-20u");
	expect(w, 1, "");
	ck_assert_uint_eq(age_at(w, 0, 10), 1);
	ck_assert_uint_eq(w->r->hdr->c.volatile_bytes, 10);
	ck_assert_uint_eq(vl_file_at(w->r, w->fi[0])->h.vbytes, 10);
	ck_assert_int_eq(do_mark(w, 1, 10, 20), 0); /* another file: its own range */
	expect(w, 1, "10-20u");
	ck_assert_uint_eq(w->r->hdr->c.ranges, 2);
	world_free(w);
}
END_TEST

/* "Overlapping ranges merge into one" */
START_TEST(test_overlap_merge)
{
	struct world *w = world_new(64, 256);

	do_mark(w, 0, 0, 10);
	do_mark(w, 0, 5, 15);
	expect(w, 0, "0-15u");
	do_mark(w, 0, 20, 30);
	do_mark(w, 0, 40, 50);
	do_mark(w, 0, 60, 70);
	do_mark(w, 0, 12, 45); /* spans three */
	expect(w, 0, "0-50u 60-70u");
	do_mark(w, 0, 55, 80); /* covers one entirely */
	expect(w, 0, "0-50u 55-80u");
	do_mark(w, 0, 49, 56); /* bridges two */
	expect(w, 0, "0-80u");
	ck_assert_uint_eq(w->r->hdr->c.ranges, 1);
	ck_assert_uint_eq(w->r->hdr->c.nodes_used, 1);
	world_free(w);
}
END_TEST

/* "adjacent ranges merge when both are purged or both are not" */
START_TEST(test_adjacent_merge_same_state)
{
	struct world *w = world_new(64, 256);

	do_mark(w, 0, 0, 10);
	do_mark(w, 0, 10, 20); /* touches on the left */
	expect(w, 0, "0-20u");
	do_mark(w, 0, 30, 40);
	do_mark(w, 0, 25, 30); /* touches on the right */
	expect(w, 0, "0-20u 25-40u");
	do_mark(w, 0, 20, 25); /* touches both */
	expect(w, 0, "0-40u");
	/* both purged: a purge joins a purged neighbour */
	do_mark(w, 0, 100, 110);
	do_mark(w, 0, 120, 130);
	purge_at(w, 0, 100);
	purge_at(w, 0, 120);
	do_mark(w, 0, 110, 120);
	expect(w, 0, "0-40u 100-110p 110-120u 120-130p");
	purge_at(w, 0, 110);
	expect(w, 0, "0-40u 100-130p");
	ck_assert_uint_eq(w->r->hdr->c.ranges_purged, 1);
	ck_assert_uint_eq(w->r->hdr->c.purged_bytes, 30);
	world_free(w);
}
END_TEST

/* ...and not across states */
START_TEST(test_no_merge_across_states)
{
	struct world *w = world_new(64, 256);

	do_mark(w, 0, 10, 20);
	purge_at(w, 0, 10);
	do_mark(w, 0, 20, 30); /* touches a purged range: stays apart, unpurged */
	expect(w, 0, "10-20p 20-30u");
	do_mark(w, 0, 0, 10);
	expect(w, 0, "0-10u 10-20p 20-30u");
	ck_assert_uint_eq(w->r->hdr->c.volatile_bytes, 20);
	ck_assert_uint_eq(w->r->hdr->c.purged_bytes, 10);
	/* purging one side does not pull in an unpurged neighbour */
	purge_at(w, 0, 20);
	expect(w, 0, "0-10u 10-30p");
	world_free(w);
}
END_TEST

/* "A merged range is purged if any part of it was ... the flag never lies" */
START_TEST(test_merge_with_purged_is_purged)
{
	struct world *w = world_new(64, 256);
	struct vl_change c;

	do_mark(w, 0, 0, 10);
	purge_at(w, 0, 0);
	do_mark(w, 0, 5, 20); /* overlaps a purged range: all of [0,20) purged */
	expect(w, 0, "0-20p");
	/* explicitly: the punch reported by the mark covers the new bytes */
	do_mark(w, 0, 40, 50);
	do_mark(w, 0, 60, 70);
	purge_at(w, 0, 60);
	ck_assert_int_eq(rt_mark(w, 0, 45, 65, &c), 0);
	ck_assert_uint_le(c.punch_start, 40);
	ck_assert_uint_ge(c.punch_end, 65);
	ck_assert_uint_ge(c.punch_start, 40);
	ck_assert_uint_le(c.punch_end, 70);
	w->seq++;
	m_mark(&w->m[0], 45, 65, w->seq);
	apply_punch(w, 0, &c);
	verify(w);
	expect(w, 0, "0-20p 40-70p");
	/* and a purged merge then joins a touching purged range */
	do_mark(w, 0, 20, 30);
	expect(w, 0, "0-20p 20-30u 40-70p");
	do_mark(w, 0, 25, 40); /* overlaps unpurged [20,30), touches purged [40,70) */
	expect(w, 0, "0-20p 20-40u 40-70p");
	do_mark(w, 0, 15, 45); /* overlaps all three */
	expect(w, 0, "0-70p");
	ck_assert_uint_eq(w->r->hdr->c.volatile_bytes, 0);
	ck_assert_uint_eq(w->r->hdr->c.purged_bytes, 70);
	ck_assert_uint_eq(w->r->hdr->c.lru_head, VL_NIL);
	world_free(w);
}
END_TEST

/* "A merged range takes the age of the newest MARK in it" */
START_TEST(test_merge_takes_newest_age)
{
	struct world *w = world_new(64, 256);

	do_mark(w, 0, 0, 10);   /* age 1 */
	do_mark(w, 0, 50, 60);  /* age 2 */
	do_mark(w, 1, 0, 10);   /* age 3 */
	do_mark(w, 0, 5, 15);   /* age 4: [0,15) */
	ck_assert_uint_eq(age_at(w, 0, 0), 4);
	ck_assert_uint_eq(age_at(w, 0, 50), 2);
	/* the LRU: [50,60), file 1, then [0,15) */
	ck_assert_uint_eq(w->r->hdr->c.lru_head, node_with_start(w, 0, 50));
	ck_assert_uint_eq(w->r->hdr->c.lru_tail, node_with_start(w, 0, 0));
	do_mark(w, 0, 60, 70); /* touching: age 5 */
	ck_assert_uint_eq(age_at(w, 0, 50), 5);
	ck_assert_uint_eq(w->r->hdr->c.lru_head, node_with_start(w, 1, 0));
	world_free(w);
}
END_TEST

/* "Marking inside a range that is already volatile changes nothing (not even its age)" */
START_TEST(test_inside_mark_keeps_age)
{
	struct world *w = world_new(64, 256);
	uint32_t head;

	do_mark(w, 0, 0, 100);
	do_mark(w, 0, 200, 210);
	do_mark(w, 1, 0, 10);
	head = w->r->hdr->c.lru_head;
	do_mark(w, 0, 10, 20);
	do_mark(w, 0, 0, 100);
	do_mark(w, 0, 0, 1);
	do_mark(w, 0, 99, 100);
	expect(w, 0, "0-100u 200-210u");
	ck_assert_uint_eq(age_at(w, 0, 0), 1);
	ck_assert_uint_eq(w->r->hdr->c.seq, 3);
	ck_assert_uint_eq(w->r->hdr->c.lru_head, head);
	/* inside a purged range: no punch, nothing */
	purge_at(w, 0, 200);
	do_mark(w, 0, 202, 205);
	expect(w, 0, "0-100u 200-210p");
	world_free(w);
}
END_TEST

/*
 * The same, for a range whose start touches a range in the other state
 * (so the two cannot have merged): [10,100) is volatile, [10,20) lies
 * inside it, and marking it must change nothing.
 */
START_TEST(test_inside_mark_at_touching_start_keeps_age)
{
	struct world *w = world_new(64, 256);
	uint32_t head;

	do_mark(w, 0, 0, 10);
	purge_at(w, 0, 0);
	do_mark(w, 0, 10, 100); /* age 2: touches the purged [0,10) */
	do_mark(w, 1, 0, 10);   /* age 3 */
	expect(w, 0, "0-10p 10-100u");
	head = w->r->hdr->c.lru_head;
	ck_assert_uint_eq(head, node_with_start(w, 0, 10));
	do_mark(w, 0, 10, 20); /* inside [10,100) */
	ck_assert_uint_eq(age_at(w, 0, 10), 2);
	ck_assert_uint_eq(w->r->hdr->c.lru_head, head);
	world_free(w);
}
END_TEST

/* The same, for a purged range whose start touches an unpurged one: no punch. */
START_TEST(test_inside_mark_of_purged_at_touching_start_no_punch)
{
	struct world *w = world_new(64, 256);
	struct vl_change c;

	do_mark(w, 0, 0, 10);
	do_mark(w, 0, 20, 100);
	purge_at(w, 0, 20);
	do_mark(w, 0, 10, 20); /* touches the purged [20,100): stays apart */
	expect(w, 0, "0-20u 20-100p");
	ck_assert_int_eq(rt_mark(w, 0, 20, 30, &c), 0); /* inside [20,100) */
	ck_assert_msg(c.punch_start == c.punch_end,
		      "mark inside purged [20,100) punched [%" PRIu64 ",%" PRIu64 ") again",
		      c.punch_start, c.punch_end);
	ck_assert_uint_eq(c.keep_aged, 0);
	ck_assert_uint_eq(w->r->hdr->c.seq, w->seq);
	world_free(w);
}
END_TEST

/* "Unmarking bytes that are not volatile is not an error and returns 0" */
START_TEST(test_unmark_not_volatile)
{
	struct world *w = world_new(64, 256);

	ck_assert_int_eq(do_unmark(w, 0, 0, 256), 0);
	do_mark(w, 0, 10, 20);
	do_mark(w, 0, 30, 40);
	purge_at(w, 0, 30);
	ck_assert_int_eq(do_unmark(w, 0, 20, 30), 0); /* the gap between, touching both */
	ck_assert_int_eq(do_unmark(w, 0, 0, 10), 0);
	ck_assert_int_eq(do_unmark(w, 0, 40, 256), 0);
	ck_assert_int_eq(do_unmark(w, 1, 10, 40), 0); /* another file */
	expect(w, 0, "10-20u 30-40p");
	world_free(w);
}
END_TEST

/* "UNMARK removes ... trimming or splitting ranges" */
START_TEST(test_unmark_split)
{
	struct world *w = world_new(64, 256);
	uint32_t l, rr;

	do_mark(w, 0, 0, 100);  /* age 1 */
	do_mark(w, 1, 0, 100);  /* age 2 */
	ck_assert_int_eq(do_unmark(w, 0, 40, 60), 0);
	expect(w, 0, "0-40u 60-100u");
	/* both halves keep the age, side by side at the head of the LRU */
	ck_assert_uint_eq(age_at(w, 0, 0), 1);
	ck_assert_uint_eq(age_at(w, 0, 60), 1);
	l = node_with_start(w, 0, 0);
	rr = node_with_start(w, 0, 60);
	ck_assert_uint_eq(w->r->hdr->c.lru_head, l);
	ck_assert_uint_eq(vl_node_at(w->r, l)->next, rr);
	ck_assert_uint_eq(w->r->hdr->c.ranges, 3);
	/* a purged range splits into purged halves, and UNMARK says so */
	purge_at(w, 1, 0);
	ck_assert_int_eq(do_unmark(w, 1, 10, 20), 1);
	expect(w, 1, "0-10p 20-100p");
	ck_assert_uint_eq(w->r->hdr->c.ranges_purged, 2);
	ck_assert_uint_eq(w->r->hdr->c.purged_bytes, 90);
	world_free(w);
}
END_TEST

/* trims, and "returns 1 if any byte it removed belonged to a range that was purged" */
START_TEST(test_unmark_trim_and_result)
{
	struct world *w = world_new(64, 256);

	do_mark(w, 0, 0, 10);
	purge_at(w, 0, 0);
	do_mark(w, 0, 10, 20);
	do_mark(w, 0, 30, 40);
	expect(w, 0, "0-10p 10-20u 30-40u");
	ck_assert_int_eq(do_unmark(w, 0, 10, 15), 0); /* only unpurged bytes */
	expect(w, 0, "0-10p 15-20u 30-40u");
	ck_assert_int_eq(do_unmark(w, 0, 35, 50), 0); /* trims the right end */
	expect(w, 0, "0-10p 15-20u 30-35u");
	ck_assert_int_eq(do_unmark(w, 0, 9, 16), 1); /* one purged byte */
	expect(w, 0, "0-9p 16-20u 30-35u");
	ck_assert_int_eq(do_unmark(w, 0, 16, 35), 0); /* removes two whole */
	expect(w, 0, "0-9p");
	ck_assert_int_eq(do_unmark(w, 0, 0, 9), 1);
	expect(w, 0, "");
	ck_assert_uint_eq(w->r->hdr->c.nodes_used, 0);
	world_free(w);
}
END_TEST

/* purge: "the range stays in the tree, flagged purged, until it is unmarked" */
START_TEST(test_purge_merges_neighbours)
{
	struct world *w = world_new(64, 256);

	do_mark(w, 0, 0, 10);
	do_mark(w, 0, 20, 30);
	purge_at(w, 0, 0);
	purge_at(w, 0, 20);
	do_mark(w, 0, 10, 20);
	expect(w, 0, "0-10p 10-20u 20-30p");
	purge_at(w, 0, 10);
	expect(w, 0, "0-30p");
	ck_assert_uint_eq(w->r->hdr->c.ranges, 1);
	ck_assert_uint_eq(w->r->hdr->c.ranges_purged, 1);
	ck_assert_uint_eq(w->r->hdr->c.nodes_used, 1);
	purge_at(w, 0, 0); /* purging it again changes nothing */
	expect(w, 0, "0-30p");
	world_free(w);
}
END_TEST

/* "Whole ranges are purged, oldest first: the least recently marked range of the region" */
START_TEST(test_oldest_first)
{
	struct world *w = world_new(64, 256);
	static const struct {
		int f;
		uint64_t s;
	} order[] = { { 1, 50 }, { 0, 100 }, { 0, 0 }, { 1, 0 } };
	size_t i;

	do_mark(w, 0, 0, 10);   /* 1 */
	do_mark(w, 1, 0, 10);   /* 2 */
	do_mark(w, 1, 50, 60);  /* 3 */
	do_mark(w, 0, 100, 110); /* 4 */
	do_mark(w, 0, 5, 12);   /* 5: [0,12) is now the newest but one */
	do_mark(w, 1, 10, 20);  /* 6: [0,20) of file 1 the newest */
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		uint32_t head = w->r->hdr->c.lru_head;
		int f;

		ck_assert_uint_eq(head, node_with_start(w, order[i].f, order[i].s));
		f = do_purge_oldest(w);
		ck_assert_int_eq(f, order[i].f);
	}
	ck_assert_int_eq(do_purge_oldest(w), -1);
	expect(w, 0, "0-12p 100-110p");
	expect(w, 1, "0-20p 50-60p");
	world_free(w);
}
END_TEST

START_TEST(test_clear)
{
	struct world *w = world_new(64, 256);

	do_mark(w, 0, 0, 10);
	do_mark(w, 0, 20, 30);
	do_mark(w, 1, 20, 30);
	purge_at(w, 0, 20);
	do_clear(w, 0);
	expect(w, 0, "");
	expect(w, 1, "20-30u");
	ck_assert_uint_eq(w->r->hdr->c.ranges, 1);
	ck_assert_uint_eq(w->r->hdr->c.ranges_purged, 0);
	ck_assert_uint_eq(w->r->hdr->c.purged_bytes, 0);
	do_clear(w, 0); /* an empty tree */
	world_free(w);
}
END_TEST

/* ---- ENOMEM: "the region has no room for another range: ENOMEM, and nothing changed" --- */

START_TEST(test_enomem_mark)
{
	struct world *w = world_new(VL_MIN_RANGES, 256);
	struct vl_change c;
	uint32_t i, fi = w->fi[0];

	ck_assert_uint_eq(w->cap, VL_MIN_RANGES);
	for (i = 0; i < VL_MIN_RANGES; i++)
		ck_assert_int_eq(do_mark(w, 0, 10 * i, 10 * i + 5), 0);
	ck_assert_uint_eq(w->r->hdr->c.nodes_used, VL_MIN_RANGES);
	ck_assert_uint_eq(vl_node_alloc(w->r, fi), VL_NIL);
	/* a disjoint mark needs a node: */
	snapshot(w);
	ck_assert_int_eq(vl_ranges_mark(w->r, th_root(w->r, fi), fi, 200, 210, VL_NIL, &c),
			 -ENOMEM);
	ck_assert(unchanged(w));
	ck_assert_int_eq(do_mark(w, 0, 200, 210), -ENOMEM);
	ck_assert_int_eq(do_mark(w, 1, 0, 1), -ENOMEM); /* any file */
	ck_assert(unchanged(w));
	/* ...but marks that need no node work */
	ck_assert_int_eq(do_mark(w, 0, 1, 3), 0);   /* inside */
	ck_assert_int_eq(do_mark(w, 0, 3, 7), 0);   /* overlaps */
	ck_assert_int_eq(do_mark(w, 0, 75, 78), 0); /* touches */
	expect(w, 0, "0-7u 10-15u 20-25u 30-35u 40-45u 50-55u 60-65u 70-78u");
	ck_assert_int_eq(do_mark(w, 0, 7, 10), 0); /* bridges two: frees a node */
	expect(w, 0, "0-15u 20-25u 30-35u 40-45u 50-55u 60-65u 70-78u");
	ck_assert_int_eq(do_mark(w, 0, 200, 210), 0);
	ck_assert_int_eq(do_mark(w, 0, 220, 230), -ENOMEM);
	world_free(w);
}
END_TEST

START_TEST(test_enomem_unmark_split)
{
	struct world *w = world_new(VL_MIN_RANGES, 256);
	struct vl_change c;
	uint32_t i, fi = w->fi[0];

	for (i = 0; i < VL_MIN_RANGES; i++)
		ck_assert_int_eq(do_mark(w, 0, 10 * i, 10 * i + 5), 0);
	snapshot(w);
	ck_assert_int_eq(vl_ranges_unmark(w->r, th_root(w->r, fi), fi, 12, 13, VL_NIL, &c),
			 -ENOMEM);
	ck_assert(unchanged(w));
	ck_assert_int_eq(do_unmark(w, 0, 12, 13), -ENOMEM);
	ck_assert(unchanged(w));
	expect(w, 0, "0-5u 10-15u 20-25u 30-35u 40-45u 50-55u 60-65u 70-75u");
	/* unmarks that need no node work: trims and removals */
	ck_assert_int_eq(do_unmark(w, 0, 10, 12), 0);
	ck_assert_int_eq(do_unmark(w, 0, 74, 80), 0);
	ck_assert_int_eq(do_unmark(w, 0, 20, 25), 0); /* a node comes free */
	ck_assert_int_eq(do_unmark(w, 0, 31, 33), 0); /* now the split has one */
	expect(w, 0, "0-5u 12-15u 30-31u 33-35u 40-45u 50-55u 60-65u 70-74u");
	ck_assert_int_eq(do_unmark(w, 0, 41, 43), -ENOMEM);
	world_free(w);
}
END_TEST

/* ---- EUCLEAN: "a corrupt tree gives -EUCLEAN and is left as it was found" ---------- */

enum op_kind { OP_MARK, OP_UNMARK, OP_PURGE };

struct bad_op {
	enum op_kind kind;
	uint64_t s, e; /* PURGE: the range that starts at s */
};

/*
 * File 0 holds [0,10)U [20,30)U [40,50)U [60,70)U [80,90)P; [40,50) is
 * made bad by `how`. Every operation that has to look at it fails with
 * -EUCLEAN and changes no byte of the region.
 */
static void euclean_case(int how)
{
	static const struct bad_op ops[] = {
		{ OP_MARK, 42, 45 },   { OP_MARK, 40, 50 },   { OP_MARK, 35, 55 },
		{ OP_MARK, 50, 55 },   { OP_MARK, 35, 40 },   { OP_MARK, 25, 45 },
		{ OP_MARK, 45, 65 },   { OP_MARK, 0, 100 },   { OP_MARK, 30, 40 },
		{ OP_MARK, 50, 60 },   { OP_UNMARK, 42, 45 }, { OP_UNMARK, 40, 50 },
		{ OP_UNMARK, 45, 55 }, { OP_UNMARK, 35, 41 }, { OP_UNMARK, 0, 100 },
		{ OP_UNMARK, 5, 65 },  { OP_PURGE, 40, 0 },   { OP_PURGE, 20, 0 },
		{ OP_PURGE, 60, 0 },
	};
	struct world *w = world_new(64, 256);
	const struct vl_region *r = w->r;
	uint32_t fi = w->fi[0], bad;
	struct vl_node *x;
	size_t i;

	do_mark(w, 0, 0, 10);
	do_mark(w, 0, 20, 30);
	do_mark(w, 0, 40, 50);
	do_mark(w, 0, 60, 70);
	do_mark(w, 0, 80, 90);
	purge_at(w, 0, 80);
	bad = node_with_start(w, 0, 40);
	x = vl_node_at(r, bad);
	switch (how) {
	case 0: /* a scribbled check word */
		x->check ^= 0x100;
		break;
	case 1: /* owned by another file */
		x->meta = vl_meta(w->fi[1], VL_NODE_LIVE, 0);
		vl_node_seal(r, x);
		break;
	case 2: /* not LIVE */
		x->meta = vl_meta(fi, VL_NODE_PENDING, 0);
		vl_node_seal(r, x);
		break;
	default: /* on the free list, as far as its state says */
		x->meta = vl_meta(fi, VL_NODE_FREE, 0);
		vl_node_seal(r, x);
		break;
	}
	ck_assert_int_eq(vl_rb_check(r, *th_root(r, fi), fi), -EUCLEAN);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		struct vl_change c;
		uint32_t spare = VL_NIL;
		int err;

		if (ops[i].kind == OP_MARK)
			spare = vl_node_alloc(r, fi);
		snapshot(w);
		switch (ops[i].kind) {
		case OP_MARK:
			err = vl_ranges_mark(r, th_root(r, fi), fi, ops[i].s, ops[i].e, spare, &c);
			break;
		case OP_UNMARK:
			err = vl_ranges_unmark(r, th_root(r, fi), fi, ops[i].s, ops[i].e, VL_NIL,
					       &c);
			if (err == -ENOMEM) {
				spare = vl_node_alloc(r, fi);
				snapshot(w);
				err = vl_ranges_unmark(r, th_root(r, fi), fi, ops[i].s, ops[i].e,
						       spare, &c);
			}
			break;
		default:
			err = vl_ranges_purge(r, th_root(r, fi), fi,
					      ops[i].s == 40 ? bad : node_with_start(w, 0, ops[i].s),
					      &c);
			break;
		}
		ck_assert_msg(err == -EUCLEAN, "corruption %d, op %zu [%" PRIu64 ",%" PRIu64
			      "): %d, want -EUCLEAN", how, i, ops[i].s, ops[i].e, err);
		ck_assert_msg(unchanged(w), "corruption %d, op %zu [%" PRIu64 ",%" PRIu64
			      "): failed but changed the region", how, i, ops[i].s, ops[i].e);
		if (spare != VL_NIL)
			vl_node_free(r, spare);
	}
	/* operations far from the bad node still work */
	{
		struct vl_change c;
		uint32_t spare = vl_node_alloc(r, fi);

		ck_assert_int_eq(vl_ranges_mark(r, th_root(r, fi), fi, 2, 5, spare, &c), 0);
		vl_commit(r, fi, &c, spare);
	}
	world_free(w);
}

START_TEST(test_euclean_nothing_changed)
{
	euclean_case(_i);
}
END_TEST

/* vl_ranges_clear on a tree whose third range is bad: -EUCLEAN, and nothing changed */
START_TEST(test_clear_corrupt_changes_nothing)
{
	struct world *w = world_new(64, 256);
	const struct vl_region *r = w->r;
	uint32_t fi = w->fi[0];
	struct vl_change c;
	int err;

	do_mark(w, 0, 0, 10);
	do_mark(w, 0, 20, 30);
	do_mark(w, 0, 40, 50);
	do_mark(w, 0, 60, 70);
	vl_node_at(r, node_with_start(w, 0, 40))->check ^= 1;
	snapshot(w);
	err = vl_ranges_clear(r, th_root(r, fi), fi, &c);
	ck_assert_int_eq(err, -EUCLEAN);
	ck_assert_msg(unchanged(w),
		      "vl_ranges_clear failed with -EUCLEAN but had already taken %d ranges "
		      "out of the tree (c.freed = %u); the caller does not commit them",
		      -c.d_ranges, c.freed);
	world_free(w);
}
END_TEST

/* ---- vl_ranges_absorb: crash repair ----------------------------------------- */

/* Absorb a LIVE node [s,e) into file f, then commit; model: merge it in. */
static void do_absorb(struct world *w, int f, uint64_t s, uint64_t e, int purged)
{
	const struct vl_region *r = w->r;
	uint32_t fi = w->fi[f], n;
	struct vl_change c;
	unsigned char map[SPACE_MAX];
	uint64_t b;
	int err;

	note(w, "absorb f%d [%" PRIu64 ",%" PRIu64 ")%s", f, s, e, purged ? "P" : "");
	w->seq++;
	w->r->hdr->c.seq = w->seq;
	n = th_node_live(r, fi, s, e, purged, w->seq);
	err = vl_ranges_absorb(r, th_root(r, fi), fi, n, &c);
	th_check_msg(err == 0, "absorb: %d\n%s", err, ctx(w));
	th_check_msg(c.keep == n, "absorb: keep %u, want %u\n%s", c.keep, n, ctx(w));
	vl_commit(r, fi, &c, VL_NIL);
	m_merge_in(&w->m[f], s, e, purged, w->seq);
	/* repair does not punch: count the purged bytes as lost, to compare */
	m_bytes(&w->m[f], w->space, map);
	for (b = 0; b < w->space; b++)
		if (map[b] == 2)
			w->lost[f][b] = 1;
	verify(w);
}

START_TEST(test_absorb_overlaps)
{
	struct world *w = world_new(64, 256);

	do_mark(w, 0, 0, 10);
	do_mark(w, 0, 20, 30);
	do_mark(w, 0, 40, 50);
	do_mark(w, 0, 60, 70);
	purge_at(w, 0, 20);
	do_absorb(w, 0, 5, 45, 0); /* overlaps three, one purged */
	expect(w, 0, "0-50p 60-70u");
	do_absorb(w, 0, 51, 60, 0); /* touches unpurged [60,70) */
	expect(w, 0, "0-50p 51-70u");
	do_absorb(w, 0, 100, 110, 1);
	do_absorb(w, 0, 110, 120, 1); /* touches purged, purged */
	expect(w, 0, "0-50p 51-70u 100-120p");
	do_absorb(w, 0, 90, 100, 0); /* touches purged, unpurged: apart */
	expect(w, 0, "0-50p 51-70u 90-100u 100-120p");
	do_absorb(w, 0, 10, 20, 0); /* inside a purged range */
	expect(w, 0, "0-50p 51-70u 90-100u 100-120p");
	do_absorb(w, 0, 0, 256, 0); /* everything */
	expect(w, 0, "0-256p");
	world_free(w);
}
END_TEST

/*
 * "merging it with every range it overlaps or touches in the same state":
 * here n touches a range in the other state on its left and one in its
 * own state on its right.
 */
START_TEST(test_absorb_touching_both_sides)
{
	struct world *w = world_new(64, 256);

	do_mark(w, 0, 0, 10);
	purge_at(w, 0, 0);
	do_mark(w, 0, 20, 30);
	expect(w, 0, "0-10p 20-30u");
	do_absorb(w, 0, 10, 20, 0);
	expect(w, 0, "0-10p 10-30u");
	world_free(w);
}
END_TEST

/*
 * The union is purged (n overlaps a purged range), so an unpurged range
 * that touches n is in the other state and must stay apart (and stay
 * unpurged: nothing punched it).
 */
START_TEST(test_absorb_touching_judged_by_final_state)
{
	struct world *w = world_new(64, 256);

	do_mark(w, 0, 13, 20);
	purge_at(w, 0, 13);
	do_mark(w, 0, 8, 13);
	expect(w, 0, "8-13u 13-20p");
	do_absorb(w, 0, 13, 16, 0);
	expect(w, 0, "8-13u 13-20p");
	world_free(w);
}
END_TEST

/* Random absorbs of overlapping leftovers, as a crash may leave them. */
START_TEST(test_absorb_random)
{
	static const uint64_t aseeds[] = { 11, 12, 13 };
	struct world *w = world_new(512, 128);
	uint64_t rng = aseeds[_i];
	int step;

	w->seed = aseeds[_i];
	for (step = 0; step < 1500; step++) {
		uint64_t s = th_below(&rng, 128), e = s + 1 + th_below(&rng, 10);
		int f = (int)th_below(&rng, NF);

		w->step = step;
		if (e > 128)
			e = 128;
		switch (th_below(&rng, 4)) {
		case 0:
			do_absorb(w, f, s, e, (int)th_below(&rng, 2));
			break;
		case 1:
			do_mark(w, f, s, e);
			break;
		case 2:
			do_unmark(w, f, s, e);
			break;
		default:
			do_purge_oldest(w);
			break;
		}
	}
	world_free(w);
}
END_TEST

/* At the edges of the tree: empty, before the first range, after the last. */
START_TEST(test_absorb_edges)
{
	struct world *w = world_new(64, 256);

	do_absorb(w, 0, 10, 20, 0); /* into an empty tree */
	expect(w, 0, "10-20u");
	do_absorb(w, 0, 30, 40, 1); /* after the last, apart */
	expect(w, 0, "10-20u 30-40p");
	do_absorb(w, 0, 0, 5, 0); /* before the first, apart */
	expect(w, 0, "0-5u 10-20u 30-40p");
	do_absorb(w, 0, 5, 10, 0); /* touches both, overlaps none */
	expect(w, 0, "0-20u 30-40p");
	do_absorb(w, 0, 20, 30, 1); /* touches both; only the right one is purged */
	expect(w, 0, "0-20u 20-40p");
	do_absorb(w, 0, 40, 41, 1); /* touches the last */
	expect(w, 0, "0-20u 20-41p");
	world_free(w);
}
END_TEST

struct absorb_op {
	uint64_t s, e;
	int purged;
	const char *what;
};

/* Make node bad the way euclean_case does. */
static void spoil(struct world *w, uint32_t bad, int how)
{
	const struct vl_region *r = w->r;
	struct vl_node *x = vl_node_at(r, bad);
	uint32_t fi = vl_node_file(x);

	switch (how) {
	case 0: /* a scribbled check word */
		x->check ^= 0x100;
		break;
	case 1: /* owned by another file */
		x->meta = vl_meta(w->fi[1], VL_NODE_LIVE, vl_node_purged(x));
		vl_node_seal(r, x);
		break;
	case 2: /* not LIVE */
		x->meta = vl_meta(fi, VL_NODE_PENDING, vl_node_purged(x));
		vl_node_seal(r, x);
		break;
	default: /* on the free list, as far as its state says */
		x->meta = vl_meta(fi, VL_NODE_FREE, vl_node_purged(x));
		vl_node_seal(r, x);
		break;
	}
}

/*
 * File 0 holds [0,10)U [20,30)U [40,50)U [60,70)U [80,90)P; the range at
 * bad_at is made bad by `how`. Absorbing a node whose overlapped ranges,
 * or whose left or right neighbour (touching it or not), include the bad
 * range gives -EUCLEAN and changes no byte of the region: tree, counters,
 * every node. A failing absorb is undone from the snapshot so every case
 * is tried; the failures go into fails (size bytes), and their number is
 * returned.
 */
static int absorb_euclean_case(int how, uint64_t bad_at, char *fails, size_t size)
{
	static const struct absorb_op at40[] = {
		{ 42, 45, 0, "inside it" },
		{ 40, 50, 1, "exactly it" },
		{ 35, 45, 0, "overlaps it alone" },
		{ 25, 45, 0, "a run that ends with it" },
		{ 45, 65, 0, "a run that starts with it" },
		{ 5, 95, 1, "a run across it" },
		{ 50, 55, 0, "it touches on the left" },
		{ 52, 55, 1, "it is the left neighbour, apart" },
		{ 55, 60, 0, "it is the left neighbour, [60,70) touches on the right" },
		{ 35, 40, 0, "it touches on the right, nothing overlapped" },
		{ 32, 38, 1, "it is the right neighbour, apart, nothing overlapped" },
		{ 30, 40, 0, "touching both sides, it on the right" },
	};
	static const struct absorb_op at80[] = {
		{ 90, 95, 1, "it is the last and touches on the left" },
		{ 95, 100, 0, "it is the last, apart" },
		{ 85, 88, 0, "inside it" },
		{ 75, 85, 1, "overlaps it alone" },
		{ 70, 80, 1, "it touches on the right, nothing overlapped" },
		{ 72, 78, 0, "it is the right neighbour, apart, nothing overlapped" },
	};
	const struct absorb_op *ops = bad_at == 40 ? at40 : at80;
	size_t nops = bad_at == 40 ? sizeof(at40) / sizeof(at40[0]) : sizeof(at80) / sizeof(at80[0]);
	struct world *w = world_new(64, 256);
	const struct vl_region *r = w->r;
	uint32_t fi = w->fi[0], bad;
	size_t i, len = strlen(fails);
	int nfail = 0;

	do_mark(w, 0, 0, 10);
	do_mark(w, 0, 20, 30);
	do_mark(w, 0, 40, 50);
	do_mark(w, 0, 60, 70);
	do_mark(w, 0, 80, 90);
	purge_at(w, 0, 80);
	bad = node_with_start(w, 0, bad_at);
	spoil(w, bad, how);
	ck_assert_int_eq(vl_rb_check(r, *th_root(r, fi), fi), -EUCLEAN);
	for (i = 0; i < nops; i++) {
		struct vl_change c;
		uint32_t n = th_node_live(r, fi, ops[i].s, ops[i].e, ops[i].purged, 1000);
		int err;

		snapshot(w);
		err = vl_ranges_absorb(r, th_root(r, fi), fi, n, &c);
		if (err != -EUCLEAN || !unchanged(w)) {
			nfail++;
			if (len + 200 < size)
				len += (size_t)snprintf(fails + len, size - len,
							"\n  bad way %d: absorb [%" PRIu64 ",%" PRIu64
							")%c (%s): %d%s",
							how, ops[i].s, ops[i].e, ops[i].purged ? 'P' : 'U',
							ops[i].what, err,
							unchanged(w) ? "" : ", region changed");
			memcpy(w->t.base, w->snap, w->t.g.region_size);
		}
		vl_node_free(r, n);
	}
	/* absorbs far from the bad range still work */
	{
		struct vl_change c;
		uint32_t n = th_node_live(r, fi, bad_at == 40 ? 12 : 32, bad_at == 40 ? 15 : 35, 0, 7);

		ck_assert_int_eq(vl_ranges_absorb(r, th_root(r, fi), fi, n, &c), 0);
		vl_commit(r, fi, &c, VL_NIL);
	}
	world_free(w);
	return nfail;
}

/* _i = 0: a range in the middle is bad; 1: the last range is bad. */
START_TEST(test_absorb_euclean_nothing_changed)
{
	static const uint64_t bad_at[] = { 40, 80 };
	static char fails[8192];
	int how, nfail = 0;

	fails[0] = 0;
	for (how = 0; how < 4; how++)
		nfail += absorb_euclean_case(how, bad_at[_i], fails, sizeof(fails));
	ck_assert_msg(nfail == 0,
		      "range at %" PRIu64 " made bad: %d absorbs did not fail with -EUCLEAN "
		      "leaving the region as it was:%s",
		      bad_at[_i], nfail, fails);
}
END_TEST

/* The node to absorb is itself bad: -EUCLEAN, nothing changed. */
START_TEST(test_absorb_bad_node_changes_nothing)
{
	struct world *w = world_new(64, 256);
	const struct vl_region *r = w->r;
	uint32_t fi = w->fi[0], n;
	struct vl_change c;
	int how;

	do_mark(w, 0, 0, 10);
	do_mark(w, 0, 20, 30);
	for (how = 0; how < 4; how++) {
		n = th_node_live(r, fi, 5, 25, 0, 1000);
		spoil(w, n, how);
		snapshot(w);
		ck_assert_int_eq(vl_ranges_absorb(r, th_root(r, fi), fi, n, &c), -EUCLEAN);
		ck_assert(unchanged(w));
		vl_node_at(r, n)->meta = vl_meta(fi, VL_NODE_PENDING, 0);
		vl_node_free(r, n);
	}
	/* an empty range is no range */
	n = th_node_live(r, fi, 12, 12, 0, 1000);
	snapshot(w);
	ck_assert_int_eq(vl_ranges_absorb(r, th_root(r, fi), fi, n, &c), -EUCLEAN);
	ck_assert(unchanged(w));
	vl_node_free(r, n);
	verify(w);
	world_free(w);
}
END_TEST

/* ---- the random run ------------------------------------------------------------ */

static void rand_span(uint64_t *rng, uint64_t space, uint64_t maxlen, uint64_t *s, uint64_t *e)
{
	uint64_t len = th_below(rng, 16) == 0 ? 1 + th_below(rng, space / 2)
					      : 1 + th_below(rng, maxlen);

	*s = th_below(rng, space);
	*e = umin(*s + len, space);
}

/* Node of the i-th range of file f. */
static uint32_t nth_node(struct world *w, int f, int i)
{
	const struct vl_region *r = w->r;
	uint32_t n = vl_rb_first(r, *th_root(r, w->fi[f]));

	while (i-- > 0 && n != VL_NIL)
		n = vl_rb_next(r, n);
	return n;
}

/*
 * `steps` random operations on the two files of a region of `ranges`
 * ranges, over offsets [0, space), spans mostly up to maxlen long.
 * full: whether the region must run full (ENOMEM) or never.
 */
static void random_run(uint64_t seed, uint32_t ranges, uint64_t space, uint64_t maxlen, int steps,
		       int full)
{
	struct world *w = world_new(ranges, space);
	uint64_t rng = seed;
	int step, nomem = 0, inside = 0, splits = 0, merges_p = 0;

	w->seed = seed;
	for (step = 0; step < steps; step++) {
		int f = (int)th_below(&rng, NF);
		struct mfile *m = &w->m[f];
		unsigned op = (unsigned)th_below(&rng, 100);
		uint64_t s, e;

		w->step = step;
		if (op < 32) {
			rand_span(&rng, space, maxlen, &s, &e);
			nomem += do_mark(w, f, s, e) == -ENOMEM;
		} else if (op < 42 && m->n > 0) {
			/* inside a range (often at its very start) */
			const struct mr *a = &m->a[th_below(&rng, (uint64_t)m->n)];

			s = th_below(&rng, 2) ? a->s : a->s + th_below(&rng, a->e - a->s);
			e = s + 1 + th_below(&rng, a->e - s);
			inside++;
			do_mark(w, f, s, e);
		} else if (op < 48 && m->n > 0) {
			/* touching a range, or overlapping it by one byte */
			const struct mr *a = &m->a[th_below(&rng, (uint64_t)m->n)];
			uint64_t len = 1 + th_below(&rng, maxlen);

			if (th_below(&rng, 2)) {
				s = a->e - th_below(&rng, 2);
				e = umin(s + len, space);
			} else {
				e = a->s + th_below(&rng, 2);
				s = e > len ? e - len : 0;
			}
			if (s < e) {
				merges_p += a->p;
				nomem += do_mark(w, f, s, e) == -ENOMEM;
			}
		} else if (op < 66) {
			rand_span(&rng, space, maxlen, &s, &e);
			do_unmark(w, f, s, e);
		} else if (op < 72 && m->n > 0) {
			/* inside a range: splits and trims */
			const struct mr *a = &m->a[th_below(&rng, (uint64_t)m->n)];

			s = a->s + th_below(&rng, a->e - a->s);
			e = s + 1 + th_below(&rng, a->e - s);
			splits += s > a->s && e < a->e;
			nomem += do_unmark(w, f, s, e) == -ENOMEM;
		} else if (op < 84) {
			do_purge_oldest(w);
		} else if (op < 93 && m->n > 0) {
			do_purge(w, f, nth_node(w, f, (int)th_below(&rng, (uint64_t)m->n)));
		} else if (op < 94) {
			do_clear(w, f);
		} else {
			rand_span(&rng, space, maxlen, &s, &e);
			do_unmark(w, f, s, e);
		}
	}
	/* the run met what it was meant to meet */
	ck_assert_int_gt(inside, steps / 20);
	ck_assert_int_gt(splits, steps / 100);
	ck_assert_int_gt(merges_p, steps / 100);
	if (full)
		ck_assert_int_gt(nomem, steps / 100);
	else
		ck_assert_int_eq(nomem, 0);
	world_free(w);
}

static const uint64_t seeds[] = { 1, 0x5eed, 0xdecafbad, 20240601 };

/* A roomy region: merges, touches and splits over [0, 256). */
START_TEST(test_random_roomy)
{
	random_run(seeds[_i], 1024, 256, 12, 20000, 0);
}
END_TEST

/* A full region (VL_MIN_RANGES ranges): ENOMEM all the time. */
START_TEST(test_random_full)
{
	random_run(seeds[_i] ^ 0xf00, VL_MIN_RANGES, 64, 6, 10000, 1);
}
END_TEST

/* A crowded region: ENOMEM now and then. */
START_TEST(test_random_crowded)
{
	random_run(seeds[_i] ^ 0xc00, 12, 96, 10, 10000, 1);
}
END_TEST

/* Long ranges over a small space: most marks merge several ranges. */
START_TEST(test_random_long)
{
	random_run(seeds[_i] ^ 0x100, 128, 64, 40, 10000, 0);
}
END_TEST

static Suite *ranges_suite(void)
{
	Suite *s = suite_create("ranges");
	TCase *tc = th_tcase("spec", 30);

	tcase_add_test(tc, test_mark_new);
	tcase_add_test(tc, test_overlap_merge);
	tcase_add_test(tc, test_adjacent_merge_same_state);
	tcase_add_test(tc, test_no_merge_across_states);
	tcase_add_test(tc, test_merge_with_purged_is_purged);
	tcase_add_test(tc, test_merge_takes_newest_age);
	tcase_add_test(tc, test_inside_mark_keeps_age);
	tcase_add_test(tc, test_inside_mark_at_touching_start_keeps_age);
	tcase_add_test(tc, test_inside_mark_of_purged_at_touching_start_no_punch);
	tcase_add_test(tc, test_unmark_not_volatile);
	tcase_add_test(tc, test_unmark_split);
	tcase_add_test(tc, test_unmark_trim_and_result);
	tcase_add_test(tc, test_purge_merges_neighbours);
	tcase_add_test(tc, test_oldest_first);
	tcase_add_test(tc, test_clear);
	suite_add_tcase(s, tc);

	tc = th_tcase("errors", 30);
	tcase_add_test(tc, test_enomem_mark);
	tcase_add_test(tc, test_enomem_unmark_split);
	tcase_add_loop_test(tc, test_euclean_nothing_changed, 0, 4);
	tcase_add_test(tc, test_clear_corrupt_changes_nothing);
	suite_add_tcase(s, tc);

	tc = th_tcase("absorb", 30);
	tcase_add_test(tc, test_absorb_overlaps);
	tcase_add_test(tc, test_absorb_touching_both_sides);
	tcase_add_test(tc, test_absorb_touching_judged_by_final_state);
	tcase_add_loop_test(tc, test_absorb_random, 0, 3);
	tcase_add_test(tc, test_absorb_edges);
	tcase_add_loop_test(tc, test_absorb_euclean_nothing_changed, 0, 2);
	tcase_add_test(tc, test_absorb_bad_node_changes_nothing);
	suite_add_tcase(s, tc);

	tc = th_tcase("random", 60);
	tcase_add_loop_test(tc, test_random_roomy, 0, 4);
	tcase_add_loop_test(tc, test_random_full, 0, 4);
	tcase_add_loop_test(tc, test_random_crowded, 0, 4);
	tcase_add_loop_test(tc, test_random_long, 0, 4);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return th_run(ranges_suite());
}
