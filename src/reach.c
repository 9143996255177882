/*
 * reach.c - reaching a file from a process that may not hold it.
 *
 * Nothing here allocates: directories are read with getdents64 into a
 * stack buffer, /proc files with read(2).
 */
#include "reach.h"

#include "core/fault.h"
#include "core/parse.h"

#include "log.h"
#include "self.h"
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

/* ---- parsing /proc ----------------------------------------------------- */

static int parse_u64(const char **p, int base, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(*p, &end, base);
	if (end == *p || errno)
		return -1;
	*p = end;
	return 0;
}

/* Skip blanks, then n words each with the blanks after it. */
static const char *skip_words(const char *p, int n)
{
	while (*p == ' ')
		p++;
	while (n-- > 0) {
		while (*p && *p != ' ')
			p++;
		while (*p == ' ')
			p++;
	}
	return p;
}

/* "MAJ:MIN", in hexadecimal, as /proc/PID/maps shows a device */
static int parse_dev(const char **p, uint64_t *dev)
{
	uint64_t maj, min;

	if (parse_u64(p, 16, &maj) || *(*p)++ != ':' || parse_u64(p, 16, &min))
		return -1;
	*dev = makedev((unsigned)maj, (unsigned)min);
	return 0;
}

/* ---- routes ------------------------------------------------------------ */

/*
 * Is what path (at dirfd) names, or fd itself (path ""), the file? The
 * identity comes from sys.c, from cached attributes only: what another
 * process holds may be on NFS or FUSE, and a stat that waits for a server
 * would hang the host program inside its fallocate. The generation is
 * asked for only when everything else matches.
 */
static int is(int dirfd, const char *path, int flags, const struct vl_ident *want)
{
	int follow = !(flags & AT_SYMLINK_NOFOLLOW);
	struct vl_stat st;

	if ((*path == '\0' ? vl_sys_statx(dirfd, &st) : vl_sys_statx_at(dirfd, path, follow, &st)) != 0 ||
	    !S_ISREG(st.mode) || st.id.dev != want->dev || st.id.ino != want->ino ||
	    st.id.btime_sec != want->btime_sec || st.id.btime_nsec != want->btime_nsec)
		return 0;
	if ((*path == '\0' ? vl_sys_igen(dirfd, &st) : vl_sys_igen_at(dirfd, path, follow, &st)) != 0)
		return 0;
	return vl_ident_same(&st.id, want);
}

