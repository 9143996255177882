/* SPDX-License-Identifier: MIT */
/*
 * seccomp.c - `volatile run`'s supervisor (DESIGN 21): what a volatile call
 * costs a program the preload cannot reach, and what the filter costs
 * every other call.
 *
 * bench runs itself again under `volatile run` (bench --supervised): there
 * its raw system calls bypass the preloaded library and go through the
 * filter. It times, in rounds that alternate them, the pair made as raw
 * system calls (each call served by run), the same pair through the
 * preloaded library, a fallocate the kernel rejects (it passes the filter's
 * test of its mode and stays in the kernel) and getppid (a call the
 * filter never looks at: the kernel's cache of always-allowed calls). The
 * parent times the two raw calls without a filter, in the same way, and a
 * child of its own times them under a filter that allows everything: what
 * any filter costs a system call (the kernel's slow way in), which no
 * filter of ours can avoid.
 */
#include "bench.h"

#include "volatile.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <linux/falloc.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 15
#define PAIRS 2000 /* served calls cost microseconds: fewer per round */
#define CALLS 20000

enum { SV_PAIR, SHIM_PAIR, REJECTED, GETPPID, NKINDS };

static void one(int kind, int fd)
{
	switch (kind) {
	case SV_PAIR:
		if (syscall(SYS_fallocate, fd, FALLOC_FL_MARK_VOLATILE, (off_t)8192, (off_t)4096) != 0 ||
		    syscall(SYS_fallocate, fd, FALLOC_FL_UNMARK_VOLATILE, (off_t)8192, (off_t)4096) != 0)
			abort();
		break;
	case SHIM_PAIR:
		if (fallocate(fd, FALLOC_FL_MARK_VOLATILE, 8192, 4096) != 0 ||
		    fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, 8192, 4096) != 0)
			abort();
		break;
	case REJECTED:
		if (syscall(SYS_fallocate, fd, FALLOC_FL_ZERO_RANGE, (off_t)0, (off_t)4096) == 0)
			abort();
		break;
	default:
		syscall(SYS_getppid);
		break;
	}
}

/* ns per call of each kind in `kinds`, medians of rounds in rotating order */
static void measure(const int *kinds, int nk, int fd, double *out)
{
	static double t[NKINDS][ROUNDS];

	for (int r = 0; r < ROUNDS; r++)
		for (int j = 0; j < nk; j++) {
			int k = kinds[(j + r) % nk];
			int n = k == SV_PAIR || k == SHIM_PAIR ? PAIRS : CALLS;
			uint64_t t0 = now_ns();

			for (int i = 0; i < n; i++)
				one(k, fd);
			t[k][r] = (double)(now_ns() - t0) / n;
		}
	for (int j = 0; j < nk; j++)
		out[kinds[j]] = median(t[kinds[j]], ROUNDS);
}

static int memfd(void)
{
	int fd = memfd_create("bench-seccomp", MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, 1 << 20) != 0)
		return -1;
	/* the file's one range: its record stays, as in the pair at 1 range */
	if (fallocate(fd, FALLOC_FL_MARK_VOLATILE, 0, 4096) != 0)
		return -1;
	return fd;
}

int supervised_main(int argc, char **argv)
{
	static const int kinds[] = { SV_PAIR, SHIM_PAIR, REJECTED, GETPPID };
	double ns[NKINDS];
	int fd = memfd();

	(void)argc;
	(void)argv;
	if (fd < 0)
		return 1;
	measure(kinds, NKINDS, fd, ns);
	printf("%.1f %.1f %.1f %.1f\n", ns[SV_PAIR], ns[SHIM_PAIR], ns[REJECTED], ns[GETPPID]);
	return 0;
}

/*
 * bench --threads N PAIRS [AT_ONCE], under `volatile run`: N threads of
 * this process make PAIRS raw pairs between them, each thread its share on
 * a page of its own, in CROWD_ROUNDS rounds; prints the median round's ns
 * per served call. Each thread makes one pair first, outside the clock:
 * what is timed is calls of threads the supervisor has seen before, as a
 * program's are after its first (a thread's first call opens its
 * descriptors, in any design). AT_ONCE (default N): the threads take turns
 * in groups of so many, each group its share of a round in turn, the others
 * asleep: as many callers seen before, fewer calls waiting at once.
 */
