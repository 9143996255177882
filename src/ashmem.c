/*
 * ashmem.c - ashmem regions on memfd (see ashmem.h).
 *
 * Where the state lives. A region's name, size, prot mask and "mapped
 * yet" live in the record of its memfd in the shared region (the path
 * field of a memfd's record is never used: memfds have no path), keyed
 * by the memfd's identity like every record, so a forked child or a
 * process that received the fd over a socket finds the same state. The
 * pins are the memfd's volatile ranges. VL_FF_ASHMEM keeps the record
 * while the region has no unpinned range; it goes at the last close of a
 * region made here and held by nothing else (vl_ash_close_begin), or at
 * its last munmap after that close (vl_ash_munmapped), or else
 * when the memfd is certainly gone (purge.c, vl_collect: `volatile purge`,
 * the daemon). open() never collects.
 *
 * Lock order as everywhere: the file's lock, then the region lock. The
 * state is guarded by the file's lock; the record's flags by the region
 * lock (VL_ASH_DEV never changes after creation).
 *
 * The caller's pointers (SET_NAME, GET_NAME, PIN, GET_FILE_ID) are read
 * and written with process_vm_readv/writev on ourselves (or, where those
 * are forbidden, through a pipe): a bad pointer gives EFAULT, as in the
 * driver, never a fault in the host program.
 */
#include "ashmem.h"

#include "ashmem_here.h"
#include "core/ashmem_rules.h"
#include "core/pool.h"
#include "core/rtree.h"
#include "evict.h"
#include "log.h"
#include "ops.h"
#include "purge.h"
#include "reach.h"
#include "region.h"
#include "self.h"
#include "sys.h"
#include "volatile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001U
#endif
#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING 0x0002U
#endif

uint64_t vl_ash_fdbits[VL_ASH_FDS / 64];
/* fds known to be regions opened as /dev/ashmem: what fstat answers when it cannot look */
static uint64_t devbits[VL_ASH_FDS / 64];

static void set_bit(uint64_t *bits, int fd)
{
	if (fd >= 0 && fd < VL_ASH_FDS)
		__atomic_fetch_or(&bits[fd / 64], 1ull << (fd % 64), __ATOMIC_RELAXED);
}

static void clear_bit(uint64_t *bits, int fd)
{
	if (fd >= 0 && fd < VL_ASH_FDS)
		__atomic_fetch_and(&bits[fd / 64], ~(1ull << (fd % 64)), __ATOMIC_RELAXED);
}

static int bit(const uint64_t *bits, int fd)
{
	return fd >= 0 && fd < VL_ASH_FDS &&
	       ((__atomic_load_n(&bits[fd / 64], __ATOMIC_RELAXED) >> (fd % 64)) & 1u);
}

void vl_ash_flag(int fd)
{
	set_bit(vl_ash_fdbits, fd);
}

void vl_ash_unflag(int fd)
{
	clear_bit(vl_ash_fdbits, fd);
	clear_bit(devbits, fd);
}

/* The prefix of a region's memfd as /proc/self/fd shows it (vl_ash_memfd_name). */
static const char region_link[] = "/memfd:" VL_ASH_NAME_DEF;

static int is_region_link(const char *link, long n)
{
	long pre = (long)sizeof(region_link) - 1;

	return n >= pre && memcmp(link, region_link, (size_t)pre) == 0 &&
	       (n == pre || link[pre] == '/' || link[pre] == ' ');
}

/*
 * Is fd a memfd named as the emulation names regions? A readlink, no
 * lock, no allocation: safe in a signal handler that interrupted the
 * library.
 */
static int named_region(int fd)
{
	char path[32] = "/proc/self/fd/", link[sizeof(region_link) + 1], digits[12];
	int n = 0, at = 14, saved = errno;
	long got;

	if (fd < 0)
		return 0;
	do
		digits[n++] = (char)('0' + fd % 10);
	while ((fd /= 10) != 0);
	while (n > 0)
		path[at++] = digits[--n];
	path[at] = '\0';
	got = syscall(SYS_readlinkat, AT_FDCWD, path, link, sizeof(link));
	errno = saved;
	return is_region_link(link, got);
}

void vl_ash_received(int fd)
{
	if (named_region(fd)) {
		vl_ash_flag(fd);
		vl_here_unsure(); /* it may be a twin of one made here, come back */
	} else if (vl_region_attached()) {
		vl_ash_flag(fd); /* a plain memfd given a prot mask: cheap to look, now */
	}
}

void vl_ash_reopened(int fd)
{
	if (named_region(fd)) {
		vl_ash_flag(fd);
		vl_here_unsure();
	}
}

void vl_ash_dup(int from, int to)
{
	if (vl_borrowed())
		return; /* a vfork child's dup is its own: the table is its parent's */
	vl_ash_flag(to);
	if (bit(devbits, from))
		set_bit(devbits, to);
	else
		clear_bit(devbits, to);
	vl_here_dup(from, to);
}

/*
 * A readlink per open fd, once, at load: a region fd inherited across exec
 * is a memfd named "dev/ashmem..." (vl_ash_memfd_name), so the gates see it.
 */
void vl_ash_seed(void)
{
	char buf[2048] __attribute__((aligned(8))), link[sizeof(region_link) + 1];
	int saved = errno, dir = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/fd",
					      O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n;

	while (dir >= 0 && (n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
		for (long pos = 0; pos < n;) {
			/* struct linux_dirent64: ino, off, reclen, type, name */
			unsigned short reclen;
			const char *name = buf + pos + 19;
			long got;
			int fd;

			memcpy(&reclen, buf + pos + 16, sizeof(reclen));
			pos += reclen;
			if (name[0] < '0' || name[0] > '9' || (fd = atoi(name)) == dir)
				continue;
			got = syscall(SYS_readlinkat, dir, name, link, sizeof(link));
			if (is_region_link(link, got))
				vl_ash_flag(fd);
		}
	}
	if (dir >= 0)
		syscall(SYS_close, dir);
	errno = saved;
}

static uint64_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 ? (uint64_t)p : 4096;
}

/* ---- system calls that must not come back into the shim ---------------- */

static int raw_memfd(const char *name, unsigned flags)
{
	long r = syscall(SYS_memfd_create, name, flags);

	return r < 0 ? -errno : (int)r;
}

