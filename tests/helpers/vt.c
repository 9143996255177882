/* SPDX-License-Identifier: MIT */
/*
 * vt - a scriptable test program for the shell tests.
 *
 * An "unmodified program": it calls libc's fallocate() and fallocate64()
 * and nothing of libvolatile, so running it with LD_PRELOAD=libvolatile.so
 * is what a user's program sees. It runs the commands given as arguments,
 * in order, printing one line per command:
 *
 *   memfd NAME SIZE      memfd_create(NAME, MFD_ALLOW_SEALING), ftruncate;
 *                        becomes the current fd          "memfd NAME SIZE = FD"
 *   open PATH MODE       open PATH, MODE one of r w rw rwc rwt a ra dir path
 *                        (rwc creates 0600, rwt also truncates, a is
 *                        O_WRONLY|O_APPEND, ra O_RDWR|O_APPEND, dir
 *                        O_RDONLY|O_DIRECTORY, path O_PATH); current fd
 *   pipe                 a pipe; the current fd is its write end
 *                                                       "pipe = RFD WFD"
 *   socket               a socketpair(AF_UNIX); current fd is one end
 *   sendfd N             send fd N over the current socket (SCM_RIGHTS), then
 *                        close N: the file is in flight, in no fd table
 *                                                       "sendfd N = 0"
 *   recvfd               receive one fd from the current socket; it becomes
 *                        the current fd                 "recvfd = FD"
 *   uring                an io_uring; the current fd registered as its fixed
 *                        file 0, then closed: held by the ring alone
 *                                     "uring = 0", or "uring = -1 ENAME"
 *   unring               IORING_OP_FIXED_FD_INSTALL of fixed file 0: an fd
 *                        again, the current fd   "unring = FD" (or -1 ENAME)
 *   fd N                 make inherited fd N the current fd
 *   dup N                dup2(current, N); N becomes the current fd
 *   close                close the current fd (it stays current: EBADF)
 *   fill OFF LEN C       pwrite LEN bytes C (a character, or "zero")
 *   expect OFF LEN C     pread and check every byte: "... ok" or
 *                        "... MISMATCH ..." (exit status 1)
 *   mark OFF LEN         fallocate(fd, FALLOC_FL_MARK_VOLATILE, OFF, LEN)
 *   unmark OFF LEN       fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, OFF, LEN)
 *   fa MODE OFF LEN      fallocate(fd, MODE, OFF, LEN)
 *   fa64 MODE OFF LEN    fallocate64(fd, MODE, OFF, LEN)
 *   sysfa MODE OFF LEN   syscall(SYS_fallocate, fd, MODE, OFF, LEN): the
 *                        system call itself, which no preloaded library sees
 *                        these print "CMD ARGS = RET" or "CMD ARGS = -1 ENAME"
 *   seal WHICH           F_ADD_SEALS; WHICH: write, future-write, grow,
 *                        shrink, seal, joined with commas
 *   truncate SIZE        ftruncate
 *   size | blocks | sum  st_size, st_blocks, FNV-1a of the whole content
 *   st                   "st size=N blocks=N sum=HEX"
 *   pid                  "pid = N"
 *   procpid              "procpid = N": this process's pid under /proc
 *   echo WORD            "WORD"
 *   envpoke NAME VALUE   overwrite NAME's value, in place, in the environment
 *                        strings exec left on the stack (as setproctitle
 *                        writes over them)             "envpoke NAME = N"
 *   wait PATH            block until PATH exists (60 s at most, else
 *                        "wait PATH TIMEOUT", exit status 1)
 *   userns UID           unshare(CLONE_NEWUSER), our user mapped to UID there
 *                        (as root: any UID), "userns UID = 0"
 *   nodump               prctl(PR_SET_DUMPABLE, 0): the user's other processes
 *                        can no longer look into this one's /proc files
 *   listener             no_new_privs, then a seccomp filter (allow all) with a
 *                        user-notification listener of its own, as container
 *                        runtimes and sandboxes install: "listener = 0", or
 *                        "listener = -1 EBUSY" under a filter that has one
 *                        (`volatile run`'s: one listener in a chain)
 *   lock                 F_SETLK: a POSIX write lock on the whole current file
 *   lease                F_SETLEASE F_WRLCK on the current fd, counting the
 *                        SIGIOs that say it is being broken     "lease = R"
 *   leased               "leased = TYPE sigio = N": F_GETLEASE (wr, rd, none)
 *                        and the SIGIOs seen so far
 *   haslock PATH         F_GETLK from this process: "haslock PATH = pid N"
 *                        or "= unlocked"
 *   touch PATH           create PATH
 *   unlink PATH          unlink PATH
 *   sleep MS             sleep
 *   grab TOTAL STEP MS   take TOTAL bytes of anonymous memory, touching STEP
 *                        bytes at a time and sleeping MS between steps; keeps
 *                        them until exit       "grab TOTAL STEP MS = ok"
 *   spawn CMD... end     fork: the child runs CMD... then exits; the parent
 *                        goes on after "end"
 *   clone CMD... end     the same with clone(2) (a child of its own memory,
 *                        as fork makes, but without glibc's fork: no atfork
 *                        handlers run, no robust-mutex list registered)
 *   reap                 wait for the last spawned child ("reap = STATUS");
 *                        its failure is ours
 *   detach               fork: the parent exits at once (status 0), the
 *                        child goes on with the rest
 *   exec PATH ARG...     execv(PATH, {PATH, ARG...}), the words up to "end" or
 *                        the last one ("spawn exec PATH ARG... end" makes a
 *                        child that runs another program); "exec PATH" is
 *                        printed first; if it fails, "exec PATH = -1 ENAME"
 *   exit N               exit(N) here; the words after it are not run
 *   kill SIG             kill(getpid(), SIG): a system call, which glibc's
 *                        raise() is not for its own signals 32 and 33; SIG a
 *                        number or a name without SIG (TSTP); printed once it
 *                        returns (after a SIGCONT, for a stop) "kill SIG = R"
 *   abort                abort()
 *   report FD            write "pid P ppid Q\n" (getpid, getppid) to fd FD,
 *                        for a parent that waits for it      "report FD = 0"
 *   hold FD              read fd FD until end of file        "hold FD = 0"
 *   count SIG            catch SIG, counting each delivery   "count SIG = 0"
 *   await SIG            until SIG was caught once (60 s at most, else
 *                        "await SIG TIMEOUT", exit status 1)  "await SIG"
 *   counted SIG          "counted SIG = N": the deliveries caught so far
 *   waitall              wait() until ECHILD      "waitall = N children"
 *   tstp STATUS          stop itself (kill(getpid(), SIGTSTP)), as a program
 *                        that suspends itself does; once continued, print
 *                        "continued" and exit STATUS at once
 *   sigcount PATH        count each delivery of SIGINT, SIGQUIT, SIGWINCH and
 *                        SIGCONT, rewriting PATH after each (whole, by a
 *                        rename): "INT n QUIT n WINCH n CONT n"; until
 *                        another signal ends it (SIGALRM after 300 s)
 *
 * With the fault-injecting library preloaded, VT_STOP_AT=WHERE stops the
 * process at the first of its steps so named (vl_fault_hook); VT_PAUSE_AT=
 * WHERE with VT_PAUSE=PATH holds the thread that reaches it (creating
 * PATH.in) until PATH.go exists.
 *
 * Numbers (MODE, OFF, LEN, SIZE) are decimal, 0x hex or 0 octal, with
 * optional K, M, G, T, P suffixes (powers of 1024), or "max" (LLONG_MAX),
 * or a mode name (KEEP_SIZE, PUNCH_HOLE, NO_HIDE_STALE, COLLAPSE_RANGE,
 * ZERO_RANGE, INSERT_RANGE, UNSHARE_RANGE, WRITE_ZEROES, MARK, UNMARK),
 * joined with |, + or - ("MARK|KEEP_SIZE", "max-10").
 *
 * errno is set to a sentinel before each fallocate; if a call succeeds and
 * errno is not the sentinel any more, the line ends with
 * "ERRNO-CHANGED ENAME" and the exit status is 1: libc leaves errno alone
 * on success, so a shim must too.
 *
 * Exit status: 0, 1 if a check failed, 2 on bad usage.
 */