struct crowd {
	pthread_barrier_t *start, *end; /* each group's */
	int fd, threads, each, rounds, at_once, groups;
	int req[2];	/* the floor's (crowd_floor): threads' numbers to the server */
	int *reply;	/* the floor's: each thread's eventfd, -1 for a served pair */
};

struct member {
	struct crowd *c;
	int index;
};

static void raw_pair(int fd, off_t off)
{
	if (syscall(SYS_fallocate, fd, FALLOC_FL_MARK_VOLATILE, off, (off_t)4096) != 0 ||
	    syscall(SYS_fallocate, fd, FALLOC_FL_UNMARK_VOLATILE, off, (off_t)4096) < 0)
		abort();
}

/* the floor's call: a round trip to the server thread, through a pipe and an eventfd */
static void round_trip(struct crowd *c, int index)
{
	uint64_t v;

	if (write(c->req[1], &index, sizeof(index)) != (ssize_t)sizeof(index) ||
	    read(c->reply[index], &v, sizeof(v)) != (ssize_t)sizeof(v))
		abort();
}

static void *member_main(void *arg)
{
	const struct member *m = arg;
	struct crowd *c = m->c;
	int g = m->index / c->at_once;
	off_t off = (off_t)(m->index + 1) * 8192;

	if (c->reply == NULL)
		raw_pair(c->fd, off);
	for (int r = 0; r < c->rounds; r++) {
		pthread_barrier_wait(&c->start[g]);
		for (int i = 0; i < c->each; i++) {
			if (c->reply == NULL) {
				raw_pair(c->fd, off);
			} else {
				round_trip(c, m->index);
				round_trip(c, m->index);
			}
		}
		pthread_barrier_wait(&c->end[g]);
	}
	return NULL;
}

/* the floor's server: answers each number read, until -1 */
static void *crowd_server(void *arg)
{
	struct crowd *c = arg;
	uint64_t one = 1;
	int index;

	while (read(c->req[0], &index, sizeof(index)) == (ssize_t)sizeof(index) && index >= 0)
		if (write(c->reply[index], &one, sizeof(one)) != (ssize_t)sizeof(one))
			abort();
	return NULL;
}

#define CROWD_ROUNDS 5

/*
 * ns per call of `threads` threads making `pairs` pairs in all, `at_once`
 * at a time: served pairs, or (floor) two round trips to a server thread
 * for each pair. -1: the machine would not (fds, threads).
 */
