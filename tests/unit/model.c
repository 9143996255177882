/* SPDX-License-Identifier: MIT */
/*
 * model.c - the naive model of DESIGN 3 and the world that compares
 * it with the core (see model.h).
 */
#include "model.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void model_failf(const char *fmt, ...)
{
	static char buf[16384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	model_fail(buf);
}

/* ---- the model ------------------------------------------------------------ */

uint64_t umin(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

uint64_t umax(uint64_t a, uint64_t b)
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
int m_inside(const struct mfile *m, uint64_t s, uint64_t e)
{
	int i;

	for (i = 0; i < m->n; i++)
		if (m->a[i].s <= s && e <= m->a[i].e)
			return i;
	return -1;
}

int m_find_start(const struct mfile *m, uint64_t s)
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
void m_merge_in(struct mfile *m, uint64_t s, uint64_t e, int p, uint32_t age)
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
int m_mark(struct mfile *m, uint64_t s, uint64_t e, uint32_t age)
{
	if (m_inside(m, s, e) >= 0)
		return 0;
	m_merge_in(m, s, e, 0, age);
	return 1;
}

/* UNMARK [s, e): trim, split, remove. Returns was_purged. */
int m_unmark(struct mfile *m, uint64_t s, uint64_t e)
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

int m_needs_split(const struct mfile *m, uint64_t s, uint64_t e)
{
	int i;

	for (i = 0; i < m->n; i++)
		if (m->a[i].s < s && m->a[i].e > e)
			return 1;
	return 0;
}

/* Purge range i: flag it, and merge it with touching purged ranges. */
void m_purge(struct mfile *m, int i)
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
void m_bytes(const struct mfile *m, uint64_t space, unsigned char *map)
{
	int i;
	uint64_t b;

	memset(map, 0, space);
	for (i = 0; i < m->n; i++)
		for (b = m->a[i].s; b < m->a[i].e && b < space; b++)
			map[b] = m->a[i].p ? 2 : 1;
}

/* ---- the world ---------------------------------------------------------------- */

static struct vl_ident m_ident(uint64_t dev, uint64_t ino)
{
	struct vl_ident id;

	memset(&id, 0, sizeof(id));
	id.dev = dev;
	id.ino = ino;
	id.btime_sec = (int64_t)(ino * 7 + 1);
	id.btime_nsec = (uint32_t)(ino % 1000000000u);
	return id;
}

/* Identity number `gen` of file f of the world (0: its first). */
static struct vl_ident file_ident(int f, uint32_t gen)
{
	struct vl_ident id = m_ident(0x900 + (uint64_t)f, 1000 + (uint64_t)f);

	id.btime_sec += (int64_t)gen * 1000003; /* the same inode number, born later */
	return id;
}

static uint32_t file_new(const struct vl_region *r, const struct vl_ident *id)
{
	int fresh = -1;
	uint32_t fi = vl_file_create(r, id, &fresh), found = VL_NIL;

	m_check_msg(fi != VL_NIL && fi < r->file_cap && (fresh == 0 || fresh == 1),
		    "vl_file_create: %u (fresh %d)", fi, fresh);
	m_check_msg(vl_file_lookup(r, id, &found) == 0 && found == fi,
		    "file %u just made is not found (%u)", fi, found);
	return fi;
}

uint32_t *world_root(const struct world *w, int f)
{
	return &vl_file_at(w->r, w->fi[f])->h.root;
}

int model_sentinels_zero(const struct vl_region *r)
{
	static const struct vl_node zero_node;
	static const struct vl_file zero_file;

	return memcmp(&r->nodes[VL_NIL], &zero_node, sizeof(zero_node)) == 0 &&
	       memcmp(&r->files[VL_NIL], &zero_file, sizeof(zero_file)) == 0;
}

uint32_t model_node_live(struct world *w, uint32_t fi, uint64_t start, uint64_t end, int purged,
			 uint32_t seq)
{
	const struct vl_region *r = w->r;
	uint32_t n = vl_node_alloc(r, fi);
	struct vl_node *x;

	/* the region's last free slots may be other files' IDLE ones */
	if (n == VL_NIL) {
		n = vl_spare_steal(r, fi);
		w->stolen |= n != VL_NIL;
	}
	m_check(n != VL_NIL);
	x = vl_node_at(r, n);
	x->start = start;
	x->end = end;
	x->seq = seq;
	x->meta = vl_meta(fi, VL_NODE_LIVE, purged);
	vl_node_seal(r, x);
	return n;
}

struct world *world_new_cap(uint32_t ranges, uint32_t files, uint64_t space, int nf)
{
	struct world *w = calloc(1, sizeof(*w));
	struct model_region *t;
	int f;

	m_check(w != NULL);
	m_check(space <= SPACE_MAX && nf >= 1 && nf <= MODEL_NF_MAX && (uint32_t)nf <= files);
	t = &w->t;
	vl_geometry_plan(&t->g, ranges, files);
	m_check(t->g.region_size % 4096 == 0);
	t->base = aligned_alloc(4096, (size_t)t->g.region_size);
	m_check(t->base != NULL);
	memset(t->base, 0, (size_t)t->g.region_size);
	vl_region_format(t->base, &t->g);
	m_check(vl_geometry_check(&((struct vl_header *)t->base)->geo, t->g.region_size) == 0);
	vl_region_bind(&t->r, t->base, (size_t)t->g.region_size);
	m_check(t->r.node_cap == t->g.node_cap && t->r.file_cap == t->g.file_cap &&
		t->r.hash_cap == t->g.hash_cap);
	w->r = &t->r;
	w->nf = nf;
	w->cap = w->r->node_cap - VL_CHUNK; /* chunk 0 holds the sentinel */
	w->space = space;
	for (f = 0; f < nf; f++) {
		struct vl_ident id = file_ident(f, 0);

		w->fi[f] = file_new(w->r, &id);
		m_check(*world_root(w, f) == VL_NIL);
	}
	w->snap = malloc(t->g.region_size);
	w->seen = calloc(1, w->r->node_cap);
	m_check(w->snap != NULL && w->seen != NULL);
	return w;
}

struct world *world_new_nf(uint32_t ranges, uint64_t space, int nf)
{
	return world_new_cap(ranges, 8, space, nf);
}

struct world *world_new(uint32_t ranges, uint64_t space)
{
	return world_new_nf(ranges, space, 2);
}

void world_free(struct world *w)
{
	free(w->snap);
	free(w->seen);
	free(w->t.base);
	free(w);
}

void world_note(struct world *w, const char *fmt, ...)
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
	uint32_t n = vl_rb_first(r, *world_root(w, f));
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
const char *world_ctx(struct world *w)
{
	char *p = w->msg, *end = w->msg + sizeof(w->msg);
	int i, f;

	p += snprintf(p, (size_t)(end - p), "seed %" PRIu64 " step %d; last ops:", w->seed,
		      w->step);
	for (i = w->nhist > HIST ? w->nhist - HIST : 0; i < w->nhist; i++)
		p += snprintf(p, (size_t)(end - p), "\n    %s", w->hist[i % HIST]);
	for (f = 0; f < w->nf && p < end - 100; f++)
		p = (char *)show_file(w, f, p, end);
	return w->msg;
}

int m_total(const struct world *w)
{
	int f, t = 0;

	for (f = 0; f < w->nf; f++)
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

/*
 * File f's age order (its lru list) against the model: exactly its
 * unpurged ranges, in age order (want, sorted, holds every file's), linked
 * both ways, lru_tail its last, `oldest` its head's age. And what the
 * purge relies on: the region's oldest unpurged range is the oldest of
 * the files' heads, found from their `oldest` alone.
 */
static void verify_ages(struct world *w, const struct lru_want *want, int nw)
{
	const struct vl_region *r = w->r;
	uint32_t now = w->seq, best_age = 0; /* the model's clock: one tick a MARK */
	int f, best = -1;

	for (f = 0; f < w->nf; f++) {
		const struct vl_file *F = vl_file_at(r, w->fi[f]);
		uint32_t n = F->h.lru_head, prev = VL_NIL;
		int i, j = 0;

		for (i = 0; i < nw; i++) {
			const struct vl_node *x = vl_node_at(r, n);

			if (want[i].f != f)
				continue;
			m_check_msg(n != VL_NIL && n < r->node_cap && x->prev == prev,
				     "file %d age order position %d: node %u, prev %u, want prev %u\n%s",
				     f, j, n, x->prev, prev, world_ctx(w));
			m_check_msg(vl_node_state(x) == VL_NODE_LIVE && !vl_node_purged(x) &&
					     vl_node_file(x) == w->fi[f] && x->start == want[i].a->s &&
					     x->end == want[i].a->e,
				     "file %d age order position %d: node %u [%" PRIu64 ",%" PRIu64
				     ")%c of file %u, want [%" PRIu64 ",%" PRIu64 ") (age %u)\n%s",
				     f, j, n, x->start, x->end, vl_node_purged(x) ? 'P' : 'U',
				     vl_node_file(x), want[i].a->s, want[i].a->e, want[i].a->age,
				     world_ctx(w));
			if (prev != VL_NIL) {
				const struct vl_node *y = vl_node_at(r, prev);

				/* only the halves of a split share an age, side by side, in order */
				m_check_msg(vl_age_older(y->seq, x->seq, now) ||
						     (y->seq == x->seq && y->end < x->start),
					     "file %d: ages not increasing at position %d: %u then %u\n%s",
					     f, j, y->seq, x->seq, world_ctx(w));
			}
			prev = n;
			n = x->next;
			j++;
		}
		m_check_msg(n == VL_NIL, "file %d: age order holds more than its %d unpurged ranges\n%s",
			     f, j, world_ctx(w));
		m_check_msg(F->h.lru_tail == prev, "file %d: lru_tail %u, want %u\n%s", f,
			     F->h.lru_tail, prev, world_ctx(w));
		m_check_msg(F->h.oldest == (F->h.lru_head == VL_NIL ? 0 : vl_node_at(r, F->h.lru_head)->seq),
			     "file %d: oldest %u, head %u of age %u\n%s", f, F->h.oldest, F->h.lru_head,
			     vl_node_at(r, F->h.lru_head)->seq, world_ctx(w));
		if (F->h.oldest != 0 && (best < 0 || vl_age_older(F->h.oldest, best_age, now))) {
			best = f;
			best_age = F->h.oldest;
		}
	}
	if (nw == 0) {
		m_check_msg(best < 0, "file %d publishes an oldest range, none is unpurged\n%s", best,
			     world_ctx(w));
		return;
	}
	/* want[0]: the model's oldest (its halves share the age: either file's head is fine) */
	m_check_msg(best >= 0 && best_age == want[0].a->age,
		     "the oldest of the files' heads is file %d age %u, the oldest range is "
		     "[%" PRIu64 ",%" PRIu64 ") of file %d, age %u\n%s",
		     best, best_age, want[0].a->s, want[0].a->e, want[0].f, want[0].a->age,
		     world_ctx(w));
}

/* Note slot n seen in `where`; a second sighting is a node in two places. */
static void seen_once(struct world *w, uint32_t n, const char *where)
{
	m_check_msg(n != VL_NIL && n < w->r->node_cap, "%s: bad node %u\n%s", where, n,
		     world_ctx(w));
	m_check_msg(!w->seen[n], "node %u in %s, and seen before\n%s", n, where, world_ctx(w));
	w->seen[n] = 1;
}

/*
 * Every slot in [VL_CHUNK, node_hwm) in exactly one place: a range in a
 * file's tree, an IDLE node (an empty one), or in
 * a chunk on the free list (VL_CHUNK nodes, all FREE). A chunk in use
 * holds one file's nodes only, unless the region was full (a steal: the
 * world's stolen); nodes_used counts the nodes of chunks in use.
 */
static void verify_chunks(struct world *w, uint32_t *nidle)
{
	const struct vl_region *r = w->r;
	const struct vl_counters *k = &r->hdr->c;

	for (uint32_t c = VL_CHUNK; c < k->node_hwm; c += VL_CHUNK) {
		uint32_t owner = VL_NIL;

		if (vl_node_state(vl_node_at(r, c)) == VL_NODE_FREE)
			continue;
		for (uint32_t i = c; i < c + VL_CHUNK; i++) {
			const struct vl_node *x = vl_node_at(r, i);

			if (vl_node_state(x) == VL_NODE_IDLE) {
				seen_once(w, i, "idle");
				m_check_msg(x->start == 0 && x->end == 0, "idle node %u not empty\n%s",
					     i, world_ctx(w));
				(*nidle)++;
			}
			m_check_msg(vl_node_state(x) != VL_NODE_FREE,
				     "node %u FREE in chunk %u in use\n%s", i, c, world_ctx(w));
			m_check_msg(w->stolen || owner == VL_NIL || vl_node_file(x) == owner,
				     "chunk %u holds nodes of files %u and %u\n%s", c, owner,
				     vl_node_file(x), world_ctx(w));
			owner = vl_node_file(x);
		}
	}
}

static void verify_nodes(struct world *w, uint32_t nr)
{
	const struct vl_region *r = w->r;
	const struct vl_counters *k = &r->hdr->c;
	uint32_t n, nfree = 0, nidle = 0, i;
	int f;

	memset(w->seen, 0, r->node_cap);
	for (f = 0; f < w->nf; f++) {
		const struct vl_file *F = vl_file_at(r, w->fi[f]);

		for (n = vl_rb_first(r, F->h.root); n != VL_NIL; n = vl_rb_next(r, n))
			seen_once(w, n, "a tree");
	}
	verify_chunks(w, &nidle);
	for (n = (uint32_t)k->node_top; n != VL_NIL; n = vl_node_at(r, n)->next) {
		m_check_msg(n < k->node_hwm && n % VL_CHUNK == 0,
			     "free list: node %u above the mark or not a chunk's first\n%s", n,
			     world_ctx(w));
		for (i = n; i < n + VL_CHUNK; i++) {
			seen_once(w, i, "the free list");
			m_check_msg(vl_node_state(vl_node_at(r, i)) == VL_NODE_FREE,
				     "free list: node %u not FREE\n%s", i, world_ctx(w));
		}
		nfree += VL_CHUNK;
	}
	for (i = VL_CHUNK; i < k->node_hwm; i++)
		m_check_msg(w->seen[i], "node %u (meta %#x) is nowhere: lost\n%s", i,
			     vl_node_at(r, i)->meta, world_ctx(w));
	m_check_msg(k->nodes_used + nfree + VL_CHUNK == k->node_hwm,
		     "nodes_used %u + free %u + %u != hwm %u (chunks in use)\n%s", k->nodes_used,
		     nfree, VL_CHUNK, k->node_hwm, world_ctx(w));
	m_check_msg(nfree + nidle + nr + VL_CHUNK == k->node_hwm,
		     "free %u + idle %u + ranges %u + %u != hwm %u\n%s", nfree, nidle, nr,
		     VL_CHUNK, k->node_hwm, world_ctx(w));
}

/* Everything the region shows must be what the model says. */
void world_verify(struct world *w)
{
	const struct vl_region *r = w->r;
	const struct vl_counters *k = &r->hdr->c;
	static struct lru_want want[MODEL_NF_MAX * MAXR];
	uint64_t vb = 0, pb = 0;
	uint32_t nr = 0, np = 0, n;
	int f, i, nw = 0;

	for (f = 0; f < w->nf; f++) {
		const struct mfile *m = &w->m[f];
		const struct vl_file *F = vl_file_at(r, w->fi[f]);
		uint64_t fvb = 0, fpb = 0, b;
		unsigned char map[SPACE_MAX];
		long cnt = vl_rb_check(r, F->h.root, w->fi[f]);

		m_check_msg(cnt == m->n, "vl_rb_check of file %d = %ld, model has %d ranges\n%s",
			     f, cnt, m->n, world_ctx(w));
		n = vl_rb_first(r, F->h.root);
		for (i = 0; i < m->n; i++) {
			const struct mr *a = &m->a[i];
			const struct vl_node *x = vl_node_at(r, n);

			m_check_msg(n != VL_NIL && x->start == a->s && x->end == a->e &&
					     vl_node_purged(x) == a->p,
				     "file %d range %d: tree has [%" PRIu64 ",%" PRIu64
				     ")%c, model [%" PRIu64 ",%" PRIu64 ")%c\n%s",
				     f, i, x->start, x->end, vl_node_purged(x) ? 'P' : 'U', a->s,
				     a->e, a->p ? 'P' : 'U', world_ctx(w));
			m_check_msg(a->p || x->seq == a->age,
				     "file %d range [%" PRIu64 ",%" PRIu64
				     "): age %u, model says %u\n%s",
				     f, a->s, a->e, x->seq, a->age, world_ctx(w));
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
		m_check_msg(n == VL_NIL, "file %d: tree has more than %d ranges\n%s", f, m->n,
			     world_ctx(w));
		m_check_msg(F->h.nranges == (uint32_t)m->n && F->h.vbytes == fvb &&
				     F->h.pbytes == fpb,
			     "file %d counters: nranges %u vbytes %" PRIu64 " pbytes %" PRIu64
			     ", model %d %" PRIu64 " %" PRIu64 "\n%s",
			     f, F->h.nranges, F->h.vbytes, F->h.pbytes, m->n, fvb, fpb, world_ctx(w));
		nr += (uint32_t)m->n;
		vb += fvb;
		pb += fpb;

		/* the flag never lies; no byte outside a purged range was punched */
		m_bytes(m, w->space, map);
		for (b = 0; b < w->space; b++)
			m_check_msg(w->lost[f][b] == (map[b] == 2),
				     "file %d byte %" PRIu64 ": punched %d, in a purged range %d\n%s",
				     f, b, w->lost[f][b], map[b] == 2, world_ctx(w));
	}
	m_check_msg(k->ranges == nr && k->ranges_purged == np &&
			     vl_u128_cmp(&k->volatile_bytes, vb) == 0 &&
			     vl_u128_cmp(&k->purged_bytes, pb) == 0,
		     "region counters: ranges %u purged %u vbytes %" PRIu64 "+%" PRIu64
		     "*2^64 pbytes %" PRIu64 "+%" PRIu64 "*2^64; model %u %u %" PRIu64
		     " %" PRIu64 "\n%s",
		     k->ranges, k->ranges_purged, k->volatile_bytes.lo, k->volatile_bytes.hi,
		     k->purged_bytes.lo, k->purged_bytes.hi, nr, np, vb, pb,
		     world_ctx(w));
	m_check_msg(k->age_clock == VL_AGE_CLOCK, "region age clock %u\n%s", k->age_clock,
		     world_ctx(w));

	/* each file's age order: exactly its unpurged ranges, oldest first */
	qsort(want, (size_t)nw, sizeof(want[0]), lru_cmp);
	verify_ages(w, want, nw);

	/* no node leaks, none in two places: in a tree, kept as a spare, or free */
	verify_nodes(w, nr);
	m_check_msg(model_sentinels_zero(r), "slot 0 of the nodes or the files was written\n%s",
		    world_ctx(w));
}

/* ---- operations, as the runtime performs them ------------------------------ */

/*
 * A spare for a change of file f, as the runtime gets one (ops.c): the
 * file's kept one, else a new one, else (the region full) another file's.
 */
static uint32_t rt_get_spare(struct world *w, uint32_t fi)
{
	uint32_t n = vl_node_alloc(w->r, fi);

	if (n == VL_NIL) {
		n = vl_spare_steal(w->r, fi);
		w->stolen |= n != VL_NIL;
	}
	return n;
}

int rt_mark(struct world *w, int f, uint64_t s, uint64_t e, struct vl_change *c)
{
	const struct vl_region *r = w->r;
	uint32_t fi = w->fi[f];
	uint32_t spare = rt_get_spare(w, fi);
	int err = vl_ranges_mark(r, world_root(w, f), fi, s, e, spare, c);

	if (err)
		memset(c, 0, sizeof(*c));
	c->age = w->seq + 1; /* a new age is the model's clock a tick on */
	vl_commit(r, fi, c, spare);
	return err;
}

/*
 * Returns what UNMARK returns (0, 1 or -errno); *first: the first call's
 * result, made without a spare (so that a split is seen to need one).
 */
int rt_unmark(struct world *w, int f, uint64_t s, uint64_t e, struct vl_change *c,
		     int *first)
{
	const struct vl_region *r = w->r;
	uint32_t fi = w->fi[f], spare = VL_NIL;
	int err = vl_ranges_unmark(r, world_root(w, f), fi, s, e, VL_NIL, c);

	*first = err;
	if (err == -ENOMEM) {
		spare = rt_get_spare(w, fi);
		err = spare == VL_NIL ? -ENOMEM
				      : vl_ranges_unmark(r, world_root(w, f), fi, s, e, spare, c);
	}
	if (err)
		memset(c, 0, sizeof(*c));
	vl_commit(r, fi, c, spare);
	return err ? err : c->was_purged;
}

/* The punch of an operation hits the data: only volatile bytes may be hit. */
void apply_punch(struct world *w, int f, const struct vl_change *c)
{
	unsigned char map[SPACE_MAX];
	uint64_t b;

	if (c->punch_end <= c->punch_start)
		return;
	m_bytes(&w->m[f], w->space, map);
	for (b = c->punch_start; b < c->punch_end; b++) {
		m_check_msg(b < w->space && map[b] == 2,
			     "punch [%" PRIu64 ",%" PRIu64 ") hits byte %" PRIu64
			     " which is not in a purged range\n%s",
			     c->punch_start, c->punch_end, b, world_ctx(w));
		w->lost[f][b] = 1;
	}
}

uint32_t node_with_start(struct world *w, int f, uint64_t s)
{
	const struct vl_region *r = w->r;
	uint32_t n = vl_rb_first(r, *world_root(w, f));
	int steps = 0;

	for (; n != VL_NIL && steps <= MAXR; n = vl_rb_next(r, n), steps++)
		if (vl_node_at(r, n)->start == s)
			return n;
	return VL_NIL;
}

void world_snapshot(struct world *w)
{
	memcpy(w->snap, w->t.base, w->t.g.region_size);
}

int world_unchanged(struct world *w)
{
	return memcmp(w->snap, w->t.base, w->t.g.region_size) == 0;
}

/* MARK through the runtime's steps; checks against the model; returns the error. */
int do_mark(struct world *w, int f, uint64_t s, uint64_t e)
{
	struct mfile *before = &w->scratch[0], *after = &w->scratch[1];
	unsigned char was[SPACE_MAX];
	struct vl_change c;
	int in, need = 0, nomem = 0, err;

	world_note(w, "mark   f%d [%" PRIu64 ",%" PRIu64 ")", f, s, e);
	*before = w->m[f];
	*after = w->m[f];
	in = m_inside(before, s, e);
	if (in < 0) {
		m_mark(after, s, e, w->seq + 1);
		need = after->n > before->n;
		nomem = need && m_total(w) == (int)w->cap;
	}
	if (nomem)
		world_snapshot(w);
	err = rt_mark(w, f, s, e, &c);
	if (nomem) {
		m_check_msg(err == -ENOMEM, "mark with the region full: %d, want -ENOMEM\n%s", err,
			     world_ctx(w));
		m_check_msg(world_unchanged(w), "mark failed with -ENOMEM but changed the region\n%s",
			     world_ctx(w));
		world_verify(w);
		return err;
	}
	m_check_msg(err == 0, "mark: %d, want 0\n%s", err, world_ctx(w));
	if (in >= 0) {
		m_check_msg(c.punch_start == c.punch_end,
			     "mark inside a range punched [%" PRIu64 ",%" PRIu64 ")\n%s",
			     c.punch_start, c.punch_end, world_ctx(w));
		m_check_msg(c.keep == node_with_start(w, f, before->a[in].s),
			     "mark inside a range: keep %u\n%s", c.keep, world_ctx(w));
	} else {
		int j = m_inside(after, s, e);
		const struct mr *mg = &after->a[j];

		m_check(j >= 0);
		w->seq++;
		if (mg->p) {
			uint64_t b;

			/* the flag must not lie: what was not purged is punched now */
			m_check_msg(c.punch_start < c.punch_end && mg->s <= c.punch_start &&
					     c.punch_end <= mg->e && c.punch_start <= s &&
					     e <= c.punch_end,
				     "mark into purged [%" PRIu64 ",%" PRIu64 "): punch [%" PRIu64
				     ",%" PRIu64 ")\n%s",
				     mg->s, mg->e, c.punch_start, c.punch_end, world_ctx(w));
			m_bytes(before, w->space, was);
			for (b = mg->s; b < mg->e; b++)
				m_check_msg(was[b] == 2 || (c.punch_start <= b && b < c.punch_end),
					     "byte %" PRIu64 " joins purged [%" PRIu64 ",%" PRIu64
					     ") unpunched\n%s",
					     b, mg->s, mg->e, world_ctx(w));
			/* a purged range's extent is not punched again: a repair may not know it */
			for (b = c.punch_start; b < c.punch_end; b++)
				m_check_msg(was[b] != 2 || (s <= b && b < e),
					     "mark [%" PRIu64 ",%" PRIu64 ") punched byte %" PRIu64
					     " of a purged range\n%s",
					     s, e, b, world_ctx(w));
		} else {
			m_check_msg(c.punch_start == c.punch_end,
				     "mark into unpurged range punched [%" PRIu64 ",%" PRIu64 ")\n%s",
				     c.punch_start, c.punch_end, world_ctx(w));
		}
		m_check_msg(c.keep == node_with_start(w, f, mg->s), "mark: keep %u\n%s", c.keep,
			     world_ctx(w));
	}
	w->m[f] = *after;
	apply_punch(w, f, &c);
	world_verify(w);
	return err;
}

/* UNMARK through the runtime's steps; returns what UNMARK returns. */
int do_unmark(struct world *w, int f, uint64_t s, uint64_t e)
{
	struct mfile *after = &w->scratch[0];
	struct vl_change c;
	int split, wp, nomem, rc, first;
	uint64_t b;

	world_note(w, "unmark f%d [%" PRIu64 ",%" PRIu64 ")", f, s, e);
	*after = w->m[f];
	split = m_needs_split(after, s, e);
	wp = m_unmark(after, s, e);
	nomem = split && m_total(w) == (int)w->cap;
	if (nomem)
		world_snapshot(w);
	rc = rt_unmark(w, f, s, e, &c, &first);
	m_check_msg(first == (split ? -ENOMEM : 0),
		     "unmark without a spare: %d, want %d (split needed: %d)\n%s", first,
		     split ? -ENOMEM : 0, split, world_ctx(w));
	if (nomem) {
		m_check_msg(rc == -ENOMEM, "unmark split with the region full: %d\n%s", rc,
			     world_ctx(w));
		m_check_msg(world_unchanged(w), "unmark failed with -ENOMEM but changed the region\n%s",
			     world_ctx(w));
		world_verify(w);
		return rc;
	}
	m_check_msg(rc == wp, "unmark returned %d, want %d\n%s", rc, wp, world_ctx(w));
	m_check_msg(c.punch_start == c.punch_end, "unmark punched\n%s", world_ctx(w));
	/* THE INVARIANT: 0 means every byte it covered is intact */
	for (b = s; b < e && b < w->space; b++) {
		if (rc == 0)
			m_check_msg(!w->lost[f][b],
				     "unmark returned 0 but byte %" PRIu64 " was punched\n%s", b,
				     world_ctx(w));
		w->lost[f][b] = 0; /* the program has its bytes back (and rewrites them) */
	}
	w->m[f] = *after;
	world_verify(w);
	return rc;
}

/* Purge range n of file f (as the purger does, any range; usually the oldest). */
void do_purge(struct world *w, int f, uint32_t n)
{
	const struct vl_region *r = w->r;
	const struct vl_node *x = vl_node_at(r, n);
	struct vl_change c;
	int i, err, already;
	uint64_t s = x->start, e = x->end;

	world_note(w, "purge  f%d [%" PRIu64 ",%" PRIu64 ")%s", f, s, e, vl_node_purged(x) ? "P" : "");
	i = m_find_start(&w->m[f], s);
	m_check_msg(i >= 0, "purge: no model range starts at %" PRIu64 "\n%s", s, world_ctx(w));
	already = w->m[f].a[i].p;
	err = vl_ranges_purge(r, world_root(w, f), w->fi[f], n, &c);
	m_check_msg(err == 0, "purge: %d\n%s", err, world_ctx(w));
	vl_commit(r, w->fi[f], &c, VL_NIL);
	if (already) {
		m_check_msg(c.punch_start == c.punch_end && c.keep == n,
			     "purge of a purged range: punch [%" PRIu64 ",%" PRIu64 ") keep %u\n%s",
			     c.punch_start, c.punch_end, c.keep, world_ctx(w));
	} else {
		m_check_msg(c.punch_start == s && c.punch_end == e,
			     "purge of [%" PRIu64 ",%" PRIu64 "): punch [%" PRIu64 ",%" PRIu64
			     ")\n%s",
			     s, e, c.punch_start, c.punch_end, world_ctx(w));
		m_purge(&w->m[f], i);
	}
	apply_punch(w, f, &c);
	world_verify(w);
}

/*
 * Purge the oldest unpurged range of the region, as the purger finds it:
 * the head of the file whose published oldest age is the oldest.
 */
int do_purge_oldest(struct world *w)
{
	const struct vl_region *r = w->r;
	uint32_t now = w->seq, best_age = 0; /* the model's clock: one tick a MARK */
	int f, best = -1;

	for (f = 0; f < w->nf; f++) {
		uint32_t age = vl_file_at(r, w->fi[f])->h.oldest;

		if (age != 0 && (best < 0 || vl_age_older(age, best_age, now))) {
			best = f;
			best_age = age;
		}
	}
	if (best < 0) {
		for (f = 0; f < w->nf; f++)
			for (int i = 0; i < w->m[f].n; i++)
				m_check_msg(w->m[f].a[i].p, "no file has an oldest range, yet unpurged ranges\n%s",
					     world_ctx(w));
		return -1;
	}
	do_purge(w, best, vl_file_at(r, w->fi[best])->h.lru_head);
	return best;
}

void do_clear(struct world *w, int f)
{
	const struct vl_region *r = w->r;
	struct vl_change c;
	int err;

	world_note(w, "clear  f%d", f);
	err = vl_ranges_clear(r, world_root(w, f), w->fi[f], &c);
	m_check_msg(err == 0, "clear: %d\n%s", err, world_ctx(w));
	vl_commit(r, w->fi[f], &c, VL_NIL);
	m_check(*world_root(w, f) == VL_NIL);
	w->m[f].n = 0;
	memset(w->lost[f], 0, sizeof(w->lost[f]));
	world_verify(w);
}

void do_forget_unpurged(struct world *w, int f)
{
	const struct vl_region *r = w->r;
	struct mfile *m = &w->m[f];
	struct vl_change c;
	int err, i, n = 0;

	world_note(w, "forget f%d", f);
	err = vl_ranges_forget_unpurged(r, world_root(w, f), w->fi[f], &c);
	m_check_msg(err == 0, "forget unpurged: %d\n%s", err, world_ctx(w));
	m_check_msg(c.punch_start == c.punch_end, "forget unpurged punched\n%s", world_ctx(w));
	vl_commit(r, w->fi[f], &c, VL_NIL);
	/* their bytes are intact: they just stop being volatile */
	for (i = 0; i < m->n; i++)
		if (m->a[i].p)
			m->a[n++] = m->a[i];
	m->n = n;
	world_verify(w);
}

void do_absorb(struct world *w, int f, uint64_t s, uint64_t e, int purged)
{
	const struct vl_region *r = w->r;
	uint32_t fi = w->fi[f], n;
	struct vl_change c;
	unsigned char map[SPACE_MAX];
	uint64_t b;
	int err;

	world_note(w, "absorb f%d [%" PRIu64 ",%" PRIu64 ")%s", f, s, e, purged ? "P" : "");
	w->seq++;
	n = model_node_live(w, fi, s, e, purged, w->seq);
	err = vl_ranges_absorb(r, world_root(w, f), fi, n, &c);
	m_check_msg(err == 0, "absorb: %d\n%s", err, world_ctx(w));
	m_check_msg(c.keep == n, "absorb: keep %u, want %u\n%s", c.keep, n, world_ctx(w));
	vl_commit(r, fi, &c, VL_NIL);
	m_merge_in(&w->m[f], s, e, purged, w->seq);
	/* repair does not punch: count the purged bytes as lost, to compare */
	m_bytes(&w->m[f], w->space, map);
	for (b = 0; b < w->space; b++)
		if (map[b] == 2)
			w->lost[f][b] = 1;
	world_verify(w);
}

uint32_t nth_node(struct world *w, int f, int i)
{
	const struct vl_region *r = w->r;
	uint32_t n = vl_rb_first(r, *world_root(w, f));

	while (i-- > 0 && n != VL_NIL)
		n = vl_rb_next(r, n);
	return n;
}

int do_recycle(struct world *w, int f)
{
	const struct vl_region *r = w->r;
	struct vl_ident old = file_ident(f, w->gen[f]), id;
	uint32_t fi = w->fi[f], gen = vl_file_at(r, fi)->h.gen, found;

	if (w->m[f].n != 0)
		return -1;
	world_note(w, "recycle f%d (slot %u)", f, fi);
	m_check_msg(vl_file_at(r, fi)->h.nranges == 0, "file %d: %u ranges, model none\n%s", f,
		    vl_file_at(r, fi)->h.nranges, world_ctx(w));
	vl_file_release(r, fi);
	m_check_msg(vl_file_lookup(r, &old, &found) == 0 && found == VL_NIL,
		    "file %d released, still found at %u\n%s", f, found, world_ctx(w));
	m_check_msg(vl_file_at(r, fi)->h.gen != gen, "slot %u freed, its gen still %u\n%s", fi, gen,
		    world_ctx(w));
	/* a new file with the same device and inode number, born later */
	id = file_ident(f, ++w->gen[f]);
	w->fi[f] = file_new(r, &id);
	m_check_msg(*world_root(w, f) == VL_NIL && vl_file_at(r, w->fi[f])->h.nranges == 0,
		    "file %d: new record in slot %u is not empty\n%s", f, w->fi[f], world_ctx(w));
	memset(w->lost[f], 0, sizeof(w->lost[f]));
	world_verify(w);
	return 0;
}
