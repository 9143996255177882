/* SPDX-License-Identifier: MIT */
/*
 * fusehang - a FUSE file system that never answers (DESIGN 13).
 *
 *   fusehang DIR
 *
 * As root, mounts a FUSE file system on DIR through /dev/fuse directly
 * (no libfuse), prints "mounted", and then never reads a request: every
 * lookup, stat or open that reaches it waits until this program exits
 * (the kernel then aborts the connection: ENOTCONN). That is a FUSE
 * server that hangs, for the tests that check the library never asks
 * another file system for anything. Runs until it is killed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mount.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char opts[128];
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: fusehang DIR\n");
		return 2;
	}
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("fusehang: /dev/fuse");
		return 2;
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0", fd);
	if (mount("fusehang", argv[1], "fuse", MS_NOSUID | MS_NODEV, opts) != 0) {
		perror("fusehang: mount");
		return 2;
	}
	printf("mounted\n");
	fflush(stdout);
	for (;;)
		pause();
}
