/* SPDX-License-Identifier: MIT */
/*
 * syscg.c - the memory cgroups the machine's daemon may relieve (DESIGN
 * 22): a bounded walk of the memory hierarchy for the cgroups limited
 * below MemTotal, and a cgroup given by its directory.
 *
 * A cgroup is named as /proc/PID/cgroup names it, the path a worker
 * compares a holder's with (core/sysorder.h vl_sys_cgroup_holds): the
 * mount's root in the hierarchy (mountinfo's fourth field) followed by
 * the directory's path below the mount point. Both are read in root's
 * cgroup namespace, which its workers share (they are its children).
 */
#include "syscg.h"

#include "core/pressure.h"
#include "mem_state.h"
#include "sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct hierarchy {
	int version;
	const char *want;   /* vl_sys_cg_at: the mount containing this directory */
	size_t best;        /* ... the longest such mount point so far */
	char mnt[PATH_MAX];
	char root[PATH_MAX];
};

/* Is dir the directory mnt or below it? */
static size_t under(const char *dir, const char *mnt)
{
	size_t n = strlen(mnt);

	if (strcmp(mnt, "/") == 0)
		return 1;
	if (strncmp(dir, mnt, n) != 0 || (dir[n] != '/' && dir[n] != '\0'))
		return 0;
	return n;
}

static int on_mount(void *arg, char *line)
{
	struct hierarchy *h = arg;
	char mnt[PATH_MAX], root[PATH_MAX];
	size_t n;

	if (!vl_mountinfo_line(line, h->version, mnt, sizeof(mnt), root, sizeof(root)))
		return 0;
	if (h->want == NULL) {
		strcpy(h->mnt, mnt);
		strcpy(h->root, root);
		return 1; /* the first mount of the hierarchy */
	}
	n = under(h->want, mnt);
	if (n > h->best) {
		h->best = n;
		strcpy(h->mnt, mnt);
		strcpy(h->root, root);
	}
	return 0;
}

/* The mount of the hierarchy of h->version (containing h->want if set). 0, or -ENOENT. */
static int find_mount(struct hierarchy *h)
{
	h->best = 0;
	h->mnt[0] = '\0';
	if (vl_each_line("/proc/self/mountinfo", on_mount, h) < 0)
		return -ENOENT;
	return h->mnt[0] != '\0' ? 0 : -ENOENT;
}

/*
 * cg->path from the mount's root and rel, the path below the mount point
 * ("" for the mount itself): 0, or -ENAMETOOLONG, -EINVAL if it is no
 * path an ask may carry (vl_sys_ask_ok says what one is).
 */
static int set_path(struct vl_sys_cg *cg, const char *root, const char *rel)
{
	static struct vl_sys_ask q; /* 4 KiB: not on the walk's stack */
	int n;

	while (*rel == '/')
		rel++;
	n = snprintf(cg->path, sizeof(cg->path), "%s%s%s", strcmp(root, "/") == 0 ? "" : root,
		     *rel != '\0' || strcmp(root, "/") == 0 ? "/" : "", rel);
	if (n < 0 || (size_t)n >= sizeof(cg->path) || n > VL_SYS_CGROUP_MAX)
		return -ENAMETOOLONG;
	cg->len = (uint32_t)n;
	memset(&q, 0, offsetof(struct vl_sys_ask, cgroup));
	q.magic = VL_SYS_MAGIC;
	q.op = VL_SYS_REPORT;
	q.cg_version = (uint32_t)cg->version;
	q.cg_len = cg->len;
	memcpy(q.cgroup, cg->path, cg->len);
	return vl_sys_ask_ok(&q, vl_sys_ask_len(&q)) ? 0 : -EINVAL;
}

/* A cgroup file's value at dirfd (VL_UNLIMITED when absent or unreadable). */
static uint64_t value_at(int dirfd, const char *name)
{
	char text[64];
	uint64_t v = VL_UNLIMITED;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	ssize_t n;

	if (fd < 0)
		return VL_UNLIMITED;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return VL_UNLIMITED;
	text[n] = '\0';
	return vl_parse_cgroup_value(text, &v) == 0 ? v : VL_UNLIMITED;
}

