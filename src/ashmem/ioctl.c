/* SPDX-License-Identifier: MIT */
/*
 * ioctl.c - the ashmem ioctls on a memfd (DESIGN 7).
 */
#include "internal.h"

#include "reentry.h"
#include "log.h"
#include "ops.h"
#include "purge.h"
#include "file_route.h"
#include "core/pool.h"
#include "core/index.h"
#include "volatile.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/personality.h>

/* ---- ioctl ---------------------------------------------------------------- */

/* 1: a memfd (region or not), 0: not ours, for the real ioctl. Region entered. */
int ash_identify(int fd, struct target *t)
{
	memset(t, 0, sizeof(*t));
	t->fd = fd;
	if (vl_sys_fstat(fd, &t->st) != 0 || !S_ISREG(t->st.mode) || t->st.nlink != 0)
		return 0;
	t->region_err = vl_region_get(&t->r);
	if (t->region_err == 0)
		t->region_err = ash_lookup(t->r, &t->st.id, &t->x);
	if (ash_is_ash(t))
		return 1;
	return ash_memfd_name(fd, NULL, 0) == 0;
}

/* A plain memfd's state, made on first need (SET_PROT_MASK). */
static int ensure_record(struct target *t)
{
	struct vl_ashmem init;

	if (ash_is_ash(t))
		return 0;
	if (t->region_err)
		return t->region_err;
	vl_ash_init(&init, VL_ASH_PLAIN | VL_ASH_MAPPED);
	return ash_make_record(t->r, &t->st, t->fd, &init, &t->x);
}

