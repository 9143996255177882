/* SPDX-License-Identifier: MIT */
/*
 * ident.c - argument and file checks for MARK and UNMARK.
 *
 * The kernel's vfs_fallocate checks, in order: offset and length, mode,
 * open for writing, append-only/immutable, FIFO, directory, regular file
 * or block device, and offset + len against the maximum size. Asking the
 * kernel itself for a hole punch at LLONG_MAX + 1 runs every one of those
 * checks and then fails with EFBIG without touching the file: one system
 * call answers rows 4 to 8 of DESIGN 5 exactly as the kernel would,
 * append-only included (a punch is refused on an append-only file).
 */
#include "ident.h"

#include "core/compiler.h"
#include "core/fault.h"

#include "log.h"
#include "volatile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/falloc.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

#define MODE_VOLATILE (FALLOC_FL_MARK_VOLATILE | FALLOC_FL_UNMARK_VOLATILE)

/*
 * "Is this mount a tmpfs" is cached by unique mount id: such an id is never
 * reused and a mount never changes type, so the answer cannot go stale.
 * What an fd refers to is never cached. Entries are (id << 1 | tmpfs),
 * 0 when empty; racing writers store equal values.
 */
#define MOUNT_CACHE 16
static uint64_t mount_cache[MOUNT_CACHE];

/*
 * Asked of the kernel's memory, never of the file's file system (DESIGN
 * 14): fstatfs of a FUSE or network file asks its server, which may never
 * answer, and a thread waiting for an answer its server has read cannot
 * even be killed. F_GET_SEALS answers from the file's mapping alone: only
 * shmem (tmpfs, memfd) and hugetlbfs files have seals, every other file
 * gets EINVAL; both keep their statfs in memory, so only they are asked
 * it. 1, 0 (EINVAL: no file of this mount is tmpfs), or -errno: a
 * refused F_GET_SEALS (a seccomp policy) is not known, -EOPNOTSUPP, as a
 * refused file handle is.
 */
static int fd_on_tmpfs(int fd)
{
	struct statfs sf;

	if (VL_SYSCALL("get seals", vl_raw_fcntl(fd, F_GET_SEALS)) < 0)
		return errno == EINVAL ? 0 : -EOPNOTSUPP;
	if (VL_SYSCALL("fstatfs", fstatfs(fd, &sf)) != 0)
		return -errno;
	return sf.f_type == TMPFS_MAGIC;
}

static int on_tmpfs(int fd, const struct vl_stat *st)
{
	uint64_t *slot, v;
	int t;

	if (!st->mnt_id_unique)
		return fd_on_tmpfs(fd);
	slot = &mount_cache[st->mnt_id % MOUNT_CACHE];
	v = __atomic_load_n(slot, __ATOMIC_RELAXED);
	if (v != 0 && v >> 1 == st->mnt_id)
		return (int)(v & 1);
	t = fd_on_tmpfs(fd);
	if (t >= 0)
		__atomic_store_n(slot, st->mnt_id << 1 | (uint64_t)t, __ATOMIC_RELAXED);
	return t;
}

/*
 * "This file can never be sealed against writing" is cached by identity
 * (layout.h), learnt for this very call: a
 * memfd or tmpfs file whose seals include F_SEAL_SEAL and neither write
 * seal keeps that set of seals for as long as it lives (seals are only
 * ever added, and F_SEAL_SEAL forbids adding any). memfd_create() without
 * MFD_ALLOW_SEALING, and every tmpfs file, start so. What the fd refers
 * to is not cached: only a property of the file the fd was just found to
 * be. Without a birth time nothing is cached.
 *
 * Each slot is a sequence lock: a reader that sees it odd or changed
 * takes the slow way (one fcntl); a writer that cannot take it at once
 * gives up. Nothing ever waits, so a signal handler is safe here.
 */
#define SEAL_CACHE 64

struct seal_slot {
	uint64_t seq; /* odd while written */
	uint64_t dev, ino;
	int64_t btime_sec;
	uint32_t btime_nsec, igen;
};

static struct seal_slot seal_cache[SEAL_CACHE];

static struct seal_slot *seal_slot_of(const struct vl_ident *id)
{
	uint64_t h = (id->ino ^ (id->dev * 0x9e3779b97f4a7c15ull) ^ (uint64_t)id->btime_nsec) *
		     0xbf58476d1ce4e5b9ull;

	return &seal_cache[(h >> 32) % SEAL_CACHE];
}

static int never_write_sealed(const struct vl_ident *id)
{
	struct seal_slot *s = seal_slot_of(id);
	uint64_t q = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
	int hit;

	if (q == 0 || (q & 1))
		return 0;
	hit = __atomic_load_n(&s->dev, __ATOMIC_RELAXED) == id->dev &&
	      __atomic_load_n(&s->ino, __ATOMIC_RELAXED) == id->ino &&
	      __atomic_load_n(&s->btime_sec, __ATOMIC_RELAXED) == id->btime_sec &&
	      __atomic_load_n(&s->btime_nsec, __ATOMIC_RELAXED) == id->btime_nsec &&
	      __atomic_load_n(&s->igen, __ATOMIC_RELAXED) == id->igen;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return hit && __atomic_load_n(&s->seq, __ATOMIC_RELAXED) == q;
}

