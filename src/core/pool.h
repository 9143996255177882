/* SPDX-License-Identifier: MIT */
/*
 * pool.h - the shared parts of a region: the node allocator and the
 * region's ages and counters (no lock: atomic operations), each file's
 * unpurged ranges in age order and its spares (the file's lock), the file
 * table (the region lock; vl_file_probe none).
 */
#ifndef VL_POOL_H
#define VL_POOL_H

#include "layout.h"
#include "ranges.h"

/*
 * A PENDING node owned by `file`, or VL_NIL if the region is full; no lock.
 * _below hands out a slot never used only below limit (the slots whose
 * pages are in memory: region.c); vl_node_alloc below the capacity.
 */
uint32_t vl_node_alloc(const struct vl_region *r, uint32_t file);
uint32_t vl_node_alloc_below(const struct vl_region *r, uint32_t file, uint32_t limit);
/*
 * The node allocator as a MARK calls it (region.c vl_node_get): a PENDING
 * node of file fi, or VL_NIL when the region is full or when make_ready
 * fails. Slots never used are handed out only below node_ready (their
 * pages are present); when none is left there, make_ready(base, off, len)
 * is asked to make the next VL_READY_CHUNK bytes of slots present (0, or
 * nonzero: it cannot, the region's file system is full) and the mark is
 * raised. No lock: many processes may be here at once.
 */
#define VL_READY_CHUNK 65536 /* bytes of slots made ready at a time */
typedef int (*vl_make_ready_fn)(void *base, uint64_t off, uint64_t len);
uint32_t vl_node_take(const struct vl_region *r, uint32_t fi, vl_make_ready_fn make_ready);
/* Free node n, which is in no tree and no file's age order; no lock. */
void vl_node_free(const struct vl_region *r, uint32_t n);
/*
 * Empty the free list and push every free node again: what a process
 * killed in the middle of an allocation or a free lost is found. For when
 * the region looks full; one sweeper at a time (the region lock). Returns
 * the free nodes found.
 */
uint32_t vl_nodes_sweep(const struct vl_region *r);


/* File fi's unpurged ranges in age order, oldest first (its lock held). */
int vl_lru_linked(const struct vl_region *r, uint32_t fi, uint32_t n);
void vl_lru_unlink(const struct vl_region *r, uint32_t fi, uint32_t n);
void vl_lru_append(const struct vl_region *r, uint32_t fi, uint32_t n);
void vl_lru_insert_after(const struct vl_region *r, uint32_t fi, uint32_t after, uint32_t n);
/* Store the age of fi's oldest unpurged range where purgers look for it. */
void vl_lru_publish(const struct vl_region *r, uint32_t fi);

/*
 * Are the fields of file fi that steer a purge what its age order says
 * (its lock held)? lru_head and lru_tail: both VL_NIL, or each a sound
 * LIVE unpurged range of fi with an age, the head with no prev, the tail
 * with no next, the links between each end and its neighbour agreeing
 * both ways (both VL_NIL: no unpurged range by its counts either);
 * oldest: the head's age (0: none). None of them is in the record's sum
 * (vl_file_sum), so a scribble there is only seen here. Returns 0 if so;
 * 1 if only oldest was wrong (it is the head's age now); -EUCLEAN if the
 * order is wrong: vl_file_repair rebuilds it. Four nodes read.
 */
int vl_lru_check(const struct vl_region *r, uint32_t fi);
/*
 * Bring the ages of file fi's ranges older than VL_AGE_RESTAMP_MS back
 * from now up to that limit, from its oldest on, so that none reaches the
 * wrap (DESIGN 10): they keep their place in its age order, lose their
 * order against each other's files' as old, and stay older than every
 * other range. Its lock held. Returns how many were restamped.
 */
uint32_t vl_lru_restamp(const struct vl_region *r, uint32_t fi, uint32_t now);
/*
 * The LIVE file whose published age (oldest) is the oldest of all for a
 * reader whose age clock reads now (vl_age_older), read with no lock,
 * leaving out those leave(ctx, fi) says to (NULL: none): VL_NIL if none.
 * *age: its age; *second: the next oldest file's (0: none). A guess,
 * checked under the file's lock (vl_lru_check). One read of each record
 * below the high-water mark.
 */
uint32_t vl_pick_oldest(const struct vl_region *r, uint32_t now,
			int (*leave)(void *ctx, uint32_t fi), void *ctx, uint32_t *age,
			uint32_t *second);

