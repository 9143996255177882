/* SPDX-License-Identifier: MIT */
/*
 * behave - programs that must behave under the library exactly as
 * without it. A program, not linked with the library: the
 * shell tests run it with LD_PRELOAD (the libcutils API is looked up with
 * dlsym, as the preloaded library defines it). One subcommand a run:
 *
 *   forklock KIND A B    KIND fork, _Fork or clone (glibc's wrapper, no
 *                        CLONE_VM, a stack of its own). This process
 *                        attaches first (a MARK and an UNMARK of a memfd),
 *                        then makes a child of that kind, which takes a
 *                        POSIX write lock (F_SETLK) on tmpfs file A, marks
 *                        4K of A, then 4K of B: its budget (VOLATILE_BUDGET=4K)
 *                        purges A's range in the child. This process asks
 *                        F_GETLK: the lock must still be the child's.
 *                        "KIND: lock held by the child" or "... LOST";
 *                        "KIND: unmark A = R" (the child's UNMARK: 1)
 *   vfork dev|api cloexec|inherit ACTION
 *                        a region (opened as /dev/ashmem, SET_NAME,
 *                        SET_SIZE; or ashmem_create_region), prot mask
 *                        PROT_READ; a vfork child does ACTION on it (close,
 *                        dup2: dup2 of /dev/null over it; close-exec,
 *                        dup2-exec: the same, then exec /bin/true; exit,
 *                        exec: nothing, then _exit or exec). Then, here:
 *                        "map rw" (EPERM wanted), "getprot" (1), "getname",
 *                        "fstat" (chr 10:61 for dev, reg for api), "map r"
 *   attachfork HPID      a thread makes this process's first MARK, which
 *                        waits (the region's lock is held by HPID, stopped);
 *                        meanwhile this thread calls _Fork and the child
 *                        MARKs; HPID is continued. "child: mark = R" or
 *                        "child: HUNG"; "thread: mark = R"
 *   attachsig            this thread's first MARK waits as above (the
 *                        holder is continued by the test, once the handler
 *                        has run: BEHAVE_ALARMED);
 *                        a SIGALRM handler that interrupts it calls fork();
 *                        both go on: "parent: mark = R", "child: mark = R"
 *                        or "child: HUNG"
 *   siginlib unpin|mark GO
 *                        a region (dev), prot mask PROT_READ, mapped
 *                        read-only; "ready"; waits for file GO (by then
 *                        another process holds the region's lock, stopped,
 *                        until the test continues it once the handler has
 *                        run: BEHAVE_ALARMED); then
 *                        an UNPIN of the region (or a MARK of a memfd)
 *                        waits for that lock, and a SIGALRM handler
 *                        interrupting it asks the region: GET_SIZE, mmap
 *                        rw, fstat. "handler: getsize = ...",
 *                        "handler: map rw = ...", "handler: fstat = ...",
 *                        then the interrupted call's "unpin = R"/"mark = R"
 *   dupfail dev|api      a failed dup2/dup3 onto a region fd (PROT_READ
 *                        mask): dup2(-1, R), dup2(a closed fd, R),
 *                        dup3(other region, R, bad flags), dup3(R, R, 0);
 *                        after each "map rw" and "fstat" of R
 *   recv msg|mmsg        a child sends a memfd named "wl_shm" over a Unix
 *                        socket; this process receives it (recvmsg, or
 *                        recvmmsg), maps it, writes, fstats, dups, closes
 *   ownmemfd [high]      a memfd of its own: mmap, dup, dup2, F_DUPFD,
 *                        fstat, close (high: dup2'd to fd 70000 first and
 *                        used there)
 *   vforkkeep            a region (dev, not close-on-exec, prot mask
 *                        PROT_READ, named "kept"); a vfork child execs this
 *                        program as "holdfd FD GO", which keeps the fd;
 *                        this process closes its own; the child then asks:
 *                        "held: getprot = 1", "getname = kept",
 *                        "held: map rw = -1 EPERM"
 *   closehigh low|dupl|dup|made
 *                        ashmem_create_region, then close it: low: at its
 *                        own (low) fd; dupl: dup2'd to 50, the original
 *                        closed, then 50; dup: the same at 5000; made: made
 *                        at an fd above 5000 (every lower one in use)
 *
 * recv and ownmemfd end with "region: not mapped" (or "region:
 * MAPPED", from this process's /proc/self/maps: a mapping of
 * $VOLATILE_REGION or at a region's offset in its file).
 *
 * Exit status 0 when it ran to its end (the shell tests read the lines),
 * 2 on bad usage or a failed step of the setup, 77 when the machine
 * forbids a step (said on stdout).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/ashmem.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "say.h"

#include "volatile.h"

#define REGION_SIZE 65536
#define REGION_OFFSET "0564c000" /* VL_MAP_OFFSET, as /proc/PID/maps shows it */

