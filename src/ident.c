/* SPDX-License-Identifier: MIT */
/*
 * ident.c - a file's identity (DESIGN 14), in one room: derived (statx,
 * then the generation from the file handle), remembered (one cache),
 * hashed (vl_ident_hash) and compared (vl_ident_same, core/layout.h);
 * and whether the file is on tmpfs at all, which comes first.
 */
#include "ident.h"

#include "core/compiler.h"
#include "core/fault.h"

#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>

#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x4000U
#endif
#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x1000U
#endif

/* ---- deriving: statx, and the generation from the file handle ---------------- */

/* Inline, as do_statx: statx is one of the two calls of every MARK and UNMARK. */
static VL_INLINE void from_statx(const struct statx *sx, struct vl_stat *st)
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
static VL_INLINE int do_statx(int dirfd, const char *path, int flags, struct vl_stat *st)
{
	struct statx sx;

	/* not statx(): the ashmem gate there would answer for a region fd (the device) */
	long r = VL_SYSCALL("statx", vl_sys_call5(SYS_statx, dirfd, (long)path,
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
 * The inode's generation, from its file handle (ident.h: shmem's).
 * Another file system's handle is not one of ours: -EOPNOTSUPP.
 */
static int handle_igen(int dirfd, const char *path, int flags, uint64_t ino, uint32_t *igen)
{
	union {
		struct file_handle h;
		char room[sizeof(struct file_handle) + 128];
	} fh;
	uint32_t w[VL_SHMEM_HANDLE_WORDS];
	int mnt, err;

	fh.h.handle_bytes = 128;
	err = VL_SYSCALL("name_to_handle_at",
			 vl_raw_name_to_handle_at(dirfd, path, &fh.h, &mnt, flags));
	if (err != 0)
		return err == -EOVERFLOW ? -EOPNOTSUPP : err;
	if (fh.h.handle_type != VL_SHMEM_HANDLE_TYPE || fh.h.handle_bytes != sizeof(w))
		return -EOPNOTSUPP;
	memcpy(w, fh.h.f_handle, sizeof(w));
	if (((uint64_t)w[2] << 32 | w[1]) != ino)
		return -EOPNOTSUPP;
	*igen = w[0];
	return 0;
}

void vl_ident_handle(const struct vl_ident *id, struct file_handle *h)
{
	uint32_t w[VL_SHMEM_HANDLE_WORDS] = { id->igen, (uint32_t)id->ino,
					      (uint32_t)(id->ino >> 32) };

	h->handle_bytes = sizeof(w);
	h->handle_type = VL_SHMEM_HANDLE_TYPE;
	memcpy(h->f_handle, w, sizeof(w));
}

/* ---- remembering: one cache of what was learnt of a file --------------------- */

/*
 * What this process learnt of a file, by its identity. Two facts, each
 * with the key it is good for:
 *
 * KNOWS_GEN: the file of (unique mount id, dev, ino, birth time) has
 * generation id.igen. A file handle costs twice a statx, and that key
 * names one inode for the whole boot: a unique mount id is never reused,
 * so it names one mount of one superblock, and in one superblock a (ino,
 * birth time) pair could only come back after its inode counter wrapped,
 * 2^32 inodes later, within one clock tick. Without unique mount ids
 * (kernels before 6.8) it is never learnt: every identity asks the handle.
 *
 * NEVER_SEALED: the file of identity id (generation included, any mount)
 * can never be sealed against writing: its seals include F_SEAL_SEAL and
 * neither write seal, and seals are only ever added, F_SEAL_SEAL
 * forbidding any more. memfd_create() without MFD_ALLOW_SEALING, and
 * every tmpfs file, start so. Learnt only of a file with a birth time.
 *
 * Only properties of the file are kept, never what an fd refers to: a
 * caller looks its file up by the statx of its own call, so an entry can
 * at worst be missing (a slot taken by another file, a write in
 * progress), and a miss is only the slow way, the system call.
 */
#define FACT_KNOWS_GEN 0x1u
#define FACT_NEVER_SEALED 0x2u

struct ident_facts {
	uint64_t mnt; /* the unique mount id, with KNOWS_GEN */
	struct vl_ident id;
	uint32_t facts;
};

/* Is st (generation included) the file whose generation e knows? */
static VL_INLINE int knows_gen_of(const struct ident_facts *e, const struct vl_stat *st)
{
	return (e->facts & FACT_KNOWS_GEN) && st->mnt_id_unique && e->mnt == st->mnt_id &&
	       vl_ident_same(&e->id, &st->id);
}

/*
 * The same for st from statx, all of its identity but the generation:
 * e's is lent to st, and kept if e is st's file.
 */
static VL_INLINE int lend_gen(const struct ident_facts *e, struct vl_stat *st)
{
	st->id.igen = e->id.igen;
	if (knows_gen_of(e, st))
		return 1;
	st->id.igen = 0;
	return 0;
}

/*
 * The cache, shared by the process's threads: 64 slots, a file in the
 * slot of its vl_ident_hash, the last writer's file kept. Each slot is a
 * sequence lock: a reader that sees it odd or changed takes the slow way;
 * a writer that cannot take it at once gives up. Nothing ever waits, so a
 * signal handler is safe here.
 */
#define IDENT_CACHE 64

struct ident_slot {
	uint64_t seq; /* odd while written */
	struct ident_facts e;
};

static struct ident_slot ident_cache[IDENT_CACHE];

static struct ident_slot *slot_of(const struct vl_ident *id)
{
	return &ident_cache[(vl_ident_hash(id) >> 32) % IDENT_CACHE];
}

/* A consistent copy of the slot of id, or 0. */
static int cache_read(const struct vl_ident *id, struct ident_facts *e)
{
	struct ident_slot *s = slot_of(id);
	uint64_t q = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);

	if (q == 0 || (q & 1))
		return 0;
	e->mnt = __atomic_load_n(&s->e.mnt, __ATOMIC_RELAXED);
	vl_ident_load(&e->id, &s->e.id);
	e->facts = __atomic_load_n(&s->e.facts, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&s->seq, __ATOMIC_RELAXED) == q;
}

/* Add what is learnt of a file to its slot: merged if the slot holds that file. */
static void cache_learn(const struct ident_facts *learnt)
{
	struct ident_slot *s = slot_of(&learnt->id);
	uint64_t q = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
	struct ident_facts e = *learnt;

	if ((q & 1) || !__atomic_compare_exchange_n(&s->seq, &q, q + 1, 0, __ATOMIC_ACQUIRE,
						    __ATOMIC_RELAXED))
		return;
	/* the slot is this writer's now: no other writer, readers will retry */
	if (q != 0 && vl_ident_same(&s->e.id, &e.id)) {
		e.facts |= s->e.facts;
		if (!(learnt->facts & FACT_KNOWS_GEN))
			e.mnt = s->e.mnt; /* the mount its generation was learnt by */
	}
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&s->e.mnt, e.mnt, __ATOMIC_RELAXED);
	vl_ident_store(&s->e.id, &e.id);
	__atomic_store_n(&s->e.facts, e.facts, __ATOMIC_RELAXED);
	__atomic_store_n(&s->seq, q + 2, __ATOMIC_RELEASE);
}

