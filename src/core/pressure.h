/* SPDX-License-Identifier: MIT */
/*
 * pressure.h - what the kernel says about memory, parsed, and what to do
 * about it. Pure: text in, numbers out (the reading is in src/pressure.c),
 * so every parser is unit-tested against fixtures of cgroup v1 and v2.
 */
#ifndef VL_PRESSURE_CORE_H
#define VL_PRESSURE_CORE_H

#include "parse.h"

#include <stddef.h>
#include <stdint.h>

#define VL_UNLIMITED UINT64_MAX

/* /proc/meminfo: MemTotal and MemAvailable, in bytes. 0, or -EINVAL. */
struct vl_meminfo {
	uint64_t total;
	uint64_t available;
};
int vl_parse_meminfo(const char *text, struct vl_meminfo *m);

/*
 * One line of /proc/PID/cgroup ("4:memory:/a/b", "0::/a/b"): if it names
 * the memory controller of cgroup v1, returns 1 and its path; if it is the
 * cgroup v2 line, returns 2 and its path; else 0. (A v1 memory line wins
 * over the v2 one: on a hybrid system memory is accounted in v1.)
 */
int vl_cgroup_line(const char *line, char *path, size_t size);

/*
 * One line of /proc/PID/mountinfo: if it mounts the hierarchy of `version`
 * (1: a "cgroup" file system with the memory option; 2: "cgroup2"),
 * returns 1 and its mount point and the root of the hierarchy it shows.
 */
int vl_mountinfo_line(const char *line, int version, char *mnt, size_t mnt_size, char *root,
		      size_t root_size);

/*
 * The directory of cgroup `path` under a hierarchy mounted at `mnt` that
 * shows the hierarchy from `root`. Returns 0, or -ENOENT if the cgroup is
 * outside what the mount shows, -ENAMETOOLONG.
 */
int vl_cgroup_dir_of(const char *mnt, const char *root, const char *path, char *dir,
		     size_t size);

/*
 * A cgroup value: a number, or "max" (v2), or v1's "no limit" (a number
 * at or above 2^62): VL_UNLIMITED. 0, or -EINVAL.
 */
int vl_parse_cgroup_value(const char *text, uint64_t *v);

/* The value of `key` in a memory.stat file ("inactive_file 123"). 0, -ENOENT. */
int vl_parse_stat_key(const char *text, const char *key, uint64_t *v);

/*
 * What a cgroup has left before its limit: limit - usage, plus what the
 * kernel can reclaim without swap (inactive file cache), never below 0.
 * VL_UNLIMITED if limit is.
 */
uint64_t vl_cgroup_headroom(uint64_t limit, uint64_t usage, uint64_t reclaimable);

/* A threshold in bytes: its size, or its percentage of `whole`. 0: off. */
uint64_t vl_threshold_bytes(const struct vl_threshold *t, uint64_t whole);

/*
 * How many bytes to purge when `have` is below `threshold`: enough to
 * climb above it with some room (a quarter of the threshold, at least
 * min_room), so that the next check does not purge again at once. 0 when
 * have >= threshold or the threshold is off.
 */
uint64_t vl_purge_need(uint64_t have, uint64_t threshold, uint64_t min_room);

/*
 * How long the daemon may sleep before it looks again, in ms: the time
 * `gap` bytes (between what is available, or free, and the threshold)
 * take to go at `rate` bytes a second, within [min_ms, max_ms] (min_ms
 * wins if it is the larger). A gap of 0 (at or below the threshold):
 * min_ms. A rate of 0: max_ms.
 */
unsigned vl_poll_ms(uint64_t gap, uint64_t rate, unsigned min_ms, unsigned max_ms);

/*
 * The rate of fall to plan the next look for, in bytes a second: least,
 * or the rate `have` (available memory) fell from `had` in the dt_ns since
 * the last look if that was faster (dt_ns 0: no last look to compare with).
 * A rate too large for 64 bits: UINT64_MAX.
 */
uint64_t vl_fall_rate(uint64_t had, uint64_t have, uint64_t dt_ns, uint64_t least);

#endif