static int memfd(const char *name, off_t size)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, size) != 0)
		die("memfd");
	return fd;
}

static void raise_nofile(rlim_t want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		die("getrlimit");
	if (rl.rlim_cur >= want)
		return;
	if (rl.rlim_max < want) {
		rl.rlim_max = want;
		rl.rlim_cur = want;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
			printf("RLIMIT_NOFILE cannot be raised to %lu (%s)\n", (unsigned long)want,
			       ename(errno));
			exit(77);
		}
		return;
	}
	rl.rlim_cur = want;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		die("setrlimit");
}

/* ---- regions ---------------------------------------------------------------- */

static int api_create(const char *name, size_t size)
{
	int (*create)(const char *, size_t) =
		(int (*)(const char *, size_t))dlsym(RTLD_DEFAULT, "ashmem_create_region");

	if (create == NULL) {
		printf("setup: ashmem_create_region not found: run with the library preloaded\n");
		exit(2);
	}
	return create(name, size);
}

/* A region named name, REGION_SIZE bytes: opened as /dev/ashmem (dev) or made by the API. */
static int region(int dev, int cloexec, const char *name)
{
	int fd;

	if (dev) {
		char buf[ASHMEM_NAME_LEN];

		fd = open("/dev/ashmem", O_RDWR | (cloexec ? O_CLOEXEC : 0));
		if (fd < 0)
			die("open /dev/ashmem");
		snprintf(buf, sizeof(buf), "%s", name);
		if (ioctl(fd, ASHMEM_SET_NAME, buf) != 0 ||
		    ioctl(fd, ASHMEM_SET_SIZE, (size_t)REGION_SIZE) != 0)
			die("SET_NAME, SET_SIZE");
	} else {
		fd = api_create(name, REGION_SIZE);
		if (fd < 0)
			die("ashmem_create_region");
		if (!cloexec && fcntl(fd, F_SETFD, 0) != 0)
			die("F_SETFD");
	}
	if (ioctl(fd, ASHMEM_SET_PROT_MASK, (unsigned long)PROT_READ) != 0)
		die("SET_PROT_MASK");
	return fd;
}

/* "map rw = ok" or "map rw = -1 EPERM": a shared writable mapping of fd */
static void try_map(const char *pre, int fd, int prot)
{
	void *p = mmap(NULL, REGION_SIZE, prot, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED) {
		printf("%smap %s = -1 %s\n", pre, prot & PROT_WRITE ? "rw" : "r", ename(errno));
		return;
	}
	munmap(p, REGION_SIZE);
	printf("%smap %s = ok\n", pre, prot & PROT_WRITE ? "rw" : "r");
}

static void try_fstat(const char *pre, int fd)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		printf("%sfstat = -1 %s\n", pre, ename(errno));
	else if (S_ISCHR(st.st_mode))
		printf("%sfstat = chr %u:%u\n", pre, major(st.st_rdev), minor(st.st_rdev));
	else
		printf("%sfstat = %s\n", pre, S_ISREG(st.st_mode) ? "reg" : "other");
}

static void try_ioctls(int fd)
{
	char name[ASHMEM_NAME_LEN];
	int r;

	r = ioctl(fd, ASHMEM_GET_PROT_MASK);
	if (r < 0)
		printf("getprot = -1 %s\n", ename(errno));
	else
		printf("getprot = %d\n", r);
	memset(name, 0, sizeof(name));
	if (ioctl(fd, ASHMEM_GET_NAME, name) < 0)
		printf("getname = -1 %s\n", ename(errno));
	else
		printf("getname = %.*s\n", (int)sizeof(name), name);
}