#include <volatile.h>

#include <ctype.h>
#include <sched.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif
#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING 0x0002U
#endif

/* the two libc symbols, called by name whatever the headers redirect */
extern int vt_fallocate(int fd, int mode, off_t off, off_t len) __asm__("fallocate");
extern int vt_fallocate64(int fd, int mode, off64_t off, off64_t len) __asm__("fallocate64");

#define SENTINEL 0x7eadbeef

/* What the commands share (a spawned child gets its own copy). */
struct state {
	int cur;		/* the current fd */
	int failed;		/* a check failed: the exit status is 1 */
	pid_t last_child;	/* what reap waits for */
};

/* the SIGIOs seen (a lease being broken): the handler's, so not in the state */
static volatile sig_atomic_t sigios;

/* count's deliveries, by signal number */
static volatile sig_atomic_t caught[65];

/*
 * Run with the fault-injecting library (tests/fault/), which calls this at
 * each of its steps: VT_STOP_AT=WHERE stops the process (SIGSTOP) at the
 * first step of that name, as a debugger or ^Z may at any instant.
 */
/*
 * VT_PAUSE_AT=WHERE with VT_PAUSE=PATH instead makes the thread that
 * reaches that step create PATH.in and wait there (raw system calls: it
 * may be the library's punching thread, which must take no lock) until
 * PATH.go exists: a stop of that thread alone. (A SIGSTOP sent from the
 * punching thread, whose caller waits for it in clone(CLONE_VFORK), did
 * not hold it there.)
 */
static void pause_here(const char *path)
{
	char in[PATH_MAX], go[PATH_MAX];
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	long fd;

	snprintf(in, sizeof(in), "%s.in", path);
	snprintf(go, sizeof(go), "%s.go", path);
	fd = syscall(SYS_openat, AT_FDCWD, in, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		syscall(SYS_close, fd);
	while (syscall(SYS_faccessat, AT_FDCWD, go, F_OK) != 0)
		syscall(SYS_nanosleep, &ts, NULL);
}

void vl_fault_hook(const char *where) __attribute__((visibility("default")));
void vl_fault_hook(const char *where)
{
	static int stopped, paused;
	const char *at = getenv("VT_STOP_AT");
	const char *pause_at = getenv("VT_PAUSE_AT"), *pause_path = getenv("VT_PAUSE");

	if (!paused && pause_at != NULL && pause_path != NULL && strcmp(pause_at, where) == 0) {
		paused = 1;
		pause_here(pause_path);
	}
	if (stopped || at == NULL || strcmp(at, where) != 0)
		return;
	stopped = 1;
	kill(getpid(), SIGSTOP);
}

static void on_sigio(int sig)
{
	(void)sig;
	sigios++;
}

static void usage(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void usage(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("vt: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static const struct {
	int e;
	const char *name;
} errnames[] = {
	{ EPERM, "EPERM" },	    { ENOENT, "ENOENT" },	{ ESRCH, "ESRCH" },
	{ EINTR, "EINTR" },	    { EIO, "EIO" },		{ ENXIO, "ENXIO" },
	{ E2BIG, "E2BIG" },	    { ENOEXEC, "ENOEXEC" },	{ EBADF, "EBADF" },
	{ ECHILD, "ECHILD" },	    { EAGAIN, "EAGAIN" },	{ ENOMEM, "ENOMEM" },
	{ EACCES, "EACCES" },	    { EFAULT, "EFAULT" },	{ EBUSY, "EBUSY" },
	{ EEXIST, "EEXIST" },	    { EXDEV, "EXDEV" },		{ ENODEV, "ENODEV" },
	{ ENOTDIR, "ENOTDIR" },	    { EISDIR, "EISDIR" },	{ EINVAL, "EINVAL" },
	{ ENFILE, "ENFILE" },	    { EMFILE, "EMFILE" },	{ ENOTTY, "ENOTTY" },
	{ ETXTBSY, "ETXTBSY" },	    { EFBIG, "EFBIG" },		{ ENOSPC, "ENOSPC" },
	{ ESPIPE, "ESPIPE" },	    { EROFS, "EROFS" },		{ EMLINK, "EMLINK" },
	{ EPIPE, "EPIPE" },	    { EDOM, "EDOM" },		{ ERANGE, "ERANGE" },
	{ EDEADLK, "EDEADLK" },	    { ENAMETOOLONG, "ENAMETOOLONG" },
	{ ENOSYS, "ENOSYS" },	    { ELOOP, "ELOOP" },		{ EOVERFLOW, "EOVERFLOW" },
	{ EPROTO, "EPROTO" },	    { EOPNOTSUPP, "EOPNOTSUPP" },
	{ ENOTSOCK, "ENOTSOCK" },   { ESTALE, "ESTALE" },	{ EUCLEAN, "EUCLEAN" },
	{ EDQUOT, "EDQUOT" },	    { ECANCELED, "ECANCELED" }, { EOWNERDEAD, "EOWNERDEAD" },
	{ ENOTRECOVERABLE, "ENOTRECOVERABLE" },
	{ ENODATA, "ENODATA" },	    { ETIMEDOUT, "ETIMEDOUT" },
};

static const char *errname(int e)
{
	static char buf[32];

	for (size_t i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (errnames[i].e == e)
			return errnames[i].name;
	if (e == SENTINEL)
		return "(unset)";
	snprintf(buf, sizeof(buf), "E#%d", e);
	return buf;
}

static const struct {
	const char *name;
	long long v;
} names[] = {
	{ "KEEP_SIZE", 0x01 },	   { "PUNCH_HOLE", 0x02 },    { "NO_HIDE_STALE", 0x04 },
	{ "COLLAPSE_RANGE", 0x08 }, { "ZERO_RANGE", 0x10 },    { "INSERT_RANGE", 0x20 },
	{ "UNSHARE_RANGE", 0x40 }, { "WRITE_ZEROES", 0x80 },
	{ "MARK", FALLOC_FL_MARK_VOLATILE }, { "UNMARK", FALLOC_FL_UNMARK_VOLATILE },
	{ "max", LLONG_MAX },
};

/* one term: a name, or a number with an optional suffix */
static unsigned long long term(const char *arg, const char **p)
{
	const char *s = *p;
	unsigned long long v;
	char *end;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i].name);

		if (strncmp(s, names[i].name, n) == 0 && !isalnum((unsigned char)s[n]) &&
		    s[n] != '_') {
			*p = s + n;
			return (unsigned long long)names[i].v;
		}
	}
	if (!isdigit((unsigned char)*s))
		usage("'%s' is not a number", arg);
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno)
		usage("'%s' is out of range", arg);
	switch (*end) {
	case 'P': v <<= 10; /* fall through */
	case 'T': v <<= 10; /* fall through */
	case 'G': v <<= 10; /* fall through */
	case 'M': v <<= 10; /* fall through */
	case 'K': v <<= 10; end++; break;
	default: break;
	}
	*p = end;
	return v;
}

