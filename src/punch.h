/* SPDX-License-Identifier: MIT */
/*
 * punch.h - every hole the library punches in a file: a purge's in a file
 * it does not hold (through a writable fd taken from the holder, or
 * reopened from an O_PATH fd on the very inode, reach.c), and one through
 * the fd a caller handed to fallocate (a MARK that joins a purged range, a
 * MARK's purge of its own file). In a process of the library's host, from
 * a thread of the library's own that has a copy of the fd table.
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
 * Punch the k extents out of the file of identity id through fd, a number
 * the host handed to fallocate. Never through that number in the host's
 * table, which another host thread may close or dup2 onto at any instant:
 * through the open file fd names in the punching thread's copy of the
 * table, taken when the thread is made and changed by nobody, checked
 * there to be the file (punch.c). Returns how many were punched; -EBADF
 * if fd did not name the file when the copy was taken; -errno if the
 * thread could not be made. Nothing is punched on a -errno: the caller's
 * flagged ranges stay flagged purged (UNMARK says 1, the safe way). Ask
 * vl_punch_ready() first, as for vl_punch_way.
 */
int vl_punch_fd(int fd, const struct vl_ident *id, const struct vl_extent *ext, int k);

/*
 * 0 if this thread must not make the punching thread now (a seccomp
 * filter: punch.c); then nothing is punched, through a way or a fd.
 */
int vl_punch_ready(void);

#endif
