/* SPDX-License-Identifier: MIT */
/*
 * twins - a region's record must stay while anything still holds its
 * memfd (the table of regions made here, src/ashmem). A program, not linked with the library: the shell tests run it
 * with LD_PRELOAD. One subcommand a run:
 *
 *   reopen HOW     a region (opened as /dev/ashmem, SET_NAME "twin",
 *                  SET_SIZE, prot mask PROT_READ); a second fd on its memfd
 *                  is opened through /proc in a way HOW, and answers one
 *                  ioctl (so the library knows it from then on); then the
 *                  first fd is closed. The second must still be the
 *                  region: "twin: getprot = 1", "getsize = 65536",
 *                  "getname = twin", "map rw = -1 EPERM". HOW:
 *                    abs      open("/proc/self/fd/N") (the control)
 *                    fopen    fopen("/proc/self/fd/N", "r+")
 *                    openat   openat(open("/proc/self/fd"), "N")
 *                    stdin    the region dup2'd to 0, open("/dev/stdin")
 *                    dslash   open("//proc/self/fd/N")
 *                    symlink  open(a symlink to /proc/self/fd/N)
 *                    pidfd    pidfd_getfd(pidfd_open(getpid()), N)
 *   rename HOW     a region opened as /dev/ashmem and sized (no name yet);
 *                  a second fd is opened on its memfd as above; SET_NAME
 *                  on the first fd; "hello" is written through the second
 *                  and read back through the first: "read = hello" (not
 *                  when SET_NAME gave the first fd a new memfd)
 *   clonevfork     a region (dev, prot mask PROT_READ); a child made by
 *                  clone() (no CLONE_VM) vforks, and its vfork child
 *                  closes its copy of the region fd and _exits; then the
 *                  clone child asks: "clone child: map rw = -1 EPERM",
 *                  "clone child: fstat = chr"
 *   many N         N regions opened as /dev/ashmem and sized, all open at
 *                  once, then closed: "closed N" (the shell test then
 *                  counts the records left in the region: none)
 *   newfork HPID   a thread opens /dev/ashmem, whose first attach waits
 *                  (HPID, stopped, holds the region's lock); meanwhile this
 *                  thread forks: the child inherits the new region's memfd.
 *                  HPID is continued; the region gets its size and the
 *                  prot mask PROT_READ, and this process closes its fd.
 *                  The child, which still holds the memfd, then asks:
 *                  "child: getprot = 1", "child: map rw = -1 EPERM"
 *   closefork SECS a thread makes regions (size, prot mask PROT_READ) and
 *                  closes them, while this thread forks; a child that
 *                  inherited a region whose prot mask was set asks it,
 *                  after its parent closed its own fd:
 *                  "lost = N" (children that found the mask gone)
 *   reuse SECS     another thread dups and closes an fd on a region Z in a
 *                  loop, while this one makes a region Y (prot mask
 *                  PROT_READ), dups it to N, closes Y's first fd and asks
 *                  N: "lost = K" (times N's prot mask was found gone),
 *                  "iterations = enough" once 10,000 ran (for SECS at
 *                  least, up to 5 * SECS until then)
 *
 * Exit status 0 when it ran to its end (the shell tests read the lines),
 * 2 on a failed step of the setup, 77 when the machine forbids a step.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "say.h"

#define SIZE 65536

static void ask(const char *pre, int fd)
{
	char name[ASHMEM_NAME_LEN];
	int r = ioctl(fd, ASHMEM_GET_PROT_MASK);
	void *p;

	if (r < 0)
		printf("%sgetprot = -1 %s\n", pre, ename(errno));
	else
		printf("%sgetprot = %d\n", pre, r);
	r = ioctl(fd, ASHMEM_GET_SIZE);
	if (r < 0)
		printf("%sgetsize = -1 %s\n", pre, ename(errno));
	else
		printf("%sgetsize = %d\n", pre, r);
	memset(name, 0, sizeof(name));
	if (ioctl(fd, ASHMEM_GET_NAME, name) < 0)
		printf("%sgetname = -1 %s\n", pre, ename(errno));
	else
		printf("%sgetname = %.*s\n", pre, (int)sizeof(name), name);
	p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		printf("%smap rw = -1 %s\n", pre, ename(errno));
	} else {
		munmap(p, SIZE);
		printf("%smap rw = ok\n", pre);
	}
}

static int region(const char *name)
{
	char buf[ASHMEM_NAME_LEN];
	int fd = open("/dev/ashmem", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die("open /dev/ashmem");
	snprintf(buf, sizeof(buf), "%s", name);
	if (ioctl(fd, ASHMEM_SET_NAME, buf) != 0 || ioctl(fd, ASHMEM_SET_SIZE, (size_t)SIZE) != 0 ||
	    ioctl(fd, ASHMEM_SET_PROT_MASK, (unsigned long)PROT_READ) != 0)
		die("SET_NAME, SET_SIZE, SET_PROT_MASK");
	return fd;
}

/* ---- reopen ---------------------------------------------------------------------- */

