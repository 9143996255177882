/* SPDX-License-Identifier: MIT */
/*
 * noseccomp - a sandbox that refuses seccomp, for the tests of `volatile
 * run` (DESIGN 1): when the kernel or a sandbox refuses the filter, run
 * goes on with the preload only.
 *
 *   noseccomp CMD [ARG...]   set no_new_privs, install a filter (raw BPF,
 *                            no library) that makes seccomp(2) and
 *                            prctl(PR_SET_SECCOMP) fail with EPERM, as a
 *                            container runtime's profile may; exec CMD
 *   noseccomp --probe        may this process (a child of it) install a
 *                            filter with a user-notification listener, as
 *                            run needs? Exit 0 if so; else say why, exit 1
 *
 * Exit status 127 if CMD cannot be run, 2 on bad usage or a failed setup.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define ARCH AUDIT_ARCH_I386
#else
#error "noseccomp: add this architecture's AUDIT_ARCH"
#endif

static long seccomp_call(unsigned op, unsigned long flags, void *arg)
{
	return syscall(SYS_seccomp, op, flags, arg);
}

/* a child tries what run's child does: no_new_privs, a listener filter */
static int probe(void)
{
	struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_fprog prog = { 1, allow };
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		perror("noseccomp: fork");
		return 2;
	}
	if (pid == 0) {
		long fd;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
			printf("prctl(PR_SET_NO_NEW_PRIVS): %s\n", strerror(errno));
			_exit(1);
		}
		fd = seccomp_call(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
		if (fd < 0) {
			printf("seccomp(SECCOMP_SET_MODE_FILTER, NEW_LISTENER): %s\n", strerror(errno));
			_exit(1);
		}
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 2;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_seccomp, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_SECCOMP, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (argc == 2 && strcmp(argv[1], "--probe") == 0)
		return probe();
	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: noseccomp CMD [ARG...] | noseccomp --probe\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		fprintf(stderr, "noseccomp: prctl(PR_SET_NO_NEW_PRIVS): %s\n", strerror(errno));
		return 2;
	}
	if (seccomp_call(SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
		fprintf(stderr, "noseccomp: seccomp(SECCOMP_SET_MODE_FILTER): %s\n", strerror(errno));
		return 2;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "noseccomp: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