static long long num(const char *arg)
{
	const char *p = arg;
	unsigned long long v;
	int neg = 0;

	if (*p == '-') {
		neg = 1;
		p++;
	}
	v = term(arg, &p);
	if (neg)
		v = -v;
	while (*p) {
		char op = *p++;
		unsigned long long t = term(arg, &p);

		if (op == '|')
			v |= t;
		else if (op == '+')
			v += t;
		else if (op == '-')
			v -= t;
		else
			usage("'%s': bad operator '%c'", arg, op);
	}
	return (long long)v;
}

static int byte_arg(const char *s)
{
	if (strcmp(s, "zero") == 0)
		return 0;
	if (strlen(s) != 1)
		usage("'%s' is not one character or \"zero\"", s);
	return (unsigned char)s[0];
}

static void print_result(struct state *s, long long r, int err)
{
	if (r < 0)
		printf(" = %lld %s\n", r, errname(err));
	else if (err != SENTINEL) {
		printf(" = %lld ERRNO-CHANGED %s\n", r, errname(err));
		s->failed = 1;
	} else {
		printf(" = %lld\n", r);
	}
}

static void do_fallocate(struct state *s, const char *cmd, int use64, int mode,
			 const char *a_off, const char *a_len)
{
	long long off = num(a_off), len = num(a_len);
	int r, err;

	errno = SENTINEL;
	if (use64)
		r = vt_fallocate64(s->cur, mode, (off64_t)off, (off64_t)len);
	else
		r = vt_fallocate(s->cur, mode, (off_t)off, (off_t)len);
	err = errno;
	printf("%s %s %s", cmd, a_off, a_len);
	print_result(s, r, err);
}

static int open_mode(const char *m)
{
	static const struct {
		const char *name;
		int flags;
	} modes[] = {
		{ "r", O_RDONLY },
		{ "w", O_WRONLY },
		{ "rw", O_RDWR },
		{ "rwc", O_RDWR | O_CREAT },
		{ "rwt", O_RDWR | O_CREAT | O_TRUNC },
		{ "a", O_WRONLY | O_APPEND },
		{ "ra", O_RDWR | O_APPEND },
		{ "dir", O_RDONLY | O_DIRECTORY },
		{ "path", O_PATH },
	};

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(m, modes[i].name) == 0)
			return modes[i].flags | O_NOCTTY | O_NONBLOCK;
	usage("unknown open mode '%s'", m);
}

static void fill(struct state *s, long long off, long long len, int c)
{
	char buf[65536];
	long long done = 0;

	memset(buf, c, sizeof(buf));
	while (done < len) {
		size_t n = len - done < (long long)sizeof(buf) ? (size_t)(len - done) : sizeof(buf);
		ssize_t w = pwrite(s->cur, buf, n, (off_t)(off + done));

		if (w <= 0) {
			printf(" = -1 %s\n", w < 0 ? errname(errno) : "SHORT");
			s->failed = 1;
			return;
		}
		done += w;
	}
	printf(" = ok\n");
}

static void sleep_ms(long long ms);

/* Anonymous memory, touched a step at a time: an allocating program. */
static void grab(struct state *s, long long total, long long step, long long ms)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p;

	p = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		printf(" = -1 %s\n", errname(errno));
		s->failed = 1;
		return;
	}
	for (long long done = 0; done < total; done += step) {
		long long end = done + step < total ? done + step : total;

		for (long long at = done; at < end; at += page)
			p[at] = 1;
		if (end < total)
			sleep_ms(ms);
	}
	printf(" = ok\n");
}

static void expect(struct state *s, long long off, long long len, int c)
{
	unsigned char buf[65536];
	long long done = 0;

	while (done < len) {
		size_t n = len - done < (long long)sizeof(buf) ? (size_t)(len - done) : sizeof(buf);
		ssize_t got = pread(s->cur, buf, n, (off_t)(off + done));

		if (got < 0) {
			printf(" MISMATCH read: %s\n", errname(errno));
			s->failed = 1;
			return;
		}
		if (got == 0) {
			printf(" MISMATCH short read at %lld\n", off + done);
			s->failed = 1;
			return;
		}
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i] != c) {
				long long bad = off + done + i;
				long long n_bad = 0;

				for (ssize_t k = i; k < got; k++)
					n_bad += buf[k] != c;
				printf(" MISMATCH at %lld: 0x%02x (%lld bad bytes in this block)\n", bad,
				       buf[i], n_bad);
				s->failed = 1;
				return;
			}
		}
		done += got;
	}
	printf(" ok\n");
}

static int do_stat(struct state *s, struct stat *st)
{
	if (fstat(s->cur, st) != 0) {
		printf(" = -1 %s\n", errname(errno));
		return -1;
	}
	return 0;
}

/* FNV-1a over the file's content, 0 to st_size */
static int checksum(struct state *s, off_t size, uint64_t *out)
{
	unsigned char buf[65536];
	uint64_t h = 0xcbf29ce484222325ull;
	off_t pos = 0;

	while (pos < size) {
		ssize_t got = pread(s->cur, buf, sizeof(buf), pos);

		if (got < 0)
			return -errno;
		if (got == 0)
			break;
		for (ssize_t i = 0; i < got; i++) {
			h ^= buf[i];
			h *= 0x100000001b3ull;
		}
		pos += got;
	}
	*out = h;
	return 0;
}

static void do_seal(struct state *s, const char *which)
{
	char copy[256], *tok, *save;
	int seals = 0, r, err;

	snprintf(copy, sizeof(copy), "%s", which);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "write") == 0)
			seals |= F_SEAL_WRITE;
		else if (strcmp(tok, "future-write") == 0)
			seals |= F_SEAL_FUTURE_WRITE;
		else if (strcmp(tok, "grow") == 0)
			seals |= F_SEAL_GROW;
		else if (strcmp(tok, "shrink") == 0)
			seals |= F_SEAL_SHRINK;
		else if (strcmp(tok, "seal") == 0)
			seals |= F_SEAL_SEAL;
		else
			usage("unknown seal '%s'", tok);
	}
	errno = SENTINEL;
	r = fcntl(s->cur, F_ADD_SEALS, seals);
	err = errno;
	printf("seal %s = %d%s%s\n", which, r, r < 0 ? " " : "", r < 0 ? errname(err) : "");
}