/* A second fd on fd's memfd, made the HOW way; *fd may change (stdin). */
static int second(const char *how, int *fd)
{
	char path[64], rel[16];
	int t = -1;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", *fd);
	snprintf(rel, sizeof(rel), "%d", *fd);
	if (strcmp(how, "abs") == 0) {
		t = open(path, O_RDWR | O_CLOEXEC);
	} else if (strcmp(how, "fopen") == 0) {
		FILE *f = fopen(path, "r+e");

		t = f != NULL ? fileno(f) : -1;
	} else if (strcmp(how, "openat") == 0) {
		int d = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		t = d >= 0 ? openat(d, rel, O_RDWR | O_CLOEXEC) : -1;
	} else if (strcmp(how, "stdin") == 0) {
		if (dup2(*fd, 0) != 0 || close(*fd) != 0)
			die("dup2 to 0");
		*fd = 0;
		t = open("/dev/stdin", O_RDWR | O_CLOEXEC);
	} else if (strcmp(how, "dslash") == 0) {
		snprintf(path, sizeof(path), "//proc/self/fd/%d", *fd);
		t = open(path, O_RDWR | O_CLOEXEC);
	} else if (strcmp(how, "symlink") == 0) {
		char link[64];

		snprintf(link, sizeof(link), "/proc/self/fd/%d", *fd);
		snprintf(path, sizeof(path), "/dev/shm/twins.%d", (int)getpid());
		if (symlink(link, path) != 0)
			die("symlink");
		t = open(path, O_RDWR | O_CLOEXEC);
		unlink(path);
	} else if (strcmp(how, "pidfd") == 0) {
		int p = (int)syscall(SYS_pidfd_open, getpid(), 0);

		t = p >= 0 ? (int)syscall(SYS_pidfd_getfd, p, *fd, 0) : -1;
		if (t < 0 && (errno == ENOSYS || errno == EPERM)) {
			printf("pidfd_getfd is not allowed here (%s)\n", ename(errno));
			exit(77);
		}
	} else {
		printf("setup: unknown HOW %s\n", how);
		exit(2);
	}
	if (t < 0)
		die("the second fd");
	return t;
}

static int reopen(const char *how)
{
	int fd = region("twin"), t = second(how, &fd);

	/* the library knows the twin from here on (doc/ashmem.md: until it gets an ashmem ioctl) */
	if (ioctl(t, ASHMEM_GET_SIZE) != SIZE)
		die("GET_SIZE of the second fd");
	if (close(fd) != 0)
		die("close");
	ask("twin: ", t);
	return 0;
}

static int renamed(const char *how)
{
	char name[ASHMEM_NAME_LEN] = "renamed", buf[8];
	int fd = open("/dev/ashmem", O_RDWR | O_CLOEXEC), t;

	if (fd < 0 || ioctl(fd, ASHMEM_SET_SIZE, (size_t)4096) != 0)
		die("a region");
	t = second(how, &fd);
	if (ioctl(fd, ASHMEM_SET_NAME, name) != 0)
		die("SET_NAME");
	memset(buf, 0, sizeof(buf));
	if (pwrite(t, "hello", 5, 0) != 5 || pread(fd, buf, 5, 0) < 0)
		die("pwrite, pread");
	printf("read = %s\n", buf);
	return 0;
}

/* ---- many: more regions at once than the table of regions made here holds ------ */

static int many(int n)
{
	int *fds = calloc((size_t)n, sizeof(int));

	if (fds == NULL)
		die("calloc");
	for (int i = 0; i < n; i++) {
		fds[i] = open("/dev/ashmem", O_RDWR | O_CLOEXEC);
		if (fds[i] < 0) {
			if (errno == EMFILE) {
				printf("not enough fds for %d regions here\n", n);
				exit(77);
			}
			die("open /dev/ashmem");
		}
		if (ioctl(fds[i], ASHMEM_SET_SIZE, (size_t)4096) != 0)
			die("SET_SIZE");
	}
	for (int i = 0; i < n; i++)
		if (close(fds[i]) != 0)
			die("close");
	printf("closed %d\n", n);
	free(fds);
	return 0;
}

