/* SPDX-License-Identifier: MIT */
/*
 * default_place.c - where the user's region lives by default (see default_place.h).
 *
 * /dev/shm is world-writable: another user who makes the name first (a
 * file, a symlink, a FIFO) denies the feature, and the daemon's lock file
 * next to it is as exposed. So the region goes where only the user can
 * make names: the user's runtime directory, which logind makes 0700 on a
 * tmpfs of its own, and for root /run. $XDG_RUNTIME_DIR is not read: it
 * is /run/user/UID wherever logind sets it, and a process whose
 * environment lacks it (cron, an ssh command, a service) would choose
 * another place, splitting the user's processes between two regions.
 * For the same reason the choice depends only on what the file system
 * shows, and is made again whenever a process checks that its region is
 * still the one new processes find (attach.c).
 */
#include "default_place.h"

#include "sys.h"

#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* The default names, by EUID (vl_region_default chooses; vl_is_default_name knows them all) */
#define RUNTIME_DIR "/run/user/%u"
#define IN_RUNTIME_DIR RUNTIME_DIR "/libvolatile"
#define IN_ROOTS_RUN "/run/libvolatile.0"
#define IN_DEV_SHM "/dev/shm/libvolatile.%u"

/*
 * Why dir is no private place for the region (NULL: it is one): it must
 * be a directory, not a symlink, of this user, that nobody else may write
 * in, on a tmpfs (a region on disk would be written back to it).
 */
static const char *not_private(const char *dir)
{
	struct stat st;
	struct statfs sf;

	if (VL_SYSCALL("lstat region dir", vl_raw_lstat(dir, &st)) != 0)
		return "missing";
	if (!S_ISDIR(st.st_mode))
		return "not a directory";
	if (st.st_uid != vl_raw_geteuid())
		return "not this user's";
	if (st.st_mode & 022)
		return "writable by others";
	if (VL_SYSCALL("statfs region dir", vl_raw_statfs(dir, &sf)) != 0 ||
	    sf.f_type != TMPFS_MAGIC)
		return "not a tmpfs";
	return NULL;
}

void vl_region_default(char *buf, size_t size, char *why, size_t wsize)
{
	unsigned euid = (unsigned)vl_raw_geteuid();
	char dir[64];
	const char *no = NULL, *no_run = NULL;

	snprintf(dir, sizeof(dir), RUNTIME_DIR, euid);
	no = not_private(dir);
	if (no == NULL) {
		snprintf(buf, size, IN_RUNTIME_DIR, euid);
		snprintf(why, wsize, "the user's runtime directory");
		return;
	}
	if (euid == 0) {
		no_run = not_private("/run");
		if (no_run == NULL) {
			snprintf(buf, size, IN_ROOTS_RUN);
			snprintf(why, wsize, "root's runtime directory");
			return;
		}
	}
	snprintf(buf, size, IN_DEV_SHM, euid);
	if (no_run != NULL)
		snprintf(why, wsize, "no private place: %s is %s, /run is %s", dir, no, no_run);
	else
		snprintf(why, wsize, "no private place: %s is %s", dir, no);
}

int vl_is_default_name(const char *path)
{
	unsigned euid = (unsigned)vl_raw_geteuid();
	char a[64], b[64];

	snprintf(a, sizeof(a), IN_RUNTIME_DIR, euid);
	snprintf(b, sizeof(b), IN_DEV_SHM, euid);
	return strcmp(path, a) == 0 || strcmp(path, b) == 0 ||
	       (euid == 0 && strcmp(path, IN_ROOTS_RUN) == 0);
}

int vl_default_dirs(char dirs[][64], int max)
{
	unsigned euid = (unsigned)vl_raw_geteuid();
	int n = 0;

	if (n < max)
		snprintf(dirs[n++], 64, RUNTIME_DIR, euid);
	if (n < max)
		snprintf(dirs[n++], 64, "/dev/shm");
	if (euid == 0 && n < max)
		snprintf(dirs[n++], 64, "/run");
	return n;
}

void vl_path_normalize(char *path)
{
	char *out = path, *in = path;

	if (*path != '/')
		return; /* relative: refused as it is */
	while (*in != '\0') {
		while (*in == '/')
			in++;
		if (*in == '\0')
			break;
		if (in[0] == '.' && (in[1] == '/' || in[1] == '\0')) {
			in += 1;
			continue;
		}
		if (in[0] == '.' && in[1] == '.' && (in[2] == '/' || in[2] == '\0')) {
			/* no symlink is followed on the region's path, so ".." is lexical */
			while (out > path && *--out != '/')
				;
			in += 2;
			continue;
		}
		*out++ = '/';
		while (*in != '\0' && *in != '/')
			*out++ = *in++;
	}
	if (out == path)
		*out++ = '/';
	*out = '\0';
}
