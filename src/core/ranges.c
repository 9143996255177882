/* SPDX-License-Identifier: MIT */
/*
 * ranges.c - merge, split and purge rules for the ranges of one file.
 *
 * The invariants of a file's tree, kept by every function here:
 *   (1) ranges are disjoint and non-empty;
 *   (2) two ranges that touch (a.end == b.start) differ in their purged
 *       flag: touching ranges in the same state are always merged.
 * Each function first walks and validates everything it will touch (each
 * node sound, the file's, and where it should be in the walk), then
 * changes the tree; so an error return means nothing was changed.
 */
#include "ranges.h"

#include "compiler.h"
#include "fault.h"
#include "pool.h"

#include "rtree.h"

#include <errno.h>
#include <string.h>

/*
 * *d += len (sign > 0) or -= len, modulo 2^64. The counters the deltas go
 * into are unsigned; and a range of a scribbled (or repaired) region may
 * be longer than 2^63 bytes, where signed arithmetic would overflow.
 */
static void add_bytes(int64_t *d, int sign, uint64_t len)
{
	*d = (int64_t)(sign > 0 ? (uint64_t)*d + len : (uint64_t)*d - len);
}

/*
 * Count range n into (sign > 0) or out of (sign < 0) the change's totals.
 * Inline, as set_range is: a MARK and an UNMARK call each two or three
 * times, and the compiler kept them out of line.
 */
static inline void account(const struct vl_region *r, struct vl_change *c, uint32_t n,
			   int sign)
{
	const struct vl_node *x = vl_node_at(r, n);
	uint64_t len = x->end - x->start;

	if (vl_node_purged(x)) {
		add_bytes(&c->d_pbytes, sign, len);
		c->d_purged += sign;
	} else {
		add_bytes(&c->d_vbytes, sign, len);
	}
	c->d_ranges += sign;
}

/* Take n out of the tree and onto the change's freed chain. */
static void drop(const struct vl_region *r, uint32_t *root, struct vl_change *c, uint32_t n)
{
	/* only a link that lies leads to a bad index: chained, it would end the chain */
	if (vl_node_w(r, n) == NULL)
		return;
	vl_rb_erase(r, root, n);
	VL_STEP("ranges: dropped, not on the freed chain");
	vl_set_left(r, n, c->freed);
	c->freed = n;
}

static inline void set_range(const struct vl_region *r, uint32_t n, uint64_t start,
			     uint64_t end, int purged)
{
	struct vl_node *x = vl_node_w(r, n);

	if (x == NULL)
		return;
	/*
	 * The end first when the new start is not below the old end: so a
	 * writer killed between the two leaves start below end, an extent a
	 * repair takes as purged, never one it must drop
	 * (rebuild.c lost_range).
	 */
	if (start < x->end) {
		x->start = start;
		VL_STEP("ranges: node half written");
		x->end = end;
	} else {
		x->end = end;
		VL_STEP("ranges: node half written");
		x->start = start;
	}
	x->meta = (x->meta & ~VL_META_PURGED) | (purged ? VL_META_PURGED : 0);
	VL_STEP("ranges: node written, not sealed");
	vl_node_seal_at(x, n);
}

/* next(x), validated; VL_NIL at the end. -1 (as uint32_t) on a fault. */
#define BAD ((uint32_t)-1)

static uint32_t next_ok(const struct vl_region *r, uint32_t x, uint32_t file)
{
	uint32_t n = vl_rb_next(r, x);

	return n == VL_NIL || vl_range_ok(r, n, file) ? n : BAD;
}

static uint32_t prev_ok(const struct vl_region *r, uint32_t x, uint32_t file)
{
	uint32_t p = vl_rb_prev(r, x);

	return p == VL_NIL || vl_range_ok(r, p, file) ? p : BAD;
}