static int verify(int fd, const struct vl_ident *id)
{
	return is(fd, "", AT_EMPTY_PATH, id);
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

/* An O_PATH fd on what path (at dirfd) names, if it is the file. */
static int open_checked(int dirfd, const char *path, int follow, const struct vl_ident *id)
{
	int fd = VL_SYSCALL("open O_PATH",
			    vl_raw_openat(dirfd, path, PATH_FLAGS | (follow ? 0 : O_NOFOLLOW)));

	if (fd < 0)
		return -1;
	if (!verify(fd, id)) {
		vl_raw_close(fd);
		return -1;
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
	return open_checked(AT_FDCWD, path, 1, id);
}

struct dirbuf {
	int fd;
	long len, pos;
	char buf[2048] __attribute__((aligned(__alignof__(struct dirent64))));
};

/* Next entry of a directory (not . or ..), or NULL. */
static struct dirent64 *next_dirent(struct dirbuf *d)
{
	for (;;) {
		struct dirent64 *e;

		if (d->pos >= d->len) {
			d->len = VL_SYSCALL("getdents", syscall(SYS_getdents64, d->fd, d->buf, sizeof(d->buf)));
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

static int numeric(const char *s, long *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return 0;
	*v = strtol(s, &end, 10);
	return *end == '\0';
}

struct uid_arg {
	uid_t me;
	int ours;
	int dead;
	long threads;
};

/*
 * "State:	Z (zombie)"; "Uid:	1000	1000	1000	1000" (real, effective,
 * saved, fs)
 */
static int on_status_line(void *a, char *line)
{
	struct uid_arg *ua = a;
	const char *p = line + 4;
	uint64_t real, eff;

	if (strncmp(line, "State:", 6) == 0) {
		p = line + 6;
		while (*p == ' ' || *p == '\t')
			p++;
		ua->dead = *p == 'Z' || *p == 'X';
		return 0;
	}
	if (strncmp(line, "Threads:", 8) == 0) {
		ua->threads = strtol(line + 8, NULL, 10);
		return 0;
	}
	if (strncmp(line, "Uid:", 4) != 0)
		return 0;
	if (parse_u64(&p, 10, &real) == 0 && parse_u64(&p, 10, &eff) == 0)
		ua->ours = (uid_t)real == ua->me || (uid_t)eff == ua->me;
	return 0;
}

/*
 * Is pid a live process of our user? Its /proc files may belong to root
 * when it is not dumpable, so the status file tells, which anyone may read.
 * A zombie holds no fd and maps nothing, unless it is a leader whose main
 * thread exited while others run on ("Threads:" counts them with it):
 * those hold the files, through their own task directories.
 */
static int ours(long pid)
{
	struct uid_arg ua = { geteuid(), 0, 0, 0 };
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	vl_each_line(path, on_status_line, &ua);
	return ua.ours && (!ua.dead || ua.threads > 1);
}

#ifndef SYS_kcmp
#define SYS_kcmp 312
#endif
#define KCMP_FILES 2

/*
 * The fd tables of process pid's threads: the leader's is /proc/PID/fd,
 * but a thread that unshared its table (unshare(CLONE_FILES), or a clone
 * without CLONE_FILES) has its own, and a zombie leader's is empty while
 * its threads run on. So each task is looked at, and one whose table
 * kcmp says is one looked at already is skipped (without kcmp, none is).
 */
static int scan_tasks(long pid, const struct vl_ident *id, struct vl_holder *found, int *complete)
{
	struct dirbuf tasks, fds;
	struct dirent64 *te, *fe;
	char path[96];
	long tid, fdn, seen[8];
	int nseen = 0, fd = -1;

	snprintf(path, sizeof(path), "/proc/%ld/task", pid);
	tasks.fd = vl_raw_open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tasks.fd < 0) {
		if (errno != ENOENT && ours(pid))
			*complete = 0;
		return -1; /* gone, or another user's */
	}
	tasks.len = tasks.pos = 0;
	while (fd < 0 && (te = next_dirent(&tasks)) != NULL) {
		int same = 0;

		if (!numeric(te->d_name, &tid))
			continue;
		for (int i = 0; i < nseen && !same; i++)
			same = syscall(SYS_kcmp, (pid_t)seen[i], (pid_t)tid, KCMP_FILES, 0, 0) == 0;
		if (same)
			continue;
		if (nseen < 8)
			seen[nseen++] = tid;
		snprintf(path, sizeof(path), "/proc/%ld/task/%ld/fd", pid, tid);
		fds.fd = vl_raw_open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fds.fd < 0) {
			if (errno != ENOENT && ours(pid))
				*complete = 0;
			continue;
		}
		fds.len = fds.pos = 0;
		while ((fe = next_dirent(&fds)) != NULL) {
			if (!numeric(fe->d_name, &fdn) || !is(fds.fd, fe->d_name, 0, id))
				continue;
			fd = open_checked(fds.fd, fe->d_name, 1, id);
			if (fd >= 0) {
				/* /proc/TID/fd is that thread's table, whoever its leader is */
				found->pid = (int32_t)tid;
				found->fd = (int32_t)fdn;
				break;
			}
		}
		if (fds.len < 0 && ours(pid))
			*complete = 0;
		vl_raw_close(fds.fd);
	}
	vl_raw_close(tasks.fd);
	return fd;
}

/*
 * Look through every fd of every process we may see, ours included.
 * *complete is cleared if a process of our user could not be looked into
 * (it may hold the file): then "not found" proves nothing.
 */
static int scan_fds(const struct vl_ident *id, struct vl_holder *found, int *complete)
{
	struct dirbuf procs;
	struct dirent64 *pe;
	long pid;
	int fd = -1;

	procs.fd = vl_raw_open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procs.fd < 0) {
		*complete = 0;
		return -1;
	}
	procs.len = procs.pos = 0;
	while (fd < 0 && (pe = next_dirent(&procs)) != NULL) {
		if (numeric(pe->d_name, &pid))
			fd = scan_tasks(pid, id, found, complete);
	}
	vl_raw_close(procs.fd);
	return fd;
}

struct maps_arg {
	const struct vl_ident *id;
	int hit;
	uint64_t lo, hi; /* the hull of the hits' address ranges */
};

/* "7f..-7f.. rw-s 00000000 00:01 1047    /memfd:x (deleted)" */
static int on_maps_line(void *a, char *line)
{
	struct maps_arg *ma = a;
	const char *p = skip_words(line, 3); /* address range, permissions, offset */
	uint64_t dev, ino, lo, hi;

	if (parse_dev(&p, &dev) || *p++ != ' ' || parse_u64(&p, 10, &ino))
		return 0;
	if (dev != ma->id->dev || ino != ma->id->ino)
		return 0;
	ma->hit = 1;
	p = line;
	if (parse_u64(&p, 16, &lo) || *p++ != '-' || parse_u64(&p, 16, &hi)) {
		lo = 0; /* cannot happen; if it did, the hull takes in everything */
		hi = UINT64_MAX;
	}
	if (lo < ma->lo)
		ma->lo = lo;
	if (hi > ma->hi)
		ma->hi = hi;
	return 0;
}

struct counted {
	int (*fn)(void *, char *);
	void *arg;
	long lines;
};

static int count_line(void *a, char *line)
{
	struct counted *c = a;

	c->lines++;
	return c->fn(c->arg, line);
}

/*
 * Feed fn the maps of process pid, through the first of its tasks that
 * shows any: all its threads share one address space, but a zombie
 * leader (its main thread exited, others run on) shows none. 0, or the
 * -errno of what could not be read (a task that is gone is passed over).
 */
static int maps_of(long pid, int (*fn)(void *, char *), void *arg)
{
	struct counted c = { fn, arg, 0 };
	struct dirbuf tasks;
	struct dirent64 *te;
	char path[96];
	long tid;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%ld/task", pid);
	tasks.fd = vl_raw_open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tasks.fd < 0)
		return -errno;
	tasks.len = tasks.pos = 0;
	while (c.lines == 0 && (te = next_dirent(&tasks)) != NULL) {
		if (!numeric(te->d_name, &tid))
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/task/%ld/maps", pid, tid);
		err = vl_each_line(path, count_line, &c);
		if (err == -ENOENT || err == -ESRCH)
			err = 0;
		if (err != 0)
			break;
	}
	vl_raw_close(tasks.fd);
	return err;
}

/*
 * Does any process we may see map the file? (maps show no birth time, so a
 * file with the same device and inode counts: the cautious answer.) A
 * process of ours whose maps cannot be read clears *complete.
 */
static int mapped_anywhere(const struct vl_ident *id, int *complete)
{
	struct maps_arg ma = { id, 0, UINT64_MAX, 0 };
	struct dirbuf procs;
	struct dirent64 *pe;
	long pid;

	procs.fd = vl_raw_open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procs.fd < 0) {
		*complete = 0;
		return 1;
	}
	procs.len = procs.pos = 0;
	while (!ma.hit && (pe = next_dirent(&procs)) != NULL) {
		int err;

		if (!numeric(pe->d_name, &pid))
			continue;
		err = maps_of(pid, on_maps_line, &ma);
		if (err != 0 && err != -ENOENT && ours(pid))
			*complete = 0;
	}
	vl_raw_close(procs.fd);
	return ma.hit;
}

