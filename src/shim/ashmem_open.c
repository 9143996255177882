/* SPDX-License-Identifier: MIT */
/*
 * ashmem_open.c - open("/dev/ashmem") on a machine without the device
 * gives an emulated region (a memfd). Every other open goes to the next
 * definition after two byte compares, and after a success, two more (a
 * path under /proc or /dev/fd may reopen a region: ashmem/fds.c).
 *
 * The next open goes first: only when it says ENOENT, the kernel having
 * read the whole path, is the path looked at. So a bad pointer gets
 * libc's EFAULT, never a fault in here, and a machine with a real
 * /dev/ashmem keeps it.
 */
#include "ashmem/emulation.h"
#include "core/ashmem_rules.h"
#include "export.h"
#include "next.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* glibc declares these only inside its fortified headers */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*open2_fn)(const char *, int);
typedef int (*openat2_fn)(int, const char *, int);

static int raw_open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = va_arg(ap, mode_t);
	va_end(ap);
	return (int)vl_as_libc(vl_raw_open(path, flags, mode));
}

static int raw_openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = va_arg(ap, mode_t);
	va_end(ap);
	return (int)vl_as_libc(vl_raw_openat(dirfd, path, flags, mode));
}

static int raw_open2(const char *path, int flags)
{
	return (int)vl_as_libc(vl_raw_open(path, flags, 0));
}

static int raw_openat2(int dirfd, const char *path, int flags)
{
	return (int)vl_as_libc(vl_raw_openat(dirfd, path, flags, 0));
}

/* after ENOENT only: the kernel has read the path, so it is a string */
static inline int is_device(const char *path)
{
	return path != NULL && path[0] == '/' && path[1] == 'd' && vl_ash_dev_path(path);
}

static int open_region(int flags)
{
	int saved = errno, fd;

	if ((flags & O_DIRECTORY) == O_DIRECTORY) {
		errno = ENOTDIR;
		return -1;
	}
	fd = vl_ash_new(NULL, 0, 1, (flags & O_CLOEXEC) != 0);
	if (fd < 0) {
		errno = -fd;
		return -1;
	}
	errno = saved;
	return fd;
}

/*
 * After a successful open, the kernel has read the path too: one through
 * /proc/.../fd/N or /dev/fd/N may be a second fd on a region.
 */
static void maybe_reopened(const char *path, int fd)
{
	int saved = errno;

	if (strncmp(path, "/dev/fd/", 8) == 0 ||
	    (strncmp(path, "/proc/", 6) == 0 && strstr(path + 6, "/fd/") != NULL))
		vl_ash_reopened(fd);
	errno = saved;
}

/* The next open, then the emulation if it said ENOENT for the device. */
#define OPEN_OR_DEVICE(call)                                                              \
	do {                                                                              \
		int saved_ = errno, fd_ = (call);                                         \
                                                                                          \
		if (__builtin_expect(fd_ < 0 && errno == ENOENT, 0) && is_device(path)) { \
			errno = saved_;                                                   \
			return open_region(flags);                                        \
		}                                                                         \
		if (__builtin_expect(fd_ >= 0 && path[0] == '/', 0) &&                    \
		    (path[1] == 'p' || path[1] == 'd'))                                   \
			maybe_reopened(path, fd_);                                        \
		return fd_;                                                               \
	} while (0)

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, mode_t) : 0;
}

VL_EXPORT int open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	OPEN_OR_DEVICE(VL_NEXT(open_fn, "open", raw_open)(path, flags, mode));
}

VL_EXPORT int open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	OPEN_OR_DEVICE(VL_NEXT(open_fn, "open64", raw_open)(path, flags, mode));
}

VL_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	OPEN_OR_DEVICE(VL_NEXT(openat_fn, "openat", raw_openat)(dirfd, path, flags, mode));
}

VL_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	OPEN_OR_DEVICE(VL_NEXT(openat_fn, "openat64", raw_openat)(dirfd, path, flags, mode));
}

/* _FORTIFY_SOURCE's checked variants: programs built with it call these */
VL_EXPORT int __open_2(const char *path, int flags)
{
	OPEN_OR_DEVICE(VL_NEXT(open2_fn, "__open_2", raw_open2)(path, flags));
}

VL_EXPORT int __open64_2(const char *path, int flags)
{
	OPEN_OR_DEVICE(VL_NEXT(open2_fn, "__open64_2", raw_open2)(path, flags));
}

VL_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	OPEN_OR_DEVICE(VL_NEXT(openat2_fn, "__openat_2", raw_openat2)(dirfd, path, flags));
}

VL_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	OPEN_OR_DEVICE(VL_NEXT(openat2_fn, "__openat64_2", raw_openat2)(dirfd, path, flags));
}