static void note_never_write_sealed(const struct vl_ident *id)
{
	struct seal_slot *s = seal_slot_of(id);
	uint64_t q = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);

	if (id->btime_sec == 0 && id->btime_nsec == 0)
		return;
	if ((q & 1) || !__atomic_compare_exchange_n(&s->seq, &q, q + 1, 0, __ATOMIC_ACQUIRE,
						    __ATOMIC_RELAXED))
		return;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&s->dev, id->dev, __ATOMIC_RELAXED);
	__atomic_store_n(&s->ino, id->ino, __ATOMIC_RELAXED);
	__atomic_store_n(&s->btime_sec, id->btime_sec, __ATOMIC_RELAXED);
	__atomic_store_n(&s->btime_nsec, id->btime_nsec, __ATOMIC_RELAXED);
	__atomic_store_n(&s->igen, id->igen, __ATOMIC_RELAXED);
	__atomic_store_n(&s->seq, q + 2, __ATOMIC_RELEASE);
}

int vl_is_tmpfs_file(int fd)
{
	struct vl_stat st;
	int err = vl_sys_statx(fd, &st);

	if (err)
		return err;
	return S_ISREG(st.mode) ? on_tmpfs(fd, &st) : 0;
}

/*
 * The file this thread asked about last, and what was learnt of it: on
 * tmpfs (by its mount), its generation, never sealable. Keyed as the
 * caches above are (the mount, device, inode and birth time the statx of
 * this very call gave), so it answers exactly what they would, without
 * their lookups: a program marks and unmarks the same file again and
 * again. Per thread, and the library is not re-entered in a thread
 * (enter.c): no lock, no sequence.
 */
struct last_file {
	uint64_t mnt, dev, ino;
	int64_t btime_sec;
	uint32_t btime_nsec, igen;
	int never_sealed;
	int valid;
};

static __thread struct last_file last_file __attribute__((tls_model("initial-exec")));

static int last_is(const struct vl_stat *st)
{
	const struct last_file *l = &last_file;

	return l->valid && st->mnt_id_unique && l->mnt == st->mnt_id && l->dev == st->id.dev &&
	       l->ino == st->id.ino && l->btime_sec == st->id.btime_sec &&
	       l->btime_nsec == st->id.btime_nsec;
}

static void last_set(const struct vl_stat *st)
{
	struct last_file *l = &last_file;

	l->valid = st->mnt_id_unique;
	l->mnt = st->mnt_id;
	l->dev = st->id.dev;
	l->ino = st->id.ino;
	l->btime_sec = st->id.btime_sec;
	l->btime_nsec = st->id.btime_nsec;
	l->igen = st->id.igen;
	l->never_sealed = 0;
}

/* A file other than the thread's last: tmpfs_identity's first look. */
static VL_COLD int first_look(int fd, struct vl_stat *st, int *last)
{
	int t = on_tmpfs(fd, st), err;

	if (t <= 0)
		return t;
	/* no generation (a seccomp policy refusing file handles): no identity to trust */
	err = vl_sys_igen(fd, st);
	if (err)
		return err == -ENOMEM ? err : -EOPNOTSUPP;
	last_set(st);
	*last = st->mnt_id_unique;
	return 1;
}

/*
 * On tmpfs, with its generation in st: 1; 0 not on tmpfs; or -errno.
 * *last: st is the thread's last file (last_file describes it), on 1.
 */
static inline int tmpfs_identity(int fd, struct vl_stat *st, int *last)
{
	*last = last_is(st);
	if (*last) {
		st->id.igen = last_file.igen;
		return 1;
	}
	return first_look(fd, st, last);
}

/* EBADF or EINVAL for arguments fallocate refuses */
static VL_COLD int bad_arguments(int fd)
{
	/* an fd that is not open comes first, as in the kernel, for
	 * which an O_PATH fd is not open either */
	int fl = VL_SYSCALL("getfl", vl_raw_fcntl(fd, F_GETFL));

	if (fl < 0 || (fl & O_PATH))
		return -EBADF;
	return -EINVAL;
}

/* A MARK of a memfd not known never to be write-sealed: 0, or -EPERM if it is. */
static VL_COLD int seals_allow(int fd, const struct vl_stat *st, int last)
{
	int seals = VL_SYSCALL("get seals", vl_raw_fcntl(fd, F_GET_SEALS));

	if (seals > 0 && (seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)))
		return -EPERM;
	if (seals > 0 && (seals & F_SEAL_SEAL)) {
		note_never_write_sealed(&st->id);
		if (last)
			last_file.never_sealed = 1;
	}
	return 0;
}

int vl_check(int fd, int mode, int64_t off, int64_t len, struct vl_stat *st)
{
	int mark = (mode & FALLOC_FL_MARK_VOLATILE) != 0;
	int unmark = (mode & FALLOC_FL_UNMARK_VOLATILE) != 0;
	int others = mode & ~(MODE_VOLATILE | FALLOC_FL_KEEP_SIZE);
	int err, t, last;

	if (off < 0 || len <= 0 || (mark && unmark) || others)
		return bad_arguments(fd);
	err = vl_sys_fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, LLONG_MAX, 1);
	if (err != -EFBIG)
		return err == 0 ? -EIO : err;
	if (off > LLONG_MAX - len)
		return -EFBIG; /* tmpfs's maximum size is LLONG_MAX */
	err = vl_sys_statx(fd, st);
	if (err)
		return err;
	if (!S_ISREG(st->mode))
		return -EOPNOTSUPP; /* a block device */
	t = tmpfs_identity(fd, st, &last);
	if (t < 0)
		return t;
	if (!t)
		return -EOPNOTSUPP;
	/* only a memfd can be sealed, and a memfd has no name */
	if (mark && st->nlink == 0 && !(last && last_file.never_sealed) &&
	    !never_write_sealed(&st->id) && (err = seals_allow(fd, st, last)) != 0)
		return err;
	return mark ? VL_OP_MARK : VL_OP_UNMARK;
}