int vl_mapped_here(const struct vl_ident *id)
{
	uint64_t lo, hi;

	return vl_mapped_span(id, &lo, &hi);
}

int vl_mapped_span(const struct vl_ident *id, uint64_t *lo, uint64_t *hi)
{
	struct maps_arg ma = { id, 0, UINT64_MAX, 0 };

	if (vl_each_line("/proc/self/maps", on_maps_line, &ma) != 0) {
		*lo = 0;
		*hi = UINT64_MAX;
		return 1;
	}
	*lo = ma.lo;
	*hi = ma.hi;
	return ma.hit;
}

/* ---- regions mapped by our processes ------------------------------------- */

struct region_scan {
	long pid;
	void (*fn)(void *, const struct vl_mapped_region *);
	void *arg;
};

/*
 * "7f..-7f.. rw-s 0564c000 00:1a 1047    /dev/shm/libvolatile.1000 (deleted)":
 * a shared mapping at a region's offset (VL_MAP_OFFSET) is a region.
 */
static int on_region_line(void *a, char *line)
{
	static const char deleted[] = " (deleted)";
	struct region_scan *rs = a;
	struct vl_mapped_region m;
	const char *p = line, *name;
	uint64_t off;
	size_t len;

	memset(&m, 0, sizeof(m));
	if (parse_u64(&p, 16, &m.lo) || *p++ != '-' || parse_u64(&p, 16, &m.hi) || *p++ != ' ')
		return 0;
	if (strlen(p) < 5 || p[3] != 's')
		return 0;
	p = skip_words(p, 1);
	if (parse_u64(&p, 16, &off) || off != VL_MAP_OFFSET || *p++ != ' ' ||
	    parse_dev(&p, &m.dev) || *p++ != ' ' || parse_u64(&p, 10, &m.ino))
		return 0;
	name = skip_words(p, 0);
	len = strlen(name);
	if (len >= sizeof(deleted) - 1 && strcmp(name + len - (sizeof(deleted) - 1), deleted) == 0) {
		m.deleted = 1;
		len -= sizeof(deleted) - 1;
	}
	if (name[0] == '/' && len < sizeof(m.name)) {
		memcpy(m.name, name, len);
		m.name[len] = '\0';
	}
	m.pid = (int32_t)rs->pid;
	rs->fn(rs->arg, &m);
	return 0;
}

