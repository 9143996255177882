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

#include "fault.h"

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
	x->start = start;
	VL_STEP("ranges: node half written");
	x->end = end;
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
 * One function, over 80 lines, on purpose: the walk over the overlapped
 * ranges and the merge it ends with read as one argument (each step keeps
 * the tree and the change record true for the next); split, the
 * invariants would have to be restated at every seam.
 */
int vl_ranges_mark(const struct vl_region *r, uint32_t *root, uint32_t file, uint64_t s,
		   uint64_t e, uint32_t spare, struct vl_change *c)
{
	uint32_t x, left = VL_NIL, right, first = VL_NIL, last = VL_NIL, keep, steps = 0;
	uint64_t ms, me, fs, fe;
	int purged = 0, left_in, right_in;

	VL_ASSERT_HELD(r, &vl_file_at(r, file)->h.lock);
	memset(c, 0, sizeof(*c));
	x = vl_rb_end_at_least(r, *root, s, 0);
	if (x != VL_NIL && (!vl_range_ok(r, x, file) || vl_node_at(r, x)->end < s))
		return -EUCLEAN;
	if (x != VL_NIL && vl_node_at(r, x)->end == s) {
		left = x; /* touches [s, e) on the left; the range after it may hold it */
		x = next_ok(r, x, file);
		if (x == BAD || (x != VL_NIL && vl_node_at(r, x)->start < s))
			return -EUCLEAN;
	}
	if (x != VL_NIL && vl_node_at(r, x)->start <= s && e <= vl_node_at(r, x)->end) {
		c->keep = x; /* already volatile: nothing changes, not even the age */
		return 0;
	}
	/* the ranges [s, e) overlaps: [first, last], in order, then right after them */
	for (; x != VL_NIL && x != BAD && vl_node_at(r, x)->start < e; x = next_ok(r, x, file)) {
		if (++steps >= r->node_cap ||
		    !in_walk(r, x, last == VL_NIL ? 0 : vl_node_at(r, last)->end, s, e, 1))
			return -EUCLEAN;
		if (first == VL_NIL)
			first = x;
		last = x;
		purged |= vl_node_purged(vl_node_at(r, x));
	}
	if (x == BAD)
		return -EUCLEAN;
	right = x;

	ms = s;
	me = e;
	if (first != VL_NIL) {
		ms = vl_node_at(r, first)->start < s ? vl_node_at(r, first)->start : s;
		me = vl_node_at(r, last)->end > e ? vl_node_at(r, last)->end : e;
		if (left == VL_NIL && (left = prev_ok(r, first, file)) == BAD)
			return -EUCLEAN;
	}
	/* a merged range is purged if any part was; touching ones join if alike */
	left_in = left != VL_NIL && vl_node_at(r, left)->end == ms &&
		  vl_node_purged(vl_node_at(r, left)) == purged;
	right_in = right != VL_NIL && vl_node_at(r, right)->start == me &&
		   vl_node_purged(vl_node_at(r, right)) == purged;

	if (left_in)
		keep = left;
	else if (first != VL_NIL)
		keep = first;
	else if (right_in)
		keep = right;
	else if (spare != VL_NIL)
		keep = spare;
	else
		return -ENOMEM;
	fs = left_in ? vl_node_at(r, left)->start : ms;
	fe = right_in ? vl_node_at(r, right)->end : me;

	if (keep == spare) {
		struct vl_node *n = vl_node_w(r, spare);
		int err;

		if (n == NULL)
			return -EUCLEAN; /* not a node the caller could have had */
		n->meta = vl_meta(file, VL_NODE_LIVE, 0);
		set_range(r, spare, fs, fe, 0);
		/* right, when there is one, is the range after it: found, no second descent */
		err = right != VL_NIL ? vl_rb_insert_next_to(r, root, spare, right, 0)
				      : vl_rb_insert(r, root, spare);
		if (err) {
			n->meta = vl_meta(file, VL_NODE_PENDING, 0);
			vl_node_seal(r, n);
			return err;
		}
		c->keep_new = 1;
	} else {
		if (left_in)
			account(r, c, left, -1);
		/*
		 * The walk of the first look, again: at most as many steps, and
		 * only over ranges as that one found them (in order, meeting [s,
		 * e), purged only if the union is): links that lie can make it
		 * stray once the tree changes, and a purged range it strayed to,
		 * merged into an unpurged union, would be answered as intact.
		 */
		uint64_t after = 0;

		for (x = first; x != VL_NIL && steps-- > 0;) {
			uint32_t nx = x == last ? VL_NIL : vl_rb_next(r, x);

			if (x != first && (!vl_range_ok(r, x, file) || !in_walk(r, x, after, s, e, 1) ||
					   (vl_node_purged(vl_node_at(r, x)) && !purged)))
				break;
			after = vl_node_at(r, x)->end;
			account(r, c, x, -1);
			if (x != keep)
				drop(r, root, c, x);
			x = nx;
		}
		if (right_in) {
			account(r, c, right, -1);
			if (right != keep)
				drop(r, root, c, right);
		}
		set_range(r, keep, fs, fe, purged);
	}
	account(r, c, keep, +1);
	c->keep = keep;
	c->keep_aged = 1;
	if (purged) {
		/* the flag must not lie: the bytes that were not purged go now */
		c->punch_start = ms;
		c->punch_end = me;
	}
	return 0;
}

