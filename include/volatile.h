/* SPDX-License-Identifier: MIT */
/*
 * volatile.h - volatile ranges for tmpfs and memfd files, in userspace.
 *
 * With libvolatile.so loaded (LD_PRELOAD, or linked with -lvolatile),
 * fallocate(2) understands two more modes:
 *
 *   fallocate(fd, FALLOC_FL_MARK_VOLATILE, off, len)    0, or -1 and errno
 *   fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, off, len)  0 intact, 1 purged,
 *                                                       or -1 and errno
 *
 * Without libvolatile the kernel refuses both with EOPNOTSUPP, so a program
 * can always fall back to keeping its data pinned.
 *
 * If UNMARK fails (-1), treat the bytes as purged: their content is unknown.
 */
#ifndef VOLATILE_H
#define VOLATILE_H

#include <fcntl.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * glibc's <fcntl.h> declares fallocate only with _GNU_SOURCE; without it,
 * the same declaration here (fallocate64 under _FILE_OFFSET_BITS=64, as
 * glibc redirects it), so that the volatile modes need nothing more.
 */
#if defined(__GLIBC__) && !defined(__USE_GNU)
#ifdef __USE_FILE_OFFSET64
extern int fallocate(int __fd, int __mode, off_t __offset, off_t __len) __asm__("fallocate64");
#else
extern int fallocate(int __fd, int __mode, off_t __offset, off_t __len);
#endif
#endif

#define FALLOC_FL_MARK_VOLATILE    0x10000000
#define FALLOC_FL_UNMARK_VOLATILE  0x20000000
/* the spelling of the 2012 LWN article */
#define FALLOCATE_FL_MARK_VOLATILE   FALLOC_FL_MARK_VOLATILE
#define FALLOCATE_FL_UNMARK_VOLATILE FALLOC_FL_UNMARK_VOLATILE

/*
 * Statistics of the region (every process of the user shares it). The
 * byte counts are sums over files and may exceed 64 bits (each file can
 * hold ranges up to LLONG_MAX): volatile_bytes, purged_bytes and
 * purged_total are UINT64_MAX when the count does not fit, and exact
 * otherwise; `volatile status` prints them exactly.
 */
struct volatile_stats {
	uint64_t files;            /* files with at least one volatile range */
	uint64_t ranges;           /* volatile ranges, purged or not */
	uint64_t ranges_purged;    /* of which purged */
	uint64_t volatile_bytes;   /* bytes in ranges not purged */
	uint64_t purged_bytes;     /* bytes in purged ranges */
	uint64_t capacity_ranges;  /* most ranges the region can hold */
	uint64_t capacity_files;   /* most files the region can hold */
	uint64_t purges;           /* ranges purged since the region was made */
	uint64_t purged_total;     /* bytes purged since the region was made */
	uint64_t region_bytes;     /* memory the region uses now */
};

/*
 * Fill *st (at most size bytes of it, for compatibility with older and
 * newer callers). Returns 0, or -1 with errno set (see "Errors" below).
 */
int volatile_stats(struct volatile_stats *st, size_t size);

#define VOLATILE_PURGE_ALL UINT64_MAX

/*
 * Purge volatile ranges now, oldest first, until at least `bytes` bytes
 * have been purged or no purgeable range is left (VOLATILE_PURGE_ALL: all
 * of them). Whole ranges are purged. Returns the number of bytes purged
 * (0 if there was nothing to purge), or -1 with errno set.
 */
int64_t volatile_purge(uint64_t bytes);

/*
 * Errors of MARK, UNMARK and the functions above when the shared region
 * cannot be used (the program keeps running and nothing is punched):
 *   EACCES    the region file is not owned by this user, is reachable only
 *             through a symlink, is not a regular file, or grants group or
 *             other access;
 *   EPROTO    the region was made by an incompatible version or ABI;
 *   EUCLEAN   the region's contents fail validation (corrupt);
 *   EINVAL    VOLATILE_REGION is not an absolute path;
 *   others    from open(2), ftruncate(2) or mmap(2) on the region file
 *             (ENOENT, ENOSPC, ENOMEM, EROFS...).
 * ENOMEM from MARK (or from an UNMARK that must split a range) means the
 * region has no room for another range, or the file system holding it is
 * full, or its table of processes is; nothing was changed. EAGAIN: a
 * lock the call needs was kept by another live process (stopped by
 * SIGSTOP, a debugger, a freezer) for all of VOLATILE_LOCK_WAIT (default
 * 1 s), or the file's record was freed and reused under the call over and
 * over (a pathological race); nothing was changed: after an UNMARK that
 * failed so, treat the bytes as purged; after a MARK, keep them pinned or
 * try again. ESTALE: the region new processes find waits until
 * older regions of its name are moved into it, or this process can follow
 * its region no further; try again. ENAMETOOLONG: VOLATILE_REGION is over
 * 255 bytes. EINTR: called from a signal handler that interrupted the
 * library in this thread.
 */

#ifdef __cplusplus
}
#endif

#endif /* VOLATILE_H */