static void sleep_ms(long long ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int child_failed(int status)
{
	return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

/* Run the commands at a until "end" (if until_end) or the last word. */
static void run(struct state *s, char **a, int until_end);

/*
 * The commands. Each gets the state and a: its name, then the arguments
 * its table entry says it needs, then the rest of the command line (NULL
 * after the last word). It returns how many words it took after those:
 * spawn and clone take their child's commands and "end".
 */

static int c_memfd(struct state *s, char **a)
{
	s->cur = memfd_create(a[1], MFD_ALLOW_SEALING);
	if (s->cur < 0 || ftruncate(s->cur, (off_t)num(a[2])) != 0) {
		printf("memfd %s %s = -1 %s\n", a[1], a[2], errname(errno));
		s->failed = 1;
	} else {
		printf("memfd %s %s = %d\n", a[1], a[2], s->cur);
	}
	return 0;
}

static int c_open(struct state *s, char **a)
{
	s->cur = open(a[1], open_mode(a[2]), 0600);
	printf("open %s %s = %d%s%s\n", a[1], a[2], s->cur, s->cur < 0 ? " " : "",
	       s->cur < 0 ? errname(errno) : "");
	return 0;
}

static int c_pipe(struct state *s, char **a)
{
	int p[2];

	(void)a;
	if (pipe(p) != 0)
		usage("pipe: %s", strerror(errno));
	s->cur = p[1];
	printf("pipe = %d %d\n", p[0], p[1]);
	return 0;
}

static int c_socket(struct state *s, char **a)
{
	int sv[2];

	(void)a;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		usage("socketpair: %s", strerror(errno));
	s->cur = sv[0];
	printf("socket = %d %d\n", sv[0], sv[1]);
	return 0;
}

static int c_sendfd(struct state *s, char **a)
{
	int n = (int)num(a[1]);
	char byte = 'F';
	struct iovec iov = { &byte, 1 };
	union {
		struct cmsghdr h;
		char room[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.room,
			    .msg_controllen = sizeof(u.room) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	ssize_t r;

	memset(u.room, 0, sizeof(u.room));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &n, sizeof(int));
	r = sendmsg(s->cur, &m, 0);
	if (r == 1)
		close(n);
	printf("sendfd %d = %d%s%s\n", n, r == 1 ? 0 : -1, r == 1 ? "" : " ",
	       r == 1 ? "" : errname(errno));
	if (r != 1)
		s->failed = 1;
	return 0;
}

static int c_recvfd(struct state *s, char **a)
{
	char byte;
	struct iovec iov = { &byte, 1 };
	union {
		struct cmsghdr h;
		char room[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.room,
			    .msg_controllen = sizeof(u.room) };
	struct cmsghdr *c;
	int fd = -1;

	(void)a;
	if (recvmsg(s->cur, &m, MSG_CMSG_CLOEXEC) == 1 && (c = CMSG_FIRSTHDR(&m)) != NULL &&
	    c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	printf("recvfd = %d%s%s\n", fd, fd < 0 ? " " : "", fd < 0 ? errname(errno) : "");
	if (fd < 0)
		s->failed = 1;
	else
		s->cur = fd;
	return 0;
}

/*
 * io_uring with the system calls themselves (no liburing: the static and
 * musl builds of this file have none), just enough to hold a file in a
 * ring's fixed-file table and take it back.
 */
#if defined(SYS_io_uring_setup) && defined(__has_include)
#if __has_include(<linux/io_uring.h>)
#include <linux/io_uring.h>
#define VT_URING 1
#endif
#endif

#ifdef VT_URING
#define VT_OP_FIXED_FD_INSTALL 54 /* IORING_OP_FIXED_FD_INSTALL, Linux 6.8 */

static struct {
	int fd;
	struct io_uring_params p;
	char *sq, *cq;
	struct io_uring_sqe *sqes;
} ring = { .fd = -1 };

static int ring_make(void)
{
	size_t sq_len, cq_len;

	memset(&ring.p, 0, sizeof(ring.p));
	ring.fd = (int)syscall(SYS_io_uring_setup, 4, &ring.p);
	if (ring.fd < 0)
		return -1;
	sq_len = ring.p.sq_off.array + ring.p.sq_entries * sizeof(uint32_t);
	cq_len = ring.p.cq_off.cqes + ring.p.cq_entries * sizeof(struct io_uring_cqe);
	if (ring.p.features & IORING_FEAT_SINGLE_MMAP)
		sq_len = cq_len = sq_len > cq_len ? sq_len : cq_len;
	ring.sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring.fd,
		       IORING_OFF_SQ_RING);
	ring.cq = (ring.p.features & IORING_FEAT_SINGLE_MMAP) || ring.sq == MAP_FAILED
			  ? ring.sq
			  : mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
				 ring.fd, IORING_OFF_CQ_RING);
	ring.sqes = mmap(NULL, ring.p.sq_entries * sizeof(struct io_uring_sqe),
			 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring.fd, IORING_OFF_SQES);
	if (ring.sq == MAP_FAILED || ring.cq == MAP_FAILED || ring.sqes == MAP_FAILED)
		return -1;
	return 0;
}

static int c_uring(struct state *s, char **a)
{
	int fd = s->cur, r = -1;

	(void)a;
	if (ring_make() == 0 &&
	    syscall(SYS_io_uring_register, ring.fd, IORING_REGISTER_FILES, &fd, 1) == 0) {
		close(fd);
		r = 0;
	}
	printf("uring = %d%s%s\n", r, r < 0 ? " " : "", r < 0 ? errname(errno) : "");
	return 0;
}

static int c_unring(struct state *s, char **a)
{
	uint32_t *tail = (uint32_t *)(ring.sq + ring.p.sq_off.tail);
	uint32_t *mask = (uint32_t *)(ring.sq + ring.p.sq_off.ring_mask);
	uint32_t *array = (uint32_t *)(ring.sq + ring.p.sq_off.array);
	uint32_t *chead = (uint32_t *)(ring.cq + ring.p.cq_off.head);
	uint32_t *ctail = (uint32_t *)(ring.cq + ring.p.cq_off.tail);
	uint32_t *cmask = (uint32_t *)(ring.cq + ring.p.cq_off.ring_mask);
	struct io_uring_cqe *cqes = (struct io_uring_cqe *)(ring.cq + ring.p.cq_off.cqes);
	struct io_uring_sqe *sqe = &ring.sqes[0];
	uint32_t t = *tail, h;
	int r = -1;

	(void)a;
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = VT_OP_FIXED_FD_INSTALL;
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->fd = 0; /* the fixed file's index */
	array[t & *mask] = 0;
	__atomic_store_n(tail, t + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, ring.fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) >= 0) {
		h = *chead;
		if (h != __atomic_load_n(ctail, __ATOMIC_ACQUIRE)) {
			r = cqes[h & *cmask].res;
			__atomic_store_n(chead, h + 1, __ATOMIC_RELEASE);
			if (r < 0) {
				errno = -r;
				r = -1;
			}
		}
	}
	printf("unring = %d%s%s\n", r, r < 0 ? " " : "", r < 0 ? errname(errno) : "");
	if (r < 0)
		s->failed = 1;
	else
		s->cur = r;
	return 0;
}
#else
static int c_uring(struct state *s, char **a)
{
	(void)s;
	(void)a;
	printf("uring = -1 ENOSYS\n");
	return 0;
}

static int c_unring(struct state *s, char **a)
{
	(void)a;
	printf("unring = -1 ENOSYS\n");
	s->failed = 1;
	return 0;
}
#endif

static int c_fd(struct state *s, char **a)
{
	s->cur = (int)num(a[1]);
	printf("fd %d\n", s->cur);
	return 0;
}

static int c_dup(struct state *s, char **a)
{
	int n = (int)num(a[1]);
	int r = dup2(s->cur, n);

	printf("dup %d = %d%s%s\n", n, r, r < 0 ? " " : "", r < 0 ? errname(errno) : "");
	if (r >= 0) {
		if (s->cur != n)
			close(s->cur);
		s->cur = n;
	}
	return 0;
}

static int c_close(struct state *s, char **a)
{
	int r = close(s->cur);

	(void)a;
	printf("close = %d%s%s\n", r, r < 0 ? " " : "", r < 0 ? errname(errno) : "");
	return 0;
}

static int c_fill(struct state *s, char **a)
{
	printf("%s %s %s %s", a[0], a[1], a[2], a[3]);
	fill(s, num(a[1]), num(a[2]), byte_arg(a[3]));
	return 0;
}

static int c_expect(struct state *s, char **a)
{
	printf("%s %s %s %s", a[0], a[1], a[2], a[3]);
	expect(s, num(a[1]), num(a[2]), byte_arg(a[3]));
	return 0;
}

static int c_mark(struct state *s, char **a)
{
	do_fallocate(s, a[0], 0, FALLOC_FL_MARK_VOLATILE, a[1], a[2]);
	return 0;
}

static int c_unmark(struct state *s, char **a)
{
	do_fallocate(s, a[0], 0, FALLOC_FL_UNMARK_VOLATILE, a[1], a[2]);
	return 0;
}

/* fa, fa64: "CMD MODE" is what the line starts with */
static int fa(struct state *s, char **a, int use64)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "%s %s", a[0], a[1]);
	do_fallocate(s, cmd, use64, (int)num(a[1]), a[2], a[3]);
	return 0;
}

