/* SPDX-License-Identifier: MIT */
/*
 * file_route.c - reaching a file from a process that may not hold it.
 *
 * Nothing here allocates: directories are read with getdents64 into a
 * stack buffer, /proc files with read(2).
 */
#include "file_route.h"

#include "core/fault.h"
#include "core/parse.h"

#include "ident.h"
#include "log.h"
#include "this_process.h"
#include "sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#if defined(__has_include)
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

void vl_target_copy(const struct vl_region *r, uint32_t fi, struct vl_target *t)
{
	const struct vl_file *f = vl_file_at(r, fi);

	t->fi = fi;
	t->gen = f->h.gen;
	t->flags = f->h.flags;
	t->gone_since = f->h.gone_since;
	t->checked_at = f->h.checked_at;
	t->id = f->h.ident;
	memcpy(t->holders, f->h.holders, sizeof(t->holders));
	t->path_len = f->h.path_len < VL_PATH_MAX ? f->h.path_len : 0;
	memcpy(t->path, f->path, t->path_len);
	t->path[t->path_len < VL_PATH_MAX ? t->path_len : VL_PATH_MAX - 1] = '\0';
}

/* ---- routes ------------------------------------------------------------ */

/*
 * Is what path (at dirfd) names, or fd itself (path ""), the file? The
 * identity comes from ident.c, from cached attributes only: what another
 * process holds may be on NFS or FUSE, and a stat that waits for a server
 * would hang the host program inside its fallocate. The generation is
 * asked for only when everything else matches.
 */
int vl_is_at(int dirfd, const char *path, int flags, const struct vl_ident *want)
{
	int follow = !(flags & AT_SYMLINK_NOFOLLOW);
	struct vl_stat st;

	if ((*path == '\0' ? vl_sys_statx(dirfd, &st) : vl_sys_statx_at(dirfd, path, follow, &st)) != 0 ||
	    !S_ISREG(st.mode))
		return 0;
	st.id.igen = want->igen; /* lent: is all but the generation the file's? */
	if (!vl_ident_same(&st.id, want))
		return 0;
	if ((*path == '\0' ? vl_sys_igen(dirfd, &st) : vl_sys_igen_at(dirfd, path, follow, &st)) != 0)
		return 0;
	return vl_ident_same(&st.id, want);
}

static int verify(int fd, const struct vl_ident *id)
{
	return vl_is_at(fd, "", AT_EMPTY_PATH, id);
}

int vl_fd_is(int fd, const struct vl_ident *id)
{
	return verify(fd, id);
}

/*
 * Every route ends in an O_PATH fd on the very inode, checked: opening
 * O_PATH calls no file system's open method (no lease is broken, no
 * device wakes, no FUSE server is asked), and closing one releases no
 * POSIX lock of ours (the kernel skips O_PATH files there). Only the
 * punch itself opens the file for writing (punch.c), from this fd or the
 * holder's own, after checking its identity once more.
 */
#define PATH_FLAGS (O_PATH | O_CLOEXEC)

/*
 * An O_PATH fd on what path (at dirfd) names, if it is the file; -ESTALE
 * if it is another, else the open's -errno.
 */
int vl_open_checked(int dirfd, const char *path, int follow, const struct vl_ident *id)
{
	int fd = VL_SYSCALL("open O_PATH",
			    vl_raw_openat(dirfd, path, PATH_FLAGS | (follow ? 0 : O_NOFOLLOW)));

	if (fd < 0)
		return fd;
	if (!verify(fd, id)) {
		vl_raw_close(fd);
		return -ESTALE;
	}
	return fd;
}

