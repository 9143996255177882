/* SPDX-License-Identifier: MIT */
/*
 * ashmem-legacy - a legacy ashmem program for the shell tests.
 *
 * It knows nothing of libvolatile: it opens /dev/ashmem and drives it with
 * the driver's ioctl numbers (written out here as a program built against
 * the kernel's header has them), mmap, stat and access. Run it under
 * `volatile run` (or LD_PRELOAD) on a machine without the device.
 * Commands, in order, one output line each ("CMD ARGS = RESULT", errors
 * as "= -1 ENAME"):
 *
 *   open [PATH]          open(PATH or /dev/ashmem, O_RDWR); the current fd
 *   memfd NAME SIZE      memfd_create(NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING) and
 *                        ftruncate: a plain memfd, the current fd
 *   openx                open("/dev/ashmem", O_RDWR) without O_CLOEXEC
 *   exec CMD...          exec this program again, the current fd kept: it goes
 *                        on with CMD... (its first command is "usefd FD")
 *   usefd N              the current fd is N
 *   nofile N             raise RLIMIT_NOFILE to N ("= -1 EPERM" if it may not)
 *   dupto N              fcntl(F_DUPFD, N), close the old fd: the current fd
 *   setname NAME         ASHMEM_SET_NAME ("-" for an empty name)
 *   longname N           ASHMEM_SET_NAME of N 'x' bytes (no NUL within 256)
 *   getname              ASHMEM_GET_NAME                  "getname = NAME"
 *   setsize N            ASHMEM_SET_SIZE; setsize32: the 32-bit encoding
 *   getsize              ASHMEM_GET_SIZE
 *   setprot P            ASHMEM_SET_PROT_MASK, P: none r w x rw rx rwx or a
 *                        number; setprot32: the 32-bit encoding
 *   getprot              ASHMEM_GET_PROT_MASK
 *   addseal WHICH        fcntl(F_ADD_SEALS); WHICH: seal shrink grow write
 *                        future-write, joined by commas
 *   getseals             fcntl(F_GET_SEALS): "getseals = seal,future-write" or "none"
 *   map LEN P            mmap(LEN, P, MAP_SHARED) of the current fd; the
 *                        mapping becomes current; mapp: MAP_PRIVATE
 *   protect P            mprotect the current mapping to P
 *   unmap                munmap the current mapping
 *   pin OFF LEN          ASHMEM_PIN      (1: was purged, 0: not)
 *   unpin OFF LEN        ASHMEM_UNPIN
 *   pinstatus OFF LEN    ASHMEM_GET_PIN_STATUS (0: some page unpinned, 1: pinned)
 *   purgeall             ASHMEM_PURGE_ALL_CACHES
 *   fileid               ASHMEM_GET_FILE_ID; fileid32: the 32-bit encoding
 *                        ("= ino" if it matches the maps' inode, else "= WRONG")
 *   ioctl REQ ARG        ioctl(fd, REQ, ARG), numbers
 *   bad CMD              CMD (setname getname pin unpin pinstatus fileid, and
 *                        open stat access of a path) with a pointer into a
 *                        PROT_NONE page: EFAULT wanted
 *   fill OFF LEN C       write C (or "zero") into the mapping
 *   expect OFF LEN C     check the mapping: "... ok" or "... MISMATCH" (exit 1)
 *   fstat                fstat of the current fd: "fstat = chr MAJ:MIN" or "reg SIZE"
 *   stat PATH            stat: "stat PATH = chr MAJ:MIN" or "-1 ENAME"; same rdev?
 *   access PATH MODE     access(PATH, r|w|x|f)
 *   maps                 the name of the current mapping in /proc/self/maps
 *   serve SOCK           listen on Unix socket SOCK, send the current fd to
 *                        the first who connects (SCM_RIGHTS); servem: by sendmmsg
 *   recv SOCK            connect to SOCK, receive an fd: the current fd
 *   write STR            write(2) STR to the current fd ("= bytes written")
 *   pread LEN            pread(2) LEN bytes at 0: "pread LEN = TEXT"
 *   offset               lseek(fd, 0, SEEK_CUR)
 *   nonblock             fcntl(F_SETFL, O_NONBLOCK)
 *   getfl                "getfl = nonblock" or "getfl = block"
 *   close                close the current fd
 *   churn N [MODE]       N times: open /dev/ashmem, SET_SIZE 4K, then by MODE
 *                        "map" (default): mmap, munmap, close; "nomap": close;
 *                        "late": mmap, close, munmap. "churn N = ok" (and
 *                        "... slow" if two opens took over a second each:
 *                        one may be the scheduler's, on a loaded machine), or the
 *                        first failure
 *   spawn CMD... end     fork: the child runs CMD... and exits; reap waits;
 *                        spawnf: _Fork (no pthread_atfork handlers run)
 *   pspawn CMD... end    posix_spawn this program on "usefd FD" CMD... (no fork())
 *   reap                 "reap = STATUS"
 *   wait PATH / touch PATH / pid / echo WORD
 *   nodump               prctl(PR_SET_DUMPABLE, 0): the user's other processes
 *                        can no longer look into this one's /proc files
 *
 * errno is set to a sentinel before each call; a call that succeeds and
 * changes it gets " ERRNO-CLOBBERED" after its line (and exit status 1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "say.h"

/* the driver's numbers, x86-64 (and 32-bit where they differ) */
#define A_SET_NAME 0x41007701ul
#define A_GET_NAME 0x81007702ul
#define A_SET_SIZE 0x40087703ul
#define A_SET_SIZE32 0x40047703ul
#define A_GET_SIZE 0x7704ul
#define A_SET_PROT 0x40087705ul
#define A_SET_PROT32 0x40047705ul
#define A_GET_PROT 0x7706ul
#define A_PIN 0x40087707ul
#define A_UNPIN 0x40087708ul
#define A_PIN_STATUS 0x7709ul
#define A_PURGE_ALL 0x770aul
#define A_FILE_ID 0x8008770bul
#define A_FILE_ID32 0x8004770bul

