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
 *                        "... slow" if an open took over a second), or the
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

static int fd = -1, failed;
static unsigned char *map;
static size_t map_len;
static pid_t child = -1;
static void *bad; /* an address in a PROT_NONE page */

static uint64_t num(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'K': v <<= 10; break;
	case 'M': v <<= 20; break;
	case 'G': v <<= 30; break;
	default: break;
	}
	return v;
}

static int prot_of(const char *s)
{
	int p = 0;

	if (strcmp(s, "none") == 0)
		return 0;
	if (s[0] >= '0' && s[0] <= '9')
		return (int)num(s);
	for (; *s; s++)
		p |= *s == 'r' ? PROT_READ : *s == 'w' ? PROT_WRITE : *s == 'x' ? PROT_EXEC : 0;
	return p;
}

/* This program's argv again, on "usefd FD" and argv[from..to): exec, pspawn. */
static char **again_with_fd(char **argv, int from, int to)
{
	static char num_fd[16];
	char **nargv = calloc((size_t)(to - from + 4), sizeof(char *));
	int k = 0;

	if (nargv == NULL)
		abort();
	snprintf(num_fd, sizeof(num_fd), "%d", fd);
	nargv[k++] = argv[0];
	nargv[k++] = "usefd";
	nargv[k++] = num_fd;
	for (int j = from; j < to; j++)
		nargv[k++] = argv[j];
	nargv[k] = NULL;
	return nargv;
}

static void result(const char *what, long r)
{
	int e = errno;

	if (r < 0) {
		printf("%s = -1 %s\n", what, ename(e));
		return;
	}
	printf("%s = %ld%s\n", what, r, e != SENTINEL ? " ERRNO-CLOBBERED" : "");
	if (e != SENTINEL)
		failed = 1;
}

static long io(unsigned long req, unsigned long arg)
{
	errno = SENTINEL;
	return ioctl(fd, req, arg);
}

static int byte_of(const char *c)
{
	return strcmp(c, "zero") == 0 ? 0 : c[0];
}

static void send_fd(const char *path, int multi)
{
	struct mmsghdr mm;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char dummy = 'f', cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &dummy, 1 };
	struct msghdr m = { 0 };
	struct cmsghdr *c;
	int s = socket(AF_UNIX, SOCK_STREAM, 0), conn;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s, 1) != 0) {
		printf("serve %s = -1 %s\n", path, ename(errno));
		failed = 1;
		return;
	}
	conn = accept(s, NULL, NULL);
	memset(cbuf, 0, sizeof(cbuf));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	memset(&mm, 0, sizeof(mm));
	mm.msg_hdr = m;
	if (multi) /* sendmmsg: 1 message sent, or -1 */
		printf("servem %s = %d\n", path, conn < 0 ? -1 : sendmmsg(conn, &mm, 1, 0));
	else
		printf("serve %s = %zd\n", path, conn < 0 ? -1 : sendmsg(conn, &m, 0));
	close(conn);
	close(s);
}

static void recv_fd(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char dummy, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &dummy, 1 };
	struct msghdr m = { 0 };
	struct cmsghdr *c;
	int s = socket(AF_UNIX, SOCK_STREAM, 0), tries;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	for (tries = 0; tries < 1000; tries++) {
		if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0)
			break;
		usleep(10000);
	}
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	if (recvmsg(s, &m, 0) != 1 || (c = CMSG_FIRSTHDR(&m)) == NULL ||
	    c->cmsg_type != SCM_RIGHTS) {
		printf("recv %s = -1\n", path);
		failed = 1;
		close(s);
		return;
	}
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	close(s);
	printf("recv %s = ok\n", path);
}

/* The name of the mapping at map in /proc/self/maps, and its inode. */
static void maps_line(char *name, size_t size, unsigned long *ino)
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
		if ((uintptr_t)map >= lo && (uintptr_t)map < hi) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(name, size, "%s", line + off);
			*ino = i;
		}
	}
	if (f != NULL)
		fclose(f);
}

static int run(char **argv, int argc, int i);

