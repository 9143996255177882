/* SPDX-License-Identifier: MIT */
/*
 * execcall - a thread's MARK or UNMARK cut short by another thread's
 * exec (DESIGN 21 step 6): the process lives on, under a new image, and
 * the calling thread is gone.
 *
 *   execcall FILE mark|unmark OFF LEN GO PROG ARG...
 *
 * Run under `volatile run`. Opens FILE read-write, prints "pid = N", and a
 * second thread makes the call as a raw system call (the supervisor
 * serves it), printing "calling" first. Once GO exists, the main thread
 * execs PROG ARG... (the kernel kills the calling thread first, wherever
 * its call is). If the call returns before the exec, it prints "called =
 * R" (the test then knows the exec did not cut it short).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "volatile.h"

static int fd, mode;
static long long off, len;

static void *call(void *arg)
{
	long r;

	(void)arg;
	printf("calling\n");
	fflush(stdout);
	r = syscall(SYS_fallocate, fd, mode, (off_t)off, (off_t)len);
	printf("called = %ld\n", r);
	fflush(stdout);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc < 7) {
		fprintf(stderr, "usage: execcall FILE mark|unmark OFF LEN GO PROG ARG...\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "execcall: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	mode = strcmp(argv[2], "mark") == 0 ? FALLOC_FL_MARK_VOLATILE : FALLOC_FL_UNMARK_VOLATILE;
	off = strtoll(argv[3], NULL, 0);
	len = strtoll(argv[4], NULL, 0);
	printf("pid = %d\n", (int)getpid());
	fflush(stdout);
	if (pthread_create(&t, NULL, call, NULL) != 0) {
		fprintf(stderr, "execcall: pthread_create failed\n");
		return 1;
	}
	while (access(argv[5], F_OK) != 0)
		usleep(10000);
	execv(argv[6], argv + 6);
	fprintf(stderr, "execcall: exec %s: %s\n", argv[6], strerror(errno));
	return 1;
}
