/* SPDX-License-Identifier: MIT */
/*
 * leaves.c - format 10's B+tree of cache-line leaves (leaves.h says what
 * and why). The rules are DESIGN 3's as ranges.c applies them; each
 * change first walks and checks every range it will change (the first
 * look), then changes them by descents of their own (inner nodes are in
 * cache; the leaves are what a pair pays for).
 */
#include "leaves.h"

#include <errno.h>
#include <string.h>

/*
 * A store to the tree done: a test's kill point (tests/unit/test-lvkill.c
 * stops a change after its k-th store). Nothing in the library.
 */
#ifdef VL_LV_STORE_HOOK
void vl_lv_store_hook(int line);
#define STORED() vl_lv_store_hook(__LINE__)
#else
#define STORED() ((void)0)
#endif

typedef struct vl_lv_range range_t;
typedef struct vl_lv_leafcopy leaf_t;
typedef struct vl_lv_cur cur_t;

/* ---- the check words ---------------------------------------------------- */

/* One word into the sum: a rotation, so that high bits reach low ones, and a multiply. */
static inline uint64_t step(uint64_t h, uint64_t v)
{
	return ((h << 23 | h >> 41) ^ v) * 0x9e3779b97f4a7c15ull;
}

static inline uint64_t mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 31);
}

/* A line's check: its other words, keyed by block, file and line number. */
static uint32_t line_sum(const struct vl_lv_line *l, uint32_t blk, uint32_t file, unsigned ln)
{
	uint64_t h = (((uint64_t)blk << 32) | file) * 0xc2b2ae3d27d4eb4full + ln;

	h = step(h, (uint64_t)l->age[0] | (uint64_t)l->age[1] << 32);
	h = step(h, l->age[2]);
	h = step(h, l->start[0]);
	h = step(h, l->start[1]);
	h = step(h, l->start[2]);
	h = step(h, l->end[0]);
	h = step(h, l->end[1]);
	h = step(h, l->end[2]);
	return (uint32_t)(mix(h, 0) >> 32);
}

static inline int blk_ok(const struct vl_lv *t, uint32_t b)
{
	return b != 0 && b < t->cap;
}

/* ---- leaves: read (checked) and written ------------------------------------ */

static inline uint32_t leaf_lines(uint32_t n)
{
	return n / 3 + 1; /* slots 0..n */
}

/*
 * Read leaf b into *L, checking everything: 1 if it is a sound leaf of
 * this file, 0 if not.
 */
static int leaf_read(const struct vl_lv *t, uint32_t b, leaf_t *L)
{
	const struct vl_lv_line *l;
	uint32_t n, i, k, j;
	uint64_t after;

	if (!blk_ok(t, b))
		return 0;
	l = t->b[b].line;
	if (l[0].check != line_sum(&l[0], b, t->file, 0) ||
	    (l[0].age[0] & 0xffff0000u) != VL_LV_LEAF)
		return 0;
	n = l[0].age[0] & 0xffffu;
	if (n > VL_LV_CAP)
		return 0;
	for (k = 1; k < leaf_lines(n); k++)
		if (l[k].check != line_sum(&l[k], b, t->file, k))
			return 0;
	L->lo = l[0].start[0];
	L->hi = l[0].end[0];
	L->n = n;
	if (L->lo >= L->hi || L->hi > VL_LV_END)
		return 0;
	after = L->lo;
	/* slot i + 1 is line (i + 1) / 3, place (i + 1) % 3: counted, not divided */
	for (i = 0, k = 0, j = 1; i < n; i++) {
		const struct vl_lv_line *x = &l[k];
		range_t *r = &L->r[i];

		r->start = x->start[j] & ~VL_LV_PURGED;
		r->purged = (int)(x->start[j] >> 63);
		r->end = x->end[j];
		r->age = x->age[j];
		if (r->start < after || r->start >= L->hi || r->end <= r->start ||
		    r->end > VL_LV_END)
			return 0;
		after = r->end;
		if (++j == 3) {
			j = 0;
			k++;
		}
	}
	return 1;
}

/* Encode line k of leaf L. */
static void leaf_line(const leaf_t *L, unsigned k, struct vl_lv_line *out)
{
	unsigned j;

	memset(out, 0, sizeof(*out));
	for (j = 0; j < 3; j++) {
		unsigned slot = 3 * k + j;

		if (slot == 0) {
			out->age[0] = VL_LV_LEAF | L->n;
			out->start[0] = L->lo;
			out->end[0] = L->hi;
		} else if (slot <= L->n) {
			const range_t *r = &L->r[slot - 1];

			out->age[j] = r->age;
			out->start[j] = r->start | (r->purged ? VL_LV_PURGED : 0);
			out->end[j] = r->end;
		}
	}
}

/*
 * Write leaf L into block b: line 0 (the header) and the lines from range
 * `from` on (those before it did not change), each sealed as it is
 * written. The order keeps every range that stays in the leaf in some
 * slot at every store, so that a writer killed between two lines loses
 * none (the repair reads every slot, leaves.h "Kills"): where ranges
 * shift right, into later lines, the lines go from the last down and the
 * header last; else the header first and the lines up. A line past the
 * last that held ranges is written empty: no slot past the count holds a
 * range but one a dead writer left.
 */
static void leaf_write_line(const struct vl_lv *t, uint32_t b, const leaf_t *L, unsigned k)
{
	struct vl_lv_line x;

	leaf_line(L, k, &x);
	x.check = line_sum(&x, b, t->file, k);
	t->b[b].line[k] = x;
	STORED();
}

/*
 * Do the ranges that stay move to later slots? The first old range (read
 * as it is) that is not where it was and is still in L says; one taken
 * out says nothing.
 */
static int shifts_right(const struct vl_lv_line *l, const leaf_t *L, uint32_t was, uint32_t from)
{
	uint32_t i, j;

	/* those before `from` did not change (leaf_write's contract) */
	for (i = from; i < was; i++) {
		const struct vl_lv_line *x = &l[(i + 1) / 3];
		unsigned s = (i + 1) % 3;
		uint64_t st = x->start[s] & ~VL_LV_PURGED;

		if (i < L->n && st == L->r[i].start)
			continue;
		for (j = from; j < L->n; j++)
			if (L->r[j].start == st)
				return j > i;
	}
	return 0;
}

static void leaf_write(const struct vl_lv *t, uint32_t b, const leaf_t *L, uint32_t from)
{
	const struct vl_lv_line *l = t->b[b].line;
	uint32_t was = l[0].age[0] & 0xffffu;
	unsigned k, first = (from + 1) / 3, last = L->n / 3, top;

	int fresh = was > VL_LV_CAP || (l[0].age[0] & 0xffff0000u) != VL_LV_LEAF;

	/* a new block (or a scribbled count): every line, the header last, as it has none yet */
	if (fresh)
		was = VL_LV_CAP;
	top = was / 3 > last ? was / 3 : last;
	if (top >= VL_LV_LINES)
		top = VL_LV_LINES - 1;
	if (first == 0)
		first = 1;
	if (fresh || shifts_right(l, L, was, from)) {
		for (k = top; k >= first; k--)
			leaf_write_line(t, b, L, k);
		leaf_write_line(t, b, L, 0);
		return;
	}
	leaf_write_line(t, b, L, 0);
	for (k = first; k <= top; k++)
		leaf_write_line(t, b, L, k);
}

static uint32_t leaf_min(const leaf_t *L)
{
	uint32_t m = VL_LV_NOAGE, i;

	for (i = 0; i < L->n; i++)
		if (!L->r[i].purged && L->r[i].age < m)
			m = L->r[i].age;
	return m;
}

/* ---- inner nodes ------------------------------------------------------------ */

/* Is b an inner node of this level? Its count, or 0. */
static uint32_t inner_ok(const struct vl_lv *t, uint32_t b, uint32_t level)
{
	uint32_t hdr, n;

	if (!blk_ok(t, b))
		return 0;
	hdr = t->b[b].in.hdr;
	n = hdr & 0xff;
	if ((hdr & 0xff000000u) != VL_LV_INNER || ((hdr >> 8) & 0xff) != level || n == 0 ||
	    n > VL_LV_FAN)
		return 0;
	return n;
}

static inline uint32_t inner_count(const struct vl_lv_inner *in)
{
	return in->hdr & 0xff;
}

static inline void inner_set_count(struct vl_lv_inner *in, uint32_t n)
{
	in->hdr = (in->hdr & ~0xffu) | n;
}

static uint32_t inner_min(const struct vl_lv_inner *in)
{
	uint32_t m = VL_LV_NOAGE, i, n = inner_count(in);

	for (i = 0; i < n && i < VL_LV_FAN; i++)
		if (in->minage[i] < m)
			m = in->minage[i];
	return m;
}

/*
 * The least age below the path's node at level lvl changed to m: carry it
 * up while it changes what the parents record.
 */
static void fix_mins(const struct vl_lv *t, const cur_t *c, int lvl, uint32_t m)
{
	for (lvl--; lvl >= 0; lvl--) {
		struct vl_lv_inner *in = &t->b[c->blk[lvl]].in;

		if (in->minage[c->pos[lvl]] == m)
			return;
		in->minage[c->pos[lvl]] = m;
		STORED();
		m = inner_min(in);
	}
}

/* ---- blocks in and out --------------------------------------------------------- */

