/* SPDX-License-Identifier: MIT */
/*
 * sys.h - the system calls the runtime makes.
 *
 * The error convention of the runtime, one everywhere: a function
 * returns 0 (or a count, or a descriptor) on success and -errno on
 * failure, and leaves errno alone; a descriptor that holds nothing is
 * < 0. The vl_raw_ layer below keeps it too, and does not even write
 * errno on failure: it makes the system call with the kernel's own
 * calling sequence (vl_sys_call0..6: inline assembly for x86-64 and
 * aarch64, elsewhere libc's syscall() with errno saved and put back),
 * whose answer already is the result or -errno. So a vfork or
 * clone(CLONE_VM) child, which shares its parent's errno, and the shim,
 * which must leave a host's errno as it found it on success, need no
 * saving around it. It costs nothing where it matters: a MARK+UNMARK
 * pair's two system calls (statx, fallocate) were made so already, and
 * callgrind counts 2,618 and 2,956 instructions a pair (make bench
 * BENCH_ARGS="--only counts") where libc's syscall() layer counted 2,625
 * and 2,963 (the self page's lookup, this_process.c, kept inline apart
 * from its first mmap). Only the host's own calls, passed on by the shim
 * when the next definition is missing, turn it back into libc's -1 and
 * errno (vl_as_libc), as libc would have given them to the host; a libc
 * call kept for a reason (fork, for its atfork handlers) is read as
 * -errno with vl_from_libc.
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
 *
 * This is the one door: no file of the library, the shim or the command
 * calls syscall() itself. A vl_raw_ call touches nothing of the process:
 * not errno, no fault counter, no lock, no allocation. So it is the one to use where the
 * caller may be a vfork or clone(CLONE_VM) child of the host, running on
 * its parent's memory (this_process.c's vl_borrowed, the close pass-through), and
 * for the host's own calls the shim passes on. A call the library makes
 * for itself is a fault point of the fault build: VL_SYSCALL (core/fault.h)
 * around the vl_raw_ call, and vl_sys_ calls are fault points inside.
 * Left raw, and why: getpid, geteuid and sched_yield (they cannot fail)
 * and the self page's mmap and madvise (this_process.c: a vfork child may
 * make them), close and munmap (the kernel releases whatever close says),
 * futex (lock.c: a wait already wakes early, a wake never fails), the
 * shim's pass-throughs and cutils.c's ioctl (the host's own calls),
 * log.c's write and the debug build's lock-check lines (VOLATILE_DEBUG or
 * a test build only), kcmp (procs.c: its failure costs one more look),
 * ashmem/user.c's pipe2 (it probes the caller's memory), clone_memfd's
 * read-backs (ashmem/ioctl.c), and region.c's fchmod and its linkat
 * fallbacks (after a fault point's answer).
 * Two calls stay libc's, on purpose: clock_gettime (the vDSO: no system
 * call at all) and pthread_sigmask (punch.c: glibc keeps its own
 * cancellation and set*id signals out of any mask, which a raw
 * rt_sigprocmask would block).
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

/* the numbers an older <sys/syscall.h> lacks (the same on every architecture) */
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#if !defined(SYS_kcmp) && defined(__x86_64__)
#define SYS_kcmp 312
#endif

/*
 * ---- the kernel's calling sequence: vl_sys_call0..6 ----
 *
 * A system call made inline: the result, or -errno, and errno never
 * written, not even on failure. That is what lets a vfork or
 * clone(CLONE_VM) child of the host (which runs on its parent's memory,
 * its errno included) and the shim's own work on a host's call (which
 * must leave the host's errno as it found it on success) make one, and
 * it costs less than libc's syscall(), whose argument shuffle and errno
 * store were a tenth of a MARK. x86-64 and aarch64 are written here;
 * elsewhere libc's syscall() with errno saved and restored around it,
 * the same results at a few more instructions (and a write of errno,
 * put back, that a vfork child's parent cannot tell from none).
 * VL_SYS_GENERIC takes that way on any architecture: test-sys-generic
 * runs the same tests through it. (The aarch64 sequence was run under
 * qemu-aarch64 from Debian's qemu-user and gcc-aarch64-linux-gnu; no
 * test of make check can, on an x86-64 machine without them.)
 */
