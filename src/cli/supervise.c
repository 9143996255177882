/*
 * supervise.c - `volatile run`'s supervisor (DESIGN 21): volatile
 * fallocate calls that the preload cannot see, served through seccomp.
 *
 * The child of `run` installs, before it execs CMD, a filter that sends
 * to a listener only fallocate calls whose mode carries a volatile bit
 * (and, with the 2012 ABI on, the alias values): every other system call,
 * and fallocate with any other mode, stays in the kernel. It hands the
 * listener to `run`, which stays CMD's parent and serves each call:
 *
 *   receive          the call's pid, fd, mode, offset, length
 *   pidfd_open       the caller, then the notification checked still valid:
 *                    the pid is the caller's, who waits for our answer
 *   pidfd_getfd      our own descriptor of the caller's open file
 *   the library      vl_volatile_fallocate_as, with the caller and its fd
 *                    noted as the holder, so purgers reach the file through it
 *   respond          the result, or the errno, as the shim would give it
 *
 * A caller that cannot be looked into (not dumpable, ptrace refused) or an
 * alias mode on a file that is not tmpfs is let through to the kernel,
 * which answers as without the library (EOPNOTSUPP for a volatile mode).
 *
 * Why the filter is made by libseccomp but loaded here: an UNMARK served
 * and then interrupted by a signal before its answer lands would run
 * again after the handler (the call is restarted) and find its range gone:
 * "intact" for bytes that were purged. SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
 * (Linux 5.19) lets only a fatal signal interrupt a call the supervisor has
 * received; libseccomp 2.5 cannot set that flag, so its program is exported
 * and loaded with it by seccomp(2). A kernel without the flag gets no
 * filter: preload only.
 */
#include "cli.h"

#include "log.h"
#include "ops.h"
#include "ident.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef HAVE_SECCOMP
#include <seccomp.h>
#endif

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

/* the signals a user sends to `run` meaning CMD (SIGCHLD is run's own) */
static const int forwarded[] = { SIGHUP,  SIGINT,  SIGQUIT, SIGTERM,
				 SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH };

void vl_sv_signals(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(set, forwarded[i]);
	sigaddset(set, SIGCHLD);
}

/* What the child says to run: 0 and the listener (SCM_RIGHTS), or why not. */
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

#ifdef HAVE_SECCOMP

/* Is this the 32-bit ABI of a 64-bit x86 machine, whose calls we decode too? */
static int is_x86_compat(uint32_t arch)
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
	char line[256];
	long n = -1;
	FILE *f = fopen("/proc/self/status", "re");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "Seccomp_filters:", 16) == 0)
			n = strtol(line + 16, NULL, 10);
	fclose(f);
	return n;
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
 * In the child, before exec: no_new_privs, the filter, its listener sent
 * to run. Fails quietly (run says why with --debug): CMD then runs with
 * the preload only.
 */
void vl_sv_install(int sock, int aliases)
{
	struct sv_hello h = { 0, "" };
	struct sock_fprog prog = { 0, NULL };
	long fd = -1, before = filters_now();

	/* required for a filter without CAP_SYS_ADMIN; a parent may have set it: fine */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		h.err = errno;
		snprintf(h.why, sizeof(h.why), "no_new_privs: %s", strerror(errno));
	} else if ((h.err = -make_filter(aliases, &prog, h.why, sizeof(h.why))) == 0) {
		fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			     SECCOMP_FILTER_FLAG_NEW_LISTENER |
				     SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
			     &prog);
		if (fd < 0) {
			h.err = errno;
			/* EBUSY: a filter with a listener already (a volatile run inside another) */
			snprintf(h.why, sizeof(h.why), "seccomp(SET_MODE_FILTER, NEW_LISTENER): %s",
				 strerror(errno));
		}
	}
	free(prog.filter);
	if (fd >= 0)
		bless_filters(before);
	send_hello(sock, &h, (int)fd);
	if (fd >= 0)
		close((int)fd);
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* Linux 6.9: a pidfd for a thread, not only a leader */
#endif

static int pidfd_open_(pid_t pid, unsigned int flags)
{
	return (int)syscall(SYS_pidfd_open, pid, flags);
}