struct pin {
	uint32_t offset, len;
};

#define SENTINEL 4242

/* What the commands share (a spawned child gets its own copy). */
struct state {
	int fd;			/* the current fd */
	int failed;		/* a check failed: the exit status is 1 */
	unsigned char *map;	/* the current mapping */
	size_t map_len;
	pid_t child;		/* what reap waits for */
	void *bad;		/* an address in a PROT_NONE page */
	char *self;		/* argv[0]: exec and pspawn run this program again */
};

/* This program's argv again, on "usefd FD" and the n words at cmds: exec, pspawn. */
static char **again_with_fd(struct state *s, char **cmds, int n)
{
	static char num_fd[16];
	char **nargv = calloc((size_t)(n + 4), sizeof(char *));
	int k = 0;

	if (nargv == NULL)
		abort();
	snprintf(num_fd, sizeof(num_fd), "%d", s->fd);
	nargv[k++] = s->self;
	nargv[k++] = "usefd";
	nargv[k++] = num_fd;
	for (int j = 0; j < n; j++)
		nargv[k++] = cmds[j];
	nargv[k] = NULL;
	return nargv;
}

static void result(struct state *s, const char *what, long r)
{
	int e = errno;

	if (r < 0) {
		printf("%s = -1 %s\n", what, ename(e));
		return;
	}
	printf("%s = %ld%s\n", what, r, e != SENTINEL ? " ERRNO-CLOBBERED" : "");
	if (e != SENTINEL)
		s->failed = 1;
}

static long io(struct state *s, unsigned long req, unsigned long arg)
{
	errno = SENTINEL;
	return ioctl(s->fd, req, arg);
}

static int byte_of(const char *c)
{
	return strcmp(c, "zero") == 0 ? 0 : c[0];
}

static void send_fd(struct state *s, const char *path, int multi)
{
	struct mmsghdr mm;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char dummy = 'f', cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &dummy, 1 };
	struct msghdr m = { 0 };
	struct cmsghdr *c;
	int sock = socket(AF_UNIX, SOCK_STREAM, 0), conn;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (sock < 0 || bind(sock, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(sock, 1) != 0) {
		printf("serve %s = -1 %s\n", path, ename(errno));
		s->failed = 1;
		return;
	}
	conn = accept(sock, NULL, NULL);
	memset(cbuf, 0, sizeof(cbuf));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &s->fd, sizeof(int));
	memset(&mm, 0, sizeof(mm));
	mm.msg_hdr = m;
	if (multi) /* sendmmsg: 1 message sent, or -1 */
		printf("servem %s = %d\n", path, conn < 0 ? -1 : sendmmsg(conn, &mm, 1, 0));
	else
		printf("serve %s = %zd\n", path, conn < 0 ? -1 : sendmsg(conn, &m, 0));
	close(conn);
	close(sock);
}

