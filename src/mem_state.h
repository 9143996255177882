/* SPDX-License-Identifier: MIT */
/*
 * mem_state.h - how much memory is left, for this process and its cgroup
 * (DESIGN 6), and how full a tmpfs is.
 */
#ifndef VL_MEM_STATE_H
#define VL_MEM_STATE_H

#include "core/pressure.h"

#include <limits.h>
#include <stdint.h>

struct vl_cgroup {
	int version;            /* 1 or 2; 0: no memory cgroup found */
	char mnt[PATH_MAX];     /* where its hierarchy is mounted */
	char dir[PATH_MAX];     /* its directory */
};

/* The memory cgroup of this process. 0, or -errno (ENOENT: none). */
int vl_own_cgroup(struct vl_cgroup *cg);

/*
 * A cgroup given by its directory (volatile daemon --cgroup): the version
 * is told by the files in it. 0, or -errno.
 */
int vl_cgroup_at(const char *dir, struct vl_cgroup *cg);

struct vl_memstate {
	uint64_t mem_total;      /* MemTotal */
	uint64_t mem_available;  /* MemAvailable */
	uint64_t cg_limit;       /* tightest limit from the cgroup up; VL_UNLIMITED */
	uint64_t cg_headroom;    /* least headroom from the cgroup up; VL_UNLIMITED */
	uint64_t available;      /* the smaller of mem_available and cg_headroom */
	uint64_t total;          /* the smaller of mem_total and cg_limit */
	int by_cgroup;           /* available is the cgroup's headroom */
};

/* Read the state now; cg may be NULL (the system only). 0, or -errno. */
int vl_memstate_read(const struct vl_cgroup *cg, struct vl_memstate *ms);

/*
 * Free and total bytes of the tmpfs fd is on, if it is a tmpfs with a size
 * limit. 0, or -ENOENT (not a tmpfs, or no limit: a memfd's), -errno.
 */
int vl_tmpfs_space(int fd, uint64_t *free_bytes, uint64_t *size_bytes);

#endif
