/* SPDX-License-Identifier: MIT */
/*
 * reaper - a host that reaps every child it has (DESIGN 17 "Children").
 *
 *   reaper FILE N
 *
 * With the shim and VOLATILE_BUDGET=4K. Init systems and tracers wait for
 * any child at all (waitpid(-1, __WALL)): a thread here does, for as long
 * as the program runs, while the main thread N times marks 4K of FILE and
 * then of a memfd, so that the budget purges FILE's range, which the
 * library punches from a helper of its own. The only child this program
 * makes is a `sleep`; the reaper must never get another pid. Prints
 * "reaped: none" (or the pids it got) and the purges seen; exit 0 if no
 * pid but ours was reaped and every round purged.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "volatile.h"

static pid_t ours;
static volatile int strangers, reaped_ours;

static void *reap(void *arg)
{
	(void)arg;
	for (;;) {
		int status;
		pid_t p = waitpid(-1, &status, __WALL);

		if (p == ours) {
			reaped_ours = 1;
			return NULL;
		}
		if (p > 0) {
			printf("reaped: %d, not a child of ours\n", (int)p);
			strangers++;
		} else if (errno != EINTR) {
			return NULL;
		}
	}
}

int main(int argc, char **argv)
{
	int fd, m, n, purged = 0;
	pthread_t t;

	if (argc != 3) {
		fprintf(stderr, "usage: reaper FILE N\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	m = memfd_create("reaper", 0);
	n = atoi(argv[2]);
	if (fd < 0 || m < 0 || ftruncate(m, 4096) != 0) {
		perror("reaper");
		return 2;
	}
	ours = fork();
	if (ours == 0) {
		execl("/bin/sleep", "sleep", "600", (char *)NULL);
		_exit(127);
	}
	pthread_create(&t, NULL, reap, NULL);
	for (int i = 0; i < n; i++) {
		fallocate(m, FALLOC_FL_UNMARK_VOLATILE, 0, 4096);
		fallocate(fd, FALLOC_FL_MARK_VOLATILE, 0, 4096);
		fallocate(m, FALLOC_FL_MARK_VOLATILE, 0, 4096);
		purged += fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, 0, 4096) == 1;
	}
	kill(ours, SIGKILL);
	pthread_join(t, NULL);
	if (strangers == 0)
		printf("reaped: none\n");
	printf("purged: %d of %d\n", purged, n);
	return strangers == 0 && reaped_ours && purged == n ? 0 : 1;
}