static int raw_ftruncate(int fd, uint64_t size)
{
	if (size > (uint64_t)LLONG_MAX)
		return -EINVAL;
	return syscall(SYS_ftruncate, fd, (off_t)size) < 0 ? -errno : 0;
}

static int file_size(int fd, uint64_t *size)
{
	struct stat st;

	if (syscall(SYS_fstat, fd, &st) < 0)
		return -errno;
	*size = (uint64_t)st.st_size;
	return 0;
}

/* "/memfd:NAME (deleted)" -> NAME; 0, or -1 if fd is not a memfd. */
static int memfd_name(int fd, char *name, size_t size)
{
	static const char pre[] = "/memfd:", del[] = " (deleted)";
	char link[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n < (ssize_t)sizeof(pre) - 1 || memcmp(buf, pre, sizeof(pre) - 1) != 0)
		return -1;
	buf[n] = '\0';
	if ((size_t)n >= sizeof(pre) - 1 + sizeof(del) - 1 &&
	    strcmp(buf + n - (sizeof(del) - 1), del) == 0)
		buf[n - (sizeof(del) - 1)] = '\0';
	if (name != NULL && size > 0) {
		size_t len = strlen(buf + sizeof(pre) - 1);

		if (len >= size)
			len = size - 1;
		memcpy(name, buf + sizeof(pre) - 1, len);
		name[len] = '\0';
	}
	return 0;
}

/* ---- the caller's memory -------------------------------------------------- */

/* Through a pipe, where process_vm_* are not allowed: write(2) says EFAULT. */
static int via_pipe(void *dst, const void *src, size_t n)
{
	int p[2], err = 0;

	if (n > 4096 || pipe2(p, O_CLOEXEC) != 0)
		return -EFAULT;
	if (write(p[1], src, n) != (ssize_t)n || read(p[0], dst, n) != (ssize_t)n)
		err = -EFAULT;
	vl_raw_close(p[0]);
	vl_raw_close(p[1]);
	return err;
}

/* Copy n bytes from the caller's src (write: to the caller's dst). */
static int xfer(void *dst, const void *src, size_t n, int to_user)
{
	struct iovec mine, theirs;
	ssize_t got;

	if (n == 0)
		return 0;
	mine.iov_base = to_user ? (void *)src : dst;
	mine.iov_len = n;
	theirs.iov_base = to_user ? dst : (void *)src;
	theirs.iov_len = n;
	got = to_user ? process_vm_writev(getpid(), &mine, 1, &theirs, 1, 0)
		      : process_vm_readv(getpid(), &mine, 1, &theirs, 1, 0);
	if (got == (ssize_t)n)
		return 0;
	if (got < 0 && (errno == ENOSYS || errno == EPERM))
		return via_pipe(dst, src, n);
	return -EFAULT;
}

int vl_ash_copy_out(void *user, const void *src, size_t n)
{
	return xfer(user, src, n, 1);
}

static int copy_in(void *dst, const void *user, size_t n)
{
	return xfer(dst, user, n, 0);
}

static int copy_out(void *user, const void *src, size_t n)
{
	return xfer(user, src, n, 1);
}

/*
 * A string of at most max bytes from the caller, page by page, so that a
 * string that ends right before an unmapped page is read whole. Returns the
 * bytes copied (up to the NUL, or max), or -EFAULT.
 */
static long copy_in_str(char *dst, const char *user, size_t max)
{
	uint64_t page = page_size();
	size_t done = 0;

	while (done < max) {
		uintptr_t at = (uintptr_t)user + done;
		size_t chunk = (size_t)(page - (at & (page - 1)));

		if (chunk > max - done)
			chunk = max - done;
		if (copy_in(dst + done, (const void *)at, chunk) != 0)
			return -EFAULT;
		if (memchr(dst + done, '\0', chunk) != NULL)
			return (long)(done + strnlen(dst + done, chunk));
		done += chunk;
	}
	return (long)max;
}

/* ---- records -------------------------------------------------------------- */

struct rec {
	uint32_t fi, gen;   /* fi VL_NIL: the file has no record */
	uint32_t flags;     /* the record's VL_FF_* when looked up */
	uint32_t ashflags;  /* its VL_ASH_* then (VL_FF_ASHMEM only) */
};

static int lookup(const struct vl_region *r, const struct vl_ident *id, struct rec *out)
{
	int err = vl_lock_region(r);

	memset(out, 0, sizeof(*out));
	if (err)
		return err;
	err = vl_file_lookup(r, id, &out->fi);
	if (err == 0 && out->fi != VL_NIL) {
		const struct vl_file *f = vl_file_at(r, out->fi);

		out->gen = f->h.gen;
		out->flags = f->h.flags;
		out->ashflags = (f->h.flags & VL_FF_ASHMEM) ? f->ash.flags : 0;
	}
	vl_unlock_region(r);
	return err;
}

static void note_holder(struct vl_file *f, int fd)
{
	int32_t self = vl_self();
	int slot = 0;

	for (int i = 0; i < VL_HOLDERS; i++) {
		if (f->h.holders[i].pid == self || f->h.holders[i].pid == 0) {
			slot = i;
			break;
		}
	}
	f->h.holders[slot].pid = self;
	f->h.holders[slot].fd = fd;
}

/*
 * The record of st's file, made an ashmem record with state *init if it is
 * not one yet (a memfd may have a record already, from fallocate).
 */
static int record_once(const struct vl_region *r, const struct vl_stat *st, int fd,
		       const struct vl_ashmem *init, struct rec *out)
{
	struct vl_file *f;
	uint32_t fi;
	int err = vl_lock_region(r);

	if (err)
		return err;
	err = vl_file_lookup(r, &st->id, &fi);
	if (err == 0 && fi == VL_NIL)
		err = vl_file_new(r, &st->id, &fi);
	if (err == 0) {
		f = vl_file_at(r, fi);
		if (!(f->h.flags & VL_FF_ASHMEM)) {
			f->h.flags |= VL_FF_ASHMEM | VL_FF_ANON;
			f->h.path_len = 0;
			f->ash = *init;
		}
		note_holder(f, fd);
		out->fi = fi;
		out->gen = f->h.gen;
		out->flags = f->h.flags;
		out->ashflags = f->ash.flags;
	}
	vl_unlock_region(r);
	return err;
}