static double crowd_ns(int threads, int pairs, int at_once, int trips)
{
	static double t[CROWD_ROUNDS];
	struct crowd c;
	struct member *m;
	pthread_t *tid, server;
	pthread_attr_t attr;

	memset(&c, 0, sizeof(c));
	c.threads = threads;
	c.at_once = at_once;
	if (c.threads < 1 || pairs < c.threads || c.at_once < 1 || c.threads % c.at_once != 0)
		return -1;
	c.groups = c.threads / c.at_once;
	c.each = pairs / c.threads;
	c.rounds = CROWD_ROUNDS;
	c.fd = memfd_create("bench-threads", MFD_CLOEXEC);
	c.start = calloc((size_t)c.groups, sizeof(*c.start));
	c.end = calloc((size_t)c.groups, sizeof(*c.end));
	m = calloc((size_t)c.threads, sizeof(*m));
	tid = calloc((size_t)c.threads, sizeof(*tid));
	if (c.fd < 0 || ftruncate(c.fd, (off_t)(c.threads + 2) * 8192) != 0 || !m || !tid ||
	    !c.start || !c.end)
		return -1;
	if (trips) {
		c.reply = calloc((size_t)c.threads, sizeof(*c.reply));
		if (c.reply == NULL || pipe(c.req) != 0)
			return -1;
		for (int i = 0; i < c.threads; i++)
			if ((c.reply[i] = eventfd(0, EFD_CLOEXEC)) < 0)
				return -1;
		if (pthread_create(&server, NULL, crowd_server, &c) != 0)
			return -1;
	}
	for (int g = 0; g < c.groups; g++) {
		pthread_barrier_init(&c.start[g], NULL, (unsigned)c.at_once + 1);
		pthread_barrier_init(&c.end[g], NULL, (unsigned)c.at_once + 1);
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	for (int i = 0; i < c.threads; i++) {
		m[i].c = &c;
		m[i].index = i;
		if (pthread_create(&tid[i], &attr, member_main, &m[i]) != 0) {
			fprintf(stderr, "bench: only %d threads\n", i);
			_exit(3); /* the threads made wait for the others for good */
		}
	}
	for (int r = 0; r < c.rounds; r++) {
		uint64_t t0 = now_ns();

		for (int g = 0; g < c.groups; g++) {
			pthread_barrier_wait(&c.start[g]);
			pthread_barrier_wait(&c.end[g]);
		}
		t[r] = (double)(now_ns() - t0) / (2.0 * c.each * c.threads);
	}
	for (int i = 0; i < c.threads; i++)
		pthread_join(tid[i], NULL);
	if (trips) {
		int end = -1;

		if (write(c.req[1], &end, sizeof(end)) != (ssize_t)sizeof(end))
			abort();
		pthread_join(server, NULL);
		for (int i = 0; i < c.threads; i++)
			close(c.reply[i]);
		close(c.req[0]);
		close(c.req[1]);
		free(c.reply);
	}
	pthread_attr_destroy(&attr);
	for (int g = 0; g < c.groups; g++) {
		pthread_barrier_destroy(&c.start[g]);
		pthread_barrier_destroy(&c.end[g]);
	}
	close(c.fd);
	free(c.start);
	free(c.end);
	free(m);
	free(tid);
	return median(t, c.rounds);
}

int threads_main(int argc, char **argv)
{
	double ns;

	if (argc != 3 && argc != 4)
		return 2;
	ns = crowd_ns(atoi(argv[1]), atoi(argv[2]), atoi(argv[argc == 4 ? 3 : 1]), 0);
	if (ns < 0)
		return 1;
	printf("%.1f\n", ns);
	return 0;
}

/*
 * The floor of any supervisor: a pipe round trip between two threads, on
 * one CPU (cpu_b < 0: both on cpu_a) or on two: ns per round trip.
 */
struct ping {
	int to[2], back[2];
	int cpu;
	int n;
};

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

static void *pong(void *arg)
{
	struct ping *p = arg;
	char b;

	pin(p->cpu);
	for (int i = 0; i < p->n; i++)
		if (read(p->to[0], &b, 1) != 1 || write(p->back[1], &b, 1) != 1)
			abort();
	return NULL;
}

#define TRIPS 20000

static double round_trip_ns(int cpu_a, int cpu_b)
{
	double t[ROUNDS];
	struct ping p;
	pthread_t other;
	cpu_set_t was;
	char b = 0;

	sched_getaffinity(0, sizeof(was), &was);
	if (pipe(p.to) != 0 || pipe(p.back) != 0)
		return -1;
	p.cpu = cpu_b < 0 ? cpu_a : cpu_b;
	p.n = ROUNDS * TRIPS;
	pin(cpu_a);
	if (pthread_create(&other, NULL, pong, &p) != 0)
		return -1;
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t0 = now_ns();

		for (int i = 0; i < TRIPS; i++)
			if (write(p.to[1], &b, 1) != 1 || read(p.back[0], &b, 1) != 1)
				abort();
		t[r] = (double)(now_ns() - t0) / TRIPS;
	}
	pthread_join(other, NULL);
	sched_setaffinity(0, sizeof(was), &was);
	close(p.to[0]);
	close(p.to[1]);
	close(p.back[0]);
	close(p.back[1]);
	return median(t, ROUNDS);
}

