/* SPDX-License-Identifier: MIT */
/*
 * selfpage - this process's own mutexes (this_process.c) when its self
 * page could not be had at first and can be later.
 *
 *   selfpage LIBRARY   LIBRARY: the fault-injecting build (its steps call
 *                      vl_fault_hook, here)
 *
 * The main thread, under a seccomp filter of its own (raw BPF, this thread
 * only) that refuses madvise(MADV_WIPEONFORK) as a sandbox may, or as a
 * process out of mappings would fail the page's mmap, dlopens LIBRARY: its
 * page cannot be had, so the library works in its static fallback. The
 * main thread makes an ashmem region and closes it; at the step where that
 * close holds the table of regions made here (the HERE mutex, "here: table
 * taken"), a second thread, made before the filter, makes a region too,
 * which takes that table, and the main thread waits one second for it.
 * The second thread must wait for the main thread's close: prints
 * "excluded" and exits 0 if it did, "both in the table" and exits 1 if it
 * got in meanwhile. Exit status 2 on a failed setup.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <semaphore.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define ARCH AUDIT_ARCH_I386
#else
#error "selfpage: add this architecture's AUDIT_ARCH"
#endif

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

typedef int (*create_fn)(const char *, size_t);
typedef int (*close_fn)(int);

static create_fn create;
static pthread_t main_thread;
static sem_t go, done;
static int armed, inside;

/* madvise(..., MADV_WIPEONFORK) fails with EPERM in the calling thread from now on */
static int refuse_wipeonfork(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_madvise, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADV_WIPEONFORK, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		fprintf(stderr, "selfpage: prctl(PR_SET_NO_NEW_PRIVS): %s\n", strerror(errno));
		return -1;
	}
	/* no SECCOMP_FILTER_FLAG_TSYNC: the other thread stays free */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
		fprintf(stderr, "selfpage: seccomp(SECCOMP_SET_MODE_FILTER): %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* The second thread: one region made, when told */
static void *other(void *arg)
{
	int fd;

	(void)arg;
	sem_wait(&go);
	fd = create("selfpage-other", 4096);
	if (fd < 0)
		fprintf(stderr, "selfpage: the other thread's ashmem_create_region: %s\n",
			strerror(errno));
	sem_post(&done);
	return NULL;
}

/* The main thread's close holds the table: the other thread makes its region meanwhile */
void vl_fault_hook(const char *where) __attribute__((visibility("default")));
void vl_fault_hook(const char *where)
{
	struct timespec until;
	int r;

	if (!armed || !pthread_equal(pthread_self(), main_thread) ||
	    strcmp(where, "here: table taken") != 0)
		return;
	armed = 0;
	sem_post(&go);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 1;
	do
		r = sem_timedwait(&done, &until);
	while (r != 0 && errno == EINTR);
	if (r == 0)
		inside = 1; /* it made its region: it had the table too */
}

int main(int argc, char **argv)
{
	pthread_t t;
	close_fn lclose;
	void *lib;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: selfpage LIBRARY\n");
		return 2;
	}
	main_thread = pthread_self();
	sem_init(&go, 0, 0);
	sem_init(&done, 0, 0);
	if (pthread_create(&t, NULL, other, NULL) != 0 || refuse_wipeonfork() != 0)
		return 2;
	lib = dlopen(argv[1], RTLD_NOW);
	if (lib == NULL) {
		fprintf(stderr, "selfpage: %s\n", dlerror());
		return 2;
	}
	create = (create_fn)dlsym(lib, "ashmem_create_region");
	lclose = (close_fn)dlsym(lib, "close");
	if (create == NULL || lclose == NULL) {
		fprintf(stderr, "selfpage: no ashmem_create_region or close in %s\n", argv[1]);
		return 2;
	}
	fd = create("selfpage", 4096);
	if (fd < 0) {
		fprintf(stderr, "selfpage: ashmem_create_region: %s\n", strerror(errno));
		return 2;
	}
	errno = 0;
	armed = 1;
	lclose(fd);
	if (armed) {
		fprintf(stderr, "selfpage: the close never held the table (no step \"here: table taken\")\n");
		return 2;
	}
	if (!inside)
		sem_wait(&done);
	pthread_join(t, NULL);
	printf("%s\n", inside ? "both in the table" : "excluded");
	return inside;
}
