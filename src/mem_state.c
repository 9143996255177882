/* SPDX-License-Identifier: MIT */
/*
 * mem_state.c - reading /proc/meminfo and the memory cgroup (v1 or v2).
 *
 * "Available" is the smaller of MemAvailable and the headroom of the
 * cgroup: its limit minus its usage plus its inactive file cache (what
 * the kernel reclaims without swap, as MemAvailable counts it), taken at
 * the cgroup and at each ancestor with a limit, since a parent's limit
 * binds its children too. Nothing here allocates; files are read into
 * stack buffers.
 */
#include "mem_state.h"

#include "env.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

/* The start of a file (small /proc and cgroup files), NUL-terminated. */
static int read_text(const char *path, char *buf, size_t size)
{
	int fd = VL_SYSCALL("open pressure file",
			    vl_raw_open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY));
	size_t have = 0;
	ssize_t n;

	if (fd < 0)
		return fd;
	while (have < size - 1 && (n = VL_SYSCALL("read pressure file",
						  vl_raw_read(fd, buf + have, size - 1 - have))) > 0)
		have += (size_t)n;
	vl_raw_close(fd);
	buf[have] = '\0';
	return 0;
}

struct mount_arg {
	struct vl_cgroup *cg;
	const char *path;
};

static int on_mount(void *a, char *line)
{
	struct mount_arg *ma = a;
	char root[PATH_MAX];

	if (!vl_mountinfo_line(line, ma->cg->version, ma->cg->mnt, sizeof(ma->cg->mnt), root,
			       sizeof(root)))
		return 0;
	return vl_cgroup_dir_of(ma->cg->mnt, root, ma->path, ma->cg->dir, sizeof(ma->cg->dir)) == 0;
}

int vl_own_cgroup(struct vl_cgroup *cg)
{
	char text[4096], path[PATH_MAX], v1[PATH_MAX] = "", v2[PATH_MAX] = "", *at;
	struct mount_arg ma = { cg, NULL };
	int err = read_text("/proc/self/cgroup", text, sizeof(text));

	memset(cg, 0, sizeof(*cg));
	if (err)
		return err;
	/* strtok_r: strtok's position is the host's, which a call here would lose */
	for (char *line = strtok_r(text, "\n", &at); line != NULL;
	     line = strtok_r(NULL, "\n", &at)) {
		int v = vl_cgroup_line(line, path, sizeof(path));

		if (v == 1)
			strcpy(v1, path);
		else if (v == 2)
			strcpy(v2, path);
	}
	/* on a hybrid system memory is accounted in v1 if v1 has it */
	cg->version = v1[0] ? 1 : v2[0] ? 2 : 0;
	if (cg->version == 0)
		return -ENOENT;
	ma.path = cg->version == 1 ? v1 : v2;
	if (vl_each_line("/proc/self/mountinfo", on_mount, &ma) != 1) {
		memset(cg, 0, sizeof(*cg));
		return -ENOENT;
	}
	/* a v2 hierarchy without the memory controller here accounts nothing */
	if (cg->version == 2) {
		char f[PATH_MAX + 32];

		snprintf(f, sizeof(f), "%s/memory.current", cg->dir);
		if (VL_SYSCALL("access cgroup file",
			       vl_raw_access(f, R_OK)) != 0 && strcmp(cg->dir, cg->mnt) != 0) {
			memset(cg, 0, sizeof(*cg));
			return -ENOENT;
		}
	}
	return 0;
}

int vl_cgroup_at(const char *dir, struct vl_cgroup *cg)
{
	char f[PATH_MAX + 32], copy[PATH_MAX];
	int n;

	/* dir may lie inside *cg: copy it before clearing */
	n = snprintf(copy, sizeof(copy), "%s", dir);
	if (n < 0 || (size_t)n >= sizeof(copy))
		return -ENAMETOOLONG;
	memset(cg, 0, sizeof(*cg));
	strcpy(cg->dir, copy);
	dir = cg->dir;
	snprintf(f, sizeof(f), "%s/memory.limit_in_bytes", dir);
	if (VL_SYSCALL("access cgroup file", vl_raw_access(f, R_OK)) == 0) {
		cg->version = 1;
	} else {
		snprintf(f, sizeof(f), "%s/memory.current", dir);
		if (VL_SYSCALL("access cgroup file", vl_raw_access(f, R_OK)) != 0)
			return -ENOENT;
		cg->version = 2;
	}
	/* walk up no further than the directory given */
	strcpy(cg->mnt, cg->dir);
	return 0;
}

