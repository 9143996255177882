/* SPDX-License-Identifier: MIT */
/*
 * storm - many processes, many threads, purgers, a small budget, and
 * (optionally) SIGKILL at random moments; an oracle checks THE INVARIANT
 * and the truth of every UNMARK (DESIGN 4).
 *
 *   storm DIR SECONDS WORKERS THREADS PURGERS KILL [ACTIONS [X]]
 *
 * Run with LD_PRELOAD=libvolatile.so and VOLATILE_BUDGET set. Two tmpfs
 * files in DIR, UNITS units of two pages each; every unit has one owner,
 * a thread slot (worker w, thread t), which loops: pick one of its units,
 * check it intact if nobody marked it, maybe write a new pattern, MARK its
 * first page, maybe wait, maybe MARK the whole unit (which joins the first
 * page's range, purged maybe, and then punches the merged range: DESIGN
 * 3), UNMARK the unit, and check each page:
 *
 *   UNMARK 0: the page holds exactly its pattern;
 *   UNMARK 1: a page a MARK covered is all zeros, or (a range whose purge
 *             was cut off, flagged purged to be safe) all its pattern; a
 *             page no MARK covered holds its pattern.
 *
 * The unit's state lives in memory shared with the parent, written in an
 * order that lets whoever takes over a killed worker's slot know what the
 * unit may hold: `pending` is set before a write and cleared after, and
 * `marked` (how many pages)/`unmarking` are set before MARK/UNMARK and
 * cleared after. With KILL=1 the parent SIGKILLs a random worker or
 * purger every few milliseconds and starts another in its place; a slot
 * that makes no progress for 5 s is a hang. At the end the parent unmarks
 * and checks every unit itself.
 *
 * ACTIONS (a comma list, "all" or "none", the default) widen the storm
 * with every way a descriptor moves (DESIGN 13, 15, 17). Pages are read
 * and written through descriptors nobody moves; MARK and UNMARK go through
 * the numbers the actions move:
 *
 *   dup2     a thread of each worker dup2()s X (a file on a disk file
 *            system, which the library never marks) onto a storm file's
 *            number and back, in bursts, while the others MARK/UNMARK
 *            through it (a whole unit's MARK that joins a purged range
 *            punches through it). A call that may have met X (a swap
 *            counter moved) says nothing about the unit: a refusal leaves
 *            it as it was, a 0 is taken as an answer that may have been
 *            lost, a 1 is the unit's.
 *   getfd    a MARK and UNMARK through a sibling worker's descriptor of
 *            the file, taken with pidfd_getfd (X when the sibling's number
 *            was swapped then: the calls are made and their answers set
 *            aside).
 *   unshare  a thread takes over its slot, unshare(CLONE_FILES)s, swaps
 *            the two storm files' numbers in its own table and puts a copy
 *            of one at X's number (which in the process's table is X),
 *            then works its units through those numbers.
 *   scm      trips: a memfd of two pages, page 0 MARKed (and half the time
 *   uring    the region purged at once), page 1 never marked; the only
 *   user     descriptor is then closed while the file is held elsewhere for
 *            up to STORM_HOLD_MS (default 5000) ms, across purges: in flight
 *            in a unix socket (scm), in an io_uring fixed-file table taken
 *            back with IORING_OP_FIXED_FD_INSTALL (uring; left out without
 *            liburing or that operation), by a child that setuid()s to
 *            STORM_UID (default 65534) and sends it back (user; root only,
 *            or lent to a lender: STORM_AS_UID below).
 *            Back home, UNMARK page 0: 0 needs its pattern, 1 zeros or its
 *            pattern; page 1 must hold its pattern whatever happened.
 *   handoff  a trip whose file a sibling worker takes with pidfd_getfd,
 *            after which its maker closes its own fd (a record's holder
 *            whose number is then free for another file); the taker holds
 *            it for up to STORM_HOLD_MS and checks it.
 *
 * X must be given for dup2 (without it the action is left out). The parent
 * checks X never changes. Per action the counts are printed; each action
 * asked for (and possible here) must have run: past SECONDS the storm goes
 * on until each has, for RAN_ALL_MS at most. A short storm on a loaded
 * machine makes only a trip or two per courier, each held up to
 * STORM_HOLD_MS, and which kinds those are is the luck of the seeds.
 *
 * Prints "storm: ..." and exits 0 only with no violation and no hang.
 *
 * Built with -DSTORM_STATIC (storm-static, linked -static: its fallocate is
 * the system call, which only `volatile run`'s supervisor serves), it links
 * no library, so it has no purgers (PURGERS must be 0) and no io_uring:
 * its units are purged by another storm's purgers and budget in the same
 * region.
 *
 * STORM_AS_UID=U, started as root: the storm drops to uid U before it
 * starts, and "user" lends its files to a lender of STORM_UID forked
 * before that: a holder U's library cannot look into, as a user's.
 *
 * Environment: STORM_HOLD_MS, STORM_UID (above); STORM_COLLECT=PATH: a kid
 * runs `PATH purge --bytes 16K` every 0.5-2 s (the daemon's collection of
 * gone files, DESIGN 15); STORM_BLIND=1: without CAP_DAC_READ_SEARCH.
 */
#include <volatile.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
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

#include <linux/capability.h>

#if defined(HAVE_LIBURING) && !defined(STORM_STATIC)
#include <liburing.h>
#define STORM_URING 1
/* Linux 6.8; liburing 2.3's header predates it */
#define STORM_OP_FIXED_FD_INSTALL 54
#endif

#define PAGE 4096
#define HALF 2               /* pages in a unit: its first is MARKed, then maybe both */
#define UNIT (HALF * PAGE)
#define UNITS 128
#define FILES 2
#define MAX_SLOTS 64
#define MAX_KIDS 32
#define COURIERS 4   /* trip threads per worker */
#define PRIVATE_OPS 32 /* rounds of a thread with its own fd table */
#define XSIZE (16 * PAGE)
#define RAN_ALL_MS 30000 /* past SECONDS, for each action to run once */
#define NERRNO 160

struct unit_state {
	uint8_t expected[HALF]; /* what each page holds when not being written */
	uint8_t pending;        /* nonzero: being written with this */
	uint8_t marked;         /* pages a MARK may have covered: 0, 1 or HALF */
	uint8_t unmarking;      /* an UNMARK may have been made, its answer lost */
};

enum { A_DUP2, A_GETFD, A_UNSHARE, A_SCM, A_URING, A_USER, A_HANDOFF, NACT };
static const char *const act_name[NACT] = { "dup2",  "getfd", "unshare", "scm",
					    "uring", "user",  "handoff" };
