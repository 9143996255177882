/* SPDX-License-Identifier: MIT */
/*
 * reborn - a tmpfs inode reborn within one clock tick (DESIGN 14).
 *
 *   reborn DIR TRIES
 *
 * Run in a private mount namespace, linked with -lvolatile. TRIES times:
 * mount a tmpfs on DIR, make file `a` there (inode 2), mark 4K of it,
 * close and unlink it, unmount, mount a tmpfs on DIR again (the anonymous
 * device number is reused) and make `b` at once: it is inode 2 again, and
 * often born in the same tick of the coarse clock as `a`, so (device,
 * inode, birth time) are `a`'s. `b` was never marked: a purge of
 * everything must not change a byte of it, and UNMARK of it must say 0.
 *
 * Prints "tries N same M" (M: tries where b's device, inode number and
 * birth time were a's) and exits 0; exits 1 at the first byte changed or
 * UNMARK that does not say 0; 2 if the machine refuses a step.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volatile.h"

#define SIZE 8192

struct birth {
	unsigned long long dev, ino;
	long long sec;
	unsigned nsec;
};

static int born(int fd, struct birth *b)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_INO | STATX_BTIME, &sx) != 0)
		return -1;
	b->dev = (unsigned long long)sx.stx_dev_major << 32 | sx.stx_dev_minor;
	b->ino = sx.stx_ino;
	b->sec = sx.stx_btime.tv_sec;
	b->nsec = sx.stx_btime.tv_nsec;
	return 0;
}

static int make(const char *path, char fill)
{
	char buf[SIZE];
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	if (fd < 0)
		return -1;
	memset(buf, fill, sizeof(buf));
	if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int intact(int fd, char fill)
{
	char buf[SIZE];

	if (pread(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		return 0;
	for (size_t i = 0; i < sizeof(buf); i++)
		if (buf[i] != fill)
			return 0;
	return 1;
}

static int refuse(const char *what)
{
	fprintf(stderr, "reborn: %s: %s\n", what, strerror(errno));
	return 2;
}

int main(int argc, char **argv)
{
	char a[4096], b[4096];
	long tries, same = 0;
	const char *dir;

	if (argc != 3) {
		fprintf(stderr, "usage: reborn DIR TRIES\n");
		return 2;
	}
	dir = argv[1];
	tries = atol(argv[2]);
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	for (long i = 0; i < tries; i++) {
		struct birth ba, bb;
		int fa, fb, r;

		if (mount("reborn", dir, "tmpfs", 0, "size=1m") != 0)
			return refuse("mount");
		fa = make(a, 'A');
		if (fa < 0 || born(fa, &ba) != 0)
			return refuse("make a");
		if (fallocate(fa, FALLOC_FL_MARK_VOLATILE, 0, 4096) != 0)
			return refuse("mark a");
		close(fa);
		unlink(a);
		if (umount(dir) != 0 || mount("reborn", dir, "tmpfs", 0, "size=1m") != 0)
			return refuse("mount again");
		fb = make(b, 'B');
		if (fb < 0 || born(fb, &bb) != 0)
			return refuse("make b");
		same += ba.dev == bb.dev && ba.ino == bb.ino && ba.sec == bb.sec && ba.nsec == bb.nsec;

		if (volatile_purge(VOLATILE_PURGE_ALL) < 0)
			return refuse("purge");
		if (!intact(fb, 'B')) {
			printf("try %ld: the never-marked file b was punched\n", i);
			return 1;
		}
		r = fallocate(fb, FALLOC_FL_UNMARK_VOLATILE, 0, SIZE);
		if (r != 0) {
			printf("try %ld: UNMARK of the never-marked file b said %d (%s)\n", i, r,
			       r < 0 ? strerror(errno) : "purged");
			return 1;
		}
		close(fb);
		unlink(b);
		if (umount(dir) != 0)
			return refuse("unmount");
	}
	printf("tries %ld same %ld\n", tries, same);
	return 0;
}