int vl_scan_regions(void (*fn)(void *, const struct vl_mapped_region *), void *arg)
{
	struct region_scan rs = { 0, fn, arg };
	struct dirbuf procs;
	struct dirent64 *pe;

	procs.fd = vl_raw_open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procs.fd < 0)
		return -errno;
	procs.len = procs.pos = 0;
	while ((pe = next_dirent(&procs)) != NULL) {
		if (numeric(pe->d_name, &rs.pid) && ours(rs.pid))
			maps_of(rs.pid, on_region_line, &rs);
	}
	vl_raw_close(procs.fd);
	return 0;
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
	fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
	if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
		return fd >= 0 ? fd : -errno;
#endif
	if (strchr(rel, '/') != NULL)
		return -ENOSYS; /* component by component would be needed: not worth it */
	fd = vl_raw_openat(dirfd, rel, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (vl_sys_statx(fd, &st) != 0 || st.id.dev != dev) {
		vl_raw_close(fd);
		return -EXDEV;
	}
	if (flags & O_PATH)
		return fd;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	dirfd = vl_raw_open(self, flags | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	vl_raw_close(fd);
	return dirfd >= 0 ? dirfd : -errno;
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
	struct vl_stat st;
	int fd = -1;
#if defined(SYS_openat2) && defined(RESOLVE_CACHED)
	struct open_how how;

	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
	how.resolve = RESOLVE_CACHED | RESOLVE_NO_MAGICLINKS;
	fd = (int)VL_SYSCALL("open a mount", syscall(SYS_openat2, AT_FDCWD, point, &how,
						     sizeof(how)));
	if (fd < 0 && errno != ENOSYS && errno != EINVAL && errno != EPERM)
		return -errno;
#endif
	if (fd < 0)
		fd = vl_raw_open(point, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
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
	struct dirbuf d;
	struct dirent64 *e;
	size_t base = strlen(w->path);
	int fd = -1;

	d.fd = dirfd;
	d.len = d.pos = 0;
	while (fd < 0 && (e = next_dirent(&d)) != NULL) {
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
			fd = open_checked(dirfd, e->d_name, 0, w->id);
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
	complete = vl_raw_stat("/proc/self/ns/pid", &st) == 0 && st.st_ino == PID_NS_INIT_INO &&
		   readlink("/proc/self", self, sizeof(self)) > 0 && !vl_proc_hides();
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
	fd = scan_fds(&t->id, &out->holder, &complete);
	if (fd >= 0) {
		vl_log("file %u: reached through pid %d fd %d", t->fi, out->holder.pid,
		       out->holder.fd);
		out->via = out->holder;
		return fd;
	}
	if (mapped_anywhere(&t->id, &complete))
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
