/* SPDX-License-Identifier: MIT */
/*
 * procs.c - the processes this one may see, through /proc: a holder of a
 * file found in their fd tables (or in one process's, or in a holder's
 * children's), whether any of them maps it, and the regions they map.
 * Nothing here allocates: directories are read with getdents64 into a
 * stack buffer (sys.h, vl_dirbuf), /proc files line by line (vl_each_line)
 * or, a holder's children, in one read(2).
 */
#include "file_route.h"

#include "core/fault.h"
#include "core/parse.h"
#include "log.h"
#include "this_process.h"
#include "sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* ---- parsing /proc ----------------------------------------------------- */

/* hexadecimal, as maps shows addresses, offsets and devices (decimals: vl_parse_decimal) */
static int parse_hex(const char **p, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(*p, &end, 16);
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

	if (parse_hex(p, &maj) || *(*p)++ != ':' || parse_hex(p, &min))
		return -1;
	*dev = makedev((unsigned)maj, (unsigned)min);
	return 0;
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
	if (vl_parse_decimal(&p, &real) == 0 && vl_parse_decimal(&p, &eff) == 0)
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
	struct uid_arg ua = { vl_raw_geteuid(), 0, 0, 0 };
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	vl_each_line(path, on_status_line, &ua);
	return ua.ours && (!ua.dead || ua.threads > 1);
}

#define KCMP_FILES 2

/*
 * The fd tables of process pid's threads: the leader's is /proc/PID/fd,
 * but a thread that unshared its table (unshare(CLONE_FILES), or a clone
 * without CLONE_FILES) has its own, and a zombie leader's is empty while
 * its threads run on. So each task is looked at, and one whose table
 * kcmp says is one looked at already is skipped (without kcmp, none is).
 */