/*
 * Does range x come after a range that ends at `after` (0: none before it)
 * and meet [s, e): overlap it, or (touching, for a MARK) end at s? What
 * every range a walk passes must do: links that lie (a scribble naming
 * another sound range of the same file) could otherwise walk back, and a
 * merge would take in, or a trim stretch a range over, bytes nobody marked.
 */
static int in_walk(const struct vl_region *r, uint32_t x, uint64_t after, uint64_t s, uint64_t e,
		   int touching)
{
	const struct vl_node *n = vl_node_at(r, x);

	return n->start >= after && (n->end > s || (touching && n->end == s)) && n->start < e;
}

/*
 * What the first look of a MARK of [s, e) (or an absorb of a range)
 * found in the tree: the ranges it overlaps, in order, and the ranges
 * either side of them. The helpers below are the cases of the merge, in
 * the order they are met; each takes the tree and the change record as
 * the one before left them true. Inline (VL_INLINE): this is every MARK's
 * path.
 */
struct run_walk {
	uint32_t left;    /* the range before the overlapped ones (VL_NIL: none) */
	uint32_t first;   /* the overlapped ranges: first to last (VL_NIL: none) */
	uint32_t last;
	uint32_t right;   /* the range after them (VL_NIL: none) */
	uint32_t steps;   /* ranges the walk passed: the merge passes no more */
	int purged;       /* one overlapped range was purged: so is the union */
	uint64_t ms, me;  /* [s, e) joined with the overlapped ranges */
};

/*
 * Where the walk starts: the first range that ends at s or after. One
 * that ends at s touches [s, e) on the left (m->left): the walk starts
 * after it, at *x (VL_NIL: no range). -EUCLEAN if the tree lies.
 */
static VL_INLINE int mark_start(const struct vl_region *r, uint32_t root, uint32_t file,
				uint64_t s, struct run_walk *m, uint32_t *x)
{
	if (vl_rb_end_at_least_checked(r, root, file, s, 0, x) != 0 ||
	    (*x != VL_NIL && vl_node_at(r, *x)->end < s))
		return -EUCLEAN;
	if (*x != VL_NIL && vl_node_at(r, *x)->end == s) {
		m->left = *x; /* the range after it may hold [s, e) */
		*x = next_ok(r, *x, file);
		if (*x == BAD || (*x != VL_NIL && vl_node_at(r, *x)->start < s))
			return -EUCLEAN;
	}
	return 0;
}

/* The case of no change: range x holds [s, e) already. */
static VL_INLINE int mark_inside_one(const struct vl_region *r, uint32_t x, uint64_t s,
				     uint64_t e)
{
	return x != VL_NIL && vl_node_at(r, x)->start <= s && e <= vl_node_at(r, x)->end;
}

/*
 * The ranges [s, e) overlaps, from x on: [first, last], in order, then
 * right, the range after them; and the union [ms, me) with the range
 * before them, left, if mark_start did not find it. -EUCLEAN if a range
 * passed is out of the walk (in_walk) or the walk does not end.
 */
static VL_INLINE int mark_overlapped(const struct vl_region *r, uint32_t file, uint64_t s,
				     uint64_t e, uint32_t x, struct run_walk *m)
{
	for (; x != VL_NIL && x != BAD && vl_node_at(r, x)->start < e; x = next_ok(r, x, file)) {
		if (++m->steps >= r->node_cap ||
		    !in_walk(r, x, m->last == VL_NIL ? 0 : vl_node_at(r, m->last)->end, s, e, 1))
			return -EUCLEAN;
		if (m->first == VL_NIL)
			m->first = x;
		m->last = x;
		m->purged |= vl_node_purged(vl_node_at(r, x));
	}
	if (x == BAD)
		return -EUCLEAN;
	m->right = x;

	m->ms = s;
	m->me = e;
	if (m->first != VL_NIL) {
		m->ms = vl_node_at(r, m->first)->start < s ? vl_node_at(r, m->first)->start : s;
		m->me = vl_node_at(r, m->last)->end > e ? vl_node_at(r, m->last)->end : e;
		if (m->left == VL_NIL && (m->left = prev_ok(r, m->first, file)) == BAD)
			return -EUCLEAN;
	}
	return 0;
}