static void recv_fd(struct state *s, const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char dummy, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &dummy, 1 };
	struct msghdr m = { 0 };
	struct cmsghdr *c;
	int sock = socket(AF_UNIX, SOCK_STREAM, 0), tries;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	for (tries = 0; tries < 1000; tries++) {
		if (connect(sock, (struct sockaddr *)&a, sizeof(a)) == 0)
			break;
		usleep(10000);
	}
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	if (recvmsg(sock, &m, 0) != 1 || (c = CMSG_FIRSTHDR(&m)) == NULL ||
	    c->cmsg_type != SCM_RIGHTS) {
		printf("recv %s = -1\n", path);
		s->failed = 1;
		close(sock);
		return;
	}
	memcpy(&s->fd, CMSG_DATA(c), sizeof(int));
	close(sock);
	printf("recv %s = ok\n", path);
}

/* The name of the mapping at map in /proc/self/maps, and its inode. */
static void maps_line(struct state *s, char *name, size_t size, unsigned long *ino)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];

	name[0] = '\0';
	*ino = 0;
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		unsigned long lo, hi, i;
		int off = 0;

		if (sscanf(line, "%lx-%lx %*s %*s %*s %lu %n", &lo, &hi, &i, &off) < 3)
			continue;
		if ((uintptr_t)s->map >= lo && (uintptr_t)s->map < hi) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(name, size, "%s", line + off);
			*ino = i;
		}
	}
	if (f != NULL)
		fclose(f);
}

/* Run the commands at a, up to the last word; the exit status. */
static int run(struct state *s, char **a);

/*
 * The commands. Each gets the state and a: its name, then the arguments
 * its table entry says it needs, then the rest of the command line (NULL
 * after the last word). It returns how many words it took after those:
 * an optional argument, or a child's commands and their "end".
 */

static int c_open(struct state *s, char **a)
{
	int took = a[1] != NULL && a[1][0] == '/';
	const char *path = took ? a[1] : "/dev/ashmem";
	char what[512];

	errno = SENTINEL;
	s->fd = open(path, O_RDWR | O_CLOEXEC);
	snprintf(what, sizeof(what), "open %s", path);
	result(s, what, s->fd);
	return took;
}

