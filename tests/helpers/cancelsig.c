/* SPDX-License-Identifier: MIT */
/*
 * cancelsig - a thread cancelled while it holds a lock inside the library,
 * though the library calls no cancellation point (DESIGN 17).
 *
 *   cancelsig signal|async FILE
 *   cancelsig close
 *
 * Run with the fault-injecting library preloaded (its steps call
 * vl_fault_hook, defined here). A thread marks 4K of FILE, and at the
 * MARK's step "mark: committed, file locked" (the file's lock held):
 *
 *   signal: a cancellation is pending (deferred, the default type), and a
 *           signal arrives whose handler calls write(), async-signal-safe
 *           and a cancellation point: the self-pipe trick.
 *   async:  the thread runs with PTHREAD_CANCEL_ASYNCHRONOUS, and is
 *           cancelled there.
 *
 * Neither may cancel the thread inside the library: it would leave the
 * file's lock held by a live process, and every later MARK or UNMARK of
 * the file, in any process, fail with EAGAIN. The cancellation must act
 * at the thread's next cancellation point after the call.
 *
 * Prints what the thread's MARK returned, whether the thread was
 * cancelled, and what a MARK and an UNMARK of the main thread, then of a
 * child, return; exits 0 when all is well.
 *
 * close: the same signal, at the step "here: table taken" of a close() of
 * an ashmem region made here (the close hook holds the mutex of the
 * table of regions made here, outside the library's entry guard); then
 * the main thread closes another region: it must not wait for ever.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "volatile.h"

static int fd, pipefd[2], async, armed, hooked, thread_mark = -2;
static const char *step = "mark: committed, file locked";

void vl_fault_hook(const char *where) __attribute__((visibility("default")));

static void on_signal(int sig)
{
	char c = 's';

	(void)sig;
	/* write: async-signal-safe, and a cancellation point */
	if (write(pipefd[1], &c, 1) < 0) {
		/* the pipe is non-blocking: full is fine */
	}
}

void vl_fault_hook(const char *where)
{
	if (!__atomic_load_n(&armed, __ATOMIC_RELAXED) ||
	    strcmp(where, step) != 0)
		return;
	armed = 0;
	hooked = 1;
	if (async)
		pthread_cancel(pthread_self());
	else
		raise(SIGUSR1);
}

static void *marker(void *arg)
{
	(void)arg;
	if (async)
		pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	else
		pthread_cancel(pthread_self());
	__atomic_store_n(&armed, 1, __ATOMIC_RELAXED);
	thread_mark = fallocate(fd, FALLOC_FL_MARK_VOLATILE, 0, 4096);
	pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL);
	if (async)
		pthread_cancel(pthread_self());
	pthread_testcancel();
	return NULL;
}

static void *closer(void *arg)
{
	pthread_cancel(pthread_self());
	__atomic_store_n(&armed, 1, __ATOMIC_RELAXED);
	thread_mark = close(*(int *)arg);
	pthread_testcancel();
	return NULL;
}

/* close mode: a region made here, closed by a thread cancelled at the table's step */
static int close_main(void)
{
	int (*create)(const char *, size_t) =
		(int (*)(const char *, size_t))dlsym(RTLD_DEFAULT, "ashmem_create_region");
	int a, b, bad = 0;
	pthread_t t;
	void *res;

	if (create == NULL) {
		fprintf(stderr, "cancelsig: ashmem_create_region: not preloaded\n");
		return 2;
	}
	a = create("a", 4096);
	b = create("b", 4096);
	if (a < 0 || b < 0) {
		perror("ashmem_create_region");
		return 2;
	}
	step = "here: table taken";
	if (pthread_create(&t, NULL, closer, &a) != 0 || pthread_join(t, &res) != 0) {
		perror("thread");
		return 2;
	}
	printf("hook: %s\n", hooked ? "ran" : "did not run");
	printf("thread: %s\n", res == PTHREAD_CANCELED ? "canceled" : "not canceled");
	/* the table's mutex, left locked by the cancelled thread, would hold this for ever */
	printf("main: close %d\n", close(b));
	bad |= !hooked || res != PTHREAD_CANCELED;
	return bad;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	int mark, unmark, status, bad = 0;
	pthread_t t;
	void *res;
	pid_t pid;

	if ((argc != 3 || (strcmp(argv[1], "signal") != 0 && strcmp(argv[1], "async") != 0)) &&
	    (argc != 2 || strcmp(argv[1], "close") != 0)) {
		fprintf(stderr, "usage: cancelsig signal|async FILE | close\n");
		return 2;
	}
	async = strcmp(argv[1], "async") == 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	if (argc == 2) {
		alarm(20);
		if (pipe2(pipefd, O_NONBLOCK | O_CLOEXEC) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0) {
			perror("cancelsig");
			return 2;
		}
		return close_main();
	}
	fd = open(argv[2], O_RDWR);
	if (fd < 0 || pipe2(pipefd, O_NONBLOCK | O_CLOEXEC) != 0 ||
	    sigaction(SIGUSR1, &sa, NULL) != 0) {
		perror("cancelsig");
		return 2;
	}
	alarm(20);
	if (pthread_create(&t, NULL, marker, NULL) != 0 || pthread_join(t, &res) != 0) {
		perror("thread");
		return 2;
	}
	printf("hook: %s\n", hooked ? "ran" : "did not run");
	/*
	 * A deferred cancellation acts after the call. Where an asynchronous
	 * one acts (as the call leaves the library, its locks dropped; or
	 * not at all: glibc's versions differ) is not said: what matters is
	 * the calls after.
	 */
	if (!async) {
		printf("thread: mark %d, %s\n", thread_mark,
		       res != PTHREAD_CANCELED ? "not canceled"
		       : thread_mark == -2     ? "canceled inside the library"
					       : "canceled after");
		bad |= res != PTHREAD_CANCELED || thread_mark != 0;
	}
	bad |= !hooked;
	mark = fallocate(fd, FALLOC_FL_MARK_VOLATILE, 8192, 4096);
	unmark = fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, 0, 16384);
	printf("main: mark %d%s%s unmark %d\n", mark, mark ? " " : "", mark ? strerror(errno) : "",
	       unmark);
	bad |= mark != 0 || unmark != 0;
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 2;
	}
	if (pid == 0)
		_exit(fallocate(fd, FALLOC_FL_MARK_VOLATILE, 0, 4096) == 0 &&
			      fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, 0, 4096) == 0
		      ? 0
		      : 1);
	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		return 2;
	}
	printf("child: %s\n", WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "marked" : "failed");
	bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	return bad;
}
