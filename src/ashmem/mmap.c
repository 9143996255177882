/* SPDX-License-Identifier: MIT */
/*
 * mmap.c - mmap of a region (prot mask, size), and fstat of one opened as
 * /dev/ashmem (the device).
 */
#include "internal.h"

#include "reentry.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

/* ---- mmap and fstat ------------------------------------------------------- */

/*
 * Worth a look at the shared region? A memfd named as regions are, or
 * any memfd once this process uses the region anyway (a plain memfd may
 * have been given a prot mask). A program that never uses volatile
 * ranges or ashmem never makes or maps the region for an fd it received.
 */
static int may_be_region(int fd)
{
	return vl_region_attached() || ash_named_region(fd);
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
	ro = VL_SYSCALL("open read-only twin", vl_raw_open(link, O_RDONLY | O_CLOEXEC));
	if (ro < 0)
		return -1;
	if (vl_sys_fstat(ro, &st) != 0 || !vl_ident_same(&st.id, id)) {
		vl_raw_close(ro);
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

		vl_raw_close(ro); /* not close(): the gate there would look at it */
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
		if (!ash_named_region(fd))
			return 0;
		*res = MAP_FAILED;
		*errp = EAGAIN;
		return 1;
	}
	memset(&t, 0, sizeof(t));
	t.fd = fd;
	if (vl_sys_fstat(fd, &t.st) != 0 || !S_ISREG(t.st.mode) || t.st.nlink != 0 ||
	    !may_be_region(fd) || vl_region_get(&t.r) != 0 || ash_lookup(t.r, &t.st.id, &t.x) != 0 ||
	    !ash_is_ash(&t)) {
		vl_ash_unflag(fd); /* not a region (any more): no need to look again */
		vl_leave();
		return 0;
	}
	err = ash_lock_target(&t);
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
			err = vl_ash_mmap_check(a, prot, len, ash_page_size());
		/* SET_SIZE sized the file; if it could not, say why now, as the driver did */
		if (err == 0 && !(a->flags & (VL_ASH_MAPPED | VL_ASH_PLAIN)))
			err = ash_apply_size(fd, a->size);
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
		return ash_bit(ash_devbits, fd);
	memset(&t, 0, sizeof(t));
	if (vl_sys_fstat(fd, &t.st) == 0 && S_ISREG(t.st.mode) && t.st.nlink == 0 &&
	    may_be_region(fd) && vl_region_get(&t.r) == 0 && ash_lookup(t.r, &t.st.id, &t.x) == 0 &&
	    ash_is_ash(&t))
		dev = (t.x.ashflags & VL_ASH_DEV) != 0;
	else
		vl_ash_unflag(fd);
	if (dev)
		ash_set_bit(ash_devbits, fd);
	else
		ash_clear_bit(ash_devbits, fd);
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

		if (VL_SYSCALL("stat dev", vl_raw_stat("/dev", &s)) != 0)
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
