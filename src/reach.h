/*
 * reach.h - get an fd on a file with volatile ranges, from any process.
 *
 * The region records, per file, who marked it (pid, fd) and a path. Any
 * of those may be stale: pids and fds are reused, paths renamed. So every
 * route ends with the same check: the identity (device, inode, birth
 * time) of what was opened must be the identity recorded. Only then may
 * anything be punched through it.
 */
#ifndef VL_REACH_H
#define VL_REACH_H

#include "core/layout.h"

/* What a purger copies out of a file record under the region lock. */
struct vl_target {
	uint32_t fi;
	uint32_t gen;
	uint32_t flags;
	uint32_t path_len;
	struct vl_ident id;
	struct vl_holder holders[VL_HOLDERS];
	char path[VL_PATH_MAX];
};

void vl_target_copy(const struct vl_region *r, uint32_t fi, struct vl_target *t);

/* Per purge pass: what /proc/locks said about this process, read once. */
struct vl_reach_ctx {
	int locks_read;
	int nlocks;
	struct vl_ident locked[16]; /* dev and ino only */
	int locks_overflow;
};

/*
 * An fd of our own (close it) on the target file, or:
 *   -EDEADLK  this process holds POSIX locks on the file: opening and
 *             closing it here would release them, so we must not;
 *   -ESRCH    the file exists but no route reaches it (mapped only, or
 *             held by processes we cannot see into);
 *   -ENOENT   no process we can see holds or maps it and no path reaches
 *             it: it is gone (as far as this process can tell).
 * On success through a holder the region did not know, *found is set.
 */
int vl_reach(const struct vl_target *t, struct vl_reach_ctx *ctx, struct vl_holder *found);

#endif
