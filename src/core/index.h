/* SPDX-License-Identifier: MIT */
/*
 * index.h - the index of a file's ranges, as the runtime reaches it.
 *
 * What the runtime asks of one file's ranges besides the rules of DESIGN 3
 * themselves: walks in key order (the file's lock held, each range checked;
 * or no lock, for the command's listing), whether a range meets [s, e),
 * the oldest unpurged range and the next ones in age (a purge's batch),
 * the purge, the clear and the forgetting of unpurged ranges (each
 * reported in a struct vl_change, applied by vl_ix_commit), the restamp,
 * the check of what steers a purge, the repair, and a range put back as
 * it was (a moved file's). Callers see ranges (struct vl_ix_range) and
 * change reports, never what holds them: format 9 implements this over
 * its red-black tree and age list (rtree.h, ranges.h, pool.h), format 10
 * will over the leaves (leaves.h, doc/format10-plan.md step 5), changing
 * this file and not its callers.
 *
 * Static inline, as the walks and changes they stand for were written in
 * their callers: nothing adds a call (bench's callgrind counts).
 */
#ifndef VL_INDEX_H
#define VL_INDEX_H

#include <errno.h>

#include "layout.h"
#include "pool.h"
#include "ranges.h"
#include "rtree.h"

/* A range as a walk hands it out: a copy, read once. */
struct vl_ix_range {
	uint64_t start, end;
	uint32_t age; /* its MARK's stamp (DESIGN 10) */
	int purged;
};

/*
 * A walk of a file's ranges in key order. Format 9: the node next
 * handed out, and the steps left before the walk's bound.
 */
struct vl_ix_walk {
	const struct vl_region *r;
	uint32_t file;
	uint32_t at;
	uint32_t left;
};

static inline void vl_ix_copy(const struct vl_node *x, struct vl_ix_range *out)
{
	out->start = x->start;
	out->end = x->end;
	out->purged = vl_node_purged(x);
	out->age = x->seq;
}

/*
 * Walk file fi's ranges, its lock held: at most as many as the region
 * holds nodes (a tree scribbled into a loop ends there).
 */
static inline void vl_ix_walk_init(struct vl_ix_walk *w, const struct vl_region *r, uint32_t fi)
{
	w->r = r;
	w->file = fi;
	w->at = vl_rb_first(r, vl_file_at(r, fi)->h.root);
	w->left = r->node_cap;
}

/*
 * The walk's next range into *x: 1; 0 at the end; -EUCLEAN, a range that
 * is not a sound one of the file, or the bound reached with a range still
 * ahead (the walk stays there). A file cannot hold more ranges than the
 * region has nodes: a walk past that is in a loop, and what follows the
 * loop it never reaches, so ending there quietly would pass for the end
 * (DESIGN 18).
 */
static inline int vl_ix_walk_next(struct vl_ix_walk *w, struct vl_ix_range *x)
{
	if (w->at == VL_NIL)
		return 0;
	if (w->left == 0 || !vl_range_ok(w->r, w->at, w->file))
		return -EUCLEAN;
	vl_ix_copy(vl_node_at(w->r, w->at), x);
	w->left--;
	w->at = vl_rb_next(w->r, w->at);
	return 1;
}

/*
 * Walk file fi's ranges with NO lock (the command's listing): what is read
 * may be changing under the walk, so nothing read is trusted but its
 * bound, the file's count of ranges (plus one) and never more than the
 * region's nodes; each range is copied before use, and the caller throws
 * away what it read unless the file's version says no change came
 * between.
 */
static inline void vl_ix_peek_init(struct vl_ix_walk *w, const struct vl_region *r, uint32_t fi)
{
	const struct vl_file *f = vl_file_at(r, fi);
	uint32_t bound = f->h.nranges + 1;

	w->r = r;
	w->file = fi;
	w->at = vl_rb_first(r, f->h.root);
	w->left = r->node_cap == 0 ? 0 : bound < r->node_cap - 1 ? bound : r->node_cap - 1;
}

/*
 * The next range as it reads now: 1; 0 at the end; -EUCLEAN, the bound
 * reached with a range still ahead: a loop, or a change under the walk
 * (the caller's check of the version tells which).
 */
static inline int vl_ix_peek_next(struct vl_ix_walk *w, struct vl_ix_range *x)
{
	if (w->at == VL_NIL)
		return 0;
	if (w->left == 0)
		return -EUCLEAN;
	vl_ix_copy(vl_node_at(w->r, w->at), x);
	w->left--;
	w->at = vl_rb_next(w->r, w->at);
	return 1;
}

/* Has file fi no range (its lock held)? */
static inline int vl_ix_empty(const struct vl_region *r, uint32_t fi)
{
	return vl_file_at(r, fi)->h.root == VL_NIL;
}