/*
 * Apply what vl_ranges_* did to file `fi`, with its lock held and no
 * other: let the freed nodes go (kept as the file's spares, VL_SPARES at
 * most, or freed), give a changed range the newest age, keep the file's
 * age order holding exactly its live unpurged ranges, update its counts
 * and, by atomic adds, the region's. `spare` is kept or freed unless the
 * change used it.
 */
void vl_commit(const struct vl_region *r, uint32_t fi, const struct vl_change *c,
	       uint32_t spare);
/* The region's part of a commit alone: its totals, by atomic adds. */
void vl_totals_add(const struct vl_region *r, const struct vl_change *c);

/* ---- the file table ---- */

/*
 * Find the file with exactly this identity (records of other files with
 * the same device and inode number are other files). Returns 0 and *fi
 * (VL_NIL if none), or -EUCLEAN if the table is corrupt.
 */
int vl_file_lookup(const struct vl_region *r, const struct vl_ident *id, uint32_t *fi);
/*
 * A guess at the slot of the file with this identity, made with no lock
 * held (VL_NIL: none seen). Check it under the slot's lock: LIVE, sound,
 * this identity. A miss proves nothing; ask vl_file_lookup.
 */
uint32_t vl_file_probe(const struct vl_region *r, const struct vl_ident *id);
/*
 * Does record fi, read as vl_file_probe reads (no lock), seem to be file
 * id's? Inline: a MARK or UNMARK asks it of its thread's last record.
 */
static inline int vl_file_seems(const struct vl_region *r, uint32_t fi,
				const struct vl_ident *id)
{
	struct vl_ident a;

	if (fi == VL_NIL || fi >= r->file_cap ||
	    __atomic_load_n(&r->files[fi].h.state, __ATOMIC_ACQUIRE) != VL_FILE_LIVE)
		return 0;
	/* read while a publisher may be writing it: relaxed loads, judged under the lock */
	vl_ident_load(&a, &r->files[fi].h.ident);
	return vl_ident_same(id, &a);
}
/*
 * A free slot for a new file, not yet findable; VL_NIL if full. *fresh is
 * set when the slot was never used: initialise its lock before publishing.
 */
uint32_t vl_file_take(const struct vl_region *r, int *fresh);
/* Make slot fi (from vl_file_take) the LIVE record of id, in the table. */
void vl_file_publish(const struct vl_region *r, uint32_t fi, const struct vl_ident *id);
/* Take and publish at once, for callers that never lock the slot (tests). */
uint32_t vl_file_create(const struct vl_region *r, const struct vl_ident *id, int *fresh);
/*
 * A file's spares: up to VL_SPARES PENDING nodes, so that a change of a
 * file takes no node from the region's free list (a cache line all
 * processes would share) in the common case. Taken and kept under the
 * file's lock; a file's repair frees them with its other PENDING nodes.
 * vl_spare_take returns VL_NIL if there is none or it is unsound.
 */
#define VL_SPARES 2
uint32_t vl_spare_take(const struct vl_region *r, uint32_t fi);
void vl_spare_keep(const struct vl_region *r, uint32_t fi, uint32_t n);
/*
 * The region is full: another file's kept spare, made a PENDING node of
 * file `to` (whose lock the caller holds), or VL_NIL. A crash between the
 * two steps leaves the node PENDING and unkept: lost until its file's
 * next repair.
 */
uint32_t vl_spare_steal(const struct vl_region *r, uint32_t to);
/* Did change c put spare into a tree? */
int vl_spare_used(const struct vl_change *c, uint32_t spare);

/* Free file fi (out of the table, no ranges left; its spare freed). */
void vl_file_release(const struct vl_region *r, uint32_t fi);

/*
 * Rebuild, from the file records alone, everything the region lock
 * guards: the file table, its free list and count. For the next holder
 * of the lock after a holder died.
 */
void vl_pool_rebuild(const struct vl_region *r);

/*
 * Rebuild the tree, age order, spares and counts of file fi from the
 * nodes that name it, and correct the region's totals by what changed.
 * For the next holder of the file's lock after a holder died; the region
 * lock is held too (a MARK stealing spares holds it). now: the age clock
 * (a range put in the tree by a commit that never came takes it).
 */
void vl_file_repair(const struct vl_region *r, uint32_t fi, uint32_t now);

/* The file table's entry for fi's identity (pool.c, for rebuild.c). */
void vl_file_hash_insert(const struct vl_region *r, uint32_t fi);

#endif
