/* SPDX-License-Identifier: MIT */
/*
 * abi-prog - the program of tests/shell/run-abi.sh, which builds it itself:
 * with -fsanitize=address, and for another ABI (-m32). Like a user's
 * program, it knows nothing of libvolatile but <volatile.h>: it marks and
 * unmarks 64 KiB of a memfd with libc's fallocate() and prints
 *
 *   mark = 0              or  mark = -1 EOPNOTSUPP (errno N otherwise)
 *   unmark = 0|1          or  unmark = -1 EOPNOTSUPP
 *
 * and exits 3 (a status of its own, to compare), or, given
 * `exec CMD [ARG...]`, execs CMD then (a program of another ABI starting one
 * of this one's).
 */
#define _GNU_SOURCE
#include <volatile.h>

#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

static void say(const char *what, int r)
{
	if (r != -1)
		printf("%s = %d\n", what, r);
	else if (errno == EOPNOTSUPP)
		printf("%s = -1 EOPNOTSUPP\n", what);
	else
		printf("%s = -1 errno %d\n", what, errno);
}

int main(int argc, char **argv)
{
	int fd = memfd_create("abi-prog", MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, 65536) != 0) {
		perror("abi-prog: memfd");
		return 2;
	}
	say("mark", fallocate(fd, FALLOC_FL_MARK_VOLATILE, 0, 65536));
	say("unmark", fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, 0, 65536));
	if (argc > 2 && argv[1][0] == 'e') {
		fflush(stdout);
		execv(argv[2], argv + 2);
		perror("abi-prog: exec");
		return 2;
	}
	return 3;
}