static int c_memfd(struct state *s, char **a)
{
	char what[512];

	snprintf(what, sizeof(what), "memfd %s %s", a[1], a[2]);
	errno = SENTINEL;
	s->fd = memfd_create(a[1], MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (s->fd >= 0 && ftruncate(s->fd, (off_t)say_num(a[2])) != 0)
		die("ftruncate");
	result(s, what, s->fd);
	return 0;
}

static int c_openx(struct state *s, char **a)
{
	(void)a;
	errno = SENTINEL;
	s->fd = open("/dev/ashmem", O_RDWR);
	result(s, "openx", s->fd);
	return 0;
}

static int c_exec(struct state *s, char **a)
{
	char **nargv;
	int n = 0;

	while (a[1 + n] != NULL)
		n++;
	nargv = again_with_fd(s, a + 1, n);
	printf("exec\n");
	fflush(stdout);
	execv("/proc/self/exe", nargv);
	printf("exec = -1 %s\n", ename(errno));
	exit(1);
}

static int c_usefd(struct state *s, char **a)
{
	s->fd = (int)say_num(a[1]);
	printf("usefd %d\n", s->fd);
	return 0;
}

static int c_nofile(struct state *s, char **a)
{
	struct rlimit rl;
	char what[512];

	rl.rlim_cur = rl.rlim_max = (rlim_t)say_num(a[1]);
	snprintf(what, sizeof(what), "nofile %s", a[1]);
	errno = SENTINEL;
	result(s, what, setrlimit(RLIMIT_NOFILE, &rl));
	return 0;
}

static int c_dupto(struct state *s, char **a)
{
	char what[512];
	int hi;

	snprintf(what, sizeof(what), "dupto %s", a[1]);
	errno = SENTINEL;
	hi = fcntl(s->fd, F_DUPFD, (int)say_num(a[1]));
	result(s, what, hi < 0 ? -1 : hi >= (int)say_num(a[1]));
	if (hi >= 0) {
		close(s->fd);
		s->fd = hi;
	}
	return 0;
}

static int c_setname(struct state *s, char **a)
{
	char what[512];

	snprintf(what, sizeof(what), "setname %s", a[1]);
	result(s, what, io(s, A_SET_NAME, (unsigned long)(strcmp(a[1], "-") == 0 ? "" : a[1])));
	return 0;
}

static int c_longname(struct state *s, char **a)
{
	static char big[600];
	size_t n = (size_t)say_num(a[1]);
	char what[512];

	memset(big, 'x', sizeof(big));
	big[n < sizeof(big) ? n : sizeof(big) - 1] = '\0';
	snprintf(what, sizeof(what), "longname %zu", n);
	result(s, what, io(s, A_SET_NAME, (unsigned long)big));
	return 0;
}

static int c_getname(struct state *s, char **a)
{
	char name[256];
	long r;

	(void)a;
	memset(name, '#', sizeof(name));
	r = io(s, A_GET_NAME, (unsigned long)name);
	if (r < 0) {
		result(s, "getname", r);
	} else {
		name[255] = '\0';
		printf("getname = %s (%zu)\n", name, strlen(name));
	}
	return 0;
}

/* setsize, setprot and their 32-bit encodings: "CMD N = R" */
static int set(struct state *s, char **a, unsigned long req, unsigned long v)
{
	char what[512];

	snprintf(what, sizeof(what), "%s %s", a[0], a[1]);
	result(s, what, io(s, req, v));
	return 0;
}

static int c_setsize(struct state *s, char **a)
{
	return set(s, a, A_SET_SIZE, (unsigned long)say_num(a[1]));
}

static int c_setsize32(struct state *s, char **a)
{
	return set(s, a, A_SET_SIZE32, (unsigned long)say_num(a[1]));
}

static int c_getsize(struct state *s, char **a)
{
	(void)a;
	result(s, "getsize", io(s, A_GET_SIZE, 0));
	return 0;
}

static int c_setprot(struct state *s, char **a)
{
	return set(s, a, A_SET_PROT, (unsigned long)say_prot(a[1]));
}

static int c_setprot32(struct state *s, char **a)
{
	return set(s, a, A_SET_PROT32, (unsigned long)say_prot(a[1]));
}

static int c_getprot(struct state *s, char **a)
{
	(void)a;
	result(s, "getprot", io(s, A_GET_PROT, 0));
	return 0;
}

static int c_addseal(struct state *s, char **a)
{
	char what[512];
	int bits = seals_of(a[1]);

	if (bits < 0) {
		fprintf(stderr, "addseal: unknown seal in %s\n", a[1]);
		exit(2);
	}
	snprintf(what, sizeof(what), "addseal %s", a[1]);
	errno = SENTINEL;
	result(s, what, fcntl(s->fd, F_ADD_SEALS, bits));
	return 0;
}

static int c_getseals(struct state *s, char **a)
{
	int r;

	(void)a;
	errno = SENTINEL;
	r = fcntl(s->fd, F_GET_SEALS);
	if (r < 0)
		result(s, "getseals", r);
	else
		printf("getseals = %s\n", seals_str(r));
	return 0;
}

/* map, mapp: the mapping becomes the current one */
static int do_map(struct state *s, char **a, int flags)
{
	size_t len = (size_t)say_num(a[1]);
	char what[512];
	void *m;

	errno = SENTINEL;
	m = mmap(NULL, len, say_prot(a[2]), flags, s->fd, 0);
	snprintf(what, sizeof(what), "%s %s %s", a[0], a[1], a[2]);
	if (m == MAP_FAILED) {
		result(s, what, -1);
	} else {
		s->map = m;
		s->map_len = len;
		printf("%s = ok%s\n", what, errno != SENTINEL ? " ERRNO-CLOBBERED" : "");
	}
	return 0;
}

static int c_map(struct state *s, char **a)
{
	return do_map(s, a, MAP_SHARED);
}

static int c_mapp(struct state *s, char **a)
{
	return do_map(s, a, MAP_PRIVATE);
}

static int c_protect(struct state *s, char **a)
{
	char what[512];

	errno = SENTINEL;
	snprintf(what, sizeof(what), "protect %s", a[1]);
	result(s, what, mprotect(s->map, s->map_len, say_prot(a[1])));
	return 0;
}

static int c_unmap(struct state *s, char **a)
{
	(void)a;
	printf("unmap = %d\n", munmap(s->map, s->map_len));
	s->map = NULL;
	return 0;
}

/* pin, unpin, pinstatus: "CMD OFF LEN = R" */
static int do_pin(struct state *s, char **a, unsigned long req)
{
	struct pin p;
	char what[512];

	p.offset = (uint32_t)say_num(a[1]);
	p.len = (uint32_t)say_num(a[2]);
	snprintf(what, sizeof(what), "%s %s %s", a[0], a[1], a[2]);
	result(s, what, io(s, req, (unsigned long)&p));
	return 0;
}

static int c_pin(struct state *s, char **a)
{
	return do_pin(s, a, A_PIN);
}

static int c_unpin(struct state *s, char **a)
{
	return do_pin(s, a, A_UNPIN);
}

static int c_pinstatus(struct state *s, char **a)
{
	return do_pin(s, a, A_PIN_STATUS);
}

static int c_purgeall(struct state *s, char **a)
{
	(void)a;
	result(s, "purgeall", io(s, A_PURGE_ALL, 0));
	return 0;
}

/* fileid, fileid32 (narrow: it must write 4 bytes): "= ino" if it is the mapping's */
static int fileid(struct state *s, const char *cmd, unsigned long req, int narrow)
{
	uint64_t id = 0;
	unsigned long ino;
	char name[512];
	long r = io(s, req, (unsigned long)&id);

	if (r < 0) {
		result(s, cmd, r);
	} else {
		maps_line(s, name, sizeof(name), &ino);
		if (narrow && (id >> 32) != 0)
			printf("%s = WRONG (wrote 8 bytes)\n", cmd);
		else
			printf("%s = %s\n", cmd, s->map != NULL && id == ino ? "ino" : "WRONG");
	}
	return 0;
}

static int c_fileid(struct state *s, char **a)
{
	return fileid(s, a[0], A_FILE_ID, 0);
}

static int c_fileid32(struct state *s, char **a)
{
	return fileid(s, a[0], A_FILE_ID32, 1);
}

static int c_ioctl(struct state *s, char **a)
{
	char what[512];

	snprintf(what, sizeof(what), "ioctl %s %s", a[1], a[2]);
	result(s, what, io(s, (unsigned long)say_num(a[1]), (unsigned long)say_num(a[2])));
	return 0;
}

static int c_bad(struct state *s, char **a)
{
	const char *c = a[1];
	unsigned long req = strcmp(c, "setname") == 0	  ? A_SET_NAME
			    : strcmp(c, "getname") == 0	  ? A_GET_NAME
			    : strcmp(c, "pin") == 0	  ? A_PIN
			    : strcmp(c, "unpin") == 0	  ? A_UNPIN
			    : strcmp(c, "pinstatus") == 0 ? A_PIN_STATUS
							  : A_FILE_ID;
	struct stat st;
	char what[512];

	snprintf(what, sizeof(what), "bad %s", c);
	/* a path in a PROT_NONE page: libc says EFAULT, and so must the shim */
	if (strcmp(c, "open") == 0)
		result(s, what, open((const char *)s->bad, O_RDWR));
	else if (strcmp(c, "stat") == 0)
		result(s, what, stat((const char *)s->bad, &st));
	else if (strcmp(c, "access") == 0)
		result(s, what, access((const char *)s->bad, F_OK));
	else
		result(s, what, io(s, req, (unsigned long)s->bad));
	return 0;
}

/* fill, expect: where OFF LEN starts in the mapping (exit 1 if it is not all there) */
static size_t span(struct state *s, char **a, size_t *len)
{
	size_t off = (size_t)say_num(a[1]);

	*len = (size_t)say_num(a[2]);
	if (s->map == NULL || off + *len > s->map_len) {
		printf("%s: no mapping there\n", a[0]);
		exit(1);
	}
	return off;
}

static int c_fill(struct state *s, char **a)
{
	size_t len, off = span(s, a, &len);

	memset(s->map + off, byte_of(a[3]), len);
	printf("fill %s %s %s = ok\n", a[1], a[2], a[3]);
	return 0;
}

static int c_expect(struct state *s, char **a)
{
	size_t len, off = span(s, a, &len), k;
	int b = byte_of(a[3]);

	for (k = 0; k < len && s->map[off + k] == b; k++)
		;
	if (k == len) {
		printf("expect %s %s %s ok\n", a[1], a[2], a[3]);
	} else {
		printf("expect %s %s %s MISMATCH at %zu: 0x%02x\n", a[1], a[2], a[3], off + k,
		       s->map[off + k]);
		s->failed = 1;
	}
	return 0;
}

static int c_fstat(struct state *s, char **a)
{
	struct stat st;

	(void)a;
	errno = SENTINEL;
	if (fstat(s->fd, &st) != 0)
		result(s, "fstat", -1);
	else if (S_ISCHR(st.st_mode))
		printf("fstat = chr %u:%u mode %o\n", major(st.st_rdev), minor(st.st_rdev),
		       (unsigned)(st.st_mode & 07777));
	else
		printf("fstat = reg %lld\n", (long long)st.st_size);
	return 0;
}

static int c_stat(struct state *s, char **a)
{
	struct stat st, fst;
	const char *path = a[1];
	char what[512];

	errno = SENTINEL;
	snprintf(what, sizeof(what), "stat %s", path);
	if (stat(path, &st) != 0) {
		result(s, what, -1);
	} else {
		int same = s->fd >= 0 && fstat(s->fd, &fst) == 0 && fst.st_rdev == st.st_rdev &&
			   S_ISCHR(fst.st_mode);

		printf("%s = %s %u:%u%s\n", what, S_ISCHR(st.st_mode) ? "chr" : "other",
		       major(st.st_rdev), minor(st.st_rdev), same ? " same as fd" : "");
	}
	return 0;
}

static int c_access(struct state *s, char **a)
{
	const char *m = a[2];
	int mode = m[0] == 'r' ? R_OK : m[0] == 'w' ? W_OK : m[0] == 'x' ? X_OK : F_OK;
	char what[512];

	snprintf(what, sizeof(what), "access %s %s", a[1], m);
	errno = SENTINEL;
	result(s, what, access(a[1], mode));
	return 0;
}

static int c_maps(struct state *s, char **a)
{
	char name[512];
	unsigned long ino;

	(void)a;
	maps_line(s, name, sizeof(name), &ino);
	printf("maps = %s\n", name);
	return 0;
}

static int c_serve(struct state *s, char **a)
{
	send_fd(s, a[1], 0);
	return 0;
}

static int c_servem(struct state *s, char **a)
{
	send_fd(s, a[1], 1);
	return 0;
}

static int c_recv(struct state *s, char **a)
{
	recv_fd(s, a[1]);
	return 0;
}

static int c_write(struct state *s, char **a)
{
	char what[512];

	snprintf(what, sizeof(what), "write %s", a[1]);
	errno = SENTINEL;
	result(s, what, write(s->fd, a[1], strlen(a[1])));
	return 0;
}

static int c_pread(struct state *s, char **a)
{
	char buf[256], what[512];
	size_t n = (size_t)say_num(a[1]);
	ssize_t r;

	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memset(buf, 0, sizeof(buf));
	errno = SENTINEL;
	r = pread(s->fd, buf, n, 0);
	snprintf(what, sizeof(what), "pread %s", a[1]);
	if (r < 0)
		result(s, what, r);
	else
		printf("%s = %s\n", what, buf);
	return 0;
}

static int c_offset(struct state *s, char **a)
{
	(void)a;
	errno = SENTINEL;
	result(s, "offset", (long)lseek(s->fd, 0, SEEK_CUR));
	return 0;
}

static int c_nonblock(struct state *s, char **a)
{
	(void)a;
	errno = SENTINEL;
	result(s, "nonblock", fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) | O_NONBLOCK));
	return 0;
}

