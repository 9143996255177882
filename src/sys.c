/*
 * sys.c - system call wrappers (see sys.h).
 */
#include "sys.h"

#include "core/fault.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x4000U
#endif
#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x1000U
#endif

int vl_sys_fallocate(int fd, int mode, int64_t off, int64_t len)
{
	long r = VL_SYSCALL("fallocate", syscall(SYS_fallocate, fd, mode, (off_t)off, (off_t)len));

	return r < 0 ? -errno : 0;
}

int vl_sys_punch(int fd, uint64_t off, uint64_t len)
{
	return vl_sys_fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (int64_t)off,
				(int64_t)len);
}

static void from_statx(const struct statx *sx, struct vl_stat *st)
{
	memset(st, 0, sizeof(*st));
	st->id.dev = makedev(sx->stx_dev_major, sx->stx_dev_minor);
	st->id.ino = sx->stx_ino;
	if (sx->stx_mask & STATX_BTIME) {
		st->id.btime_sec = sx->stx_btime.tv_sec;
		st->id.btime_nsec = sx->stx_btime.tv_nsec;
	}
	st->mode = sx->stx_mode;
	st->nlink = sx->stx_nlink;
	st->mnt_id = sx->stx_mnt_id;
	st->mnt_id_unique = (sx->stx_mask & STATX_MNT_ID_UNIQUE) != 0;
}

static int do_statx(int dirfd, const char *path, int flags, struct vl_stat *st)
{
	struct statx sx;

	if (VL_SYSCALL("statx", statx(dirfd, path, flags,
					    STATX_TYPE | STATX_NLINK | STATX_INO | STATX_BTIME |
						    STATX_MNT_ID_UNIQUE,
					    &sx)) != 0)
		return -errno;
	from_statx(&sx, st);
	return 0;
}

int vl_sys_fstat(int fd, struct vl_stat *st)
{
	return do_statx(fd, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, st);
}

int vl_sys_stat_at(int dirfd, const char *path, int follow, struct vl_stat *st)
{
	return do_statx(dirfd, path, follow ? 0 : AT_SYMLINK_NOFOLLOW, st);
}

int vl_same_file(const struct vl_ident *a, const struct vl_ident *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->btime_sec == b->btime_sec &&
	       a->btime_nsec == b->btime_nsec;
}

uint32_t vl_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint32_t)ts.tv_sec + 1;
}

static pid_t self_pid;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

static void forget_pid(void)
{
	__atomic_store_n(&self_pid, 0, __ATOMIC_RELAXED);
}

static void self_init(void)
{
	pthread_atfork(NULL, NULL, forget_pid);
}

pid_t vl_self(void)
{
	pid_t p = __atomic_load_n(&self_pid, __ATOMIC_RELAXED);

	if (p == 0) {
		pthread_once(&self_once, self_init);
		p = getpid();
		__atomic_store_n(&self_pid, p, __ATOMIC_RELAXED);
	}
	return p;
}
