/* SPDX-License-Identifier: MIT */
/*
 * cancel - pthread_cancel inside the library (DESIGN 17).
 *
 *   cancel
 *
 * Linked with -lvolatile, with VOLATILE_REGION naming a region not made
 * yet. A thread with a cancellation pending makes the process's first
 * MARK (glibc's fallocate is a cancellation point; inside the library,
 * the region is made and attached with open, pread and close, which are
 * too), then a MARK with a budget that purges. Then the main thread forks
 * (once, the fork handlers took the library's attach lock) and marks
 * again, in the parent and the child. Nothing may hang: an alarm ends a hung run
 * (exit status 142). Prints what each step returned; exits 0 if every
 * step worked.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "volatile.h"

static int memfd(const char *name)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, 1 << 20) != 0) {
		perror("memfd");
		exit(2);
	}
	return fd;
}

static int first_mark = -2, budget_mark = -2;

static void *canceled(void *arg)
{
	int fd = *(int *)arg, other = memfd("other");

	pthread_cancel(pthread_self());
	/* the cancellation must not take effect inside the library */
	first_mark = fallocate(fd, FALLOC_FL_MARK_VOLATILE, 0, 4096);
	pthread_cancel(pthread_self());
	/* over the budget: fd's range, the oldest, is purged, reached as another file's */
	budget_mark = fallocate(other, FALLOC_FL_MARK_VOLATILE, 65536, 65536);
	pthread_testcancel();
	return NULL;
}

int main(void)
{
	int fd = memfd("cancel"), status, bad = 0;
	pthread_t t;
	void *res;
	pid_t pid;

	alarm(20);
	if (pthread_create(&t, NULL, canceled, &fd) != 0 || pthread_join(t, &res) != 0) {
		perror("thread");
		return 2;
	}
	printf("thread: first mark %d, budget mark %d, %s\n", first_mark, budget_mark,
	       res == PTHREAD_CANCELED ? "canceled after" : "not canceled");
	bad |= first_mark != 0 || budget_mark != 0 || res != PTHREAD_CANCELED;

	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 2;
	}
	if (pid == 0) {
		int c = memfd("child");

		_exit(fallocate(c, FALLOC_FL_MARK_VOLATILE, 0, 4096) == 0 &&
			      fallocate(c, FALLOC_FL_UNMARK_VOLATILE, 0, 4096) == 0
		      ? 0
		      : 1);
	}
	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		return 2;
	}
	printf("fork: child %s\n", WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "marked" : "failed");
	bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	printf("parent: mark %d unmark %d\n", fallocate(fd, FALLOC_FL_MARK_VOLATILE, 8192, 4096),
	       fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, 8192, 4096));
	return bad;
}
