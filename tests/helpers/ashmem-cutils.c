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
 *
 *   ashmem-cutils --do CMD...
 *
 * runs commands instead, one output line each ("CMD ARGS = RESULT",
 * errors as "= -1 ENAME"), as tests/helpers/ashmem-legacy does:
 *
 *   create NAME SIZE     ashmem_create_region: the current fd
 *   map LEN P            mmap(LEN, P, MAP_SHARED); P: none r w x rw rx rwx
 *   unmap                munmap the current mapping
 *   fill OFF LEN C       write C (or "zero") into the mapping
 *   expect OFF LEN C     check the mapping: "... ok" or "... MISMATCH" (exit 1)
 *   addseal WHICH        fcntl(F_ADD_SEALS); WHICH: seal shrink grow write
 *                        future-write, joined by commas
 *   getseals             fcntl(F_GET_SEALS): "getseals = seal,future-write" or "none"
 *   getprot              ioctl(ASHMEM_GET_PROT_MASK)
 *   setprot P            ashmem_set_prot_region
 *   ioprot P             ioctl(ASHMEM_SET_PROT_MASK)
 *   setsize N            ioctl(ASHMEM_SET_SIZE)
 *   getsize              ashmem_get_size_region
 *   pin OFF LEN          ashmem_pin_region (1: was purged, 0: not)
 *   unpin OFF LEN        ashmem_unpin_region
 *   pinstatus OFF LEN    ioctl(ASHMEM_GET_PIN_STATUS) (0: some page unpinned)
 *   sh CMD               system(CMD): "sh = STATUS"
 *
 * errno is set to a sentinel before each call; a call that succeeds and
 * changes it gets " ERRNO-CLOBBERED" after its line (and exit status 1).
 */
#define _GNU_SOURCE
#include <cutils/ashmem.h>
#include <linux/ashmem.h>
#include <volatile.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "say.h"

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

/* ---- --do: commands ---------------------------------------------------------- */

#define SENTINEL 4242

struct state {
	int fd;              /* the current fd */
	int failed;          /* a check failed: the exit status is 1 */
	unsigned char *map;  /* the current mapping */
	size_t map_len;
};

/* "CMD ARGS = R", or "= -1 ENAME"; errno must be the sentinel after a success */
static void result(struct state *s, char **a, int nargs, long r)
{
	int e = errno;

	for (int k = 0; k <= nargs; k++)
		printf("%s%s", k ? " " : "", a[k]);
	if (r < 0) {
		printf(" = -1 %s\n", ename(e));
		return;
	}
	printf(" = %ld%s\n", r, e != SENTINEL ? " ERRNO-CLOBBERED" : "");
	if (e != SENTINEL)
		s->failed = 1;
}

static int c_create(struct state *s, char **a)
{
	errno = SENTINEL;
	s->fd = ashmem_create_region(a[1], (size_t)say_num(a[2]));
	result(s, a, 2, s->fd);
	return 0;
}

static int c_map(struct state *s, char **a)
{
	size_t len = (size_t)say_num(a[1]);
	void *m;

	errno = SENTINEL;
	m = mmap(NULL, len, say_prot(a[2]), MAP_SHARED, s->fd, 0);
	if (m != MAP_FAILED) {
		s->map = m;
		s->map_len = len;
	}
	result(s, a, 2, m == MAP_FAILED ? -1 : 0);
	return 0;
}

static int c_unmap(struct state *s, char **a)
{
	(void)a;
	printf("unmap = %d\n", munmap(s->map, s->map_len));
	s->map = NULL;
	return 0;
}

static int c_fill(struct state *s, char **a)
{
	size_t off = (size_t)say_num(a[1]), len = (size_t)say_num(a[2]);

	if (s->map == NULL || off + len > s->map_len)
		die("fill: outside the mapping");
	memset(s->map + off, strcmp(a[3], "zero") == 0 ? 0 : a[3][0], len);
	printf("fill %s %s %s\n", a[1], a[2], a[3]);
	return 0;
}

static int c_expect(struct state *s, char **a)
{
	size_t off = (size_t)say_num(a[1]), len = (size_t)say_num(a[2]);
	int ok;

	if (s->map == NULL || off + len > s->map_len)
		die("expect: outside the mapping");
	ok = all(s->map + off, len, strcmp(a[3], "zero") == 0 ? 0 : a[3][0]);
	printf("expect %s %s %s %s\n", a[1], a[2], a[3], ok ? "ok" : "MISMATCH");
	if (!ok)
		s->failed = 1;
	return 0;
}

