/* SPDX-License-Identifier: MIT */
/*
 * fdswap - a host that renumbers the fd it hands to MARK while the
 * library works on it (DESIGN 13's point 4, DESIGN 17).
 *
 *   fdswap merge|budget X F SECONDS ROUNDS [raw]
 *
 * X is a file nobody marks (on a disk file system, or on tmpfs), F a file
 * on tmpfs; both 8K at least, written here with 'x' and 'f'. A thread
 * loops dup2(X, S); dup2(F, S) on one number S, for ever. The main
 * thread, each round:
 *
 *   merge    MARK F [0,4K) through F's own fd; volatile_purge(): F's
 *            range is punched; MARK S [0,8K): when S is F at the check,
 *            it joins the purged range, and MARK punches [0,8K).
 *   budget   (VOLATILE_BUDGET=4K) MARK S [0,8K): when S is F, the
 *            region is over the budget, and the purge of the caller's
 *            own file punches F's range through S.
 *
 * then UNMARK F [0,8K) and X [0,8K) through their own fds (a MARK of S
 * when it was X, on tmpfs, marked X). An UNMARK that says 0 promises the
 * bytes intact (THE INVARIANT): F is read back at each of its 0s, X every
 * CHECK rounds and at each of its 0s; one that says 1 lets them go (they
 * are written again). Nothing of this thread's ever punches X.
 *
 * With "raw", the MARK through S is the system call itself, which only
 * `volatile run` sees (DESIGN 21): run takes S's open file into its own
 * table (pidfd_getfd) and works through that.
 *
 * Stops after ROUNDS rounds or SECONDS, whichever comes first. Prints
 *   "rounds N, marks through S: M, X zeroed at K of C checks, F zeroed at L of D checks"
 * Exit status 0: nothing zeroed, and some MARK went through S (M > 0);
 * 1: bytes zeroed outside a volatile range; 3: no MARK went through S
 * (the race was not run); 2: a setup step failed.
 */
#include <dlfcn.h>
#include <pthread.h>

#include "say.h"
#include "volatile.h"

#define S 9
#define SIZE 8192
#define CHECK 16

static int xfd, ffd;
static volatile int stop;

static void *swapper(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		dup2(xfd, S);
		dup2(ffd, S);
	}
	return NULL;
}

static void fill(int fd, char c)
{
	char buf[SIZE];

	memset(buf, c, sizeof(buf));
	if (pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		die("pwrite");
}

/* 1 if the first SIZE bytes are all c */
static int intact(int fd, char c)
{
	char buf[SIZE];

	if (pread(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		die("pread");
	for (size_t i = 0; i < sizeof(buf); i++)
		if (buf[i] != c)
			return 0;
	return 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long rounds, n, marks = 0, xchecks = 0, xzero = 0, fchecks = 0, fzero = 0;
	int64_t (*purge)(uint64_t);
	double end;
	int merge, raw;
	pthread_t t;

	if (argc < 6 || argc > 7 || (argc == 7 && strcmp(argv[6], "raw") != 0) || (strcmp(argv[1], "merge") != 0 && strcmp(argv[1], "budget") != 0)) {
		fprintf(stderr, "usage: fdswap merge|budget X F SECONDS ROUNDS [raw]\n");
		return 2;
	}
	merge = strcmp(argv[1], "merge") == 0;
	raw = argc == 7;
	end = now_s() + atof(argv[4]);
	rounds = atol(argv[5]);
	/* the library's, preloaded: this program is linked with libc only */
	purge = (int64_t(*)(uint64_t))dlsym(RTLD_DEFAULT, "volatile_purge");
	if (purge == NULL) {
		printf("setup: volatile_purge: not found (run with the library preloaded)\n");
		return 2;
	}
	xfd = open(argv[2], O_RDWR | O_CLOEXEC);
	ffd = open(argv[3], O_RDWR | O_CLOEXEC);
	if (xfd < 0 || ffd < 0)
		die("open");
	if (xfd == S || ffd == S)
		die("fd numbers");
	fill(xfd, 'x');
	fill(ffd, 'f');
	if (dup2(ffd, S) != S)
		die("dup2");
	errno = pthread_create(&t, NULL, swapper, NULL);
	if (errno)
		die("pthread_create");

	for (n = 0; n < rounds && now_s() < end; n++) {
		int fr, xr;

		if (merge) {
			if (fallocate(ffd, FALLOC_FL_MARK_VOLATILE, 0, SIZE / 2) != 0)
				die("mark F");
			if (purge(UINT64_MAX) < 0)
				die("volatile_purge");
		}
		if ((raw ? syscall(SYS_fallocate, S, FALLOC_FL_MARK_VOLATILE, 0L, (long)SIZE)
			 : fallocate(S, FALLOC_FL_MARK_VOLATILE, 0, SIZE)) == 0)
			marks++;
		fr = fallocate(ffd, FALLOC_FL_UNMARK_VOLATILE, 0, SIZE);
		xr = fallocate(xfd, FALLOC_FL_UNMARK_VOLATILE, 0, SIZE);
		if (fr < 0)
			die("unmark F");
		if (fr == 0) {
			fchecks++;
			if (!intact(ffd, 'f')) {
				fzero++;
				fill(ffd, 'f');
			}
		} else {
			fill(ffd, 'f');
		}
		/* X on a disk: EOPNOTSUPP, nothing of it volatile, a 0 */
		if (xr == 1) {
			fill(xfd, 'x');
		} else if (xr == 0 || (xr < 0 && errno == EOPNOTSUPP)) {
			if (xr == 0 || n % CHECK == 0) {
				xchecks++;
				if (!intact(xfd, 'x')) {
					xzero++;
					fill(xfd, 'x');
				}
			}
		} else {
			die("unmark X");
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	printf("rounds %ld, marks through S: %ld, X zeroed at %ld of %ld checks, "
	       "F zeroed at %ld of %ld checks\n",
	       n, marks, xzero, xchecks, fzero, fchecks);
	if (xzero || fzero)
		return 1;
	return marks > 0 ? 0 : 3;
}
