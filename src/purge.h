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
	uint32_t files_dropped;  /* gone: their records were removed */
};

/* Returns 0 (see the report for what was done), or -errno. */
int vl_purge(const struct vl_region *r, const struct vl_goal *goal, const struct vl_hint *hint,
	     struct vl_purge_report *rep);

/*
 * Forget every range of file fi (generation gen): the file is gone. With
 * unpurged_only, only if none of its ranges is purged (else -EBUSY).
 */
int vl_drop_file(const struct vl_region *r, uint32_t fi, uint32_t gen, int unpurged_only);

#endif
