/* SPDX-License-Identifier: MIT */
/*
 * inode_gone.c - is a file gone? Asked of the kernel (see inode_gone.h).
 *
 * Why ESTALE is proof. The identity of every record comes from the
 * file's handle (ident.c): shmem encodes type 1, three words: generation,
 * inode number low and high, and hashes the inode then, by number and
 * generation, if it was not yet. open_by_handle_at looks that hash up in
 * the superblock of the mount fd given: a live inode is found (it stays
 * hashed until it is evicted, and a tmpfs inode is evicted only when
 * nothing holds it: no fd, no mapping, no name), a gone one is not, and
 * the call fails with ESTALE. So ESTALE from a mount of the file's own
 * superblock means gone; from another superblock it means nothing, and
 * the mount fd is always checked to be on the file's device first (a
 * device number names one live superblock: it is freed only with it).
 *
 * Where a mount of it is found:
 *   - a memfd lives on the kernel's internal shm mount: so does any memfd
 *     of our own, made for the question and closed after it;
 *   - a named tmpfs file: the root of a mount of its device listed in
 *     /proc/self/mountinfo, opened as a directory with RESOLVE_CACHED
 *     (vl_open_mount), so that the path walk fails (EAGAIN) instead of
 *     waiting for a file system behind it; a kernel without it (before
 *     5.12) walks it as any open does, as a purge's other routes to the
 *     file then do. A mount we cannot see or open: cannot tell.
 *
 * Nothing here allocates; it runs only where a purge could not reach a
 * file, at most every few seconds per file (purge.c), and in evictions.
 */
#include "inode_gone.h"

#include "core/fault.h"
#include "ident.h"
#include "log.h"
#include "file_route.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001U
#endif

/*
 * open_by_handle_at needs CAP_DAC_READ_SEARCH. Asked first, so that a
 * process without it (every unprivileged one) never makes the call at
 * all: one capget instead of a memfd, a file handle and an EPERM.
 */
static int may_open_handles(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (VL_SYSCALL("capget", vl_raw_capget(&h, d)) != 0)
		return 0;
	return (d[CAP_DAC_READ_SEARCH / 32].effective >> (CAP_DAC_READ_SEARCH % 32)) & 1;
}

/* The internal shm mount, through a memfd of our own, if dev is its device. */
static int shm_mount(uint64_t dev)
{
	/* the system call itself: nothing of ours (the ashmem gates) sees it */
	return vl_fd_on_dev(VL_SYSCALL("memfd for a handle",
				       vl_raw_memfd_create("volatile-gone", MFD_CLOEXEC)),
			    dev);
}

/*
 * A mount of the tmpfs of device dev that we can open (file_route.c: without
 * waiting on another file system on the way), or -errno. Only tmpfs:
 * shmem's handles are the ones we know.
 */
static int tmpfs_mount(uint64_t dev)
{
	char point[PATH_MAX];
	struct statfs sf;
	int fd = vl_open_mount(dev, 0, point, sizeof(point));

	if (fd >= 0 && (VL_SYSCALL("fstatfs gone mount", vl_raw_fstatfs(fd, &sf)) != 0 ||
			sf.f_type != TMPFS_MAGIC)) {
		vl_raw_close(fd);
		return -EOPNOTSUPP;
	}
	return fd;
}

int vl_gone_by_handle(const struct vl_ident *id)
{
	union {
		struct file_handle h;
		char room[sizeof(struct file_handle) + VL_SHMEM_HANDLE_WORDS * sizeof(uint32_t)];
	} fh;
	int mnt, fd, ret;

	if (!may_open_handles())
		return -EPERM;
	mnt = shm_mount(id->dev);
	if (mnt < 0)
		mnt = tmpfs_mount(id->dev);
	if (mnt < 0)
		return mnt;
	vl_ident_handle(id, &fh.h); /* shmem's, as name_to_handle_at gave it */
	/* O_PATH: no open method runs, nothing is read, no lease is broken */
	fd = VL_SYSCALL("open_by_handle_at",
			vl_raw_open_by_handle_at(mnt, &fh.h, O_PATH | O_CLOEXEC));
	ret = fd >= 0 ? 0 : fd == -ESTALE ? 1 : fd;
	if (fd >= 0)
		vl_raw_close(fd);
	vl_raw_close(mnt);
	vl_log("inode %llu of %u:%u: %s", (unsigned long long)id->ino, major(id->dev),
	       minor(id->dev), ret == 1 ? "gone (ESTALE)" : ret == 0 ? "exists" : "cannot tell");
	return ret;
}
