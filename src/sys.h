/*
 * sys.h - the system calls the runtime makes, returning -errno.
 *
 * The runtime's own fallocate calls go straight to the kernel: they must
 * never come back into the shim, whoever else interposes fallocate.
 */
#ifndef VL_SYS_H
#define VL_SYS_H

#include "core/layout.h"

#include <stdint.h>
#include <sys/types.h>

int vl_sys_fallocate(int fd, int mode, int64_t off, int64_t len);
/* Punch [off, off+len) out of fd, keeping the size. */
int vl_sys_punch(int fd, uint64_t off, uint64_t len);

/*
 * What fd (or path, at dirfd) refers to, and its identity (layout.h).
 * vl_sys_statx: one statx, no generation (id.igen 0); vl_sys_igen then
 * completes the identity of a tmpfs or memfd file (-EOPNOTSUPP for
 * another file system's). vl_sys_fstat: both, for a regular file; a
 * file whose generation cannot be had keeps 0, and no record names it.
 */
struct vl_stat {
	struct vl_ident id;
	uint32_t mode;
	uint32_t nlink;
	uint64_t mnt_id;
	int mnt_id_unique;
};
int vl_sys_statx(int fd, struct vl_stat *st);
int vl_sys_igen(int fd, struct vl_stat *st);
int vl_sys_fstat(int fd, struct vl_stat *st);
int vl_sys_stat_at(int dirfd, const char *path, int follow, struct vl_stat *st);
/* The two halves of vl_sys_stat_at, for a caller that compares between them. */
int vl_sys_statx_at(int dirfd, const char *path, int follow, struct vl_stat *st);
int vl_sys_igen_at(int dirfd, const char *path, int follow, struct vl_stat *st);

/* Seconds of CLOCK_MONOTONIC (the same in every process), never 0. */
uint32_t vl_now_s(void);

/*
 * Call fn on each line of a file of /proc (its '\n' cut off), read with
 * read(2) into 4 KiB on the stack: no allocation, no stdio. A line longer
 * than that is skipped whole. fn returns 0 to go on, > 0 to stop: what it
 * returned, 0 at the end of the file, or -errno if it cannot be opened.
 */
int vl_each_line(const char *path, int (*fn)(void *arg, char *line), void *arg);

#endif
