/* SPDX-License-Identifier: MIT */
/*
 * ashmem_fd.c - following region fds around this process: a duplicate of
 * a region fd, an fd received over a Unix socket (SCM_RIGHTS, by recvmsg
 * or recvmmsg), and, at load, an fd inherited across exec that is open on
 * a region's memfd, are flagged as maybe a region, so mmap and fstat look
 * at them. The flag is only a hint, checked against the shared region
 * when used. A region fd sent over a socket (sendmsg, sendmmsg) is
 * noted, so SET_NAME no longer swaps its memfd (ashmem/ioctl.c, rename_memfd);
 * close (and dup2/dup3 over a region fd) may forget the region (ashmem/close.c,
 * vl_ash_close_begin); a write seal added to a region pins its unpinned
 * ranges again (ashmem/seals.c).
 * Each call costs a compare or two on top of the next definition.
 */
#include "ashmem/emulation.h"
#include "export.h"
#include "next.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int (*close_fn)(int);
typedef int (*dup_fn)(int);
typedef int (*dup2_fn)(int, int);
typedef int (*dup3_fn)(int, int, int);
typedef int (*fcntl_fn)(int, int, ...);
typedef ssize_t (*recvmsg_fn)(int, struct msghdr *, int);
typedef ssize_t (*sendmsg_fn)(int, const struct msghdr *, int);
typedef int (*recvmmsg_fn)(int, struct mmsghdr *, unsigned int, int, struct timespec *);
typedef int (*sendmmsg_fn)(int, struct mmsghdr *, unsigned int, int);

static int raw_close(int fd)
{
	return (int)vl_as_libc(vl_raw_close(fd));
}

static int raw_dup(int fd)
{
	return (int)vl_as_libc(vl_raw_dup(fd));
}

static int raw_dup3(int fd, int to, int flags)
{
	return (int)vl_as_libc(vl_raw_dup3(fd, to, flags));
}

static int raw_dup2(int fd, int to)
{
	if (fd == to) /* dup3 refuses what dup2 allows */
		return vl_as_libc(vl_raw_fcntl(fd, F_GETFD)) < 0 ? -1 : to;
	return raw_dup3(fd, to, 0);
}

static int raw_fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return (int)vl_as_libc(vl_raw_fcntl(fd, cmd, arg));
}

static ssize_t raw_recvmsg(int fd, struct msghdr *msg, int flags)
{
	return (ssize_t)vl_as_libc(vl_raw_recvmsg(fd, msg, flags));
}

static int raw_recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags, struct timespec *t)
{
	return (int)vl_as_libc(vl_raw_recvmmsg(fd, v, n, flags, t));
}

static ssize_t raw_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	return (ssize_t)vl_as_libc(vl_raw_sendmsg(fd, msg, flags));
}

static int raw_sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags)
{
	return (int)vl_as_libc(vl_raw_sendmmsg(fd, v, n, flags));
}

/* Fds inherited across exec: a readlink per open fd, once. */
__attribute__((constructor)) static void seed_fds(void)
{
	vl_ash_seed();
}

static inline void follow(int from, int to)
{
	if (__builtin_expect(vl_ash_flagged(from), 0) && to >= 0 && to != from) {
		int saved = errno;

		vl_ash_dup(from, to);
		errno = saved;
	}
}

VL_EXPORT int dup(int fd)
{
	int r = VL_NEXT(dup_fn, "dup", raw_dup)(fd);

	follow(fd, r);
	return r;
}

/*
 * close: one load for an fd never flagged. A region fd's close may forget
 * the region's record (vl_ash_close_begin). errno is the real close's.
 */
VL_EXPORT int close(int fd)
{
	struct vl_ash_closing c;
	int r, saved;

	if (__builtin_expect(!vl_ash_flagged(fd), 1))
		return VL_NEXT(close_fn, "close", raw_close)(fd);
	saved = errno;
	vl_ash_close_begin(fd, &c);
	errno = saved;
	r = VL_NEXT(close_fn, "close", raw_close)(fd);
	saved = errno;
	/* Linux releases the fd whatever close says, but for EBADF */
	vl_ash_close_end(fd, &c, r == 0 || errno != EBADF);
	errno = saved;
	return r;
}