/*
 * Does a range of file fi (its lock held) hold a byte of [s, e), s < e?
 * 1, 0, or -EUCLEAN (the range found, or the one its descent passed last,
 * is not a sound one of the file: vl_rb_end_at_least_checked).
 */
static inline int vl_ix_any_in(const struct vl_region *r, uint32_t fi, uint64_t s, uint64_t e)
{
	uint32_t n;

	if (vl_rb_end_at_least_checked(r, vl_file_at(r, fi)->h.root, fi, s, 1, &n) != 0)
		return -EUCLEAN;
	return n != VL_NIL && vl_node_at(r, n)->start < e;
}

/* ---- in age order: a purge ---- */

/*
 * The purge's walk in age order, oldest first (the file's lock held, the
 * order checked first: vl_ix_check_steering). Format 9: a node of the
 * file's age list, VL_NIL at its end.
 */
struct vl_ix_aged {
	uint32_t at;
};

/* A walk in age order at no range (past the end). */
#define VL_IX_AGED_END ((struct vl_ix_aged){ .at = VL_NIL })

/* Start at file fi's oldest unpurged range: 1, or 0 if it has none. */
static inline int vl_ix_oldest(const struct vl_region *r, uint32_t fi, struct vl_ix_aged *a)
{
	a->at = vl_file_at(r, fi)->h.lru_head;
	return a->at != VL_NIL;
}

/* The age of a's range: 1 and *age, or 0 if a is at none. */
static inline int vl_ix_aged_age(const struct vl_region *r, const struct vl_ix_aged *a,
				 uint32_t *age)
{
	if (a->at == VL_NIL || a->at >= r->node_cap)
		return 0;
	*age = vl_node_at(r, a->at)->seq;
	return 1;
}

/* Is file fi's oldest unpurged range (its order checked) of this age? */
static inline int vl_ix_oldest_is(const struct vl_region *r, uint32_t fi, uint32_t age)
{
	struct vl_ix_aged a;
	uint32_t got;

	return vl_ix_oldest(r, fi, &a) && vl_ix_aged_age(r, &a, &got) && got == age;
}

/*
 * Flag a's range purged, joined with purged ranges it touches (c: its
 * extent to punch, the change to commit), and move a on to the next in
 * age (none, if the two ranges' links disagree: the next visit's check
 * sees it). 0, or -EUCLEAN (nothing changed).
 */
static inline int vl_ix_purge_next(const struct vl_region *r, uint32_t fi, struct vl_ix_aged *a,
				   struct vl_change *c)
{
	uint32_t n = a->at;
	uint32_t next = vl_node_at(r, n)->next; /* unpurged: no merge frees it */
	int err;

	if (next != VL_NIL && (next >= r->node_cap || vl_node_at(r, next)->prev != n))
		next = VL_NIL;
	err = vl_ranges_purge(r, &vl_file_at(r, fi)->h.root, fi, n, c);
	if (err == 0)
		a->at = next;
	return err;
}

/*
 * Are the fields of file fi that steer a purge sound (its lock held)?
 * 0; 1, only its published age was wrong (mended); -EUCLEAN: the index
 * needs vl_ix_repair. (Format 9: vl_lru_check.)
 */
static inline int vl_ix_check_steering(const struct vl_region *r, uint32_t fi)
{
	return vl_lru_check(r, fi);
}

/* ---- a reservation, and changes that take one ---- */

/*
 * What one change of a file may need, had before the change begins, so
 * that a change short of room fails having changed nothing. Format 9: a
 * spare node of the file's (PENDING), VL_NIL none.
 */
struct vl_ix_res {
	uint32_t node;
};

/* region.c: the region's allocator as the runtime calls it (its pages made present). */
uint32_t vl_node_get(const struct vl_region *r, uint32_t fi);

/* From what file fi kept for its changes (its lock held): 1 if had. */
static inline int vl_ix_reserve_kept(const struct vl_region *r, uint32_t fi,
				     struct vl_ix_res *res)
{
	res->node = vl_spare_take(r, fi);
	return res->node != VL_NIL;
}

/* From the region, no lock: 1 if had, 0 if it is full or its file system is. */
static inline int vl_ix_reserve_new(const struct vl_region *r, uint32_t fi,
				    struct vl_ix_res *res)
{
	res->node = vl_node_get(r, fi);
	return res->node != VL_NIL;
}

/* Is res had (a change short of room without it fails)? */
static inline int vl_ix_reserved(const struct vl_ix_res *res)
{
	return res->node != VL_NIL;
}

/*
 * The region looking full (the region lock held: one sweeper at a time):
 * find what processes killed in the middle of a take or a give lost, then
 * reserve from the region again, else from what another file kept. 1 if
 * had; *found: what the sweep found again.
 */
static inline int vl_ix_reserve_swept(const struct vl_region *r, uint32_t fi,
				      struct vl_ix_res *res, uint32_t *found)
{
	*found = vl_nodes_sweep(r);
	res->node = VL_NIL;
	if (*found > 0)
		vl_ix_reserve_new(r, fi, res);
	if (res->node == VL_NIL)
		res->node = vl_spare_steal(r, fi);
	return res->node != VL_NIL;
}

