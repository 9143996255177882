/* SPDX-License-Identifier: MIT */
/*
 * punch.c - a purge's punch through a file it does not hold (see punch.h).
 *
 * Why a thread of its own, and what it may do. Closing an fd drops the
 * closing fd table's POSIX locks on that file (fcntl F_SETLK), whichever
 * fd they were taken through; a purge that opened a file, even one it
 * checked the host held no lock on a moment before, dropped a lock
 * another thread took in between. A thread made with clone(CLONE_VM |
 * CLONE_THREAD | CLONE_SIGHAND | CLONE_VFORK) and without CLONE_FILES runs
 * on a copy of the fd table: what it opens and closes, and what its exit
 * closes, are its own table's, which owns no lock. A thread, not a child
 * process: nothing the host waits for (a wait(-1, __WALL) reaped a child
 * the host never made), no SIGCHLD. CLONE_VFORK stops the calling thread
 * until it has exited; the host's other threads run on, so it takes no
 * lock they might hold (no malloc, no stdio, no log) and writes only its
 * result: it runs on the calling thread's TLS, errno included, which the
 * system calls of sys.h leave alone (errno is put back all the same). Every signal it may
 * block is blocked in it, so the host's handlers never run there (glibc
 * keeps two of its own open, which it only sends to the threads it
 * made); so it is not made under a seccomp filter (vl_punch_ready). A
 * fault in it would end the whole process, as one in the calling thread
 * would.
 */
#include "punch.h"

#include "core/fault.h"
#include "env.h"
#include "file_route.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHILD_STACK (64 * 1024)

static int here; /* no POSIX locks of our own to keep: no child needed */

void vl_punch_here(void)
{
	here = 1;
}

/*
 * A writable fd on the file, checked to be it: the holder's own, taken
 * with pidfd_getfd (nothing is opened, so no lease breaks), else a reopen
 * of the O_PATH fd, which names the inode itself. < 0 if neither works.
 */