/* dup2 and dup3 over a region fd close it first */
#define DUP_OVER(call)                                                         \
	do {                                                                   \
		struct vl_ash_closing c_;                                      \
		int r_, saved_;                                                \
                                                                               \
		if (__builtin_expect(!vl_ash_flagged(to) || to == fd, 1)) {    \
			r_ = (call);                                           \
			follow(fd, r_);                                        \
			return r_;                                             \
		}                                                              \
		saved_ = errno;                                                \
		vl_ash_close_begin(to, &c_);                                   \
		errno = saved_;                                                \
		r_ = (call);                                                   \
		saved_ = errno;                                                \
		vl_ash_close_end(to, &c_, r_ >= 0);                            \
		errno = saved_;                                                \
		follow(fd, r_);                                                \
		return r_;                                                     \
	} while (0)

VL_EXPORT int dup2(int fd, int to)
{
	DUP_OVER(VL_NEXT(dup2_fn, "dup2", raw_dup2)(fd, to));
}

VL_EXPORT int dup3(int fd, int to, int flags)
{
	DUP_OVER(VL_NEXT(dup3_fn, "dup3", raw_dup3)(fd, to, flags));
}

/* F_ADD_SEALS of a region: a write seal pins its unpinned ranges again (ashmem/seals.c) */
static int add_seals(fcntl_fn next, int fd, void *arg)
{
	struct vl_ash_sealing c;
	int r, saved = errno;

	vl_ash_seal_begin(fd, (unsigned)(uintptr_t)arg, &c);
	errno = saved;
	r = next(fd, F_ADD_SEALS, arg);
	saved = errno;
	vl_ash_seal_end(&c, r == 0);
	errno = saved;
	return r;
}

static int fcntl_common(fcntl_fn next, int fd, int cmd, void *arg)
{
	int r;

	if (__builtin_expect(cmd == F_ADD_SEALS, 0) && vl_ash_flagged(fd))
		return add_seals(next, fd, arg);
	r = next(fd, cmd, arg);

	if (__builtin_expect(cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC, 0))
		follow(fd, r);
	return r;
}

VL_EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(VL_NEXT(fcntl_fn, "fcntl", raw_fcntl), fd, cmd, arg);
}

VL_EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(VL_NEXT(fcntl_fn, "fcntl64", raw_fcntl), fd, cmd, arg);
}

/* Call fn on each fd passed in msg's SCM_RIGHTS messages. */
static void each_passed(const struct msghdr *msg, void (*fn)(int))
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c != NULL;
	     c = CMSG_NXTHDR((struct msghdr *)msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		const unsigned char *p = CMSG_DATA(c);

		for (size_t i = 0; i < n; i++) {
			int one;

			memcpy(&one, p + i * sizeof(int), sizeof(int));
			fn(one);
		}
	}
}

VL_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	ssize_t r = VL_NEXT(recvmsg_fn, "recvmsg", raw_recvmsg)(fd, msg, flags);

	if (__builtin_expect(r >= 0 && msg != NULL && msg->msg_controllen > 0, 0))
		each_passed(msg, vl_ash_received);
	return r;
}

VL_EXPORT int recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags, struct timespec *t)
{
	int r = VL_NEXT(recvmmsg_fn, "recvmmsg", raw_recvmmsg)(fd, v, n, flags, t);

	for (int i = 0; __builtin_expect(v != NULL && i < r, 0); i++)
		if (v[i].msg_hdr.msg_controllen > 0)
			each_passed(&v[i].msg_hdr, vl_ash_received);
	return r;
}

/* Read only once the kernel has accepted the message: a bad one gets EFAULT, not a fault. */
VL_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	ssize_t r = VL_NEXT(sendmsg_fn, "sendmsg", raw_sendmsg)(fd, msg, flags);

	if (__builtin_expect(r >= 0 && msg != NULL && msg->msg_controllen > 0, 0))
		each_passed(msg, vl_ash_sent);
	return r;
}

VL_EXPORT int sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags)
{
	int r = VL_NEXT(sendmmsg_fn, "sendmmsg", raw_sendmmsg)(fd, v, n, flags);

	for (int i = 0; __builtin_expect(v != NULL && i < r, 0); i++)
		if (v[i].msg_hdr.msg_controllen > 0)
			each_passed(&v[i].msg_hdr, vl_ash_sent);
	return r;
}
