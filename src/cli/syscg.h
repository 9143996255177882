/* SPDX-License-Identifier: MIT */
/*
 * syscg.h - the memory cgroups the machine's daemon may relieve (DESIGN
 * 22): those with a limit of their own below MemTotal, found by a bounded
 * walk of the memory hierarchy, each named as /proc/PID/cgroup writes it
 * (the path an ask carries, core/sysorder.h).
 */
#ifndef VL_CLI_SYSCG_H
#define VL_CLI_SYSCG_H

#include "core/sysorder.h"

#include <limits.h>
#include <stdint.h>

/* a look walks at most this many directories, this deep, and keeps this many limited */
#define VL_SYS_CG_DIRS_MAX 4096
#define VL_SYS_CG_DEPTH_MAX 32
#define VL_SYS_CGS_MAX 256

struct vl_sys_cg {
	int version;                      /* 1 or 2 */
	uint64_t limit;                   /* its own: v1 limit_in_bytes; v2 the lower of max, high */
	uint32_t len;                     /* of path */
	char path[VL_SYS_CGROUP_MAX + 1]; /* as /proc/PID/cgroup writes it, NUL-terminated */
	char dir[PATH_MAX];               /* its directory, as this process reaches it */
};

struct vl_sys_cgs {
	int n;        /* kept in cg[] */
	int more;     /* limited ones found past VL_SYS_CGS_MAX, not kept */
	int cut;      /* the walk stopped short (VL_SYS_CG_DIRS_MAX, or too deep): some unseen */
	struct vl_sys_cg cg[VL_SYS_CGS_MAX];
};

/*
 * The memory cgroups with a limit of their own below mem_total, in the
 * hierarchy that accounts memory (v1's memory controller if mounted, else
 * cgroup2), in the order of a depth-first walk from its mount, its root
 * left out. Directories only, opened without following a symlink. 0, or
 * -ENOENT (no memory hierarchy mounted).
 */
int vl_sys_cg_find(struct vl_sys_cgs *out, uint64_t mem_total);

/*
 * The memory cgroup whose directory is dir (`purge --system --cgroup`):
 * its version (mem_state.c vl_cgroup_at), its limit (VL_UNLIMITED: none),
 * and its path under the hierarchy's mount. 0, or -errno (ENOENT: no
 * memory cgroup; EINVAL: not under a mount of its hierarchy).
 */
int vl_sys_cg_at(const char *dir, struct vl_sys_cg *cg);

#endif
