/* SPDX-License-Identifier: MIT */
/*
 * daemons.c - which daemons serve the region (DESIGN 8): what a daemon
 * writes of itself, what `volatile status` reads of it, and how `volatile
 * daemon --stop` stops one.
 *
 * A daemon holds an flock on its file, REGION.daemon, for as long as it
 * runs; the file says "PID\nSINCE\n" (SINCE: seconds since 1970), and its
 * modification time is the daemon's last wake-up (a futimens each wake:
 * one system call, seen whole by any reader). The pid in the file is
 * never taken on trust: /proc's fdinfo of one of the process's
 * descriptors must show the flock held through it on that very file
 * (device and inode). A dead pid, or one reused by another
 * process, fails that, and nothing is listed. No lock is taken to look:
 * a look that took one, even for a moment, could make a daemon starting
 * then exit as a second one. The machine's daemon (DESIGN 22) is listed
 * too, for a region at its default place.
 */
#include "cli.h"

#include "default_place.h"
#include "sys.h"
#include "system.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void daemon_file(char *buf, size_t size)
{
	snprintf(buf, size, "%s.daemon", region_path());
}

void daemon_register(int fd)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "%ld\n%lld\n", (long)getpid(), (long long)time(NULL));

	if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)n, 0) != n) {
		/* the lock is what matters; the rest is for status, which then lists none */
	}
}

void daemon_woke(int fd)
{
	if (futimens(fd, NULL) != 0) {
		/* status shows an older wake-up */
	}
}

struct lock_look {
	const struct stat *file;
	int held;
};

/*
 * A "lock:" line of fdinfo: "lock:\t1: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INO
 * 0 EOF", device numbers in hex. An flock held for writing (not one waited
 * for: "->") on the file itself.
 */
static int on_fdinfo_line(void *arg, char *line)
{
	struct lock_look *look = arg;
	unsigned int maj, min;
	unsigned long ino;
	char *at;

	if (strncmp(line, "lock:", 5) != 0 || strstr(line, "->") != NULL ||
	    strstr(line, " FLOCK ") == NULL || (at = strstr(line, " WRITE ")) == NULL)
		return 0;
	at += strlen(" WRITE ");
	if (sscanf(at, "%*d %x:%x:%lu", &maj, &min, &ino) != 3)
		return 0;
	if (maj == major(look->file->st_dev) && min == minor(look->file->st_dev) &&
	    ino == (unsigned long)look->file->st_ino) {
		look->held = 1;
		return 1;
	}
	return 0;
}

/*
 * Does pid hold, through one of its descriptors, the flock on the file
 * (dev, ino)? Read from fdinfo alone, which names the locked file: the
 * descriptors themselves are never followed, since one may be a file on a
 * file system that stops answering, and a stat of it would never return.
 */
static int holds_lock_on(pid_t pid, const struct stat *file)
{
	char dir[64], info[sizeof(dir) + 1 + NAME_MAX + 1];
	struct dirent *e;
	DIR *d;
	struct lock_look look = { file, 0 };

	snprintf(dir, sizeof(dir), "/proc/%d/fdinfo", (int)pid);
	d = opendir(dir);
	if (d == NULL)
		return 0;
	while (!look.held && (e = readdir(d)) != NULL) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(info, sizeof(info), "%s/%s", dir, e->d_name);
		vl_each_line(info, on_fdinfo_line, &look);
	}
	closedir(d);
	return look.held;
}

/*
 * Does /proc/locks show pid holding an flock for writing on file? The
 * machine's daemon is root's: another user may not read its fdinfo, but
 * every user may read the table of locks, whose lines are fdinfo's "lock:"
 * lines without that word (pids as the reader's pid namespace has them).
 */
static int locks_show(pid_t pid, const struct stat *file)
{
	struct lock_look look = { file, 0 };
	char prefix[32];
	int n = snprintf(prefix, sizeof(prefix), " WRITE %d ", (int)pid);
	FILE *f = fopen("/proc/locks", "re");
	char line[256], as_fdinfo[sizeof(line) + 8];

	if (f == NULL)
		return 0;
	while (!look.held && fgets(line, sizeof(line), f) != NULL) {
		if (strstr(line, prefix) == NULL || n <= 0)
			continue;
		snprintf(as_fdinfo, sizeof(as_fdinfo), "lock:\t%s", line);
		on_fdinfo_line(&look, as_fdinfo);
	}
	fclose(f);
	return look.held;
}