#define TRIPS ((1 << A_SCM) | (1 << A_URING) | (1 << A_USER) | (1 << A_HANDOFF))

/* a trip's file offered by a courier to its siblings' (handoff) */
struct box {
	int state; /* 0 empty, 1 offered, 2 being taken, 3 taken */
	pid_t pid;
	int fd;
	uint64_t dev, ino;
	uint8_t v0, v1;
};

struct act_count {
	uint64_t runs;     /* swaps, calls through a sibling's fd, private threads, trips */
	uint64_t set_aside; /* answers that may have been X's (dup2, getfd) */
	uint64_t unmark0, unmark1, errors;
	uint64_t held2; /* trips held 2 s or more (seen gone at two whole seconds 3 apart, maybe) */
	uint64_t unavailable; /* the kernel or the permissions refused the move */
};

struct shared {
	struct unit_state unit[FILES][UNITS];
	uint64_t progress[MAX_SLOTS];
	uint64_t ops, unmark0, unmark1, violations, errors, collections;
	uint64_t by_errno[NERRNO]; /* the storm files' MARK and UNMARK errors */
	struct act_count act[NACT];
	pid_t wpid[MAX_KIDS];             /* worker w's process, for getfd */
	uint32_t swapgen[MAX_KIDS][FILES]; /* odd: worker w's number is X's */
	struct box box[MAX_KIDS][COURIERS];
	int stop;
};

static struct shared *sh;
static int fds[FILES];  /* the numbers MARK and UNMARK go through: moved by dup2 */
static int vfds[FILES]; /* the same files, for reads and writes: never moved */
static int xfd = -1;    /* X: a disk file nobody can mark */
static dev_t x_dev;
static ino_t x_ino;
static int nslots, threads, nworkers, actions, me = -1;
static unsigned hold_ms = 5000;
static uid_t other_uid = 65534;

/* the numbers this thread marks through; its own after unshare */
static __thread int tfd[FILES];
static __thread int t_private;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int stopping(void)
{
	return __atomic_load_n(&sh->stop, __ATOMIC_RELAXED);
}

static void count(uint64_t *c)
{
	__atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
}

/* 0 if len bytes at off of fd are all c, else 1 */
static int bytes_are(int fd, off_t off, size_t len, uint8_t c)
{
	unsigned char buf[PAGE];

	for (size_t done = 0; done < len; done += PAGE) {
		if (pread(fd, buf, PAGE, off + (off_t)done) != PAGE)
			return 1;
		for (int i = 0; i < PAGE; i++)
			if (buf[i] != c)
				return 1;
	}
	return 0;
}

/* 1 if page h of unit u of file fi is all c */
static int page_is(int fi, int u, int h, uint8_t c)
{
	return !bytes_are(vfds[fi], (off_t)u * UNIT + h * PAGE, PAGE, c);
}

/* page h holds what it held, or what was being written over it */
static int page_intact(int fi, int u, int h, const struct unit_state *s)
{
	return page_is(fi, u, h, s->expected[h]) || (s->pending != 0 && page_is(fi, u, h, s->pending));
}

static void violation(const char *what, int fi, int u, int h, const struct unit_state *s)
{
	count(&sh->violations);
	fprintf(stderr, "storm: VIOLATION: %s: file %d page %d (unit %d; expected %u pending %u "
			"marked %u)\n", what, fi, u * HALF + h, u, s->expected[h], s->pending, s->marked);
}

static int is_x(int fd)
{
	struct stat st;

	return xfd >= 0 && fstat(fd, &st) == 0 && st.st_dev == x_dev && st.st_ino == x_ino;
}

/*
 * How a call went through a number: VIA_OWN through this thread's number
 * for the file (the dup2 thread may have put X there: swapgen says), VIA_X
 * through a descriptor known to be X, VIA_FILE through one known to be
 * the file.
 */
enum via_kind { VIA_OWN, VIA_X, VIA_FILE };
struct via {
	int fd;
	enum via_kind kind;
};

/*
 * fallocate through v for the first n pages of unit u of file fi. Returns
 * the call's result, or
 * -2 if the call may have met X: then *said0 says whether it answered 0
 * where that may have been the file's answer (an UNMARK whose answer is
 * lost) rather than certainly X's.
 */
static int call(int mode, int fi, int u, int n, struct via v, int *said0)
{
	uint32_t g0 = 0, g1 = 0;
	int r, maybe_x;

	*said0 = 0;
	if (v.kind == VIA_OWN && me >= 0 && !t_private)
		g0 = __atomic_load_n(&sh->swapgen[me][fi], __ATOMIC_SEQ_CST);
	r = fallocate(v.fd, mode, (off_t)u * UNIT, (off_t)n * PAGE);
	if (v.kind == VIA_OWN && me >= 0 && !t_private)
		g1 = __atomic_load_n(&sh->swapgen[me][fi], __ATOMIC_SEQ_CST);
	maybe_x = v.kind == VIA_X || (g0 & 1) || g0 != g1;
	/* X never says 1: nothing of it is volatile */
	if (!maybe_x || r == 1) {
		if (r < 0)
			count(&sh->by_errno[errno > 0 && errno < NERRNO ? errno : 0]);
		return r;
	}
	/* a 0 through a number that may have been X's may be the file's answer */
	*said0 = r == 0 && v.kind != VIA_X;
	return -2;
}

/*
 * UNMARK unit u through v and check the answer against what its pages may
 * hold. Whoever calls this owns the unit (or is the parent, at the end).
 * act: the action whose counts an answer set aside goes to, or -1.
 *
 *   0: every page intact (or, after a lost UNMARK that said 1 to a dead
 *      process, zeros);
 *   1: every page a MARK may have covered zeros or intact; the others
 *      intact (zeros only after a lost UNMARK, whose MARK may have covered
 *      them).
 */
static void unmark_check(int fi, int u, struct via v, int act)
{
	struct unit_state *s = &sh->unit[fi][u];
	int lost = s->unmarking, r, said0;

	s->unmarking = 1;
	r = call(FALLOC_FL_UNMARK_VOLATILE, fi, u, HALF, v, &said0);
	if (r == -2) {
		count(&sh->act[act >= 0 ? act : A_DUP2].set_aside);
		/* X's refusal changed nothing here; a 0 may have been the file's */
		if (!said0)
			s->unmarking = (uint8_t)lost;
		return; /* still marked, maybe: the next round unmarks again */
	}
	if (r < 0) {
		count(&sh->errors);
		return; /* still marked, maybe: the next owner unmarks again */
	}
	count(r == 0 ? &sh->unmark0 : &sh->unmark1);
	if (act >= 0)
		count(r == 0 ? &sh->act[act].unmark0 : &sh->act[act].unmark1);
	for (int h = 0; h < HALF; h++) {
		int zeros_ok = lost || (r == 1 && h < s->marked);

		if (!page_intact(fi, u, h, s) && !(zeros_ok && page_is(fi, u, h, 0)))
			violation(r == 0 ? "UNMARK said 0 but the page is not intact"
				  : h < s->marked ? "UNMARK said 1 over a page neither purged nor intact"
						  : "UNMARK said 1, and a page never marked is not intact",
				  fi, u, h, s);
	}
	/* what the pages hold now, whatever the last owner was doing */
	for (int h = 0; h < HALF; h++) {
		if (s->pending != 0 && page_is(fi, u, h, s->pending))
			s->expected[h] = s->pending;
		else if (page_is(fi, u, h, 0))
			s->expected[h] = 0;
	}
	s->pending = 0;
	s->marked = 0;
	s->unmarking = 0;
}