/* Give back what no change used. */
static inline void vl_ix_release(const struct vl_region *r, struct vl_ix_res *res)
{
	vl_node_free(r, res->node);
	res->node = VL_NIL;
}

/*
 * [s, e), purged or not, put into file fi (its lock held) with age `age`
 * and committed: joined with what it overlaps or touches as a MARK joins
 * (then the union flagged purged if it was, joined with purged ranges it
 * touches); nothing is punched. For a file's ranges moved into a new
 * region. 0; or an error, nothing changed and res given back.
 */
static inline int vl_ix_put(const struct vl_region *r, uint32_t fi, uint64_t s, uint64_t e,
			    int purged, uint32_t age, struct vl_ix_res *res)
{
	struct vl_file *f = vl_file_at(r, fi);
	struct vl_change c, p;
	int err = vl_ranges_mark(r, &f->h.root, fi, s, e, res->node, &c);

	if (err) {
		vl_ix_release(r, res);
		return err;
	}
	c.age = age;
	vl_commit(r, fi, &c, res->node);
	res->node = VL_NIL;
	if (purged && c.keep != VL_NIL && vl_ranges_purge(r, &f->h.root, fi, c.keep, &p) == 0)
		vl_commit(r, fi, &p, VL_NIL);
	return 0;
}

/*
 * MARK [s, e) of file fi (its lock held), with what res holds should the
 * change need it: 0, -ENOMEM (it needed it and res holds nothing; nothing
 * changed) or -EUCLEAN. Commit it with vl_ix_commit_res, error or not.
 */
static inline int vl_ix_mark(const struct vl_region *r, uint32_t fi, uint64_t s, uint64_t e,
			     const struct vl_ix_res *res, struct vl_change *c)
{
	return vl_ranges_mark(r, &vl_file_at(r, fi)->h.root, fi, s, e, res->node, c);
}

/*
 * UNMARK [s, e) of file fi (its lock held), reserving from what the file
 * kept only once it knows the change splits a range, before anything
 * changes (most do not): -ENOMEM, it split one and the file kept nothing:
 * reserve, and vl_ix_unmark. Else as vl_ix_mark.
 */
static inline int vl_ix_unmark_reserving(const struct vl_region *r, uint32_t fi, uint64_t s,
					 uint64_t e, struct vl_ix_res *res, struct vl_change *c)
{
	return vl_ranges_unmark_taking(r, &vl_file_at(r, fi)->h.root, fi, s, e, &res->node, c);
}

static inline int vl_ix_unmark(const struct vl_region *r, uint32_t fi, uint64_t s, uint64_t e,
			       const struct vl_ix_res *res, struct vl_change *c)
{
	return vl_ranges_unmark(r, &vl_file_at(r, fi)->h.root, fi, s, e, res->node, c);
}

/*
 * Apply change c of file fi (its lock held; pool.h vl_commit says what):
 * what the change did not use of res is kept by the file for its next.
 */
static inline void vl_ix_commit_res(const struct vl_region *r, uint32_t fi,
				    const struct vl_change *c, const struct vl_ix_res *res)
{
	vl_commit(r, fi, c, res->node);
}

/* ---- changes that need no reservation ---- */

/* Take every range out (a gone file): 0, or -EUCLEAN (nothing changed). */
static inline int vl_ix_clear(const struct vl_region *r, uint32_t fi, struct vl_change *c)
{
	return vl_ranges_clear(r, &vl_file_at(r, fi)->h.root, fi, c);
}

/* Take the unpurged ranges out, keep the purged ones (ranges.h says why). */
static inline int vl_ix_forget_unpurged(const struct vl_region *r, uint32_t fi,
					struct vl_change *c)
{
	return vl_ranges_forget_unpurged(r, &vl_file_at(r, fi)->h.root, fi, c);
}

/* Apply change c of file fi (its lock held; pool.h vl_commit says what). */
static inline void vl_ix_commit(const struct vl_region *r, uint32_t fi, const struct vl_change *c)
{
	vl_commit(r, fi, c, VL_NIL);
}

/*
 * Keep file fi's ranges' ages within VL_AGE_RESTAMP_MS of now (DESIGN 10;
 * its lock held): how many were restamped.
 */
static inline uint32_t vl_ix_restamp(const struct vl_region *r, uint32_t fi, uint32_t now)
{
	return vl_lru_restamp(r, fi, now);
}

/*
 * Make file fi's index whole again from what holds its ranges, after a
 * holder died or its order was found unsound (its lock and the region
 * lock held; pool.h vl_file_repair).
 */
static inline void vl_ix_repair(const struct vl_region *r, uint32_t fi, uint32_t now)
{
	vl_file_repair(r, fi, now);
}

#endif