static int pidfd_getfd_(int pidfd, int fd)
{
	return (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
}

/* fallocate's number in the native ABI and in i386's (-1: none), known once */
static int nr_native = -1, nr_x86 = -1;

/* The call's arguments, as the caller's ABI passes them. */
struct call {
	int fd, mode;
	int64_t off, len;
};

static int decode(const struct seccomp_data *d, struct call *c)
{
	if ((uint32_t)d->arch == seccomp_arch_native() && d->nr == nr_native) {
		c->off = (int64_t)d->args[2];
		c->len = (int64_t)d->args[3];
	} else if (is_x86_compat(d->arch) && d->nr == nr_x86) {
		/* i386: the two 64-bit values come as low and high 32-bit halves */
		c->off = (int64_t)(((uint64_t)(uint32_t)d->args[3] << 32) | (uint32_t)d->args[2]);
		c->len = (int64_t)(((uint64_t)(uint32_t)d->args[5] << 32) | (uint32_t)d->args[4]);
	} else {
		return -1;
	}
	c->fd = (int)d->args[0];
	c->mode = (int)d->args[1];
	return 0;
}

/*
 * The callers' threads, by thread id: a pidfd of the thread itself and
 * its process's id (the holder a MARK notes). A thread pidfd is kept: while
 * it takes a descriptor (pidfd_getfd), its thread is alive, so holds its
 * id, so is the caller that waits with that id; once the thread is gone
 * it fails, and the id is looked up again. (A pidfd of a process, all a
 * kernel before 6.9 opens, would stay good after the thread's id went to
 * another process's thread: never kept.)
 */
#define THREADS 64
static struct thread {
	pid_t tid, tgid;
	int pidfd; /* -1: none kept */
} threads[THREADS];

/* tid's process, from /proc: the holder a MARK notes (a guess purgers check) */
static pid_t tgid_of(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = tid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (f == NULL)
		return tid;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "Tgid:", 5) == 0) {
			tgid = (pid_t)strtol(line + 5, NULL, 10);
			break;
		}
	fclose(f);
	return tgid > 0 ? tgid : tid;
}

static void forget_thread(struct thread *t)
{
	if (t->pidfd >= 0)
		close(t->pidfd);
	t->tid = 0;
	t->pidfd = -1;
}

#define GONE (-ESRCH) /* the caller is gone: nobody waits for an answer */

/*
 * Our own descriptor of the caller's fd, and the caller's process in
 * *tgid: the descriptor, or -errno (-EBADF: not open; GONE).
 */
static int take_fd(int listener, const struct seccomp_notif *req, int fd, pid_t *tgid)
{
	pid_t tid = (pid_t)req->pid;
	struct thread *t = &threads[(unsigned int)tid % THREADS];
	int pidfd, got, kept = 0;

	if (t->tid == tid && t->pidfd >= 0) {
		got = pidfd_getfd_(t->pidfd, fd);
		if (got >= 0 || errno == EBADF) {
			*tgid = t->tgid;
			return got >= 0 ? got : -EBADF;
		}
	}
	if (t->tid != 0)
		forget_thread(t);
	*tgid = tgid_of(tid);
	pidfd = pidfd_open_(tid, PIDFD_THREAD);
	if (pidfd >= 0)
		kept = 1;
	else if (errno == EINVAL && (pidfd = pidfd_open_(tid, 0)) < 0 && errno == EINVAL)
		pidfd = pidfd_open_(*tgid, 0); /* a thread that is not the leader */
	if (pidfd < 0)
		return errno == ESRCH ? GONE : -errno;
	/*
	 * Opened by number: the number is the caller's only while its call
	 * waits, and so is what /proc said of it before.
	 */
	if (seccomp_notify_id_valid(listener, req->id) != 0) {
		close(pidfd);
		return GONE;
	}
	got = pidfd_getfd_(pidfd, fd);
	if (got < 0)
		got = -errno;
	if (kept) {
		t->tid = tid;
		t->tgid = *tgid;
		t->pidfd = pidfd;
	} else {
		close(pidfd);
	}
	return got;
}

enum verdict {
	ANSWER,	  /* resp says what the call returns */
	CONTINUE, /* the kernel runs the call as the caller made it */
	NOBODY,	  /* the caller is gone */
};

/*
 * Serve one call: a volatile mode, or an alias one (the filter sends no
 * other). A caller we may not look into (not dumpable, another user's) and
 * a shortage of our own go on to the kernel, which answers as without the
 * library: EOPNOTSUPP.
 */
static enum verdict serve(int listener, const struct seccomp_notif *req,
			  struct seccomp_notif_resp *resp)
{
	struct call c;
	struct vl_holder as;
	pid_t tgid = 0;
	int fd, ret;