#if defined(__x86_64__) && !defined(VL_SYS_GENERIC)
/* rdi, rsi, rdx, r10, r8, r9; the instruction clobbers rcx and r11 */
static inline long vl_sys_call6(long nr, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
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

static inline long vl_sys_call3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__) && !defined(VL_SYS_GENERIC)
/* svc 0: the number in x8, arguments in x0..x5, the result in x0 */
static inline long vl_sys_call6(long nr, long a, long b, long c, long d, long e, long f)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;

	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
}

static inline long vl_sys_call5(long nr, long a, long b, long c, long d, long e)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;

	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4)
			 : "memory");
	return x0;
}

static inline long vl_sys_call4(long nr, long a, long b, long c, long d)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;

	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
	return x0;
}

static inline long vl_sys_call3(long nr, long a, long b, long c)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;

	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	return x0;
}
#else
/* libc's -1 can only be an error for the calls below (no getpriority, no lseek past 2^63) */
static inline long vl_sys_call6(long nr, long a, long b, long c, long d, long e, long f)
{
	int saved = errno;
	long ret = syscall(nr, a, b, c, d, e, f);

	if (ret == -1)
		ret = -(long)errno;
	errno = saved;
	return ret;
}

static inline long vl_sys_call5(long nr, long a, long b, long c, long d, long e)
{
	return vl_sys_call6(nr, a, b, c, d, e, 0);
}

static inline long vl_sys_call4(long nr, long a, long b, long c, long d)
{
	return vl_sys_call6(nr, a, b, c, d, 0, 0);
}

static inline long vl_sys_call3(long nr, long a, long b, long c)
{
	return vl_sys_call6(nr, a, b, c, 0, 0, 0);
}
#endif

/* fewer arguments: the registers left over are not looked at */
#define vl_sys_call2(nr, a, b) vl_sys_call3((nr), (a), (b), 0)
#define vl_sys_call1(nr, a) vl_sys_call3((nr), (a), 0, 0)
#define vl_sys_call0(nr) vl_sys_call3((nr), 0, 0, 0)

/*
 * ---- the raw layer: libc's names, the kernel's calls, -errno ----
 *
 * The result (>= 0), or -errno; errno untouched. mmap's error is a
 * pointer in the last page of the address space: vl_map_error.
 */

/* the optional last argument of open and fcntl, 0 when not given */
#define VL_RAW_OPT(...) ((long)(__VA_ARGS__ + 0))

#define vl_raw_open(path, flags, ...) \
	((int)vl_sys_call4(SYS_openat, AT_FDCWD, (long)(path), (flags), VL_RAW_OPT(__VA_ARGS__)))
#define vl_raw_openat(dirfd, path, flags, ...) \
	((int)vl_sys_call4(SYS_openat, (dirfd), (long)(path), (flags), VL_RAW_OPT(__VA_ARGS__)))
#define vl_raw_fcntl(fd, cmd, ...) ((int)vl_sys_call3(SYS_fcntl, (fd), (cmd), VL_RAW_OPT(__VA_ARGS__)))

static inline int vl_raw_close(int fd)
{
	return (int)vl_sys_call1(SYS_close, fd);
}

static inline int vl_raw_fstat(int fd, struct stat *st)
{
	return (int)vl_sys_call2(SYS_fstat, fd, (long)st);
}

static inline int vl_raw_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	return (int)vl_sys_call4(SYS_newfstatat, dirfd, (long)path, (long)st, flags);
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
	return (int)vl_sys_call5(SYS_statx, dirfd, (long)path, flags, mask, (long)sx);
}

static inline void *vl_raw_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)vl_sys_call6(SYS_mmap, (long)addr, (long)len, prot, flags, fd, off);
}

/* -errno if p is vl_raw_mmap's failure, else 0 (no mapping ends in the last page) */
static inline int vl_map_error(const void *p)
{
	unsigned long v = (unsigned long)p;

	return v > -4096UL ? (int)(long)v : 0;
}

static inline int vl_raw_munmap(void *addr, size_t len)
{
	return (int)vl_sys_call2(SYS_munmap, (long)addr, (long)len);
}

/* read, pread and write: glibc's are cancellation points (reentry.c) */
static inline ssize_t vl_raw_read(int fd, void *buf, size_t len)
{
	return (ssize_t)vl_sys_call3(SYS_read, fd, (long)buf, (long)len);
}

static inline ssize_t vl_raw_pread(int fd, void *buf, size_t len, off_t off)
{
	return (ssize_t)vl_sys_call4(SYS_pread64, fd, (long)buf, (long)len, off);
}