static int c_fa(struct state *s, char **a)
{
	return fa(s, a, 0);
}

static int c_fa64(struct state *s, char **a)
{
	return fa(s, a, 1);
}

/* the system call itself: no library in between */
static int c_sysfa(struct state *s, char **a)
{
	long long off = num(a[2]), len = num(a[3]);
	long r;
	int err;

#if LONG_MAX < LLONG_MAX
	usage("sysfa: a 64-bit ABI is needed (64-bit offsets in one register)");
#endif
	errno = SENTINEL;
	r = syscall(SYS_fallocate, s->cur, (int)num(a[1]), (long)off, (long)len);
	err = errno;
	printf("%s %s %s %s", a[0], a[1], a[2], a[3]);
	print_result(s, r, err);
	return 0;
}

static int c_seal(struct state *s, char **a)
{
	do_seal(s, a[1]);
	return 0;
}

static int c_truncate(struct state *s, char **a)
{
	int r = ftruncate(s->cur, (off_t)num(a[1]));

	printf("truncate %s = %d%s%s\n", a[1], r, r < 0 ? " " : "", r < 0 ? errname(errno) : "");
	return 0;
}

static int c_size(struct state *s, char **a)
{
	struct stat st;

	printf("%s", a[0]);
	if (do_stat(s, &st) == 0)
		printf(" = %lld\n", (long long)st.st_size);
	return 0;
}

static int c_blocks(struct state *s, char **a)
{
	struct stat st;

	printf("%s", a[0]);
	if (do_stat(s, &st) == 0)
		printf(" = %lld\n", (long long)st.st_blocks);
	return 0;
}

/* sum, st: "CMD", then fstat and the checksum (0), or the line ends there (-1) */
static int stat_sum(struct state *s, const char *cmd, struct stat *st, uint64_t *h)
{
	int err;

	printf("%s", cmd);
	if (do_stat(s, st) != 0)
		return -1;
	err = checksum(s, st->st_size, h);
	if (err) {
		printf(" = -1 %s\n", errname(-err));
		return -1;
	}
	return 0;
}

static int c_sum(struct state *s, char **a)
{
	struct stat st;
	uint64_t h = 0;

	if (stat_sum(s, a[0], &st, &h) == 0)
		printf(" = %016" PRIx64 "\n", h);
	return 0;
}

static int c_st(struct state *s, char **a)
{
	struct stat st;
	uint64_t h = 0;

	if (stat_sum(s, a[0], &st, &h) == 0)
		printf(" size=%lld blocks=%lld sum=%016" PRIx64 "\n", (long long)st.st_size,
		       (long long)st.st_blocks, h);
	return 0;
}

static int c_pid(struct state *s, char **a)
{
	(void)s;
	(void)a;
	printf("pid = %d\n", (int)getpid());
	return 0;
}

/* the pid under /proc: another one in a pid namespace with the parent's /proc */
static int c_procpid(struct state *s, char **a)
{
	char buf[32];
	ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);

	(void)s;
	(void)a;
	buf[n > 0 ? n : 0] = '\0';
	printf("procpid = %s\n", buf);
	return 0;
}

static int c_echo(struct state *s, char **a)
{
	(void)s;
	printf("%s\n", a[1]);
	return 0;
}

/*
 * Overwrite, in place, the value of each string NAME=... of the
 * environment exec put on the stack with VALUE (no longer than it, then a
 * NUL), as setproctitle writes over that memory: what /proc/PID/environ
 * shows from then on. The library read the environment already.
 */
static int c_envpoke(struct state *s, char **a)
{
	extern char **environ;
	size_t n = strlen(a[1]), v = strlen(a[2]);
	int k = 0;

	(void)s;
	for (char **e = environ; e != NULL && *e != NULL; e++)
		if (strncmp(*e, a[1], n) == 0 && (*e)[n] == '=' && strlen(*e + n + 1) >= v) {
			memcpy(*e + n + 1, a[2], v + 1);
			k++;
		}
	printf("envpoke %s = %d\n", a[1], k);
	return 0;
}

static int c_wait(struct state *s, char **a)
{
	int waited = 0;

	while (access(a[1], F_OK) != 0 && waited < 60000) {
		sleep_ms(5);
		waited += 5;
	}
	if (access(a[1], F_OK) != 0) {
		printf("wait %s TIMEOUT\n", a[1]);
		s->failed = 1;
	} else {
		printf("wait %s\n", a[1]);
	}
	return 0;
}