/*
 * The file this thread asked about last, and what was learnt of it: the
 * cache's facts (and "on tmpfs", by its mount), kept per thread without
 * a lookup, since a program marks and unmarks the same file again and
 * again. Only files of a unique mount id: the same key as KNOWS_GEN, so
 * it answers exactly what the cache would. The library is not re-entered
 * in a thread (reentry.c): no lock, no sequence.
 */
static __thread struct ident_facts last_file __attribute__((tls_model("initial-exec")));

/* ---- whether a file is on tmpfs ---------------------------------------------- */

/*
 * "This mount is a tmpfs" is kept by unique mount id: such an id is never
 * reused and a mount never changes type, so the answer cannot go stale.
 * A property of a mount, not of a file: a table of its own. Entries are
 * (id << 1 | 1), 0 when empty; racing writers store equal values.
 *
 * "Not a tmpfs" is never kept: it is the answer about the file the fd
 * named at the F_GET_SEALS, and another thread's dup2 onto that number
 * may have put another file there since the statx that gave the mount
 * id. Kept, one such answer would refuse every MARK of every file of that
 * tmpfs for the life of the process (a kill storm: 2.66 million of 3.6
 * million in 60 s). A wrong "tmpfs" is caught by the file handle, which
 * must be shmem's and name the inode statx saw.
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

	int err = VL_SYSCALL("get seals", vl_raw_fcntl(fd, F_GET_SEALS));

	if (err < 0)
		return err == -EINVAL ? 0 : -EOPNOTSUPP;
	err = VL_SYSCALL("fstatfs", vl_raw_fstatfs(fd, &sf));
	if (err != 0)
		return err;
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
	if (t == 1)
		__atomic_store_n(slot, st->mnt_id << 1 | 1, __ATOMIC_RELAXED);
	return t;
}

int vl_is_tmpfs_file(int fd)
{
	struct vl_stat st;
	int err = vl_sys_statx(fd, &st);

	if (err)
		return err;
	return S_ISREG(st.mode) ? on_tmpfs(fd, &st) : 0;
}

/* ---- the identity of fd or a path --------------------------------------------- */

