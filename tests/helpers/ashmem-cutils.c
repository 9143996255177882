/* SPDX-License-Identifier: MIT */
/*
 * ashmem-cutils - a program written against <cutils/ashmem.h> (libcutils'
 * API and the NDK's), linked with -lvolatile and run without LD_PRELOAD.
 *
 *   ashmem-cutils PURGE_COMMAND
 *
 * runs its checks in order, one line each ("ok ..." or "FAIL ..."), runs
 * PURGE_COMMAND (a shell command: `volatile purge --all`) in the middle,
 * and exits 0 only if every check passed.
 */
#define _GNU_SOURCE
#include <cutils/ashmem.h>
#include <linux/ashmem.h>
#include <volatile.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int failed;

#define CHECK(cond, ...)                                   \
	do {                                               \
		if (cond) {                                \
			printf("ok ");                     \
		} else {                                   \
			printf("FAIL ");                   \
			failed = 1;                        \
		}                                          \
		printf(__VA_ARGS__);                       \
		printf("\n");                              \
	} while (0)

static int all(const unsigned char *p, size_t n, int c)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != c)
			return 0;
	return 1;
}

static int in_maps(const char *what)
{
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	int hit = 0;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		hit |= strstr(line, what) != NULL;
	if (f != NULL)
		fclose(f);
	return hit;
}

int main(int argc, char **argv)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE), size = 16 * page;
	unsigned char *m, *ro;
	struct volatile_stats st;
	int fd, r, p[2];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 2) {
		fprintf(stderr, "usage: ashmem-cutils PURGE_COMMAND\n");
		return 2;
	}
	errno = 4242;
	fd = ashmem_create_region("cutils-test", size);
	CHECK(fd >= 0 && errno == 4242, "ashmem_create_region = %d (errno untouched)", fd);
	if (fd < 0)
		return 1;
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC, "the region's fd is close-on-exec");
	CHECK(ashmem_valid(fd) == 1, "ashmem_valid(region) = 1");
	if (pipe(p) == 0) {
		CHECK(ashmem_valid(p[0]) == 0, "ashmem_valid(pipe) = 0");
		r = ashmem_get_size_region(p[0]);
		CHECK(r == -1 && errno == ENOTTY, "ashmem_get_size_region(pipe) = -1 ENOTTY");
	}
	CHECK(ashmem_valid(-1) == 0, "ashmem_valid(-1) = 0");
	CHECK(ashmem_get_size_region(fd) == (int)size, "ashmem_get_size_region = %zu", size);
	CHECK(ASharedMemory_getSize(fd) == size, "ASharedMemory_getSize = %zu", size);
	r = ashmem_pin_region(fd, 0, 0);
	CHECK(r == -1 && errno == EINVAL, "pin before the first mmap: -1 EINVAL");

	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED, "mmap read-write");
	if (m == MAP_FAILED)
		return 1;
	CHECK(in_maps("dev/ashmem/cutils-test"), "its name is in /proc/self/maps");
	memset(m, 'C', size);
	/* a region's record is not a file with volatile ranges until it unpins */
	CHECK(volatile_stats(&st, sizeof(st)) == 0 && st.files == 0,
	      "volatile_stats: 0 files with ranges while all is pinned");

	errno = 4242;
	r = ashmem_unpin_region(fd, 4 * page, 4 * page);
	CHECK(r == 0 && errno == 4242, "ashmem_unpin_region(4, 4 pages) = 0");
	CHECK(volatile_stats(&st, sizeof(st)) == 0 && st.files == 1 && st.ranges == 1,
	      "volatile_stats: 1 file with 1 range once unpinned");
	r = ashmem_unpin_region(fd, 1, page);
	CHECK(r == -1 && errno == EINVAL, "unpin unaligned: -1 EINVAL");
	r = ashmem_unpin_region(fd, 0, 17 * page);
	CHECK(r == -1 && errno == EINVAL, "unpin past the end: -1 EINVAL");

	r = system(argv[1]);
	CHECK(r == 0, "purge command: %s", argv[1]);

	CHECK(all(m, 4 * page, 'C') && all(m + 8 * page, 8 * page, 'C'),
	      "pinned pages survive the purge");
	r = ashmem_pin_region(fd, 4 * page, 4 * page);
	CHECK(r == ASHMEM_WAS_PURGED, "ashmem_pin_region after the purge = %d (WAS_PURGED)", r);
	CHECK(all(m + 4 * page, 4 * page, 0), "purged pages read as zeros");
	r = ashmem_pin_region(fd, 4 * page, 4 * page);
	CHECK(r == ASHMEM_NOT_PURGED, "pinning again = %d (NOT_PURGED)", r);
	r = ashmem_unpin_region(fd, 0, 0);
	CHECK(r == 0, "unpin everything (len 0)");
	r = ashmem_pin_region(fd, 0, 0);
	CHECK(r == ASHMEM_NOT_PURGED, "pin everything, nothing purged = %d", r);

	/* the prot mask: only loses bits, enforced on mmap */
	errno = 4242;
	r = ashmem_set_prot_region(fd, PROT_READ);
	CHECK(r == 0 && errno == 4242, "ashmem_set_prot_region(PROT_READ) = 0");
	r = ASharedMemory_setProt(fd, PROT_READ | PROT_WRITE);
	CHECK(r == -1 && errno == EINVAL, "ASharedMemory_setProt adding PROT_WRITE: -1 EINVAL");
	CHECK(mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED &&
		      errno == EPERM,
	      "mmap read-write beyond the mask: EPERM");
	ro = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(ro != MAP_FAILED, "mmap read-only");
	CHECK(ro != MAP_FAILED && mprotect(ro, page, PROT_READ | PROT_WRITE) == -1 &&
		      errno == EACCES,
	      "mprotect adding PROT_WRITE beyond the mask: EACCES");
	/* a mapping made before the mask lost the bit keeps it, as with the driver */
	m[0] = 'D';
	CHECK(ro != MAP_FAILED && ro[0] == 'D', "the read-only mapping shows the region");
	/* a region whose mask lost PROT_WRITE can still be unpinned and purged */
	r = ashmem_unpin_region(fd, 0, page);
	CHECK(r == 0, "unpin with a read-only mask = 0");

	r = ASharedMemory_create("zero", 0);
	CHECK(r == -EINVAL, "ASharedMemory_create(size 0) = -EINVAL");
	r = ASharedMemory_create("ndk", 3 * page);
	CHECK(r >= 0 && ASharedMemory_getSize(r) == 3 * page, "ASharedMemory_create, getSize");
	CHECK(ASharedMemory_getSize(-1) == 0, "ASharedMemory_getSize(-1) = 0");

	/* a plain memfd answers too */
	r = memfd_create("plain", 0);
	if (r >= 0 && ftruncate(r, 5 * (off_t)page) == 0)
		CHECK(ashmem_valid(r) == 1 && ashmem_get_size_region(r) == (int)(5 * page),
		      "a plain memfd is valid, its size is its file's");
	return failed;
}
