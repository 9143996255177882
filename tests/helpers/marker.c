/* SPDX-License-Identifier: MIT */
/*
 * marker - the two processes of tests/shell/stopped.sh: one that is
 * stopped at random instants while it marks, one that must not notice.
 * A program, not linked with the library: the test runs it with
 * LD_PRELOAD (the fault-injecting library for the loop, so that it can
 * also stop itself at a named step).
 *
 *   marker loop DIR EVERY
 *       A. Marks and unmarks ranges of its own files, round and round,
 *       until SIGTERM: each file 64K of its own letter; every EVERY
 *       iterations a new file (a memfd, or a file DIR/aN on tmpfs, in
 *       turn), whose first MARK makes its record under the region's lock;
 *       the four newest are kept open and used in turn, an older one is
 *       checked and closed (a file in DIR unlinked). Every MARK must
 *       return 0 and every UNMARK 0 (nothing purges: no budget, no
 *       pressure), and a file's bytes must be its letter when it is
 *       closed and at the end (THE INVARIANT). Prints "pid = N" and
 *       "ready", and at the end
 *       "loop iterations=N files=N selfstops=N errors=N"; exit status 1
 *       if anything was wrong (the first few on stderr).
 *       SIGUSR1: stop (SIGSTOP) at the next library step named
 *       $MARKER_STOP_REGION (a step inside the region's lock, which the
 *       next iteration reaches by making a new file); SIGUSR2: at the next
 *       one named $MARKER_STOP_FILE (a step inside a file's lock). The
 *       steps call vl_fault_hook, here, only in the fault-injecting
 *       library.
 *
 *   marker probe FILE
 *       B. Makes FILE (64K of 'B') and its record (a MARK and an UNMARK,
 *       before anything is stopped), prints "ready", then reads commands
 *       on stdin, one a line, and answers each with one line:
 *         op PID       waits until PID is stopped (state T, 3 s at most:
 *                      "op notstopped"), then MARKs and UNMARKs 16K of
 *                      FILE, timed: "op US MARK UNMARK" (the two results,
 *                      0, 1 or an errno name); one not returned in
 *                      $MARKER_STUCK_S seconds (5) prints "op stuck" and
 *                      exits 3
 *         status PID OUT [ARG]   waits as op does, then runs
 *                      $MARKER_VOLATILE status [ARG], its stdout to OUT,
 *                      timed (killed after $MARKER_STUCK_S seconds):
 *                      "status US EXIT" (EXIT "killed" if it was)
 *         check        FILE is still 'B' throughout: "check ok" or
 *                      "check mismatch at OFF"
 *       The attach was paid for by the first MARK: what op times is the
 *       MARK and UNMARK themselves.
 *
 * Exit status: 0; 1 a check failed; 2 a setup step failed; 3 stuck.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "say.h"

/* the two flags, not libvolatile's headers: this program is libc only */
#define MARK_VOLATILE 0x10000000
#define UNMARK_VOLATILE 0x20000000

#define FILE_SIZE 65536
#define KEEP 4     /* files of the loop kept open */
#define REPORT 10  /* errors written out in full */

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* fallocate's result as a word: "0", "1", or the errno's name */
static const char *result(int r)
{
	static char buf[2][32];
	static int k;

	k ^= 1;
	if (r >= 0)
		snprintf(buf[k], sizeof(buf[k]), "%d", r);
	else
		snprintf(buf[k], sizeof(buf[k]), "%s", ename(errno));
	return buf[k];
}

