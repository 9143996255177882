/* SPDX-License-Identifier: MIT */
/*
 * sandboxed - a host under a seccomp filter that traps system calls and
 * answers them from a SIGSYS handler, as browser sandboxes do.
 *
 *   sandboxed [thread | merge]
 *
 * With the shim and VOLATILE_BUDGET=64K. Traps pidfd_open and pidfd_getfd
 * (the handler answers EPERM), then marks 64K of one memfd and 64K of
 * another: the budget wants the first purged, which the library cannot
 * punch from where it is (a file it does not hold through the fd the
 * MARK gave it). The program must run to its end as without the library.
 * Prints each call's result.
 *
 * With "thread": a second thread installs the filter (no TSYNC: the
 * filter is that thread's alone, /proc/self/status, the main thread's,
 * says Seccomp: 0, or only volatile run's filters) and makes the calls.
 * The budget may then want a file of another process purged (one marked
 * before this program started).
 *
 * With "merge" (no budget): a MARK that joins a purged range, in the
 * sandboxed host (DESIGN 3, 13 point 4). A child forked before the filter
 * purges 4K of a memfd the host marked; the host marks 8K over it. Its
 * punch would go through the library's punching thread, which is not
 * made under this filter: the merged range stays flagged purged, the new
 * 4K intact, and UNMARK says 1. Prints the two pages' state and the
 * UNMARK.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "volatile.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

static volatile sig_atomic_t traps;

static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	traps++;
#ifdef REG_RAX
	uc->uc_mcontext.gregs[REG_RAX] = -EPERM;
#else
	(void)uc;
#endif
}

static int go[2], back[2];

/* the purger: forked before the filter, so not under it */
static void purger(void)
{
	int64_t (*purge)(uint64_t) = (int64_t(*)(uint64_t))dlsym(RTLD_DEFAULT, "volatile_purge");
	long long n = -1;
	char c;

	if (pipe(go) != 0 || pipe(back) != 0)
		exit(2);
	if (fork() != 0)
		return;
	if (read(go[0], &c, 1) == 1 && purge != NULL)
		n = (long long)purge(UINT64_MAX);
	_exit(write(back[1], &n, sizeof(n)) == (ssize_t)sizeof(n) ? 0 : 2);
}

/* "zeros", "intact" ('A'), or "mixed" */
static const char *page(int fd, off_t at)
{
	char buf[4096];
	int zeros = 0, as = 0;

	if (pread(fd, buf, sizeof(buf), at) != (ssize_t)sizeof(buf))
		return "unread";
	for (size_t i = 0; i < sizeof(buf); i++) {
		zeros += buf[i] == 0;
		as += buf[i] == 'A';
	}
	return zeros == (int)sizeof(buf) ? "zeros" : as == (int)sizeof(buf) ? "intact" : "mixed";
}

static void merge(int a)
{
	long long n = -1;
	char c = 0;

	printf("mark a = %d\n", fallocate(a, FALLOC_FL_MARK_VOLATILE, 0, 4096));
	if (write(go[1], &c, 1) != 1 || read(back[0], &n, sizeof(n)) != (ssize_t)sizeof(n))
		exit(2);
	printf("purged = %lld\n", n);
	printf("mark a = %d\n", fallocate(a, FALLOC_FL_MARK_VOLATILE, 0, 8192));
	printf("page 0: %s\n", page(a, 0));
	printf("page 1: %s\n", page(a, 4096));
	printf("unmark a = %d\n", fallocate(a, FALLOC_FL_UNMARK_VOLATILE, 0, 8192));
}

static void *sandboxed(void *arg)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pidfd_open, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pidfd_getfd, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	static char buf[65536];
	int a, b;

	(void)arg;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		printf("no seccomp here: %s\n", strerror(errno));
		exit(77);
	}
	memset(buf, 'A', sizeof(buf));
	a = memfd_create("a", 0);
	b = memfd_create("b", 0);
	if (pwrite(a, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf) ||
	    pwrite(b, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		exit(2);
	if (arg != NULL) {
		merge(a);
		return NULL;
	}
	printf("mark a = %d\n", fallocate(a, FALLOC_FL_MARK_VOLATILE, 0, 65536));
	printf("mark b = %d\n", fallocate(b, FALLOC_FL_MARK_VOLATILE, 0, 65536));
	printf("unmark a = %d\n", fallocate(a, FALLOC_FL_UNMARK_VOLATILE, 0, 65536));
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	pthread_t t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSYS, &sa, NULL);
	if (argc > 1 && strcmp(argv[1], "merge") == 0) {
		purger();
		sandboxed("merge");
	} else if (argc > 1 && strcmp(argv[1], "thread") == 0) {
		if (pthread_create(&t, NULL, sandboxed, NULL) != 0 || pthread_join(t, NULL) != 0)
			return 2;
	} else {
		sandboxed(NULL);
	}
	printf("the end\n");
	return 0;
}