/*
 * The cases of a neighbour joining the union [ms, me): it touches it and
 * is alike (a merged range is purged if any part was).
 */
static VL_INLINE int left_joins(const struct vl_region *r, const struct run_walk *m)
{
	return m->left != VL_NIL && vl_node_at(r, m->left)->end == m->ms &&
	       vl_node_purged(vl_node_at(r, m->left)) == m->purged;
}

static VL_INLINE int right_joins(const struct vl_region *r, const struct run_walk *m)
{
	return m->right != VL_NIL && vl_node_at(r, m->right)->start == m->me &&
	       vl_node_purged(vl_node_at(r, m->right)) == m->purged;
}

/*
 * A MARK that joins a purged range: the flag must not lie, so the bytes
 * that were not purged go now: [s, e) and the unpurged ranges it
 * overlaps (their union is one extent, each of them meeting [s, e)),
 * read before the merge changes them. Never the purged ranges' extents:
 * a repair keeps a node it cannot check as purged with the extent it
 * reads (DESIGN 11), which a scribble may have made anything, and their
 * bytes need no punch (a flag may say purged of intact bytes).
 */
static VL_INLINE void mark_punch(const struct vl_region *r, const struct run_walk *m,
				 uint64_t s, uint64_t e, struct vl_change *c)
{
	const struct vl_node *first = vl_node_at(r, m->first);
	const struct vl_node *last = vl_node_at(r, m->last);

	c->punch_start = !vl_node_purged(first) && first->start < s ? first->start : s;
	c->punch_end = !vl_node_purged(last) && last->end > e ? last->end : e;
}

/*
 * The case of no range to merge into: the spare becomes the range
 * [fs, fe), inserted next to right when there is one (found: no second
 * descent). A failed insert leaves the spare PENDING, nothing changed.
 */
static VL_INLINE int mark_into_spare(const struct vl_region *r, uint32_t *root, uint32_t file,
				     uint32_t spare, uint32_t right, uint64_t fs, uint64_t fe,
				     struct vl_change *c)
{
	struct vl_node *n = vl_node_w(r, spare);
	int err;

	if (n == NULL)
		return -EUCLEAN; /* not a node the caller could have had */
	n->meta = vl_meta(file, VL_NODE_LIVE, 0);
	set_range(r, spare, fs, fe, 0);
	err = right != VL_NIL ? vl_rb_insert_next_to(r, root, spare, right, 0)
			      : vl_rb_insert(r, root, spare);
	if (err) {
		n->meta = vl_meta(file, VL_NODE_PENDING, 0);
		vl_node_seal(r, n);
		return err;
	}
	c->keep_new = 1;
	return 0;
}

/*
 * The case of a merge into keep (the left neighbour, or the first
 * overlapped range, or the right neighbour): every overlapped range but
 * keep dropped, and the right neighbour if it joins, keep stretched to
 * [fs, fe). The walk of the first look, again: at most as many steps,
 * and only over ranges as that one found them (in order, meeting [s, e),
 * purged only if the union is): links that lie can make it stray once the
 * tree changes, and a purged range it strayed to, merged into an unpurged
 * union, would be answered as intact.
 */
static VL_INLINE void mark_merge_into(const struct vl_region *r, uint32_t *root, uint32_t file,
				      uint64_t s, uint64_t e, const struct run_walk *m,
				      uint32_t keep, int left_in, int right_in, uint64_t fs,
				      uint64_t fe, struct vl_change *c)
{
	uint32_t steps = m->steps;
	uint64_t after = 0;

	if (left_in)
		account(r, c, m->left, -1);
	for (uint32_t x = m->first; x != VL_NIL && steps-- > 0;) {
		uint32_t nx = x == m->last ? VL_NIL : vl_rb_next(r, x);

		if (x != m->first && (!vl_range_ok(r, x, file) || !in_walk(r, x, after, s, e, 1) ||
				      (vl_node_purged(vl_node_at(r, x)) && !m->purged)))
			break;
		after = vl_node_at(r, x)->end;
		account(r, c, x, -1);
		if (x != keep)
			drop(r, root, c, x);
		x = nx;
	}
	if (right_in) {
		account(r, c, m->right, -1);
		if (m->right != keep)
			drop(r, root, c, m->right);
	}
	set_range(r, keep, fs, fe, m->purged);
}

