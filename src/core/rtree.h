/* SPDX-License-Identifier: MIT */
/*
 * rtree.h - a red-black tree of ranges, linked by index, ordered by start.
 *
 * The ranges of one file never overlap, so ordering by start also orders
 * by end, and "the first range that ends after x" is one descent.
 *
 * The tree lives in shared memory that another process may have scribbled
 * on: every descent and every walk is bounded by VL_RB_MAX_DEPTH or by the
 * number of slots, and answers -EUCLEAN (or VL_NIL) instead of looping.
 * Nothing here locks; the caller holds the file's lock.
 */
#ifndef VL_RTREE_H
#define VL_RTREE_H

#include "layout.h"

#include <errno.h>

/* A red-black tree of 2^31 nodes is at most 62 deep. */
#define VL_RB_MAX_DEPTH 64

int vl_rb_insert(const struct vl_region *r, uint32_t *root, uint32_t n);
/*
 * Insert n right after (after) or right before node x, which is in the
 * tree: for a caller that found x already and knows n goes next to it
 * (the walk to x is the descent an insert would repeat). -EUCLEAN on a
 * bad index.
 */
int vl_rb_insert_next_to(const struct vl_region *r, uint32_t *root, uint32_t n, uint32_t x,
			 int after);
void vl_rb_erase(const struct vl_region *r, uint32_t *root, uint32_t n);

uint32_t vl_rb_first(const struct vl_region *r, uint32_t root);
uint32_t vl_rb_last(const struct vl_region *r, uint32_t root);
uint32_t vl_rb_next(const struct vl_region *r, uint32_t n);
uint32_t vl_rb_prev(const struct vl_region *r, uint32_t n);

/* The first range whose end is >= x (strict: > x), or VL_NIL. */
uint32_t vl_rb_end_at_least(const struct vl_region *r, uint32_t root, uint64_t x,
			    int strict);
/*
 * The same, and in *before the last range the descent passed on its
 * right, the one before the answer in a sound tree (VL_NIL: none): the
 * answer rests on that range's end as much as on its own, and a caller
 * that trusts the answer checks both (DESIGN 10). A descent stopped short
 * of a leaf (a link or the root past the node array, or the depth bound)
 * puts there an index that is no node (node_cap), which fails that check.
 */
uint32_t vl_rb_end_at_least_after(const struct vl_region *r, uint32_t root, uint64_t x,
				  int strict, uint32_t *before);

/* Is node n a sound range of this file? */
static inline int vl_range_ok(const struct vl_region *r, uint32_t n, uint32_t file)
{
	const struct vl_node *x;

	if (n == VL_NIL || n >= r->node_cap)
		return 0;
	x = &r->nodes[n];
	return x->check == vl_node_sum_at(x, n) && x->start < x->end &&
	       vl_node_state(x) == VL_NODE_LIVE && vl_node_file(x) == file;
}

/*
 * The descent as every caller that acts on its answer takes it: the first
 * range of file's tree whose end is >= x (strict: > x) into *n (VL_NIL:
 * none), 0; or -EUCLEAN, the answer or the range the descent passed last
 * on its right is not a sound range of the file. That range is checked
 * because the descent took it, by its end alone, as ending before x: an
 * end a stray write lowered (its sum left wrong) hides a range that holds
 * the bytes, purged maybe, and MARK would not join it, UNMARK would say 0
 * over its punched bytes, GET_PIN_STATUS would say pinned
 * (tests/shell/scribbled-descent.sh, scribbled-pinstatus.sh; DESIGN 10).
 * The last one is enough: after a range whose end was lowered every range
 * the descent meets starts past its true end, beyond x, so none sound is
 * passed on the right after it. A descent stopped short of a leaf, at an
 * index past the node array (a scribbled root or link), is -EUCLEAN too:
 * not "no range there" (tests/shell/scribbled-root.sh).
 */
static inline int vl_rb_end_at_least_checked(const struct vl_region *r, uint32_t root,
					     uint32_t file, uint64_t x, int strict, uint32_t *n)
{
	uint32_t before;

	*n = vl_rb_end_at_least_after(r, root, x, strict, &before);
	if ((before != VL_NIL && !vl_range_ok(r, before, file)) ||
	    (*n != VL_NIL && !vl_range_ok(r, *n, file)))
		return -EUCLEAN;
	return 0;
}

/*
 * Walk the whole tree and check it: links, colours, black height, order,
 * disjointness, node sums, state and owner. Returns the number of nodes,
 * or -EUCLEAN at the first fault.
 */
long vl_rb_check(const struct vl_region *r, uint32_t root, uint32_t file);

#endif