static uint32_t take(struct vl_lv_res *res, struct vl_lv_change *chg)
{
	if (res == NULL || res->n == 0)
		return 0;
	chg->used++;
	return res->blk[--res->n];
}

/* Let block b go: its header wiped (no leaf, no inner node), chained. */
static void let_go(const struct vl_lv *t, uint32_t b, struct vl_lv_change *chg)
{
	t->b[b].line[0].age[0] = 0;
	STORED();
	t->b[b].next_free = chg->freed;
	STORED();
	chg->freed = b;
	chg->nfreed++;
}

uint32_t vl_lv_need(const struct vl_lv *t)
{
	uint32_t h = t->root->height;

	return (h < VL_LV_HMAX ? h : VL_LV_HMAX) + 1;
}

/* Does res hold what a change that may add a range needs? 0, -ENOMEM, -EINVAL. */
static int res_check(const struct vl_lv *t, const struct vl_lv_res *res)
{
	uint32_t need = vl_lv_need(t), k;

	if (res == NULL)
		return -ENOMEM;
	if (res->n > VL_LV_RES_MAX)
		return -EINVAL;
	if (res->n < need)
		return -ENOMEM;
	for (k = res->n - need; k < res->n; k++)
		if (!blk_ok(t, res->blk[k]))
			return -EINVAL;
	return 0;
}

/*
 * Is there a tree? 1; 0, none (the root word all zeros); -EUCLEAN, its
 * block and its height disagree: a height scribbled to 0 must not read
 * as a file without ranges (an UNMARK would say 0 over purged bytes).
 */
static int root_state(const struct vl_lv *t)
{
	struct vl_lv_root rt = *t->root;

	if (rt.block == 0 && rt.height == 0)
		return 0;
	if (!blk_ok(t, rt.block) || rt.height == 0 || rt.height > VL_LV_HMAX)
		return -EUCLEAN;
	return 1;
}

/* ---- descents and steps ----------------------------------------------------------- */

/* The last child whose key is x or less (child 0 if none: the leaf reached decides). */
static inline uint32_t child_for(const struct vl_lv_inner *in, uint32_t cnt, uint64_t x)
{
	uint32_t lo = 0, n = cnt;

	while (n > 1) {
		uint32_t half = n / 2;

		if (in->key[lo + half] <= x)
			lo += half;
		n -= half;
	}
	return lo;
}

/* Down to the leaf whose interval holds x: 0, or -EUCLEAN (also: no tree). */
static int descend(const struct vl_lv *t, uint64_t x, cur_t *c)
{
	struct vl_lv_root rt = *t->root;
	uint32_t n = rt.block, h = rt.height, lvl;

	if (x >= VL_LV_END)
		x = VL_LV_END - 1;
	if (h == 0 || h > VL_LV_HMAX)
		return -EUCLEAN;
	c->h = h;
	for (lvl = 0; lvl + 1 < h; lvl++) {
		uint32_t cnt = inner_ok(t, n, h - 1 - lvl), i;
		const struct vl_lv_inner *in = &t->b[n].in;

		if (cnt == 0)
			return -EUCLEAN;
		i = child_for(in, cnt, x);
		c->blk[lvl] = n;
		c->pos[lvl] = i;
		n = in->child[i];
	}
	c->blk[h - 1] = n;
	if (!leaf_read(t, n, &c->L) || x < c->L.lo || x >= c->L.hi)
		return -EUCLEAN;
	c->slot = 0;
	return 0;
}

/*
 * To the next leaf (dir > 0) or the previous one: 1, 0 if there is none,
 * -EUCLEAN. The leaf reached must meet this one's interval, hold a range
 * (only a root leaf may be empty), and keep the ranges in order.
 */
static int step_leaf(const struct vl_lv *t, cur_t *c, int dir)
{
	uint64_t meet = dir > 0 ? c->L.hi : c->L.lo;
	uint64_t edge = dir > 0 ? (c->L.n ? c->L.r[c->L.n - 1].end : c->L.lo)
				: (c->L.n ? c->L.r[0].start : c->L.hi);
	uint32_t h = c->h, n, cnt;
	int lvl;

	if (meet == (dir > 0 ? VL_LV_END : 0))
		return 0;
	for (lvl = (int)h - 2; lvl >= 0; lvl--) {
		cnt = inner_ok(t, c->blk[lvl], h - 1 - (uint32_t)lvl);
		if (cnt == 0 || c->pos[lvl] >= cnt)
			return -EUCLEAN;
		if (dir > 0 ? c->pos[lvl] + 1 < cnt : c->pos[lvl] > 0)
			break;
	}
	if (lvl < 0)
		return -EUCLEAN; /* the leaf says there is one, the inner nodes do not */
	c->pos[lvl] = dir > 0 ? c->pos[lvl] + 1 : c->pos[lvl] - 1;
	n = t->b[c->blk[lvl]].in.child[c->pos[lvl]];
	for (lvl++; lvl + 1 < (int)h; lvl++) {
		cnt = inner_ok(t, n, h - 1 - (uint32_t)lvl);
		if (cnt == 0)
			return -EUCLEAN;
		c->blk[lvl] = n;
		c->pos[lvl] = dir > 0 ? 0 : cnt - 1;
		n = t->b[n].in.child[c->pos[lvl]];
	}
	c->blk[h - 1] = n;
	if (!leaf_read(t, n, &c->L) || c->L.n == 0)
		return -EUCLEAN;
	if (dir > 0 ? (c->L.lo != meet || c->L.r[0].start < edge)
		    : (c->L.hi != meet || c->L.r[c->L.n - 1].end > edge))
		return -EUCLEAN;
	c->slot = dir > 0 ? 0 : c->L.n - 1;
	return 1;
}

static inline int at_range(const cur_t *c)
{
	return c->slot < c->L.n;
}

static inline const range_t *cur_range(const cur_t *c)
{
	return &c->L.r[c->slot];
}

/* Past the leaf's last range: on to the next leaf's first, if any. */
static int cur_norm(const struct vl_lv *t, cur_t *c)
{
	if (at_range(c))
		return 1;
	return step_leaf(t, c, 1);
}

/* The next range: 1, 0 at the end (the cursor past the last), -EUCLEAN. */
static int cur_fwd(const struct vl_lv *t, cur_t *c)
{
	if (at_range(c))
		c->slot++;
	return cur_norm(t, c);
}

/* The range before: 1, 0 none (the cursor unchanged), -EUCLEAN. */
static int cur_back(const struct vl_lv *t, cur_t *c)
{
	if (c->slot > 0) {
		c->slot--;
		return 1;
	}
	return step_leaf(t, c, -1);
}

/*
 * In the leaf whose interval holds x, at its first range that starts at x
 * or after (or past its last): 0, or -EUCLEAN. A change's first look
 * stands here, not at the next leaf's first range: the change at x is
 * this leaf's (an insert at x, a join with the range before), so that its
 * cursor serves the change too (replace_in_leaf, the hint of insert and
 * rewrite) without a second descent.
 */
static int seek_leaf(const struct vl_lv *t, uint64_t x, cur_t *c)
{
	int err = descend(t, x, c);

	if (err)
		return err;
	while (c->slot < c->L.n && c->L.r[c->slot].start < x)
		c->slot++;
	return 0;
}

/* At the first range that starts at x or after: 1, 0 none, -EUCLEAN. */
static int seek(const struct vl_lv *t, uint64_t x, cur_t *c)
{
	int err = seek_leaf(t, x, c);

	return err ? err : cur_norm(t, c);
}

/* ---- changes at a leaf --------------------------------------------------------------- */

/* The block below c->blk[lvl] at pos changed its least age and (new) key. */
static int inner_insert(const struct vl_lv *t, cur_t *c, int lvl, uint64_t key, uint32_t child,
			uint32_t mleft, uint32_t mnew, struct vl_lv_res *res,
			struct vl_lv_change *chg);

/* Leaf L (the cursor's, its ranges changed in c->L) written back, split if it overflows. */
static int leaf_commit(const struct vl_lv *t, cur_t *c, uint32_t from, struct vl_lv_res *res,
		       struct vl_lv_change *chg)
{
	uint32_t h = c->h, nb;
	leaf_t R;

	if (c->L.n <= VL_LV_CAP) {
		leaf_write(t, c->blk[h - 1], &c->L, from);
		fix_mins(t, c, (int)h - 1, leaf_min(&c->L));
		return 0;
	}
	/* a split: the right half into a new leaf, written before it is linked */
	nb = take(res, chg);
	if (nb == 0)
		return -ENOMEM; /* res_check said it was there */
	R.n = c->L.n - (VL_LV_CAP + 1) / 2;
	c->L.n -= R.n;
	memcpy(R.r, &c->L.r[c->L.n], R.n * sizeof(range_t));
	R.lo = R.r[0].start;
	R.hi = c->L.hi;
	c->L.hi = R.lo;
	leaf_write(t, nb, &R, 0);
	leaf_write(t, c->blk[h - 1], &c->L, 0);
	return inner_insert(t, c, (int)h - 2, R.lo, nb, leaf_min(&c->L), leaf_min(&R), res, chg);
}

static int inner_insert(const struct vl_lv *t, cur_t *c, int lvl, uint64_t key, uint32_t child,
			uint32_t mleft, uint32_t mnew, struct vl_lv_res *res,
			struct vl_lv_change *chg)
{
	struct vl_lv_inner *in, *nn;
	uint64_t keys[VL_LV_FAN + 1];
	uint32_t kids[VL_LV_FAN + 1], mins[VL_LV_FAN + 1], cnt, j, i, half, nb;

