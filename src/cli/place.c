/* SPDX-License-Identifier: MIT */
/*
 * place.c - the file system of a caller's fd, as `volatile run` learns it
 * before it takes the file (DESIGN 21), asked of /proc, never of the file.
 *
 * A file of another file system may be on a FUSE or network server that
 * never answers. Anything that asks that server waits, and a thread
 * waiting for an answer to a request the server has read cannot even be
 * killed: not a stat that syncs, not a statfs, not a close (FUSE flushes
 * at every close of every descriptor, run's copy too, and at exit). So
 * run takes (pidfd_getfd) only a file that /proc shows to be kept by the
 * kernel alone, or on a local device: the memfds' mount; a file of the
 * kernel's own internal mounts (a pipe, a socket, an eventfd: its
 * /proc/TID/fd/N link is not a path, "pipe:[...]"); a mount of one of the
 * types below. Any other file, a FUSE one included, is left to the kernel,
 * which answers as without run. The caller's /proc/TID/fdinfo/N names the
 * mount (mnt_id), and the caller's mountinfo that mount's type; reading
 * either never reaches the file's file system.
 *
 * The mounts of run's own mount namespace are kept, and trusted only
 * while that namespace has not changed since they were read (a poll of
 * /proc/self/mountinfo says so, once per change): a mount's id is reused
 * as soon as it is gone, and a mount that goes away, or comes, changes the
 * namespace. A caller in another mount namespace has its mountinfo read
 * at each call. A file on a mount neither shows (one detached, one of a
 * namespace the file was sent from) cannot be told: not taken. But for
 * the mount that holds run's root in a chroot: no mountinfo of the chroot
 * shows it (it is above the root), and every file of the chroot's own disk
 * is on it; its type is learnt at start, from the kind of file system the
 * root is (statfs of "/", which run's own exec and paths ask anyway).
 */
#include "cli.h"
#include "mutex.h"

#include "core/parse.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

/* learnt at start: -1 until then, or if run could not make a memfd */
static int64_t memfd_mount = -1;
static char own_mnt_ns[64];
static int own_mountinfo = -1; /* polled for changes of run's mount namespace */
/* the mount of run's root where no mountinfo shows it (a chroot): -1 if shown */
static int64_t hidden_root_mount = -1;
static int hidden_root_local;

#define MOUNTS 512
static struct cli_mutex mounts_lock = CLI_MUTEX_INITIALIZER;
static struct {
	uint64_t id;
	int local;
} mounts[MOUNTS];
static int n_mounts = -1; /* -1: to be read */

/*
 * File systems that keep their files in the kernel or on a local device:
 * none asks a process or a server for anything (not overlay, which may lie
 * over FUSE, nor autofs, which waits for its daemon). tmpfs's files are the
 * ones the library serves; the others get its errors in its order (DESIGN
 * 5), as through the preload.
 */
static const char *const local_types[] = {
	"tmpfs",  "devtmpfs", "ramfs",	 "hugetlbfs", "proc",	  "sysfs", "devpts",
	"mqueue", "cgroup",   "cgroup2", "bpf",	      "debugfs",  "tracefs", "securityfs",
	"configfs", "pstore", "efivarfs", "ext2",     "ext3",	  "ext4",  "xfs",
	"btrfs",  "vfat",     "exfat",	 "f2fs",      "erofs",	  "squashfs", "iso9660",
};

static int local_type(const char *type, size_t len)
{
	for (size_t i = 0; i < sizeof(local_types) / sizeof(local_types[0]); i++)
		if (vl_field_is(type, len, local_types[i]))
			return 1;
	return 0;
}

/* local_types' file systems, by statfs's f_type: those a root may be */
static const unsigned long local_magics[] = {
	TMPFS_MAGIC,	   RAMFS_MAGIC,	      EXT4_SUPER_MAGIC,	 XFS_SUPER_MAGIC,
	BTRFS_SUPER_MAGIC, F2FS_SUPER_MAGIC,  MSDOS_SUPER_MAGIC, EXFAT_SUPER_MAGIC,
	EROFS_SUPER_MAGIC_V1, SQUASHFS_MAGIC, ISOFS_SUPER_MAGIC,
};