static int pidfd_getfd_of(pid_t pid, int fd)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0), got;

	if (pidfd < 0)
		return -1;
	got = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	close(pidfd);
	return got;
}

/*
 * A sibling worker's descriptor behind its number for file fi (or X, if
 * the sibling's number was X's then), or -1. Checked to be one of them: a
 * sibling killed and reaped since its pid was read leaves the pid to any
 * process, whose fd by that number is no business of ours.
 */
static int sibling_fd(int fi, unsigned *seed)
{
	struct stat st, mine;
	int w, got;
	pid_t pid;

	if (nworkers < 2)
		return -1;
	w = (int)(rand_r(seed) % (unsigned)(nworkers - 1));
	if (w >= me)
		w++;
	pid = __atomic_load_n(&sh->wpid[w], __ATOMIC_RELAXED);
	got = pid > 0 ? pidfd_getfd_of(pid, fds[fi]) : -1;
	if (got >= 0 && !is_x(got) &&
	    (fstat(got, &st) != 0 || fstat(vfds[fi], &mine) != 0 || st.st_dev != mine.st_dev ||
	     st.st_ino != mine.st_ino)) {
		close(got);
		got = -1;
	}
	return got;
}

static void one_op(int slot, unsigned *seed)
{
	int fi = (int)(rand_r(seed) % FILES);
	int k = (int)(rand_r(seed) % (UNITS / nslots));
	int u = k * nslots + slot;
	struct unit_state *s = &sh->unit[fi][u];
	struct via v = { tfd[fi], VIA_OWN };
	unsigned char buf[UNIT];
	int act = t_private ? A_UNSHARE : -1, got = -1, said0, r;

	if (s->marked || s->unmarking || s->pending) {
		unmark_check(fi, u, v, act); /* a killed owner's unit, or our own */
		/* not unmarked (an answer set aside, an error): the next round tries again */
		if (s->marked || s->unmarking)
			goto done;
	} else
		for (int h = 0; h < HALF; h++)
			if (!page_is(fi, u, h, s->expected[h]))
				violation("a page nobody marked changed", fi, u, h, s);
	if ((actions & (1 << A_GETFD)) && me >= 0 && rand_r(seed) % 8 == 0) {
		got = sibling_fd(fi, seed);
		if (got < 0) {
			count(&sh->act[A_GETFD].unavailable);
		} else {
			v = (struct via){ got, is_x(got) ? VIA_X : VIA_FILE };
			act = A_GETFD;
			count(&sh->act[A_GETFD].runs);
		}
	}
	if (rand_r(seed) % 2) {
		uint8_t val = (uint8_t)(1 + rand_r(seed) % 255);

		s->pending = val;
		memset(buf, val, sizeof(buf));
		if (pwrite(vfds[fi], buf, UNIT, (off_t)u * UNIT) != UNIT)
			count(&sh->errors);
		for (int h = 0; h < HALF; h++)
			s->expected[h] = val;
		s->pending = 0;
	}
	s->marked = 1;
	r = call(FALLOC_FL_MARK_VOLATILE, fi, u, 1, v, &said0);
	if (r == -2)
		count(&sh->act[act >= 0 ? act : A_DUP2].set_aside);
	else if (r != 0)
		count(&sh->errors);
	if (rand_r(seed) % 4 == 0)
		usleep(rand_r(seed) % 2000);
	/*
	 * MARK the whole unit: if a purge came in between, this MARK joins a
	 * purged range and punches the merged range through its fd (DESIGN
	 * 3), the number the dup2 thread swaps
	 */
	if (rand_r(seed) % 2 == 0) {
		s->marked = HALF;
		r = call(FALLOC_FL_MARK_VOLATILE, fi, u, HALF, v, &said0);
		if (r == -2)
			count(&sh->act[act >= 0 ? act : A_DUP2].set_aside);
		else if (r != 0)
			count(&sh->errors);
	}
	unmark_check(fi, u, v, act);
	/* an answer set aside: the unit is unmarked through this thread's own number */
	if (s->marked || s->unmarking)
		unmark_check(fi, u, (struct via){ tfd[fi], VIA_OWN }, act == A_GETFD ? -1 : act);
	if (got >= 0)
		close(got);
done:
	count(&sh->ops);
	count(&sh->progress[slot]);
}

struct thread_arg {
	int slot;
	unsigned seed;
};

/*
 * A thread with its own fd table: the two storm files' numbers swapped
 * and X's number (X in the process's table) reused for one of them.
 * Whoever resolves a number in another thread's table marks or punches
 * the wrong file; the oracle sees it.
 */
static void *private_main(void *arg)
{
	struct thread_arg *a = arg;
	int k = (int)(rand_r(&a->seed) % FILES);

	if (unshare(CLONE_FILES) != 0) {
		count(&sh->act[A_UNSHARE].unavailable);
		return NULL;
	}
	t_private = 1;
	/* the copy may hold X at a number the dup2 thread had swapped */
	if (dup2(vfds[1], fds[0]) < 0 || dup2(vfds[0], fds[1]) < 0) {
		count(&sh->act[A_UNSHARE].errors);
		return NULL;
	}
	tfd[0] = fds[1];
	tfd[1] = fds[0];
	if (xfd >= 0 && dup2(vfds[k], xfd) == xfd)
		tfd[k] = xfd;
	count(&sh->act[A_UNSHARE].runs);
	for (int i = 0; i < PRIVATE_OPS && !stopping(); i++)
		one_op(a->slot, &a->seed);
	return NULL; /* its table goes with it */
}

