/* SPDX-License-Identifier: MIT */
/*
 * ashmem_stat.c - the emulated device is there for stat and access, and
 * an fd opened as /dev/ashmem looks like it to fstat (a character
 * device, 0666, the same st_rdev as stat("/dev/ashmem"): libcutils
 * compares the two). Everything else goes to the next definition after a
 * two-byte compare (paths) or one load (fds).
 *
 * glibc 2.33 and later export stat, lstat, fstat, fstatat (and their 64
 * names) and statx; programs built against older glibc call __xstat and
 * friends with a version number. Both are here.
 */
#include "ashmem/emulation.h"
#include "core/ashmem_rules.h"
#include "export.h"
#include "next.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* glibc before 2.33 declared these; they stay exported for old binaries */
int __xstat(int ver, const char *path, struct stat *st);
int __xstat64(int ver, const char *path, struct stat *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat *st);
int __fxstat(int ver, int fd, struct stat *st);
int __fxstat64(int ver, int fd, struct stat *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat *st, int flags);

#define STAT_VER 1 /* _STAT_VER_LINUX of x86-64: the kernel's struct stat */

typedef int (*stat_fn)(const char *, struct stat *);
typedef int (*fstat_fn)(int, struct stat *);
typedef int (*fstatat_fn)(int, const char *, struct stat *, int);
typedef int (*statx_fn)(int, const char *, int, unsigned, struct statx *);
typedef int (*xstat_fn)(int, const char *, struct stat *);
typedef int (*fxstat_fn)(int, int, struct stat *);
typedef int (*fxstatat_fn)(int, int, const char *, struct stat *, int);
typedef int (*access_fn)(const char *, int);
typedef int (*faccessat_fn)(int, const char *, int, int);

static int raw_stat(const char *path, struct stat *st)
{
	return (int)vl_as_libc(vl_raw_stat(path, st));
}

static int raw_lstat(const char *path, struct stat *st)
{
	return (int)vl_as_libc(vl_raw_lstat(path, st));
}

static int raw_fstat(int fd, struct stat *st)
{
	return (int)vl_as_libc(vl_raw_fstat(fd, st));
}

static int raw_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	return (int)vl_as_libc(vl_raw_fstatat(dirfd, path, st, flags));
}

static int raw_statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *sx)
{
	return (int)vl_as_libc(vl_raw_statx(dirfd, path, flags, mask, sx));
}

static int raw_xstat(int ver, const char *path, struct stat *st)
{
	(void)ver;
	return raw_stat(path, st);
}

static int raw_lxstat(int ver, const char *path, struct stat *st)
{
	(void)ver;
	return raw_lstat(path, st);
}

static int raw_fxstat(int ver, int fd, struct stat *st)
{
	(void)ver;
	return raw_fstat(fd, st);
}

static int raw_fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
	(void)ver;
	return raw_fstatat(dirfd, path, st, flags);
}

static int raw_access(const char *path, int mode)
{
	return (int)vl_as_libc(vl_raw_access(path, mode));
}

static int raw_faccessat(int dirfd, const char *path, int mode, int flags)
{
	(void)flags;
	return (int)vl_as_libc(vl_raw_faccessat(dirfd, path, mode));
}

/*
 * Paths: the next definition goes first, and the path is looked at only
 * when it said ENOENT, the kernel having read the whole path: a bad
 * pointer gets libc's EFAULT, never a fault in here, and a machine with a
 * real /dev/ashmem keeps it.
 */
static inline int is_device(const char *path)
{
	return path != NULL && path[0] == '/' && path[1] == 'd' && vl_ash_dev_path(path);
}

#define THEN_DEVICE(call, emulate)                                                        \
	do {                                                                              \
		int saved_ = errno, r_ = (call);                                          \
                                                                                          \
		if (__builtin_expect(r_ != 0 && errno == ENOENT, 0) && is_device(path)) { \
			errno = saved_;                                                   \
			return (emulate);                                                 \
		}                                                                         \
		return r_;                                                                \
	} while (0)

/* fstat of an fd, or fstatat(fd, "", AT_EMPTY_PATH): a region opened as the device? */
static inline int is_device_fd(int fd)
{
	return __builtin_expect(vl_ash_flagged(fd), 0) && vl_ash_dev_fd(fd);
}

/* after the call succeeded: the kernel has read the path (NULL is allowed) */
static inline int empty_path(const char *path, int flags)
{
	return (flags & AT_EMPTY_PATH) && (path == NULL || path[0] == '\0');
}

static int fake(struct stat *st)
{
	struct stat d;
	int saved = errno, err;

	vl_ash_dev_stat(&d);
	err = vl_ash_copy_out(st, &d, sizeof(d));
	if (err) {
		errno = -err;
		return -1;
	}
	errno = saved;
	return 0;
}

static int fakex(struct statx *sx)
{
	struct statx d;
	int saved = errno, err;

	vl_ash_dev_statx(&d);
	err = vl_ash_copy_out(sx, &d, sizeof(d));
	if (err) {
		errno = -err;
		return -1;
	}
	errno = saved;
	return 0;
}

/* access(2) of the device: it is 0666, so read and write yes, execute no */
static int fake_access(int mode)
{
	if (mode & X_OK) {
		errno = EACCES;
		return -1;
	}
	return 0;
}

/* x86-64 and the other 64-bit ABIs: struct stat64 is struct stat */
_Static_assert(sizeof(struct stat64) == sizeof(struct stat), "stat64 is stat");