int vl_ranges_mark(const struct vl_region *r, uint32_t *root, uint32_t file, uint64_t s,
		   uint64_t e, uint32_t spare, struct vl_change *c)
{
	struct run_walk m = { .left = VL_NIL, .first = VL_NIL, .last = VL_NIL };
	uint32_t x, keep;
	uint64_t fs, fe;
	int left_in, right_in, err;

	VL_ASSERT_HELD(r, &vl_file_at(r, file)->h.lock);
	memset(c, 0, sizeof(*c));
	if (mark_start(r, *root, file, s, &m, &x) != 0)
		return -EUCLEAN;
	if (mark_inside_one(r, x, s, e)) {
		c->keep = x; /* already volatile: nothing changes, not even the age */
		return 0;
	}
	if (mark_overlapped(r, file, s, e, x, &m) != 0)
		return -EUCLEAN;
	left_in = left_joins(r, &m);
	right_in = right_joins(r, &m);

	if (left_in)
		keep = m.left;
	else if (m.first != VL_NIL)
		keep = m.first;
	else if (right_in)
		keep = m.right;
	else if (spare != VL_NIL)
		keep = spare;
	else
		return -ENOMEM;
	fs = left_in ? vl_node_at(r, m.left)->start : m.ms;
	fe = right_in ? vl_node_at(r, m.right)->end : m.me;
	if (m.purged)
		mark_punch(r, &m, s, e, c);

	if (keep == spare) {
		err = mark_into_spare(r, root, file, spare, m.right, fs, fe, c);
		if (err)
			return err;
	} else {
		mark_merge_into(r, root, file, s, e, &m, keep, left_in, right_in, fs, fe, c);
	}
	account(r, c, keep, +1);
	c->keep = keep;
	c->keep_aged = 1;
	return 0;
}

/*
 * UNMARK's first look, from first (the first range that ends after s):
 * the ranges [s, e) meets, in order, each ending after s (in_walk: a trim
 * never stretches one). *steps: how many; *split: one of them holds
 * [s, e) with room on both sides. -EUCLEAN if the tree lies.
 */
static VL_INLINE int unmark_met(const struct vl_region *r, uint32_t file, uint64_t s,
				uint64_t e, uint32_t first, uint32_t *steps, int *split)
{
	uint32_t x, prev;

	for (x = first, prev = VL_NIL; x != VL_NIL && vl_node_at(r, x)->start < e;
	     prev = x, x = next_ok(r, x, file)) {
		if (x == BAD || ++*steps >= r->node_cap ||
		    !in_walk(r, x, prev == VL_NIL ? 0 : vl_node_at(r, prev)->end, s, e, 0))
			return -EUCLEAN;
		if (vl_node_at(r, x)->start < s && vl_node_at(r, x)->end > e)
			*split = 1;
	}
	return x == BAD ? -EUCLEAN : 0;
}

/*
 * The case of range x holding [s, e) with room on both sides, the only
 * range [s, e) meets (unmark_met): the spare takes its right part, and
 * shares its age; x keeps its left part. The right part is inserted
 * first: a failure then changes nothing.
 */
static VL_INLINE int unmark_split(const struct vl_region *r, uint32_t *root, uint32_t file,
				  uint32_t x, uint64_t s, uint64_t e, uint32_t spare,
				  struct vl_change *c)
{
	struct vl_node *n = vl_node_at(r, x);
	struct vl_node *sp = vl_node_w(r, spare);
	int err;

