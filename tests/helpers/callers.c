/* SPDX-License-Identifier: MIT */
/*
 * callers - many threads calling through `volatile run`'s supervisor
 * (DESIGN 21: what it keeps per calling thread).
 *
 *   callers N K DIR
 *
 * Run under `volatile run`. The main thread makes one pair (its own page,
 * after the others'), prints "ready", waits for DIR/go; then N
 * threads, all alive before the first calls (so no thread id serves two
 * of them), each make K MARK+UNMARK pairs as raw system calls (the
 * supervisor serves them) on a page of a memfd of their own; prints
 * "called" once all are made and waits for DIR/end; the threads exit, are
 * joined, and it prints "joined" and waits for DIR/quit. Exit 0, or 1 with what went wrong: a MARK that did not
 * say 0, an UNMARK that said neither 0 nor 1 (the call was not served).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "volatile.h"

static pthread_barrier_t started, called, ended;
static int memfd, pairs;
static const char *dir;
static volatile int failed;

static void pair(off_t off, int i)
{
	long m = syscall(SYS_fallocate, memfd, FALLOC_FL_MARK_VOLATILE, off, (off_t)4096);
	long u = syscall(SYS_fallocate, memfd, FALLOC_FL_UNMARK_VOLATILE, off, (off_t)4096);

	if (m != 0 || (u != 0 && u != 1)) {
		fprintf(stderr, "callers: pair %d at %lld: mark %ld, unmark %ld (%s)\n", i,
			(long long)off, m, u, strerror(errno));
		failed = 1;
	}
}

static void *caller(void *arg)
{
	off_t off = (off_t)(intptr_t)arg * 4096;

	pthread_barrier_wait(&started);
	for (int i = 0; i < pairs && !failed; i++)
		pair(off, i);
	pthread_barrier_wait(&called);
	pthread_barrier_wait(&ended);
	return NULL;
}

/* until DIR/name exists */
static void await(const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	while (access(path, F_OK) != 0)
		usleep(10000);
}

static void say(const char *line)
{
	printf("%s\n", line);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	pthread_t *t;
	int n;

	if (argc != 4 || (n = atoi(argv[1])) < 1 || (pairs = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: callers N K DIR\n");
		return 2;
	}
	dir = argv[3];
	t = calloc((size_t)n, sizeof(*t));
	memfd = memfd_create("callers", MFD_CLOEXEC);
	if (t == NULL || memfd < 0 || ftruncate(memfd, (off_t)(n + 1) * 4096) != 0) {
		perror("callers");
		return 1;
	}
	pthread_barrier_init(&started, NULL, (unsigned)n);
	pthread_barrier_init(&called, NULL, (unsigned)n + 1);
	pthread_barrier_init(&ended, NULL, (unsigned)n + 1);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	pair((off_t)n * 4096, 0);
	say("ready");
	await("go");
	for (int i = 0; i < n; i++) {
		int err = pthread_create(&t[i], &attr, caller, (void *)(intptr_t)i);

		if (err != 0) {
			fprintf(stderr, "callers: thread %d: %s\n", i, strerror(err));
			_exit(1);
		}
	}
	pthread_barrier_wait(&called);
	say("called");
	await("end");
	pthread_barrier_wait(&ended);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	say("joined");
	await("quit");
	return failed;
}
