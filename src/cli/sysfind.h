/* SPDX-License-Identifier: MIT */
/*
 * sysfind.h - the users the machine's daemon serves (DESIGN 22): every uid
 * with a region in one of its default places (DESIGN 9), found by root
 * without trusting anything a user can name.
 */
#ifndef VL_CLI_SYSFIND_H
#define VL_CLI_SYSFIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* At most this many users are served (the lowest uids); the rest are refused */
#define VL_SYS_USERS_MAX 4096

/* the overflow group, Debian's "nogroup": a worker's group when the file's is root's */
#define VL_SYS_NOGROUP 65534

struct vl_sys_user {
	uint32_t uid;
	gid_t gid;     /* the region file's st_gid; VL_SYS_NOGROUP for root's group
			  (what root's `chown UID FILE` leaves: never a user's) */
	char path[64]; /* where it was found (the worker opens its own default) */
};

/*
 * The users with a region in a default place: /run/user/N/libvolatile,
 * /run/libvolatile.0 (uid 0), /dev/shm/libvolatile.N, N a uid in decimal
 * with no leading zero. A name counts only if, seen without following a
 * symlink (and never opened), it is a regular file of uid N, mode exactly
 * 0600, one link, not a mount point; under /run/user/N only if that
 * directory is N's, not a symlink, writable by nobody else, on a tmpfs.
 * Nothing else is looked at: names are read from each directory and only
 * those of that form are stat'ed.
 *
 * Into out, sorted by uid, at most max (the lowest uids), the first place
 * in the order above for a uid found in several. only (nonly > 0): those
 * uids alone, nothing else looked at or refused. refused (may be NULL):
 * called for each name of that form that does not count, with the reason
 * (at most 64 times a call, then once more for the number left unsaid).
 * Returns the number of users found. One call at a time in a process (its
 * sort's comparator reads the call's roots from a static).
 */
int vl_sys_find(struct vl_sys_user *out, int max, const uint32_t *only, int nonly,
		void (*refused)(const char *path, const char *why, void *ctx), void *ctx);

/*
 * A uid as a name spells it (len bytes at s): decimal, no sign, no leading
 * zero, below 4294967295 ((uid_t)-1 is no uid). NULL if it is one, in
 * *uid; else why not.
 */
const char *vl_sys_uid_of(const char *s, size_t len, uint32_t *uid);

/*
 * `volatile status --system [--uid UID]...` (sysstatus.c), root only: each
 * user found, each name refused and why, a line each. only, nonly: as
 * vl_sys_find's. The command's exit status.
 */
int status_system(const uint32_t *only, int nonly);

#endif