static int value_at(const char *dir, const char *name, uint64_t *v)
{
	char path[PATH_MAX + 64], text[64];
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	err = read_text(path, text, sizeof(text));
	return err ? err : vl_parse_cgroup_value(text, v);
}

static uint64_t reclaimable_at(const char *dir, int version)
{
	char path[PATH_MAX + 64], text[8192];
	uint64_t v = 0;

	snprintf(path, sizeof(path), "%s/memory.stat", dir);
	if (read_text(path, text, sizeof(text)) != 0)
		return 0;
	/* v1's total_ keys count the whole subtree, as its usage does */
	if (vl_parse_stat_key(text, version == 1 ? "total_inactive_file" : "inactive_file", &v) != 0)
		vl_parse_stat_key(text, "inactive_file", &v);
	return v;
}

/* Limit and headroom of one cgroup directory. */
static void one_level(const char *dir, int version, uint64_t *limit, uint64_t *headroom)
{
	uint64_t max = VL_UNLIMITED, high = VL_UNLIMITED, usage = 0;

	*limit = *headroom = VL_UNLIMITED;
	if (version == 1) {
		if (value_at(dir, "memory.limit_in_bytes", &max) != 0 ||
		    value_at(dir, "memory.usage_in_bytes", &usage) != 0)
			return;
	} else {
		if (value_at(dir, "memory.current", &usage) != 0)
			return; /* the root of a v2 hierarchy: no limit there */
		value_at(dir, "memory.max", &max);
		value_at(dir, "memory.high", &high); /* where the kernel starts to throttle */
		if (high < max)
			max = high;
	}
	if (max == VL_UNLIMITED)
		return;
	*limit = max;
	*headroom = vl_cgroup_headroom(max, usage, reclaimable_at(dir, version));
}

int vl_memstate_read(const struct vl_cgroup *cg, struct vl_memstate *ms)
{
	char text[4096];
	struct vl_meminfo mi;
	int err;

	memset(ms, 0, sizeof(*ms));
	err = read_text("/proc/meminfo", text, sizeof(text));
	if (err)
		return err;
	if (vl_parse_meminfo(text, &mi) != 0)
		return -EINVAL;
	ms->mem_total = mi.total;
	ms->mem_available = mi.available;
	ms->cg_limit = ms->cg_headroom = VL_UNLIMITED;

	if (cg != NULL && cg->version != 0) {
		char dir[PATH_MAX];
		size_t mlen = strlen(cg->mnt);

		strcpy(dir, cg->dir);
		/* from the cgroup up to the top of its hierarchy (at most 64 levels) */
		for (int level = 0; level < 64; level++) {
			uint64_t limit, headroom;
			char *slash;

			one_level(dir, cg->version, &limit, &headroom);
			if (limit < ms->cg_limit)
				ms->cg_limit = limit;
			if (headroom < ms->cg_headroom)
				ms->cg_headroom = headroom;
			if (strlen(dir) <= mlen || (slash = strrchr(dir, '/')) == NULL ||
			    (size_t)(slash - dir) < mlen)
				break;
			*slash = '\0';
		}
	}
	ms->available = ms->mem_available;
	if (ms->cg_headroom < ms->available) {
		ms->available = ms->cg_headroom;
		ms->by_cgroup = 1;
	}
	ms->total = ms->cg_limit < ms->mem_total ? ms->cg_limit : ms->mem_total;
	return 0;
}

int vl_tmpfs_space(int fd, uint64_t *free_bytes, uint64_t *size_bytes)
{
	struct statfs sf;
	int err = VL_SYSCALL("fstatfs tmpfs space", vl_raw_fstatfs(fd, &sf));

	if (err != 0)
		return err;
	if (sf.f_type != TMPFS_MAGIC || sf.f_blocks == 0)
		return -ENOENT; /* memfds live on a tmpfs without a size */
	*free_bytes = (uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize;
	*size_bytes = (uint64_t)sf.f_blocks * (uint64_t)sf.f_bsize;
	return 0;
}