static inline ssize_t vl_raw_write(int fd, const void *buf, size_t len)
{
	return (ssize_t)vl_sys_call3(SYS_write, fd, (long)buf, (long)len);
}

static inline ssize_t vl_raw_readlinkat(int dirfd, const char *path, char *buf, size_t size)
{
	return (ssize_t)vl_sys_call4(SYS_readlinkat, dirfd, (long)path, (long)buf, (long)size);
}

static inline int vl_raw_faccessat(int dirfd, const char *path, int mode)
{
	return (int)vl_sys_call3(SYS_faccessat, dirfd, (long)path, mode);
}

/* access(2): the real ids, as faccessat without flags */
static inline int vl_raw_access(const char *path, int mode)
{
	return vl_raw_faccessat(AT_FDCWD, path, mode);
}

/* how: a struct open_how (linux/openat2.h) of size bytes */
static inline int vl_raw_openat2(int dirfd, const char *path, const void *how, size_t size)
{
	return (int)vl_sys_call4(SYS_openat2, dirfd, (long)path, (long)how, (long)size);
}

/* fh: a struct file_handle */
static inline int vl_raw_open_by_handle_at(int mountfd, void *fh, int flags)
{
	return (int)vl_sys_call3(SYS_open_by_handle_at, mountfd, (long)fh, flags);
}

static inline int vl_raw_memfd_create(const char *name, unsigned flags)
{
	return (int)vl_sys_call2(SYS_memfd_create, (long)name, flags);
}

static inline int vl_raw_ftruncate(int fd, off_t len)
{
	return (int)vl_sys_call2(SYS_ftruncate, fd, len);
}

static inline off_t vl_raw_lseek(int fd, off_t off, int whence)
{
	return (off_t)vl_sys_call3(SYS_lseek, fd, off, whence);
}

struct statfs;

static inline int vl_raw_fstatfs(int fd, struct statfs *sf)
{
	return (int)vl_sys_call2(SYS_fstatfs, fd, (long)sf);
}

static inline int vl_raw_statfs(const char *path, struct statfs *sf)
{
	return (int)vl_sys_call2(SYS_statfs, (long)path, (long)sf);
}

static inline int vl_raw_unlinkat(int dirfd, const char *path, int flags)
{
	return (int)vl_sys_call3(SYS_unlinkat, dirfd, (long)path, flags);
}

static inline int vl_raw_pipe2(int fds[2], int flags)
{
	return (int)vl_sys_call2(SYS_pipe2, (long)fds, flags);
}

/* fh: a struct file_handle, its handle_bytes set */
static inline int vl_raw_name_to_handle_at(int dirfd, const char *path, void *fh, int *mnt,
					   int flags)
{
	return (int)vl_sys_call5(SYS_name_to_handle_at, dirfd, (long)path, (long)fh, (long)mnt,
				 flags);
}

static inline int vl_raw_madvise(void *addr, size_t len, int advice)
{
	return (int)vl_sys_call3(SYS_madvise, (long)addr, (long)len, advice);
}

static inline int vl_raw_linkat(int olddir, const char *old, int newdir, const char *new_,
				int flags)
{
	return (int)vl_sys_call5(SYS_linkat, olddir, (long)old, newdir, (long)new_, flags);
}

static inline int vl_raw_renameat2(int olddir, const char *old, int newdir, const char *new_,
				   unsigned flags)
{
	return (int)vl_sys_call5(SYS_renameat2, olddir, (long)old, newdir, (long)new_, flags);
}

static inline int vl_raw_fchmod(int fd, mode_t mode)
{
	return (int)vl_sys_call2(SYS_fchmod, fd, mode);
}

static inline int vl_raw_fallocate(int fd, int mode, off_t off, off_t len)
{
	return (int)vl_sys_call4(SYS_fallocate, fd, mode, off, len);
}

static inline int vl_raw_dup(int fd)
{
	return (int)vl_sys_call1(SYS_dup, fd);
}

static inline int vl_raw_dup3(int fd, int to, int flags)
{
	return (int)vl_sys_call3(SYS_dup3, fd, to, flags);
}

static inline int vl_raw_ioctl(int fd, unsigned long req, unsigned long arg)
{
	return (int)vl_sys_call3(SYS_ioctl, fd, (long)req, (long)arg);
}

static inline long vl_raw_getdents64(int fd, void *buf, size_t len)
{
	return vl_sys_call3(SYS_getdents64, fd, (long)buf, (long)len);
}

