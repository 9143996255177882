/*
 * reach.c - reaching a file from a process that may not hold it.
 *
 * Nothing here allocates: directories are read with getdents64 into a
 * stack buffer, /proc files with read(2).
 */
#include "reach.h"

#include "log.h"
#include "sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
	t->id = f->h.ident;
	memcpy(t->holders, f->h.holders, sizeof(t->holders));
	t->path_len = f->h.path_len < VL_PATH_MAX ? f->h.path_len : 0;
	memcpy(t->path, f->path, t->path_len);
	t->path[t->path_len < VL_PATH_MAX ? t->path_len : VL_PATH_MAX - 1] = '\0';
}

/* ---- this process's POSIX locks ------------------------------------- */

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

/* "MAJ:MIN", both hexadecimal, as /proc prints a device */
static int parse_dev(const char **p, uint64_t *dev)
{
	uint64_t maj, min;

	if (parse_u64(p, 16, &maj) || *(*p)++ != ':' || parse_u64(p, 16, &min))
		return -1;
	*dev = makedev((unsigned)maj, (unsigned)min);
	return 0;
}

/* "1: POSIX  ADVISORY  WRITE 1234 00:2e:1047 0 EOF" */
static void note_lock_line(struct vl_reach_ctx *ctx, const char *line, pid_t self)
{
	uint64_t pid, dev, ino;
	const char *p = strchr(line, ':');

	if (p == NULL || strstr(line, "->") != NULL)
		return; /* waiters hold nothing */
	p = skip_words(p + 1, 0);
	if (strncmp(p, "POSIX ", 6) != 0)
		return;
	p = skip_words(p, 3); /* POSIX, ADVISORY|MANDATORY, READ|WRITE */
	if (parse_u64(&p, 10, &pid) || (pid_t)pid != self || *p++ != ' ' ||
	    parse_dev(&p, &dev) || *p++ != ':' || parse_u64(&p, 10, &ino))
		return;
	if (ctx->nlocks == (int)(sizeof(ctx->locked) / sizeof(ctx->locked[0]))) {
		ctx->locks_overflow = 1;
		return;
	}
	ctx->locked[ctx->nlocks].dev = dev;
	ctx->locked[ctx->nlocks].ino = ino;
	ctx->nlocks++;
}

/* Call fn on each line of a /proc file; lines longer than the buffer are cut. */
static int each_line(const char *path, void (*fn)(void *, const char *), void *arg)
{
	char buf[4096];
	size_t have = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *line, *nl;

		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		for (line = buf; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
			*nl = '\0';
			fn(arg, line);
		}
		have = (size_t)(buf + have - line);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1) { /* one overlong line: drop it */
			have = 0;
		}
	}
	close(fd);
	return 0;
}

struct locks_arg {
	struct vl_reach_ctx *ctx;
	pid_t self;
};

static void on_lock_line(void *a, const char *line)
{
	struct locks_arg *la = a;

	note_lock_line(la->ctx, line, la->self);
}

static int self_locks(struct vl_reach_ctx *ctx, const struct vl_ident *id)
{
	if (!ctx->locks_read) {
		struct locks_arg la = { ctx, vl_self() };

		ctx->locks_read = 1;
		if (each_line("/proc/locks", on_lock_line, &la) != 0)
			ctx->locks_overflow = 1; /* cannot tell: assume the worst */
	}
	if (ctx->locks_overflow)
		return 1;
	for (int i = 0; i < ctx->nlocks; i++)
		if (ctx->locked[i].dev == id->dev && ctx->locked[i].ino == id->ino)
			return 1;
	return 0;
}

/* ---- routes ------------------------------------------------------------ */

static int verify(int fd, const struct vl_ident *id)
{
	struct vl_stat st;

	if (vl_sys_fstat(fd, &st) != 0 || !S_ISREG(st.mode) || !vl_same_file(&st.id, id))
		return 0;
	return 1;
}

#define OPEN_FLAGS (O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW)

