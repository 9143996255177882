/* SPDX-License-Identifier: MIT */
/*
 * lockrace - a POSIX lock taken while a purge is under way (DESIGN 13).
 *
 *   lockrace A B
 *
 * Run with the fault-injecting library preloaded (its steps call
 * vl_fault_hook, defined here) and VOLATILE_BUDGET=4K. Marks 4K of A
 * (the oldest range), then 4K of B: the budget purges A's range, which
 * this process reaches through its own fd on A. At the purge's step
 * "flagged purged" -- after any look the purge could have taken at this
 * process's locks, before its punch and its closes -- this thread takes
 * a POSIX write lock on A through another fd. Closing any fd on A would
 * release it. Then a child, forked at the start (so that its own closes
 * are no matter), asks F_GETLK: the lock must still be ours.
 *
 * Prints "lock: held by us" or "lock: LOST", the UNMARK of A's range,
 * and "hook: ran"; exits 0 when the lock held and the range was purged.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "volatile.h"

static int lockfd = -1, hooked;

void vl_fault_hook(const char *where) __attribute__((visibility("default")));

void vl_fault_hook(const char *where)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	if (hooked || strcmp(where, "purge: flagged purged, file locked") != 0)
		return;
	hooked = 1;
	if (fcntl(lockfd, F_SETLK, &fl) != 0)
		hooked = -errno;
}

int main(int argc, char **argv)
{
	int a, b, toc[2], fromc[2], r, held = 0, status;
	char c = 0;
	pid_t pid;

	if (argc != 3) {
		fprintf(stderr, "usage: lockrace A B\n");
		return 2;
	}
	a = open(argv[1], O_RDWR);
	lockfd = open(argv[1], O_RDWR);
	b = open(argv[2], O_RDWR);
	if (a < 0 || lockfd < 0 || b < 0 || pipe(toc) != 0 || pipe(fromc) != 0) {
		perror("lockrace");
		return 2;
	}
	pid = fork();
	if (pid == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

		if (read(toc[0], &c, 1) != 1 || fcntl(a, F_GETLK, &fl) != 0)
			_exit(2);
		c = fl.l_type == F_UNLCK ? 'u' : 'l';
		_exit(write(fromc[1], &c, 1) == 1 ? 0 : 2);
	}
	if (fallocate(a, FALLOC_FL_MARK_VOLATILE, 0, 4096) != 0 ||
	    fallocate(b, FALLOC_FL_MARK_VOLATILE, 0, 4096) != 0) {
		perror("mark");
		return 2;
	}
	if (write(toc[1], &c, 1) != 1 || read(fromc[0], &c, 1) != 1 || waitpid(pid, &status, 0) != pid) {
		perror("child");
		return 2;
	}
	held = c == 'l';
	printf("hook: %s\n", hooked == 1 ? "ran" : hooked == 0 ? "never ran" : strerror(-hooked));
	printf("lock: %s\n", held ? "held by us" : "LOST");
	r = fallocate(a, FALLOC_FL_UNMARK_VOLATILE, 0, 4096);
	printf("unmark A = %d\n", r);
	return held && hooked == 1 && r == 1 ? 0 : 1;
}