struct msghdr;
struct mmsghdr;

static inline ssize_t vl_raw_recvmsg(int fd, struct msghdr *msg, int flags)
{
	return (ssize_t)vl_sys_call3(SYS_recvmsg, fd, (long)msg, flags);
}

static inline int vl_raw_recvmmsg(int fd, struct mmsghdr *v, unsigned n, int flags,
				  struct timespec *t)
{
	return (int)vl_sys_call5(SYS_recvmmsg, fd, (long)v, n, flags, (long)t);
}

static inline ssize_t vl_raw_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	return (ssize_t)vl_sys_call3(SYS_sendmsg, fd, (long)msg, flags);
}

static inline int vl_raw_sendmmsg(int fd, struct mmsghdr *v, unsigned n, int flags)
{
	return (int)vl_sys_call4(SYS_sendmmsg, fd, (long)v, n, flags);
}

/* getpid(2) cannot fail; a vfork child asks it (this_process.c, vl_borrowed) */
static inline pid_t vl_raw_getpid(void)
{
	return (pid_t)vl_sys_call0(SYS_getpid);
}

/* never fails */
static inline uid_t vl_raw_geteuid(void)
{
	return (uid_t)vl_sys_call0(SYS_geteuid);
}

static inline int vl_raw_sched_yield(void)
{
	return (int)vl_sys_call0(SYS_sched_yield);
}

static inline int vl_raw_kill(pid_t pid, int sig)
{
	return (int)vl_sys_call2(SYS_kill, pid, sig);
}

static inline int vl_raw_pidfd_open(pid_t pid, unsigned flags)
{
	return (int)vl_sys_call2(SYS_pidfd_open, pid, flags);
}

static inline int vl_raw_pidfd_getfd(int pidfd, int fd, unsigned flags)
{
	return (int)vl_sys_call3(SYS_pidfd_getfd, pidfd, fd, flags);
}

static inline int vl_raw_pidfd_send_signal(int pidfd, int sig, void *info, unsigned flags)
{
	return (int)vl_sys_call4(SYS_pidfd_send_signal, pidfd, sig, (long)info, flags);
}

/* hdr, data: a cap_user_header_t and cap_user_data_t (linux/capability.h) */
static inline int vl_raw_capget(void *hdr, void *data)
{
	return (int)vl_sys_call2(SYS_capget, (long)hdr, (long)data);
}

static inline int vl_raw_kcmp(pid_t a, pid_t b, int type, unsigned long x, unsigned long y)
{
	return (int)vl_sys_call5(SYS_kcmp, a, b, type, (long)x, (long)y);
}

static inline long vl_raw_futex(uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
	return vl_sys_call6(SYS_futex, (long)word, op, val, (long)ts, 0, 0);
}

static inline int vl_raw_close_range(unsigned first, unsigned last, unsigned flags)
{
	return (int)vl_sys_call3(SYS_close_range, first, last, flags);
}

static inline long vl_raw_seccomp(unsigned op, unsigned flags, void *args)
{
	return vl_sys_call3(SYS_seccomp, op, flags, (long)args);
}

/*
 * A pass-through's answer to the host, as libc's wrapper would give it:
 * -1 and errno on failure, the result (errno untouched) on success.
 */
static inline long vl_as_libc(long r)
{
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* A libc call's -1 and errno, as -errno: fork's (atfork handlers), and the few without a vl_raw_ */
static inline long vl_from_libc(long r)
{
	return r < 0 ? -(long)errno : r;
}

/*
 * glibc's clone under its other name (the library's clone only counts
 * children), which sets up the new stack; its errno turned into -errno
 * and put back, as the rest of the layer.
 */
int __clone(int (*fn)(void *), void *stack, int flags, void *arg, ...);

static inline int vl_raw_clone(int (*fn)(void *), void *stack, int flags, void *arg)
{
	int saved = errno;
	int pid = __clone(fn, stack, flags, arg);

	if (pid < 0)
		pid = -errno;
	errno = saved;
	return pid;
}

/* ---- the runtime's calls: -errno ------------------------------------------------ */

/* Inline: every MARK and UNMARK asks it once (args.c), and the call was a tenth of it. */
static inline int vl_sys_fallocate(int fd, int mode, int64_t off, int64_t len)
{
	int r = VL_SYSCALL("fallocate", vl_raw_fallocate(fd, mode, off, len));

	return r < 0 ? r : 0;
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