	if (lvl < 0) {
		/* a new root over the old one and its new sibling */
		uint32_t h = c->h;

		nb = take(res, chg);
		if (nb == 0 || h >= VL_LV_HMAX)
			return -ENOMEM;
		nn = &t->b[nb].in;
		memset(nn, 0, sizeof(*nn));
		STORED();
		nn->hdr = VL_LV_INNER | h << 8 | 2;
		STORED();
		nn->key[0] = 0;
		STORED();
		nn->key[1] = key;
		STORED();
		nn->child[0] = t->root->block;
		STORED();
		nn->child[1] = child;
		STORED();
		nn->minage[0] = mleft;
		STORED();
		nn->minage[1] = mnew;
		STORED();
		*t->root = (struct vl_lv_root){ .block = nb, .height = h + 1 };
		STORED();
		return 0;
	}
	in = &t->b[c->blk[lvl]].in;
	cnt = inner_count(in);
	j = c->pos[lvl] + 1;
	in->minage[c->pos[lvl]] = mleft;
	STORED();
	if (cnt < VL_LV_FAN) {
		memmove(&in->key[j + 1], &in->key[j], (cnt - j) * sizeof(in->key[0]));
		STORED();
		memmove(&in->child[j + 1], &in->child[j], (cnt - j) * sizeof(in->child[0]));
		STORED();
		memmove(&in->minage[j + 1], &in->minage[j], (cnt - j) * sizeof(in->minage[0]));
		STORED();
		in->key[j] = key;
		STORED();
		in->child[j] = child;
		STORED();
		in->minage[j] = mnew;
		STORED();
		inner_set_count(in, cnt + 1);
		STORED();
		fix_mins(t, c, lvl, inner_min(in));
		return 0;
	}
	/* a full inner node: split it, the new one written before it is linked */
	for (i = 0; i < cnt; i++) {
		uint32_t d = i < j ? i : i + 1;

		keys[d] = in->key[i];
		kids[d] = in->child[i];
		mins[d] = in->minage[i];
	}
	keys[j] = key;
	kids[j] = child;
	mins[j] = mnew;
	nb = take(res, chg);
	if (nb == 0)
		return -ENOMEM;
	half = (cnt + 1) / 2;
	nn = &t->b[nb].in;
	memset(nn, 0, sizeof(*nn));
	STORED();
	nn->hdr = (in->hdr & ~0xffu) | (cnt + 1 - half);
	STORED();
	memcpy(nn->key, &keys[half], (cnt + 1 - half) * sizeof(keys[0]));
	STORED();
	memcpy(nn->child, &kids[half], (cnt + 1 - half) * sizeof(kids[0]));
	STORED();
	memcpy(nn->minage, &mins[half], (cnt + 1 - half) * sizeof(mins[0]));
	STORED();
	memcpy(in->key, keys, half * sizeof(keys[0]));
	STORED();
	memcpy(in->child, kids, half * sizeof(kids[0]));
	STORED();
	memcpy(in->minage, mins, half * sizeof(mins[0]));
	STORED();
	inner_set_count(in, half);
	STORED();
	return inner_insert(t, c, lvl - 1, nn->key[0], nb, inner_min(in), inner_min(nn), res, chg);
}

/*
 * The cursor for a change at key x: hint, when the first look's cursor
 * is still good (nothing changed since) and its leaf holds x; else a
 * descent into *own. NULL and *err on a failed descent.
 */
static cur_t *cur_for(const struct vl_lv *t, cur_t *hint, uint64_t x, cur_t *own, int *err)
{
	if (hint != NULL && hint->L.lo <= x && x < hint->L.hi)
		return hint;
	*err = descend(t, x, own);
	return *err ? NULL : own;
}

/* Insert range r (its place free): 0, -ENOMEM (res_check first), -EUCLEAN. */
static int insert(const struct vl_lv *t, cur_t *hint, const range_t *r, struct vl_lv_res *res,
		  struct vl_lv_change *chg)
{
	cur_t own, *c;
	uint32_t i;
	int err = 0;

	err = root_state(t);
	if (err < 0)
		return err;
	if (err == 0) {
		uint32_t nb = take(res, chg);

		if (nb == 0)
			return -ENOMEM;
		own.L.lo = 0;
		own.L.hi = VL_LV_END;
		own.L.n = 1;
		own.L.r[0] = *r;
		leaf_write(t, nb, &own.L, 0);
		*t->root = (struct vl_lv_root){ .block = nb, .height = 1 };
		STORED();
		return 0;
	}
	c = cur_for(t, hint, r->start, &own, &err);
	if (c == NULL)
		return err;
	for (i = 0; i < c->L.n && c->L.r[i].start < r->start; i++)
		;
	if ((i > 0 && c->L.r[i - 1].end > r->start) || (i < c->L.n && c->L.r[i].start < r->end))
		return -EUCLEAN; /* the first look saw this place free */
	memmove(&c->L.r[i + 1], &c->L.r[i], (c->L.n - i) * sizeof(range_t));
	c->L.r[i] = *r;
	c->L.n++;
	return leaf_commit(t, c, i, res, chg);
}

static int inner_underflow(const struct vl_lv *t, cur_t *c, int lvl, struct vl_lv_change *chg);

/* Take entry j out of inner node in. */
static void inner_remove(struct vl_lv_inner *in, uint32_t j)
{
	uint32_t cnt = inner_count(in);

	memmove(&in->key[j], &in->key[j + 1], (cnt - j - 1) * sizeof(in->key[0]));
	STORED();
	memmove(&in->child[j], &in->child[j + 1], (cnt - j - 1) * sizeof(in->child[0]));
	STORED();
	memmove(&in->minage[j], &in->minage[j + 1], (cnt - j - 1) * sizeof(in->minage[0]));
	STORED();
	inner_set_count(in, cnt - 1);
	STORED();
}

/*
 * The cursor's leaf, short of ranges after a removal (c->L, not written
 * yet): borrow one from a sibling, or merge with it.
 */
static int leaf_underflow(const struct vl_lv *t, cur_t *c, struct vl_lv_change *chg)
{
	int lvl = (int)c->h - 2;
	uint32_t P = c->blk[lvl], i = c->pos[lvl], cnt = inner_ok(t, P, 1), sb, lb, rb;
	struct vl_lv_inner *in = &t->b[P].in;
	leaf_t S, *lft, *rgt;
	int left_sib = i > 0;

	if (cnt < 2 || i >= cnt)
		return -EUCLEAN;
	sb = in->child[left_sib ? i - 1 : i + 1];
	if (!leaf_read(t, sb, &S) || (left_sib ? S.hi != c->L.lo : S.lo != c->L.hi))
		return -EUCLEAN;
	lft = left_sib ? &S : &c->L;
	rgt = left_sib ? &c->L : &S;
	lb = left_sib ? sb : c->blk[c->h - 1];
	rb = left_sib ? c->blk[c->h - 1] : sb;
	if (S.n + c->L.n >= 2 * VL_LV_MIN) {
		/* even the two; the receiving leaf written first (a kill leaves a range twice, not none) */
		uint32_t nl = (lft->n + rgt->n) / 2, k;
		int to_right = lft->n > nl;

		if (to_right) {
			k = lft->n - nl;
			memmove(&rgt->r[k], &rgt->r[0], rgt->n * sizeof(range_t));
			memcpy(&rgt->r[0], &lft->r[nl], k * sizeof(range_t));
			rgt->n += k;
		} else {
			k = nl - lft->n;
			memcpy(&lft->r[lft->n], &rgt->r[0], k * sizeof(range_t));
			memmove(&rgt->r[0], &rgt->r[k], (rgt->n - k) * sizeof(range_t));
			rgt->n -= k;
		}
		lft->n = nl;
		rgt->lo = rgt->r[0].start;
		lft->hi = rgt->lo;
		leaf_write(t, to_right ? rb : lb, to_right ? rgt : lft, 0);
		leaf_write(t, to_right ? lb : rb, to_right ? lft : rgt, 0);
		in->key[left_sib ? i : i + 1] = rgt->lo;
		STORED();
		in->minage[left_sib ? i - 1 : i] = leaf_min(lft);
		STORED();
		in->minage[left_sib ? i : i + 1] = leaf_min(rgt);
		STORED();
		fix_mins(t, c, lvl, inner_min(in));
		return 0;
	}
	/* merge into the left one; the right one let go */
	memcpy(&lft->r[lft->n], rgt->r, rgt->n * sizeof(range_t));
	lft->n += rgt->n;
	lft->hi = rgt->hi;
	leaf_write(t, lb, lft, 0);
	in->minage[left_sib ? i - 1 : i] = leaf_min(lft);
	STORED();
	inner_remove(in, left_sib ? i : i + 1);
	let_go(t, rb, chg);
	return inner_underflow(t, c, lvl, chg);
}

