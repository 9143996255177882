/*
 * bench.c - libvolatile's costs as ratios to the raw call, in one run.
 *
 * Run it with the shim preloaded (make bench does): "through the shim"
 * calls fallocate() (interposed), "raw" calls libc's own fallocate found
 * with dlopen("libc.so.6", RTLD_NOLOAD). Each figure is the median of
 * several rounds of many calls; ratios compare figures of the same run.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <volatile.h>

#define ROUNDS 15

typedef int (*fallocate_fn)(int, int, off_t, off_t);

static fallocate_fn raw_fallocate;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ns per call of fn(arg), median of ROUNDS rounds of n calls */
static double measure(void (*fn)(void *), void *arg, int n)
{
	double r[ROUNDS];

	for (int k = 0; k < ROUNDS; k++) {
		uint64_t t0 = now_ns();

		for (int i = 0; i < n; i++)
			fn(arg);
		r[k] = (double)(now_ns() - t0) / n;
	}
	qsort(r, ROUNDS, sizeof(r[0]), cmp_double);
	return r[ROUNDS / 2];
}

struct ctx {
	int fd;
	off_t off;
};

/* an allocation of one page already allocated: cheap, and really done */
static void shim_keep(void *a)
{
	struct ctx *c = a;

	if (fallocate(c->fd, FALLOC_FL_KEEP_SIZE, 0, 4096) != 0)
		abort();
}

static void raw_keep(void *a)
{
	struct ctx *c = a;

	if (raw_fallocate(c->fd, FALLOC_FL_KEEP_SIZE, 0, 4096) != 0)
		abort();
}

/* one syscall the kernel rejects (shmem refuses this mode) */
static void raw_rejected(void *a)
{
	struct ctx *c = a;

	if (raw_fallocate(c->fd, FALLOC_FL_ZERO_RANGE, 0, 4096) == 0)
		abort();
}

static void pair(void *a)
{
	struct ctx *c = a;

	if (fallocate(c->fd, FALLOC_FL_MARK_VOLATILE, c->off, 4096) != 0 ||
	    fallocate(c->fd, FALLOC_FL_UNMARK_VOLATILE, c->off, 4096) < 0)
		abort();
}

static void row(const char *name, double ns, double base_ns, const char *base)
{
	printf("%-44s %9.1f ns  %6.2fx %s\n", name, ns, ns / base_ns, base);
}

int main(int argc, char **argv)
{
	int big = argc > 1 ? atoi(argv[1]) : 1000000;
	struct ctx c;
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	double keep_raw, keep_shim, rej, pair1, pairN;

	raw_fallocate = libc ? (fallocate_fn)dlsym(libc, "fallocate") : NULL;
	if (raw_fallocate == NULL || raw_fallocate == fallocate) {
		fprintf(stderr, "bench: run with libvolatile.so preloaded (make bench)\n");
		return 1;
	}
	c.fd = memfd_create("bench", 0);
	if (c.fd < 0 || ftruncate(c.fd, (off_t)big * 8192 + 65536) != 0 ||
	    fallocate(c.fd, 0, 0, 4096) != 0)
		return 1;

	keep_raw = measure(raw_keep, &c, 200000);
	keep_shim = measure(shim_keep, &c, 200000);
	rej = measure(raw_rejected, &c, 200000);
	c.off = 0;
	pair1 = measure(pair, &c, 100000);

	/* the same pair on a file that holds `big` other ranges */
	for (int i = 1; i <= big; i++)
		if (fallocate(c.fd, FALLOC_FL_MARK_VOLATILE, (off_t)i * 8192, 4096) != 0) {
			fprintf(stderr, "bench: mark %d: %s\n", i, strerror(errno));
			return 1;
		}
	c.off = (off_t)(big / 2) * 8192 + 4096; /* between two ranges */
	pairN = measure(pair, &c, 100000);

	/* what the sparse region file really holds: its allocated blocks */
	struct stat rst;
	const char *region = getenv("VOLATILE_REGION");
	double per_range = region && stat(region, &rst) == 0 ? (double)rst.st_blocks * 512 / big : 0;

	printf("libvolatile bench (median of %d rounds; ratio to the raw call in this run)\n",
	       ROUNDS);
	row("passthrough fallocate(KEEP_SIZE, 4K)", keep_shim, keep_raw, "of raw");
	row("raw fallocate rejected by shmem", rej, rej, "(the unit)");
	row("MARK+UNMARK pair, 1 range", pair1, rej, "of a rejected raw call");
	char name[64];
	snprintf(name, sizeof(name), "MARK+UNMARK pair, %d ranges in the file", big);
	row(name, pairN, pair1, "of the pair at 1 range");
	printf("%-44s %9.1f bytes per range (allocated blocks of %s)\n", "region memory", per_range,
	       region ? region : "?");
	return 0;
}
