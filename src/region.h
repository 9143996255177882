/*
 * region.h - the shared region of this user: attach, validate, lock.
 */
#ifndef VL_REGION_H
#define VL_REGION_H

#include "core/layout.h"

/*
 * Map the region file at path. With create, make it if it is missing
 * (0600, O_EXCL) with the capacities given. Returns 0, or -errno:
 * -EINVAL (path is not absolute), -EACCES (not ours, symlink, not
 * regular, group/other access), -EPROTO (incompatible format), -EUCLEAN
 * (corrupt), or what the system said.
 */
int vl_region_open(const char *path, int create, uint32_t ranges, uint32_t files,
		   struct vl_region *out);
void vl_region_unmap(struct vl_region *r);

/* The region of this process (VOLATILE_REGION), attached on first use. */
int vl_region_get(struct vl_region **out);

/*
 * The locks. Both are robust: if a holder died, the next locker repairs
 * what the lock guards before going on. Order: file lock, then region.
 * Return 0 or -errno (-EUCLEAN if the lock cannot be recovered).
 */
int vl_lock_region(const struct vl_region *r);
void vl_unlock_region(const struct vl_region *r);
int vl_lock_file(const struct vl_region *r, uint32_t fi);
void vl_unlock_file(const struct vl_region *r, uint32_t fi);

/*
 * Before allocating a node or a file (region lock held): make sure the
 * page of the slot the allocator will hand out is in memory. 0, or
 * -ENOSPC when the file system of the region is full: then do not
 * allocate, fail with an errno (a write there would raise SIGBUS).
 */
int vl_room_for_node(const struct vl_region *r);
int vl_room_for_file(const struct vl_region *r);

/*
 * A new LIVE record for the file id, in the table (region lock held): 0
 * and *fi, or -ENOMEM (table or region file system full). A slot used for
 * the first time has its lock initialised before anyone can find it.
 */
int vl_file_new(const struct vl_region *r, const struct vl_ident *id, uint32_t *fi);

#endif