/* Inner node c->blk[lvl] lost a child: mend its fill, carry its least age up. */
static int inner_underflow(const struct vl_lv *t, cur_t *c, int lvl, struct vl_lv_change *chg)
{
	struct vl_lv_inner *in = &t->b[c->blk[lvl]].in, *sn, *lft, *rgt;
	uint32_t cnt = inner_count(in), G, i, gcnt, sb;
	int left_sib;

	if (lvl == 0) {
		if (cnt == 1) {
			uint32_t old = c->blk[0];

			*t->root = (struct vl_lv_root){ .block = in->child[0],
							.height = c->h - 1 };
			STORED();
			let_go(t, old, chg);
		}
		return 0;
	}
	if (cnt >= VL_LV_FAN_MIN) {
		fix_mins(t, c, lvl, inner_min(in));
		return 0;
	}
	G = c->blk[lvl - 1];
	i = c->pos[lvl - 1];
	gcnt = inner_ok(t, G, c->h - lvl);
	if (gcnt < 2 || i >= gcnt)
		return -EUCLEAN;
	left_sib = i > 0;
	sb = t->b[G].in.child[left_sib ? i - 1 : i + 1];
	if (inner_ok(t, sb, c->h - 1 - (uint32_t)lvl) == 0)
		return -EUCLEAN;
	sn = &t->b[sb].in;
	lft = left_sib ? sn : in;
	rgt = left_sib ? in : sn;
	if (inner_count(sn) > VL_LV_FAN_MIN) {
		uint32_t ln = inner_count(lft), rn = inner_count(rgt);

		if (left_sib) {
			memmove(&rgt->key[1], &rgt->key[0], rn * sizeof(rgt->key[0]));
			STORED();
			memmove(&rgt->child[1], &rgt->child[0], rn * sizeof(rgt->child[0]));
			STORED();
			memmove(&rgt->minage[1], &rgt->minage[0], rn * sizeof(rgt->minage[0]));
			STORED();
			rgt->key[0] = lft->key[ln - 1];
			STORED();
			rgt->child[0] = lft->child[ln - 1];
			STORED();
			rgt->minage[0] = lft->minage[ln - 1];
			STORED();
			inner_set_count(rgt, rn + 1);
			STORED();
			inner_set_count(lft, ln - 1);
			STORED();
		} else {
			lft->key[ln] = rgt->key[0];
			STORED();
			lft->child[ln] = rgt->child[0];
			STORED();
			lft->minage[ln] = rgt->minage[0];
			STORED();
			inner_set_count(lft, ln + 1);
			STORED();
			inner_remove(rgt, 0);
		}
		t->b[G].in.key[left_sib ? i : i + 1] = rgt->key[0];
		STORED();
		t->b[G].in.minage[left_sib ? i - 1 : i] = inner_min(lft);
		STORED();
		t->b[G].in.minage[left_sib ? i : i + 1] = inner_min(rgt);
		STORED();
		fix_mins(t, c, lvl - 1, inner_min(&t->b[G].in));
		return 0;
	}
	{
		uint32_t ln = inner_count(lft), rn = inner_count(rgt);

		memcpy(&lft->key[ln], rgt->key, rn * sizeof(rgt->key[0]));
		STORED();
		memcpy(&lft->child[ln], rgt->child, rn * sizeof(rgt->child[0]));
		STORED();
		memcpy(&lft->minage[ln], rgt->minage, rn * sizeof(rgt->minage[0]));
		STORED();
		inner_set_count(lft, ln + rn);
		STORED();
		t->b[G].in.minage[left_sib ? i - 1 : i] = inner_min(lft);
		STORED();
		inner_remove(&t->b[G].in, left_sib ? i : i + 1);
		let_go(t, left_sib ? c->blk[lvl] : sb, chg);
	}
	return inner_underflow(t, c, lvl - 1, chg);
}

/*
 * The cursor's leaf, its ranges changed in c->L from range `from` on (no
 * more than it holds): written, or let go if it was the root's last, or
 * evened with a sibling if it fell short.
 */
static int leaf_done(const struct vl_lv *t, cur_t *c, uint32_t from, struct vl_lv_change *chg)
{
	if (c->h == 1) {
		if (c->L.n == 0) {
			*t->root = (struct vl_lv_root){ 0, 0 };
			STORED();
			let_go(t, c->blk[0], chg);
			return 0;
		}
		leaf_write(t, c->blk[0], &c->L, from);
		return 0;
	}
	if (c->L.n >= VL_LV_MIN) {
		leaf_write(t, c->blk[c->h - 1], &c->L, from);
		fix_mins(t, c, (int)c->h - 1, leaf_min(&c->L));
		return 0;
	}
	return leaf_underflow(t, c, chg);
}

/* Take the cursor's range out. */
static int remove_at(const struct vl_lv *t, cur_t *c, struct vl_lv_change *chg)
{
	memmove(&c->L.r[c->slot], &c->L.r[c->slot + 1],
		(c->L.n - c->slot - 1) * sizeof(range_t));
	c->L.n--;
	return leaf_done(t, c, c->slot, chg);
}

/*
 * The ranges starting in [fin.start, fin.end), `want` of them (what the
 * first look found), replaced by fin across leaves. fin goes in first,
 * over those of its own leaf, and those of the leaves after it come out
 * after, a leaf at a time: a writer killed between leaves fin overlapping
 * ranges it covers (the repair joins them, purged wins), never a byte in
 * no range, as taking them out before writing fin did. Fin's leaf may
 * fall short of ranges meanwhile (a fill, not a check): mended last.
 */
static int join_across(const struct vl_lv *t, cur_t *hint, const range_t *fin, uint64_t want,
		       struct vl_lv_res *res, struct vl_lv_change *chg)
{
	cur_t own, *c, d;
	uint64_t got, k;
	uint32_t i, j;
	int err = 0;

	c = cur_for(t, hint, fin->start, &own, &err);
	if (c == NULL)
		return err;
	for (i = 0; i < c->L.n && c->L.r[i].start < fin->start; i++)
		;
	for (j = i; j < c->L.n && c->L.r[j].start < fin->end; j++)
		;
	got = j - i;
	memmove(&c->L.r[i + 1], &c->L.r[j], (c->L.n - j) * sizeof(range_t));
	c->L.r[i] = *fin;
	c->L.n = c->L.n - (j - i) + 1;
	err = leaf_commit(t, c, i, res, chg);
	for (k = 0; err == 0 && got < want && k < want; k++) {
		err = descend(t, fin->start, &d);
		if (err || d.L.hi >= fin->end)
			break;
		err = descend(t, d.L.hi, &d);
		if (err)
			break;
		for (j = 0; j < d.L.n && d.L.r[j].start < fin->end; j++)
			;
		if (j == 0)
			break;
		got += j;
		memmove(&d.L.r[0], &d.L.r[j], (d.L.n - j) * sizeof(range_t));
		d.L.n -= j;
		err = leaf_done(t, &d, 0, chg);
	}
	if (err)
		return err;
	if (got != want)
		return -EUCLEAN; /* not what the first look saw */
	err = descend(t, fin->start, &d);
	if (err == 0 && d.h > 1 && d.L.n < VL_LV_MIN)
		err = leaf_underflow(t, &d, chg);
	return err;
}

/*
 * The ranges of the cursor's leaf that start in [lo, hi], exactly `want`
 * of them (what the first look found: else 0, the slow way), replaced by
 * the `nput` ranges put[]: one change of one leaf, no other descent. 1 if
 * done (or *err), 0 if the run is not all in this leaf or would not fit.
 */
static int replace_in_leaf(const struct vl_lv *t, cur_t *c, uint64_t lo, uint64_t hi,
			   uint64_t want, const range_t *put, uint32_t nput,
			   struct vl_lv_change *chg, int *err)
{
	uint32_t i, j;

	if (c == NULL || lo < c->L.lo || hi >= c->L.hi)
		return 0;
	for (i = 0; i < c->L.n && c->L.r[i].start < lo; i++)
		;
	for (j = i; j < c->L.n && c->L.r[j].start <= hi; j++)
		;
	if (j - i != want || c->L.n - want + nput > VL_LV_CAP)
		return 0;
	memmove(&c->L.r[i + nput], &c->L.r[j], (c->L.n - j) * sizeof(range_t));
	memcpy(&c->L.r[i], put, nput * sizeof(range_t));
	c->L.n -= j - i - nput;
	*err = leaf_done(t, c, i, chg);
	return 1;
}

/* Take out the first range starting at x or after, which must start by `most`. */
static int remove_from(const struct vl_lv *t, uint64_t x, uint64_t most, range_t *got,
		       struct vl_lv_change *chg)
{
	cur_t c;
	int err = seek(t, x, &c);

	if (err <= 0)
		return err == 0 ? -EUCLEAN : err;
	if (cur_range(&c)->start > most)
		return -EUCLEAN;
	*got = *cur_range(&c);
	return remove_at(t, &c, chg);
}

/*
 * The range starting at `at` becomes r: in place while r's start stays in
 * its leaf's interval, else taken out and inserted again.
 */
static int rewrite(const struct vl_lv *t, cur_t *hint, uint64_t at, const range_t *r,
		   struct vl_lv_res *res, struct vl_lv_change *chg)
{
	cur_t own, *c;
	uint32_t i;
	int err = 0;

	c = cur_for(t, hint, at, &own, &err);
	if (c == NULL)
		return err;
	for (i = 0; i < c->L.n && c->L.r[i].start < at; i++)
		;
	if (i == c->L.n || c->L.r[i].start != at)
		return -EUCLEAN;
	if (r->start >= c->L.lo && r->start < c->L.hi) {
		c->L.r[i] = *r;
		return leaf_commit(t, c, i, res, chg);
	}
	c->slot = i;
	err = remove_at(t, c, chg);
	return err ? err : insert(t, NULL, r, res, chg);
}

