/* SPDX-License-Identifier: MIT */
/*
 * zleader - a file held by a thread /proc/PID/fd does not show (DESIGN 15).
 *
 *   zleader DIR [unshare]
 *
 * With the shim. Makes a memfd, marks [0, 4K), then touches DIR/r1 and
 * waits for DIR/g1 (a purger purges the range meanwhile). Then either the
 * main thread exits (pthread_exit: a zombie leader whose /proc/PID/fd and
 * maps are empty while a thread runs on), or, with "unshare", a thread
 * takes a copy of the fd table (unshare(CLONE_FILES)) and the main thread
 * closes the memfd in its own. Either way the memfd is held, by a thread
 * only. It touches DIR/r2, waits for DIR/g2 (purgers look meanwhile), and
 * that thread unmarks [0, 4K): "unmark = R, bytes zero|intact". Exit 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "volatile.h"

static const char *dir;
static int fd, unshared;
static volatile int files_copied;

static void touch(const char *name)
{
	char p[4096];
	int t;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	t = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (t >= 0)
		close(t);
}

static void wait_for(const char *name)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	for (int i = 0; i < 6000 && access(p, F_OK) != 0; i++)
		usleep(10000);
}

static void *holder(void *arg)
{
	char buf[4096];
	int r, zero = 1;

	(void)arg;
	if (unshared) {
		if (unshare(CLONE_FILES) != 0) {
			perror("unshare");
			exit(2);
		}
		files_copied = 1;
	}
	wait_for("g1.done");
	touch("r2");
	wait_for("g2");
	r = fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, 0, 4096);
	if (pread(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		exit(2);
	for (size_t i = 0; i < sizeof(buf); i++)
		zero &= buf[i] == 0;
	printf("unmark = %d, bytes %s\n", r, zero ? "zero" : "intact");
	fflush(stdout);
	exit(0);
}

int main(int argc, char **argv)
{
	char buf[4096];
	pthread_t t;

	if (argc < 2) {
		fprintf(stderr, "usage: zleader DIR [unshare]\n");
		return 2;
	}
	dir = argv[1];
	unshared = argc > 2 && strcmp(argv[2], "unshare") == 0;
	fd = memfd_create("zleader", 0);
	memset(buf, 'A', sizeof(buf));
	if (fd < 0 || pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf) ||
	    fallocate(fd, FALLOC_FL_MARK_VOLATILE, 0, 4096) != 0) {
		perror("zleader");
		return 2;
	}
	printf("main: pid %d\n", (int)getpid());
	fflush(stdout);
	touch("r1");
	wait_for("g1");
	if (pthread_create(&t, NULL, holder, NULL) != 0)
		return 2;
	if (unshared) {
		while (!files_copied)
			usleep(1000);
		close(fd); /* only the thread's own table holds it now */
		touch("g1.done");
		pause();
	}
	touch("g1.done");
	pthread_exit(NULL);
}
