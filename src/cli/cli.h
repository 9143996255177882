/* SPDX-License-Identifier: MIT */
/*
 * cli.h - the `volatile` command (DESIGN 8).
 *
 * Every subcommand prints --help, and on bad usage or an error prints one
 * line "volatile: ..." on stderr and exits 2; `volatile run` exits 125
 * for its own failures, 126 and 127 for a CMD it cannot execute or find,
 * as env(1) does, so that none clashes with CMD's own statuses (DESIGN 8).
 */
#ifndef VL_CLI_H
#define VL_CLI_H

#include "core/layout.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define EXIT_USAGE 2
#define EXIT_RUN_FAILED 125       /* volatile run's own failure */
#define EXIT_RUN_CANNOT_EXEC 126  /* CMD found, not executable */
#define EXIT_RUN_NOT_FOUND 127    /* CMD not found */

int cmd_run(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_purge(int argc, char **argv);
int cmd_mark(int argc, char **argv);
int cmd_unmark(int argc, char **argv);
int cmd_daemon(int argc, char **argv);

/*
 * `volatile run`'s supervisor (DESIGN 21). In run, before it execs CMD in
 * its place: vl_sv_install (filter.c) puts the seccomp filter on it and
 * returns its listener, or -errno and why, with VOLATILE_RUN_REGION set to
 * region (vl_sv_region_key: the region run serves) for CMD; vl_sv_hand
 * sends the listener over sock. vl_sv_helper (supervise.c), in the
 * supervisor's process, forked before the filter: says it is ready on
 * sock, takes the listener (vl_sv_receive) and serves it until no process
 * uses the filter any more, then exits.
 */
int vl_sv_install(int aliases, const char *region, char *why, size_t size);
void vl_sv_hand(int sock, int listener);
void vl_sv_region_key(char *buf, size_t size);
/* Is arch i386 on an x86-64 machine (the filter's second ABI)? */
int vl_sv_x86_compat(uint32_t arch);
int vl_sv_receive(int sock, char *why, size_t size);
void vl_sv_helper(int sock) __attribute__((noreturn));

/*
 * Where a caller's fd is (place.c, DESIGN 21), learnt without asking its
 * file system: vl_sv_place_init once, before serving; vl_sv_place(nsdir,
 * tid, fd, c), nsdir the thread's /proc/TID/ns kept with its pidfd (or -1:
 * /proc/TID by number, checked by the caller afterwards), c what is kept
 * with them (vl_sv_place_forget when they are closed): TAKE (the memfds'
 * mount, the kernel's internal ones, tmpfs and local file systems: the
 * file may be taken), LEAVE (another file system: the kernel answers),
 * -EBADF (not open), -ESRCH (the thread is gone), or another -errno
 * (cannot tell).
 */
#define VL_PLACE_LEAVE 0
#define VL_PLACE_TAKE 1
struct vl_sv_fdinfo {
	int num, fd; /* the caller's fd number, and our /proc fdinfo file of it (-1: none) */
};
void vl_sv_place_init(void);
int vl_sv_place(int nsdir, pid_t tid, int fd, struct vl_sv_fdinfo *c);
void vl_sv_place_forget(struct vl_sv_fdinfo *c);

/* Print "volatile: <msg>" and exit die_status (2; run sets 125). */
extern int die_status;
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* The same, exiting with status. */
void die_with(int status, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

/* The region's path (VOLATILE_REGION, or the default); dies if it is relative. */
const char *region_path(void);

/* A SIZE/OFFSET/LEN argument (K, M, G, T suffixes), or die naming `what`. */
uint64_t size_arg(const char *what, const char *s);

/*
 * Parse the options of a subcommand: the common --help (prints `help`,
 * exits 0), and those in `longopts` (getopt_long style, shortopts too).
 * Returns like getopt_long; dies on an unknown option.
 */
struct option;
int next_opt(int argc, char **argv, const char *shortopts, const struct option *longopts,
	     const char *help);

/* "s" unless n is 1: "1 range", "2 ranges" */
static inline const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

struct vl_threshold;
/* "10%", "64 MiB"-ish bytes, or "0 (off)" */
const char *threshold_text(const struct vl_threshold *t, char *buf, size_t size);

/*
 * The region named by VOLATILE_REGION (or the default), for a tool:
 * 0 and *r mapped, -ENOENT if it does not exist (and !create), or dies.
 */
int open_region(struct vl_region *r, int create);
/* The same, never made, never dying: 0, or -errno (-ENOENT: none; -EACCES, -EUCLEAN...). */
int try_open_region(struct vl_region *r);

/*
 * Number nth (0: the first) of the line of a /proc status file that begins
 * with key ("Tgid:", "Uid:"), or -1: no such line or number, or the file
 * cannot be read (vl_each_line: no stdio, so a forked child may ask too).
 */
long proc_status_number(const char *path, const char *key, int nth);
/*
 * Thread tid's namespace link NAME ("mnt", "user"), read through nsdir (its
 * /proc/TID/ns, kept open) when >= 0, else by path, NUL-terminated in buf of
 * size bytes: the link's length, or -errno.
 */
int proc_ns_link(int nsdir, pid_t tid, const char *name, char *buf, size_t size);

/*
 * The daemons that serve the region (daemons.c, DESIGN 8). A daemon
 * holds an flock on its file (daemon_file: REGION.daemon), writes its pid
 * and start there (daemon_register), and touches it at each wake-up
 * (daemon_woke). daemons_serving: those running, each checked to hold its
 * file's lock (a dead or reused pid is not listed), at most max.
 * daemon_stop: SIGTERM to one, then wait until it is gone (bounded): 0,
 * or -errno (-ETIMEDOUT: still there).
 */
#include <sys/types.h>
#include <time.h>
#define MAX_DAEMONS 4
struct daemon_seen {
	char kind[16];           /* "user": the user's own; "machine": DESIGN 22 */
	char file[PATH_MAX + 16];
	pid_t pid;
	long long since;         /* s since 1970; 0: not known */
	struct timespec woke;    /* its last wake-up (the file's mtime) */
	dev_t dev;               /* the file's identity */
	ino_t ino;
};
void daemon_file(char *buf, size_t size);
void daemon_register(int fd);
void daemon_woke(int fd);
int daemons_serving(struct daemon_seen *out, int max);
int daemon_stop(const struct daemon_seen *d);

/*
 * The DT_NEEDED names that want() takes, of the program exec runs for cmd
 * (elf.c): cmd's, or those of the interpreter of its #! line, and so on,
 * 4 deep as the kernel goes. In out, ':' between them; empty if none or
 * if a file cannot be read or is not a sound ELF file.
 */
void program_needed(const char *cmd, int (*want)(const char *name), char *out, size_t size);

struct stat;
/* Why st is not a private file of this user (in buf, or a constant); NULL if it is one. */
const char *not_private_file(const struct stat *st, char *buf, size_t size);

#endif
