/* SPDX-License-Identifier: MIT */
/*
 * region.h - the shared region of this user: attach, validate, lock.
 */
#ifndef VL_REGION_H
#define VL_REGION_H

#include "core/layout.h"

#include <stddef.h>

/*
 * Map the region file at path. With create, make it if it is missing
 * (0600, O_EXCL) with the capacities given. Returns 0, or -errno:
 * -EINVAL (path is not absolute), -EACCES (not ours, symlink, not
 * regular, group/other access), -EPROTO (incompatible format), -EUCLEAN
 * (corrupt), or what the system said.
 */
#define VL_OPEN_CREATE 1 /* make it if it is missing */
#define VL_OPEN_CHOSEN 2 /* path is the default place (default_place.c), not VOLATILE_REGION */
int vl_region_open(const char *path, int create, uint32_t ranges, uint32_t files,
		   struct vl_region *out);
void vl_region_unmap(struct vl_region *r);

/*
 * An existing region file, opened by the caller (a region found mapped by
 * another process: attach.c's settling). Checked as vl_region_open checks.
 */
int vl_region_open_fd(int fd, struct vl_region *out);

/*
 * The byte of the region's file (in the hole before VL_MAP_OFFSET) that
 * every user of a region of its user and name holds an OFD read lock on:
 * /proc/locks then shows who uses such a region, whoever can look into them.
 */
uint64_t vl_region_tag(const struct vl_region *r);

/*
 * The region of this process (VOLATILE_REGION, or the default), attached
 * on first use. Once a second it checks that the region is still the one
 * new processes find (its name, and for the default the place, may have
 * changed): if not, its records are moved into that one, which becomes
 * this process's region (move.c). -ESTALE while the region new processes
 * find is still waiting for older regions to be moved in.
 */
int vl_region_get(struct vl_region **out);
/* The same, with the clock (vl_now_ms) its caller read already. */
int vl_region_get_at(struct vl_region **out, uint64_t now_ms);
/*
 * For an UNMARK, which reads the clock only after its tree change: the
 * current region with no look at its age (vl_region_get_at's other
 * tests); then vl_region_confirm, with the clock read after the change
 * (DESIGN 16): 0 the answer from r stands (a look at r's name, read less
 * than a second before now_ms, found it the one new processes find), 1
 * this process followed to *next (do the UNMARK there too), -1 it cannot
 * be told (answer 1).
 */
int vl_region_get_unaged(struct vl_region **out);
int vl_region_confirm(const struct vl_region *r, uint64_t now_ms, struct vl_region **next);

/*
 * The gate of a punch through r (punch.h): the permit (an OFD read lock
 * that a region made anew waits for before it serves past older ones),
 * then vl_region_fresh (attach.c).
 */
struct vl_gate;
void vl_gate_init(struct vl_gate *g, const struct vl_region *r);

/* Has this process attached a region yet? One load; never attaches. */
int vl_region_attached(void);

/*
 * Open (or make) the region new processes of this user would open now
 * (VOLATILE_REGION, or default_place.c's choice): its name in path, which r keeps.
 */
int vl_region_open_wanted(char *path, size_t size, struct vl_region *r);

/*
 * Does r's name still lead to it, and is that still where new processes
 * look? 1 yes, 0 no, -1 cannot be told (a statx failed otherwise than
 * ENOENT).
 */
int vl_region_fresh(const struct vl_region *r);

/*
 * A region made anew waits (answers nothing) until every older region its
 * user's processes map is moved into it: look for them, move those that
 * can be opened here. 0 settled, or -ESTALE: some are left to their users.
 */
int vl_region_settle(const struct vl_region *cur);

/*
 * The locks (lock.c). If a holder died, the next locker repairs what the
 * lock guards before going on. Order: core/layout.h, struct vl_lock. Return 0
 * or -errno: -EAGAIN if a live holder kept it VOLATILE_LOCK_WAIT;
 * -EUCLEAN if the lock cannot be recovered; -ESTALE from a file lock of
 * a region whose records are being moved (move.c).
 */
int vl_lock_region(const struct vl_region *r);
void vl_unlock_region(const struct vl_region *r);
/* The region lock if it is free now: 0, or -EBUSY. */
int vl_trylock_region(const struct vl_region *r);
int vl_lock_file(const struct vl_region *r, uint32_t fi);
/* The same, in a region being moved (-ESTALE from vl_lock_file): for its mover only. */
int vl_lock_file_retired(const struct vl_region *r, uint32_t fi);
void vl_unlock_file(const struct vl_region *r, uint32_t fi);
/* File fi's lock if it is free now (a holder gone is not repaired): 0, or -EBUSY. */
int vl_trylock_file(const struct vl_region *r, uint32_t fi);
/*
 * Files but `mine` that hold PENDING nodes and whose lock a holder that
 * is gone still holds (32 a look, each look going on from where the last
 * stopped; up to 4 looks while none is repaired): taken over, repaired
 * (their PENDING nodes, a dead freer's chunk among them, freed: DESIGN
 * 10) and let go. Never waits for a live holder, so the caller may hold
 * file mine's lock (and no other); not the region lock. Returns how many
 * were repaired. A region that looks full calls it.
 */
uint32_t vl_repair_dead_holders(const struct vl_region *r, uint32_t mine);
/*
 * From now on every commit in r counts on its shared totals, none in a
 * process's slot (a budget needs them exact; DESIGN 10): set for good,
 * the slots' deltas counted in by a recount now or, if a file lock is
 * busy, owed (file fi's lock held).
 */
void vl_totals_share(const struct vl_region *r, uint32_t fi);

/*
 * A PENDING node of file fi, or VL_NIL when the region is full or its
 * file system is (a write to a page it cannot give would raise SIGBUS).
 * No lock. The allocator is core/pool.c's vl_node_take; this file makes
 * the pages of its new slots present.
 */
uint32_t vl_node_get(const struct vl_region *r, uint32_t fi);
/*
 * Before allocating a file (region lock held): make sure the page of the
 * slot the allocator will hand out is in memory. 0, or -ENOSPC when the
 * file system of the region is full.
 */
int vl_room_for_file(const struct vl_region *r);

/*
 * A new LIVE record for the file id, in the table (region lock held): 0
 * and *fi, or -ENOMEM (table or region file system full). A slot used for
 * the first time has its lock initialised before anyone can find it.
 */
int vl_file_new(const struct vl_region *r, const struct vl_ident *id, uint32_t *fi);

#endif