	if (sp == NULL)
		return -EUCLEAN;
	sp->meta = vl_meta(file, VL_NODE_LIVE, vl_node_purged(n));
	sp->seq = n->seq;
	set_range(r, spare, e, n->end, vl_node_purged(n));
	err = vl_rb_insert_next_to(r, root, spare, x, 1);
	if (err) {
		sp->meta = vl_meta(file, VL_NODE_PENDING, 0);
		vl_node_seal(r, sp);
		return err;
	}
	set_range(r, x, n->start, s, vl_node_purged(n));
	c->split = spare;
	c->split_of = x;
	c->d_ranges++;
	c->d_purged += vl_node_purged(n);
	return 0;
}

/*
 * The case of range x that [s, e) overlaps on one side: cut to the part
 * outside it. Returns the bytes cut off.
 */
static VL_INLINE uint64_t unmark_trim(const struct vl_region *r, uint32_t x, uint64_t s,
				      uint64_t e)
{
	struct vl_node *n = vl_node_at(r, x);
	uint64_t removed;

	if (n->start < s) {
		removed = n->end - s;
		set_range(r, x, n->start, s, vl_node_purged(n));
	} else {
		removed = e - n->start;
		set_range(r, x, e, n->end, vl_node_purged(n));
	}
	return removed;
}

/*
 * Range x, met by UNMARK [s, e): dropped if [s, e) covers it, else split
 * or trimmed, its bytes taken out of the change's totals.
 */
static VL_INLINE int unmark_one(const struct vl_region *r, uint32_t *root, uint32_t file,
				uint32_t x, uint64_t s, uint64_t e, uint32_t spare,
				struct vl_change *c)
{
	struct vl_node *n = vl_node_at(r, x);
	uint64_t removed;
	int err;

	c->was_purged |= vl_node_purged(n);
	if (s <= n->start && n->end <= e) {
		account(r, c, x, -1);
		drop(r, root, c, x);
		return 0;
	}
	if (n->start < s && n->end > e) {
		err = unmark_split(r, root, file, x, s, e, spare, c);
		if (err)
			return err;
		removed = e - s;
	} else {
		removed = unmark_trim(r, x, s, e);
	}
	if (vl_node_purged(n))
		add_bytes(&c->d_pbytes, -1, removed);
	else
		add_bytes(&c->d_vbytes, -1, removed);
	return 0;
}

static VL_INLINE int unmark(const struct vl_region *r, uint32_t *root, uint32_t file, uint64_t s,
			    uint64_t e, uint32_t *spare_io, int take, struct vl_change *c)
{
	uint32_t first, x, steps = 0, spare;
	uint64_t after = 0;
	int split = 0, err;

	VL_ASSERT_HELD(r, &vl_file_at(r, file)->h.lock);
	memset(c, 0, sizeof(*c));
	if (vl_rb_end_at_least_checked(r, *root, file, s, 1, &first) != 0)
		return -EUCLEAN;
	if (unmark_met(r, file, s, e, first, &steps, &split) != 0)
		return -EUCLEAN;
	/*
	 * A range that holds [s, e) with room on both sides is the only one
	 * [s, e) meets, in a sound tree. In a tree that says otherwise, the
	 * split's insert (which may fail) could come after ranges were taken
	 * out: refuse before changing anything.
	 */
	if (split && steps != 1)
		return -EUCLEAN;
	if (split && *spare_io == VL_NIL && take)
		*spare_io = vl_spare_take(r, file);
	spare = *spare_io;
	if (split && spare == VL_NIL)
		return -ENOMEM;

	/*
	 * The walk of the first look, again, taking the ranges out as it
	 * goes. Links that lie can make it stray from that walk once the tree
	 * changes: it stops after as many steps, and at a range that is not
	 * this file's, rather than loop or touch another file's range. The
	 * first range is the one checked a moment ago, nothing changed since;
	 * and after the last step no next is looked for (an UNMARK of one
	 * range walked the tree for a next it never used). Every other range
	 * must come as the first look found them (in order, ending after s).
	 */
	for (x = first; x != VL_NIL && vl_node_at(r, x)->start < e && steps-- > 0 &&
	     (x == first || (vl_range_ok(r, x, file) && in_walk(r, x, after, s, e, 0)));) {
		uint32_t nx = steps > 0 ? vl_rb_next(r, x) : VL_NIL;

		after = vl_node_at(r, x)->end;
		err = unmark_one(r, root, file, x, s, e, spare, c);
		if (err)
			return err;
		x = nx;
	}
	return 0;
}