/* ---- clonevfork: a vfork child of a clone child ------------------------------------ */

static int clone_fd;

static int clone_child(void *arg)
{
	struct stat st;
	pid_t pid;
	void *p;

	(void)arg;
	pid = vfork();
	if (pid == 0) {
		close(clone_fd);
		syscall(SYS_exit_group, 0); /* not _exit(): see below */
	}
	if (pid < 0 || waitpid(pid, NULL, 0) != pid)
		return 3;
	p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, clone_fd, 0);
	if (p == MAP_FAILED) {
		printf("clone child: map rw = -1 %s\n", ename(errno));
	} else {
		munmap(p, SIZE);
		printf("clone child: map rw = ok\n");
	}
	if (fstat(clone_fd, &st) != 0)
		printf("clone child: fstat = -1 %s\n", ename(errno));
	else
		printf("clone child: fstat = %s\n", S_ISCHR(st.st_mode) ? "chr" : "reg");
	fflush(stdout);
	/* returned, not _exit(): a call that does not return, on a stack of ours, makes ASan warn */
	return 0;
}

static int clonevfork(void)
{
	static char stack[256 * 1024] __attribute__((aligned(16)));
	int st;
	pid_t pid;

	clone_fd = region("clone");
	fflush(stdout);
	pid = clone(clone_child, stack + sizeof(stack), SIGCHLD, NULL);
	if (pid < 0) {
		if (errno == ENOSYS || errno == EPERM) {
			printf("clone is not allowed here (%s)\n", ename(errno));
			exit(77);
		}
		die("clone");
	}
	if (waitpid(pid, &st, 0) != pid)
		die("waitpid");
	printf("clone child: status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}

/* ---- newfork: a fork while the region is being made ----------------------------------- */

static volatile int made_fd = -2;
static volatile pid_t maker_tid;

static void *make_one(void *arg)
{
	(void)arg;
	maker_tid = (pid_t)syscall(SYS_gettid);
	made_fd = open("/dev/ashmem", O_RDWR | O_CLOEXEC);
	return NULL;
}

static int newfork(pid_t h)
{
	int go[2], st, fd;
	pthread_t t;
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) != 0)
		die("pipe");
	if (pthread_create(&t, NULL, make_one, NULL) != 0)
		die("pthread_create");
	for (int i = 0; i < 500 && maker_tid == 0; i++)
		sleep_ms(10);
	in_futex(maker_tid);
	if (made_fd != -2) {
		printf("setup: the open did not wait (= %d)\n", made_fd);
		return 2;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		if (read(go[0], &fd, sizeof(fd)) != sizeof(fd))
			_exit(3);
		if (fcntl(fd, F_GETFD) < 0) {
			printf("child: the region's fd was not inherited\n");
			_exit(0);
		}
		ask("child: ", fd);
		_exit(0);
	}
	kill(h, SIGCONT);
	pthread_join(t, NULL);
	fd = made_fd;
	if (fd < 0) {
		errno = -fd;
		die("open /dev/ashmem");
	}
	if (ioctl(fd, ASHMEM_SET_SIZE, (size_t)SIZE) != 0 ||
	    ioctl(fd, ASHMEM_SET_PROT_MASK, (unsigned long)PROT_READ) != 0)
		die("SET_SIZE, SET_PROT_MASK");
	if (close(fd) != 0)
		die("close");
	if (write(go[1], &fd, sizeof(fd)) != sizeof(fd) || waitpid(pid, &st, 0) != pid)
		die("the child");
	printf("child: status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}

/* ---- closefork: a fork while another thread closes a region ------------------------- */

static volatile int masked_fd = -1, stop;

static void *maker(void *arg)
{
	unsigned seed = 1;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		int fd = open("/dev/ashmem", O_RDWR | O_CLOEXEC);

		if (fd < 0 || ioctl(fd, ASHMEM_SET_SIZE, (size_t)4096) != 0 ||
		    ioctl(fd, ASHMEM_SET_PROT_MASK, (unsigned long)PROT_READ) != 0)
			die("a region");
		__atomic_store_n(&masked_fd, fd, __ATOMIC_SEQ_CST);
		if (rand_r(&seed) % 2)
			usleep(rand_r(&seed) % 50);
		close(fd);
		__atomic_store_n(&masked_fd, -1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

static int closefork(int secs)
{
	time_t start = time(NULL), end = start + secs;
	int lost = 0, held = 0;
	pthread_t t;

	if (pthread_create(&t, NULL, maker, NULL) != 0)
		die("pthread_create");
	fflush(stdout);
	/*
	 * At least secs seconds; longer (up to 5 times) on a loaded machine
	 * where few forks landed while a region was open: the count of
	 * children that held one is what the test is worth, not the time.
	 */
	while (time(NULL) < end || (held < 20 && time(NULL) < start + 5 * secs)) {
		pid_t pid = fork();
		int st;

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			/* set before the fork: the mask was set, and the child holds the memfd */
			int fd = __atomic_load_n(&masked_fd, __ATOMIC_SEQ_CST);
			struct stat sb;

			/*
			 * Not a memfd: the number was free at the fork (the parent had
			 * closed it, and the library may have had a /proc file open
			 * under it for a moment).
			 */
			if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_nlink != 0)
				_exit(0);
			sleep_ms(20); /* the parent closes its own meanwhile */
			_exit(ioctl(fd, ASHMEM_GET_PROT_MASK) == PROT_READ ? 1 : 2);
		}
		if (waitpid(pid, &st, 0) != pid)
			die("waitpid");
		held += WIFEXITED(st) && WEXITSTATUS(st) != 0;
		lost += WIFEXITED(st) && WEXITSTATUS(st) == 2;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	printf("held = %s\n", held >= 20 ? "enough" : "too few");
	printf("lost = %d\n", lost);
	if (held < 20)
		fprintf(stderr, "closefork: %d children held a region in %ld s\n", held,
			(long)(time(NULL) - start));
	return 0;
}

/* ---- reuse: an fd number freed by another thread's close, taken by a dup here ---- */

static int reuse_z;

static void *dup_close(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		int d = dup(reuse_z);

		if (d >= 0)
			close(d);
	}
	return NULL;
}

static int reuse(int secs)
{
	time_t start = time(NULL), end = start + secs;
	long lost = 0, iters = 0;
	pthread_t t;

	reuse_z = open("/dev/ashmem", O_RDWR | O_CLOEXEC);
	if (reuse_z < 0 || ioctl(reuse_z, ASHMEM_SET_SIZE, (size_t)4096) != 0)
		die("region Z");
	if (pthread_create(&t, NULL, dup_close, NULL) != 0)
		die("pthread_create");
	/*
	 * At least secs seconds; longer (up to 5 times) on a loaded machine
	 * where fewer than 10,000 iterations ran in them: the count of races
	 * run is what the test is worth, not the time.
	 */
	while (time(NULL) < end || (iters < 10000 && time(NULL) < start + 5 * secs)) {
		int y = open("/dev/ashmem", O_RDWR | O_CLOEXEC), n;

		if (y < 0 || ioctl(y, ASHMEM_SET_SIZE, (size_t)4096) != 0 ||
		    ioctl(y, ASHMEM_SET_PROT_MASK, (unsigned long)PROT_READ) != 0)
			die("region Y");
		n = dup(y);
		if (n < 0 || close(y) != 0)
			die("dup, close");
		lost += ioctl(n, ASHMEM_GET_PROT_MASK) != PROT_READ;
		close(n);
		iters++;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	printf("iterations = %s\n", iters >= 10000 ? "enough" : "too few");
	printf("lost = %ld\n", lost);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3 && strcmp(argv[1], "reopen") == 0)
		return reopen(argv[2]);
	if (argc >= 3 && strcmp(argv[1], "rename") == 0)
		return renamed(argv[2]);
	if (argc >= 3 && strcmp(argv[1], "many") == 0)
		return many(atoi(argv[2]));
	if (argc >= 2 && strcmp(argv[1], "clonevfork") == 0)
		return clonevfork();
	if (argc >= 3 && strcmp(argv[1], "newfork") == 0)
		return newfork((pid_t)atoi(argv[2]));
	if (argc >= 3 && strcmp(argv[1], "reuse") == 0)
		return reuse(atoi(argv[2]));
	if (argc >= 3 && strcmp(argv[1], "closefork") == 0)
		return closefork(atoi(argv[2]));
	fprintf(stderr, "usage: twins reopen|rename HOW | many N | clonevfork | newfork HPID | closefork|reuse SECS\n");
	return 2;
}