static int local_magic(unsigned long type)
{
	for (size_t i = 0; i < sizeof(local_magics) / sizeof(local_magics[0]); i++)
		if (type == local_magics[i])
			return 1;
	return 0;
}

/* The text of a /proc file, at most size - 1 bytes, NUL-ended: its length, or -errno. */
static ssize_t read_text(int dirfd, const char *path, char *buf, size_t size)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

static int own_mount_kind(uint64_t id);

/*
 * In a chroot, the mount that holds the root: its id (the fdinfo of an
 * O_PATH descriptor of "/", which opens nothing) and whether it is local.
 * Where mountinfo shows the root's mount, as outside a chroot, nothing.
 */
static void note_hidden_root(void)
{
	char path[64], text[512];
	struct statfs sf;
	uint64_t id;
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (read_text(AT_FDCWD, path, text, sizeof(text)) > 0 && vl_fdinfo_mnt_id(text, &id) == 0 &&
	    own_mount_kind(id) < 0 && fstatfs(fd, &sf) == 0) {
		hidden_root_local = local_magic((unsigned long)sf.f_type);
		hidden_root_mount = (int64_t)id;
	}
	close(fd);
}

void vl_sv_place_init(void)
{
	char path[64], text[512];
	uint64_t id;
	ssize_t n;
	int fd = memfd_create("volatile-run", MFD_CLOEXEC);

	if (fd >= 0) {
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
		if (read_text(AT_FDCWD, path, text, sizeof(text)) > 0 &&
		    vl_fdinfo_mnt_id(text, &id) == 0)
			memfd_mount = (int64_t)id;
		close(fd);
	}
	n = readlink("/proc/self/ns/mnt", own_mnt_ns, sizeof(own_mnt_ns) - 1);
	own_mnt_ns[n > 0 ? n : 0] = '\0';
	own_mountinfo = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (own_mountinfo >= 0) {
		struct pollfd p = { own_mountinfo, POLLPRI, 0 };

		(void)poll(&p, 1, 0); /* from now on, a poll says what changed */
	}
	note_hidden_root();
}

struct find {
	uint64_t id;
	int found, local;
	int keep; /* note every mount in mounts[] */
};

static int on_mount(void *arg, char *line)
{
	struct find *f = arg;
	struct vl_mount_fields m;
	int local;

	if (vl_parse_mount_line(line, &m) != 0)
		return 0;
	local = local_type(m.fstype, m.fstype_len);
	if (f->keep && n_mounts < MOUNTS) {
		CLI_ASSERT_HELD(&mounts_lock); /* keeping them: mounts[] is its (lock held) */
		mounts[n_mounts].id = m.id;
		mounts[n_mounts].local = local;
		n_mounts++;
	}
	if (m.id == f->id) {
		f->found = 1;
		f->local = local;
		return !f->keep;
	}
	return 0;
}

/* Mount id in run's own namespace: 1 a local type, 0 another, -1 not there. */
static int own_mount_kind(uint64_t id)
{
	struct pollfd p = { own_mountinfo, POLLPRI, 0 };
	struct find f = { id, 0, 0, 1 };
	int kind = -1;

	cli_lock(&mounts_lock);
	/* POLLPRI|POLLERR once for each change since the last poll */
	if (own_mountinfo < 0 || poll(&p, 1, 0) != 0)
		n_mounts = -1;
	for (int i = 0; i < n_mounts; i++)
		if (mounts[i].id == id)
			kind = mounts[i].local;
	if (kind < 0 && (n_mounts < 0 || n_mounts == MOUNTS)) {
		/* read after the poll: a change from here on shows at the next */
		n_mounts = 0;
		if (vl_each_line("/proc/self/mountinfo", on_mount, &f) < 0)
			n_mounts = -1;
		kind = f.found ? f.local : -1;
	}
	cli_unlock(&mounts_lock);
	return kind;
}