/* The cgroup's own limit (v2: memory.high too: the kernel throttles from there). */
static uint64_t limit_at(int dirfd, int version)
{
	uint64_t max, high;

	if (version == 1)
		return value_at(dirfd, "memory.limit_in_bytes");
	max = value_at(dirfd, "memory.max");
	high = value_at(dirfd, "memory.high");
	return high < max ? high : max;
}

struct walk {
	struct vl_sys_cgs *out;
	const struct hierarchy *h;
	uint64_t mem_total;
	int dirs;
	char rel[PATH_MAX]; /* the directory's path below the mount point */
};

static void keep(struct walk *wk, uint64_t limit)
{
	struct vl_sys_cg *cg;
	int n;

	if (wk->out->n == VL_SYS_CGS_MAX) {
		wk->out->more++;
		return;
	}
	cg = &wk->out->cg[wk->out->n];
	cg->version = wk->h->version;
	cg->limit = limit;
	n = snprintf(cg->dir, sizeof(cg->dir), "%s%s", wk->h->mnt, wk->rel);
	if (n < 0 || (size_t)n >= sizeof(cg->dir) || set_path(cg, wk->h->root, wk->rel) != 0)
		return; /* no name an ask can carry: not relieved on its own */
	wk->out->n++;
}

/* The directories below fd (rel), depth-first, within the walk's bounds. */
static void walk_below(struct walk *wk, int fd, int depth)
{
	struct vl_dirbuf d;
	struct dirent64 *e;
	size_t len = strlen(wk->rel);

	d.fd = fd;
	d.len = d.pos = 0;
	while ((e = vl_next_dirent(&d)) != NULL) {
		int sub;
		uint64_t limit;

		if (e->d_type != DT_DIR)
			continue; /* cgroup file systems say the type: a file or a link is no cgroup */
		if (wk->dirs >= VL_SYS_CG_DIRS_MAX || depth >= VL_SYS_CG_DEPTH_MAX ||
		    len + 1 + strlen(e->d_name) >= sizeof(wk->rel)) {
			wk->out->cut = 1;
			continue;
		}
		sub = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		wk->dirs++;
		snprintf(wk->rel + len, sizeof(wk->rel) - len, "/%s", e->d_name);
		limit = limit_at(sub, wk->h->version);
		if (limit < wk->mem_total)
			keep(wk, limit);
		walk_below(wk, sub, depth + 1);
		wk->rel[len] = '\0';
		close(sub);
	}
}

int vl_sys_cg_find(struct vl_sys_cgs *out, uint64_t mem_total)
{
	static struct hierarchy h;
	static struct walk wk;
	int fd;

	out->n = out->more = out->cut = 0;
	/* on a hybrid system memory is accounted in v1 if v1 has it (DESIGN 6) */
	h.want = NULL;
	h.version = 1;
	if (find_mount(&h) != 0) {
		h.version = 2;
		if (find_mount(&h) != 0)
			return -ENOENT;
	}
	fd = open(h.mnt, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	wk.out = out;
	wk.h = &h;
	wk.mem_total = mem_total;
	wk.dirs = 0;
	wk.rel[0] = '\0';
	walk_below(&wk, fd, 0);
	close(fd);
	return 0;
}

int vl_sys_cg_at(const char *dir, struct vl_sys_cg *cg)
{
	static struct hierarchy h;
	static struct vl_cgroup at;
	char real[PATH_MAX];
	int err, fd;

	memset(cg, 0, sizeof(*cg));
	if (realpath(dir, real) == NULL)
		return -errno;
	err = vl_cgroup_at(real, &at);
	if (err)
		return err;
	h.version = at.version;
	h.want = real;
	if (find_mount(&h) != 0)
		return -EINVAL;
	cg->version = at.version;
	snprintf(cg->dir, sizeof(cg->dir), "%s", real);
	err = set_path(cg, h.root, strcmp(h.mnt, "/") == 0 ? real : real + strlen(h.mnt));
	if (err)
		return err;
	fd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cg->limit = fd >= 0 ? limit_at(fd, cg->version) : VL_UNLIMITED;
	if (fd >= 0)
		close(fd);
	return 0;
}