/* The same; a full table first makes room (evict.c). Call with no lock held. */
static void settle(void);

/*
 * The same; a full table first lets go of the regions this process let
 * go of (they may be waiting to be settled), then makes room (evict.c).
 * Call inside the library, with no lock held.
 */
static int make_record(const struct vl_region *r, const struct vl_stat *st, int fd,
		       const struct vl_ashmem *init, struct rec *out)
{
	int err = record_once(r, st, fd, init, out);

	if (err == -ENOMEM && __atomic_load_n(&vl_here_ndying, __ATOMIC_RELAXED) != 0) {
		settle();
		err = record_once(r, st, fd, init, out);
	}
	for (int tries = 0; err == -ENOMEM && tries < 2 && vl_evict(r) > 0; tries++)
		err = record_once(r, st, fd, init, out);
	return err;
}

/* Lock the record found; -ESTALE if it is another file's now. */
static int lock_rec(const struct vl_region *r, const struct rec *x, int want_ash)
{
	struct vl_file *f = vl_file_at(r, x->fi);
	int err = vl_lock_file(r, x->fi);

	if (err)
		return err;
	if (f->h.gen != x->gen || f->h.state != VL_FILE_LIVE || !vl_file_ok(r, f)) {
		vl_unlock_file(r, x->fi);
		return -ESTALE;
	}
	if (want_ash && (!(f->h.flags & VL_FF_ASHMEM) || !vl_ash_state_ok(&f->ash))) {
		vl_unlock_file(r, x->fi);
		return -EUCLEAN;
	}
	return 0;
}

/* ---- regions made in this process, for SET_NAME and close ---------------- */

void vl_ash_spawning(int begin, int child)
{
	if (begin)
		vl_here_fork_begin();
	else
		vl_here_fork_end(child);
}

void vl_ash_sent(int fd)
{
	vl_here_sent(fd);
}

/*
 * Which of ids[0..n) does an open fd of this process (other than skip)
 * refer to? held[i] set for those. A getdents of /proc/self/fd and an
 * fstat per open fd: the one look that sees fds the table cannot (opened
 * through /proc by glibc's own fopen, taken with pidfd_getfd). -1 if
 * /proc/self/fd cannot be read (then every one counts as held).
 */