int vl_sys_igen(int fd, struct vl_stat *st)
{
	struct ident_facts e;
	int err;

	if (st->mnt_id_unique && cache_read(&st->id, &e) && lend_gen(&e, st))
		return 0;
	err = handle_igen(fd, "", AT_EMPTY_PATH, st->id.ino, &st->id.igen);
	if (err)
		return err;
	if (st->mnt_id_unique) {
		e.mnt = st->mnt_id;
		e.id = st->id;
		e.facts = FACT_KNOWS_GEN;
		cache_learn(&e);
	}
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

/* ---- for a MARK or UNMARK (args.c) ------------------------------------------- */

/* A file other than the thread's last: vl_tmpfs_identity's first look. */
static VL_COLD int first_look(int fd, struct vl_stat *st)
{
	int t = on_tmpfs(fd, st), err;

	if (t <= 0)
		return t == 0 ? -EOPNOTSUPP : t;
	/* no generation (a seccomp policy refusing file handles): no identity to trust */
	err = vl_sys_igen(fd, st);
	if (err)
		return err == -ENOMEM ? err : -EOPNOTSUPP;
	last_file.mnt = st->mnt_id;
	last_file.id = st->id;
	last_file.facts = st->mnt_id_unique ? FACT_KNOWS_GEN : 0;
	return 0;
}

int vl_tmpfs_identity(int fd, struct vl_stat *st)
{
	int err = do_statx(fd, "", AT_EMPTY_PATH, st); /* vl_sys_statx, inline */

	if (err)
		return err;
	if (!S_ISREG(st->mode))
		return -EOPNOTSUPP; /* a block device */
	if (lend_gen(&last_file, st))
		return (last_file.facts & FACT_NEVER_SEALED) ? VL_NEVER_SEALED : 0;
	return first_look(fd, st);
}

int vl_ident_never_write_sealed(const struct vl_stat *st)
{
	struct ident_facts e;

	return cache_read(&st->id, &e) && (e.facts & FACT_NEVER_SEALED) &&
	       vl_ident_same(&e.id, &st->id);
}

void vl_ident_note_never_write_sealed(const struct vl_stat *st)
{
	struct ident_facts e = { .mnt = st->mnt_id, .id = st->id, .facts = FACT_NEVER_SEALED };

	if (knows_gen_of(&last_file, st))
		last_file.facts |= FACT_NEVER_SEALED;
	if (st->id.btime_sec != 0 || st->id.btime_nsec != 0)
		cache_learn(&e);
}
