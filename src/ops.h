/*
 * ops.h - MARK and UNMARK (DESIGN 3), and the whole volatile
 * fallocate as the shim and the command call it.
 */
#ifndef VL_OPS_H
#define VL_OPS_H

#include "core/layout.h"
#include "volatile.h"

#include <linux/falloc.h>
#include <stdint.h>

/*
 * fallocate(fd, mode, off, len) where mode carries a volatile bit:
 * checks (DESIGN 5), then MARK (returns 0) or UNMARK (returns 0
 * intact, 1 purged); -errno on error. From a signal handler that
 * interrupted this thread inside it: -EINTR.
 *
 * A MARK notes `as` as the file's holder, the process and descriptor a
 * purger reaches the file through; NULL: this process and fd. `volatile
 * run` names the program whose call it serves with its own copy of the
 * program's descriptor as fd (DESIGN 21).
 */
int vl_volatile_fallocate_as(int fd, int mode, int64_t off, int64_t len,
			     const struct vl_holder *as);

static inline int vl_volatile_fallocate(int fd, int mode, int64_t off, int64_t len)
{
	return vl_volatile_fallocate_as(fd, mode, off, len, NULL);
}

/* The 2012 patches' values (DESIGN 2), taken only with VOLATILE_2012_ABI=1, on tmpfs. */
#define VL_ALIAS_MARK 0x04
#define VL_ALIAS_UNMARK 0x08

/* 0x04 or 0x08, with or without FALLOC_FL_KEEP_SIZE (0x01) */
static inline int vl_is_alias(int mode)
{
	int m = mode & ~FALLOC_FL_KEEP_SIZE;

	return m == VL_ALIAS_MARK || m == VL_ALIAS_UNMARK;
}

/* An alias mode as the volatile mode it stands for, KEEP_SIZE kept. */
static inline int vl_alias_as_volatile(int mode)
{
	return (mode & FALLOC_FL_KEEP_SIZE) | ((mode & ~FALLOC_FL_KEEP_SIZE) == VL_ALIAS_MARK
							 ? FALLOC_FL_MARK_VOLATILE
							 : FALLOC_FL_UNMARK_VOLATILE);
}

#endif