/* ---- the rules of DESIGN 3 --------------------------------------------------------------- */

static void add_bytes(int64_t *d, int sign, uint64_t len)
{
	*d = (int64_t)(sign > 0 ? (uint64_t)*d + len : (uint64_t)*d - len);
}

static void account(struct vl_lv_change *chg, const range_t *r, int sign)
{
	uint64_t len = r->end - r->start;

	if (r->purged) {
		add_bytes(&chg->d_pbytes, sign, len);
		chg->d_purged += sign;
	} else {
		add_bytes(&chg->d_vbytes, sign, len);
	}
	chg->d_ranges += sign;
}

/*
 * The range k (1 or 2) before the cursor's place: 1 and *out, 0 none,
 * -EUCLEAN. The cursor stays; it is copied only to step to another leaf.
 */
static int range_before(const struct vl_lv *t, const cur_t *c, uint32_t k, range_t *out)
{
	cur_t a;
	int r = 1;

	if (c->slot >= k) {
		*out = c->L.r[c->slot - k];
		return 1;
	}
	a = *c;
	while (k-- > 0 && r == 1)
		r = cur_back(t, &a);
	if (r == 1)
		*out = *cur_range(&a);
	return r;
}

/*
 * The ranges from the cursor on that start before e, in order, each
 * handed to `one` (at most `bound`); *after: the range after them, if
 * any (1), else 0. The cursor stays where it is; a copy of it steps to
 * other leaves. -EUCLEAN if a leaf or a step fails its check.
 *
 * past: the least key a range must start at or after to be of no use
 * (re-read at each leaf's end): the next leaf is not read when this one's
 * hi is past it, *after then left unfilled. That decides on this leaf's
 * hi, under its line 0's check: the next leaf's ranges start at its lo,
 * which must be this hi (step_leaf), and a next leaf that says otherwise
 * fails its own check when it is read; a leaf not read decides nothing.
 */
#define RUN_FROM(t, c, e, past, bound, after, has_after, x, body)               \
	do {                                                                    \
		cur_t far_, *w_ = (c);                                          \
		uint32_t j_ = w_->slot;                                         \
		uint64_t n_ = 0;                                                \
		int r_;                                                         \
		for (;;) {                                                      \
			if (j_ >= w_->L.n) {                                    \
				if (w_->L.hi > (past))                          \
					break;                                  \
				if (w_ == (c)) {                                \
					far_ = *(c);                            \
					w_ = &far_;                             \
				}                                               \
				w_->slot = j_;                                  \
				r_ = cur_norm((t), w_);                         \
				if (r_ < 0)                                     \
					return r_;                              \
				if (r_ == 0)                                    \
					break;                                  \
				j_ = w_->slot;                                  \
			}                                                       \
			x = &w_->L.r[j_];                                       \
			if (x->start >= (e)) {                                  \
				*(after) = *x;                                  \
				*(has_after) = 1;                               \
				break;                                          \
			}                                                       \
			if (++n_ > (bound))                                     \
				return -EUCLEAN;                                \
			body;                                                   \
			j_++;                                                   \
		}                                                               \
	} while (0)

/* What a merge's first look found. */
struct run {
	range_t left, first, last, right;
	int has_left, has_first, has_right;
	uint64_t k; /* overlapped ranges */
	int purged;
};

/*
 * The first look of a merge of [s, e): the ranges it overlaps and the
 * neighbours either side, each checked. *c: seek_leaf's place for s,
 * where a change that finds nothing else changed starts (the hint of
 * insert and rewrite).
 */
static int merge_look(const struct vl_lv *t, uint64_t s, uint64_t e, struct run *m, cur_t *c,
		      struct vl_lv_change *chg)
{
	uint64_t bound = (uint64_t)t->cap * VL_LV_CAP;
	const range_t *x;
	range_t b;
	int r = seek_leaf(t, s, c);

	if (r < 0)
		return r;
	r = range_before(t, c, 1, &b);
	if (r < 0)
		return r;
	if (r == 1 && b.end > s) {
		m->first = m->last = b;
		m->has_first = 1;
		m->k = 1;
		m->purged |= b.purged;
		account(chg, &b, -1);
		r = range_before(t, c, 2, &b);
		if (r < 0)
			return r;
	}
	if (r == 1) {
		m->left = b;
		m->has_left = 1;
	}
	/* what starts after both e and the run's end neither overlaps nor touches */
	RUN_FROM(t, c, e, m->has_first && m->last.end > e ? m->last.end : e, bound, &m->right,
		 &m->has_right, x, {
		if (!m->has_first)
			m->first = *x;
		m->has_first = 1;
		m->last = *x;
		m->k++;
		m->purged |= x->purged;
		account(chg, x, -1);
	});
	return 0;
}

/*
 * Join [s, e) (purged p, age `age`) with what it overlaps and touches, as
 * DESIGN 3's MARK does. mark: a range holding [s, e) already changes
 * nothing, and joining a purged range punches (mark_punch's rule).
 */
static int merge_in(const struct vl_lv *t, uint64_t s, uint64_t e, int p, uint32_t age, int mark,
		    struct vl_lv_res *res, struct vl_lv_change *chg)
{
	struct run m;
	range_t fin;
	uint64_t ms, me, ndel;
	cur_t c, *hint = NULL;
	int lj, rj, keep_first, err;

	memset(&m, 0, sizeof(m));
	m.purged = p;
	err = root_state(t);
	if (err < 0)
		return err;
	if (err == 1) {
		err = merge_look(t, s, e, &m, &c, chg);
		if (err)
			return err;
		hint = &c;
	}
	if (mark && m.k == 1 && m.first.start <= s && e <= m.first.end) {
		memset(chg, 0, sizeof(*chg)); /* already volatile: nothing changes, not the age */
		return 0;
	}
	ms = m.has_first && m.first.start < s ? m.first.start : s;
	me = m.has_first && m.last.end > e ? m.last.end : e;
	lj = m.has_left && m.left.end == ms && m.left.purged == m.purged;
	rj = m.has_right && m.right.start == me && m.right.purged == m.purged;
	keep_first = !lj && m.has_first && m.first.start == ms;
	if (!lj && !keep_first) {
		err = res_check(t, res);
		if (err)
			return err;
	}
	fin.start = lj ? m.left.start : ms;
	fin.end = rj ? m.right.end : me;
	fin.purged = m.purged;
	fin.age = age;
	if (mark && m.purged) {
		chg->punch_start = !m.first.purged && m.first.start < s ? m.first.start : s;
		chg->punch_end = !m.last.purged && m.last.end > e ? m.last.end : e;
	}
	if (lj)
		account(chg, &m.left, -1);
	if (rj)
		account(chg, &m.right, -1);
	account(chg, &fin, +1);

	/* the changes: every range of the run but the one kept, out; then the kept one */
	ndel = m.k - (uint64_t)keep_first + (uint64_t)rj;
	if (ndel > 0 && (lj || keep_first) &&
	    replace_in_leaf(t, hint, fin.start, rj ? m.right.start : m.last.start, ndel + 1, &fin,
			    1, chg, &err))
		return err;
	if (ndel > 0)
		return join_across(t, hint, &fin, ndel + (uint64_t)(lj || keep_first), res, chg);
	if (lj || keep_first)
		return rewrite(t, hint, fin.start, &fin, res, chg);
	return insert(t, hint, &fin, res, chg);
}

static int args_ok(uint64_t s, uint64_t e)
{
	return s < e && e <= VL_LV_END;
}

int vl_lv_mark(const struct vl_lv *t, uint64_t s, uint64_t e, uint32_t age,
	       struct vl_lv_res *res, struct vl_lv_change *c)
{
	memset(c, 0, sizeof(*c));
	if (!args_ok(s, e))
		return -EINVAL;
	return merge_in(t, s, e, 0, age, 1, res, c);
}

int vl_lv_absorb(const struct vl_lv *t, uint64_t s, uint64_t e, int purged, uint32_t age,
		 struct vl_lv_res *res, struct vl_lv_change *c)
{
	memset(c, 0, sizeof(*c));
	if (!args_ok(s, e))
		return -EINVAL;
	return merge_in(t, s, e, !!purged, age, 0, res, c);
}

/* UNMARK's first look: the ranges [s, e) meets, how each is cut. */
struct cut {
	range_t a;      /* the one starting before s, if it meets [s, e) */
	range_t z;      /* the last, if it ends after e (and is not a) */
	range_t after;  /* unused: the range after them */
	int has_a, has_z, has_after;
	uint64_t ndel;  /* ranges wholly inside [s, e) */
};

static void cut_off(struct vl_lv_change *chg, const range_t *r, uint64_t s, uint64_t e)
{
	uint64_t lo = r->start > s ? r->start : s, hi = r->end < e ? r->end : e;

	chg->was_purged |= r->purged;
	add_bytes(r->purged ? &chg->d_pbytes : &chg->d_vbytes, -1, hi - lo);
}

static int unmark_look(const struct vl_lv *t, uint64_t s, uint64_t e, struct cut *u, cur_t *c,
		       struct vl_lv_change *chg)
{
	uint64_t bound = (uint64_t)t->cap * VL_LV_CAP;
	const range_t *x;
	int r = seek_leaf(t, s, c);

