/* SPDX-License-Identifier: MIT */
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
 * A call made for another process (`volatile run`'s supervisor, DESIGN 21):
 * the holder a MARK notes, the process and descriptor purgers are to
 * reach the file through (not the supervisor's copy), and two questions
 * put to the supervisor with the file locked, before anything changes,
 * whose nonzero answer (-errno: the caller is gone) leaves everything as
 * it was and is the call's result:
 *
 *   early  (MARK) tell the caller 0 now: it is told once its file is
 *          locked and the node it may need had. With no node to be had, a
 *          MARK for such a caller fails, ENOMEM or the region lock's
 *          errno, even one that would have needed none: it must not be
 *          answered 0 and then fail.
 *   waits  (UNMARK, each region it is made in) does the caller still wait
 *          for its answer?
 *
 * So a call changes the region only while its caller lives, and under the
 * file's lock, which whoever takes a killed caller's place must take for
 * any call of its own: it finds the file as the caller left it, never
 * changed by a call made after the caller's death. A supervisor killed
 * after a MARK's answer leaves a MARK the caller believes made and is not
 * (its bytes stay as they are: safe); one killed after the change and
 * before its answer would leave the caller believing it failed, and its
 * bytes volatile.
 */
struct vl_caller {
	struct vl_holder holder;
	int (*early)(void *arg);
	int (*waits)(void *arg);
	void *arg;
};

/*
 * fallocate(fd, mode, off, len) where mode carries a volatile bit:
 * checks (DESIGN 5), then MARK (returns 0) or UNMARK (returns 0
 * intact, 1 purged); -errno on error. From a signal handler that
 * interrupted this thread inside it: -EINTR. `as`: NULL, or the
 * process the call is made for.
 */
int vl_volatile_fallocate_as(int fd, int mode, int64_t off, int64_t len,
			     const struct vl_caller *as);

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