static void *thread_main(void *arg)
{
	struct thread_arg *a = arg;

	for (int fi = 0; fi < FILES; fi++)
		tfd[fi] = fds[fi];
	while (!stopping()) {
		if ((actions & (1 << A_UNSHARE)) && rand_r(&a->seed) % 128 == 0) {
			struct thread_arg pa = { a->slot, rand_r(&a->seed) };
			pthread_t t;

			if (pthread_create(&t, NULL, private_main, &pa) == 0)
				pthread_join(t, NULL);
			else
				count(&sh->act[A_UNSHARE].unavailable);
			continue;
		}
		one_op(a->slot, &a->seed);
	}
	return NULL;
}

/*
 * dup2 X onto a storm file's number and back, while the others use it: in
 * bursts of 1 to 256 swaps back to back (a check and a punch a few
 * microseconds apart see the number change), or one swap held
 * up to 300 us; then the number is the file's for 1 to 6 ms.
 */
static void *swapper_main(void *arg)
{
	unsigned seed = *(unsigned *)arg;

	while (!stopping()) {
		int fi = (int)(rand_r(&seed) % FILES), burst = rand_r(&seed) % 2;
		int n = burst ? 1 + (int)(rand_r(&seed) % 256) : 1;

		__atomic_add_fetch(&sh->swapgen[me][fi], 1, __ATOMIC_SEQ_CST);
		for (int i = 0; i < n; i++) {
			if (dup2(xfd, fds[fi]) < 0)
				count(&sh->act[A_DUP2].errors);
			if (!burst)
				usleep(rand_r(&seed) % 300);
			if (dup2(vfds[fi], fds[fi]) < 0)
				count(&sh->act[A_DUP2].errors);
			count(&sh->act[A_DUP2].runs);
		}
		__atomic_add_fetch(&sh->swapgen[me][fi], 1, __ATOMIC_SEQ_CST);
		usleep(1000 + rand_r(&seed) % 5000);
	}
	return NULL;
}

/* sleep up to ms, less if the storm stops */
static void hold(unsigned ms)
{
	uint64_t end = now_ms() + ms;

	while (!stopping() && now_ms() < end)
		usleep(20000);
}

