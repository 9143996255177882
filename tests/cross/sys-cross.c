/* SPDX-License-Identifier: MIT */
/*
 * sys-cross.c - src/sys.h's calling sequence on another architecture
 * (make check-cross: built by a cross compiler, run under qemu-user).
 * Calls of 0 to 6 arguments answer the result or -errno, and errno is
 * never written. No check library: a foreign-architecture libcheck is
 * rarely at hand.
 */
#include "sys.h"

#include <linux/stat.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define UNTOUCHED 4321

static int failures;

#define EXPECT(cond)                                                              \
	do {                                                                      \
		if (!(cond)) {                                                    \
			printf("FAIL: sys-cross: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
			failures++;                                               \
		}                                                                 \
	} while (0)

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "sys-cross.tmp";
	struct statx sx;
	char buf[4];
	void *m;
	int fd;

	errno = UNTOUCHED;
	EXPECT(vl_raw_open("/nonexistent/sys-cross", O_RDONLY) == -ENOENT);
	EXPECT(vl_raw_close(-1) == -EBADF);
	fd = vl_raw_open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	EXPECT(fd >= 0);
	EXPECT(vl_raw_fcntl(fd, F_GETFD) == FD_CLOEXEC);
	EXPECT(vl_raw_fcntl(fd, F_SETFD, 0) == 0);
	EXPECT(vl_raw_fcntl(fd, F_GETFD) == 0);
	EXPECT(vl_raw_write(fd, "abcdef", 6) == 6);
	EXPECT(vl_raw_pread(fd, buf, 3, 2) == 3 && memcmp(buf, "cde", 3) == 0);
	m = vl_raw_mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	EXPECT(vl_map_error(m) == 0 && memcmp(m, "abc", 3) == 0);
	EXPECT(vl_raw_munmap(m, 4096) == 0);
	EXPECT(vl_map_error(vl_raw_mmap(NULL, 4096, PROT_READ, MAP_SHARED, -1, 0)) == -EBADF);
	EXPECT(vl_raw_statx(fd, "", AT_EMPTY_PATH, STATX_SIZE, &sx) == 0 && sx.stx_size == 6);
	EXPECT(vl_raw_getpid() == getpid());
	EXPECT(vl_raw_close(fd) == 0);
	unlink(path);
	EXPECT(errno == UNTOUCHED);
	printf("%s: sys-cross: %d failures\n", failures ? "FAIL" : "PASS", failures);
	return failures != 0;
}
