/* SPDX-License-Identifier: MIT */
/*
 * purge.h - purging volatile ranges, oldest first, from any process.
 */
#ifndef VL_PURGE_H
#define VL_PURGE_H

#include "core/layout.h"

struct vl_goal {
	uint64_t bytes;      /* purge at least this many bytes (UINT64_MAX: all) */
	uint64_t ceiling;    /* or, with use_ceiling: until at most this many
			        unpurged volatile bytes are left */
	int use_ceiling;
	int use_dev;         /* only files of this device (a full tmpfs) */
	uint64_t dev;
	int use_until;       /* only ranges not younger than until, an age (age.h, never 0): */
	uint32_t until;      /* the machine's order (DESIGN 22); ties taken (DESIGN 6) */
	/*
	 * Only files with a recorded holder (DESIGN 10) that held_by accepts,
	 * given its pid (> 0): the machine's daemon relieving one memory
	 * cgroup with its own holders' ranges (DESIGN 22). NULL: any file.
	 * The holders are the region's word, a pid unchecked: this only
	 * chooses among volatile ranges, every one of which may go.
	 */
	int (*held_by)(void *ctx, int32_t pid);
	void *held_ctx;
	int thorough;        /* tools: may search a tmpfs for a renamed file */
	int bounded;         /* inside a MARK: cheap routes only (file_route.h) */
	uint32_t reason;     /* enum vl_purge_reason: what the region's log says */
};

/* The caller's own file and fd, usable without reopening (MARK + budget). */
struct vl_hint {
	uint32_t fi;
	uint32_t gen;
	int fd;
};

struct vl_purge_report {
	uint64_t bytes;          /* bytes in the ranges purged */
	uint32_t ranges;
	uint32_t files_skipped;  /* unreachable, or locked by us */
	uint32_t files_dropped;  /* records forgotten (see purge.c, point 5) */
};

/* Returns 0 (see the report for what was done), or -errno. */
int vl_purge(const struct vl_region *r, const struct vl_goal *goal, const struct vl_hint *hint,
	     struct vl_purge_report *rep);

/*
 * Look at every file of the region, the way tools may (a search of a
 * tmpfs for a renamed or deleted file included), and forget those that
 * are gone. Returns 0 (see the report), or -errno.
 */
int vl_collect(const struct vl_region *r, struct vl_purge_report *rep);

/* The same, for the records of ashmem regions only, without searching file systems. */
int vl_collect_ashmem(const struct vl_region *r, struct vl_purge_report *rep);

/*
 * Forget file fi's ranges (generation gen), and its record with the last:
 *   VL_DROP_ALL          every range: the file is gone;
 *   VL_DROP_UNPURGED     its unpurged ranges only (an ashmem record stays);
 *                        -EBUSY if purged ones stay;
 *   VL_DROP_UNLESS_PURGED every range, but nothing at all (-EBUSY) if one
 *                        was purged: a holder we cannot see may still ask.
 */
enum { VL_DROP_ALL, VL_DROP_UNPURGED, VL_DROP_UNLESS_PURGED };
int vl_drop_file(const struct vl_region *r, uint32_t fi, uint32_t gen, int how);
/* The same, file fi's lock held by the caller (and kept). */
int vl_drop_file_locked(const struct vl_region *r, uint32_t fi, uint32_t gen, int how);

#endif