/*
 * The two raw calls under a one-instruction filter that allows everything,
 * timed in a child: 0, or -1 (no seccomp here).
 */
static int under_allow_all(double *ns)
{
	static const int kinds[] = { REJECTED, GETPPID };
	int pipefd[2], status, fd;
	ssize_t n;
	pid_t pid;

	if (pipe(pipefd) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		struct sock_fprog prog = { 1, &allow };
		double v[NKINDS];

		close(pipefd[0]);
		fd = memfd();
		if (fd < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
			_exit(1);
		measure(kinds, 2, fd, v);
		_exit(write(pipefd[1], v, sizeof(v)) == (ssize_t)sizeof(v) ? 0 : 1);
	}
	close(pipefd[1]);
	n = pid < 0 ? -1 : read(pipefd[0], ns, sizeof(double) * NKINDS);
	close(pipefd[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0 || n != (ssize_t)(sizeof(double) * NKINDS))
		return -1;
	return 0;
}

/*
 * What `volatile run -- bench ARGS...` (one to four ARGS, the rest NULL)
 * prints, in buf: 0, or -1.
 */
static int run_bench_under(const char *volatile_bin, char *buf, size_t size, const char *a,
			   const char *b, const char *c, const char *d)
{
	int pipefd[2], status;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	pid_t pid;

	if (n <= 0 || pipe(pipefd) != 0)
		return -1;
	exe[n] = '\0';
	pid = fork();
	if (pid == 0) {
		dup2(pipefd[1], 1);
		close(pipefd[0]);
		close(pipefd[1]);
		execl(volatile_bin, volatile_bin, "run", "--", exe, a, b, c, d, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	n = pid < 0 ? -1 : read(pipefd[0], buf, size - 1);
	close(pipefd[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0 || n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* the child's four figures, from `volatile run -- bench --supervised` */
static int run_supervised(const char *volatile_bin, double *ns)
{
	char buf[256];

	if (run_bench_under(volatile_bin, buf, sizeof(buf), "--supervised", NULL, NULL, NULL) != 0)
		return -1;
	return sscanf(buf, "%lf %lf %lf %lf", &ns[SV_PAIR], &ns[SHIM_PAIR], &ns[REJECTED],
		      &ns[GETPPID]) == 4
		       ? 0
		       : -1;
}

/*
 * ns per served call with `threads` calling threads, `at_once` at a time,
 * CROWD_PAIRS pairs in all: 0, or -1
 */
#define CROWD_PAIRS 32768
static int run_crowd(const char *volatile_bin, int threads, int at_once, double *ns)
{
	char buf[64], n[16], pairs[16], turns[16];

	snprintf(n, sizeof(n), "%d", threads);
	snprintf(pairs, sizeof(pairs), "%d", CROWD_PAIRS);
	snprintf(turns, sizeof(turns), "%d", at_once);
	if (run_bench_under(volatile_bin, buf, sizeof(buf), "--threads", n, pairs, turns) != 0)
		return -1;
	return sscanf(buf, "%lf", ns) == 1 ? 0 : -1;
}

/*
 * The cost of a served call as the callers' threads grow, against 32 of
 * them: a thread seen before is served from what was kept for it, however
 * many there are. Fewer threads than asked when the machine allows fewer
 * (threads-max, RLIMIT_NPROC): the largest count that ran, said in the note.
 * What more threads cost any server, beside it: the same crowd making
 * round trips to a server thread of its own through a pipe and eventfds
 * (no filter, no run); and the served crowd taking turns 32 at a time, as
 * many threads seen before with no more calls waiting at once than 32
 * make: what is left of the difference is the table's.
 */
static void crowd_figure(const char *key, const char *label, double ns, double base,
			 const char *target, int ok, const char *note)
{
	struct figure *f = add_figure(key, label);

	f->unit = "ns";
	f->value = ns;
	if (ns <= 0) {
		f->status = SKIPPED;
		snprintf(f->note, sizeof(f->note), "skipped: %s", note);
		return;
	}
	snprintf(f->note, sizeof(f->note), "%s", note);
	f->status = NA;
	if (base <= 0)
		return;
	f->base = base;
	f->ratio = ns / base;
	f->ratio_of = "the same at 32 threads";
	f->target = target;
	f->status = target ? met_if(ok) : NA;
}

static void bench_crowds(const char *volatile_bin)
{
	static const int counts[] = { 32, 512, 4096 };
	static const char *const keys[] = { "supervised_threads_32", "supervised_threads_512",
					    "supervised_threads_4096" };
	double ns[3] = { 0, 0, 0 }, turns = -1, trips32, trips, trips_turns;
	char label[64], note[160];
	int n = counts[0];

	for (int i = 0; i < 3; i++) {
		n = counts[i];
		while (run_crowd(volatile_bin, n, n, &ns[i]) != 0 && n > counts[0] * 2)
			n /= 2; /* the machine's limits */
		if (ns[i] <= 0)
			ns[i] = -1;
		snprintf(label, sizeof(label), "served call, %d calling threads", n);
		snprintf(note, sizeof(note), "%s; %d pairs in all, %d a thread, each thread's first "
			 "untimed", ns[i] > 0 && n < counts[i] ? "the most threads the machine allowed"
				    : ns[i] > 0 ? "all calling at once" : "threads under run failed",
			 CROWD_PAIRS, CROWD_PAIRS / n);
		crowd_figure(keys[i], label, ns[i], i > 0 ? ns[0] : 0, i == 2 ? "<= 1.3x" : NULL,
			     i == 2 && ns[i] <= 1.3 * ns[0], note);
	}
	if (ns[2] > 0 && run_crowd(volatile_bin, n, 32, &turns) != 0)
		turns = -1;
	snprintf(label, sizeof(label), "served call, %d threads, 32 at a time", n);
	crowd_figure("supervised_threads_turns", label, turns, ns[0], NULL, 0,
		     "as many callers seen before, as few calls waiting as 32 threads make");
	trips32 = crowd_ns(32, CROWD_PAIRS, 32, 1);
	trips = crowd_ns(n, CROWD_PAIRS, n, 1);
	crowd_figure("crowd_trip_32", "server round trip, 32 threads", trips32, 0, NULL,
		     0, "a pipe to the server, an eventfd back: the floor of a served call");
	snprintf(label, sizeof(label), "server round trip, %d threads", n);
	snprintf(note, sizeof(note), "what %d threads at once cost any server: the served "
		 "call's growth against this one's: %.2fx", n,
		 trips > 0 && trips32 > 0 && ns[2] > 0 && ns[0] > 0
			 ? (ns[2] / ns[0]) / (trips / trips32) : 0);
	crowd_figure("crowd_trip_many", label, trips, trips32, NULL, 0, note);
	trips_turns = crowd_ns(n, CROWD_PAIRS, 32, 1);
	snprintf(label, sizeof(label), "server round trip, %d threads, 32 at a time", n);
	snprintf(note, sizeof(note), "the served call in turns against this one: %.2fx",
		 trips_turns > 0 && trips32 > 0 && turns > 0 && ns[0] > 0
			 ? (turns / ns[0]) / (trips_turns / trips32) : 0);
	crowd_figure("crowd_trip_turns", label, trips_turns, trips32, NULL, 0, note);
}

/*
 * A served pair is at least two round trips between the caller's thread
 * and the supervisor's: the floor is a pipe round trip between two threads
 * of one process, pinned on one CPU and on two, measured here; the pair
 * against twice the cheaper.
 */
static void bench_floor(double pair_ns)
{
	double one = round_trip_ns(0, -1), two = -1, best;
	struct figure *f;

	if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
		two = round_trip_ns(0, 1);
	f = add_figure("round_trip_one_cpu", "pipe round trip, two threads, one CPU");
	f->unit = "ns";
	f->value = one;
	f->status = NA;
	f = add_figure("round_trip_two_cpus", "pipe round trip, two threads, two CPUs");
	f->unit = "ns";
	f->value = two;
	f->status = two > 0 ? NA : SKIPPED;
	if (two <= 0)
		snprintf(f->note, sizeof(f->note), "skipped: one CPU");
	best = two > 0 && two < one ? two : one;
	f = add_figure("supervised_pair_floor", "pair through run, over two round trips");
	f->unit = "ns";
	f->value = pair_ns;
	f->base = 2 * best;
	f->ratio = pair_ns / (2 * best);
	f->ratio_of = "two pipe round trips between threads, the cheaper placement";
	f->target = "<= 1.3x";
	f->status = met_if(f->ratio <= 1.3);
	snprintf(f->note, sizeof(f->note), "%.2fx two round trips on one CPU, %.2fx on two",
		 pair_ns / (2 * one), two > 0 ? pair_ns / (2 * two) : 0);
}

/*
 * A raw call under run's filter: against the same call under a filter that
 * allows everything (the target: the filter's own cost), noting the cost
 * with no filter at all.
 */
static void filtered(const char *key, const char *label, double in, double out, double any,
		     int targeted, const char *what)
{
	struct figure *f = add_figure(key, label);

	f->value = in;
	f->unit = "ns";
	if (any > 0) {
		f->base = any;
		f->ratio = in / any;
		f->ratio_of = "the same raw call under a filter that allows everything";
		f->target = targeted ? "<= 1.05x" : NULL;
		f->status = targeted ? met_if(f->ratio <= 1.05) : NA;
		snprintf(f->note, sizeof(f->note), "%s; %.0f ns with no filter (%.2fx)", what, out,
			 in / out);
	} else {
		f->base = out;
		f->ratio = in / out;
		f->ratio_of = "the same raw call with no filter";
		f->status = NA;
		snprintf(f->note, sizeof(f->note), "%s", what);
	}
}

void bench_seccomp(const char *volatile_bin)
{
	static const int outside[] = { REJECTED, GETPPID };
	double in[NKINDS], out[NKINDS], before[NKINDS], any[NKINDS];
	struct figure *f;
	int fd = memfd();

	if (fd < 0)
		return;
	/* the raw calls without the filter, before and after the child: their mean */
	measure(outside, 2, fd, before);
	f = add_figure("supervised_pair", "pair through run's supervisor");
	if (volatile_bin == NULL || run_supervised(volatile_bin, in) != 0) {
		f->status = SKIPPED;
		snprintf(f->note, sizeof(f->note), "skipped: %s",
			 volatile_bin == NULL ? "no --volatile PATH"
					      : "volatile run -- bench --supervised failed "
						"(no supervisor here?)");
		close(fd);
		return;
	}
	measure(outside, 2, fd, out);
	close(fd);
	out[REJECTED] = (out[REJECTED] + before[REJECTED]) / 2;
	out[GETPPID] = (out[GETPPID] + before[GETPPID]) / 2;
	f->value = in[SV_PAIR];
	f->unit = "ns";
	f->base = in[SHIM_PAIR];
	f->ratio = in[SV_PAIR] / in[SHIM_PAIR];
	f->ratio_of = "the same pair through the preload, same process";
	f->status = NA;
	snprintf(f->note, sizeof(f->note), "%.0fx a rejected raw fallocate beside it (%.0f ns)",
		 in[SV_PAIR] / in[REJECTED], in[REJECTED]);
	bench_floor(in[SV_PAIR]);
	bench_crowds(volatile_bin);

	if (under_allow_all(any) != 0)
		any[REJECTED] = any[GETPPID] = 0;
	filtered("filtered_fallocate", "fallocate the filter lets by", in[REJECTED], out[REJECTED],
		 any[REJECTED], 0, "a mode without a volatile bit: the filter's test of it runs");
	filtered("filtered_other", "getppid under the filter", in[GETPPID], out[GETPPID],
		 any[GETPPID], 1, "a call the filter never runs for (the kernel's always-allowed cache)");
}