static int send_fd(int sock, int fd)
{
	char byte = 'f', cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;

	memset(cbuf, 0, sizeof(cbuf));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &m, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

/* the descriptor in the next message on sock, within ms; -1 if none */
static int recv_fd(int sock, int ms)
{
	char byte, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct pollfd pfd = { sock, POLLIN, 0 };
	struct cmsghdr *c;
	int fd = -1;

	if (poll(&pfd, 1, ms) != 1 || recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* in flight in a unix socket, closed by the sender, received later */
static int move_scm(int fd, unsigned ms)
{
	int sv[2], back;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return -1;
	if (send_fd(sv[0], fd) != 0) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	close(fd);
	close(sv[0]);
	hold(ms);
	back = recv_fd(sv[1], 1000);
	close(sv[1]);
	return back;
}

/* held by a child of another user, which sends it back when asked */
/*
 * STORM_AS_UID=U (started as root): the storm runs as U, and a lender,
 * a process of STORM_UID forked before the storm drops to U, holds what
 * U's couriers lend it. Each worker has a channel to it (lend[w]): a
 * request is a socket end and the file; the lender keeps both until a
 * byte comes on that socket, then sends the file back on it. U's library
 * cannot look into the lender's fds: a holder it cannot see.
 */
#define LENT_MAX 256
static int lend[MAX_KIDS][2] = { { -1, -1 } };
static pid_t lender_pid;

static int recv_fds(int sock, int *out, int n)
{
	char byte, cbuf[CMSG_SPACE(2 * sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;

	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN((size_t)n * sizeof(int)))
		return -1;
	memcpy(out, CMSG_DATA(c), (size_t)n * sizeof(int));
	return 0;
}

static void lender(pid_t parent)
{
	struct pollfd pfd[MAX_KIDS + LENT_MAX];
	int held[LENT_MAX][2], nheld = 0;

	if (setgroups(0, NULL) != 0 || setgid(other_uid) != 0 || setuid(other_uid) != 0)
		_exit(3);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	for (int w = 0; w < nworkers; w++)
		close(lend[w][0]);
	while (!stopping() || nheld > 0) {
		int n = 0;

		for (int w = 0; w < nworkers; w++)
			pfd[n++] = (struct pollfd){ lend[w][1], POLLIN, 0 };
		for (int i = 0; i < nheld; i++)
			pfd[n++] = (struct pollfd){ held[i][0], POLLIN, 0 };
		if (poll(pfd, (nfds_t)n, 100) <= 0)
			continue;
		for (int w = 0; w < nworkers; w++) {
			int two[2];

			if (!(pfd[w].revents & POLLIN) || recv_fds(lend[w][1], two, 2) != 0)
				continue;
			if (nheld < LENT_MAX) {
				held[nheld][0] = two[0];
				held[nheld++][1] = two[1];
			} else {
				close(two[0]); /* the courier sees EOF: a failed trip */
				close(two[1]);
			}
		}
		for (int i = nheld - 1; i >= 0; i--) {
			char go;

			if (!(pfd[nworkers + i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (read(held[i][0], &go, 1) == 1)
				send_fd(held[i][0], held[i][1]);
			close(held[i][0]);
			close(held[i][1]);
			held[i][0] = held[nheld - 1][0];
			held[i][1] = held[--nheld][1];
		}
	}
	_exit(0);
}

/* lent to the lender: our fds closed, the file back when we ask */
static int move_lent(int fd, unsigned ms)
{
	int sv[2], two[2], back = -1;
	char byte = 'l', cbuf[CMSG_SPACE(2 * sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		close(fd);
		return -1;
	}
	two[0] = sv[1];
	two[1] = fd;
	memset(cbuf, 0, sizeof(cbuf));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(two));
	memcpy(CMSG_DATA(c), two, sizeof(two));
	if (sendmsg(lend[me][0], &m, MSG_NOSIGNAL) == 1) {
		close(sv[1]);
		close(fd);
		hold(ms);
		if (write(sv[0], "g", 1) == 1)
			back = recv_fd(sv[0], 20000);
	} else {
		close(sv[1]);
		close(fd);
	}
	close(sv[0]);
	return back;
}

static int move_user(int fd, unsigned ms)
{
	int sv[2], back = -1, status;
	pid_t parent = getpid(), pid;
	char go;

	if (lender_pid > 0)
		return move_lent(fd, ms);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		if (setgroups(0, NULL) != 0 || setgid(other_uid) != 0 || setuid(other_uid) != 0)
			_exit(3);
		/* after setuid: a change of credentials clears it */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		if (read(sv[1], &go, 1) == 1)
			send_fd(sv[1], fd);
		_exit(0);
	}
	close(sv[1]);
	if (pid > 0) {
		close(fd);
		hold(ms);
		if (write(sv[0], "g", 1) == 1)
			back = recv_fd(sv[0], 20000);
		waitpid(pid, &status, 0);
		if (back < 0 && WIFEXITED(status) && WEXITSTATUS(status) == 3)
			count(&sh->act[A_USER].unavailable);
	}
	close(sv[0]);
	return back;
}

#ifdef STORM_URING
/* does this kernel have IORING_OP_FIXED_FD_INSTALL? */
static int uring_usable(void)
{
	struct io_uring ring;
	struct io_uring_probe *pr;
	int ok;

	if (io_uring_queue_init(4, &ring, 0) != 0)
		return 0;
	pr = io_uring_get_probe_ring(&ring);
	ok = pr && io_uring_opcode_supported(pr, STORM_OP_FIXED_FD_INSTALL);
	if (pr)
		io_uring_free_probe(pr);
	io_uring_queue_exit(&ring);
	return ok;
}

/* only in an io_uring fixed-file table, then installed again */
static int move_uring(struct io_uring *ring, int fd, unsigned ms)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int back = -1;

	if (io_uring_register_files(ring, &fd, 1) != 0)
		return -1;
	close(fd);
	hold(ms);
	sqe = io_uring_get_sqe(ring);
	if (sqe) {
		io_uring_prep_rw(STORM_OP_FIXED_FD_INSTALL, sqe, 0, NULL, 0, 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		sqe->rw_flags = 0; /* install_fd_flags: close-on-exec */
		if (io_uring_submit(ring) == 1 && io_uring_wait_cqe(ring, &cqe) == 0) {
			back = cqe->res >= 0 ? cqe->res : -1;
			io_uring_cqe_seen(ring, cqe);
		}
	}
	io_uring_unregister_files(ring);
	return back;
}
#endif

/*
 * Back home: UNMARK page 0 of the trip's file (v0 when marked) and check
 * the answer; page 1 (v1) was never marked and must be intact.
 */
static void trip_check(int act, int back, uint8_t v0, uint8_t v1, uint64_t t0)
{
	struct act_count *c = &sh->act[act];
	struct stat st;
	int r;

	if (now_ms() - t0 >= 2000)
		count(&c->held2);
	if (fstat(back, &st) != 0)
		st.st_ino = 0;
	r = fallocate(back, FALLOC_FL_UNMARK_VOLATILE, 0, PAGE);
	if (r == 0) {
		count(&c->unmark0);
		if (bytes_are(back, 0, PAGE, v0)) {
			count(&sh->violations);
			fprintf(stderr, "storm: VIOLATION: %s: UNMARK said 0 but the page is not intact "
				"(memfd inode %llu, held %llu ms, %s)\n", act_name[act],
				(unsigned long long)st.st_ino, (unsigned long long)(now_ms() - t0),
				bytes_are(back, 0, PAGE, 0) ? "not all zeros" : "all zeros");
		}
	} else if (r == 1) {
		count(&c->unmark1);
		if (bytes_are(back, 0, PAGE, 0) && bytes_are(back, 0, PAGE, v0)) {
			count(&sh->violations);
			fprintf(stderr, "storm: VIOLATION: %s: UNMARK said 1 over a page neither "
				"purged nor intact\n", act_name[act]);
		}
	} else {
		count(&c->errors);
	}
	if (bytes_are(back, PAGE, PAGE, v1)) {
		count(&sh->violations);
		fprintf(stderr, "storm: VIOLATION: %s: a page nobody marked changed (memfd inode "
			"%llu, held %llu ms)\n", act_name[act], (unsigned long long)st.st_ino,
			(unsigned long long)(now_ms() - t0));
	}
	count(&c->runs);
}

/*
 * handoff: offer the file in this courier's box; a sibling worker's
 * courier takes it with pidfd_getfd, and this one then closes its fd:
 * the file lives on only in the taker, which checks it (try_take). Not
 * taken within 3 s: withdrawn, closed, counted unavailable. 0 if the
 * file went, -1 if not.
 */
static int offer(int ci, int fd, uint8_t v0, uint8_t v1)
{
	struct box *b = &sh->box[me][ci];
	struct stat st;
	uint64_t until = now_ms() + 3000;
	int expect = 1;

	if (fstat(fd, &st) != 0) {
		close(fd);
		return -1;
	}
	b->pid = getpid();
	b->fd = fd;
	b->dev = (uint64_t)st.st_dev;
	b->ino = (uint64_t)st.st_ino;
	b->v0 = v0;
	b->v1 = v1;
	__atomic_store_n(&b->state, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&b->state, __ATOMIC_SEQ_CST) == 1 && now_ms() < until && !stopping())
		usleep(2000);
	if (__atomic_compare_exchange_n(&b->state, &expect, 0, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		close(fd);
		count(&sh->act[A_HANDOFF].unavailable);
		return -1;
	}
	/* being taken: the taker's pidfd_getfd needs our fd until it says done (bounded: it may die) */
	until = now_ms() + 2000;
	while (__atomic_load_n(&b->state, __ATOMIC_SEQ_CST) == 2 && now_ms() < until)
		usleep(1000);
	close(fd);
	__atomic_store_n(&b->state, 0, __ATOMIC_SEQ_CST);
	return 0;
}

/* take a file a sibling's courier offers, hold it, check it */
static void try_take(unsigned *seed)
{
	int n = nworkers * COURIERS, first = (int)(rand_r(seed) % (unsigned)n), got, i;
	struct box *b = NULL;
	struct box mine;
	struct stat st;
	uint64_t t0;

	/* the first offer from the siblings' boxes, from a random one on */
	for (i = 0; i < n && b == NULL; i++) {
		int k = (first + i) % n, expect = 1;

		if (k / COURIERS == me)
			continue;
		b = &sh->box[k / COURIERS][k % COURIERS];
		if (!__atomic_compare_exchange_n(&b->state, &expect, 2, 0, __ATOMIC_SEQ_CST,
						 __ATOMIC_SEQ_CST))
			b = NULL;
	}
	if (b == NULL)
		return;
	mine = *b;
	got = pidfd_getfd_of(mine.pid, mine.fd);
	/*
	 * the offerer closes after a bounded wait: a late take may find another
	 * file there, or (the offerer killed, reaped) another process at its pid
	 */
	if (got >= 0 && (fstat(got, &st) != 0 || (uint64_t)st.st_ino != mine.ino ||
			 (uint64_t)st.st_dev != mine.dev)) {
		close(got);
		got = -1;
	}
	__atomic_store_n(&b->state, 3, __ATOMIC_SEQ_CST);
	if (got < 0) {
		count(&sh->act[A_HANDOFF].unavailable);
		return;
	}
	t0 = now_ms();
	hold(hold_ms ? rand_r(seed) % hold_ms : 0);
	trip_check(A_HANDOFF, got, mine.v0, mine.v1, t0);
	close(got);
}

/*
 * One trip: a memfd's page 0 marked (maybe purged at once), its page 1
 * never; the file moved out of every fd table for a while; back home,
 * page 0's UNMARK checked and page 1 checked intact.
 */
static void trip(int act, unsigned *seed, void *ring, int ci)
{
	uint8_t v0 = (uint8_t)(1 + rand_r(seed) % 255), v1 = (uint8_t)(1 + rand_r(seed) % 255);
	unsigned ms = hold_ms ? rand_r(seed) % hold_ms : 0;
	unsigned char buf[PAGE];
	struct act_count *c = &sh->act[act];
	uint64_t t0;
	int fd = memfd_create("storm-trip", MFD_CLOEXEC), back = -1;

	(void)ring;
	if (fd < 0 || ftruncate(fd, 2 * PAGE) != 0)
		goto error;
	memset(buf, v0, PAGE);
	if (pwrite(fd, buf, PAGE, 0) != PAGE)
		goto error;
	memset(buf, v1, PAGE);
	if (pwrite(fd, buf, PAGE, PAGE) != PAGE)
		goto error;
	if (fallocate(fd, FALLOC_FL_MARK_VOLATILE, 0, PAGE) != 0)
		goto error;
#ifndef STORM_STATIC
	if (rand_r(seed) % 2)
		volatile_purge(VOLATILE_PURGE_ALL);
#endif
	t0 = now_ms();
	if (act == A_HANDOFF) {
		offer(ci, fd, v0, v1);
		return; /* the taker checks it */
	}
	if (act == A_SCM)
		back = move_scm(fd, ms);
	else if (act == A_USER)
		back = move_user(fd, ms);
#ifdef STORM_URING
	else if (act == A_URING)
		back = move_uring(ring, fd, ms);
#endif
	fd = -1; /* closed by the move, whatever it returned */
	if (back < 0)
		goto error;
	trip_check(act, back, v0, v1, t0);
	close(back);
	return;
error:
	if (fd >= 0)
		close(fd);
	if (!stopping())
		count(&c->errors);
}

struct courier_arg {
	unsigned seed;
	int ci;
};

static void *courier_main(void *arg)
{
	struct courier_arg *ca = arg;
	unsigned seed = ca->seed;
	int kinds[NACT], n = 0;
	void *ring = NULL;
#ifdef STORM_URING
	struct io_uring r;

	if ((actions & (1 << A_URING)) && io_uring_queue_init(4, &r, 0) == 0)
		ring = &r;
#endif
	for (int a = A_SCM; a < NACT; a++)
		if ((actions & (1 << a)) && (a != A_URING || ring))
			kinds[n++] = a;
	while (n > 0 && !stopping()) {
		if (actions & (1 << A_HANDOFF))
			try_take(&seed);
		trip(kinds[rand_r(&seed) % (unsigned)n], &seed, ring, ca->ci);
	}
#ifdef STORM_URING
	if (ring)
		io_uring_queue_exit(&r);
#endif
	return NULL;
}

static void worker(int w, unsigned seed)
{
	pthread_t th[MAX_SLOTS], sw, cou[COURIERS];
	struct thread_arg args[MAX_SLOTS];
	struct courier_arg cargs[COURIERS];
	unsigned sseed = seed * 7u + 1;
	int have_sw = 0, ncou = 0;

	me = w;
	/* a killed predecessor may have left a swap half done in its own table only */
	for (int fi = 0; fi < FILES; fi++)
		__atomic_store_n(&sh->swapgen[w][fi], 0, __ATOMIC_SEQ_CST);
	/* and an offer whose fd died with it */
	for (int i = 0; i < COURIERS; i++)
		__atomic_store_n(&sh->box[w][i].state, 0, __ATOMIC_SEQ_CST);
	for (int t = 0; t < threads; t++) {
		args[t].slot = w * threads + t;
		args[t].seed = seed * 31u + (unsigned)t;
		pthread_create(&th[t], NULL, thread_main, &args[t]);
	}
	if ((actions & (1 << A_DUP2)) && xfd >= 0)
		have_sw = pthread_create(&sw, NULL, swapper_main, &sseed) == 0;
	if (actions & TRIPS)
		for (int i = 0; i < COURIERS; i++) {
			cargs[i] = (struct courier_arg){ seed * 13u + (unsigned)i, i };
			if (pthread_create(&cou[ncou], NULL, courier_main, &cargs[i]) == 0)
				ncou++;
		}
	for (int t = 0; t < threads; t++)
		pthread_join(th[t], NULL);
	if (have_sw)
		pthread_join(sw, NULL);
	for (int i = 0; i < ncou; i++)
		pthread_join(cou[i], NULL);
	_exit(0);
}

#ifdef STORM_STATIC
/* never called: main refuses purgers */
static int64_t no_purge(uint64_t bytes)
{
	(void)bytes;
	return -1;
}
#define volatile_purge no_purge
#endif

static void purger(unsigned seed)
{
	while (!stopping()) {
		volatile_purge(rand_r(&seed) % 2 ? VOLATILE_PURGE_ALL : 16 * PAGE);
		usleep(rand_r(&seed) % 3000);
	}
	_exit(0);
}

/*
 * `volatile purge --bytes 16K` every half second to two: a purge, then a
 * look at every file with volatile ranges, which forgets the records of
 * files seen gone twice some seconds apart (DESIGN 15), as the daemon does.
 */
static const char *collect_cmd;

static void collector(unsigned seed)
{
	while (!stopping()) {
		pid_t pid = fork();

		if (pid == 0) {
			int null = open("/dev/null", O_WRONLY);

			if (null >= 0)
				dup2(null, 1);
			unsetenv("LD_PRELOAD");
			execl(collect_cmd, collect_cmd, "purge", "--bytes", "16K", (char *)NULL);
			_exit(127);
		}
		if (pid > 0) {
			int status, killed = 0;

			/*
			 * Our SIGKILL leaves the command to finish alone; the storm's
			 * end kills it (a collector killed mid-pass is a storm event).
			 */
			while (waitpid(pid, &status, WNOHANG) == 0) {
				if (stopping() && !killed)
					killed = kill(pid, SIGKILL) == 0;
				usleep(10000);
			}
			if (!killed && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
				count(&sh->errors);
			if (!killed)
				count(&sh->collections);
		}
		usleep(500000 + rand_r(&seed) % 1500000);
	}
	_exit(0);
}

struct kid {
	pid_t pid;
	int worker; /* -1: a purger; -2: the collector */
};

static pid_t start(const struct kid *k, unsigned seed)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (k->worker >= 0)
			worker(k->worker, seed);
		if (k->worker == -2)
			collector(seed);
		purger(seed);
	}
	if (pid > 0 && k->worker >= 0)
		__atomic_store_n(&sh->wpid[k->worker], pid, __ATOMIC_RELAXED);
	return pid;
}

/*
 * STORM_BLIND=1: without CAP_DAC_READ_SEARCH, as a user is, the library has
 * no kernel's word that a file is gone (src/inode_gone.c) and must judge from the
 * holders it can see, which a file in flight, in an io_uring table or with
 * a holder it cannot see has none of. Root keeps CAP_SETUID for "user".
 */
static int go_blind(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	int i = CAP_DAC_READ_SEARCH / 32;
	uint32_t bit = 1u << (CAP_DAC_READ_SEARCH % 32);

	if (syscall(SYS_capget, &h, d) != 0)
		return -1;
	d[i].effective &= ~bit;
	d[i].permitted &= ~bit;
	d[i].inheritable &= ~bit;
	/* and from the bounding set: root's exec of the collector gets it back otherwise */
	if (prctl(PR_CAPBSET_DROP, CAP_DAC_READ_SEARCH, 0, 0, 0) != 0 && errno != EINVAL)
		return -1;
	return (int)syscall(SYS_capset, &h, d);
}

/* ACTIONS: "all", "none" or a comma list of act_name; -1 if unknown */
static int parse_actions(const char *arg)
{
	char buf[256], *tok, *save = NULL;
	int set = 0;

	if (strcmp(arg, "all") == 0)
		return (1 << NACT) - 1;
	if (strcmp(arg, "none") == 0)
		return 0;
	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int a;

		for (a = 0; a < NACT && strcmp(tok, act_name[a]) != 0; a++)
			;
		if (a == NACT)
			return -1;
		set |= 1 << a;
	}
	return set;
}

/* Has each action asked for run once (a trip: checked back home)? */
static int all_ran(void)
{
	for (int a = 0; a < NACT; a++)
		if ((actions & (1 << a)) && __atomic_load_n(&sh->act[a].runs, __ATOMIC_RELAXED) == 0)
			return 0;
	return 1;
}

/* leave out, saying why, the actions this machine or build cannot do */
static void drop(int a, const char *why)
{
	if (actions & (1 << a))
		printf("storm: %s left out: %s\n", act_name[a], why);
	actions &= ~(1 << a);
}

int main(int argc, char **argv)
{
	struct kid kids[MAX_KIDS];
	int nkids = 0, purgers, kill_mode, seconds, hang = 0, ran_all = 1;
	uint64_t last[MAX_SLOTS], since[MAX_SLOTS], end, kills = 0, now, past = 0;
	unsigned seed = 12345;
	char path[4096];
	const char *env;

	if (argc < 7 || argc > 9) {
		fprintf(stderr, "usage: storm DIR SECONDS WORKERS THREADS PURGERS KILL [ACTIONS [X]]\n");
		return 2;
	}
	seconds = atoi(argv[2]);
	nworkers = atoi(argv[3]);
	threads = atoi(argv[4]);
	purgers = atoi(argv[5]);
	kill_mode = atoi(argv[6]);
	actions = argc > 7 ? parse_actions(argv[7]) : 0;
	nslots = nworkers * threads;
	if (nslots < 1 || nslots > MAX_SLOTS || UNITS % nslots != 0 ||
	    nworkers + purgers > MAX_KIDS || seconds < 1 || actions < 0) {
		fprintf(stderr, "storm: bad numbers or actions\n");
		return 2;
	}
#ifdef STORM_STATIC
	if (purgers != 0) {
		fprintf(stderr, "storm: a static storm has no purgers (it links no library)\n");
		return 2;
	}
#endif
	if ((env = getenv("STORM_HOLD_MS")) != NULL)
		hold_ms = (unsigned)strtoul(env, NULL, 10);
	collect_cmd = getenv("STORM_COLLECT");
	if (collect_cmd != NULL && nworkers + purgers + 1 > MAX_KIDS) {
		fprintf(stderr, "storm: bad numbers\n");
		return 2;
	}
	if ((env = getenv("STORM_UID")) != NULL)
		other_uid = (uid_t)strtoul(env, NULL, 10);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((env = getenv("STORM_BLIND")) != NULL && strcmp(env, "1") == 0 && go_blind() != 0) {
		fprintf(stderr, "storm: cannot give up CAP_DAC_READ_SEARCH: %s\n", strerror(errno));
		return 2;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	if ((env = getenv("STORM_AS_UID")) != NULL) {
		uid_t as = (uid_t)strtoul(env, NULL, 10);
		pid_t parent = getpid();

		if (getuid() != 0 || as == other_uid) {
			fprintf(stderr, "storm: STORM_AS_UID needs root and a STORM_UID other than it\n");
			return 2;
		}
		/* before anything of the library's: its region is the user's */
		if (actions & (1 << A_USER)) {
			for (int w = 0; w < nworkers; w++)
				if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, lend[w]) != 0)
					return 2;
			lender_pid = fork();
			if (lender_pid == 0)
				lender(parent);
			if (lender_pid < 0)
				return 2;
			for (int w = 0; w < nworkers; w++)
				close(lend[w][1]);
		}
		if (setgroups(0, NULL) != 0 || setgid(as) != 0 || setuid(as) != 0) {
			fprintf(stderr, "storm: cannot become uid %u: %s\n", (unsigned)as, strerror(errno));
			return 2;
		}
		/*
		 * A change of uid left us not dumpable, and every child would
		 * inherit it: /proc/PID of ours root's, closed to the user's
		 * library. A user's processes that exec'd are dumpable.
		 */
		if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0)
			return 2;
	}
	for (int fi = 0; fi < FILES; fi++) {
		unsigned char buf[PAGE];

		snprintf(path, sizeof(path), "%s/storm.%d", argv[1], fi);
		vfds[fi] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		fds[fi] = vfds[fi] < 0 ? -1 : dup(vfds[fi]);
		if (fds[fi] < 0)
			return 2;
		memset(buf, 'A', sizeof(buf));
		for (int p = 0; p < UNITS * HALF; p++) {
			if (pwrite(vfds[fi], buf, PAGE, (off_t)p * PAGE) != PAGE)
				return 2;
			sh->unit[fi][p / HALF].expected[p % HALF] = 'A';
		}
	}
	if (argc > 8 && strcmp(argv[8], "-") != 0) {
		unsigned char buf[XSIZE];
		struct stat st;

		memset(buf, 'X', sizeof(buf));
		xfd = open(argv[8], O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (xfd < 0 || pwrite(xfd, buf, XSIZE, 0) != XSIZE || fstat(xfd, &st) != 0 ||
		    fsync(xfd) != 0) {
			fprintf(stderr, "storm: cannot make X (%s): %s\n", argv[8], strerror(errno));
			return 2;
		}
		x_dev = st.st_dev;
		x_ino = st.st_ino;
		if (fallocate(xfd, FALLOC_FL_MARK_VOLATILE, 0, PAGE) == 0) {
			fprintf(stderr, "storm: X (%s) can be marked: it must be on a file system the "
					"library refuses\n", argv[8]);
			return 2;
		}
	}
	if (xfd < 0)
		drop(A_DUP2, "no X given");
	if (nworkers < 2) {
		drop(A_GETFD, "one worker: no sibling");
		drop(A_HANDOFF, "one worker: no sibling");
	}
	if (getuid() != 0 && lender_pid <= 0)
		drop(A_USER, "not root: cannot setuid");
#ifdef STORM_URING
	if (!uring_usable())
		drop(A_URING, "io_uring or IORING_OP_FIXED_FD_INSTALL (Linux 6.8) unavailable here");
#else
#ifdef STORM_STATIC
	drop(A_URING, "a static storm links no liburing");
#else
	drop(A_URING, "built without liburing");
#endif
#endif

	for (int w = 0; w < nworkers; w++)
		kids[nkids++] = (struct kid){ 0, w };
	for (int q = 0; q < purgers; q++)
		kids[nkids++] = (struct kid){ 0, -1 };
	if (collect_cmd != NULL)
		kids[nkids++] = (struct kid){ 0, -2 };
	for (int i = 0; i < nkids; i++)
		kids[i].pid = start(&kids[i], seed + (unsigned)i);
	end = now_ms() + (uint64_t)seconds * 1000;
	for (int s = 0; s < nslots; s++) {
		last[s] = 0;
		since[s] = now_ms();
	}

	/* the storm's SECONDS, then on until every action has run (bounded) */
	while (!hang && ((now = now_ms()) < end || (!all_ran() && now < end + RAN_ALL_MS))) {
		if (now >= end)
			past = now - end;
		usleep(kill_mode ? 2000 + rand_r(&seed) % 20000 : 100000);
		if (kill_mode) {
			/* not the collector (the last kid): its commands are not ours to kill */
			int i = (int)(rand_r(&seed) % (unsigned)(nkids - (collect_cmd != NULL)));

			kill(kids[i].pid, SIGKILL);
			waitpid(kids[i].pid, NULL, 0);
			kills++;
			kids[i].pid = start(&kids[i], seed);
		}
		for (int s = 0; s < nslots; s++) {
			uint64_t p = __atomic_load_n(&sh->progress[s], __ATOMIC_RELAXED);

			if (p != last[s]) {
				last[s] = p;
				since[s] = now_ms();
			} else if (now_ms() - since[s] > 5000) {
				fprintf(stderr, "storm: HANG: slot %d made no progress for 5 s\n", s);
				hang = 1;
			}
		}
		if (xfd >= 0 && bytes_are(xfd, 0, XSIZE, 'X')) {
			count(&sh->violations);
			fprintf(stderr, "storm: VIOLATION: X, a file nobody marked, changed\n");
			break;
		}
	}
	if (past > 0)
		printf("storm: went on %llu ms past its %d s for every action to run once\n",
		       (unsigned long long)past, seconds);
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < nkids; i++) {
		uint64_t deadline = now_ms() + 20000; /* bounds a failure only: a loaded machine stops them late */
		int status;

		while (waitpid(kids[i].pid, &status, WNOHANG) == 0) {
			if (now_ms() > deadline) {
				fprintf(stderr, "storm: HANG: child %d does not stop\n", (int)kids[i].pid);
				kill(kids[i].pid, SIGKILL);
				waitpid(kids[i].pid, &status, 0);
				hang = 1;
				break;
			}
			usleep(10000);
		}
	}

	if (lender_pid > 0) {
		/* another user's: ours to wait for, not to kill; it ends when nothing is lent */
		uint64_t deadline = now_ms() + 30000;

		while (waitpid(lender_pid, NULL, WNOHANG) == 0) {
			if (now_ms() > deadline) {
				fprintf(stderr, "storm: HANG: the lender does not stop\n");
				hang = 1;
				break;
			}
			usleep(10000);
		}
	}
	/* the last word: every page, unmarked and checked here */
	for (int fi = 0; fi < FILES; fi++)
		for (int u = 0; u < UNITS; u++)
			unmark_check(fi, u, (struct via){ fds[fi], VIA_FILE }, -1);
	if (xfd >= 0 && bytes_are(xfd, 0, XSIZE, 'X')) {
		count(&sh->violations);
		fprintf(stderr, "storm: VIOLATION: X, a file nobody marked, changed\n");
	}
	for (int a = 0; a < NACT; a++) {
		const struct act_count *c = &sh->act[a];

		if (!(actions & (1 << a)))
			continue;
		printf("storm: %s: %llu runs, %llu answers set aside (X's, maybe), UNMARK said 0 %llu "
		       "and 1 %llu times, %llu held 2 s or more, %llu errors, %llu unavailable\n",
		       act_name[a], (unsigned long long)c->runs, (unsigned long long)c->set_aside,
		       (unsigned long long)c->unmark0, (unsigned long long)c->unmark1,
		       (unsigned long long)c->held2, (unsigned long long)c->errors,
		       (unsigned long long)c->unavailable);
		if (c->runs == 0) {
			fprintf(stderr, "storm: the %s action never ran\n", act_name[a]);
			ran_all = 0;
		}
	}
	for (int e = 0; e < NERRNO; e++)
		if (sh->by_errno[e])
			printf("storm: MARK/UNMARK of the storm files failed %llu times with %s\n",
			       (unsigned long long)sh->by_errno[e], e ? strerror(e) : "an unknown errno");
	if (collect_cmd != NULL)
		printf("storm: %llu collections (%s purge --bytes 16K)\n",
		       (unsigned long long)sh->collections, collect_cmd);
	printf("storm: %d workers x %d threads, %d purgers, %llu kills: %llu MARK/UNMARK "
	       "rounds, UNMARK said 0 %llu and 1 %llu times, %llu errors, %llu violations%s\n",
	       nworkers, threads, purgers, (unsigned long long)kills,
	       (unsigned long long)sh->ops, (unsigned long long)sh->unmark0,
	       (unsigned long long)sh->unmark1, (unsigned long long)sh->errors,
	       (unsigned long long)sh->violations, hang ? ", HUNG" : "");
	return sh->violations == 0 && !hang && ran_all && sh->ops > 0 && sh->unmark1 > 0 ? 0 : 1;
}
