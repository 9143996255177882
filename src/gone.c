/*
 * gone.c - is a file gone? Asked of the kernel (see gone.h).
 *
 * Why ESTALE is proof. The identity of every record comes from the
 * file's handle (sys.c): shmem encodes type 1, three words: generation,
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
 *     /proc/self/mountinfo, opened as a directory with RESOLVE_CACHED, so
 *     that the path walk fails (EAGAIN) instead of waiting for a file
 *     system behind it. A mount we cannot see or open: cannot tell.
 *
 * Nothing here allocates; it runs only where a purge could not reach a
 * file, at most every few seconds per file (purge.c), and in evictions.
 */
#include "gone.h"

#include "core/fault.h"
#include "log.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#if defined(__has_include)
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
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

	if (syscall(SYS_capget, &h, d) != 0)
		return 0;
	return (d[CAP_DAC_READ_SEARCH / 32].effective >> (CAP_DAC_READ_SEARCH % 32)) & 1;
}

/* An fd on the same file system as dev, or -errno; fd is ours to close. */
static int on_dev(int fd, uint64_t dev)
{
	struct vl_stat st;

	if (fd < 0)
		return -errno;
	if (vl_sys_statx(fd, &st) != 0 || st.id.dev != dev) {
		close(fd);
		return -ENODEV;
	}
	return fd;
}

/* The internal shm mount, through a memfd of our own, if dev is its device. */
static int shm_mount(uint64_t dev)
{
	/* the system call itself: nothing of ours (the ashmem gates) sees it */
	return on_dev((int)VL_SYSCALL("memfd for a handle",
				      syscall(SYS_memfd_create, "volatile-gone", MFD_CLOEXEC)),
		      dev);
}

/* The root of a mount at path, of device dev, opened without waiting. */
static int open_mount(const char *path, uint64_t dev)
{
#if defined(SYS_openat2) && defined(RESOLVE_CACHED)
	struct open_how how;

	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
	how.resolve = RESOLVE_CACHED | RESOLVE_NO_MAGICLINKS;
	return on_dev((int)VL_SYSCALL("open a mount", syscall(SYS_openat2, AT_FDCWD, path, &how,
							     sizeof(how))),
		      dev);
#else
	(void)path;
	(void)dev;
	return -ENOSYS; /* no path walk that cannot block: cannot tell */
#endif
}

/* mountinfo escapes blanks, tabs, newlines and backslashes as \ooo */
static void unescape(char *s)
{
	char *out = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 4;
		} else {
			*out++ = *s++;
		}
	}
	*out = '\0';
}

/*
 * "36 25 0:26 / /dev/shm rw,relatime shared:1 - tmpfs tmpfs rw": if this
 * is a tmpfs of device dev, an fd on the root of the mount, else -1.
 */
static int mount_line(char *line, uint64_t dev)
{
	char *p = line, *end, *mnt;
	unsigned long maj, min;

	for (int i = 0; i < 2; i++) {
		p = strchr(p, ' ');
		if (p == NULL)
			return -1;
		p++;
	}
	maj = strtoul(p, &end, 10);
	if (*end != ':')
		return -1;
	min = strtoul(end + 1, &end, 10);
	if (*end != ' ' || makedev((unsigned)maj, (unsigned)min) != dev)
		return -1;
	mnt = strchr(end + 1, ' '); /* after the root within the file system */
	if (mnt == NULL)
		return -1;
	mnt++;
	end = strchr(mnt, ' ');
	if (end == NULL)
		return -1;
	*end = '\0';
	p = strstr(end + 1, " - ");
	if (p == NULL || strncmp(p + 3, "tmpfs ", 6) != 0)
		return -1; /* only tmpfs: shmem's handles are the ones we know */
	unescape(mnt);
	return open_mount(mnt, dev);
}

struct mount_arg {
	uint64_t dev;
	int mnt;
};

static int on_mount_line(void *a, char *line)
{
	struct mount_arg *ma = a;
	int got = mount_line(line, ma->dev);

	if (got < 0)
		return 0; /* another mount of it may do */
	ma->mnt = got;
	return 1;
}

/* A mount of the tmpfs of device dev that we can open, or -errno. */
static int tmpfs_mount(uint64_t dev)
{
	struct mount_arg ma = { dev, -ENOENT };
	int err = vl_each_line("/proc/self/mountinfo", on_mount_line, &ma);

	return err < 0 ? err : ma.mnt;
}

int vl_gone_by_handle(const struct vl_ident *id)
{
	union {
		struct file_handle h;
		char room[sizeof(struct file_handle) + 3 * sizeof(uint32_t)];
	} fh;
	uint32_t w[3] = { id->igen, (uint32_t)id->ino, (uint32_t)(id->ino >> 32) };
	int mnt, fd, ret;

	if (!may_open_handles())
		return -EPERM;
	mnt = shm_mount(id->dev);
	if (mnt < 0)
		mnt = tmpfs_mount(id->dev);
	if (mnt < 0)
		return mnt;
	fh.h.handle_bytes = sizeof(w);
	fh.h.handle_type = 1; /* shmem's, as name_to_handle_at gave it (sys.c) */
	memcpy(fh.h.f_handle, w, sizeof(w));
	/* O_PATH: no open method runs, nothing is read, no lease is broken */
	fd = VL_SYSCALL("open_by_handle_at", open_by_handle_at(mnt, &fh.h, O_PATH | O_CLOEXEC));
	ret = fd >= 0 ? 0 : errno == ESTALE ? 1 : -errno;
	if (fd >= 0)
		close(fd);
	close(mnt);
	vl_log("inode %llu of %u:%u: %s", (unsigned long long)id->ino, major(id->dev),
	       minor(id->dev), ret == 1 ? "gone (ESTALE)" : ret == 0 ? "exists" : "cannot tell");
	return ret;
}