/* Open path (at dirfd) only if it already looks like the file, then check again. */
static int open_checked(int dirfd, const char *path, int follow, const struct vl_ident *id)
{
	struct vl_stat st;
	int fd;

	if (vl_sys_stat_at(dirfd, path, follow, &st) != 0 || !vl_same_file(&st.id, id))
		return -1;
	fd = openat(dirfd, path, follow ? OPEN_FLAGS & ~O_NOFOLLOW : OPEN_FLAGS);
	if (fd < 0)
		return -1;
	if (!verify(fd, id)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int via_holder(const struct vl_holder *h, const struct vl_ident *id)
{
	char path[64];

	if (h->pid <= 0 || h->fd < 0)
		return -1;
	if (h->pid == vl_self()) {
		/* our own fd: duplicate it, so a concurrent close cannot swap the file */
		int fd = fcntl(h->fd, F_DUPFD_CLOEXEC, 0);

		if (fd >= 0 && !verify(fd, id)) {
			close(fd);
			fd = -1;
		}
		return fd;
	}
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", h->pid, h->fd);
	return open_checked(AT_FDCWD, path, 1, id);
}

struct dirbuf {
	int fd;
	long len, pos;
	char buf[4096] __attribute__((aligned(__alignof__(struct dirent64))));
};

/* Next entry name of a directory, or NULL. */
static const char *next_entry(struct dirbuf *d)
{
	for (;;) {
		if (d->pos >= d->len) {
			d->len = syscall(SYS_getdents64, d->fd, d->buf, sizeof(d->buf));
			d->pos = 0;
			if (d->len <= 0)
				return NULL;
		}
		struct dirent64 *e = (struct dirent64 *)(d->buf + d->pos);

		d->pos += e->d_reclen;
		if (e->d_name[0] != '.')
			return e->d_name;
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

/* Look through every fd of every process we may see. */
static int scan_fds(const struct vl_ident *id, struct vl_holder *found)
{
	struct dirbuf procs, fds;
	const char *name, *fdname;
	char path[64];
	long pid, fdn;
	int fd = -1;

	procs.fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procs.fd < 0)
		return -1;
	procs.len = procs.pos = 0;
	while (fd < 0 && (name = next_entry(&procs)) != NULL) {
		if (!numeric(name, &pid) || pid == vl_self())
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/fd", pid);
		fds.fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fds.fd < 0)
			continue; /* another user's, or gone */
		fds.len = fds.pos = 0;
		while ((fdname = next_entry(&fds)) != NULL) {
			struct vl_stat st;

			if (!numeric(fdname, &fdn) || vl_sys_stat_at(fds.fd, fdname, 1, &st) != 0 ||
			    !vl_same_file(&st.id, id))
				continue;
			fd = open_checked(fds.fd, fdname, 1, id);
			if (fd >= 0) {
				found->pid = (int32_t)pid;
				found->fd = (int32_t)fdn;
				break;
			}
		}
		close(fds.fd);
	}
	close(procs.fd);
	return fd;
}

struct maps_arg {
	const struct vl_ident *id;
	int hit;
};

/* "7f..-7f.. rw-s 00000000 00:01 1047    /memfd:x (deleted)" */
static void on_maps_line(void *a, const char *line)
{
	struct maps_arg *ma = a;
	const char *p = skip_words(line, 3); /* address range, permissions, offset */
	uint64_t dev, ino;

	if (parse_dev(&p, &dev) || *p++ != ' ' || parse_u64(&p, 10, &ino))
		return;
	if (dev == ma->id->dev && ino == ma->id->ino)
		ma->hit = 1;
}

/* Does any process we may see map the file? (maps show no birth time) */
static int mapped_anywhere(const struct vl_ident *id)
{
	struct maps_arg ma = { id, 0 };
	struct dirbuf procs;
	const char *name;
	char path[64];
	long pid;

	procs.fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procs.fd < 0)
		return 1; /* cannot tell: assume it is */
	procs.len = procs.pos = 0;
	while (!ma.hit && (name = next_entry(&procs)) != NULL) {
		if (!numeric(name, &pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
		each_line(path, on_maps_line, &ma);
	}
	close(procs.fd);
	return ma.hit;
}

int vl_reach(const struct vl_target *t, struct vl_reach_ctx *ctx, struct vl_holder *found)
{
	int fd;

	found->pid = 0;
	found->fd = -1;
	if (self_locks(ctx, &t->id)) {
		vl_log("file %u: this process holds POSIX locks on it; not opening it", t->fi);
		return -EDEADLK;
	}
	for (int i = 0; i < VL_HOLDERS; i++) {
		fd = via_holder(&t->holders[i], &t->id);
		if (fd >= 0)
			return fd;
	}
	if (t->path_len > 0 && t->path[0] == '/') {
		fd = open_checked(AT_FDCWD, t->path, 0, &t->id);
		if (fd >= 0)
			return fd;
	}
	fd = scan_fds(&t->id, found);
	if (fd >= 0) {
		vl_log("file %u: reached through pid %d fd %d", t->fi, found->pid, found->fd);
		return fd;
	}
	if (mapped_anywhere(&t->id))
		return -ESRCH;
	return -ENOENT;
}