#define STAT_LIKE(fname, realname, raw, type)                                            \
	VL_EXPORT int fname(const char *path, type *st)                                    \
	{                                                                                  \
		THEN_DEVICE(VL_NEXT(stat_fn, realname, raw)(path, (struct stat *)st),      \
			    fake((struct stat *)st));                                      \
	}

STAT_LIKE(stat, "stat", raw_stat, struct stat)
STAT_LIKE(stat64, "stat64", raw_stat, struct stat64)
STAT_LIKE(lstat, "lstat", raw_lstat, struct stat)
STAT_LIKE(lstat64, "lstat64", raw_lstat, struct stat64)

#define FSTAT_LIKE(fname, realname, type)                                                \
	VL_EXPORT int fname(int fd, type *st)                                              \
	{                                                                                  \
		if (is_device_fd(fd))                                                      \
			return fake((struct stat *)st);                                    \
		return VL_NEXT(fstat_fn, realname, raw_fstat)(fd, (struct stat *)st);      \
	}

FSTAT_LIKE(fstat, "fstat", struct stat)
FSTAT_LIKE(fstat64, "fstat64", struct stat64)

#define FSTATAT_LIKE(fname, realname, type)                                              \
	VL_EXPORT int fname(int dirfd, const char *path, type *st, int flags)              \
	{                                                                                  \
		int saved_ = errno, r_;                                                    \
                                                                                          \
		r_ = VL_NEXT(fstatat_fn, realname, raw_fstatat)(dirfd, path,               \
								 (struct stat *)st, flags);   \
		if (__builtin_expect(r_ != 0 && errno == ENOENT, 0) && is_device(path)) {   \
			errno = saved_;                                                    \
			return fake((struct stat *)st);                                    \
		}                                                                          \
		if (__builtin_expect(r_ == 0 && vl_ash_flagged(dirfd), 0) &&               \
		    empty_path(path, flags) && vl_ash_dev_fd(dirfd))                       \
			return fake((struct stat *)st);                                    \
		return r_;                                                                 \
	}

FSTATAT_LIKE(fstatat, "fstatat", struct stat)
FSTATAT_LIKE(fstatat64, "fstatat64", struct stat64)

VL_EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *sx)
{
	int saved = errno, r;

	r = VL_NEXT(statx_fn, "statx", raw_statx)(dirfd, path, flags, mask, sx);
	if (__builtin_expect(r != 0 && errno == ENOENT, 0) && is_device(path)) {
		errno = saved;
		return fakex(sx);
	}
	if (__builtin_expect(r == 0 && vl_ash_flagged(dirfd), 0) && empty_path(path, flags) &&
	    vl_ash_dev_fd(dirfd))
		return fakex(sx);
	return r;
}

/* ---- glibc before 2.33 ---- */

#define XSTAT_LIKE(fname, realname, raw)                                                 \
	VL_EXPORT int fname(int ver, const char *path, struct stat *st)                    \
	{                                                                                  \
		if (ver != STAT_VER)                                                       \
			return VL_NEXT(xstat_fn, realname, raw)(ver, path, st);            \
		THEN_DEVICE(VL_NEXT(xstat_fn, realname, raw)(ver, path, st), fake(st));    \
	}

XSTAT_LIKE(__xstat, "__xstat", raw_xstat)
XSTAT_LIKE(__xstat64, "__xstat64", raw_xstat)
XSTAT_LIKE(__lxstat, "__lxstat", raw_lxstat)
XSTAT_LIKE(__lxstat64, "__lxstat64", raw_lxstat)

VL_EXPORT int __fxstat(int ver, int fd, struct stat *st)
{
	if (ver == STAT_VER && is_device_fd(fd))
		return fake(st);
	return VL_NEXT(fxstat_fn, "__fxstat", raw_fxstat)(ver, fd, st);
}

VL_EXPORT int __fxstat64(int ver, int fd, struct stat *st)
{
	if (ver == STAT_VER && is_device_fd(fd))
		return fake(st);
	return VL_NEXT(fxstat_fn, "__fxstat64", raw_fxstat)(ver, fd, st);
}

VL_EXPORT int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
	if (ver != STAT_VER)
		return VL_NEXT(fxstatat_fn, "__fxstatat", raw_fxstatat)(ver, dirfd, path, st, flags);
	THEN_DEVICE(VL_NEXT(fxstatat_fn, "__fxstatat", raw_fxstatat)(ver, dirfd, path, st, flags),
		    fake(st));
}

VL_EXPORT int __fxstatat64(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
	if (ver != STAT_VER)
		return VL_NEXT(fxstatat_fn, "__fxstatat64", raw_fxstatat)(ver, dirfd, path, st, flags);
	THEN_DEVICE(VL_NEXT(fxstatat_fn, "__fxstatat64", raw_fxstatat)(ver, dirfd, path, st, flags),
		    fake(st));
}

/* ---- access ---- */

#define ACCESS_LIKE(fname, realname)                                                     \
	VL_EXPORT int fname(const char *path, int mode)                                    \
	{                                                                                  \
		THEN_DEVICE(VL_NEXT(access_fn, realname, raw_access)(path, mode),          \
			    fake_access(mode));                                            \
	}

ACCESS_LIKE(access, "access")
ACCESS_LIKE(euidaccess, "euidaccess")
ACCESS_LIKE(eaccess, "eaccess")

VL_EXPORT int faccessat(int dirfd, const char *path, int mode, int flags)
{
	THEN_DEVICE(VL_NEXT(faccessat_fn, "faccessat", raw_faccessat)(dirfd, path, mode, flags),
		    fake_access(mode));
}
