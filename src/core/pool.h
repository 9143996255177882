/*
 * pool.h - what the region lock guards: the node and file allocators, the
 * least-recently-marked list (LRU) of unpurged ranges, the file table and
 * the counters. Every function here expects the region lock held, but
 * for vl_file_probe (none) and the spare of a file (its own lock).
 */
#ifndef VL_POOL_H
#define VL_POOL_H

#include "layout.h"
#include "ranges.h"

/* A PENDING node owned by `file`, or VL_NIL if the region is full. */
uint32_t vl_node_alloc(const struct vl_region *r, uint32_t file);
/* Free node n (unlinking it from the LRU if it is there). */
void vl_node_free(const struct vl_region *r, uint32_t n);

int vl_lru_linked(const struct vl_region *r, uint32_t n);
void vl_lru_unlink(const struct vl_region *r, uint32_t n);
void vl_lru_append(const struct vl_region *r, uint32_t n);
void vl_lru_insert_after(const struct vl_region *r, uint32_t after, uint32_t n);

/*
 * Apply what vl_ranges_* did to file `fi` (whose lock the caller holds
 * too): free the freed nodes, give a changed range the newest age, keep
 * the LRU holding exactly the live unpurged ranges, update the counters.
 * `spare` is freed unless the change used it.
 */
void vl_commit(const struct vl_region *r, uint32_t fi, const struct vl_change *c,
	       uint32_t spare);

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
 * A free slot for a new file, not yet findable; VL_NIL if full. *fresh is
 * set when the slot was never used: initialise its lock before publishing.
 */
uint32_t vl_file_take(const struct vl_region *r, int *fresh);
/* Make slot fi (from vl_file_take) the LIVE record of id, in the table. */
void vl_file_publish(const struct vl_region *r, uint32_t fi, const struct vl_ident *id);
/* Take and publish at once, for callers that never lock the slot (tests). */
uint32_t vl_file_create(const struct vl_region *r, const struct vl_ident *id, int *fresh);
/*
 * A file's kept spare: one PENDING node, so that a change needs the region
 * lock only to commit. Taken (and the record's field cleared) and kept
 * under the file's lock; a file's repair frees it with its other PENDING
 * nodes. vl_spare_take returns VL_NIL if there is none or it is unsound.
 */
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
 * Rebuild, from the nodes and files alone, everything the region lock
 * guards: free lists, LRU (in age order), file table, counters. For the
 * next holder of the lock after a holder died.
 */
void vl_pool_rebuild(const struct vl_region *r);

/*
 * Rebuild the tree and counters of file fi from the nodes that name it.
 * For the next holder of the file's lock after a holder died; the region
 * lock is held too.
 */
void vl_file_repair(const struct vl_region *r, uint32_t fi);

/* The file table's entry for fi's identity (pool.c, for rebuild.c). */
void vl_file_hash_insert(const struct vl_region *r, uint32_t fi);

#endif