/* Is fd's file c throughout? -1 if so, else the first offset that is not. */
static long first_wrong(int fd, char c)
{
	static char buf[FILE_SIZE];

	if (pread(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		return 0;
	for (long i = 0; i < (long)sizeof(buf); i++)
		if (buf[i] != c)
			return i;
	return -1;
}

/* ---- A: the loop -------------------------------------------------------------- */

static volatile sig_atomic_t done, arm_region, arm_file, selfstops;
static const char *stop_region, *stop_file;

static void on_term(int sig)
{
	(void)sig;
	done = 1;
}

static void on_usr(int sig)
{
	if (sig == SIGUSR1)
		arm_region = 1;
	else
		arm_file = 1;
}

/* called by the fault-injecting library at each of its steps */
void vl_fault_hook(const char *where) __attribute__((visibility("default")));
void vl_fault_hook(const char *where)
{
	if (arm_region && stop_region != NULL && strcmp(where, stop_region) == 0)
		arm_region = 0;
	else if (arm_file && stop_file != NULL && strcmp(where, stop_file) == 0)
		arm_file = 0;
	else
		return;
	selfstops++;
	kill(getpid(), SIGSTOP);
}

struct lfile {
	int fd;
	char c;
	char path[256]; /* "" for a memfd */
};

static unsigned long errors;

static void wrong(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void wrong(const char *fmt, ...)
{
	va_list ap;

	if (errors++ >= REPORT)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int new_file(const char *dir, unsigned long n, struct lfile *f)
{
	char buf[FILE_SIZE];

	f->c = (char)('a' + n % 26);
	f->path[0] = '\0';
	if (n % 2 == 0) {
		char name[32];

		snprintf(name, sizeof(name), "marker-%lu", n);
		f->fd = memfd_create(name, MFD_CLOEXEC);
	} else {
		snprintf(f->path, sizeof(f->path), "%s/a%lu", dir, n);
		f->fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	}
	memset(buf, f->c, sizeof(buf));
	if (f->fd < 0 || pwrite(f->fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		return -1;
	return 0;
}

static void close_file(struct lfile *f)
{
	long at = first_wrong(f->fd, f->c);

	if (at >= 0)
		wrong("file %s: byte %ld is not '%c' (THE INVARIANT)", f->path[0] ? f->path : "(memfd)",
		      at, f->c);
	close(f->fd);
	if (f->path[0])
		unlink(f->path);
}

static int loop(const char *dir, unsigned long every)
{
	struct lfile files[KEEP];
	unsigned long nfiles = 0, it;
	struct sigaction sa;
	int n = 0;

	stop_region = getenv("MARKER_STOP_REGION");
	stop_file = getenv("MARKER_STOP_FILE");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_usr;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	printf("pid = %d\n", (int)getpid());
	for (it = 0; !done; it++) {
		struct lfile *f;
		off_t off;
		off_t len;
		int m, u;

		/* a new file (and record) now and then, and at once when asked to stop in one */
		if (n == 0 || it % every == 0 || arm_region) {
			struct lfile *slot = &files[nfiles % KEEP];

			if (n == KEEP)
				close_file(slot);
			else
				n++;
			if (new_file(dir, nfiles++, slot) != 0)
				die("new file");
		}
		f = &files[it % (unsigned long)n];
		off = (off_t)(it * 7 % 15) * 4096;
		len = (off_t)(1 + it % 4) * 4096;
		m = fallocate(f->fd, MARK_VOLATILE, off, len);
		u = fallocate(f->fd, UNMARK_VOLATILE, off, len);
		if (m != 0)
			wrong("MARK %s at %ld: %c", result(m), (long)off, f->c);
		if (u != 0)
			wrong("UNMARK %s at %ld: %c (an unpurged range says 0)", result(u), (long)off,
			      f->c);
		if (it == 0) {
			printf("ready\n");
			fflush(stdout);
		}
	}
	for (int i = 0; i < n; i++)
		close_file(&files[i]);
	printf("loop iterations=%lu files=%lu selfstops=%d errors=%lu\n", it, nfiles,
	       (int)selfstops, errors);
	return errors ? 1 : 0;
}

/* ---- B: the probe ----------------------------------------------------------------- */

static unsigned stuck_s = 5;

static void on_alarm(int sig)
{
	static const char msg[] = "op stuck\n";

	(void)sig;
	(void)!write(1, msg, sizeof(msg) - 1);
	_exit(3);
}

/* Wait until pid is stopped: 1, or 0 after 3 s. */
static int stopped(int pid)
{
	char path[64], buf[512];

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (int i = 0; i < 15000; i++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t k = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		char *p;

		if (fd >= 0)
			close(fd);
		if (k <= 0)
			return 0;
		buf[k] = '\0';
		p = strrchr(buf, ')');
		if (p != NULL && (p[2] == 'T' || p[2] == 't'))
			return 1;
		usleep(200);
	}
	return 0;
}

static void op(int fd)
{
	uint64_t t0, t1;
	int m, u;

	alarm(stuck_s);
	t0 = now_us();
	m = fallocate(fd, MARK_VOLATILE, 16384, 16384);
	u = fallocate(fd, UNMARK_VOLATILE, 16384, 16384);
	t1 = now_us();
	alarm(0);
	printf("op %llu %s %s\n", (unsigned long long)(t1 - t0), result(m), result(u));
}

static void status(const char *out, const char *arg)
{
	const char *cmd = getenv("MARKER_VOLATILE");
	uint64_t t0 = now_us(), deadline = t0 + (uint64_t)stuck_s * 1000000;
	int st, killed = 0;
	pid_t pid;

	if (cmd == NULL)
		die("MARKER_VOLATILE is not set");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		unsetenv("LD_PRELOAD");
		if (o < 0 || dup2(o, 1) != 1)
			_exit(126);
		execl(cmd, "volatile", "status", arg, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (now_us() > deadline && !killed) {
			kill(pid, SIGKILL);
			killed = 1;
		}
		usleep(500);
	}
	if (killed)
		printf("status %llu killed\n", (unsigned long long)(now_us() - t0));
	else
		printf("status %llu %d\n", (unsigned long long)(now_us() - t0),
		       WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

static int probe(const char *path)
{
	char line[512], buf[FILE_SIZE];
	const char *s = getenv("MARKER_STUCK_S");
	int fd;

	if (s != NULL)
		stuck_s = (unsigned)atoi(s);
	signal(SIGALRM, on_alarm);
	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	memset(buf, 'B', sizeof(buf));
	if (fd < 0 || pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		die("probe file");
	/* the record, made now, while nothing is stopped */
	if (fallocate(fd, MARK_VOLATILE, 16384, 16384) != 0 ||
	    fallocate(fd, UNMARK_VOLATILE, 16384, 16384) != 0)
		die("first MARK and UNMARK");
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin) != NULL) {
		char out[256], arg[32];
		int pid;

		arg[0] = '\0';
		if (sscanf(line, "op %d", &pid) == 1) {
			if (stopped(pid))
				op(fd);
			else
				printf("op notstopped\n");
		} else if (sscanf(line, "status %d %255s %31s", &pid, out, arg) >= 2) {
			if (stopped(pid))
				status(out, arg[0] ? arg : NULL);
			else
				printf("status notstopped\n");
		} else if (strcmp(line, "check\n") == 0) {
			long at = first_wrong(fd, 'B');

			if (at < 0)
				printf("check ok\n");
			else
				printf("check mismatch at %ld\n", at);
		} else {
			printf("what? %s", line);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "loop") == 0 && atol(argv[3]) > 0)
		return loop(argv[2], (unsigned long)atol(argv[3]));
	if (argc == 3 && strcmp(argv[1], "probe") == 0)
		return probe(argv[2]);
	fprintf(stderr, "usage: marker loop DIR EVERY | marker probe FILE\n");
	return 2;
}
