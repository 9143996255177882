/* SPDX-License-Identifier: MIT */
/*
 * sys.h - the system calls the runtime makes.
 *
 * The error convention of the runtime: a function returns 0 (or a count,
 * or a descriptor) on success and -errno on failure, and leaves errno
 * alone; a descriptor that holds nothing is -1. The one exception is the
 * vl_raw_ layer below, which keeps libc's (-1 and errno), so that a call
 * site reads as the libc call it replaces.
 *
 * The library defines open, close, fstat, mmap... itself (the ashmem
 * emulation, src/shim/), and a call to one of those names from inside the
 * library would bind, through the PLT, to the library's own hook: its
 * gate would look at the runtime's own fds (tests/shell/symbols.sh fails
 * when any name the library defines is also one it calls). So the runtime
 * makes those calls through vl_raw_: the system call itself, no libc
 * wrapper, no cancellation point (but for clone: glibc's __clone, which
 * sets up the new stack). Its own fallocate calls go straight to
 * the kernel too: they must never come back into the shim, whoever else
 * interposes fallocate.
 */
#ifndef VL_SYS_H
#define VL_SYS_H

#include "core/fault.h"
#include "core/layout.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

struct statx;

/* ---- the raw layer: libc's names, the kernel's calls, libc's convention ---- */

#define vl_raw_open(path, flags, ...) \
	((int)syscall(SYS_openat, AT_FDCWD, (path), (flags), ##__VA_ARGS__))
#define vl_raw_openat(dirfd, path, flags, ...) \
	((int)syscall(SYS_openat, (dirfd), (path), (flags), ##__VA_ARGS__))
#define vl_raw_fcntl(fd, cmd, ...) ((int)syscall(SYS_fcntl, (fd), (cmd), ##__VA_ARGS__))

static inline int vl_raw_close(int fd)
{
	return (int)syscall(SYS_close, fd);
}

static inline int vl_raw_fstat(int fd, struct stat *st)
{
	return (int)syscall(SYS_fstat, fd, st);
}

static inline int vl_raw_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	return (int)syscall(SYS_newfstatat, dirfd, path, st, flags);
}

static inline int vl_raw_stat(const char *path, struct stat *st)
{
	return vl_raw_fstatat(AT_FDCWD, path, st, 0);
}

static inline int vl_raw_lstat(const char *path, struct stat *st)
{
	return vl_raw_fstatat(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

static inline int vl_raw_statx(int dirfd, const char *path, int flags, unsigned mask,
			       struct statx *sx)
{
	return (int)syscall(SYS_statx, dirfd, path, flags, mask, sx);
}

/* access(2): the real ids, as faccessat without flags */
static inline int vl_raw_access(const char *path, int mode)
{
	return (int)syscall(SYS_faccessat, AT_FDCWD, path, mode);
}

static inline void *vl_raw_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static inline int vl_raw_munmap(void *addr, size_t len)
{
	return (int)syscall(SYS_munmap, addr, len);
}

/* read, pread and write: glibc's are cancellation points (enter.c) */
static inline ssize_t vl_raw_read(int fd, void *buf, size_t len)
{
	return (ssize_t)syscall(SYS_read, fd, buf, len);
}

static inline ssize_t vl_raw_pread(int fd, void *buf, size_t len, off_t off)
{
	return (ssize_t)syscall(SYS_pread64, fd, buf, len, off);
}

static inline ssize_t vl_raw_write(int fd, const void *buf, size_t len)
{
	return (ssize_t)syscall(SYS_write, fd, buf, len);
}

/*
 * A system call made inline, for the two every MARK and UNMARK makes
 * (fallocate's checks, statx): -errno or the result, errno untouched, no
 * call into libc's syscall() and its argument shuffle. x86-64's calling
 * sequence; elsewhere libc's syscall().
 */
#if defined(__x86_64__)
static inline long vl_sys_call4(long nr, long a, long b, long c, long d)
{
	register long r10 __asm__("r10") = d;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}

static inline long vl_sys_call5(long nr, long a, long b, long c, long d, long e)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	return ret;
}
#else
static inline long vl_sys_call4(long nr, long a, long b, long c, long d)
{
	long ret = syscall(nr, a, b, c, d);

	return ret < 0 ? -(long)errno : ret;
}

static inline long vl_sys_call5(long nr, long a, long b, long c, long d, long e)
{
	long ret = syscall(nr, a, b, c, d, e);

	return ret < 0 ? -(long)errno : ret;
}
#endif

/* glibc's clone under its other name: the library's clone only counts children */
int __clone(int (*fn)(void *), void *stack, int flags, void *arg, ...);
#define vl_raw_clone __clone

/* ---- the runtime's calls: -errno ------------------------------------------------ */

/* Inline: every MARK and UNMARK asks it once (args.c), and the call was a tenth of it. */
static inline int vl_sys_fallocate(int fd, int mode, int64_t off, int64_t len)
{
	long r = VL_SYSCALL_NEG("fallocate", vl_sys_call4(SYS_fallocate, fd, mode, off, len));

	return r < 0 ? (int)r : 0;
}
/* Punch [off, off+len) out of fd, keeping the size. */
int vl_sys_punch(int fd, uint64_t off, uint64_t len);

/* What fd or a path refers to, and its identity: ident.h (vl_sys_statx, vl_sys_fstat...). */

/*
 * Milliseconds of CLOCK_MONOTONIC_COARSE (the same in every process of a
 * time namespace): a vDSO read, no system call. A call of the library
 * reads it once and passes it down (ops.c).
 */
static inline uint64_t vl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * Is it time (every `every` ms of vl_now_ms(), now being a reading of it)
 * to look again? One thread is told yes; the others go on.
 */
static inline int vl_due(uint64_t *last, uint64_t every, uint64_t now)
{
	uint64_t was = __atomic_load_n(last, __ATOMIC_RELAXED);

	return now - was >= every &&
	       __atomic_compare_exchange_n(last, &was, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* Seconds of that clock, never 0, from a reading of vl_now_ms() */
static inline uint32_t vl_s_of_ms(uint64_t ms)
{
	return (uint32_t)(ms / 1000) + 1;
}

/* Seconds of that clock now, never 0. */
static inline uint32_t vl_now_s(void)
{
	return vl_s_of_ms(vl_now_ms());
}

/*
 * Call fn on each line of a file of /proc (its '\n' cut off), read with
 * read(2) into 4 KiB on the stack: no allocation, no stdio. A line longer
 * than that is skipped whole. fn returns 0 to go on, > 0 to stop: what it
 * returned, 0 at the end of the file, or -errno if it cannot be opened.
 */
int vl_each_line(const char *path, int (*fn)(void *arg, char *line), void *arg);

/*
 * A directory read with getdents64 into a buffer of its own (no
 * allocation, no DIR): fd opened by the caller, len and pos 0.
 */
struct dirent64;
struct vl_dirbuf {
	int fd;
	long len, pos;
	char buf[2048] __attribute__((aligned(8)));
};
/* Its next entry (not . or ..), or NULL at the end or on an error. */
struct dirent64 *vl_next_dirent(struct vl_dirbuf *d);

#endif