static int c_addseal(struct state *s, char **a)
{
	int bits = seals_of(a[1]);

	if (bits < 0) {
		fprintf(stderr, "addseal: unknown seal in %s\n", a[1]);
		exit(2);
	}
	errno = SENTINEL;
	result(s, a, 1, fcntl(s->fd, F_ADD_SEALS, bits));
	return 0;
}

static int c_getseals(struct state *s, char **a)
{
	int r;

	errno = SENTINEL;
	r = fcntl(s->fd, F_GET_SEALS);
	if (r < 0)
		result(s, a, 0, r);
	else
		printf("getseals = %s\n", seals_str(r));
	return 0;
}

static int c_getprot(struct state *s, char **a)
{
	errno = SENTINEL;
	result(s, a, 0, ioctl(s->fd, ASHMEM_GET_PROT_MASK));
	return 0;
}

static int c_setprot(struct state *s, char **a)
{
	errno = SENTINEL;
	result(s, a, 1, ashmem_set_prot_region(s->fd, say_prot(a[1])));
	return 0;
}

static int c_ioprot(struct state *s, char **a)
{
	errno = SENTINEL;
	result(s, a, 1, ioctl(s->fd, ASHMEM_SET_PROT_MASK, (unsigned long)say_prot(a[1])));
	return 0;
}

static int c_setsize(struct state *s, char **a)
{
	errno = SENTINEL;
	result(s, a, 1, ioctl(s->fd, ASHMEM_SET_SIZE, (size_t)say_num(a[1])));
	return 0;
}

static int c_getsize(struct state *s, char **a)
{
	errno = SENTINEL;
	result(s, a, 0, ashmem_get_size_region(s->fd));
	return 0;
}

static int c_pin(struct state *s, char **a)
{
	errno = SENTINEL;
	result(s, a, 2, ashmem_pin_region(s->fd, (size_t)say_num(a[1]), (size_t)say_num(a[2])));
	return 0;
}

static int c_unpin(struct state *s, char **a)
{
	errno = SENTINEL;
	result(s, a, 2, ashmem_unpin_region(s->fd, (size_t)say_num(a[1]), (size_t)say_num(a[2])));
	return 0;
}

static int c_pinstatus(struct state *s, char **a)
{
	struct ashmem_pin p = { (uint32_t)say_num(a[1]), (uint32_t)say_num(a[2]) };

	errno = SENTINEL;
	result(s, a, 2, ioctl(s->fd, ASHMEM_GET_PIN_STATUS, &p));
	return 0;
}

static int c_sh(struct state *s, char **a)
{
	int r;

	(void)s;
	fflush(stdout);
	r = system(a[1]);
	printf("sh = %d\n", r);
	return 0;
}

static const struct command {
	const char *name;
	int nargs;
	int (*run)(struct state *s, char **a);
} commands[] = {
	{ "create", 2, c_create },   { "map", 2, c_map },	    { "unmap", 0, c_unmap },
	{ "fill", 3, c_fill },
	{ "expect", 3, c_expect },   { "addseal", 1, c_addseal }, { "getseals", 0, c_getseals },
	{ "getprot", 0, c_getprot }, { "setprot", 1, c_setprot }, { "ioprot", 1, c_ioprot },
	{ "setsize", 1, c_setsize }, { "getsize", 0, c_getsize }, { "pin", 2, c_pin },
	{ "unpin", 2, c_unpin },     { "pinstatus", 2, c_pinstatus }, { "sh", 1, c_sh },
};

static int run(char **a)
{
	struct state s = { .fd = -1 };

	while (*a != NULL) {
		const struct command *c = NULL;

		for (size_t k = 0; k < sizeof(commands) / sizeof(commands[0]) && c == NULL; k++)
			if (strcmp(*a, commands[k].name) == 0)
				c = &commands[k];
		if (c == NULL) {
			fprintf(stderr, "ashmem-cutils: unknown command %s\n", *a);
			return 2;
		}
		for (int k = 1; k <= c->nargs; k++) {
			if (a[k] == NULL) {
				fprintf(stderr, "%s: missing argument\n", *a);
				return 2;
			}
		}
		c->run(&s, a);
		a += 1 + c->nargs;
		fflush(stdout);
	}
	return s.failed;
}

int main(int argc, char **argv)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE), size = 16 * page;
	unsigned char *m, *ro;
	struct volatile_stats st;
	int fd, r, p[2];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && strcmp(argv[1], "--do") == 0)
		return run(argv + 2);
	if (argc != 2) {
		fprintf(stderr, "usage: ashmem-cutils PURGE_COMMAND | --do CMD...\n");
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