/* Does this process map a region? (its name, or a region's offset in its file) */
static void region_mapped(void)
{
	const char *path = getenv("VOLATILE_REGION");
	char line[4096];
	int found = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (f == NULL)
		die("/proc/self/maps");
	while (fgets(line, sizeof(line), f) != NULL) {
		char *sp = strchr(line, ' ');

		/* "lo-hi perms offset dev inode name" */
		if (sp != NULL && strncmp(sp + 6, REGION_OFFSET, 8) == 0)
			found = 1;
		if (path != NULL && *path != '\0' && strstr(line, path) != NULL)
			found = 1;
	}
	fclose(f);
	printf("region: %s\n", found ? "MAPPED" : "not mapped");
}

/* ---- forklock ----------------------------------------------------------------- */

struct lockjob {
	const char *a, *b;
	int ready, go; /* pipe ends: to the parent, from the parent */
};

/*
 * The child: lock A, mark A then B (the budget purges A), report, unmark.
 * Exit 100 + UNMARK: returned, not _exit(): in a sanitizer build, a call
 * that does not return, made on a stack of our own, makes ASan warn.
 */
static int lock_child(void *arg)
{
	const struct lockjob *j = arg;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int a = open(j->a, O_RDWR | O_CLOEXEC), b = open(j->b, O_RDWR | O_CLOEXEC), r;
	char c = 'r';

	if (a < 0 || b < 0 || fcntl(a, F_SETLK, &fl) != 0)
		return 3;
	if (fallocate(a, FALLOC_FL_MARK_VOLATILE, 0, 4096) != 0 ||
	    fallocate(b, FALLOC_FL_MARK_VOLATILE, 0, 4096) != 0)
		return 4;
	if (write(j->ready, &c, 1) != 1 || read(j->go, &c, 1) != 1)
		return 5;
	r = fallocate(a, FALLOC_FL_UNMARK_VOLATILE, 0, 4096);
	fallocate(b, FALLOC_FL_UNMARK_VOLATILE, 0, 4096);
	return 100 + r;
}

static int forklock(const char *kind, const char *a, const char *b)
{
	static char stack[256 * 1024] __attribute__((aligned(16)));
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int toparent[2], tochild[2], m = memfd("attach", 4096), fd, status;
	struct lockjob j;
	char c = 0;
	pid_t pid;

	/* attached, pid and token known here before the child is made */
	if (fallocate(m, FALLOC_FL_MARK_VOLATILE, 0, 4096) != 0 ||
	    fallocate(m, FALLOC_FL_UNMARK_VOLATILE, 0, 4096) != 0)
		die("first mark");
	if (pipe2(toparent, O_CLOEXEC) != 0 || pipe2(tochild, O_CLOEXEC) != 0)
		die("pipe");
	j.a = a;
	j.b = b;
	j.ready = toparent[1];
	j.go = tochild[0];
	fflush(stdout);
	if (strcmp(kind, "fork") == 0)
		pid = fork();
	else if (strcmp(kind, "_Fork") == 0)
		pid = _Fork();
	else if (strcmp(kind, "clone") == 0)
		pid = clone(lock_child, stack + sizeof(stack), SIGCHLD, &j);
	else
		return 2;
	if (pid < 0) {
		if (errno == ENOSYS || errno == EPERM) {
			printf("%s is not allowed here (%s)\n", kind, ename(errno));
			exit(77);
		}
		die(kind);
	}
	if (pid == 0)
		_exit(lock_child(&j)); /* fork and _Fork: on our own stack, _exit is fine */
	close(toparent[1]);
	if (read(toparent[0], &c, 1) != 1) {
		if (waitpid(pid, &status, 0) != pid)
			die("waitpid");
		printf("%s: the child failed before its purge (status 0x%x)\n", kind, status);
		return 1;
	}
	fd = open(a, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fcntl(fd, F_GETLK, &fl) != 0)
		die("F_GETLK");
	printf("%s: lock %s\n", kind,
	       fl.l_type != F_UNLCK && fl.l_pid == pid ? "held by the child" : "LOST");
	if (write(tochild[1], &c, 1) != 1 || waitpid(pid, &status, 0) != pid)
		die("child");
	if (WIFEXITED(status) && WEXITSTATUS(status) >= 99 && WEXITSTATUS(status) <= 101)
		printf("%s: unmark A = %d\n", kind, WEXITSTATUS(status) - 100);
	else
		printf("%s: the child failed (status 0x%x)\n", kind, status);
	return 0;
}