int vl_find_holder_in(long pid, const struct vl_ident *id, struct vl_holder *found, int *complete)
{
	struct vl_dirbuf tasks, fds;
	struct dirent64 *te, *fe;
	char path[96];
	long tid, fdn, seen[8];
	int nseen = 0, fd = -1;

	snprintf(path, sizeof(path), "/proc/%ld/task", pid);
	tasks.fd = VL_SYSCALL("open tasks", vl_raw_open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (tasks.fd < 0) {
		if (tasks.fd != -ENOENT && ours(pid))
			*complete = 0;
		return -1; /* gone, or another user's */
	}
	tasks.len = tasks.pos = 0;
	while (fd < 0 && (te = vl_next_dirent(&tasks)) != NULL) {
		int same = 0;

		if (!numeric(te->d_name, &tid))
			continue;
		for (int i = 0; i < nseen && !same; i++)
			same = vl_raw_kcmp((pid_t)seen[i], (pid_t)tid, KCMP_FILES, 0, 0) == 0;
		if (same)
			continue;
		if (nseen < 8)
			seen[nseen++] = tid;
		snprintf(path, sizeof(path), "/proc/%ld/task/%ld/fd", pid, tid);
		fds.fd = VL_SYSCALL("open task fds",
				    vl_raw_open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
		if (fds.fd < 0) {
			if (fds.fd != -ENOENT && ours(pid))
				*complete = 0;
			continue;
		}
		fds.len = fds.pos = 0;
		while ((fe = vl_next_dirent(&fds)) != NULL) {
			if (!numeric(fe->d_name, &fdn) || !vl_is_at(fds.fd, fe->d_name, 0, id))
				continue;
			fd = vl_open_checked(fds.fd, fe->d_name, 1, id);
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
int vl_find_holder(const struct vl_ident *id, struct vl_holder *found, int *complete)
{
	struct vl_dirbuf procs;
	struct dirent64 *pe;
	long pid;
	int fd = -1;

	procs.fd = VL_SYSCALL("open proc",
			      vl_raw_open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (procs.fd < 0) {
		*complete = 0;
		return -1;
	}
	procs.len = procs.pos = 0;
	while (fd < 0 && (pe = vl_next_dirent(&procs)) != NULL) {
		if (numeric(pe->d_name, &pid))
			fd = vl_find_holder_in(pid, id, found, complete);
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

	if (parse_dev(&p, &dev) || *p++ != ' ' || vl_parse_decimal(&p, &ino))
		return 0;
	if (dev != ma->id->dev || ino != ma->id->ino)
		return 0;
	ma->hit = 1;
	p = line;
	if (parse_hex(&p, &lo) || *p++ != '-' || parse_hex(&p, &hi)) {
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
	struct vl_dirbuf tasks;
	struct dirent64 *te;
	char path[96];
	long tid;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%ld/task", pid);
	tasks.fd = VL_SYSCALL("open tasks", vl_raw_open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (tasks.fd < 0)
		return tasks.fd;
	tasks.len = tasks.pos = 0;
	while (c.lines == 0 && (te = vl_next_dirent(&tasks)) != NULL) {
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
int vl_mapped_anywhere(const struct vl_ident *id, int *complete)
{
	struct maps_arg ma = { id, 0, UINT64_MAX, 0 };
	struct vl_dirbuf procs;
	struct dirent64 *pe;
	long pid;

	procs.fd = VL_SYSCALL("open proc",
			      vl_raw_open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (procs.fd < 0) {
		*complete = 0;
		return 1;
	}
	procs.len = procs.pos = 0;
	while (!ma.hit && (pe = vl_next_dirent(&procs)) != NULL) {
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
	if (parse_hex(&p, &m.lo) || *p++ != '-' || parse_hex(&p, &m.hi) || *p++ != ' ')
		return 0;
	if (strlen(p) < 5 || p[3] != 's')
		return 0;
	p = skip_words(p, 1);
	if (parse_hex(&p, &off) || off != VL_MAP_OFFSET || *p++ != ' ' ||
	    parse_dev(&p, &m.dev) || *p++ != ' ' || vl_parse_decimal(&p, &m.ino))
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
	struct vl_dirbuf procs;
	struct dirent64 *pe;

	procs.fd = VL_SYSCALL("open proc",
			      vl_raw_open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (procs.fd < 0)
		return procs.fd;
	procs.len = procs.pos = 0;
	while ((pe = vl_next_dirent(&procs)) != NULL) {
		if (numeric(pe->d_name, &rs.pid) && ours(rs.pid))
			maps_of(rs.pid, on_region_line, &rs);
	}
	vl_raw_close(procs.fd);
	return 0;
}

/* ---- a holder's children ------------------------------------------------------ */

/*
 * What a purge inside a MARK looks at, at most, for one holder: the
 * children files of its first TASKS tasks, the first CHILDREN children
 * they list. A few hundred system calls at worst, whatever the machine.
 */
#define TASKS 64
#define CHILDREN 64

struct kids {
	const struct vl_holder *h;
	const struct vl_ident *id;
	struct vl_holder *found;
	int fd;    /* the O_PATH fd once found */
	int tried; /* children looked at */
};

/*
 * /proc/PID/task/TID/children: "PID PID ... " with no newline (so not
 * through vl_each_line, which would drop the last one), the children that
 * task made (fork keeps fd numbers: each is looked at at the holder's).
 */
static void try_children(struct kids *k, const char *path)
{
	char buf[CHILDREN * 12], *p = buf, *end;
	int fd = VL_SYSCALL("open children", vl_raw_open(path, O_RDONLY | O_CLOEXEC));
	ssize_t n;

	if (fd < 0)
		return;
	n = VL_SYSCALL("read children", vl_raw_read(fd, buf, sizeof(buf) - 1));
	vl_raw_close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if ((size_t)n == sizeof(buf) - 1 && (end = strrchr(buf, ' ')) != NULL)
		*end = '\0'; /* more than fits: not the number cut in two at the end */
	while (k->fd < 0 && k->tried < CHILDREN) {
		char fdpath[64];
		long child = strtol(p, &end, 10);

		if (end == p || child <= 0)
			break;
		p = end;
		k->tried++;
		snprintf(fdpath, sizeof(fdpath), "/proc/%ld/fd/%d", child, k->h->fd);
		k->fd = vl_open_checked(AT_FDCWD, fdpath, 1, k->id);
		if (k->fd >= 0) {
			k->found->pid = (int32_t)child;
			k->found->fd = k->h->fd;
		}
	}
}

int vl_via_children(const struct vl_holder *h, const struct vl_ident *id, struct vl_holder *found)
{
	struct kids k = { h, id, found, -1, 0 };
	struct vl_dirbuf d;
	struct dirent64 *e;
	char path[64];
	int tasks = 0;

	if (h->pid <= 0 || h->fd < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)h->pid);
	d.fd = VL_SYSCALL("open tasks", vl_raw_open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (d.fd < 0)
		return -1; /* gone, or another user's */
	d.len = d.pos = 0;
	while (k.fd < 0 && k.tried < CHILDREN && tasks < TASKS && (e = vl_next_dirent(&d)) != NULL) {
		long tid;

		if (!numeric(e->d_name, &tid))
			continue;
		tasks++;
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/children", (int)h->pid, tid);
		try_children(&k, path);
	}
	vl_raw_close(d.fd);
	return k.fd;
}