int vl_ranges_unmark(const struct vl_region *r, uint32_t *root, uint32_t file, uint64_t s,
		     uint64_t e, uint32_t spare, struct vl_change *c)
{
	return unmark(r, root, file, s, e, &spare, 0, c);
}

int vl_ranges_unmark_taking(const struct vl_region *r, uint32_t *root, uint32_t file,
			    uint64_t s, uint64_t e, uint32_t *spare, struct vl_change *c)
{
	*spare = VL_NIL;
	return unmark(r, root, file, s, e, spare, 1, c);
}

int vl_ranges_purge(const struct vl_region *r, uint32_t *root, uint32_t file, uint32_t n,
		    struct vl_change *c)
{
	uint32_t p, q, keep = n;
	uint64_t fs, fe;

	VL_ASSERT_HELD(r, &vl_file_at(r, file)->h.lock);
	memset(c, 0, sizeof(*c));
	if (!vl_range_ok(r, n, file))
		return -EUCLEAN;
	c->keep = n;
	if (vl_node_purged(vl_node_at(r, n)))
		return 0;
	p = prev_ok(r, n, file);
	q = next_ok(r, n, file);
	if (p == BAD || q == BAD)
		return -EUCLEAN;

	fs = vl_node_at(r, n)->start;
	fe = vl_node_at(r, n)->end;
	c->punch_start = fs;
	c->punch_end = fe;
	account(r, c, n, -1);
	if (p != VL_NIL && vl_node_purged(vl_node_at(r, p)) && vl_node_at(r, p)->end == fs) {
		account(r, c, p, -1);
		fs = vl_node_at(r, p)->start;
		keep = p;
	}
	if (q != VL_NIL && vl_node_purged(vl_node_at(r, q)) && vl_node_at(r, q)->start == fe) {
		account(r, c, q, -1);
		fe = vl_node_at(r, q)->end;
		drop(r, root, c, q);
	}
	if (keep != n)
		drop(r, root, c, n);
	set_range(r, keep, fs, fe, 1);
	account(r, c, keep, +1);
	c->keep = keep;
	return 0;
}

int vl_ranges_clear(const struct vl_region *r, uint32_t *root, uint32_t file, struct vl_change *c)
{
	uint32_t x, steps = 0;

	VL_ASSERT_HELD(r, &vl_file_at(r, file)->h.lock);
	memset(c, 0, sizeof(*c));
	for (x = vl_rb_first(r, *root); x != VL_NIL; x = next_ok(r, x, file))
		if (x == BAD || !vl_range_ok(r, x, file) || ++steps >= r->node_cap)
			return -EUCLEAN;
	while ((x = vl_rb_first(r, *root)) != VL_NIL && steps-- > 0 && vl_range_ok(r, x, file)) {
		account(r, c, x, -1);
		drop(r, root, c, x);
	}
	return 0;
}

int vl_ranges_forget_unpurged(const struct vl_region *r, uint32_t *root, uint32_t file,
			      struct vl_change *c)
{
	uint32_t x, next, steps = 0;