/* ---- vfork ---------------------------------------------------------------------- */

/* The child may only close fd or dup2 over it (what: 1, 2; 0: neither), exec or _exit. */
static pid_t vfork_child(int fd, int other, int what, int do_exec)
{
	pid_t pid = vfork();

	if (pid != 0)
		return pid;
	if (what == 2)
		dup2(other, fd);
	else if (what == 1)
		close(fd);
	if (do_exec)
		execl("/bin/true", "true", (char *)NULL);
	_exit(0);
}

static int vforked(const char *how, const char *ce, const char *action)
{
	int dev = strcmp(how, "dev") == 0, cloexec = strcmp(ce, "cloexec") == 0;
	int what = strncmp(action, "dup2", 4) == 0 ? 2 : strncmp(action, "close", 5) == 0 ? 1 : 0;
	int do_exec = strstr(action, "exec") != NULL;
	int fd = region(dev, cloexec, "vfork-region"), other = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int status;
	pid_t pid;

	if (other < 0)
		die("/dev/null");
	fflush(stdout);
	pid = vfork_child(fd, other, what, do_exec);
	if (pid < 0)
		die("vfork");
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	printf("child: %s, status %d\n", action, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	try_map("", fd, PROT_READ | PROT_WRITE);
	try_ioctls(fd);
	try_fstat("", fd);
	try_map("", fd, PROT_READ);
	return 0;
}

/*
 * vforkkeep SELF: a region opened as /dev/ashmem without O_CLOEXEC; a vfork
 * child execs SELF holdfd FD (it keeps the fd); this process then closes
 * its own fd and tells the child to ask the region: the child's fd is the
 * region's last holder now, and must still be the region.
 */
static int vforkkeep(const char *self)
{
	int fd = region(1, 0, "kept"), go[2], status;
	char fdarg[16], goarg[16];
	pid_t pid;

	if (pipe(go) != 0)
		die("pipe");
	snprintf(fdarg, sizeof(fdarg), "%d", fd);
	snprintf(goarg, sizeof(goarg), "%d", go[0]);
	fflush(stdout);
	pid = vfork();
	if (pid == 0) {
		execl(self, self, "holdfd", fdarg, goarg, (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		die("vfork");
	if (close(fd) != 0)
		die("close");
	if (write(go[1], "g", 1) != 1)
		die("write");
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	printf("child: status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}

/* holdfd FD GO: the exec'd child of vforkkeep, once its parent has closed its fd */
static int holdfd(int fd, int go)
{
	char c;

	if (read(go, &c, 1) != 1)
		die("read");
	printf("held: ");
	fflush(stdout);
	try_ioctls(fd);
	try_map("held: ", fd, PROT_READ | PROT_WRITE);
	return 0;
}

/* ---- a thread waiting inside the library ------------------------------------------- */

/*
 * A thread that sends SIGALRM to the main thread once it waits in the
 * library. With BEHAVE_ALARMED=PATH in the environment it then makes file
 * PATH once the handler has run (alarm_handled): the test continues the
 * lock's holder then, not after a guessed while, which a loaded machine
 * may not have given the call to reach its wait.
 */
static pthread_t main_thread;
static pid_t main_tid;
static volatile sig_atomic_t alarm_handled;

static void *alarm_when_waiting(void *arg)
{
	const char *done = getenv("BEHAVE_ALARMED");

	(void)arg;
	in_futex(main_tid);
	pthread_kill(main_thread, SIGALRM);
	if (done != NULL && *done != '\0') {
		int fd;

		for (int i = 0; i < 6000 && !alarm_handled; i++)
			sleep_ms(10);
		fd = open(done, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
	}
	return NULL;
}

static void alarm_main_when_waiting(void (*handler)(int))
{
	struct sigaction sa;
	pthread_t t;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) != 0)
		die("SIGALRM");
	main_thread = pthread_self();
	main_tid = gettid();
	if (pthread_create(&t, NULL, alarm_when_waiting, NULL) != 0 || pthread_detach(t) != 0)
		die("pthread_create");
}

/* ---- attachfork, attachsig: forks while the first MARK waits ------------------------ */

static volatile int thread_mark = -2, thread_done;
static volatile pid_t thread_tid;
static int holder;

static void *first_mark(void *arg)
{
	int fd = *(int *)arg;

	thread_tid = gettid();
	thread_mark = fallocate(fd, FALLOC_FL_MARK_VOLATILE, 0, 4096);
	__atomic_store_n(&thread_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Wait up to ms for pid: 1 exited (status in *st), 0 still running (then killed). */
static int wait_child(pid_t pid, long ms, int *st)
{
	for (long t = 0; t < ms; t += 10) {
		pid_t w = waitpid(pid, st, WNOHANG);

		if (w == pid)
			return 1;
		if (w < 0 && errno != EINTR)
			die("waitpid");
		sleep_ms(10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, st, 0);
	return 0;
}

static void child_line(const char *who, int exited, int st)
{
	if (!exited)
		printf("%s: HUNG (killed after 8 s)\n", who);
	else if (WIFEXITED(st) && WEXITSTATUS(st) >= 99 && WEXITSTATUS(st) <= 101)
		printf("%s: mark = %d\n", who, WEXITSTATUS(st) - 100);
	else if (WIFSIGNALED(st))
		printf("%s: killed by signal %d\n", who, WTERMSIG(st));
	else
		printf("%s: exit status %d\n", who, WEXITSTATUS(st));
}

static int attachfork(int h)
{
	int fd = memfd("thread", 4096), st, exited;
	pthread_t t;
	pid_t pid;

	if (pthread_create(&t, NULL, first_mark, &fd) != 0)
		die("pthread_create");
	for (int i = 0; i < 500 && thread_tid == 0; i++)
		sleep_ms(10);
	in_futex(thread_tid);
	if (__atomic_load_n(&thread_done, __ATOMIC_ACQUIRE)) {
		printf("setup: the first MARK did not wait (= %d)\n", thread_mark);
		return 2;
	}
	fflush(stdout);
	pid = _Fork();
	if (pid < 0)
		die("_Fork");
	if (pid == 0) {
		int c = memfd_create("child", MFD_CLOEXEC);

		if (c < 0 || ftruncate(c, 4096) != 0)
			_exit(3);
		_exit(100 + fallocate(c, FALLOC_FL_MARK_VOLATILE, 0, 4096));
	}
	sleep_ms(300);
	kill(h, SIGCONT);
	exited = wait_child(pid, 8000, &st);
	child_line("child", exited, st);
	for (int i = 0; i < 1000 && !__atomic_load_n(&thread_done, __ATOMIC_ACQUIRE); i++)
		sleep_ms(10);
	if (!__atomic_load_n(&thread_done, __ATOMIC_ACQUIRE)) {
		printf("thread: HUNG\n");
		fflush(stdout);
		_exit(0);
	}
	pthread_join(t, NULL);
	printf("thread: mark = %d\n", thread_mark);
	return 0;
}

static volatile pid_t sig_child = -1;
static volatile int in_child;

static void on_alarm_fork(int sig)
{
	pid_t pid;

	(void)sig;
	pid = fork();
	if (pid == 0) {
		in_child = 1;
		return;
	}
	sig_child = pid;
	alarm_handled = 1;
}

static int attachsig(void)
{
	int fd = memfd("main", 4096), r, st, exited;
	char line[64];

	fflush(stdout);
	alarm_main_when_waiting(on_alarm_fork);
	r = fallocate(fd, FALLOC_FL_MARK_VOLATILE, 0, 4096);
	if (in_child)
		_exit(100 + r);
	if (sig_child < 0) {
		printf("setup: the first MARK returned %d before SIGALRM\n", r);
		return 2;
	}
	snprintf(line, sizeof(line), "parent: mark = %d\n", r);
	fputs(line, stdout);
	exited = wait_child(sig_child, 8000, &st);
	child_line("child", exited, st);
	return 0;
}

/* ---- siginlib: a handler that interrupted the library asks the region ------------- */

static int sig_fd = -1;
static char sig_out[512];
static volatile int sig_ran;

static void on_alarm_ask(int sig)
{
	int saved = errno, r, n = 0;
	struct stat st;
	void *p;

	(void)sig;
	errno = 0;
	r = ioctl(sig_fd, ASHMEM_GET_SIZE);
	n += snprintf(sig_out + n, sizeof(sig_out) - (size_t)n, "handler: getsize = %d%s%s\n", r,
		      r < 0 ? " " : "", r < 0 ? ename(errno) : "");
	p = mmap(NULL, REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, sig_fd, 0);
	if (p == MAP_FAILED) {
		n += snprintf(sig_out + n, sizeof(sig_out) - (size_t)n, "handler: map rw = -1 %s\n",
			      ename(errno));
	} else {
		munmap(p, REGION_SIZE);
		n += snprintf(sig_out + n, sizeof(sig_out) - (size_t)n, "handler: map rw = ok\n");
	}
	if (fstat(sig_fd, &st) != 0)
		snprintf(sig_out + n, sizeof(sig_out) - (size_t)n, "handler: fstat = -1 %s\n",
			 ename(errno));
	else
		snprintf(sig_out + n, sizeof(sig_out) - (size_t)n, "handler: fstat = %s\n",
			 S_ISCHR(st.st_mode) ? "chr" : S_ISREG(st.st_mode) ? "reg" : "other");
	sig_ran = 1;
	alarm_handled = 1;
	errno = saved;
}

static int siginlib(const char *what, const char *go)
{
	struct ashmem_pin pin = { 0, 4096 };
	int m = memfd("marked", 4096), r, i;
	void *p;

	sig_fd = region(1, 1, "signal-region");
	p = mmap(NULL, REGION_SIZE, PROT_READ, MAP_SHARED, sig_fd, 0);
	if (p == MAP_FAILED)
		die("mmap r");
	printf("ready\n");
	fflush(stdout);
	for (i = 0; i < 2000 && access(go, F_OK) != 0; i++)
		sleep_ms(10);
	if (i == 2000)
		die("waiting for GO");
	alarm_main_when_waiting(on_alarm_ask);
	if (strcmp(what, "unpin") == 0)
		r = ioctl(sig_fd, ASHMEM_UNPIN, &pin);
	else
		r = fallocate(m, FALLOC_FL_MARK_VOLATILE, 0, 4096);
	if (!sig_ran) {
		printf("setup: the %s returned %d before SIGALRM\n", what, r);
		return 2;
	}
	fputs(sig_out, stdout);
	printf("%s = %d%s%s\n", what, r, r < 0 ? " " : "", r < 0 ? ename(errno) : "");
	return 0;
}

/* ---- dupfail ----------------------------------------------------------------------- */

static void after(int fd, int dev)
{
	try_map("  ", fd, PROT_READ | PROT_WRITE);
	if (dev)
		try_fstat("  ", fd);
}

static void dup_result(const char *what, int r)
{
	if (r < 0)
		printf("%s = -1 %s\n", what, ename(errno));
	else
		printf("%s = %d\n", what, r);
}

static int dupfail(const char *how)
{
	int dev = strcmp(how, "dev") == 0;
	int fd = region(dev, 1, "dup-region"), other = region(dev, 1, "other-region");
	int closed = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (closed < 0 || close(closed) != 0)
		die("a closed fd");
	after(fd, dev);
	dup_result("dup2(-1, R)", dup2(-1, fd));
	after(fd, dev);
	dup_result("dup2(closed, R)", dup2(closed, fd));
	after(fd, dev);
	dup_result("dup3(other, R, bad flags)", dup3(other, fd, 0x1));
	after(fd, dev);
	dup_result("dup3(R, R, 0)", dup3(fd, fd, 0));
	after(fd, dev);
	return 0;
}

/* ---- recv, ownmemfd: no region for a program that never asks for one -------------- */

static int recv_fd(int mmsg)
{
	int sv[2], fd = -1, st;
	char data = 'x', ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &data, 1 };
	struct msghdr msg;
	struct cmsghdr *c;
	pid_t pid;
	void *p;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		die("socketpair");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		int shm = memfd_create("wl_shm", MFD_CLOEXEC | MFD_ALLOW_SEALING);

		if (shm < 0 || ftruncate(shm, 4096) != 0)
			_exit(3);
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = ctl;
		msg.msg_controllen = sizeof(ctl);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &shm, sizeof(int));
		_exit(sendmsg(sv[1], &msg, 0) == 1 ? 0 : 4);
	}
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl;
	msg.msg_controllen = sizeof(ctl);
	if (mmsg) {
		struct mmsghdr mm;

		memset(&mm, 0, sizeof(mm));
		mm.msg_hdr = msg;
		if (recvmmsg(sv[0], &mm, 1, 0, NULL) != 1)
			die("recvmmsg");
		msg = mm.msg_hdr;
	} else if (recvmsg(sv[0], &msg, MSG_CMSG_CLOEXEC) != 1) {
		die("recvmsg");
	}
	c = CMSG_FIRSTHDR(&msg);
	if (c == NULL || c->cmsg_type != SCM_RIGHTS)
		die("no fd received");
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("the sender");
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap of the received memfd");
	memcpy(p, "hello", 5);
	printf("%s: received and mapped\n", mmsg ? "recvmmsg" : "recvmsg");
	try_fstat("", fd);
	{
		int d = dup(fd);

		if (d < 0 || close(d) != 0)
			die("dup, close");
	}
	munmap(p, 4096);
	close(fd);
	region_mapped();
	return 0;
}

static int ownmemfd(int high)
{
	int fd = memfd("plain", 4096), d, e;
	void *p;

	if (high) {
		raise_nofile(70001);
		if (dup2(fd, 70000) != 70000)
			die("dup2 to 70000");
		close(fd);
		fd = 70000;
	}
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap");
	memcpy(p, "hello", 5);
	try_fstat("", fd);
	d = dup(fd);
	e = fcntl(fd, F_DUPFD_CLOEXEC, 20);
	if (d < 0 || e < 0 || dup2(d, 30) != 30 || dup3(e, 31, O_CLOEXEC) != 31)
		die("dup");
	close(d);
	close(e);
	close(30);
	close(31);
	munmap(p, 4096);
	close(fd);
	region_mapped();
	return 0;
}

/* ---- closehigh: regions at high fds are forgotten at their close ---------------- */

static int closehigh(const char *how)
{
	int fd, to = strcmp(how, "dup") == 0 ? 5000 : 50;

	raise_nofile(8192);
	if (strcmp(how, "made") == 0) {
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (null < 0)
			die("/dev/null");
		for (int i = 3; i <= 5000; i++)
			if (i != null && fcntl(i, F_GETFD) < 0 && dup2(null, i) != i)
				die("filling the fd table");
		fd = api_create("high", 4096);
		if (fd < 0)
			die("ashmem_create_region");
		printf("made at fd %s\n", fd > 5000 ? "above 5000" : "5000 or below");
		if (close(fd) != 0)
			die("close");
		for (int i = 3; i <= 5000; i++)
			if (i != null)
				close(i);
		close(null);
	} else {
		fd = api_create("high", 4096);
		if (fd < 0)
			die("ashmem_create_region");
		if (strcmp(how, "low") != 0) {
			if (dup2(fd, to) != to || close(fd) != 0)
				die("dup2, close");
			fd = to;
		}
		if (close(fd) != 0)
			die("close");
		printf("closed\n");
	}
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 5 && strcmp(argv[1], "forklock") == 0)
		return forklock(argv[2], argv[3], argv[4]);
	if (argc >= 5 && strcmp(argv[1], "vfork") == 0)
		return vforked(argv[2], argv[3], argv[4]);
	if (argc >= 3 && strcmp(argv[1], "attachfork") == 0) {
		holder = atoi(argv[2]);
		return attachfork(holder);
	}
	if (argc >= 2 && strcmp(argv[1], "attachsig") == 0)
		return attachsig();
	if (argc >= 4 && strcmp(argv[1], "siginlib") == 0)
		return siginlib(argv[2], argv[3]);
	if (argc >= 3 && strcmp(argv[1], "dupfail") == 0)
		return dupfail(argv[2]);
	if (argc >= 3 && strcmp(argv[1], "recv") == 0)
		return recv_fd(strcmp(argv[2], "mmsg") == 0);
	if (argc >= 2 && strcmp(argv[1], "ownmemfd") == 0)
		return ownmemfd(argc >= 3 && strcmp(argv[2], "high") == 0);
	if (argc >= 3 && strcmp(argv[1], "closehigh") == 0)
		return closehigh(argv[2]);
	if (argc >= 2 && strcmp(argv[1], "vforkkeep") == 0)
		return vforkkeep(argv[0]);
	if (argc >= 4 && strcmp(argv[1], "holdfd") == 0)
		return holdfd(atoi(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: behave forklock|vfork|attachfork|attachsig|siginlib|dupfail|recv|"
			"ownmemfd|closehigh|vforkkeep ARGS (see behave.c)\n");
	return 2;
}