/* Through a holder's fd, ours included: its /proc link names the inode itself. */
static int via_holder(const struct vl_holder *h, const struct vl_ident *id)
{
	char path[64];

	if (h->pid <= 0 || h->fd < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", h->pid, h->fd);
	return vl_open_checked(AT_FDCWD, path, 1, id);
}

/* ---- thorough: walk the file system the file lives on ------------------- */

#define WALK_DEPTH 24
#define WALK_ENTRIES 200000

struct walk {
	const struct vl_ident *id;
	char *path;
	size_t size;
	long entries;
	int complete;
};

/*
 * Open rel at dirfd without leaving the file system dev is (-EXDEV where
 * another one is mounted), nor following a symlink: a walk or a recorded
 * path never makes another file system answer (a FUSE server that never
 * does would hang the purge, and the host program with it). openat2 does
 * it in one call; without it (before 5.6), an O_PATH open, which asks no
 * file system for anything, is checked first and then reopened.
 */
static int open_beneath(int dirfd, const char *rel, int flags, uint64_t dev)
{
	struct vl_stat st;
	char self[64];
	int fd;
#if defined(SYS_openat2) && defined(RESOLVE_NO_XDEV)
	struct open_how how;

	memset(&how, 0, sizeof(how));
	/* openat2 takes nothing but O_DIRECTORY, O_NOFOLLOW, O_CLOEXEC along with O_PATH */
	how.flags = (uint64_t)(unsigned)(flags | O_NOFOLLOW | O_CLOEXEC |
					 ((flags & O_PATH) ? 0 : O_NONBLOCK | O_NOCTTY));
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	fd = VL_SYSCALL("openat2 beneath", vl_raw_openat2(dirfd, rel, &how, sizeof(how)));
	if (fd >= 0 || (fd != -ENOSYS && fd != -EPERM))
		return fd;
#endif
	if (strchr(rel, '/') != NULL)
		return -ENOSYS; /* component by component would be needed: not worth it */
	fd = VL_SYSCALL("open beneath", vl_raw_openat(dirfd, rel, O_PATH | O_NOFOLLOW | O_CLOEXEC));
	if (fd < 0)
		return fd;
	if (vl_sys_statx(fd, &st) != 0 || st.id.dev != dev) {
		vl_raw_close(fd);
		return -EXDEV;
	}
	if (flags & O_PATH)
		return fd;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	dirfd = VL_SYSCALL("reopen beneath",
			   vl_raw_open(self, flags | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
	vl_raw_close(fd);
	return dirfd;
}

/*
 * The root of the mount at point, of device dev, opened without waiting:
 * openat2's RESOLVE_CACHED walks the path only through what the kernel
 * has at hand, so a FUSE directory above the mount point (whose server
 * may never answer) is never asked. A kernel without it (before 5.12,
 * or a seccomp filter refusing openat2) gets a plain open, as before.
 */
static int open_mount_point(const char *point, uint64_t dev)
{
	int fd = -1;
#if defined(SYS_openat2) && defined(RESOLVE_CACHED)
	struct open_how how;

	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
	how.resolve = RESOLVE_CACHED | RESOLVE_NO_MAGICLINKS;
	fd = VL_SYSCALL("open a mount", vl_raw_openat2(AT_FDCWD, point, &how, sizeof(how)));
	if (fd < 0 && fd != -ENOSYS && fd != -EINVAL && fd != -EPERM)
		return fd;
#endif
	if (fd < 0)
		fd = VL_SYSCALL("open a mount",
				vl_raw_open(point, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
	return vl_fd_on_dev(fd, dev);
}

int vl_fd_on_dev(int fd, uint64_t dev)
{
	struct vl_stat st;

	if (fd < 0)
		return fd;
	if (vl_sys_statx(fd, &st) != 0 || st.id.dev != dev) {
		vl_raw_close(fd);
		return -ENODEV;
	}
	return fd;
}

struct mount_search {
	uint64_t dev;
	int whole;
	char *point;
	size_t size;
	int fd;
};

static int on_mount_line(void *a, char *line)
{
	struct mount_search *s = a;
	struct vl_mount_fields m;

	if (vl_parse_mount_line(line, &m) != 0 || m.dev != s->dev ||
	    (s->whole && !vl_field_is(m.root, m.root_len, "/")) ||
	    vl_mount_unescape(s->point, s->size, m.point, m.point_len) != 0)
		return 0;
	s->fd = open_mount_point(s->point, s->dev);
	return s->fd >= 0; /* else another mount of it may do */
}

int vl_open_mount(uint64_t dev, int whole, char *point, size_t size)
{
	struct mount_search s = { dev, whole, point, size, -ENOENT };
	int err = vl_each_line("/proc/self/mountinfo", on_mount_line, &s);

	return err < 0 ? err : s.fd;
}

/* The recorded path, resolved inside the file system the file lives on only. */
static int via_path(const struct vl_target *t)
{
	char point[PATH_MAX];
	size_t len;
	int root, fd;

	root = vl_open_mount(t->id.dev, 1, point, sizeof(point));
	if (root < 0)
		return -1;
	len = strcmp(point, "/") == 0 ? 0 : strlen(point);
	fd = -1;
	if (strncmp(t->path, point, len) == 0 && t->path[len] == '/' && t->path[len + 1] != '\0') {
		fd = open_beneath(root, t->path + len + 1, O_PATH, t->id.dev);
		if (fd >= 0 && !verify(fd, &t->id)) {
			vl_raw_close(fd);
			fd = -1;
		}
	}
	vl_raw_close(root);
	return fd < 0 ? -1 : fd;
}

/*
 * Depth-first search of the directory at dirfd (whose path is w->path) for
 * an entry with the file's inode number and identity. Returns an fd on it
 * (w->path then names it), or -1. Leaves w->complete cleared if anything
 * could not be searched.
 */
static int walk_dir(struct walk *w, int dirfd, int depth)
{
	struct vl_dirbuf d;
	struct dirent64 *e;
	size_t base = strlen(w->path);
	int fd = -1;

	d.fd = dirfd;
	d.len = d.pos = 0;
	while (fd < 0 && (e = vl_next_dirent(&d)) != NULL) {
		int n;

		if (++w->entries > WALK_ENTRIES) {
			w->complete = 0;
			break;
		}
		n = snprintf(w->path + base, w->size - base, "/%s", e->d_name);
		if (n < 0 || (size_t)n >= w->size - base) {
			w->complete = 0;
			continue;
		}
		if (e->d_ino == w->id->ino && e->d_type != DT_DIR) {
			fd = vl_open_checked(dirfd, e->d_name, 0, w->id);
			if (fd >= 0)
				break;
		}
		if (e->d_type == DT_DIR) {
			int sub;

			if (depth >= WALK_DEPTH) {
				w->complete = 0;
				continue;
			}
			sub = open_beneath(dirfd, e->d_name, O_RDONLY | O_DIRECTORY, w->id->dev);
			if (sub < 0) {
				/* another file system mounted here (EXDEV) hides what is under it */
				w->complete = 0;
				continue;
			}
			fd = walk_dir(w, sub, depth + 1);
		} else if (e->d_type == DT_UNKNOWN) {
			w->complete = 0;
		}
	}
	if (d.len < 0)
		w->complete = 0;
	if (fd < 0)
		w->path[base] = '\0';
	vl_raw_close(dirfd);
	return fd;
}

/* Find a name of the file on a mount of its device. -1, *complete cleared if unsure. */
static int walk_mount(const struct vl_ident *id, char *path, size_t size, int *complete)
{
	struct walk w = { id, path, size, 0, 1 };
	int dirfd = vl_open_mount(id->dev, 1, path, size), fd;

	if (dirfd < 0) {
		*complete = 0; /* not mounted where we can see it */
		return -1;
	}
	if (strcmp(path, "/") == 0)
		path[0] = '\0';
	fd = walk_dir(&w, dirfd, 0);
	if (!w.complete)
		*complete = 0;
	return fd;
}

/* The initial pid namespace's inode number (PROC_PID_INIT_INO), the same on every kernel. */
#define PID_NS_INIT_INO 0xEFFFFFFCu

/*
 * Can /proc show every process of this user? Not from a pid namespace
 * other than the first (a container, unshare -p): its /proc lists only
 * that namespace's processes, and a holder outside it is invisible; nor
 * through a /proc mounted hidepid, which hides processes that cannot be
 * traced. Without the whole view, "no process holds it" proves nothing.
 * Asked once per process.
 */
static int view_complete(void)
{
	static int known, complete;
	struct stat st;
	char self[32];

	if (__atomic_load_n(&known, __ATOMIC_ACQUIRE))
		return complete;
	complete = VL_SYSCALL("stat pid ns",
			      vl_raw_stat("/proc/self/ns/pid", &st)) == 0 && st.st_ino == PID_NS_INIT_INO &&
		   VL_SYSCALL("readlink proc self",
			      vl_raw_readlinkat(AT_FDCWD, "/proc/self", self, sizeof(self))) > 0 &&
		   !vl_proc_hides();
	__atomic_store_n(&known, 1, __ATOMIC_RELEASE);
	return complete;
}

int vl_reach(const struct vl_target *t, struct vl_reach_ctx *ctx, struct vl_reached *out)
{
	int fd, complete = view_complete();

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < VL_HOLDERS; i++) {
		fd = via_holder(&t->holders[i], &t->id);
		if (fd >= 0) {
			out->via = t->holders[i];
			return fd;
		}
	}
	if (t->path_len > 0 && t->path[0] == '/') {
		fd = via_path(t);
		if (fd >= 0)
			return fd;
	}
	if (ctx->bounded) {
		struct vl_self_id me;

		/*
		 * Inside a MARK (DESIGN 13): no look at every process's fds
		 * (520-570 ms with 200,000 fds on the machine), only the
		 * holders' children at the holder's fd number, then this
		 * process's own fd tables. What they do not reach waits for
		 * the daemon and `volatile purge`.
		 */
		for (int i = 0; i < VL_HOLDERS; i++) {
			fd = vl_via_children(&t->holders[i], &t->id, &out->holder);
			if (fd >= 0) {
				vl_log("file %u: reached through pid %d fd %d, a child of pid %d", t->fi,
				       out->holder.pid, out->holder.fd, t->holders[i].pid);
				out->via = out->holder;
				return fd;
			}
		}
		if (vl_self_id(&me) == 0 && me.pid != 0) {
			fd = vl_find_holder_in(me.pid, &t->id, &out->holder, &complete);
			if (fd >= 0) {
				vl_log("file %u: reached through our own fd %d", t->fi, out->holder.fd);
				out->via = out->holder;
				return fd;
			}
		}
		return -ESRCH;
	}
	fd = vl_find_holder(&t->id, &out->holder, &complete);
	if (fd >= 0) {
		vl_log("file %u: reached through pid %d fd %d", t->fi, out->holder.pid,
		       out->holder.fd);
		out->via = out->holder;
		return fd;
	}
	if (vl_mapped_anywhere(&t->id, &complete))
		return -ESRCH;
	if (!(t->flags & VL_FF_ANON) && ctx->thorough) {
		/* a named file may have been renamed, or deleted: only a search tells */
		fd = walk_mount(&t->id, out->path, sizeof(out->path), &complete);
		if (fd >= 0) {
			out->path_len = (uint32_t)strlen(out->path);
			vl_log("file %u: found again as %s", t->fi, out->path);
			return fd;
		}
	} else if (!(t->flags & VL_FF_ANON)) {
		return -ESRCH;
	}
	return complete ? -ENOENT : -ESRCH;
}