/* PR_SET_DUMPABLE 0: other processes of the user cannot look in */
static int c_nodump(struct state *s, char **a)
{
	int r = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

	(void)s;
	(void)a;
	printf("nodump = %d\n", r);
	return 0;
}

/*
 * A filter that allows everything, with a listener: the fd is left open.
 * The kernel's ABI spelt out here: musl's build has no <linux/filter.h>.
 */
struct vt_bpf_insn {
	uint16_t code;
	uint8_t jt, jf;
	uint32_t k;
};
struct vt_bpf_prog {
	unsigned short len;
	struct vt_bpf_insn *insns;
};
#define VT_BPF_RET_K 0x06
#define VT_SECCOMP_RET_ALLOW 0x7fff0000U
#define VT_SECCOMP_SET_MODE_FILTER 1
#define VT_SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)

static int c_listener(struct state *s, char **a)
{
	struct vt_bpf_insn allow[] = { { VT_BPF_RET_K, 0, 0, VT_SECCOMP_RET_ALLOW } };
	struct vt_bpf_prog prog = { 1, allow };
	long r = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);

	(void)s;
	(void)a;
	if (r == 0)
		r = syscall(SYS_seccomp, VT_SECCOMP_SET_MODE_FILTER,
			    VT_SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	printf("listener = %d%s%s\n", r < 0 ? -1 : 0, r < 0 ? " " : "", r < 0 ? errname(errno) : "");
	return 0;
}

/* write "INSIDE OUTSIDE 1" to /proc/self/FILE */
static int map_one(const char *file, unsigned long inside, unsigned long outside)
{
	char path[64], line[64];
	int fd, n, r;

	snprintf(path, sizeof(path), "/proc/self/%s", file);
	n = snprintf(line, sizeof(line), "%lu %lu 1\n", inside, outside);
	if ((fd = open(path, O_WRONLY)) < 0)
		return -1;
	r = write(fd, line, (size_t)n) == n ? 0 : -1;
	close(fd);
	return r;
}

/* this thread (alone in its process) in a user namespace of its own */
static int c_userns(struct state *s, char **a)
{
	unsigned long uid = strtoul(a[1], NULL, 10);
	uid_t euid = geteuid();
	gid_t egid = getegid();
	int r, fd;

	(void)s;
	r = unshare(CLONE_NEWUSER);
	if (r == 0 && (fd = open("/proc/self/setgroups", O_WRONLY)) >= 0) {
		if (write(fd, "deny", 4) != 4)
			r = -1;
		close(fd);
	}
	if (r == 0)
		r = map_one("uid_map", uid, euid);
	if (r == 0)
		r = map_one("gid_map", uid, egid);
	printf("userns %s = %d%s%s\n", a[1], r, r ? " " : "", r ? strerror(errno) : "");
	return 0;
}

/* a POSIX write lock on the whole file through the current fd */
static int c_lock(struct state *s, char **a)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int r = fcntl(s->cur, F_SETLK, &fl);

	(void)a;
	printf("lock = %d%s%s\n", r, r < 0 ? " " : "", r < 0 ? errname(errno) : "");
	if (r < 0)
		s->failed = 1;
	return 0;
}

static int c_lease(struct state *s, char **a)
{
	int r;

	(void)a;
	signal(SIGIO, on_sigio);
	r = fcntl(s->cur, F_SETLEASE, F_WRLCK);
	printf("lease = %d%s%s\n", r, r < 0 ? " " : "", r < 0 ? errname(errno) : "");
	if (r < 0)
		s->failed = 1;
	return 0;
}

static int c_leased(struct state *s, char **a)
{
	int t = fcntl(s->cur, F_GETLEASE);

	(void)a;
	printf("leased = %s sigio = %d\n",
	       t == F_WRLCK ? "wr" : t == F_RDLCK ? "rd" : t == F_UNLCK ? "none" : "?",
	       (int)sigios);
	return 0;
}

/* who holds a POSIX lock on PATH, asked from this process */
static int c_haslock(struct state *s, char **a)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int fd = open(a[1], O_RDWR | O_CLOEXEC);
	int r = fd < 0 ? -1 : fcntl(fd, F_GETLK, &fl);

	(void)s;
	if (r < 0)
		printf("haslock %s = -1 %s\n", a[1], errname(errno));
	else if (fl.l_type == F_UNLCK)
		printf("haslock %s = unlocked\n", a[1]);
	else
		printf("haslock %s = pid %d\n", a[1], (int)fl.l_pid);
	if (fd >= 0)
		close(fd);
	return 0;
}

/* touch, unlink: "CMD PATH = R" */
static int said(char **a, int r)
{
	printf("%s %s = %d%s%s\n", a[0], a[1], r, r < 0 ? " " : "", r < 0 ? errname(errno) : "");
	return 0;
}

static int c_touch(struct state *s, char **a)
{
	int fd = open(a[1], O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

	(void)s;
	return said(a, fd < 0 ? -1 : close(fd));
}

static int c_unlink(struct state *s, char **a)
{
	(void)s;
	return said(a, unlink(a[1]));
}

static int c_grab(struct state *s, char **a)
{
	printf("grab %s %s %s", a[1], a[2], a[3]);
	fflush(stdout);
	if (num(a[1]) <= 0 || num(a[2]) <= 0)
		usage("grab: TOTAL and STEP must be positive");
	grab(s, num(a[1]), num(a[2]), num(a[3]));
	return 0;
}

static int c_sleep(struct state *s, char **a)
{
	(void)s;
	sleep_ms(num(a[1]));
	printf("sleep %s\n", a[1]);
	return 0;
}

static long long mono_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * Until more than the age order's bound has passed since this command
 * began (DESIGN 10: one tick of CLOCK_MONOTONIC_COARSE, clock_getres,
 * plus 1 ms): a MARK after it takes a later age than any before it.
 */
static int c_apart(struct state *s, char **a)
{
	struct timespec res;
	long long start = mono_ns(CLOCK_MONOTONIC), bound;

	(void)s;
	(void)a;
	clock_getres(CLOCK_MONOTONIC_COARSE, &res);
	bound = res.tv_sec * 1000000000LL + res.tv_nsec + 1000000;
	while (mono_ns(CLOCK_MONOTONIC) - start <= bound)
		sleep_ms(1);
	printf("apart\n");
	return 0;
}

/* spawn, clone: the child's commands and their "end", which the parent skips */
static int child_words(char **a)
{
	int k = 1;

	while (a[k] != NULL && strcmp(a[k], "end") != 0)
		k++;
	if (a[k] == NULL)
		usage("%s without end", a[0]);
	return k;
}

static int c_spawn(struct state *s, char **a)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		usage("fork: %s", strerror(errno));
	if (pid == 0) {
		run(s, a + 1, 1);
		fflush(stdout);
		_exit(s->failed);
	}
	s->last_child = pid;
	return child_words(a);
}

struct clone_arg {
	struct state *s;
	char **a;
};

/* A clone(2) child: its own copy of our memory, on its own stack. */
static int clone_child(void *arg)
{
	struct clone_arg *ca = arg;

	run(ca->s, ca->a, 1);
	fflush(stdout);
	_exit(ca->s->failed);
}

