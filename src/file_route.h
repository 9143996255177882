/* SPDX-License-Identifier: MIT */
/*
 * file_route.h - get an fd on a file with volatile ranges, from any process.
 *
 * The region records, per file, who marked it (pid, fd) and a path. Any
 * of those may be stale: pids and fds are reused, paths renamed. So every
 * route ends with the same check: the identity (device, inode, birth
 * time) of what was opened must be the identity recorded. Only then may
 * anything be punched through it.
 */
#ifndef VL_FILE_ROUTE_H
#define VL_FILE_ROUTE_H

#include "core/layout.h"

/* What a purger copies out of a file record under the region lock. */
struct vl_target {
	uint32_t fi;
	uint32_t gen;
	uint32_t flags;
	uint32_t path_len;
	uint32_t gone_since;
	uint32_t checked_at;
	struct vl_ident id;
	struct vl_holder holders[VL_HOLDERS];
	char path[VL_PATH_MAX];
};

void vl_target_copy(const struct vl_region *r, uint32_t fi, struct vl_target *t);

/* Per purge pass: how hard to look. */
struct vl_reach_ctx {
	int thorough;  /* may search a tmpfs for a renamed or deleted file (tools) */
	/*
	 * A purge inside a MARK (its budget, its pressure): cheap routes
	 * only, whatever the machine runs (DESIGN 13). The recorded holders,
	 * the recorded path, the holders' children at the holder's fd number,
	 * this process's own fd tables; never every process's.
	 */
	int bounded;
};

/* A new way to the file that a reach found, for the record. */
struct vl_reached {
	struct vl_holder holder; /* pid 0: none new */
	struct vl_holder via;    /* the holder whose fd the way goes through; pid 0: a path */
	uint32_t path_len;       /* 0: none */
	char path[VL_PATH_MAX];
};

/*
 * An O_PATH fd (close it) on the target file, checked to be it, or:
 *   -ESRCH    not reached, and not seen gone: it may be mapped, held
 *             by a process of ours we could not look into, or (unless
 *             thorough) renamed;
 *   -ENOENT   seen gone: no process of ours holds or maps it (all of
 *             them looked into), and it is a memfd, or (thorough) no name
 *             on its file system reaches it. Never when bounded: those
 *             routes prove nothing by not reaching it (-ESRCH). A guess
 *             even so (an fd in flight, in an io_uring, of another user):
 *             what is forgotten on it leaves a tombstone (purge.c point 5).
 * Nothing is opened for reading or writing on the way, and no file system
 * but the file's own is asked for a name (see file_route.c). Processes of
 * other users, and of other PID namespaces, are not seen.
 */
int vl_reach(const struct vl_target *t, struct vl_reach_ctx *ctx, struct vl_reached *out);

/* Does fd refer to the file with this identity? (cached attributes) */
int vl_fd_is(int fd, const struct vl_ident *id);

/*
 * Does this process map the file? (device and inode: the cautious answer;
 * 1 also when /proc/self/maps cannot be read)
 */
int vl_mapped_here(const struct vl_ident *id);

/*
 * The same, and the hull [*lo, *hi) of the address ranges that map it
 * (everything if /proc/self/maps cannot be read).
 */
int vl_mapped_span(const struct vl_ident *id, uint64_t *lo, uint64_t *hi);

/*
 * A directory fd on the root of a mount of the file system dev (whole:
 * of all of it, its root "/"), its mount point in point; the path to it
 * walked only through what the kernel has at hand where it can (file_route.c).
 * -errno: -ENOENT if no such mount is to be seen.
 */
int vl_open_mount(uint64_t dev, int whole, char *point, size_t size);

/* A region mapped by one of our processes (its mapping at VL_MAP_OFFSET). */
struct vl_mapped_region {
	int32_t pid;
	int deleted;          /* its name was removed */
	uint64_t lo, hi;      /* the mapping's addresses */
	uint64_t dev, ino;
	char name[256];       /* "" if it has none we can use */
};

/*
 * Call fn on each region mapping of each process of this user that can
 * be looked into (a non-dumpable process cannot: it is not seen).
 * Returns 0, or -errno if /proc cannot be read.
 */
int vl_scan_regions(void (*fn)(void *, const struct vl_mapped_region *), void *arg);

/*
 * What the routes and the scans of /proc share (file_route.c, procs.c). Is
 * what path names at dirfd (flags: AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH) the
 * file id, by its whole identity? 1 or 0. vl_open_checked: an O_PATH fd on
 * it if so, else -ESTALE (another file) or the open's -errno.
 */
int vl_is_at(int dirfd, const char *path, int flags, const struct vl_ident *id);
int vl_open_checked(int dirfd, const char *path, int follow, const struct vl_ident *id);
/* Every fd table this process may see: an O_PATH fd on id's file, its holder in *found. */
int vl_find_holder(const struct vl_ident *id, struct vl_holder *found, int *complete);
/* The same in the fd tables of one process (its pid as /proc shows it). */
int vl_find_holder_in(long pid, const struct vl_ident *id, struct vl_holder *found, int *complete);
/* Does any process this one may see map id's file? */
int vl_mapped_anywhere(const struct vl_ident *id, int *complete);
/*
 * fd, just opened (-errno if the open failed), if it is on the file
 * system of device dev; else -errno, fd closed.
 */
int vl_fd_on_dev(int fd, uint64_t dev);

/*
 * Through a child of holder h at h's fd number (fork keeps fd numbers): a
 * memfd handed to a forked child whose parent closed its own. An O_PATH fd
 * and the child in *found, or -1. Bounded: the children the first 64
 * tasks of the holder list (/proc/PID/task/TID/children), 64 at most.
 */
int vl_via_children(const struct vl_holder *h, const struct vl_ident *id, struct vl_holder *found);

#endif
