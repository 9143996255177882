/* SPDX-License-Identifier: MIT */
/*
 * ashmem-passcost - what the ashmem shims cost the calls they pass through.
 *
 *   LD_PRELOAD=.../libvolatile.so ashmem-passcost [ITERATIONS]
 *
 * For each interposed family, times the call as the program makes it (the
 * first definition: libvolatile's under LD_PRELOAD) against libc's own
 * (dlsym on libc.so.6, RTLD_NOLOAD), alternating rounds to share the
 * noise, and prints the medians in ns and their ratio. Not part of make
 * check: machines are noisy; doc/performance.md reports a run.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 15

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static long iters;
static int pipefd[2], memfd, nullfd, sockfd[2];

typedef void (*bench_fn)(void *);

struct pair {
	const char *name;
	void (*run)(void *sym);
	const char *sym;
	void *mine, *libc;
};

static void b_open(void *f)
{
	int (*o)(const char *, int, ...) = f;

	for (long i = 0; i < iters; i++)
		close(o("/dev/null", O_RDONLY));
}

static void b_stat(void *f)
{
	int (*s)(const char *, struct stat *) = f;
	struct stat st;

	for (long i = 0; i < iters; i++)
		s("/dev/null", &st);
}

static void b_fstat(void *f)
{
	int (*s)(int, struct stat *) = f;
	struct stat st;

	for (long i = 0; i < iters; i++)
		s(memfd, &st);
}

static void b_access(void *f)
{
	int (*a)(const char *, int) = f;

	for (long i = 0; i < iters; i++)
		a("/dev/null", R_OK);
}

static void b_ioctl(void *f)
{
	int (*io)(int, unsigned long, ...) = f;
	int n;

	for (long i = 0; i < iters; i++)
		io(pipefd[0], FIONREAD, &n);
}

static void b_mmap(void *f)
{
	void *(*m)(void *, size_t, int, int, int, off_t) = f;

	for (long i = 0; i < iters; i++)
		munmap(m(NULL, 4096, PROT_READ, MAP_SHARED, memfd, 0), 4096);
}

static void b_fcntl(void *f)
{
	int (*fc)(int, int, ...) = f;

	for (long i = 0; i < iters; i++)
		fc(nullfd, F_GETFL);
}

static void b_close(void *f)
{
	int (*c)(int) = f;

	for (long i = 0; i < iters; i++)
		c((int)syscall(SYS_dup, nullfd));
}

static void b_recvmmsg(void *f)
{
	int (*rm)(int, struct mmsghdr *, unsigned int, int, struct timespec *) = f;
	char c = 'x', got, cbuf[64];
	struct iovec iov = { &got, 1 };
	struct mmsghdr v;

	for (long i = 0; i < iters; i++) {
		memset(&v, 0, sizeof(v));
		v.msg_hdr.msg_iov = &iov;
		v.msg_hdr.msg_iovlen = 1;
		v.msg_hdr.msg_control = cbuf;
		v.msg_hdr.msg_controllen = sizeof(cbuf);
		if (write(sockfd[0], &c, 1) != 1)
			exit(2);
		rm(sockfd[1], &v, 1, 0, NULL);
	}
}

static double timed(void (*run)(void *), void *sym)
{
	double t = now_ns();

	run(sym);
	return (now_ns() - t) / (double)iters;
}

int main(int argc, char **argv)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	struct pair p[] = {
		{ "open+close", b_open, "open", NULL, NULL },
		{ "stat", b_stat, "stat", NULL, NULL },
		{ "fstat", b_fstat, "fstat", NULL, NULL },
		{ "access", b_access, "access", NULL, NULL },
		{ "ioctl FIONREAD", b_ioctl, "ioctl", NULL, NULL },
		{ "mmap+munmap 4K", b_mmap, "mmap", NULL, NULL },
		{ "fcntl F_GETFL", b_fcntl, "fcntl", NULL, NULL },
		{ "dup+close", b_close, "close", NULL, NULL },
		{ "write+recvmmsg", b_recvmmsg, "recvmmsg", NULL, NULL },
	};

	iters = argc > 1 ? atol(argv[1]) : 200000;
	if (libc == NULL || pipe(pipefd) != 0 || socketpair(AF_UNIX, SOCK_DGRAM, 0, sockfd) != 0)
		return 2;
	memfd = memfd_create("passcost", 0);
	nullfd = open("/dev/null", O_RDONLY);
	if (memfd < 0 || ftruncate(memfd, 4096) != 0 || nullfd < 0)
		return 2;
	printf("%-16s %10s %10s %8s   (%ld calls a round, median of %d rounds)\n", "call",
	       "first ns", "libc ns", "ratio", iters, ROUNDS);
	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
		double a[ROUNDS], b[ROUNDS];

		p[i].mine = dlsym(RTLD_DEFAULT, p[i].sym);
		p[i].libc = dlsym(libc, p[i].sym);
		if (p[i].mine == NULL || p[i].libc == NULL)
			return 2;
		p[i].run(p[i].mine); /* warm up, resolve */
		p[i].run(p[i].libc);
		for (int r = 0; r < ROUNDS; r++) {
			a[r] = timed(p[i].run, p[i].mine);
			b[r] = timed(p[i].run, p[i].libc);
		}
		qsort(a, ROUNDS, sizeof(double), cmp);
		qsort(b, ROUNDS, sizeof(double), cmp);
		printf("%-16s %10.1f %10.1f %8.3f%s\n", p[i].name, a[ROUNDS / 2], b[ROUNDS / 2],
		       a[ROUNDS / 2] / b[ROUNDS / 2],
		       p[i].mine == p[i].libc ? "   (not interposed)" : "");
	}
	return 0;
}
