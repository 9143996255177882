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
 * A PENDING node owned by `file`, or VL_NIL if the region is full; no lock
 * on the region, file's held (or no one else's use of it: tests). An IDLE
 * node of the file's chunk (vl_spare_take), else the first node of a
 * chunk (VL_CHUNK, layout.h) taken from the region, whose other nodes
 * become file's IDLE ones and the chunk the file's. _below hands out a chunk never used only
 * below limit (the slots whose pages are in memory: region.c);
 * vl_node_alloc below the capacity.
 */
uint32_t vl_node_alloc(const struct vl_region *r, uint32_t file);
uint32_t vl_node_alloc_below(const struct vl_region *r, uint32_t file, uint32_t limit);
/*
 * The node allocator as a MARK calls it (region.c vl_node_get): a PENDING
 * node of file fi, or VL_NIL when the region is full or when make_ready
 * fails. Chunks never used are handed out only below node_ready (their
 * pages are present); when none is left there, make_ready(base, off, len)
 * is asked to make the next VL_READY_CHUNK bytes of slots present (0, or
 * nonzero: it cannot, the region's file system is full) and the mark is
 * raised. No lock on the region: many processes may be here at once.
 */
#define VL_READY_CHUNK 65536 /* bytes of slots made ready at a time */
typedef int (*vl_make_ready_fn)(void *base, uint64_t off, uint64_t len);
uint32_t vl_node_take(const struct vl_region *r, uint32_t fi, vl_make_ready_fn make_ready);
/*
 * Node n, in no tree and no file's age order, made an IDLE node of the
 * file it names; its chunk back to the region if none of its nodes is in
 * use and it is not that file's chunk. No lock.
 */
void vl_node_free(const struct vl_region *r, uint32_t n);
/*
 * Empty the free list and push every free chunk again, and every chunk
 * whose nodes are all IDLE: what a process killed in the middle of an
 * allocation or a free lost is found. For when the region looks full;
 * one sweeper at a time (the region lock). Returns the nodes found, in
 * whole chunks.
 */
uint32_t vl_nodes_sweep(const struct vl_region *r);
/*
 * The end of the node slots ever used, for a walk that must meet every
 * node in use (a repair): not below the chunks the counters' node_hwm and
 * node_ready say, nor below a chunk past them that was ever handed out.
 */
uint32_t vl_nodes_used_end(const struct vl_region *r);


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
 * Of files whose ages tie (one tick of the clock: the order across files
 * is not known), file `last` (VL_NIL: none) is taken last: a MARK's own
 * purge takes another file's range rather than the one it just marked.
 * *age: its age; *second: the next oldest file's (0: none). A guess,
 * checked under the file's lock (vl_lru_check). One read of each record
 * below the high-water mark.
 */
uint32_t vl_pick_oldest(const struct vl_region *r, uint32_t now,
			int (*leave)(void *ctx, uint32_t fi), void *ctx, uint32_t last,
			uint32_t *age, uint32_t *second);

/*
 * Apply what vl_ranges_* did to file `fi`, with its lock held and no
 * other: let the freed nodes go (IDLE in their chunks: vl_spare_keep),
 * give a changed range the newest age, keep the file's
 * age order holding exactly its live unpurged ranges, update its counts
 * and, by atomic adds, the region's. `spare` is kept or freed unless the
 * change used it.
 */
void vl_commit(const struct vl_region *r, uint32_t fi, const struct vl_change *c,
	       uint32_t spare);
/* The region's part of a commit alone: its shared totals, by atomic adds. */
void vl_totals_add(const struct vl_region *r, const struct vl_change *c);

/*
 * A commit counts its change in the deltas of the slot its file's lock
 * names (struct vl_proc), folded into the shared totals when one reaches
 * these either way: the shared totals then lag the exact ones by at most
 * this much per slot.
 */
#define VL_FOLD_BYTES (1u << 20)
#define VL_FOLD_RANGES 64u