	if (r < 0)
		return r;
	r = range_before(t, c, 1, &u->a);
	if (r < 0)
		return r;
	if (r == 1 && u->a.end > s) {
		u->has_a = 1;
		cut_off(chg, &u->a, s, e);
	}
	/* UNMARK cuts what starts before e; the range after is of no use */
	RUN_FROM(t, c, e, e - 1, bound, &u->after, &u->has_after, x, {
		cut_off(chg, x, s, e);
		if (x->end > e) {
			u->z = *x;
			u->has_z = 1;
		} else {
			account(chg, x, -1);
			/* the bytes went out by account: cut_off's share put back */
			add_bytes(x->purged ? &chg->d_pbytes : &chg->d_vbytes, +1,
				  x->end - x->start);
			u->ndel++;
		}
	});
	return 0;
}

int vl_lv_unmark(const struct vl_lv *t, uint64_t s, uint64_t e, struct vl_lv_res *res,
		 struct vl_lv_change *c)
{
	struct cut u;
	range_t r, got;
	uint64_t i, x;
	cur_t cur;
	int err;

	memset(c, 0, sizeof(*c));
	memset(&u, 0, sizeof(u));
	if (!args_ok(s, e))
		return -EINVAL;
	err = root_state(t);
	if (err <= 0)
		return err;
	err = unmark_look(t, s, e, &u, &cur, c);
	if (err)
		return err;
	if (u.has_a && u.a.end > e) {
		/* a split: the right part a new range of the same age and state */
		err = res_check(t, res);
		if (err)
			return err;
		c->d_ranges++;
		c->d_purged += u.a.purged;
		{
			range_t put[2] = { u.a, u.a };

			put[0].end = s;
			put[1].start = e;
			if (e < cur.L.hi &&
			    replace_in_leaf(t, &cur, u.a.start, u.a.start, 1, put, 2, c, &err))
				return err;
		}
		r = u.a;
		r.end = s;
		err = rewrite(t, &cur, u.a.start, &r, res, c);
		if (err)
			return err;
		r = u.a;
		r.start = e;
		return insert(t, &cur, &r, res, c);
	}
	if (u.has_z) {
		err = res_check(t, res);
		if (err)
			return err;
	}
	/* the common case, one range out and nothing cut: where the look stands */
	if (!u.has_a && !u.has_z && u.ndel == 1 && at_range(&cur))
		return remove_at(t, &cur, c);
	/* cuts and removals all in the look's leaf, the cut right part's start in it too */
	{
		range_t put[2];
		uint32_t np = 0;

		if (u.has_a) {
			put[np] = u.a;
			put[np++].end = s;
		}
		if (u.has_z) {
			put[np] = u.z;
			put[np++].start = e;
		}
		if ((u.has_a || u.has_z) && (!u.has_z || e < cur.L.hi) &&
		    replace_in_leaf(t, &cur, u.has_a ? u.a.start : s, u.has_z ? u.z.start : e - 1,
				    u.ndel + np, put, np, c, &err))
			return err;
	}
	if (u.has_a) {
		r = u.a;
		r.end = s;
		err = rewrite(t, &cur, u.a.start, &r, res, c);
		if (err)
			return err;
	}
	for (i = 0, x = s; i < u.ndel; i++) {
		err = remove_from(t, x, e - 1, &got, c);
		if (err)
			return err;
		x = got.start;
	}
	if (u.has_z) {
		r = u.z;
		r.start = e;
		return rewrite(t, u.ndel ? NULL : &cur, u.z.start, &r, res, c);
	}
	return 0;
}

/* ---- oldest first ----------------------------------------------------------------------- */

/* The oldest unpurged range's leaf, by the least ages the inner nodes keep. */
static int oldest_at(const struct vl_lv *t, cur_t *c, uint32_t *slot)
{
	struct vl_lv_root rt = *t->root;
	uint32_t n = rt.block, h = rt.height, lvl, want = VL_LV_NOAGE, best, i;
	int r = root_state(t);

	if (r <= 0)
		return r;
	c->h = h;
	for (lvl = 0; lvl + 1 < h; lvl++) {
		uint32_t cnt = inner_ok(t, n, h - 1 - lvl);
		const struct vl_lv_inner *in = &t->b[n].in;

		if (cnt == 0)
			return -EUCLEAN;
		for (i = 1, best = 0; i < cnt; i++)
			if (in->minage[i] < in->minage[best])
				best = i;
		/* what the parent recorded for this node must be what it holds */
		if (lvl > 0 && in->minage[best] != want)
			return -EUCLEAN;
		want = in->minage[best];
		c->blk[lvl] = n;
		c->pos[lvl] = best;
		n = in->child[best];
	}
	c->blk[h - 1] = n;
	if (!leaf_read(t, n, &c->L))
		return -EUCLEAN;
	for (i = 0, best = VL_LV_CAP; i < c->L.n; i++)
		if (!c->L.r[i].purged && (best == VL_LV_CAP || c->L.r[i].age < c->L.r[best].age))
			best = i;
	if (h > 1 && (best == VL_LV_CAP ? VL_LV_NOAGE : c->L.r[best].age) != want)
		return -EUCLEAN;
	if (best == VL_LV_CAP)
		return 0;
	*slot = best;
	return 1;
}

int vl_lv_oldest(const struct vl_lv *t, struct vl_lv_range *out)
{
	cur_t c;
	uint32_t slot;
	int r = oldest_at(t, &c, &slot);

	if (r == 1)
		*out = c.L.r[slot];
	return r;
}

int vl_lv_purge(const struct vl_lv *t, uint64_t start, struct vl_lv_change *c)
{
	cur_t cur;
	range_t n;
	int err;

	memset(c, 0, sizeof(*c));
	err = descend(t, start, &cur);
	if (err)
		return err;
	while (cur.slot < cur.L.n && cur.L.r[cur.slot].start < start)
		cur.slot++;
	if (cur.slot == cur.L.n || cur.L.r[cur.slot].start != start)
		return -EUCLEAN;
	n = cur.L.r[cur.slot];
	if (n.purged)
		return 0;
	err = merge_in(t, n.start, n.end, 1, n.age, 0, NULL, c);
	if (err == 0) {
		c->punch_start = n.start;
		c->punch_end = n.end;
	}
	return err;
}

int vl_lv_restamp(const struct vl_lv *t, uint32_t floor)
{
	uint64_t bound = (uint64_t)t->cap * VL_LV_CAP;
	int done = 0;

	while (bound-- > 0) {
		cur_t c;
		uint32_t slot;
		int r = oldest_at(t, &c, &slot);

		if (r <= 0)
			return r < 0 ? r : done;
		if (c.L.r[slot].age >= floor)
			return done;
		c.L.r[slot].age = floor;
		leaf_write(t, c.blk[c.h - 1], &c.L, slot);
		fix_mins(t, &c, (int)c.h - 1, leaf_min(&c.L));
		done++;
	}
	return -EUCLEAN;
}

/* ---- walks, and the changes that take many ranges out --------------------------------- */

void vl_lv_walk_init(struct vl_lv_walk *w, const struct vl_lv *t)
{
	w->t = t;
	w->left = (uint64_t)t->cap * VL_LV_CAP;
	w->state = 0;
}

int vl_lv_walk_next(struct vl_lv_walk *w, struct vl_lv_range *out)
{
	int r;

	if (w->state == 2 || w->left == 0)
		return 0;
	if (w->state == 0) {
		w->state = 1;
		r = root_state(w->t);
		if (r <= 0) {
			w->state = 2;
			return r;
		}
		r = seek(w->t, 0, &w->cur);
	} else {
		r = cur_fwd(w->t, &w->cur);
	}
	if (r <= 0) {
		w->state = 2;
		return r;
	}
	w->left--;
	*out = *cur_range(&w->cur);
	return 1;
}

/* Every range checked and counted out of *chg: the number of ranges, or -EUCLEAN. */
static int64_t look_all(const struct vl_lv *t, struct vl_lv_change *chg, int unpurged_only)
{
	struct vl_lv_walk w;
	range_t r;
	int64_t n = 0;
	int got;

	vl_lv_walk_init(&w, t);
	while ((got = vl_lv_walk_next(&w, &r)) == 1) {
		if (unpurged_only && r.purged)
			continue;
		account(chg, &r, -1);
		n++;
	}
	if (got < 0 || (w.left == 0 && w.state != 2))
		return -EUCLEAN;
	return n;
}

int vl_lv_clear(const struct vl_lv *t, struct vl_lv_change *c)
{
	struct vl_lv_root rt = *t->root;
	uint32_t stack[VL_LV_HMAX], at[VL_LV_HMAX], d = 0;
	uint64_t bound = t->cap;

	memset(c, 0, sizeof(*c));
	if (look_all(t, c, 0) < 0)
		return -EUCLEAN;
	if (root_state(t) == 0)
		return 0;
	/* unlinked first: a writer killed below leaves blocks lost, never reachable half freed */
	*t->root = (struct vl_lv_root){ 0, 0 };
	STORED();
	stack[0] = rt.block;
	at[0] = 0;
	/* the walk above went through every child of every inner node here */
	while (bound-- > 0) {
		uint32_t b = stack[d];

		if (d + 1 < rt.height && at[d] < inner_count(&t->b[b].in)) {
			stack[d + 1] = t->b[b].in.child[at[d]++];
			at[++d] = 0;
			continue;
		}
		let_go(t, b, c);
		if (d == 0)
			return 0;
		d--;
	}
	return -EUCLEAN;
}

