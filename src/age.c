/* SPDX-License-Identifier: MIT */
/*
 * age.c - the age clock and the look that keeps ages from the wrap
 * (age.h, DESIGN 10).
 */
#include "age.h"

#include "core/layout.h"
#include "core/index.h"
#include "env.h"
#include "lock.h"
#include "log.h"
#include "region.h"
#include "sys.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TEND_EVERY_MS (3600u * 1000u) /* in the region */

int64_t vl_age_delta_ms;
uint64_t vl_ages_looked_ms; /* this process's last look at the region's tended time */
static int attached;

/* "monotonic SECONDS NANOSECONDS" of /proc/self/timens_offsets, in ms */
static int on_offset_line(void *arg, char *line)
{
	long long s, ns;

	if (strncmp(line, "monotonic ", 10) != 0)
		return 0;
	line += 10;
	s = strtoll(line, &line, 10);
	ns = strtoll(line, NULL, 10);
	*(int64_t *)arg = (int64_t)s * 1000 + ns / 1000000;
	return 1;
}

/* the kernel's PROC_TIME_INIT_INO: the initial time namespace, the host's clock */
#define HOST_TIME_NS_INO 0xEFFFFFFAu

/*
 * /proc/self/timens_offsets shows the offsets of the namespace this
 * process's CHILDREN enter (time_for_children), its own but after an
 * unshare(CLONE_NEWTIME) not yet followed by an exec. 1 if they are ours.
 */
static int offsets_are_ours(void)
{
	struct stat own, kids;

	if (VL_SYSCALL("stat time ns", vl_raw_stat("/proc/self/ns/time", &own)) != 0 ||
	    VL_SYSCALL("stat time ns", vl_raw_stat("/proc/self/ns/time_for_children", &kids)) != 0)
		return 1; /* no time namespaces, or no /proc: the offsets file says */
	return own.st_dev == kids.st_dev && own.st_ino == kids.st_ino;
}

/*
 * This process's own namespace's monotonic offset, in ms. Not the one
 * the file shows: 0 in the host's namespace; another's cannot be read
 * from here, taken as 0 too (the host's clock) and said.
 */
static int64_t own_offset_ms(void)
{
	int64_t off = 0;
	int err;

	if (!offsets_are_ours()) {
		struct stat own;

		if (VL_SYSCALL("stat time ns", vl_raw_stat("/proc/self/ns/time", &own)) != 0 ||
		    own.st_ino != HOST_TIME_NS_INO)
			vl_log("this process's time namespace is not its children's, nor the host's: "
			       "its offset cannot be read; ages taken as the host's clock");
		return 0;
	}
	err = vl_each_line("/proc/self/timens_offsets", on_offset_line, &off);
	/* ENOENT with a readable /proc: a kernel without time namespaces, the host's clock */
	if (err < 0 && err != -ENOENT)
		vl_log("time namespace offsets unreadable (%s): ages taken as the host's clock",
		       strerror(-err));
	return off;
}

void vl_age_attach(void)
{
	int64_t shift = vl_test_seconds("VOLATILE_FAULT_AGE_SHIFT", 0);

	if (__atomic_load_n(&attached, __ATOMIC_ACQUIRE))
		return;
	/* racing threads store the same values */
	__atomic_store_n(&vl_age_delta_ms, shift * 1000 - own_offset_ms(), __ATOMIC_RELAXED);
	__atomic_store_n(&attached, 1, __ATOMIC_RELEASE);
}

/* Restamp file fi's ranges near the wrap, if its lock is free at once. */
static void tend_file(const struct vl_region *r, uint32_t fi, uint32_t now)
{
	uint32_t n;

	if (vl_trylock_file(r, fi) != 0)
		return;
	n = vl_ix_restamp(r, fi, now);
	vl_unlock_file(r, fi);
	if (n != 0)
		vl_log("file %u: %u ranges older than 40 days restamped at 40 days", fi, n);
}

void vl_ages_tend_now(const struct vl_region *r, uint64_t now_ms)
{
	uint64_t host = vl_age_ms(now_ms);
	uint32_t now = (uint32_t)host, hwm;

	if (!vl_due(&r->hdr->c.ages_tended, TEND_EVERY_MS, host))
		return;
	hwm = vl_file_hwm(r);
	for (uint32_t fi = 1; fi < hwm; fi++) {
		const struct vl_file *f = vl_file_at(r, fi);
		uint32_t a = __atomic_load_n(&f->h.oldest, __ATOMIC_RELAXED);

		if (a != 0 && __atomic_load_n(&f->h.state, __ATOMIC_RELAXED) == VL_FILE_LIVE &&
		    vl_age_back(a, now) > VL_AGE_RESTAMP_MS)
			tend_file(r, fi, now);
	}
}