/* One function, over 80 lines, for the reason vl_ranges_mark is. */
int vl_ranges_unmark(const struct vl_region *r, uint32_t *root, uint32_t file, uint64_t s,
		     uint64_t e, uint32_t spare, struct vl_change *c)
{
	uint32_t first, x, prev, steps = 0;
	uint64_t after = 0;
	int split = 0;

	VL_ASSERT_HELD(r, &vl_file_at(r, file)->h.lock);
	memset(c, 0, sizeof(*c));
	first = vl_rb_end_at_least(r, *root, s, 1);
	if (first != VL_NIL && !vl_range_ok(r, first, file))
		return -EUCLEAN;
	for (x = first, prev = VL_NIL; x != VL_NIL && vl_node_at(r, x)->start < e;
	     prev = x, x = next_ok(r, x, file)) {
		/* in order, each ending after s (in_walk): a trim never stretches one */
		if (x == BAD || ++steps >= r->node_cap ||
		    !in_walk(r, x, prev == VL_NIL ? 0 : vl_node_at(r, prev)->end, s, e, 0))
			return -EUCLEAN;
		if (vl_node_at(r, x)->start < s && vl_node_at(r, x)->end > e)
			split = 1;
	}
	if (x == BAD)
		return -EUCLEAN;
	/*
	 * A range that holds [s, e) with room on both sides is the only one
	 * [s, e) meets, in a sound tree. In a tree that says otherwise, the
	 * split's insert (which may fail) could come after ranges were taken
	 * out: refuse before changing anything.
	 */
	if (split && steps != 1)
		return -EUCLEAN;
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
		struct vl_node *n = vl_node_at(r, x);
		uint32_t nx = steps > 0 ? vl_rb_next(r, x) : VL_NIL;
		uint64_t removed;

		after = n->end;
		c->was_purged |= vl_node_purged(n);
		if (s <= n->start && n->end <= e) {
			account(r, c, x, -1);
			drop(r, root, c, x);
			x = nx;
			continue;
		}
		if (n->start < s && n->end > e) {
			struct vl_node *sp = vl_node_w(r, spare);
			int err;

			/* the only range [s, e) meets (above): nothing has changed yet */
			if (sp == NULL)
				return -EUCLEAN;
			/* insert the right part first: a failure then changes nothing */
			sp->meta = vl_meta(file, VL_NODE_LIVE, vl_node_purged(n));
			sp->seq = n->seq;
			set_range(r, spare, e, n->end, vl_node_purged(n));
			err = vl_rb_insert_next_to(r, root, spare, x, 1);
			if (err) {
				sp->meta = vl_meta(file, VL_NODE_PENDING, 0);
				vl_node_seal(r, sp);
				return err;
			}
			removed = e - s;
			set_range(r, x, n->start, s, vl_node_purged(n));
			c->split = spare;
			c->split_of = x;
			c->d_ranges++;
			c->d_purged += vl_node_purged(n);
		} else if (n->start < s) {
			removed = n->end - s;
			set_range(r, x, n->start, s, vl_node_purged(n));
		} else {
			removed = e - n->start;
			set_range(r, x, e, n->end, vl_node_purged(n));
		}
		if (vl_node_purged(n))
			add_bytes(&c->d_pbytes, -1, removed);
		else
			add_bytes(&c->d_vbytes, -1, removed);
		x = nx;
	}
	return 0;
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