int vl_lv_forget_unpurged(const struct vl_lv *t, struct vl_lv_change *c)
{
	int64_t n;
	uint64_t x = 0;
	int err;

	memset(c, 0, sizeof(*c));
	n = look_all(t, c, 1);
	if (n < 0)
		return -EUCLEAN;
	while (n-- > 0) {
		cur_t cur;
		int r = seek(t, x, &cur);

		while (r == 1 && cur_range(&cur)->purged)
			r = cur_fwd(t, &cur);
		if (r <= 0)
			return -EUCLEAN;
		x = cur_range(&cur)->start;
		err = remove_at(t, &cur, c);
		if (err)
			return err;
	}
	return 0;
}

int vl_lv_any_in(const struct vl_lv *t, uint64_t s, uint64_t e)
{
	cur_t c, a;
	int r;

	r = root_state(t);
	if (r <= 0)
		return r;
	r = seek(t, s, &c);
	if (r < 0)
		return r;
	if (r == 1 && cur_range(&c)->start < e)
		return 1;
	a = c;
	r = cur_back(t, &a);
	if (r < 0)
		return r;
	return r == 1 && cur_range(&a)->end > s;
}

/* Count the tree's blocks depth first, each leaf checked. */
static int count_below(const struct vl_lv *t, uint32_t b, uint32_t level, uint32_t *leaves,
		       uint32_t *inner, uint64_t *ranges)
{
	leaf_t L;
	uint32_t cnt, i;

	if (level == 0) {
		if (!leaf_read(t, b, &L))
			return -EUCLEAN;
		++*leaves;
		*ranges += L.n;
		return 0;
	}
	cnt = inner_ok(t, b, level);
	if (cnt == 0 || ++*inner > t->cap)
		return -EUCLEAN;
	for (i = 0; i < cnt; i++)
		if (count_below(t, t->b[b].in.child[i], level - 1, leaves, inner, ranges))
			return -EUCLEAN;
	return 0;
}

int vl_lv_count(const struct vl_lv *t, uint32_t *leaves, uint32_t *inner, uint64_t *ranges)
{
	struct vl_lv_root rt = *t->root;

	*leaves = *inner = 0;
	*ranges = 0;
	if (root_state(t) <= 0)
		return root_state(t);
	return count_below(t, rt.block, rt.height - 1, leaves, inner, ranges);
}

/* ---- the repair (leaves.h "Kills"; doc/format10-plan.md step 3) ------------------------ */

/* Ranges read and not yet written out: joined, in order (a window, never the whole file). */
#define PEND_MAX 64

struct repair {
	const struct vl_lv *t;
	uint32_t *blk;   /* the file's blocks: leaves first, sorted by lo */
	uint32_t nleaf;  /* leaves among them */
	uint32_t out;    /* leaves written out */
	range_t pend[PEND_MAX];
	uint32_t np;
	leaf_t prev, cur; /* the last two output leaves, written once a third begins */
	int has_prev;
};

/* Does line k of block b check as this file's? */
static int line_sound(const struct vl_lv *t, uint32_t b, unsigned k)
{
	return t->b[b].line[k].check == line_sum(&t->b[b].line[k], b, t->file, k);
}

/* Is line 0 a sound leaf header of this file? */
static int header_sound(const struct vl_lv *t, uint32_t b)
{
	const struct vl_lv_line *l = &t->b[b].line[0];

	return line_sound(t, b, 0) && (l->age[0] & 0xffff0000u) == VL_LV_LEAF &&
	       l->start[0] < l->end[0] && l->end[0] <= VL_LV_END;
}

/*
 * Was block b a leaf of this file? Its header, or any line of it, checks
 * keyed by its block and file: a block that held something else passes
 * one by chance once in 2^32.
 */
static int leafish(const struct vl_lv *t, uint32_t b)
{
	unsigned k;

	for (k = 0; k < VL_LV_LINES; k++)
		if (line_sound(t, b, k))
			return 1;
	return 0;
}

static uint32_t leaf_salvage(const struct vl_lv *t, uint32_t b, range_t *out);

/* The lower bound of block b's ranges, as the sort and the window take it. */
static uint64_t leaf_key(const struct vl_lv *t, uint32_t b)
{
	range_t r[VL_LV_CAP];
	uint64_t m = VL_LV_END;
	uint32_t n, i;

	if (header_sound(t, b))
		return t->b[b].line[0].start[0];
	n = leaf_salvage(t, b, r);
	for (i = 0; i < n; i++)
		if (r[i].start < m)
			m = r[i].start;
	return m;
}

/* Slot s of line x as a range, cut to [lo, hi): 1, or 0 if it holds none there. */
static int slot_range(const struct vl_lv_line *x, unsigned j, uint64_t lo, uint64_t hi,
		      range_t *r)
{
	r->start = x->start[j] & ~VL_LV_PURGED;
	r->end = x->end[j];
	r->age = x->age[j];
	r->purged = 1;
	if (r->end <= r->start || r->end > VL_LV_END || r->start >= hi || r->end <= lo)
		return 0;
	if (r->start < lo)
		r->start = lo;
	return 1;
}

/*
 * What can be read of block b, as ranges into out[] (at most VL_LV_CAP):
 * the ranges of a sound leaf as they are; every other slot that holds a
 * range flagged purged (it lies past the count, where only a dead writer
 * leaves one, or the leaf's ranges are out of order), cut to the
 * header's interval. A line whose check fails is trusted for nothing: a
 * stray write may have cut a range's end or moved its start, so what
 * lies between the ranges of the sound lines around it is taken as one
 * purged range (DESIGN 4: what cannot be read is kept purged; leaves.h).
 * The caller joins what overlaps.
 */
static uint32_t leaf_salvage(const struct vl_lv *t, uint32_t b, range_t *out)
{
	const struct vl_lv_line *l = t->b[b].line;
	uint64_t lo = 0, hi = VL_LV_END, gap_lo;
	uint32_t n = 0, s, k, j;
	int ok[VL_LV_LINES], in_gap = 0, let_go_hdr;
	range_t r;
	leaf_t L;

	if (leaf_read(t, b, &L)) {
		memcpy(out, L.r, L.n * sizeof(range_t));
		for (s = L.n + 1; s < VL_LV_SLOTS; s++)
			if (slot_range(&l[s / 3], s % 3, L.lo, L.hi, &r))
				out[L.n + n++] = r;
		return L.n + n;
	}
	ok[0] = header_sound(t, b);
	if (ok[0]) {
		lo = l[0].start[0];
		hi = l[0].end[0];
	}
	/*
	 * a block let go has its header word zeroed and its check word
	 * chained over, and a new one has its header stored last: lines
	 * that fail there are left from the block's earlier use, no gap
	 */
	let_go_hdr = l[0].age[0] == 0;
	for (k = 1; k < VL_LV_LINES; k++)
		ok[k] = line_sound(t, b, k);
	gap_lo = lo;
	for (k = 0; k < VL_LV_LINES; k++) {
		if (!ok[k]) {
			/* from the end of the last sound range on */
			in_gap |= !let_go_hdr;
			continue;
		}
		for (j = k == 0; j < 3; j++) {
			if (!slot_range(&l[k], j, lo, hi, &r))
				continue;
			if (in_gap && gap_lo < r.start)
				out[n++] = (range_t){ gap_lo, r.start, 0, 1 };
			in_gap = 0;
			out[n++] = r;
			if (r.end > gap_lo)
				gap_lo = r.end;
		}
	}
	if (in_gap) {
		/* the last range may end past hi: as far as any end the failing lines read */
		uint64_t end = hi;

		for (k = 0; k < VL_LV_LINES; k++)
			for (j = k == 0; j < 3 && !ok[k]; j++)
				if (l[k].end[j] > end && l[k].end[j] <= VL_LV_END)
					end = l[k].end[j];
		if (gap_lo < end)
			out[n++] = (range_t){ gap_lo, end, 0, 1 };
	}
	return n;
}

/* Join r into a (they overlap): the extent of both, purged if either was. */
static void join_into(range_t *a, const range_t *r)
{
	if (r->start < a->start)
		a->start = r->start;
	if (r->end > a->end)
		a->end = r->end;
	if (!r->purged && (a->purged || r->age < a->age))
		a->age = r->age;
	a->purged |= r->purged;
}

/* Write output leaf L into the file's next block: every line, so none is stale. */
static void repair_put_leaf(struct repair *p, const leaf_t *L)
{
	uint32_t b = p->blk[p->out++];
	struct vl_lv_line x;
	leaf_t W = *L;
	unsigned k;

	/* an interval that holds its ranges; repair_intervals makes them meet */
	W.lo = W.r[0].start;
	W.hi = VL_LV_END;
	for (k = 0; k < VL_LV_LINES; k++) {
		leaf_line(&W, k, &x);
		x.check = line_sum(&x, b, p->t->file, k);
		p->t->b[b].line[k] = x;
	}
}

