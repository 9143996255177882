/* SPDX-License-Identifier: MIT */
/*
 * punch.h - the punch of a purge that reached a file it does not hold:
 * through a writable fd taken from the holder, or reopened from an
 * O_PATH fd on the very inode (file_route.c); in a process of the library's
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
 * What must hold for a punch to be made, asked in the punching thread
 * right before it and kept until its punches are done: attach.c's
 * vl_gate_open (the permit, then "is the region still the one new
 * processes find", DESIGN 16). open returns 1 to punch; close lets go of
 * whatever open took (fds of the punching thread's table, when it has
 * one of its own, else of the process's: the command's).
 */
struct vl_gate {
	int (*open)(struct vl_gate *g);
	void (*close)(struct vl_gate *g);
	const void *r;
	int fd[2];
};

/*
 * Punch the k extents out of the file of identity id through w, if the
 * gate opens. Returns how many were punched, or -errno if no writable fd
 * on the file could be had (-EBADF) or the gate did not open (-ESTALE):
 * nothing punched.
 *
 * Closing any fd on a file releases the POSIX locks the closing process
 * holds on it, and a thread of the host may take one at any moment: so
 * in a host process (the default) the fd is had, used and closed by a
 * thread of ours with a copy of the fd table, whose closes are its own
 * (punch.c); the command, which holds no POSIX locks, calls
 * vl_punch_here() once and does it itself.
 */
int vl_punch_way(const struct vl_way *w, const struct vl_ident *id, const struct vl_extent *ext,
		 int k, struct vl_gate *g);
void vl_punch_here(void);

/*
 * The same through the caller's own fd (a MARK's purge of its own file,
 * a MARK that joins a purged range): checked to be the file in the
 * punching thread, after the gate opened. In a host, that thread needs
 * vl_punch_ready(): where it may not be made, nothing is punched
 * (-EPERM; the ranges stay flagged purged: UNMARK says 1).
 */
int vl_punch_fd(int fd, const struct vl_ident *id, const struct vl_extent *ext, int k,
		struct vl_gate *g);

/*
 * Punch the k extents out of fd, writable and checked to be the file:
 * how many were punched. No lock, no allocation, no log (it runs in the
 * punching thread too).
 */
int vl_punch_extents(int fd, const struct vl_extent *ext, int k);

/* 0 if this process must not punch through a way now (a seccomp filter: punch.c). */
int vl_punch_ready(void);

#endif