	VL_ASSERT_HELD(r, &vl_file_at(r, file)->h.lock);
	memset(c, 0, sizeof(*c));
	for (x = vl_rb_first(r, *root); x != VL_NIL; x = next_ok(r, x, file))
		if (x == BAD || !vl_range_ok(r, x, file) || ++steps >= r->node_cap)
			return -EUCLEAN;
	for (x = vl_rb_first(r, *root); x != VL_NIL && steps-- > 0 && vl_range_ok(r, x, file);
	     x = next) {
		next = vl_rb_next(r, x);
		if (vl_node_purged(vl_node_at(r, x)))
			continue;
		account(r, c, x, -1);
		drop(r, root, c, x);
	}
	return 0;
}

/*
 * vl_ranges_absorb's first look, for a range [w->ms, w->me) (w->purged:
 * its state): the run of ranges it overlaps (the union is purged if any
 * part was, and [ms, me) widened to it), and the neighbours either side
 * of the run; all validated before anything changes. -EUCLEAN if not.
 */
static int absorb_look(const struct vl_region *r, uint32_t root, uint32_t file,
		       struct run_walk *w)
{
	uint32_t x;

	if (vl_rb_end_at_least_checked(r, root, file, w->ms, 1, &w->first) != 0)
		return -EUCLEAN;
	w->left = w->first != VL_NIL ? prev_ok(r, w->first, file) : vl_rb_last(r, root);
	for (x = w->first; x != VL_NIL && vl_node_at(r, x)->start < w->me; x = next_ok(r, x, file)) {
		if (x == BAD || !vl_range_ok(r, x, file) || ++w->steps >= r->node_cap ||
		    !in_walk(r, x, w->last == VL_NIL ? 0 : vl_node_at(r, w->last)->end, w->ms,
			     w->me, 0))
			return -EUCLEAN;
		w->purged |= vl_node_purged(vl_node_at(r, x));
		w->last = x;
	}
	if (x == BAD)
		return -EUCLEAN;
	w->right = x;
	if (w->right != VL_NIL && !vl_range_ok(r, w->right, file))
		return -EUCLEAN;
	if (w->last == VL_NIL)
		w->first = VL_NIL;
	if (w->left == BAD || (w->left != VL_NIL && !vl_range_ok(r, w->left, file)))
		return -EUCLEAN;
	if (w->first != VL_NIL) {
		if (vl_node_at(r, w->first)->start < w->ms)
			w->ms = vl_node_at(r, w->first)->start;
		if (vl_node_at(r, w->last)->end > w->me)
			w->me = vl_node_at(r, w->last)->end;
	}
	return 0;
}

int vl_ranges_absorb(const struct vl_region *r, uint32_t *root, uint32_t file, uint32_t n,
		     struct vl_change *c)
{
	struct run_walk w = { .last = VL_NIL };
	uint64_t s, e;
	int err;

	VL_ASSERT_HELD(r, &vl_file_at(r, file)->h.lock);
	memset(c, 0, sizeof(*c));
	if (!vl_range_ok(r, n, file))
		return -EUCLEAN;
	w.ms = vl_node_at(r, n)->start;
	w.me = vl_node_at(r, n)->end;
	w.purged = vl_node_purged(vl_node_at(r, n));
	if (absorb_look(r, *root, file, &w) != 0)
		return -EUCLEAN;

	/* then the changes, in at most as many steps */
	for (uint32_t x = w.first; x != VL_NIL && w.steps-- > 0;) {
		uint32_t nx = x == w.last ? VL_NIL : vl_rb_next(r, x);

		account(r, c, x, -1);
		drop(r, root, c, x);
		x = nx;
	}
	s = w.ms;
	e = w.me;
	if (left_joins(r, &w)) {
		s = vl_node_at(r, w.left)->start;
		account(r, c, w.left, -1);
		drop(r, root, c, w.left);
	}
	if (right_joins(r, &w)) {
		e = vl_node_at(r, w.right)->end;
		account(r, c, w.right, -1);
		drop(r, root, c, w.right);
	}
	set_range(r, n, s, e, w.purged);
	err = vl_rb_insert(r, root, n);
	if (err)
		return err;
	account(r, c, n, +1);
	c->keep = n;
	return 0;
}