	if (decode(&req->data, &c) != 0)
		return CONTINUE;
	fd = take_fd(listener, req, c.fd, &tgid);
	if (fd == GONE)
		return NOBODY;
	if (fd == -EBADF) {
		resp->error = -EBADF; /* the caller's: DESIGN 5's first row */
		return ANSWER;
	}
	if (fd < 0)
		return CONTINUE;
	if (!(c.mode & (FALLOC_FL_MARK_VOLATILE | FALLOC_FL_UNMARK_VOLATILE))) {
		if (vl_is_tmpfs_file(fd) != 1) {
			close(fd);
			return CONTINUE;
		}
		c.mode = vl_alias_as_volatile(c.mode);
	}
	as.pid = (int32_t)tgid;
	as.fd = c.fd;
	ret = vl_volatile_fallocate_as(fd, c.mode, c.off, c.len, &as);
	close(fd);
	if (ret < 0)
		resp->error = ret;
	else
		resp->val = ret;
	if (vl_log_enabled())
		fprintf(stderr, "volatile run: served pid %u: %s fd %d [%lld, +%lld) = %d%s%s\n",
			req->pid, c.mode & FALLOC_FL_MARK_VOLATILE ? "mark" : "unmark", c.fd,
			(long long)c.off, (long long)c.len, ret < 0 ? -1 : ret,
			ret < 0 ? " " : "", ret < 0 ? strerror(-ret) : "");
	return ANSWER;
}

struct server {
	int listener;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
};

/*
 * The serving thread: one call at a time, each answered (unless its caller
 * is gone), until the listener fails (no process uses the filter any
 * more) or the process exits with CMD.
 */
static void *serve_loop(void *arg)
{
	struct server *sv = arg;

	for (;;) {
		struct seccomp_notif *req = sv->req;
		struct seccomp_notif_resp *resp = sv->resp;
		enum verdict v;

		memset(req, 0, sizeof(*req));
		if (seccomp_notify_receive(sv->listener, req) != 0) {
			/* ENOENT: a caller gone before we looked */
			if (errno == EINTR || errno == ENOENT)
				continue;
			return NULL;
		}
		memset(resp, 0, sizeof(*resp));
		resp->id = req->id;
		v = serve(sv->listener, req, resp);
		if (v == NOBODY)
			continue;
		if (v == CONTINUE) {
			resp->error = 0;
			resp->val = 0;
			resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		}
		/* ENOENT: the caller was killed meanwhile; nothing waits for the answer */
		(void)seccomp_notify_respond(sv->listener, resp);
	}
}

/* Serve listener in a thread of its own: 0, or -1 (nothing served). */
static int start_server(int listener)
{
	static struct server sv;
	pthread_attr_t attr;
	pthread_t t;
	int err;

	for (int i = 0; i < THREADS; i++)
		threads[i].pidfd = -1;
	nr_native = seccomp_syscall_resolve_name("fallocate");
	if (seccomp_arch_native() == SCMP_ARCH_X86_64)
		nr_x86 = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86, "fallocate");
	if (seccomp_notify_alloc(&sv.req, &sv.resp) != 0)
		return -1;
	sv.listener = listener;
	/*
	 * The caller waits while we serve, and we wait while it runs: woken
	 * on the CPU of the one that wakes it (Linux 6.6), each call is two
	 * switches instead of two wake-ups of an idle CPU (tens of
	 * microseconds each on a virtual machine). Older kernels: EINVAL.
	 */
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* the signals stay blocked in it (inherited): they are the main thread's */
	err = pthread_create(&t, &attr, serve_loop, &sv);
	pthread_attr_destroy(&attr);
	return err == 0 ? 0 : -1;
}

#else /* !HAVE_SECCOMP */

void vl_sv_install(int sock, int aliases)
{
	struct sv_hello h = { ENOSYS, "volatile was built without libseccomp" };

	(void)aliases;
	send_hello(sock, &h, -1);
}

#endif

/* Exit as CMD did: its code, or its signal (no core of ours). */
static void exit_as(int status)
{
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		sigset_t all;

		signal(sig, SIG_DFL);
		sigemptyset(&all);
		sigaddset(&all, sig);
		sigprocmask(SIG_UNBLOCK, &all, NULL);
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		raise(sig);
		_exit(128 + sig);
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

/*
 * Forward a signal meant for CMD: one a process sent to run. One the
 * terminal sent (SI_KERNEL: to the whole foreground group) reached CMD
 * too, and one CMD sent to its group came from it.
 */
static void forward(pid_t child, const struct signalfd_siginfo *si)
{
	if (si->ssi_code == SI_KERNEL || (pid_t)si->ssi_pid == child)
		return;
	kill(child, (int)si->ssi_signo);
}

void vl_sv_serve(pid_t child, int listener, int sigfd)
{
#ifdef HAVE_SECCOMP
	if (listener >= 0 && start_server(listener) != 0) {
		/* the filter's calls then get ENOSYS, as with a supervisor gone */
		close(listener);
		listener = -1;
	}
#else
	(void)listener;
#endif
	for (;;) {
		struct pollfd p = { sigfd, POLLIN, 0 };
		struct signalfd_siginfo si;
		int status;

		if (poll(&p, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("run: poll: %s", strerror(errno));
		}
		while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			if (si.ssi_signo != SIGCHLD)
				forward(child, &si);
		/* CMD's descendants still under the filter get ENOSYS once we are gone */
		if (waitpid(child, &status, WNOHANG) == child)
			exit_as(status);
	}
}