/* A snapshot of the state; a memfd without a record is plain, mapped, RWX. */
static int snapshot(struct target *t, struct vl_ashmem *a)
{
	int err;

	if (!ash_is_ash(t)) {
		vl_ash_init(a, VL_ASH_PLAIN | VL_ASH_MAPPED);
	} else {
		err = ash_lock_target(t);
		if (err)
			return err;
		*a = vl_file_at(t->r, t->x.fi)->ash;
		vl_unlock_file(t->r, t->x.fi);
	}
	if (a->flags & VL_ASH_PLAIN) {
		if ((err = ash_file_size(t->fd, &a->size)) != 0)
			return err;
		ash_memfd_name(t->fd, a->name, sizeof(a->name));
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
/*
 * Give nfd, a new empty memfd, old's size, mode, offset, status flags and
 * seals, each read back: 0, or -errno (-EIO for one that did not take).
 */
static int copy_memfd_state(int nfd, const struct stat *old, int fl, int seals, off_t off)
{
	struct stat fresh;
	int err;

	if (old->st_size > 0 && (err = ash_raw_ftruncate(nfd, (uint64_t)old->st_size)) != 0)
		return err;
	err = VL_SYSCALL("fstat new memfd", vl_raw_fstat(nfd, &fresh));
	if (err == 0 && (fresh.st_mode & 07777) != (old->st_mode & 07777))
		err = VL_SYSCALL("fchmod new memfd", vl_raw_fchmod(nfd, old->st_mode & 07777));
	if (err == 0) {
		off_t at = VL_SYSCALL("lseek new memfd", vl_raw_lseek(nfd, off, SEEK_SET));

		err = at < 0 ? (int)at : VL_SYSCALL("setfl new memfd", vl_raw_fcntl(nfd, F_SETFL, fl));
	}
	if (err == 0 && seals != F_SEAL_SEAL && seals != 0)
		err = VL_SYSCALL("add seals", vl_raw_fcntl(nfd, F_ADD_SEALS, seals));
	if (err != 0)
		return err;
	if (vl_raw_fcntl(nfd, F_GETFL) != fl || vl_raw_fcntl(nfd, F_GET_SEALS) != seals)
		return -EIO;
	return 0;
}

/* The new memfd, or -errno: -EBUSY if fd holds data (a copy would be a change under a reader). */
static int clone_memfd(int fd, const char *mname, int *seals_out)
{
	struct stat old;
	int fl, seals, nfd, err;
	off_t off;

	err = VL_SYSCALL("fstat memfd", vl_raw_fstat(fd, &old));
	if (err != 0)
		return err;
	if (old.st_blocks != 0)
		return -EBUSY;
	fl = VL_SYSCALL("getfl memfd", vl_raw_fcntl(fd, F_GETFL));
	seals = VL_SYSCALL("get seals", vl_raw_fcntl(fd, F_GET_SEALS));
	off = VL_SYSCALL("lseek memfd", vl_raw_lseek(fd, 0, SEEK_CUR));
	if (fl < 0 || seals < 0 || off < 0) /* the last to fail, as errno said */
		return off < 0 ? (int)off : seals < 0 ? seals : fl;
	if (fl & O_ASYNC)
		return -EINVAL; /* its owner and signal cannot be copied */
	/* a memfd made without MFD_ALLOW_SEALING has F_SEAL_SEAL alone */
	nfd = ash_raw_memfd(mname, MFD_CLOEXEC | (seals != F_SEAL_SEAL ? MFD_ALLOW_SEALING : 0));
	if (nfd < 0)
		return nfd;
	err = copy_memfd_state(nfd, &old, fl, seals, off);
	if (err != 0) {
		vl_raw_close(nfd);
		return err;
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

	if (ash_lock_target(t) != 0)
		return;
	ox = t->x;
	f = vl_file_at(t->r, ox.fi);
	a = f->ash;
	fdflags = VL_SYSCALL("getfd memfd", vl_raw_fcntl(t->fd, F_GETFD));
	if (a.flags & (VL_ASH_MAPPED | VL_ASH_PLAIN))
		why = "mapped";
	else if (f->h.nranges != 0)
		why = "it has volatile ranges";
	else if (fdflags < 0 || !ash_made_alone(t->fd, &t->st.id))
		why = "another fd or process may hold it";
	else if (vl_mapped_here(&t->st.id))
		why = "it is mapped";
	else if (vl_ash_memfd_name(a.name, mname, sizeof(mname)),
		 (nfd = clone_memfd(t->fd, mname, &seals)) < 0)
		why = "it holds data, or its state cannot be copied";
	/* no eviction here: it takes other files' locks, and we hold this one's */
	else if (vl_sys_fstat(nfd, &nst) != 0 || ash_record_once(t->r, &nst, t->fd, &a, &nx) != 0)
		why = "no record for the new memfd";
	else if (nrec = 1, VL_SYSCALL("dup3 new memfd",
				      vl_raw_dup3(nfd, t->fd, (fdflags & FD_CLOEXEC) ? O_CLOEXEC : 0)) < 0)
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
	long n = ash_copy_in_str(buf, (const char *)arg, sizeof(buf));
	struct vl_ashmem *a;
	int err;

	if (n < 0)
		return (int)n;
	if (!ash_is_ash(t))
		return t->region_err ? t->region_err : -EINVAL; /* a memfd's name is fixed */
	err = ash_lock_target(t);
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

static int set_size(struct target *t, uint64_t size)
{
	struct vl_ashmem *a;
	int err;

	if (!ash_is_ash(t))
		return t->region_err ? t->region_err : -EINVAL;
	err = ash_lock_target(t);
	if (err)
		return err;
	a = &vl_file_at(t->r, t->x.fi)->ash;
	err = (a->flags & VL_ASH_PLAIN) ? -EINVAL : vl_ash_settable(a);
	if (err == 0) {
		int ferr = ash_apply_size(t->fd, size);

		if (ferr == -EPERM) /* F_SEAL_GROW or F_SEAL_SHRINK: the memfd's size is fixed */
			err = ferr;
		else if (ferr) /* the driver takes any size: the first mmap says what the file says */
			vl_log("ashmem: fd %d: size %llu not applied yet: %s", t->fd,
			       (unsigned long long)size, strerror(-ferr));
		if (err == 0)
			a->size = size;
	}
	vl_unlock_file(t->r, t->x.fi);
	return err;
}

/*
 * The mask can only lose bits, and a write seal (F_SEAL_WRITE,
 * F_SEAL_FUTURE_WRITE) has taken PROT_WRITE from it for good: the seals
 * are read first, and a seal added after that read is a change the
 * program made after asking (the driver's order: a racing SET_PROT_MASK).
 */
static int set_prot(struct target *t, uint64_t prot)
{
	int rie = (personality(0xffffffff) & READ_IMPLIES_EXEC) != 0;
	int seals = ash_seals(t->fd);
	struct vl_ashmem *a;
	uint32_t p;
	int err = ensure_record(t);

	if (err)
		return err;
	err = ash_lock_target(t);
	if (err)
		return err;
	a = &vl_file_at(t->r, t->x.fi)->ash;
	err = vl_ash_set_prot(vl_ash_prot_sealed(a->prot, seals), prot, rie, &p);
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
	int any, err, ret = 1; /* ASHMEM_IS_PINNED */

	if (s >= e)
		return ret;
	for (int tries = 0; tries < 8; tries++) {
		err = ash_lookup(r, &t->st.id, &x);
		if (err)
			return err;
		if (x.fi == VL_NIL)
			return ret; /* no record: nothing is unpinned */
		err = ash_lock_rec(r, &x, 0);
		if (err == -ESTALE)
			continue;
		if (err)
			return err;
		any = vl_ix_any_in(r, x.fi, s, e);
		if (any < 0)
			err = any;
		else if (any)
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
	if (!ash_is_ash(t) || !vl_mapped_here(&t->st.id) || ash_lock_target(t) != 0)
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
	if (ash_copy_in(pin, (const void *)arg, sizeof(pin)) != 0)
		return -EFAULT;
	err = snapshot(t, &a);
	if (err)
		return err;
	if (!(a.flags & VL_ASH_MAPPED) && !mapped_after_all(t, &a))
		return -EINVAL; /* the driver has no backing file before the first mmap */
	err = vl_ash_pin_range(pin[0], pin[1], a.size, ash_page_size(), &s, &e);
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
	struct vl_goal g = { .bytes = UINT64_MAX, .reason = VL_PURGE_ASHMEM };
	struct vl_purge_report rep;
	uint64_t pages;
	int err;

	if (t->region_err)
		return t->region_err;
	err = vl_purge(t->r, &g, NULL, &rep);
	if (err)
		return err;
	pages = (rep.bytes + ash_page_size() - 1) / ash_page_size();
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
		return ash_copy_out((void *)arg, name, len);
	case VL_ASH_SET_SIZE:
		return set_size(t, vl_ash_arg_value(q, arg));
	case VL_ASH_GET_SIZE:
		err = snapshot(t, &a);
		return err ? err : (long)a.size;
	case VL_ASH_SET_PROT_MASK:
		return set_prot(t, vl_ash_arg_value(q, arg));
	case VL_ASH_GET_PROT_MASK:
		err = snapshot(t, &a);
		/* a write-sealed memfd answers without PROT_WRITE, as the kernel's memfds do */
		return err ? err : (long)vl_ash_prot_sealed(a.prot, ash_seals(t->fd));
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

			return ash_copy_out((void *)arg, &ino32, sizeof(ino32));
		}
		return ash_copy_out((void *)arg, &ino, sizeof(ino));
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
		if (!vl_ash_flagged(fd) && !ash_named_region(fd))
			return 0;
		*handled = 1;
		return -EINTR;
	}
	if (!ash_identify(fd, &t)) {
		vl_leave();
		return 0;
	}
	*handled = 1;
	ret = dispatch(&t, &q, arg, &d);
	if (ash_is_ash(&t))
		vl_ash_flag(fd);
	vl_leave();
	if (ret == 0 && d.mode != 0) {
		ret = vl_volatile_fallocate(fd, d.mode, (int64_t)d.s, (int64_t)(d.e - d.s));
		if (ret > 0)
			ret = 1; /* ASHMEM_WAS_PURGED */
		/*
		 * MARK refuses a memfd sealed against writing: the kernel will
		 * never punch it (EPERM), so nothing of it could ever go. Its
		 * UNPIN is then what libcutils' memfd backend makes every UNPIN:
		 * 0, and nothing marked (vl_check_args refused before any change).
		 */
		if (ret == -EPERM && d.mode == FALLOC_FL_MARK_VOLATILE && ash_write_sealed(fd)) {
			vl_log("ashmem: fd %d: UNPIN of a write-sealed memfd: nothing can go", fd);
			ret = 0;
		}
	}
	vl_log("ashmem: ioctl fd %d 0x%lx -> %ld%s%s", fd, req, ret < 0 ? -1 : ret,
	       ret < 0 ? " " : "", ret < 0 ? strerror((int)-ret) : "");
	return ret;
}