int vl_ranges_absorb(const struct vl_region *r, uint32_t *root, uint32_t file, uint32_t n,
		     struct vl_change *c)
{
	uint32_t first, last = VL_NIL, x, left, right, steps = 0;
	uint64_t s, e;
	int purged, err;

	VL_ASSERT_HELD(r, &vl_file_at(r, file)->h.lock);
	memset(c, 0, sizeof(*c));
	if (!vl_range_ok(r, n, file))
		return -EUCLEAN;
	s = vl_node_at(r, n)->start;
	e = vl_node_at(r, n)->end;
	purged = vl_node_purged(vl_node_at(r, n));

	/*
	 * First look: the run of ranges n overlaps (the union is purged if any
	 * part was), and the neighbours that touch the union; all validated
	 * before anything changes.
	 */
	first = vl_rb_end_at_least(r, *root, s, 1);
	left = first != VL_NIL ? prev_ok(r, first, file) : vl_rb_last(r, *root);
	for (x = first; x != VL_NIL && vl_node_at(r, x)->start < e; x = next_ok(r, x, file)) {
		if (x == BAD || !vl_range_ok(r, x, file) || ++steps >= r->node_cap ||
		    !in_walk(r, x, last == VL_NIL ? 0 : vl_node_at(r, last)->end, s, e, 0))
			return -EUCLEAN;
		purged |= vl_node_purged(vl_node_at(r, x));
		last = x;
	}
	if (x == BAD)
		return -EUCLEAN;
	right = x;
	if (right != VL_NIL && !vl_range_ok(r, right, file))
		return -EUCLEAN;
	if (last == VL_NIL)
		first = VL_NIL;
	if (left == BAD || (left != VL_NIL && !vl_range_ok(r, left, file)))
		return -EUCLEAN;
	if (first != VL_NIL) {
		if (vl_node_at(r, first)->start < s)
			s = vl_node_at(r, first)->start;
		if (vl_node_at(r, last)->end > e)
			e = vl_node_at(r, last)->end;
	}

	/* then the changes, in at most as many steps */
	for (x = first; x != VL_NIL && steps-- > 0;) {
		uint32_t nx = x == last ? VL_NIL : vl_rb_next(r, x);

		account(r, c, x, -1);
		drop(r, root, c, x);
		x = nx;
	}
	if (left != VL_NIL && vl_node_at(r, left)->end == s &&
	    vl_node_purged(vl_node_at(r, left)) == purged) {
		s = vl_node_at(r, left)->start;
		account(r, c, left, -1);
		drop(r, root, c, left);
	}
	if (right != VL_NIL && vl_node_at(r, right)->start == e &&
	    vl_node_purged(vl_node_at(r, right)) == purged) {
		e = vl_node_at(r, right)->end;
		account(r, c, right, -1);
		drop(r, root, c, right);
	}
	set_range(r, n, s, e, purged);
	err = vl_rb_insert(r, root, n);
	if (err)
		return err;
	account(r, c, n, +1);
	c->keep = n;
	return 0;
}
