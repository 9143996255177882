/* SPDX-License-Identifier: MIT */
/*
 * sys.c - system call wrappers (see sys.h).
 */
#include "sys.h"

#include "core/fault.h"

#include <dirent.h>
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

int vl_each_line(const char *path, int (*fn)(void *arg, char *line), void *arg)
{
	char buf[4096];
	size_t have = 0;
	int fd = VL_SYSCALL("open proc file", vl_raw_open(path, O_RDONLY | O_CLOEXEC));
	int skipping = 0, stop = 0;

	if (fd < 0)
		return -errno;
	while (stop == 0) {
		ssize_t n = VL_SYSCALL("read proc file",
				       vl_raw_read(fd, buf + have, sizeof(buf) - 1 - have));
		char *line = buf, *nl;

		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		if (skipping) { /* the rest of an overlong line */
			nl = strchr(buf, '\n');
			if (nl == NULL) {
				have = 0;
				continue;
			}
			skipping = 0;
			line = nl + 1;
		}
		for (; stop == 0 && (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
			*nl = '\0';
			stop = fn(arg, line);
		}
		have = (size_t)(buf + have - line);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1) {
			have = 0;
			skipping = 1;
		}
	}
	vl_raw_close(fd);
	return stop;
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

/*
 * Cached attributes only (AT_STATX_DONT_SYNC): what another process
 * holds may be on NFS or FUSE, and a stat that waits for a server would
 * hang the host program. For tmpfs, cached is all there is.
 */
static int do_statx(int dirfd, const char *path, int flags, struct vl_stat *st)
{
	struct statx sx;

	/* not statx(): the ashmem gate there would answer for a region fd (the device) */
	long r = VL_SYSCALL_NEG("statx", vl_sys_call5(SYS_statx, dirfd, (long)path,
						      flags | AT_STATX_DONT_SYNC,
						      STATX_TYPE | STATX_NLINK | STATX_INO |
							      STATX_BTIME | STATX_MNT_ID_UNIQUE,
						      (long)&sx));

	if (r != 0)
		return (int)r;
	from_statx(&sx, st);
	return 0;
}

/*
 * The inode's generation, from its file handle: shmem (tmpfs, memfd)
 * encodes type 1, three words: generation, inode number low and high.
 * Another file system's handle is not one of ours: -EOPNOTSUPP.
 */
static int handle_igen(int dirfd, const char *path, int flags, uint64_t ino, uint32_t *igen)
{
	union {
		struct file_handle h;
		char room[sizeof(struct file_handle) + 128];
	} fh;
	uint32_t w[3];
	int mnt;

	fh.h.handle_bytes = 128;
	if (VL_SYSCALL("name_to_handle_at",
		       name_to_handle_at(dirfd, path, &fh.h, &mnt, flags)) != 0)
		return errno == EOVERFLOW ? -EOPNOTSUPP : -errno;
	if (fh.h.handle_type != 1 || fh.h.handle_bytes != sizeof(w))
		return -EOPNOTSUPP;
	memcpy(w, fh.h.f_handle, sizeof(w));
	if (((uint64_t)w[2] << 32 | w[1]) != ino)
		return -EOPNOTSUPP;
	*igen = w[0];
	return 0;
}

/*
 * A file handle costs twice a statx, so generations are remembered, per
 * process, by (unique mount id, dev, ino, birth time). That key names one
 * inode for the whole boot: a unique mount id is never reused, so it
 * names one mount of one superblock, and in one superblock a (ino, birth
 * time) pair could only come back after its inode counter wrapped, 2^32
 * inodes later, within one clock tick. Without unique mount ids (kernels
 * before 6.8) nothing is remembered: every identity asks for the handle.
 *
 * Each slot is a sequence lock, as in ident.c: a reader that sees it odd
 * or changed asks the kernel; a writer that cannot take it gives up.
 * Nothing waits, so a signal handler is safe here.
 */
#define IGEN_CACHE 64

struct igen_slot {
	uint64_t seq; /* odd while written */
	uint64_t mnt, dev, ino;
	int64_t btime_sec;
	uint32_t btime_nsec, igen;
};

static struct igen_slot igen_cache[IGEN_CACHE];

static struct igen_slot *igen_slot_of(const struct vl_stat *st)
{
	uint64_t h = (st->id.ino ^ (st->mnt_id * 0x9e3779b97f4a7c15ull) ^
		      (uint64_t)st->id.btime_nsec) *
		     0xbf58476d1ce4e5b9ull;

	return &igen_cache[(h >> 32) % IGEN_CACHE];
}

static int igen_remembered(const struct vl_stat *st, uint32_t *igen)
{
	struct igen_slot *s = igen_slot_of(st);
	uint64_t q = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
	uint32_t g;
	int hit;

	if (q == 0 || (q & 1))
		return 0;
	hit = __atomic_load_n(&s->mnt, __ATOMIC_RELAXED) == st->mnt_id &&
	      __atomic_load_n(&s->dev, __ATOMIC_RELAXED) == st->id.dev &&
	      __atomic_load_n(&s->ino, __ATOMIC_RELAXED) == st->id.ino &&
	      __atomic_load_n(&s->btime_sec, __ATOMIC_RELAXED) == st->id.btime_sec &&
	      __atomic_load_n(&s->btime_nsec, __ATOMIC_RELAXED) == st->id.btime_nsec;
	g = __atomic_load_n(&s->igen, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (!hit || __atomic_load_n(&s->seq, __ATOMIC_RELAXED) != q)
		return 0;
	*igen = g;
	return 1;
}

static void igen_remember(const struct vl_stat *st, uint32_t igen)
{
	struct igen_slot *s = igen_slot_of(st);
	uint64_t q = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);

	if ((q & 1) || !__atomic_compare_exchange_n(&s->seq, &q, q + 1, 0, __ATOMIC_ACQUIRE,
						    __ATOMIC_RELAXED))
		return;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&s->mnt, st->mnt_id, __ATOMIC_RELAXED);
	__atomic_store_n(&s->dev, st->id.dev, __ATOMIC_RELAXED);
	__atomic_store_n(&s->ino, st->id.ino, __ATOMIC_RELAXED);
	__atomic_store_n(&s->btime_sec, st->id.btime_sec, __ATOMIC_RELAXED);
	__atomic_store_n(&s->btime_nsec, st->id.btime_nsec, __ATOMIC_RELAXED);
	__atomic_store_n(&s->igen, igen, __ATOMIC_RELAXED);
	__atomic_store_n(&s->seq, q + 2, __ATOMIC_RELEASE);
}