static int fds_holding(const struct vl_ident *ids, int n, int skip, int *held)
{
	char buf[2048] __attribute__((aligned(8)));
	int dir = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/fd",
			       O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long got;

	if (dir < 0)
		return -1;
	while ((got = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
		for (long pos = 0; pos < got;) {
			/* struct linux_dirent64: ino, off, reclen, type, name */
			unsigned short reclen;
			const char *name = buf + pos + 19;
			struct vl_stat st;
			struct stat sb;
			int fd, maybe = 0;

			memcpy(&reclen, buf + pos + 16, sizeof(reclen));
			pos += reclen;
			if (name[0] < '0' || name[0] > '9')
				continue;
			fd = atoi(name);
			/* a plain fstat first: the whole identity only for a memfd with one's number */
			if (fd == skip || fd == dir || syscall(SYS_fstat, fd, &sb) != 0 ||
			    !S_ISREG(sb.st_mode) || sb.st_nlink != 0)
				continue;
			for (int i = 0; i < n && !maybe; i++)
				maybe = (uint64_t)sb.st_ino == ids[i].ino &&
					(uint64_t)sb.st_dev == ids[i].dev;
			if (!maybe || vl_sys_fstat(fd, &st) != 0)
				continue;
			for (int i = 0; i < n; i++)
				if (vl_ident_same(&st.id, &ids[i]))
					held[i] = 1;
		}
	}
	syscall(SYS_close, dir);
	return got < 0 ? -1 : 0;
}

/*
 * Is fd, on the memfd id, the only holder of a region made here? (no
 * child made since, not sent, no other fd on it here: the table, then a
 * look at every open fd)
 */
static int made_alone(int fd, const struct vl_ident *id)
{
	struct vl_here e;
	int held = 0;

	return vl_here_peek(fd, &e) && vl_ident_same(&e.id, id) && vl_here_alone(&e) &&
	       fds_holding(id, 1, fd, &held) == 0 && !held;
}

int vl_ash_new(const char *name, uint64_t size, int dev, int cloexec)
{
	char mname[VL_MEMFD_NAME_MAX + 1];
	struct vl_ashmem init;
	struct vl_region *r;
	struct vl_stat st;
	struct rec x;
	int fd, err;

	uint32_t epoch = vl_here_epoch(); /* before the memfd: a fork from now on is after */

	vl_ash_memfd_name(name, mname, sizeof(mname));
	fd = raw_memfd(mname, cloexec ? MFD_CLOEXEC : 0);
	if (fd < 0)
		return fd;
	if (size > 0 && (err = raw_ftruncate(fd, size)) != 0) {
		vl_raw_close(fd);
		return err;
	}
	vl_ash_init(&init, dev ? VL_ASH_DEV : 0);
	init.size = size;
	if (name != NULL)
		vl_ash_name_set(&init, name, strnlen(name, VL_ASH_NAME_LEN));
	err = vl_enter();
	if (err == 0) {
		err = vl_region_get(&r);
		if (err == 0)
			err = vl_sys_fstat(fd, &st);
		if (err == 0)
			err = make_record(r, &st, fd, &init, &x);
		vl_leave();
	}
	vl_log("ashmem: new region fd %d \"%s\" size %llu%s%s", fd, mname,
	       (unsigned long long)size, err ? ": " : "", err ? strerror(-err) : "");
	if (err) {
		if (dev) { /* no device without its state */
			vl_raw_close(fd);
			return err;
		}
		return fd; /* a plain memfd: pin and unpin will say why not */
	}
	vl_ash_flag(fd);
	if (dev)
		set_bit(devbits, fd);
	vl_here_made(fd, &st.id, epoch);
	return fd;
}

/* ---- ioctl ---------------------------------------------------------------- */

struct target {
	int fd;
	struct vl_region *r;
	int region_err;
	struct vl_stat st;
	struct rec x;
};

static int is_ash(const struct target *t)
{
	return t->region_err == 0 && t->x.fi != VL_NIL && (t->x.flags & VL_FF_ASHMEM);
}

/* 1: a memfd (region or not), 0: not ours, for the real ioctl. Region entered. */
static int identify(int fd, struct target *t)
{
	memset(t, 0, sizeof(*t));
	t->fd = fd;
	if (vl_sys_fstat(fd, &t->st) != 0 || !S_ISREG(t->st.mode) || t->st.nlink != 0)
		return 0;
	t->region_err = vl_region_get(&t->r);
	if (t->region_err == 0)
		t->region_err = lookup(t->r, &t->st.id, &t->x);
	if (is_ash(t))
		return 1;
	return memfd_name(fd, NULL, 0) == 0;
}

/* Lock the target's ashmem record, looking it up again if it moved. */
static int lock_target(struct target *t)
{
	for (int tries = 0; tries < 8; tries++) {
		int err = lock_rec(t->r, &t->x, 1);

		if (err != -ESTALE)
			return err;
		err = lookup(t->r, &t->st.id, &t->x);
		if (err)
			return err;
		if (!is_ash(t))
			return -ESTALE;
	}
	return -EAGAIN;
}

/* A plain memfd's state, made on first need (SET_PROT_MASK). */
static int ensure_record(struct target *t)
{
	struct vl_ashmem init;

	if (is_ash(t))
		return 0;
	if (t->region_err)
		return t->region_err;
	vl_ash_init(&init, VL_ASH_PLAIN | VL_ASH_MAPPED);
	return make_record(t->r, &t->st, t->fd, &init, &t->x);
}

/* A snapshot of the state; a memfd without a record is plain, mapped, RWX. */
static int snapshot(struct target *t, struct vl_ashmem *a)
{
	int err;

	if (!is_ash(t)) {
		vl_ash_init(a, VL_ASH_PLAIN | VL_ASH_MAPPED);
	} else {
		err = lock_target(t);
		if (err)
			return err;
		*a = vl_file_at(t->r, t->x.fi)->ash;
		vl_unlock_file(t->r, t->x.fi);
	}
	if (a->flags & VL_ASH_PLAIN) {
		if ((err = file_size(t->fd, &a->size)) != 0)
			return err;
		memfd_name(t->fd, a->name, sizeof(a->name));
	}
	return 0;
}

/*
 * The name in /proc/PID/maps. A memfd's name is given at its creation and
 * cannot change, and open("/dev/ashmem") cannot know the name SET_NAME
 * will give. So before the first mmap, SET_NAME makes a new memfd with the
 * right name and puts it in place of the old one under the same fd number
 * (dup3), with the same state; the old memfd and its record go.
 *
 * Only when nothing can be lost (DESIGN 4): the old memfd was made in this
 * process, which has not forked since, nor sent it over a socket, nor
 * holds another fd on it, nor maps it; it holds no data (no block
 * allocated: nothing was ever written) and no volatile range; its size,
 * mode, seals, file offset and status flags can all be given to the new
 * one. All of it is checked, and the fd swapped, under the old record's
 * lock, with MAPPED read under it: an mmap through the gate (which takes
 * the lock) comes before, and then no swap, or after, and maps the new
 * memfd. Otherwise the name is in the state (GET_NAME says it) but the
 * maps show "dev/ashmem". Best effort: on any failure the old memfd stays.
 * Left: another thread that dups the fd while SET_NAME runs may keep the
 * old memfd (empty, and its record goes).
 */
static int clone_memfd(int fd, const char *mname, int *seals_out)
{
	struct stat old, fresh;
	int fl, seals, nfd;
	off_t off;

	if (syscall(SYS_fstat, fd, &old) != 0 || old.st_blocks != 0)
		return -1; /* it holds data: a copy would be a change under a reader */
	fl = (int)syscall(SYS_fcntl, fd, F_GETFL);
	seals = (int)syscall(SYS_fcntl, fd, F_GET_SEALS);
	off = (off_t)syscall(SYS_lseek, fd, 0, SEEK_CUR);
	if (fl < 0 || seals < 0 || off < 0 || (fl & O_ASYNC))
		return -1;
	/* a memfd made without MFD_ALLOW_SEALING has F_SEAL_SEAL alone */
	nfd = raw_memfd(mname, MFD_CLOEXEC | (seals != F_SEAL_SEAL ? MFD_ALLOW_SEALING : 0));
	if (nfd < 0)
		return -1;
	if ((old.st_size > 0 && raw_ftruncate(nfd, (uint64_t)old.st_size) != 0) ||
	    syscall(SYS_fstat, nfd, &fresh) != 0 ||
	    ((fresh.st_mode & 07777) != (old.st_mode & 07777) &&
	     syscall(SYS_fchmod, nfd, old.st_mode & 07777) != 0) ||
	    syscall(SYS_lseek, nfd, off, SEEK_SET) != off ||
	    syscall(SYS_fcntl, nfd, F_SETFL, fl) != 0 || syscall(SYS_fcntl, nfd, F_GETFL) != fl ||
	    (seals != F_SEAL_SEAL && seals != 0 && syscall(SYS_fcntl, nfd, F_ADD_SEALS, seals) != 0) ||
	    syscall(SYS_fcntl, nfd, F_GET_SEALS) != seals) {
		vl_raw_close(nfd);
		return -1;
	}
	*seals_out = seals;
	return nfd;
}

static void rename_memfd(struct target *t)
{
	char mname[VL_MEMFD_NAME_MAX + 1];
	const struct vl_file *f;
	const char *why = NULL;
	struct vl_ashmem a;
	struct vl_stat nst;
	struct rec nx, ox;
	int nfd = -1, fdflags, seals = 0, nrec = 0;
	uint32_t epoch = vl_here_epoch(); /* before the look and the new memfd */

	if (lock_target(t) != 0)
		return;
	ox = t->x;
	f = vl_file_at(t->r, ox.fi);
	a = f->ash;
	fdflags = (int)syscall(SYS_fcntl, t->fd, F_GETFD);
	if (a.flags & (VL_ASH_MAPPED | VL_ASH_PLAIN))
		why = "mapped";
	else if (f->h.nranges != 0)
		why = "it has volatile ranges";
	else if (fdflags < 0 || !made_alone(t->fd, &t->st.id))
		why = "another fd or process may hold it";
	else if (vl_mapped_here(&t->st.id))
		why = "it is mapped";
	else if (vl_ash_memfd_name(a.name, mname, sizeof(mname)),
		 (nfd = clone_memfd(t->fd, mname, &seals)) < 0)
		why = "it holds data, or its state cannot be copied";
	/* no eviction here: it takes other files' locks, and we hold this one's */
	else if (vl_sys_fstat(nfd, &nst) != 0 || record_once(t->r, &nst, t->fd, &a, &nx) != 0)
		why = "no record for the new memfd";
	else if (nrec = 1, syscall(SYS_dup3, nfd, t->fd, (fdflags & FD_CLOEXEC) ? O_CLOEXEC : 0) < 0)
		why = "dup3 failed";
	vl_unlock_file(t->r, ox.fi);
	if (why != NULL) {
		if (nrec)
			vl_drop_file(t->r, nx.fi, nx.gen, VL_DROP_ALL);
		if (nfd >= 0)
			vl_raw_close(nfd);
		vl_log("ashmem: fd %d keeps its memfd's name (%s)", t->fd, why);
		return;
	}
	vl_raw_close(nfd);
	vl_drop_file(t->r, ox.fi, ox.gen, VL_DROP_ALL); /* the old memfd is gone with it */
	vl_here_made(t->fd, &nst.id, epoch);
	t->st = nst;
	t->x = nx;
	vl_log("ashmem: fd %d is now memfd \"%s\" (seals 0x%x)", t->fd, mname, seals);
}

static int set_name(struct target *t, unsigned long arg)
{
	char buf[VL_ASH_NAME_LEN];
	long n = copy_in_str(buf, (const char *)arg, sizeof(buf));
	struct vl_ashmem *a;
	int err;

	if (n < 0)
		return (int)n;
	if (!is_ash(t))
		return t->region_err ? t->region_err : -EINVAL; /* a memfd's name is fixed */
	err = lock_target(t);
	if (err)
		return err;
	a = &vl_file_at(t->r, t->x.fi)->ash;
	err = (a->flags & VL_ASH_PLAIN) ? -EINVAL : vl_ash_settable(a);
	if (err == 0)
		vl_ash_name_set(a, buf, (size_t)n);
	vl_unlock_file(t->r, t->x.fi);
	if (err == 0)
		rename_memfd(t);
	return err;
}

/*
 * The memfd always has the region's size, from SET_SIZE on (the driver
 * made its file at the first mmap): so a mapping made where no gate saw it
 * (an fd this process did not know) cannot fault past the end. It only
 * shrinks when it holds no data (written before the first mmap, which the
 * driver refused): those bytes are not ours to drop (DESIGN 4).
 */
static int apply_size(int fd, uint64_t size)
{
	struct stat st;

	if (syscall(SYS_fstat, fd, &st) != 0)
		return -errno;
	if (size == (uint64_t)st.st_size || (size < (uint64_t)st.st_size && st.st_blocks != 0))
		return 0;
	return raw_ftruncate(fd, size);
}

static int set_size(struct target *t, uint64_t size)
{
	struct vl_ashmem *a;
	int err;

	if (!is_ash(t))
		return t->region_err ? t->region_err : -EINVAL;
	err = lock_target(t);
	if (err)
		return err;
	a = &vl_file_at(t->r, t->x.fi)->ash;
	err = (a->flags & VL_ASH_PLAIN) ? -EINVAL : vl_ash_settable(a);
	if (err == 0) {
		int ferr = apply_size(t->fd, size);

		if (ferr) /* the driver takes any size: the first mmap says what the file says */
			vl_log("ashmem: fd %d: size %llu not applied yet: %s", t->fd,
			       (unsigned long long)size, strerror(-ferr));
		a->size = size;
	}
	vl_unlock_file(t->r, t->x.fi);
	return err;
}

static int set_prot(struct target *t, uint64_t prot)
{
	int rie = (personality(0xffffffff) & READ_IMPLIES_EXEC) != 0;
	struct vl_ashmem *a;
	uint32_t p;
	int err = ensure_record(t);

	if (err)
		return err;
	err = lock_target(t);
	if (err)
		return err;
	a = &vl_file_at(t->r, t->x.fi)->ash;
	err = vl_ash_set_prot(a->prot, prot, rie, &p);
	if (err == 0)
		a->prot = p;
	vl_unlock_file(t->r, t->x.fi);
	return err;
}

/* GET_PIN_STATUS: is any byte of [s, e) in a volatile range? */
static int pin_status(struct target *t, uint64_t s, uint64_t e)
{
	const struct vl_region *r = t->r;
	struct rec x;
	uint32_t n;
	int err, ret = 1; /* ASHMEM_IS_PINNED */

	if (s >= e)
		return ret;
	for (int tries = 0; tries < 8; tries++) {
		err = lookup(r, &t->st.id, &x);
		if (err)
			return err;
		if (x.fi == VL_NIL)
			return ret; /* no record: nothing is unpinned */
		err = lock_rec(r, &x, 0);
		if (err == -ESTALE)
			continue;
		if (err)
			return err;
		n = vl_rb_end_at_least(r, vl_file_at(r, x.fi)->h.root, s, 1);
		if (n != VL_NIL && !vl_range_ok(r, n, x.fi))
			err = -EUCLEAN;
		else if (n != VL_NIL && vl_node_at(r, n)->start < e)
			ret = 0; /* ASHMEM_IS_UNPINNED */
		vl_unlock_file(r, x.fi);
		return err ? err : ret;
	}
	return -EAGAIN;
}

/*
 * Not MAPPED, yet mapped here: through an fd no gate saw (taken with
 * pidfd_getfd, reopened through /proc, received by a raw recvmsg system
 * call). Record it now, as the gate would have. Only on the path that
 * would otherwise fail, so it costs a read of /proc/self/maps there only.
 */
static int mapped_after_all(struct target *t, struct vl_ashmem *a)
{
	if (!is_ash(t) || !vl_mapped_here(&t->st.id) || lock_target(t) != 0)
		return 0;
	vl_file_at(t->r, t->x.fi)->ash.flags |= VL_ASH_MAPPED;
	*a = vl_file_at(t->r, t->x.fi)->ash;
	vl_unlock_file(t->r, t->x.fi);
	vl_log("ashmem: fd %d: mapped here unseen; now counted as mapped", t->fd);
	return 1;
}

struct deferred {
	int mode; /* 0: nothing; else the fallocate mode to run once out of the shim */
	uint64_t s, e;
};

static long pin_ops(struct target *t, const struct vl_ash_req *q, unsigned long arg,
		    struct deferred *d)
{
	struct vl_ashmem a;
	uint32_t pin[2];
	uint64_t s, e;
	int err;

	if (t->region_err)
		return t->region_err;
	/* the driver copies the argument in first: a bad pointer is EFAULT, always */
	if (copy_in(pin, (const void *)arg, sizeof(pin)) != 0)
		return -EFAULT;
	err = snapshot(t, &a);
	if (err)
		return err;
	if (!(a.flags & VL_ASH_MAPPED) && !mapped_after_all(t, &a))
		return -EINVAL; /* the driver has no backing file before the first mmap */
	err = vl_ash_pin_range(pin[0], pin[1], a.size, page_size(), &s, &e);
	if (err)
		return err;
	if (q->cmd == VL_ASH_GET_PIN_STATUS)
		return pin_status(t, s, e);
	if (e > s) {
		d->mode = q->cmd == VL_ASH_PIN ? FALLOC_FL_UNMARK_VOLATILE : FALLOC_FL_MARK_VOLATILE;
		d->s = s;
		d->e = e;
	}
	return 0; /* ASHMEM_NOT_PURGED, or UNPIN's 0, unless the deferred call says more */
}

static long purge_all(struct target *t)
{
	struct vl_goal g = { .bytes = UINT64_MAX };
	struct vl_purge_report rep;
	uint64_t pages;
	int err;

	if (t->region_err)
		return t->region_err;
	err = vl_purge(t->r, &g, NULL, &rep);
	if (err)
		return err;
	pages = (rep.bytes + page_size() - 1) / page_size();
	vl_log("ashmem: PURGE_ALL_CACHES: %u ranges, %llu bytes", rep.ranges,
	       (unsigned long long)rep.bytes);
	return pages > INT_MAX ? INT_MAX : (long)pages;
}

static long dispatch(struct target *t, const struct vl_ash_req *q, unsigned long arg,
		     struct deferred *d)
{
	struct vl_ashmem a;
	const char *name;
	size_t len;
	uint64_t ino;
	int err;

	switch (q->cmd) {
	case VL_ASH_SET_NAME:
		return set_name(t, arg);
	case VL_ASH_GET_NAME:
		err = snapshot(t, &a);
		if (err)
			return err;
		name = vl_ash_name_get(&a, &len);
		return copy_out((void *)arg, name, len);
	case VL_ASH_SET_SIZE:
		return set_size(t, vl_ash_arg_value(q, arg));
	case VL_ASH_GET_SIZE:
		err = snapshot(t, &a);
		return err ? err : (long)a.size;
	case VL_ASH_SET_PROT_MASK:
		return set_prot(t, vl_ash_arg_value(q, arg));
	case VL_ASH_GET_PROT_MASK:
		err = snapshot(t, &a);
		return err ? err : (long)a.prot;
	case VL_ASH_PIN:
	case VL_ASH_UNPIN:
	case VL_ASH_GET_PIN_STATUS:
		return pin_ops(t, q, arg, d);
	case VL_ASH_PURGE_ALL_CACHES:
		return purge_all(t);
	case VL_ASH_GET_FILE_ID:
		err = snapshot(t, &a);
		if (err)
			return err;
		if (!(a.flags & VL_ASH_MAPPED) && !mapped_after_all(t, &a))
			return -EINVAL;
		ino = t->st.id.ino;
		if (q->argsize == 4) {
			uint32_t ino32 = (uint32_t)ino;

			return copy_out((void *)arg, &ino32, sizeof(ino32));
		}
		return copy_out((void *)arg, &ino, sizeof(ino));
	default:
		return -ENOTTY;
	}
}

long vl_ash_ioctl(int fd, unsigned long req, unsigned long arg, int *handled)
{
	struct deferred d = { 0, 0, 0 };
	struct vl_ash_req q;
	struct target t;
	long ret;

	*handled = 0;
	if (vl_ash_decode(req, &q) == VL_ASH_NOT_OURS)
		return 0;
	if (vl_enter() != 0) {
		/* a signal handler that interrupted the library: as MARK and UNMARK say */
		if (!vl_ash_flagged(fd) && !named_region(fd))
			return 0;
		*handled = 1;
		return -EINTR;
	}
	if (!identify(fd, &t)) {
		vl_leave();
		return 0;
	}
	*handled = 1;
	ret = dispatch(&t, &q, arg, &d);
	if (is_ash(&t))
		vl_ash_flag(fd);
	vl_leave();
	if (ret == 0 && d.mode != 0) {
		ret = vl_volatile_fallocate(fd, d.mode, (int64_t)d.s, (int64_t)(d.e - d.s));
		if (ret > 0)
			ret = 1; /* ASHMEM_WAS_PURGED */
	}
	vl_log("ashmem: ioctl fd %d 0x%lx -> %ld%s%s", fd, req, ret < 0 ? -1 : ret,
	       ret < 0 ? " " : "", ret < 0 ? strerror((int)-ret) : "");
	return ret;
}

/* ---- regions that may have died here: settled in batches ------------------- */

/*
 * A region made here whose last fd here was closed, in the epoch it was
 * made in, never sent (ashmem_here.h), waits among the dying. Settling
 * them takes one look at /proc/self/fd (an fd the table cannot see keeps
 * its region) and, for those mapped here once, at the maps: a region
 * neither holds is gone, and its record (and its ranges: there is nothing
 * left to punch) is forgotten at once, instead of waiting for a purge to
 * find it gone; one still mapped waits for the next settling. They are
 * settled when SETTLE_AT of them wait, when a new region finds the table
 * full, at most once a second at a close or munmap, and at exit: so a
 * close costs the same with 10 or 1,000 fds open, the look at every fd
 * shared by many regions.
 */
#define SETTLE_AT 128
#define SETTLE_EVERY_MS 1000

static uint64_t settled_ms;

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Forget the record of a region made here that nothing here holds any more. */
static void forget_dead(const struct vl_ident *id)
{
	struct target t;
	int err;

	memset(&t, 0, sizeof(t));
	t.fd = -1;
	t.st.id = *id;
	if (vl_region_get(&t.r) != 0 || lookup(t.r, &t.st.id, &t.x) != 0 || !is_ash(&t))
		return;
	/* under the file's lock, it checks the record is still that one (gen) */
	err = vl_drop_file(t.r, t.x.fi, t.x.gen, VL_DROP_UNLESS_PURGED);
	vl_log("ashmem: a region made here has no fd or mapping left: its record %s%s",
	       err ? "stays: " : "is forgotten", err ? strerror(-err) : "");
}

/* Settle the dying (inside the library). */
static void settle(void)
{
	struct vl_here_death d[SETTLE_AT];
	struct vl_ident ids[SETTLE_AT];
	int held[SETTLE_AT], n, k;

	__atomic_store_n(&settled_ms, mono_ms(), __ATOMIC_RELAXED);
	while ((n = vl_here_deaths(d, SETTLE_AT)) > 0) {
		/*
		 * Its last fd was closed alone (no child had it then). A child made
		 * since may have its mapping: one mapped here is left to the purges.
		 */
		k = 0;
		for (int i = 0; i < n; i++)
			if (!d[i].mapped || vl_here_settled(d[i].epoch))
				d[k++] = d[i];
		for (int i = 0; i < k; i++) {
			ids[i] = d[i].id;
			held[i] = 0;
		}
		if (k == 0 || fds_holding(ids, k, -1, held) != 0)
			continue; /* no /proc: left to the purges */
		for (int i = 0; i < k; i++) {
			uint64_t lo, hi;

			if (held[i] || vl_here_held(&ids[i]))
				continue; /* an fd on it again: its own close decides */
			if (d[i].mapped && vl_mapped_span(&ids[i], &lo, &hi)) {
				vl_here_still_dying(&d[i]);
				continue;
			}
			forget_dead(&ids[i]);
		}
		if (n < SETTLE_AT)
			break;
	}
}

/* Settle now if some wait and it is time (count: how many wait, or 0 to ask). */
static void settle_if_due(uint32_t count)
{
	uint64_t was = __atomic_load_n(&settled_ms, __ATOMIC_RELAXED);

	if (count == 0 || (count < SETTLE_AT && mono_ms() - was < SETTLE_EVERY_MS))
		return;
	if (vl_enter() != 0)
		return;
	settle();
	vl_leave();
}

void vl_ash_munmapped(void)
{
	settle_if_due(__atomic_load_n(&vl_here_ndying, __ATOMIC_RELAXED));
}

/* At exit: the regions this process let go of are forgotten before it goes. */
__attribute__((destructor)) static void settle_at_exit(void)
{
	int saved = errno;

	if (__atomic_load_n(&vl_here_ndying, __ATOMIC_RELAXED) != 0 && !vl_borrowed() &&
	    vl_enter() == 0) {
		settle();
		vl_leave();
	}
	errno = saved;
}

/* ---- close ---------------------------------------------------------------- */

/*
 * close() of a flagged fd (also dup2/dup3 over one). Costs a getpid and a
 * look at the table of regions made here; for a region made here, an
 * fstat; for its last fd here, a place among the dying (above).
 *
 * A process that shares our memory without being us (a vfork child that
 * closes its fds before exec) changes nothing here: the bits and the
 * table are its parent's, and the parent still holds the fd.
 */
void vl_ash_close_begin(int fd, struct vl_ash_closing *c)
{
	struct vl_stat st;

	memset(c, 0, sizeof(*c));
	if (vl_borrowed()) {
		c->borrowed = 1;
		return;
	}
	c->flagged = vl_ash_flagged(fd);
	c->dev = bit(devbits, fd);
	/* before the close: the number may be reused by another thread at once after */
	vl_ash_unflag(fd);
	c->taken = vl_here_take(fd, &c->entry);
	/* an entry for a number closed unseen (close_range, a raw close) is no one's */
	if (c->taken && (vl_sys_fstat(fd, &st) != 0 || !vl_ident_same(&st.id, &c->entry.id)))
		c->stale = 1;
}

void vl_ash_close_end(int fd, const struct vl_ash_closing *c, int closed)
{
	int n;

	if (c->borrowed)
		return;
	if (!closed) {
		/* the fd was not touched (dup2 or dup3 failed): follow it as before */
		if (c->flagged)
			vl_ash_flag(fd);
		if (c->dev)
			set_bit(devbits, fd);
		if (c->taken && !c->stale)
			vl_here_put(&c->entry);
		return;
	}
	if (!c->taken || c->stale)
		return;
	n = vl_here_dying(&c->entry);
	if (n > 0)
		settle_if_due((uint32_t)n);
}

/* ---- mmap and fstat ------------------------------------------------------- */

/*
 * Worth a look at the shared region? A memfd named as regions are, or
 * any memfd once this process uses the region anyway (a plain memfd may
 * have been given a prot mask). A program that never uses volatile
 * ranges or ashmem never makes or maps the region for an fd it received.
 */
static int may_be_region(int fd)
{
	return vl_region_attached() || named_region(fd);
}

/*
 * A read-only fd on the same memfd as fd, or -1 (no /proc, no fd to
 * spare, or fd no longer the file that was checked: another thread
 * closed it and the number was reused).
 */
static int readonly_twin(int fd, const struct vl_ident *id)
{
	char link[32];
	struct vl_stat st;
	int ro;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ro = (int)syscall(SYS_openat, AT_FDCWD, link, O_RDONLY | O_CLOEXEC);
	if (ro < 0)
		return -1;
	if (vl_sys_fstat(ro, &st) != 0 || !vl_ident_same(&st.id, id)) {
		syscall(SYS_close, ro);
		return -1;
	}
	return ro;
}

/*
 * The mapping, through a read-only twin of fd where the mask lacks
 * PROT_WRITE (vl_ash_map_readonly), so that mprotect cannot add the bit
 * (EACCES, as the driver answered). Without a twin it is made through
 * fd: the mask then holds at mmap only.
 */
static void *map_region(vl_mmap_fn real, const struct target *t, const struct vl_ashmem *a,
			void *addr, size_t len, int prot, int flags, off_t off)
{
	int ro = vl_ash_map_readonly(a, flags) ? readonly_twin(t->fd, &t->st.id) : -1;
	void *res = real(addr, len, prot, flags, ro >= 0 ? ro : t->fd, off);

	if (ro >= 0) {
		int saved = errno;

		syscall(SYS_close, ro); /* not close(): the gate there would look at it */
		errno = saved;
	}
	return res;
}

int vl_ash_mmap(vl_mmap_fn real, void *addr, size_t len, int prot, int flags, int fd, off_t off,
		void **res, int *errp)
{
	struct target t;
	struct vl_ashmem *a;
	int err;

	if (vl_enter() != 0) {
		/*
		 * A signal handler that interrupted the library: the prot mask
		 * cannot be read (this thread may hold its lock). Not mapped
		 * unchecked: EAGAIN, as for a file that is locked.
		 */
		if (!named_region(fd))
			return 0;
		*res = MAP_FAILED;
		*errp = EAGAIN;
		return 1;
	}
	memset(&t, 0, sizeof(t));
	t.fd = fd;
	if (vl_sys_fstat(fd, &t.st) != 0 || !S_ISREG(t.st.mode) || t.st.nlink != 0 ||
	    !may_be_region(fd) || vl_region_get(&t.r) != 0 || lookup(t.r, &t.st.id, &t.x) != 0 ||
	    !is_ash(&t)) {
		vl_ash_unflag(fd); /* not a region (any more): no need to look again */
		vl_leave();
		return 0;
	}
	err = lock_target(&t);
	if (err) {
		/* the state cannot be read: fail open, the mapping is the kernel's business */
		vl_leave();
		return 0;
	}
	{
		a = &vl_file_at(t.r, t.x.fi)->ash;
		if (a->flags & VL_ASH_PLAIN)
			err = (uint32_t)prot & VL_ASH_PROT_ALL & ~a->prot ? -EPERM : 0;
		else
			err = vl_ash_mmap_check(a, prot, len, page_size());
		/* SET_SIZE sized the file; if it could not, say why now, as the driver did */
		if (err == 0 && !(a->flags & (VL_ASH_MAPPED | VL_ASH_PLAIN)))
			err = apply_size(fd, a->size);
		if (err == 0) {
			/* under the lock: SET_PROT_MASK cannot slip in between */
			*res = map_region(real, &t, a, addr, len, prot, flags, off);
			if (*res == MAP_FAILED)
				err = -errno;
			else
				a->flags |= VL_ASH_MAPPED;
		}
		vl_unlock_file(t.r, t.x.fi);
	}
	if (err == 0)
		vl_here_mapped(&t.st.id);
	vl_leave();
	if (err) {
		*res = MAP_FAILED;
		*errp = -err;
	}
	vl_log("ashmem: mmap fd %d len %zu prot %d -> %s", fd, len, prot,
	       err ? strerror(-err) : "ok");
	return 1;
}

int vl_ash_dev_fd(int fd)
{
	struct target t;
	int dev = 0;

	if (vl_enter() != 0) /* a signal handler that interrupted the library: as last seen */
		return bit(devbits, fd);
	memset(&t, 0, sizeof(t));
	if (vl_sys_fstat(fd, &t.st) == 0 && S_ISREG(t.st.mode) && t.st.nlink == 0 &&
	    may_be_region(fd) && vl_region_get(&t.r) == 0 && lookup(t.r, &t.st.id, &t.x) == 0 &&
	    is_ash(&t))
		dev = (t.x.ashflags & VL_ASH_DEV) != 0;
	else
		vl_ash_unflag(fd);
	if (dev)
		set_bit(devbits, fd);
	else
		clear_bit(devbits, fd);
	vl_leave();
	return dev;
}

/*
 * The device as stat shows it: a character device 0666 owned by root,
 * with a misc major (10) and a fixed minor, on /dev's file system.
 */
#define ASH_DEV_MINOR 61
#define ASH_DEV_INO 0x617368u

static void dev_base(struct stat *st)
{
	static struct stat devdir;
	static int have;

	if (!__atomic_load_n(&have, __ATOMIC_ACQUIRE)) {
		struct stat s;
		int saved = errno;

		if (vl_raw_stat("/dev", &s) != 0)
			memset(&s, 0, sizeof(s));
		errno = saved;
		devdir = s;
		__atomic_store_n(&have, 1, __ATOMIC_RELEASE);
	}
	*st = devdir;
}

void vl_ash_dev_stat(struct stat *st)
{
	struct stat d;

	dev_base(&d);
	memset(st, 0, sizeof(*st));
	st->st_dev = d.st_dev;
	st->st_ino = ASH_DEV_INO;
	st->st_mode = S_IFCHR | 0666;
	st->st_nlink = 1;
	st->st_uid = 0;
	st->st_gid = 0;
	st->st_rdev = makedev(10, ASH_DEV_MINOR);
	st->st_size = 0;
	st->st_blksize = 4096;
	st->st_blocks = 0;
	st->st_atim = d.st_ctim;
	st->st_mtim = d.st_ctim;
	st->st_ctim = d.st_ctim;
}

void vl_ash_dev_statx(struct statx *sx)
{
	struct stat st;

	vl_ash_dev_stat(&st);
	memset(sx, 0, sizeof(*sx));
	sx->stx_mask = STATX_BASIC_STATS;
	sx->stx_blksize = (uint32_t)st.st_blksize;
	sx->stx_nlink = (uint32_t)st.st_nlink;
	sx->stx_uid = st.st_uid;
	sx->stx_gid = st.st_gid;
	sx->stx_mode = (uint16_t)st.st_mode;
	sx->stx_ino = st.st_ino;
	sx->stx_size = 0;
	sx->stx_blocks = 0;
	sx->stx_atime.tv_sec = st.st_atim.tv_sec;
	sx->stx_atime.tv_nsec = (uint32_t)st.st_atim.tv_nsec;
	sx->stx_mtime = sx->stx_atime;
	sx->stx_ctime = sx->stx_atime;
	sx->stx_rdev_major = 10;
	sx->stx_rdev_minor = ASH_DEV_MINOR;
	sx->stx_dev_major = major(st.st_dev);
	sx->stx_dev_minor = minor(st.st_dev);
}