/* One range out, in key order: into the current output leaf, the one before written. */
static void repair_emit(struct repair *p, const range_t *r)
{
	range_t a = *r;

	/*
	 * a window that overflowed can hand one back out of order: joined into
	 * the last, from its start on (what lies before it is the one cost of
	 * an overflow, which only leaves scribbled to overlap 64 ranges make)
	 */
	if (p->cur.n > 0 && a.start < p->cur.r[p->cur.n - 1].end) {
		if (a.start < p->cur.r[p->cur.n - 1].start)
			a.start = p->cur.r[p->cur.n - 1].start;
		join_into(&p->cur.r[p->cur.n - 1], &a);
		return;
	}
	if (p->cur.n == 0 && p->has_prev && a.start < p->prev.r[p->prev.n - 1].end) {
		if (a.start < p->prev.r[p->prev.n - 1].start)
			a.start = p->prev.r[p->prev.n - 1].start;
		join_into(&p->prev.r[p->prev.n - 1], &a);
		return;
	}
	if (p->cur.n == VL_LV_CAP) {
		if (p->has_prev)
			repair_put_leaf(p, &p->prev);
		p->prev = p->cur;
		p->has_prev = 1;
		p->cur.n = 0;
	}
	p->cur.r[p->cur.n++] = a;
}

/* Add r to the window, joined with what it overlaps (equal ranges are one). */
static void repair_pend(struct repair *p, const range_t *r)
{
	range_t a = *r;
	uint32_t i = 0, j;

	while (i < p->np && p->pend[i].end <= a.start)
		i++;
	j = i;
	while (j < p->np && p->pend[j].start < a.end) {
		join_into(&a, &p->pend[j]);
		j++;
	}
	if (j == i && p->np == PEND_MAX) {
		/* no room: the first goes out now (repair_emit keeps the order) */
		repair_emit(p, &p->pend[0]);
		memmove(&p->pend[0], &p->pend[1], (p->np - 1) * sizeof(range_t));
		p->np--;
		if (i > 0)
			i--;
		j = i;
	}
	memmove(&p->pend[i + 1], &p->pend[j], (p->np - j) * sizeof(range_t));
	p->pend[i] = a;
	p->np = p->np - (j - i) + 1;
}

/* Out of the window, every range no later leaf can overlap (they start at bound or after). */
static void repair_flush(struct repair *p, uint64_t bound)
{
	uint32_t k = 0;

	while (k < p->np && p->pend[k].end <= bound)
		repair_emit(p, &p->pend[k++]);
	memmove(&p->pend[0], &p->pend[k], (p->np - k) * sizeof(range_t));
	p->np -= k;
}

/* The last two output leaves evened to the least fill, and written. */
static void repair_close(struct repair *p)
{
	if (p->has_prev && p->cur.n < VL_LV_MIN) {
		uint32_t all = p->prev.n + p->cur.n, nl = all / 2, k = p->prev.n - nl;

		memmove(&p->cur.r[k], &p->cur.r[0], p->cur.n * sizeof(range_t));
		memcpy(&p->cur.r[0], &p->prev.r[nl], k * sizeof(range_t));
		p->cur.n = all - nl;
		p->prev.n = nl;
	}
	if (p->has_prev)
		repair_put_leaf(p, &p->prev);
	if (p->cur.n > 0 || !p->has_prev)
		repair_put_leaf(p, &p->cur);
}

/* Heap sort of blk[0..n) by leaf_key: the list is the caller's memory, nothing else used. */
static void sift(const struct vl_lv *t, uint32_t *blk, uint32_t i, uint32_t n)
{
	uint32_t x = blk[i];
	uint64_t kx = leaf_key(t, x);

	/* the moving block's key computed once: each key costs a line's check */
	for (;;) {
		uint32_t c = 2 * i + 1;
		uint64_t kc;

		if (c >= n)
			break;
		kc = leaf_key(t, blk[c]);
		if (c + 1 < n) {
			uint64_t k2 = leaf_key(t, blk[c + 1]);

			if (k2 > kc) {
				c++;
				kc = k2;
			}
		}
		if (kc <= kx)
			break;
		blk[i] = blk[c];
		i = c;
	}
	blk[i] = x;
}

static void sort_leaves(const struct vl_lv *t, uint32_t *blk, uint32_t n)
{
	uint32_t i, x;

	for (i = n / 2; i-- > 0;)
		sift(t, blk, i, n);
	for (i = n; i-- > 1;) {
		x = blk[0];
		blk[0] = blk[i];
		blk[i] = x;
		sift(t, blk, 0, i);
	}
}

/* The output leaves' intervals made to partition [0, 2^63): each its successor's lo. */
static void repair_intervals(struct repair *p)
{
	uint32_t i;

	for (i = 0; i < p->out; i++) {
		leaf_t L;
		uint32_t b = p->blk[i];
		struct vl_lv_line x;

		/* leaves just written: read back, not trusted less than on the first read */
		if (!leaf_read(p->t, b, &L))
			continue;
		L.lo = i == 0 ? 0 : L.r[0].start;
		L.hi = VL_LV_END;
		if (i + 1 < p->out)
			L.hi = p->t->b[p->blk[i + 1]].line[0].start[1] & ~VL_LV_PURGED;
		leaf_line(&L, 0, &x);
		x.check = line_sum(&x, b, p->t->file, 0);
		p->t->b[b].line[0] = x;
	}
}

/* The least age below block b of level lvl (0: a leaf) and its lo, as just built. */
static void node_sum(const struct vl_lv *t, uint32_t b, uint32_t lvl, uint64_t *lo, uint32_t *min)
{
	if (lvl == 0) {
		leaf_t L;

		*lo = 0;
		*min = VL_LV_NOAGE;
		if (leaf_read(t, b, &L)) {
			*lo = L.lo;
			*min = leaf_min(&L);
		}
		return;
	}
	*lo = t->b[b].in.key[0];
	*min = inner_min(&t->b[b].in);
}

/*
 * The inner levels over the m nodes blk[at..at+m) of level lvl, bottom-up,
 * into the blocks from blk[*next] on, then the reservation's: the root,
 * or 0 if short of blocks.
 */
static uint32_t build_levels(const struct vl_lv *t, uint32_t *blk, uint32_t nblk, uint32_t room,
			     uint32_t m, uint32_t *next, uint32_t *height, struct vl_lv_res *res,
			     struct vl_lv_change *chg)
{
	uint32_t lvl = 0, at = 0;

	while (m > 1) {
		uint32_t k = (m + VL_LV_FAN - 1) / VL_LV_FAN, q, first = *next, c = at;

		if (lvl + 2 > VL_LV_HMAX)
			return 0;
		for (q = 0; q < k; q++) {
			/* evenly: k nodes of m / k or one more, >= 7 when m > 15 */
			uint32_t cnt = m / k + (q < m % k), i, nb;
			struct vl_lv_inner *in;

			if (*next < nblk) {
				nb = blk[(*next)++];
			} else {
				nb = *next < room ? take(res, chg) : 0;
				if (nb == 0)
					return 0;
				blk[(*next)++] = nb; /* in the list's room: a parent names it below */
			}
			in = &t->b[nb].in;
			memset(in, 0, sizeof(*in));
			in->hdr = VL_LV_INNER | (lvl + 1) << 8 | cnt;
			for (i = 0; i < cnt; i++, c++) {
				in->child[i] = blk[c];
				node_sum(t, blk[c], lvl, &in->key[i], &in->minage[i]);
			}
		}
		at = first;
		m = k;
		lvl++;
	}
	*height = lvl + 1;
	return blk[at];
}

int vl_lv_repair(const struct vl_lv *t, uint32_t *blk, uint32_t n, uint32_t room,
		 struct vl_lv_res *res, struct vl_lv_change *chg)
{
	struct repair p;
	uint32_t i, nleaf = 0, next, root, height = 0, x;
	range_t got[VL_LV_CAP];

	memset(chg, 0, sizeof(*chg));
	if (room < n)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!blk_ok(t, blk[i]))
			return -EINVAL;
	/* the leaves first, sorted by lo; the other blocks after them */
	for (i = 0; i < n; i++) {
		if (leafish(t, blk[i])) {
			x = blk[nleaf];
			blk[nleaf++] = blk[i];
			blk[i] = x;
		}
	}
	sort_leaves(t, blk, nleaf);
	memset(&p, 0, sizeof(p));
	p.t = t;
	p.blk = blk;
	p.nleaf = nleaf;
	/* leaf i is read before output leaf i is written: each holds at most 11 */
	for (i = 0; i < nleaf; i++) {
		uint32_t k, ng = leaf_salvage(t, blk[i], got);

		for (k = 0; k < ng; k++)
			repair_pend(&p, &got[k]);
		repair_flush(&p, i + 1 < nleaf ? leaf_key(t, blk[i + 1]) : VL_LV_END);
	}
	repair_flush(&p, VL_LV_END);
	if (p.cur.n == 0 && !p.has_prev) {
		*t->root = (struct vl_lv_root){ 0, 0 };
		next = 0;
		root = 0;
	} else {
		repair_close(&p);
		repair_intervals(&p);
		next = p.out;
		root = build_levels(t, blk, n, room, p.out, &next, &height, res, chg);
		if (root == 0)
			return -ENOMEM;
		*t->root = (struct vl_lv_root){ .block = root, .height = height };
	}
	/* what is left of the file's blocks goes back, wiped */
	for (i = next; i < n; i++)
		let_go(t, blk[i], chg);
	return 0;
}