int vl_sys_igen(int fd, struct vl_stat *st)
{
	uint32_t igen;
	int err;

	if (st->mnt_id_unique && igen_remembered(st, &igen)) {
		st->id.igen = igen;
		return 0;
	}
	err = handle_igen(fd, "", AT_EMPTY_PATH, st->id.ino, &igen);
	if (err)
		return err;
	st->id.igen = igen;
	if (st->mnt_id_unique)
		igen_remember(st, igen);
	return 0;
}

int vl_sys_statx(int fd, struct vl_stat *st)
{
	return do_statx(fd, "", AT_EMPTY_PATH, st);
}

int vl_sys_fstat(int fd, struct vl_stat *st)
{
	int err = vl_sys_statx(fd, st);

	/* a file whose handle is not a tmpfs one keeps generation 0: no record names it */
	if (err == 0 && S_ISREG(st->mode))
		vl_sys_igen(fd, st);
	return err;
}

/*
 * The same for a path, without opening it: a stat and a handle follow the
 * path but call no open method, so they neither break a lease nor wake a
 * device. The path may name another file between the two calls: the
 * handle's inode number must match the stat's, and whoever acts on the
 * answer checks again on what it opened.
 */
int vl_sys_statx_at(int dirfd, const char *path, int follow, struct vl_stat *st)
{
	return do_statx(dirfd, path, follow ? 0 : AT_SYMLINK_NOFOLLOW, st);
}

int vl_sys_igen_at(int dirfd, const char *path, int follow, struct vl_stat *st)
{
	return handle_igen(dirfd, path, follow ? AT_SYMLINK_FOLLOW : 0, st->id.ino, &st->id.igen);
}

int vl_sys_stat_at(int dirfd, const char *path, int follow, struct vl_stat *st)
{
	int err = vl_sys_statx_at(dirfd, path, follow, st);

	if (err == 0 && S_ISREG(st->mode) && vl_sys_igen_at(dirfd, path, follow, st) != 0)
		st->id.igen = 0;
	return err;
}

/* Next entry of a directory (not . or ..), or NULL. */
struct dirent64 *vl_next_dirent(struct vl_dirbuf *d)
{
	for (;;) {
		struct dirent64 *e;

		if (d->pos >= d->len) {
			d->len = VL_SYSCALL("getdents",
					    vl_raw_getdents64(d->fd, d->buf, sizeof(d->buf)));
			d->pos = 0;
			if (d->len <= 0)
				return NULL;
		}
		e = (struct dirent64 *)(d->buf + d->pos);
		d->pos += e->d_reclen;
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			return e;
	}
}
