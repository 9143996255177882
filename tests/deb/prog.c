/* SPDX-License-Identifier: MIT */
/*
 * prog.c - a program built against the installed libvolatile-dev, as a
 * user of the packages would build it (tests/deb/build.sh):
 *
 *   cc -o prog prog.c $(pkg-config --cflags --libs libvolatile)
 *
 * It uses <volatile.h> and both ashmem drop-in headers. Exit 0 if it all
 * works, else the number of the step that did not.
 */
#define _GNU_SOURCE
#include <volatile.h>
#include <cutils/ashmem.h>
#include <linux/ashmem.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define SIZE (1 << 20)

int main(void)
{
	struct volatile_stats st;
	int fd = memfd_create("deb-check", 0), ashmem;

	if (fd < 0 || ftruncate(fd, SIZE) != 0)
		return 1;
	if (fallocate(fd, FALLOC_FL_MARK_VOLATILE, 0, SIZE) != 0)
		return 2;
	if (volatile_purge(VOLATILE_PURGE_ALL) < SIZE)
		return 3;
	if (fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, 0, SIZE) != 1)
		return 4;
	if (volatile_stats(&st, sizeof(st)) != 0)
		return 5;
	ashmem = ashmem_create_region("deb-check", 4096);
	if (ashmem < 0 || !ashmem_valid(ashmem) || ioctl(ashmem, ASHMEM_GET_SIZE) != 4096)
		return 6;
	puts("prog: marked, purged, unmarked (purged), ashmem region of 4096 bytes");
	return 0;
}