static int c_clone(struct state *s, char **a)
{
	struct clone_arg ca = { s, a + 1 };
	static char stack[256 * 1024] __attribute__((aligned(16)));
	pid_t pid;

	fflush(stdout);
	pid = clone(clone_child, stack + sizeof(stack), SIGCHLD, &ca);
	if (pid < 0)
		usage("clone: %s", strerror(errno));
	s->last_child = pid;
	return child_words(a);
}

static int c_reap(struct state *s, char **a)
{
	int status = 0;

	(void)a;
	if (s->last_child < 0 || waitpid(s->last_child, &status, 0) < 0)
		usage("reap: no child");
	printf("reap = %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	if (child_failed(status))
		s->failed = 1;
	s->last_child = -1;
	return 0;
}

static int c_detach(struct state *s, char **a)
{
	pid_t pid;

	(void)s;
	(void)a;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		usage("fork: %s", strerror(errno));
	if (pid > 0)
		_exit(0);
	printf("detach\n");
	return 0;
}

/* exec PATH ARG...: the words up to "end" (not taken) or the last one */
static int c_exec(struct state *s, char **a)
{
	char *argv[256];
	int k = 1;

	while (a[k] != NULL && strcmp(a[k], "end") != 0) {
		if (k >= (int)(sizeof(argv) / sizeof(argv[0])) - 1)
			usage("exec: too many arguments");
		argv[k - 1] = a[k];
		k++;
	}
	if (k == 1)
		usage("exec needs a PATH");
	argv[k - 1] = NULL;
	printf("exec %s\n", a[1]);
	fflush(stdout);
	execv(a[1], argv);
	printf("exec %s = -1 %s\n", a[1], errname(errno));
	s->failed = 1;
	return k - 1;
}

static int c_exit(struct state *s, char **a)
{
	(void)s;
	fflush(stdout);
	exit((int)num(a[1]));
}

/* a signal by number, or by its name without SIG (kill -l's spelling) */
static int signal_arg(const char *arg)
{
	static const char *const sig_names[] = {
		"HUP",	"INT",	"QUIT",	 "ILL",	 "TRAP",   "ABRT", "BUS",  "FPE",
		"KILL", "USR1", "SEGV",	 "USR2", "PIPE",   "ALRM", "TERM", "STKFLT",
		"CHLD", "CONT", "STOP",	 "TSTP", "TTIN",   "TTOU", "URG",  "XCPU",
		"XFSZ", "VTALRM", "PROF", "WINCH", "IO",   "PWR",  "SYS",
	};
	long long n;

	for (size_t i = 0; i < sizeof(sig_names) / sizeof(sig_names[0]); i++)
		if (strcmp(arg, sig_names[i]) == 0)
			return (int)i + 1;
	n = num(arg);
	if (n < 1 || n > 64)
		usage("'%s' is not a signal", arg);
	return (int)n;
}

static int c_kill(struct state *s, char **a)
{
	int r;

	(void)s;
	fflush(stdout);
	r = kill(getpid(), signal_arg(a[1]));
	printf("kill %s = %d%s%s\n", a[1], r, r < 0 ? " " : "", r < 0 ? errname(errno) : "");
	return 0;
}

static int c_abort(struct state *s, char **a)
{
	(void)s;
	(void)a;
	fflush(stdout);
	abort();
}

static int c_report(struct state *s, char **a)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "pid %d ppid %d\n", (int)getpid(), (int)getppid());
	int r = write((int)num(a[1]), line, (size_t)n) == n ? 0 : -1;

	printf("report %s = %d%s%s\n", a[1], r, r < 0 ? " " : "", r < 0 ? errname(errno) : "");
	if (r < 0)
		s->failed = 1;
	return 0;
}