static int c_getfl(struct state *s, char **a)
{
	int fl = fcntl(s->fd, F_GETFL);

	(void)a;
	if (fl < 0)
		result(s, "getfl", fl);
	else
		printf("getfl = %s\n", (fl & O_NONBLOCK) ? "nonblock" : "block");
	return 0;
}

/* churn N [MODE]: MODE is taken if it is one of map, nomap, late */
static int c_churn(struct state *s, char **a)
{
	long n = (long)say_num(a[1]), k, slow = 0;
	const char *mode = a[2] != NULL && a[2][0] >= 'a' &&
				   (strcmp(a[2], "map") == 0 || strcmp(a[2], "nomap") == 0 ||
				    strcmp(a[2], "late") == 0)
			   ? a[2]
			   : NULL;

	for (k = 0; k < n; k++) {
		struct timespec t0, t1;
		void *m = NULL;
		int f;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		f = open("/dev/ashmem", O_RDWR | O_CLOEXEC);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (t1.tv_sec - t0.tv_sec > 1 ||
		    (t1.tv_sec - t0.tv_sec == 1 && t1.tv_nsec >= t0.tv_nsec))
			slow++;
		if (f < 0 || ioctl(f, A_SET_SIZE, 4096ul) != 0) {
			printf("churn %ld: region %ld: -1 %s\n", n, k, ename(errno));
			s->failed = 1;
			break;
		}
		if (mode == NULL || mode[0] != 'n') {
			m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
			if (m == MAP_FAILED) {
				printf("churn %ld: region %ld: mmap -1 %s\n", n, k, ename(errno));
				s->failed = 1;
				break;
			}
			if (mode == NULL || mode[0] == 'm')
				munmap(m, 4096);
		}
		close(f);
		if (mode != NULL && mode[0] == 'l')
			munmap(m, 4096);
	}
	if (k == n)
		printf("churn %ld%s%s = ok%s\n", n, mode ? " " : "", mode ? mode : "",
		       slow > 1 ? " slow" : "");
	return mode ? 1 : 0;
}

