/* SPDX-License-Identifier: MIT */
/*
 * ranges.h - the rules of DESIGN 3 on the ranges of one file.
 *
 * Pure logic: these functions change one file's tree and report what they
 * did in a struct vl_change; the caller, holding the region lock, then
 * applies the report to what the region shares (LRU, free list, counters).
 * The caller holds the file's lock throughout.
 *
 * Every node is validated (sum, state, owner) before anything is changed,
 * so a corrupt tree gives -EUCLEAN and is left as it was found.
 */
#ifndef VL_RANGES_H
#define VL_RANGES_H

#include "layout.h"
#include "rtree.h" /* vl_range_ok */

struct vl_change {
	uint32_t keep;          /* MARK, purge: the range that now holds the bytes */
	uint8_t keep_new;       /* keep is the spare, newly inserted */
	uint8_t keep_aged;      /* keep takes a new age: age */
	uint8_t was_purged;     /* UNMARK: a byte it removed had been purged */
	uint8_t pad;
	uint32_t split;         /* UNMARK: the spare now holds the right part of... */
	uint32_t split_of;      /* ...this range, and shares its age */
	uint32_t freed;         /* nodes out of the tree, chained by ->left */
	uint32_t age;           /* MARK: keep's age if keep_aged, set by the caller after
				   vl_ranges_mark (vl_age_stamp of its clock: DESIGN 10) */
	uint64_t punch_start;   /* bytes to punch now; empty if start == end */
	uint64_t punch_end;
	int64_t d_vbytes;       /* change of bytes in unpurged ranges */
	int64_t d_pbytes;       /* change of bytes in purged ranges */
	int32_t d_ranges;
	int32_t d_purged;       /* change of the number of purged ranges */
};

/*
 * MARK [s, e). spare: a PENDING node of this file, or VL_NIL; it is used
 * (c->keep_new) only when no existing range absorbs the new one. Returns
 * 0, -ENOMEM (a node was needed and spare is VL_NIL; nothing changed) or
 * -EUCLEAN.
 */
int vl_ranges_mark(const struct vl_region *r, uint32_t *root, uint32_t file, uint64_t s,
		   uint64_t e, uint32_t spare, struct vl_change *c);

/* UNMARK [s, e). spare: as above, used (c->split) to split a range. */
int vl_ranges_unmark(const struct vl_region *r, uint32_t *root, uint32_t file, uint64_t s,
		     uint64_t e, uint32_t spare, struct vl_change *c);
/*
 * The same, taking a spare of the file's chunk (vl_spare_take) only once
 * it knows the UNMARK splits a range, before anything changes: *spare is
 * that node (the caller's, to commit), or VL_NIL. -ENOMEM: a split and no
 * spare there; get one and call vl_ranges_unmark.
 */
int vl_ranges_unmark_taking(const struct vl_region *r, uint32_t *root, uint32_t file,
			    uint64_t s, uint64_t e, uint32_t *spare, struct vl_change *c);

/*
 * Flag range n purged, and merge it with purged neighbours that touch it.
 * c->punch_* is n's extent. Returns 0, or -EUCLEAN.
 */
int vl_ranges_purge(const struct vl_region *r, uint32_t *root, uint32_t file, uint32_t n,
		    struct vl_change *c);

/*
 * Take the unpurged ranges out of the tree, keep the purged ones: their
 * bytes are intact, so they may stop being volatile without anyone's
 * UNMARK being misled. Returns 0, or -EUCLEAN (nothing changed).
 */
int vl_ranges_forget_unpurged(const struct vl_region *r, uint32_t *root, uint32_t file,
			      struct vl_change *c);

/* Take every range out of the tree (into c->freed). */
int vl_ranges_clear(const struct vl_region *r, uint32_t *root, uint32_t file,
		    struct vl_change *c);

/*
 * Put LIVE node n, which is in no tree, back into the tree, merging it
 * with every range it overlaps or touches in the same state (purged if any
 * of them was). For repair after a crash. Returns 0, or -EUCLEAN.
 */
int vl_ranges_absorb(const struct vl_region *r, uint32_t *root, uint32_t file, uint32_t n,
		     struct vl_change *c);

#endif
