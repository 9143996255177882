/* SPDX-License-Identifier: MIT */
/*
 * filter.c - `volatile run`'s seccomp filter (DESIGN 21), put on run's own
 * process before it execs CMD in its place, and its listener handed to the
 * supervisor (supervise.c) over a socket.
 *
 * The filter sends to the listener only fallocate calls whose mode carries
 * a volatile bit (and, with the 2012 ABI on, the alias values): every other
 * system call, and fallocate with any other mode, stays in the kernel.
 * Programs of an ABI it does not know (not this machine's, nor i386 on
 * x86-64) run untouched.
 *
 * Made by libseccomp, loaded here: an UNMARK served and then interrupted by
 * a signal before its answer lands would run again after the handler (the
 * call is restarted) and find its range gone: "intact" for bytes that were
 * purged. SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (Linux 5.19) lets only a
 * fatal signal interrupt a call the supervisor has received; libseccomp 2.5
 * cannot set that flag, so its program is exported and loaded with it by
 * seccomp(2). A kernel without the flag gets no filter: preload only.
 */
#include "cli.h"

#include "ops.h"
#include "sys.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef HAVE_SECCOMP
#include <seccomp.h>
#endif

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/* What run hands the supervisor: 0 and the listener (SCM_RIGHTS). */
struct sv_hello {
	int err;
	char why[120];
};

static void send_hello(int sock, const struct sv_hello *h, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { (void *)h, sizeof(*h) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	while (sendmsg(sock, &msg, MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

int vl_sv_receive(int sock, char *why, size_t size)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct sv_hello h;
	struct iovec iov = { &h, sizeof(h) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	ssize_t n;
	int fd = -1;

	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(h)) {
		snprintf(why, size, "the child said nothing");
		return -EPROTO;
	}
	for (c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
	h.why[sizeof(h.why) - 1] = '\0';
	if (h.err != 0 || fd < 0) {
		if (fd >= 0)
			close(fd);
		snprintf(why, size, "%s", h.why[0] ? h.why : "no listener");
		return h.err ? -h.err : -EPROTO;
	}
	return fd;
}

void vl_sv_hand(int sock, int listener)
{
	struct sv_hello h = { 0, "" };

	send_hello(sock, &h, listener);
}

#ifdef HAVE_SECCOMP

/* Is this the 32-bit ABI of a 64-bit x86 machine, whose calls we serve too? */
int vl_sv_x86_compat(uint32_t arch)
{
	return arch == SCMP_ARCH_X86 && seccomp_arch_native() == SCMP_ARCH_X86_64;
}

/* The filter, as libseccomp writes it: 0, or -errno with why. */
static int make_filter(int aliases, struct sock_fprog *prog, char *why, size_t size)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int err, mfd = -1;
	off_t len;

	if (ctx == NULL) {
		snprintf(why, size, "libseccomp: cannot make a filter");
		return -ENOMEM;
	}
	/* programs of an ABI the filter does not know run untouched, never killed */
	err = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW);
	if (err == 0 && seccomp_arch_native() == SCMP_ARCH_X86_64)
		err = seccomp_arch_add(ctx, SCMP_ARCH_X86);
	if (err == 0)
		err = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(fallocate), 1,
				       SCMP_A1(SCMP_CMP_MASKED_EQ, FALLOC_FL_MARK_VOLATILE,
					       FALLOC_FL_MARK_VOLATILE));
	if (err == 0)
		err = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(fallocate), 1,
				       SCMP_A1(SCMP_CMP_MASKED_EQ, FALLOC_FL_UNMARK_VOLATILE,
					       FALLOC_FL_UNMARK_VOLATILE));
	/* the mode is an int: only its low 32 bits are compared */
	for (int a = 0; aliases && err == 0 && a < 2; a++)
		err = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(fallocate), 1,
				       SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu & ~FALLOC_FL_KEEP_SIZE,
					       a ? VL_ALIAS_UNMARK : VL_ALIAS_MARK));
	if (err == 0) {
		mfd = memfd_create("volatile-filter", MFD_CLOEXEC);
		err = mfd < 0 ? -errno : seccomp_export_bpf(ctx, mfd);
	}
	seccomp_release(ctx);
	if (err != 0) {
		snprintf(why, size, "libseccomp: %s", strerror(-err));
		goto out;
	}
	len = lseek(mfd, 0, SEEK_END);
	if (len <= 0 || len % (off_t)sizeof(struct sock_filter) != 0 ||
	    (prog->filter = malloc((size_t)len)) == NULL ||
	    pread(mfd, prog->filter, (size_t)len, 0) != (ssize_t)len) {
		snprintf(why, size, "libseccomp: no filter program written");
		err = -EIO;
		goto out;
	}
	prog->len = (unsigned short)(len / (off_t)sizeof(struct sock_filter));
out:
	if (mfd >= 0)
		close(mfd);
	return err;
}

/* This process's seccomp filters (/proc/self/status), or -1 if it cannot tell. */
static long filters_now(void)
{
	return proc_status_number("/proc/self/status", "Seccomp_filters:", 0);
}

/*
 * Tell the library in CMD how many of its filters are run's (punch.c):
 * ours and those before it, if all of those were run's too; else none,
 * as a filter we know nothing of may trap with a signal.
 */
static void bless_filters(long before)
{
	const char *v = getenv("VOLATILE_SECCOMP_FILTERS");
	long known = v != NULL ? strtol(v, NULL, 10) : 0;
	char buf[16];

	if (before < 0 || before != known || before >= 99) {
		unsetenv("VOLATILE_SECCOMP_FILTERS");
		return;
	}
	snprintf(buf, sizeof(buf), "%ld", before + 1);
	setenv("VOLATILE_SECCOMP_FILTERS", buf, 1);
}

/*
 * Before exec: no_new_privs, the filter; its listener, or -errno and why
 * (run says it with --debug: CMD then runs with the preload only). With
 * the filter in, CMD's tree is told which region run serves
 * (VOLATILE_RUN_REGION: "" the default place, else a path), so that a
 * `volatile run` inside, whose own filter the kernel refuses (EBUSY: one
 * listener in a chain), can say whether this run serves it (run.c). Only
 * that line depends on it: the supervisor judges each caller by its own
 * environment (supervise.c), whatever the variable says.
 */
int vl_sv_install(int aliases, const char *region, char *why, size_t size)
{
	struct sock_fprog prog = { 0, NULL };
	long fd = -1, before = filters_now();
	int err;

	/* required for a filter without CAP_SYS_ADMIN; a parent may have set it: fine */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		err = -errno;
		snprintf(why, size, "no_new_privs: %s", strerror(errno));
		return err;
	}
	err = make_filter(aliases, &prog, why, size);
	if (err == 0) {
		fd = vl_raw_seccomp(SECCOMP_SET_MODE_FILTER,
				    SECCOMP_FILTER_FLAG_NEW_LISTENER |
					    SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
				    &prog);
		if (fd < 0) {
			err = (int)fd;
			/* EBUSY: a filter with a listener already (a volatile run inside another) */
			snprintf(why, size, "seccomp(SET_MODE_FILTER, NEW_LISTENER): %s",
				 strerror(-err));
		}
	}
	free(prog.filter);
	if (fd < 0)
		return err;
	bless_filters(before);
	setenv("VOLATILE_RUN_REGION", region, 1);
	return (int)fd;
}

#else /* !HAVE_SECCOMP */

int vl_sv_install(int aliases, const char *region, char *why, size_t size)
{
	(void)aliases;
	(void)region;
	snprintf(why, size, "volatile was built without libseccomp");
	return -ENOSYS;
}

#endif