static int writable(const struct vl_way *w, const struct vl_ident *id)
{
	char self[64];
	int fd = -1;

	if (w->via.pid > 0 && w->via.fd >= 0) {
		int pfd = (int)VL_SYSCALL("pidfd_open", vl_raw_pidfd_open(w->via.pid, 0));

		if (pfd >= 0) {
			fd = (int)VL_SYSCALL("pidfd_getfd",
					     vl_raw_pidfd_getfd(pfd, w->via.fd, 0));
			vl_raw_close(pfd);
		}
		if (fd >= 0 && !vl_fd_is(fd, id)) {
			vl_raw_close(fd);
			fd = -1;
		}
	}
	if (fd < 0 && w->opath >= 0) {
		/* the fd table this thread runs on (its copy), not the process's */
		snprintf(self, sizeof(self), "/proc/thread-self/fd/%d", w->opath);
		fd = VL_SYSCALL("reopen",
				vl_raw_open(self, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
		if (fd >= 0 && !vl_fd_is(fd, id)) {
			vl_raw_close(fd);
			fd = -1;
		}
	}
	return fd;
}

int vl_punch_extents(int fd, const struct vl_extent *ext, int k)
{
	int done = 0;

	for (int i = 0; i < k; i++) {
		VL_STEP("purge: flagged purged, not punched");
		if (vl_sys_punch(fd, ext[i].start, ext[i].end - ext[i].start) == 0)
			done++;
		VL_STEP("purge: punched, file locked");
	}
	return done;
}

/*
 * Through w, or the fd number theirs (the caller's: in a thread of ours
 * a copy of it, which nobody can renumber while we use it), once the
 * gate opened; the gate is held across every punch.
 */
static int punch_through(const struct vl_way *w, int theirs, const struct vl_ident *id,
			 const struct vl_extent *ext, int k, struct vl_gate *g)
{
	int fd, done;

	if (g != NULL && g->open(g) != 1) {
		if (g->close != NULL)
			g->close(g);
		return -ESTALE;
	}
	if (w != NULL)
		fd = writable(w, id);
	else
		fd = vl_fd_is(theirs, id) ? theirs : -1;
	if (fd < 0) {
		done = -EBADF;
	} else {
		done = vl_punch_extents(fd, ext, k);
		if (w != NULL)
			vl_raw_close(fd);
	}
	if (g != NULL && g->close != NULL)
		g->close(g);
	return done;
}

struct job {
	const struct vl_way *w;
	int theirs;
	const struct vl_ident *id;
	const struct vl_extent *ext;
	int k;
	struct vl_gate *g;
	int result;
};

static int child(void *arg)
{
	struct job *j = arg;

	j->result = punch_through(j->w, j->theirs, j->id, j->ext, j->k, j->g);
	return 0;
}

/* the number after "\nNAME:" in a /proc status text, or -1 */
static long status_field(const char *buf, const char *name)
{
	const char *p = strstr(buf, name);

	return p != NULL ? strtol(p + strlen(name), NULL, 10) : -1;
}

/*
 * May this process punch through a way (a thread of ours, in a host)? Not
 * under a seccomp filter: one that traps a system call (SECCOMP_RET_TRAP,
 * as browser sandboxes do, answering from a SIGSYS handler) would send
 * SIGSYS to the thread, which blocks every signal, and a blocked SIGSYS
 * that the kernel forces kills the process. Such a host leaves files it
 * does not hold to other processes (the daemon, volatile purge). Asked at
 * each purge visit: a host may install a filter at any time. A filter is
 * a thread's (one installed without TSYNC is its thread's alone), and the
 * punch thread inherits the calling thread's: so this thread's status is
 * read, /proc/thread-self, not the main thread's (/proc/self). The filters
 * are all volatile run's when there are as many as it said it installed
 * (VOLATILE_SECCOMP_FILTERS): they send only volatile fallocate calls,
 * which the thread never makes, to the supervisor, and no signal.
 */
int vl_punch_ready(void)
{
	char buf[4096];
	long mode;
	int fd;
	ssize_t n;

	if (here)
		return 1;
	fd = VL_SYSCALL("open thread status",
			vl_raw_open("/proc/thread-self/status", O_RDONLY | O_CLOEXEC));
	if (fd < 0)
		return 0;
	n = VL_SYSCALL("read thread status", vl_raw_read(fd, buf, sizeof(buf) - 1));
	vl_raw_close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	mode = status_field(buf, "\nSeccomp:");
	if (mode == 0)
		return 1;
	return mode == 2 && vl_config()->run_filters > 0 &&
	       status_field(buf, "\nSeccomp_filters:") == (long)vl_config()->run_filters;
}

static int punch_job(struct job *j)
{
	sigset_t all, old;
	int saved = errno;
	void *stack;
	pid_t pid;

	if (here)
		return punch_through(j->w, j->theirs, j->id, j->ext, j->k, j->g);
	stack = VL_SYSCALL_PTR("punch stack", vl_raw_mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE,
							  MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
							  -1, 0));
	if (vl_map_error(stack))
		return -ENOMEM;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = VL_SYSCALL("clone", vl_raw_clone(child, (char *)stack + CHILD_STACK,
					CLONE_VM | CLONE_SIGHAND | CLONE_THREAD | CLONE_VFORK, j));
	/* returned once the thread has exited (CLONE_VFORK); a sandbox may forbid it */
	if (pid < 0)
		j->result = pid;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	vl_raw_munmap(stack, CHILD_STACK);
	errno = saved;
	return j->result;
}

int vl_punch_way(const struct vl_way *w, const struct vl_ident *id, const struct vl_extent *ext,
		 int k, struct vl_gate *g)
{
	struct job j = { w, -1, id, ext, k, g, -ECHILD };

	return punch_job(&j);
}

int vl_punch_fd(int fd, const struct vl_ident *id, const struct vl_extent *ext, int k,
		struct vl_gate *g)
{
	struct job j = { NULL, fd, id, ext, k, g, -ECHILD };

	/*
	 * The gate's fds go into the thread's own table, never the host's
	 * (DESIGN 17): where that thread may not be made, no punch.
	 */
	if (!here && !vl_punch_ready())
		return -EPERM;
	return punch_job(&j);
}