/* The user's daemon's file: a private file of this user (a file another user put there names none). */
static int users_file(const struct stat *st)
{
	char why[160];

	return not_private_file(st, why, sizeof(why)) == NULL;
}

/* The machine's (DESIGN 22): root's, in root's /run, readable by all, written by root alone. */
static int machines_file(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == 0 && (st->st_mode & (S_IWGRP | S_IWOTH)) == 0 &&
	       st->st_nlink == 1;
}

struct daemon_kind {
	const char *name;
	int (*file_ok)(const struct stat *st);
	int (*holds)(pid_t pid, const struct stat *file); /* the pid holds the file's flock */
};

static const struct daemon_kind user_kind = { "user", users_file, holds_lock_on };
static const struct daemon_kind machine_kind = { "machine", machines_file, locks_show };

/* The daemon of kind k whose file is at path, checked, in *d: 0, or -1 (none runs). */
static int daemon_at(const struct daemon_kind *k, const char *path, struct daemon_seen *d)
{
	char text[64], *end;
	struct stat st;
	ssize_t n = -1;
	long pid;
	int fd;

	memset(d, 0, sizeof(*d));
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && k->file_ok(&st))
		n = pread(fd, text, sizeof(text) - 1, 0);
	close(fd);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	pid = strtol(text, &end, 10);
	if (end == text || *end != '\n' || pid <= 0 || pid > INT_MAX || !k->holds((pid_t)pid, &st))
		return -1;
	snprintf(d->kind, sizeof(d->kind), "%s", k->name);
	snprintf(d->file, sizeof(d->file), "%s", path);
	d->pid = (pid_t)pid;
	d->since = strtoll(end + 1, NULL, 10);
	d->woke = st.st_mtim;
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	return 0;
}

int daemons_serving(struct daemon_seen *out, int max)
{
	char path[PATH_MAX + 16];
	int n = 0;

	daemon_file(path, sizeof(path));
	if (n < max && daemon_at(&user_kind, path, &out[n]) == 0)
		n++;
	/* the machine's serves the regions at their default places alone (DESIGN 22) */
	if (n < max && vl_is_default_name(region_path()) &&
	    daemon_at(&machine_kind, VL_SYS_DAEMON_FILE, &out[n]) == 0)
		n++;
	return n;
}

/* Is d's daemon still the process holding its file's lock? */
static int still_serving(const struct daemon_seen *d)
{
	struct stat st = { 0 };

	st.st_dev = d->dev;
	st.st_ino = d->ino;
	return holds_lock_on(d->pid, &st);
}

#define STOP_WAIT_MS 10000

/*
 * Signal d's daemon through a pidfd taken before the check (so the check
 * is of the process signalled: no pid reused in between), then wait for
 * it to be gone, STOP_WAIT_MS at most. 0 gone, -ETIMEDOUT, or -errno.
 */
int daemon_stop(const struct daemon_seen *d)
{
	int pidfd = vl_raw_pidfd_open(d->pid, 0), err = 0;
	struct pollfd p;

	if (pidfd == -ESRCH)
		return 0;
	if (pidfd >= 0) {
		if (!still_serving(d)) {
			close(pidfd);
			return 0;
		}
		err = vl_raw_pidfd_send_signal(pidfd, SIGTERM, NULL, 0);
		if (err == -ESRCH)
			err = 0;
		p = (struct pollfd){ pidfd, POLLIN, 0 };
		if (err == 0 && poll(&p, 1, STOP_WAIT_MS) == 0)
			err = -ETIMEDOUT;
		close(pidfd);
		return err;
	}
	/* no pidfd (Linux before 5.3): check, signal, look again every 10 ms */
	if (!still_serving(d))
		return 0;
	if (kill(d->pid, SIGTERM) != 0)
		return errno == ESRCH ? 0 : -errno;
	for (int ms = 0; ms < STOP_WAIT_MS; ms += 10) {
		if (!still_serving(d))
			return 0;
		usleep(10000);
	}
	return -ETIMEDOUT;
}