static int command(char **argv, int argc, int i)
{
	const char *cmd = argv[i];
	char what[512];
	struct pin p;

#define ARG(k) (i + (k) < argc ? argv[i + (k)] : (fprintf(stderr, "%s: missing argument\n", cmd), exit(2), ""))
	if (strcmp(cmd, "open") == 0) {
		const char *path = i + 1 < argc && argv[i + 1][0] == '/' ? argv[++i] : "/dev/ashmem";

		errno = SENTINEL;
		fd = open(path, O_RDWR | O_CLOEXEC);
		snprintf(what, sizeof(what), "open %s", path);
		result(what, fd);
		return i + 1;
	}
	if (strcmp(cmd, "openx") == 0) {
		errno = SENTINEL;
		fd = open("/dev/ashmem", O_RDWR);
		result("openx", fd);
		return i + 1;
	}
	if (strcmp(cmd, "exec") == 0) {
		char **nargv = again_with_fd(argv, i + 1, argc);

		printf("exec\n");
		fflush(stdout);
		execv("/proc/self/exe", nargv);
		printf("exec = -1 %s\n", ename(errno));
		exit(1);
	}
	if (strcmp(cmd, "usefd") == 0) {
		fd = (int)num(ARG(1));
		printf("usefd %d\n", fd);
		return i + 2;
	}
	if (strcmp(cmd, "nofile") == 0) {
		struct rlimit rl;

		rl.rlim_cur = rl.rlim_max = (rlim_t)num(ARG(1));
		snprintf(what, sizeof(what), "nofile %s", argv[i + 1]);
		errno = SENTINEL;
		result(what, setrlimit(RLIMIT_NOFILE, &rl));
		return i + 2;
	}
	if (strcmp(cmd, "dupto") == 0) {
		int hi;

		snprintf(what, sizeof(what), "dupto %s", ARG(1));
		errno = SENTINEL;
		hi = fcntl(fd, F_DUPFD, (int)num(argv[i + 1]));
		result(what, hi < 0 ? -1 : hi >= (int)num(argv[i + 1]));
		if (hi >= 0) {
			close(fd);
			fd = hi;
		}
		return i + 2;
	}
	if (strcmp(cmd, "setname") == 0) {
		const char *n = ARG(1);

		snprintf(what, sizeof(what), "setname %s", n);
		result(what, io(A_SET_NAME, (unsigned long)(strcmp(n, "-") == 0 ? "" : n)));
		return i + 2;
	}
	if (strcmp(cmd, "longname") == 0) {
		static char big[600];
		size_t n = (size_t)num(ARG(1));

		memset(big, 'x', sizeof(big));
		big[n < sizeof(big) ? n : sizeof(big) - 1] = '\0';
		snprintf(what, sizeof(what), "longname %zu", n);
		result(what, io(A_SET_NAME, (unsigned long)big));
		return i + 2;
	}
	if (strcmp(cmd, "getname") == 0) {
		char name[256];
		long r;

		memset(name, '#', sizeof(name));
		r = io(A_GET_NAME, (unsigned long)name);
		if (r < 0) {
			result("getname", r);
		} else {
			name[255] = '\0';
			printf("getname = %s (%zu)\n", name, strlen(name));
		}
		return i + 1;
	}
	if (strcmp(cmd, "setsize") == 0 || strcmp(cmd, "setsize32") == 0) {
		snprintf(what, sizeof(what), "%s %s", cmd, ARG(1));
		result(what, io(cmd[7] ? A_SET_SIZE32 : A_SET_SIZE, (unsigned long)num(argv[i + 1])));
		return i + 2;
	}
	if (strcmp(cmd, "getsize") == 0) {
		result("getsize", io(A_GET_SIZE, 0));
		return i + 1;
	}
	if (strcmp(cmd, "setprot") == 0 || strcmp(cmd, "setprot32") == 0) {
		snprintf(what, sizeof(what), "%s %s", cmd, ARG(1));
		result(what, io(cmd[7] ? A_SET_PROT32 : A_SET_PROT, (unsigned long)prot_of(argv[i + 1])));
		return i + 2;
	}
	if (strcmp(cmd, "getprot") == 0) {
		result("getprot", io(A_GET_PROT, 0));
		return i + 1;
	}
	if (strcmp(cmd, "map") == 0 || strcmp(cmd, "mapp") == 0) {
		size_t len = (size_t)num(ARG(1));
		void *m;

		errno = SENTINEL;
		m = mmap(NULL, len, prot_of(ARG(2)), cmd[3] ? MAP_PRIVATE : MAP_SHARED, fd, 0);
		snprintf(what, sizeof(what), "%s %s %s", cmd, argv[i + 1], argv[i + 2]);
		if (m == MAP_FAILED) {
			result(what, -1);
		} else {
			map = m;
			map_len = len;
			printf("%s = ok%s\n", what, errno != SENTINEL ? " ERRNO-CLOBBERED" : "");
		}
		return i + 3;
	}
	if (strcmp(cmd, "protect") == 0) {
		errno = SENTINEL;
		snprintf(what, sizeof(what), "protect %s", ARG(1));
		result(what, mprotect(map, map_len, prot_of(argv[i + 1])));
		return i + 2;
	}
	if (strcmp(cmd, "unmap") == 0) {
		printf("unmap = %d\n", munmap(map, map_len));
		map = NULL;
		return i + 1;
	}
	if (strcmp(cmd, "pin") == 0 || strcmp(cmd, "unpin") == 0 || strcmp(cmd, "pinstatus") == 0) {
		p.offset = (uint32_t)num(ARG(1));
		p.len = (uint32_t)num(ARG(2));
		snprintf(what, sizeof(what), "%s %s %s", cmd, argv[i + 1], argv[i + 2]);
		result(what, io(cmd[0] == 'u' ? A_UNPIN : cmd[3] == 's' ? A_PIN_STATUS : A_PIN,
				(unsigned long)&p));
		return i + 3;
	}
	if (strcmp(cmd, "purgeall") == 0) {
		result("purgeall", io(A_PURGE_ALL, 0));
		return i + 1;
	}
	if (strcmp(cmd, "fileid") == 0 || strcmp(cmd, "fileid32") == 0) {
		uint64_t id = 0;
		unsigned long ino;
		char name[512];
		long r = io(cmd[6] ? A_FILE_ID32 : A_FILE_ID, (unsigned long)&id);

		if (r < 0) {
			result(cmd, r);
		} else {
			maps_line(name, sizeof(name), &ino);
			if (cmd[6] && (id >> 32) != 0)
				printf("%s = WRONG (wrote 8 bytes)\n", cmd);
			else
				printf("%s = %s\n", cmd, map != NULL && id == ino ? "ino" : "WRONG");
		}
		return i + 1;
	}
	if (strcmp(cmd, "ioctl") == 0) {
		snprintf(what, sizeof(what), "ioctl %s %s", ARG(1), ARG(2));
		result(what, io((unsigned long)num(argv[i + 1]), (unsigned long)num(argv[i + 2])));
		return i + 3;
	}
	if (strcmp(cmd, "bad") == 0) {
		const char *c = ARG(1);
		unsigned long req = strcmp(c, "setname") == 0	  ? A_SET_NAME
				    : strcmp(c, "getname") == 0	  ? A_GET_NAME
				    : strcmp(c, "pin") == 0	  ? A_PIN
				    : strcmp(c, "unpin") == 0	  ? A_UNPIN
				    : strcmp(c, "pinstatus") == 0 ? A_PIN_STATUS
								  : A_FILE_ID;

		struct stat st;

		snprintf(what, sizeof(what), "bad %s", c);
		/* a path in a PROT_NONE page: libc says EFAULT, and so must the shim */
		if (strcmp(c, "open") == 0)
			result(what, open((const char *)bad, O_RDWR));
		else if (strcmp(c, "stat") == 0)
			result(what, stat((const char *)bad, &st));
		else if (strcmp(c, "access") == 0)
			result(what, access((const char *)bad, F_OK));
		else
			result(what, io(req, (unsigned long)bad));
		return i + 2;
	}
	if (strcmp(cmd, "fill") == 0 || strcmp(cmd, "expect") == 0) {
		size_t off = (size_t)num(ARG(1)), len = (size_t)num(ARG(2));
		int b = byte_of(ARG(3));

		if (map == NULL || off + len > map_len) {
			printf("%s: no mapping there\n", cmd);
			exit(1);
		}
		if (cmd[0] == 'f') {
			memset(map + off, b, len);
			printf("fill %s %s %s = ok\n", argv[i + 1], argv[i + 2], argv[i + 3]);
		} else {
			size_t k;

			for (k = 0; k < len && map[off + k] == b; k++)
				;
			if (k == len) {
				printf("expect %s %s %s ok\n", argv[i + 1], argv[i + 2], argv[i + 3]);
			} else {
				printf("expect %s %s %s MISMATCH at %zu: 0x%02x\n", argv[i + 1],
				       argv[i + 2], argv[i + 3], off + k, map[off + k]);
				failed = 1;
			}
		}
		return i + 4;
	}
	if (strcmp(cmd, "fstat") == 0) {
		struct stat st;

		errno = SENTINEL;
		if (fstat(fd, &st) != 0)
			result("fstat", -1);
		else if (S_ISCHR(st.st_mode))
			printf("fstat = chr %u:%u mode %o\n", major(st.st_rdev), minor(st.st_rdev),
			       (unsigned)(st.st_mode & 07777));
		else
			printf("fstat = reg %lld\n", (long long)st.st_size);
		return i + 1;
	}
	if (strcmp(cmd, "stat") == 0) {
		struct stat st, fst;
		const char *path = ARG(1);

		errno = SENTINEL;
		snprintf(what, sizeof(what), "stat %s", path);
		if (stat(path, &st) != 0) {
			result(what, -1);
		} else {
			int same = fd >= 0 && fstat(fd, &fst) == 0 && fst.st_rdev == st.st_rdev &&
				   S_ISCHR(fst.st_mode);

			printf("%s = %s %u:%u%s\n", what, S_ISCHR(st.st_mode) ? "chr" : "other",
			       major(st.st_rdev), minor(st.st_rdev), same ? " same as fd" : "");
		}
		return i + 2;
	}
	if (strcmp(cmd, "access") == 0) {
		const char *m = ARG(2);
		int mode = m[0] == 'r' ? R_OK : m[0] == 'w' ? W_OK : m[0] == 'x' ? X_OK : F_OK;

		snprintf(what, sizeof(what), "access %s %s", argv[i + 1], m);
		errno = SENTINEL;
		result(what, access(argv[i + 1], mode));
		return i + 3;
	}
	if (strcmp(cmd, "maps") == 0) {
		char name[512];
		unsigned long ino;

		maps_line(name, sizeof(name), &ino);
		printf("maps = %s\n", name);
		return i + 1;
	}
	if (strcmp(cmd, "serve") == 0 || strcmp(cmd, "servem") == 0) {
		send_fd(ARG(1), cmd[5] == 'm');
		return i + 2;
	}
	if (strcmp(cmd, "recv") == 0) {
		recv_fd(ARG(1));
		return i + 2;
	}
	if (strcmp(cmd, "write") == 0) {
		const char *s = ARG(1);

		snprintf(what, sizeof(what), "write %s", s);
		errno = SENTINEL;
		result(what, write(fd, s, strlen(s)));
		return i + 2;
	}
	if (strcmp(cmd, "pread") == 0) {
		char buf[256];
		size_t n = (size_t)num(ARG(1));
		ssize_t r;

		if (n >= sizeof(buf))
			n = sizeof(buf) - 1;
		memset(buf, 0, sizeof(buf));
		errno = SENTINEL;
		r = pread(fd, buf, n, 0);
		snprintf(what, sizeof(what), "pread %s", argv[i + 1]);
		if (r < 0)
			result(what, r);
		else
			printf("%s = %s\n", what, buf);
		return i + 2;
	}
	if (strcmp(cmd, "offset") == 0) {
		errno = SENTINEL;
		result("offset", (long)lseek(fd, 0, SEEK_CUR));
		return i + 1;
	}
	if (strcmp(cmd, "nonblock") == 0) {
		errno = SENTINEL;
		result("nonblock", fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK));
		return i + 1;
	}
	if (strcmp(cmd, "getfl") == 0) {
		int fl = fcntl(fd, F_GETFL);

		if (fl < 0)
			result("getfl", fl);
		else
			printf("getfl = %s\n", (fl & O_NONBLOCK) ? "nonblock" : "block");
		return i + 1;
	}
	if (strcmp(cmd, "churn") == 0) {
		long n = (long)num(ARG(1)), k, slow = 0;
		const char *mode = i + 2 < argc && argv[i + 2][0] >= 'a' &&
					   (strcmp(argv[i + 2], "map") == 0 ||
					    strcmp(argv[i + 2], "nomap") == 0 ||
					    strcmp(argv[i + 2], "late") == 0)
				   ? argv[i + 2]
				   : NULL;

		for (k = 0; k < n; k++) {
			struct timespec a, b;
			void *m = NULL;
			int f;

			clock_gettime(CLOCK_MONOTONIC, &a);
			f = open("/dev/ashmem", O_RDWR | O_CLOEXEC);
			clock_gettime(CLOCK_MONOTONIC, &b);
			if (b.tv_sec - a.tv_sec > 1 || (b.tv_sec - a.tv_sec == 1 && b.tv_nsec >= a.tv_nsec))
				slow++;
			if (f < 0 || ioctl(f, A_SET_SIZE, 4096ul) != 0) {
				printf("churn %ld: region %ld: -1 %s\n", n, k, ename(errno));
				failed = 1;
				break;
			}
			if (mode == NULL || mode[0] != 'n') {
				m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
				if (m == MAP_FAILED) {
					printf("churn %ld: region %ld: mmap -1 %s\n", n, k, ename(errno));
					failed = 1;
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
			       slow ? " slow" : "");
		return i + (mode ? 3 : 2);
	}
	if (strcmp(cmd, "close") == 0) {
		printf("close = %d\n", close(fd));
		return i + 1;
	}
	if (strcmp(cmd, "spawn") == 0 || strcmp(cmd, "spawnf") == 0) {
		int j = i + 1;

		while (j < argc && strcmp(argv[j], "end") != 0)
			j++;
		fflush(stdout);
		child = cmd[5] == 'f' ? _Fork() : fork();
		if (child == 0) {
			argv[j] = NULL;
			exit(run(argv, j, i + 1));
		}
		return j + 1;
	}
	if (strcmp(cmd, "pspawn") == 0) {
		int j = i + 1, err;
		char **nargv;

		while (j < argc && strcmp(argv[j], "end") != 0)
			j++;
		nargv = again_with_fd(argv, i + 1, j);
		fflush(stdout);
		err = posix_spawn(&child, "/proc/self/exe", NULL, NULL, nargv, environ);
		printf("pspawn = %s\n", err ? ename(err) : "ok");
		free(nargv);
		return j + 1;
	}
	if (strcmp(cmd, "reap") == 0) {
		int st = -1;

		waitpid(child, &st, 0);
		printf("reap = %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			failed = 1;
		return i + 1;
	}
	if (strcmp(cmd, "wait") == 0) {
		int k;

		for (k = 0; k < 1000 && access(ARG(1), F_OK) != 0; k++)
			usleep(10000);
		printf("wait %s%s\n", argv[i + 1], k == 1000 ? " TIMEOUT" : "");
		if (k == 1000)
			failed = 1;
		return i + 2;
	}
	if (strcmp(cmd, "touch") == 0) {
		int t = open(ARG(1), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

		printf("touch %s = %d\n", argv[i + 1], t < 0 ? -1 : 0);
		close(t);
		return i + 2;
	}
	if (strcmp(cmd, "pid") == 0) {
		printf("pid = %d\n", (int)getpid());
		return i + 1;
	}
	if (strcmp(cmd, "echo") == 0) {
		printf("%s\n", ARG(1));
		return i + 2;
	}
	if (strcmp(cmd, "nodump") == 0) {
		printf("nodump = %d\n", prctl(PR_SET_DUMPABLE, 0, 0, 0, 0));
		return i + 1;
	}
	fprintf(stderr, "ashmem-legacy: unknown command %s\n", cmd);
	exit(2);
}

static int run(char **argv, int argc, int i)
{
	while (i < argc) {
		i = command(argv, argc, i);
		fflush(stdout);
	}
	return failed;
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* a page that can be neither read nor written, kept so for the whole run */
	bad = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (bad == MAP_FAILED)
		return 2;
	return run(argv, argc, 1);
}