/*
 * A file of one of the kernel's internal mounts, which no mountinfo shows:
 * its link is a name the kernel makes ("pipe:[5]", "socket:[7]",
 * "anon_inode:[eventfd]"), never a path, which every file of a mount a
 * namespace has, or had, starts with. (A memfd's is a path too, on its own
 * mount: learnt apart.)
 */
static int pseudo_file(int nsdir, pid_t tid, int fd)
{
	char path[64], link[16];
	ssize_t n;

	if (nsdir >= 0) {
		snprintf(path, sizeof(path), "../fd/%d", fd);
		n = readlinkat(nsdir, path, link, sizeof(link));
	} else {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)tid, fd);
		n = readlink(path, link, sizeof(link));
	}
	return n > 0 && link[0] != '/';
}

void vl_sv_place_forget(struct vl_sv_fdinfo *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/*
 * The caller's fdinfo of fd: a file of /proc whose every read from 0 is
 * made anew, of what the number names then. Kept open, for the fd number
 * the thread used last: a program calls through one fd again and again,
 * and one pread costs a third of an open, a read and a close.
 */
static ssize_t fdinfo_text(int nsdir, pid_t tid, int fd, struct vl_sv_fdinfo *c, char *buf,
			   size_t size)
{
	char path[64];
	ssize_t n;
	int f;

	if (nsdir < 0) {
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)tid, fd);
		return read_text(AT_FDCWD, path, buf, size);
	}
	if (c->fd >= 0 && c->num == fd) {
		n = pread(c->fd, buf, size - 1, 0);
		if (n > 0) {
			buf[n] = '\0';
			return n;
		}
	}
	vl_sv_place_forget(c);
	snprintf(path, sizeof(path), "../fdinfo/%d", fd);
	f = openat(nsdir, path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -errno;
	n = read(f, buf, size - 1);
	if (n <= 0) {
		n = n < 0 ? -errno : -EIO;
		close(f);
		return n;
	}
	buf[n] = '\0';
	c->fd = f;
	c->num = fd;
	return n;
}

int vl_sv_place(int nsdir, pid_t tid, int fd, struct vl_sv_fdinfo *c)
{
	char path[96], text[512], ns[64];
	uint64_t id;
	ssize_t n;
	struct find f;

	n = fdinfo_text(nsdir, tid, fd, c, text, sizeof(text));
	if (n == -ENOENT) {
		/* not open, or the thread is gone (its /proc directory is empty then) */
		if (nsdir >= 0 ? readlinkat(nsdir, "mnt", ns, sizeof(ns)) < 0
			       : (snprintf(path, sizeof(path), "/proc/%d/ns", (int)tid),
				  access(path, F_OK) != 0))
			return -ESRCH;
		return -EBADF;
	}
	if (n < 0)
		return (int)n;
	if (vl_fdinfo_mnt_id(text, &id) != 0)
		return -EIO;
	if (memfd_mount >= 0 && id == (uint64_t)memfd_mount)
		return VL_PLACE_TAKE;
	if (hidden_root_mount >= 0 && id == (uint64_t)hidden_root_mount)
		return hidden_root_local ? VL_PLACE_TAKE : VL_PLACE_LEAVE;
	/* the caller's mount namespace: run's own, or its mountinfo is read now */
	n = proc_ns_link(nsdir, tid, "mnt", ns, sizeof(ns));
	if (n < 0)
		return (int)n;
	if (own_mnt_ns[0] != '\0' && strcmp(ns, own_mnt_ns) == 0) {
		int kind = own_mount_kind(id);

		if (kind >= 0)
			return kind ? VL_PLACE_TAKE : VL_PLACE_LEAVE;
	} else {
		memset(&f, 0, sizeof(f));
		f.id = id;
		/* through the thread's own directory where it is kept: not by number */
		if (nsdir >= 0)
			snprintf(path, sizeof(path), "/proc/self/fd/%d/../mountinfo", nsdir);
		else
			snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)tid);
		if (vl_each_line(path, on_mount, &f) >= 0 && f.found)
			return f.local ? VL_PLACE_TAKE : VL_PLACE_LEAVE;
	}
	return pseudo_file(nsdir, tid, fd) ? VL_PLACE_TAKE : -ENOENT;
}