static int c_close(struct state *s, char **a)
{
	(void)a;
	printf("close = %d\n", close(s->fd));
	return 0;
}

/* spawn, spawnf, pspawn: how many words the child's commands are (up to "end") */
static int child_words(char **a)
{
	int n = 0;

	while (a[1 + n] != NULL && strcmp(a[1 + n], "end") != 0)
		n++;
	return n;
}

/* spawn, spawnf: the child runs the commands; the parent skips them and "end" */
static int spawn(struct state *s, char **a, int atfork)
{
	int n = child_words(a);

	fflush(stdout);
	s->child = atfork ? fork() : _Fork();
	if (s->child == 0) {
		a[1 + n] = NULL;
		exit(run(s, a + 1));
	}
	return n + (a[1 + n] != NULL);
}

static int c_spawn(struct state *s, char **a)
{
	return spawn(s, a, 1);
}

static int c_spawnf(struct state *s, char **a)
{
	return spawn(s, a, 0);
}

static int c_pspawn(struct state *s, char **a)
{
	int n = child_words(a), err;
	char **nargv = again_with_fd(s, a + 1, n);

	fflush(stdout);
	err = posix_spawn(&s->child, "/proc/self/exe", NULL, NULL, nargv, environ);
	printf("pspawn = %s\n", err ? ename(err) : "ok");
	free(nargv);
	return n + (a[1 + n] != NULL);
}