static int c_hold(struct state *s, char **a)
{
	char buf[256];
	ssize_t n;

	while ((n = read((int)num(a[1]), buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		;
	printf("hold %s = %d%s%s\n", a[1], n < 0 ? -1 : 0, n < 0 ? " " : "",
	       n < 0 ? errname(errno) : "");
	if (n < 0)
		s->failed = 1;
	return 0;
}

static void on_counted(int sig)
{
	caught[sig]++;
}

static int c_count(struct state *s, char **a)
{
	struct sigaction sa = { .sa_handler = on_counted, .sa_flags = SA_RESTART };
	int r = sigaction(signal_arg(a[1]), &sa, NULL);

	printf("count %s = %d%s%s\n", a[1], r, r < 0 ? " " : "", r < 0 ? errname(errno) : "");
	if (r < 0)
		s->failed = 1;
	return 0;
}

/* with SIG blocked between the look and the wait, so none is missed */
static int c_await(struct state *s, char **a)
{
	int sig = signal_arg(a[1]);
	struct timespec slice = { 0, 100 * 1000 * 1000 };
	sigset_t block, during;
	int waited = 0;

	sigemptyset(&block);
	sigaddset(&block, sig);
	sigprocmask(SIG_BLOCK, &block, &during);
	sigdelset(&during, sig);
	while (caught[sig] == 0 && waited < 600) {
		ppoll(NULL, 0, &slice, &during);
		waited++;
	}
	sigprocmask(SIG_UNBLOCK, &block, NULL);
	if (caught[sig] == 0) {
		printf("await %s TIMEOUT\n", a[1]);
		s->failed = 1;
	} else {
		printf("await %s\n", a[1]);
	}
	return 0;
}

static int c_counted(struct state *s, char **a)
{
	(void)s;
	printf("counted %s = %d\n", a[1], (int)caught[signal_arg(a[1])]);
	return 0;
}

static int c_waitall(struct state *s, char **a)
{
	int n = 0;

	(void)a;
	for (;;) {
		pid_t r = wait(NULL);

		if (r > 0)
			n++;
		else if (errno != EINTR)
			break;
	}
	printf("waitall = %d children%s%s\n", n, errno == ECHILD ? "" : " ",
	       errno == ECHILD ? "" : errname(errno));
	if (errno != ECHILD)
		s->failed = 1;
	return 0;
}

static int c_tstp(struct state *s, char **a)
{
	(void)s;
	fflush(stdout);
	kill(getpid(), SIGTSTP);
	printf("continued\n");
	fflush(stdout);
	exit((int)num(a[1]));
}

/* sigcount: what the handler counts, by the index of counted_signals */
static const int counted_signals[] = { SIGINT, SIGQUIT, SIGWINCH, SIGCONT };
static volatile sig_atomic_t signal_counts[4];

static void count_signal(int sig)
{
	for (size_t k = 0; k < 4; k++)
		if (counted_signals[k] == sig)
			signal_counts[k]++;
}

static void write_counts(const char *path)
{
	char tmp[PATH_MAX];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (f == NULL)
		usage("sigcount: %s: %s", tmp, strerror(errno));
	fprintf(f, "INT %d QUIT %d WINCH %d CONT %d\n", (int)signal_counts[0],
		(int)signal_counts[1], (int)signal_counts[2], (int)signal_counts[3]);
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		usage("sigcount: %s: %s", path, strerror(errno));
}

/*
 * Each delivery is counted by its handler (a shell's trap runs once for
 * signals that arrived together); the counted signals are blocked but
 * in sigsuspend, so none comes between writing the file and waiting.
 */
static int c_sigcount(struct state *s, char **a)
{
	struct sigaction sa = { .sa_handler = count_signal };
	sigset_t counted, during;

	(void)s;
	sigemptyset(&counted);
	for (size_t k = 0; k < 4; k++) {
		sigaddset(&counted, counted_signals[k]);
		sigaction(counted_signals[k], &sa, NULL);
	}
	sigprocmask(SIG_BLOCK, &counted, &during);
	for (size_t k = 0; k < 4; k++)
		sigdelset(&during, counted_signals[k]);
	/* a test that never ends it: SIGALRM's default action, 300 s on */
	alarm(300);
	write_counts(a[1]);
	while (sigsuspend(&during) == -1 && errno == EINTR)
		write_counts(a[1]);
	return 0;
}

/* The commands by name, with the arguments each needs (the header says more). */
static const struct command {
	const char *name;
	int nargs;
	int (*run)(struct state *s, char **a);
	const char *help;
} commands[] = {
	{ "memfd", 2, c_memfd, "NAME SIZE: a sealable memfd, the current fd" },
	{ "open", 2, c_open, "PATH MODE: open, the current fd" },
	{ "pipe", 0, c_pipe, "a pipe: the current fd is its write end" },
	{ "socket", 0, c_socket, "a socketpair: the current fd is one end" },
	{ "sendfd", 1, c_sendfd, "N: send fd N over the current socket, close N" },
	{ "recvfd", 0, c_recvfd, "receive an fd from the current socket, the current fd" },
	{ "uring", 0, c_uring, "an io_uring holding the current fd as fixed file 0, then closed" },
	{ "unring", 0, c_unring, "fixed file 0 installed as an fd again, the current fd" },
	{ "fd", 1, c_fd, "N: inherited fd N is the current fd" },
	{ "dup", 1, c_dup, "N: dup2 the current fd to N, the current fd" },
	{ "close", 0, c_close, "close the current fd" },
	{ "fill", 3, c_fill, "OFF LEN C: pwrite LEN bytes C" },
	{ "expect", 3, c_expect, "OFF LEN C: pread and check every byte" },
	{ "mark", 2, c_mark, "OFF LEN: fallocate MARK_VOLATILE" },
	{ "unmark", 2, c_unmark, "OFF LEN: fallocate UNMARK_VOLATILE" },
	{ "fa", 3, c_fa, "MODE OFF LEN: fallocate" },
	{ "fa64", 3, c_fa64, "MODE OFF LEN: fallocate64" },
	{ "sysfa", 3, c_sysfa, "MODE OFF LEN: syscall(SYS_fallocate)" },
	{ "seal", 1, c_seal, "WHICH: F_ADD_SEALS" },
	{ "truncate", 1, c_truncate, "SIZE: ftruncate" },
	{ "size", 0, c_size, "st_size" },
	{ "blocks", 0, c_blocks, "st_blocks" },
	{ "sum", 0, c_sum, "FNV-1a of the whole content" },
	{ "st", 0, c_st, "size, blocks and sum" },
	{ "pid", 0, c_pid, "this process's pid" },
	{ "procpid", 0, c_procpid, "this process's pid under /proc" },
	{ "echo", 1, c_echo, "WORD: print it" },
	{ "envpoke", 2, c_envpoke, "NAME VALUE: overwrite NAME's value in the exec'd environment" },
	{ "wait", 1, c_wait, "PATH: until it exists (60 s at most)" },
	{ "userns", 1, c_userns, "UID: a user namespace of its own, our user UID there" },
	{ "nodump", 0, c_nodump, "prctl(PR_SET_DUMPABLE, 0)" },
	{ "listener", 0, c_listener, "a seccomp filter with a listener of its own" },
	{ "lock", 0, c_lock, "a POSIX write lock on the whole current file" },
	{ "lease", 0, c_lease, "a write lease on the current fd" },
	{ "leased", 0, c_leased, "F_GETLEASE and the SIGIOs seen" },
	{ "haslock", 1, c_haslock, "PATH: who holds a POSIX lock on it" },
	{ "touch", 1, c_touch, "PATH: create it" },
	{ "unlink", 1, c_unlink, "PATH: unlink it" },
	{ "grab", 3, c_grab, "TOTAL STEP MS: anonymous memory, a step at a time" },
	{ "sleep", 1, c_sleep, "MS: sleep" },
	{ "apart", 0, c_apart, "until the age order's bound (a clock tick + 1 ms) has passed" },
	{ "spawn", 0, c_spawn, "CMD... end: fork, the child runs CMD..." },
	{ "clone", 0, c_clone, "CMD... end: the same with clone(2)" },
	{ "reap", 0, c_reap, "wait for the last child" },
	{ "detach", 0, c_detach, "fork: the parent exits, the child goes on" },
	{ "exec", 0, c_exec, "PATH ARG...: execv, the words up to end" },
	{ "exit", 1, c_exit, "N: exit(N)" },
	{ "kill", 1, c_kill, "SIG: kill(getpid(), SIG)" },
	{ "abort", 0, c_abort, "abort()" },
	{ "report", 1, c_report, "FD: \"pid P ppid Q\" to fd FD" },
	{ "hold", 1, c_hold, "FD: read fd FD until end of file" },
	{ "count", 1, c_count, "SIG: catch SIG, counting" },
	{ "await", 1, c_await, "SIG: until SIG was caught once" },
	{ "counted", 1, c_counted, "SIG: how many SIG were caught" },
	{ "waitall", 0, c_waitall, "wait() until ECHILD" },
	{ "tstp", 1, c_tstp, "STATUS: stop itself with SIGTSTP; continued, exit STATUS" },
	{ "sigcount", 1, c_sigcount, "PATH: count INT, QUIT, WINCH and CONT deliveries into PATH" },
};

static void run(struct state *s, char **a, int until_end)
{
	while (*a != NULL) {
		const struct command *c = NULL;

		if (strcmp(*a, "end") == 0) {
			if (!until_end)
				usage("'end' without 'spawn'");
			return;
		}
		for (size_t k = 0; k < sizeof(commands) / sizeof(commands[0]) && c == NULL; k++)
			if (strcmp(*a, commands[k].name) == 0)
				c = &commands[k];
		if (c == NULL)
			usage("unknown command '%s'", *a);
		for (int k = 1; k <= c->nargs; k++)
			if (a[k] == NULL)
				usage("%s needs %d argument%s", *a, c->nargs,
				      c->nargs == 1 ? "" : "s");
		a += 1 + c->nargs + c->run(s, a);
	}
	if (until_end)
		usage("spawn without end");
}

int main(int argc, char **argv)
{
	struct state s = { .cur = -1, .failed = 0, .last_child = -1 };

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		usage("usage: vt COMMAND... (see tests/helpers/vt.c)");
	run(&s, argv + 1, 0);
	fflush(stdout);
	return s.failed;
}
