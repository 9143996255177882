/* SPDX-License-Identifier: MIT */
/*
 * punch.h - the punch of a purge that reached a file it does not hold:
 * through a writable fd taken from the holder, or reopened from an
 * O_PATH fd on the very inode (reach.c); in a process of the library's
 * host, from a thread of the library's own that has a copy of the fd
 * table.
 */
#ifndef VL_PUNCH_H
#define VL_PUNCH_H

#include "core/layout.h"

struct vl_extent {
	uint64_t start, end;
};

/* The way to a file a reach found: an O_PATH fd, and the holder whose fd it went through. */
struct vl_way {
	int opath;
	struct vl_holder via; /* pid 0: none (a path) */
};

/*
 * Punch the k extents out of the file of identity id through w. Returns
 * how many were punched, or -errno if no writable fd on the file could
 * be had (nothing punched).
 *
 * Closing any fd on a file releases the POSIX locks the closing process
 * holds on it, and a thread of the host may take one at any moment: so
 * in a host process (the default) the fd is had, used and closed by a
 * thread of ours with a copy of the fd table, whose closes are its own
 * (punch.c); the command, which holds no POSIX locks, calls
 * vl_punch_here() once and does it itself.
 */
int vl_punch_way(const struct vl_way *w, const struct vl_ident *id, const struct vl_extent *ext,
		 int k);
void vl_punch_here(void);

/*
 * Punch the k extents out of fd, writable and checked to be the file:
 * how many were punched. No lock, no allocation, no log (it runs in the
 * punching thread too).
 */
int vl_punch_extents(int fd, const struct vl_extent *ext, int k);

/* 0 if this process must not punch through a way now (a seccomp filter: punch.c). */
int vl_punch_ready(void);

#endif