struct vl_totals {
	struct vl_u128 volatile_bytes;
	struct vl_u128 purged_bytes;
	uint32_t ranges;
	uint32_t ranges_purged;
};

/*
 * The region's totals, read with no lock: the shared ones plus the
 * deltas of every slot (own NULL: exact once no commit is under way;
 * 4,095 slots read) or of slot own alone (this process's: a guess that
 * lacks the other slots' deltas, each at most VL_FOLD_BYTES and
 * VL_FOLD_RANGES).
 */
void vl_totals_read(const struct vl_region *r, const struct vl_proc *own, struct vl_totals *t);
/*
 * Every slot's deltas set to 0, for a recount that is about to write the
 * totals counted from the files (every file lock held, so no commit is
 * adding): else the bytes of those deltas would be counted twice.
 */
void vl_totals_forget_slots(const struct vl_region *r);

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
/*
 * The end of the file slots ever handed out: file_hwm, clamped to the
 * table, and raised past every slot from there on that was (released or
 * not): what a walk that must meet every record, and a new record's
 * take, go by. The region lock held.
 */
uint32_t vl_files_used_end(const struct vl_region *r);
/* Make slot fi (from vl_file_take) the LIVE record of id, in the table. */
void vl_file_publish(const struct vl_region *r, uint32_t fi, const struct vl_ident *id);
/* Take and publish at once, for callers that never lock the slot (tests). */
uint32_t vl_file_create(const struct vl_region *r, const struct vl_ident *id, int *fresh);
/*
 * A file's spares: the IDLE nodes of its chunk (vl_file_hdr.chunk), so
 * that a change of a file takes no node from the region's free list (a
 * cache line all processes would share) in the common case, and writes
 * no cache line another file's nodes are on. Taken and kept under the
 * file's lock. vl_spare_take returns VL_NIL if its chunk has none.
 * vl_spare_keep makes a PENDING node of fi IDLE (kept in its chunk, which
 * becomes the file's if the file's has no IDLE node left; the chunk back
 * to the region if that left it unused).
 */
uint32_t vl_spare_take(const struct vl_region *r, uint32_t fi);
void vl_spare_keep(const struct vl_region *r, uint32_t fi, uint32_t n);
/*
 * The region is full: an IDLE node of any file, made a PENDING node
 * of file `to` (whose lock the caller holds, and the region lock), or
 * VL_NIL. One read of each node below the high-water mark.
 */
uint32_t vl_spare_steal(const struct vl_region *r, uint32_t to);
/*
 * The files, other than mine, that hold PENDING nodes (below the node
 * high-water mark, each once, at most cap of them, in slot order from
 * where the last call that found cap of them stopped, round to there):
 * the only files whose repair gives nodes back. One read of each node; no
 * lock.
 */
uint32_t vl_pending_owners(const struct vl_region *r, uint32_t mine, uint32_t *owner,
			   uint32_t cap);
/* Did change c put spare into a tree? */
int vl_spare_used(const struct vl_change *c, uint32_t spare);
/* File fi's chunk back to the region if unused, and the file left with none (its lock held). */
void vl_chunk_let_go(const struct vl_region *r, uint32_t fi);

/* Free file fi (out of the table, no ranges left; its chunk let go). */
void vl_file_release(const struct vl_region *r, uint32_t fi);

/*
 * Rebuild, from the file records alone, everything the region lock
 * guards: the file table, its free list and count. For the next holder
 * of the lock after a holder died.
 */
void vl_pool_rebuild(const struct vl_region *r);

/*
 * Rebuild the tree, age order and counts of file fi from the
 * nodes that name it, and correct the region's totals by what changed.
 * For the next holder of the file's lock after a holder died; the region
 * lock is held too (a MARK stealing spares holds it). now: the age clock
 * (a range put in the tree by a commit that never came takes it).
 */
void vl_file_repair(const struct vl_region *r, uint32_t fi, uint32_t now);

/* The file table's entry for fi's identity (pool.c, for rebuild.c). */
void vl_file_hash_insert(const struct vl_region *r, uint32_t fi);

#endif