static int c_reap(struct state *s, char **a)
{
	int st = -1;

	(void)a;
	waitpid(s->child, &st, 0);
	printf("reap = %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		s->failed = 1;
	return 0;
}

static int c_wait(struct state *s, char **a)
{
	int k;

	for (k = 0; k < 1000 && access(a[1], F_OK) != 0; k++)
		usleep(10000);
	printf("wait %s%s\n", a[1], k == 1000 ? " TIMEOUT" : "");
	if (k == 1000)
		s->failed = 1;
	return 0;
}

static int c_touch(struct state *s, char **a)
{
	int t = open(a[1], O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

	(void)s;
	printf("touch %s = %d\n", a[1], t < 0 ? -1 : 0);
	close(t);
	return 0;
}

static int c_pid(struct state *s, char **a)
{
	(void)s;
	(void)a;
	printf("pid = %d\n", (int)getpid());
	return 0;
}

static int c_echo(struct state *s, char **a)
{
	(void)s;
	printf("%s\n", a[1]);
	return 0;
}

static int c_nodump(struct state *s, char **a)
{
	(void)s;
	(void)a;
	printf("nodump = %d\n", prctl(PR_SET_DUMPABLE, 0, 0, 0, 0));
	return 0;
}

/* The commands by name, with the arguments each needs (the header says more). */
static const struct command {
	const char *name;
	int nargs;
	int (*run)(struct state *s, char **a);
	const char *help;
} commands[] = {
	{ "open", 0, c_open, "[PATH]: open it (or /dev/ashmem), the current fd" },
	{ "memfd", 2, c_memfd, "NAME SIZE: a plain memfd that allows sealing" },
	{ "openx", 0, c_openx, "open /dev/ashmem without O_CLOEXEC" },
	{ "exec", 0, c_exec, "CMD...: exec this program again on usefd FD CMD..." },
	{ "usefd", 1, c_usefd, "N: the current fd is N" },
	{ "nofile", 1, c_nofile, "N: RLIMIT_NOFILE" },
	{ "dupto", 1, c_dupto, "N: F_DUPFD to N or above, the current fd" },
	{ "setname", 1, c_setname, "NAME: ASHMEM_SET_NAME (- for empty)" },
	{ "longname", 1, c_longname, "N: ASHMEM_SET_NAME of N x's" },
	{ "getname", 0, c_getname, "ASHMEM_GET_NAME" },
	{ "setsize", 1, c_setsize, "N: ASHMEM_SET_SIZE" },
	{ "setsize32", 1, c_setsize32, "N: ASHMEM_SET_SIZE, 32-bit" },
	{ "getsize", 0, c_getsize, "ASHMEM_GET_SIZE" },
	{ "setprot", 1, c_setprot, "P: ASHMEM_SET_PROT_MASK" },
	{ "setprot32", 1, c_setprot32, "P: ASHMEM_SET_PROT_MASK, 32-bit" },
	{ "getprot", 0, c_getprot, "ASHMEM_GET_PROT_MASK" },
	{ "addseal", 1, c_addseal, "WHICH: fcntl(F_ADD_SEALS)" },
	{ "getseals", 0, c_getseals, "fcntl(F_GET_SEALS)" },
	{ "map", 2, c_map, "LEN P: mmap MAP_SHARED, the current mapping" },
	{ "mapp", 2, c_mapp, "LEN P: mmap MAP_PRIVATE, the current mapping" },
	{ "protect", 1, c_protect, "P: mprotect the current mapping" },
	{ "unmap", 0, c_unmap, "munmap the current mapping" },
	{ "pin", 2, c_pin, "OFF LEN: ASHMEM_PIN" },
	{ "unpin", 2, c_unpin, "OFF LEN: ASHMEM_UNPIN" },
	{ "pinstatus", 2, c_pinstatus, "OFF LEN: ASHMEM_GET_PIN_STATUS" },
	{ "purgeall", 0, c_purgeall, "ASHMEM_PURGE_ALL_CACHES" },
	{ "fileid", 0, c_fileid, "ASHMEM_GET_FILE_ID" },
	{ "fileid32", 0, c_fileid32, "ASHMEM_GET_FILE_ID, 32-bit" },
	{ "ioctl", 2, c_ioctl, "REQ ARG: ioctl" },
	{ "bad", 1, c_bad, "CMD: CMD with a pointer into a PROT_NONE page" },
	{ "fill", 3, c_fill, "OFF LEN C: write C into the mapping" },
	{ "expect", 3, c_expect, "OFF LEN C: check the mapping" },
	{ "fstat", 0, c_fstat, "fstat the current fd" },
	{ "stat", 1, c_stat, "PATH: stat, and is it the current fd's device" },
	{ "access", 2, c_access, "PATH MODE: access" },
	{ "maps", 0, c_maps, "the current mapping's name in /proc/self/maps" },
	{ "serve", 1, c_serve, "SOCK: send the current fd to who connects" },
	{ "servem", 1, c_servem, "SOCK: the same by sendmmsg" },
	{ "recv", 1, c_recv, "SOCK: receive an fd, the current fd" },
	{ "write", 1, c_write, "STR: write it to the current fd" },
	{ "pread", 1, c_pread, "LEN: pread LEN bytes at 0" },
	{ "offset", 0, c_offset, "lseek(fd, 0, SEEK_CUR)" },
	{ "nonblock", 0, c_nonblock, "set O_NONBLOCK" },
	{ "getfl", 0, c_getfl, "is O_NONBLOCK set" },
	{ "churn", 1, c_churn, "N [MODE]: N regions made and closed" },
	{ "close", 0, c_close, "close the current fd" },
	{ "spawn", 0, c_spawn, "CMD... end: fork, the child runs CMD..." },
	{ "spawnf", 0, c_spawnf, "CMD... end: the same with _Fork" },
	{ "pspawn", 0, c_pspawn, "CMD... end: posix_spawn this program on them" },
	{ "reap", 0, c_reap, "wait for the child" },
	{ "wait", 1, c_wait, "PATH: until it exists (10 s at most)" },
	{ "touch", 1, c_touch, "PATH: create it" },
	{ "pid", 0, c_pid, "this process's pid" },
	{ "echo", 1, c_echo, "WORD: print it" },
	{ "nodump", 0, c_nodump, "prctl(PR_SET_DUMPABLE, 0)" },
};

static int run(struct state *s, char **a)
{
	while (*a != NULL) {
		const struct command *c = NULL;

		for (size_t k = 0; k < sizeof(commands) / sizeof(commands[0]) && c == NULL; k++)
			if (strcmp(*a, commands[k].name) == 0)
				c = &commands[k];
		if (c == NULL) {
			fprintf(stderr, "ashmem-legacy: unknown command %s\n", *a);
			exit(2);
		}
		for (int k = 1; k <= c->nargs; k++) {
			if (a[k] == NULL) {
				fprintf(stderr, "%s: missing argument\n", *a);
				exit(2);
			}
		}
		a += 1 + c->nargs + c->run(s, a);
		fflush(stdout);
	}
	return s->failed;
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	struct state s = { .fd = -1, .child = -1, .self = argv[0] };

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* a page that can be neither read nor written, kept so for the whole run */
	s.bad = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s.bad == MAP_FAILED)
		return 2;
	return argc < 1 ? 0 : run(&s, argv + 1);
}
