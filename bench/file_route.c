/* SPDX-License-Identifier: MIT */
/*
 * file_route.c - a MARK whose budget purge must reach a file that only a forked
 * child holds, with many fds open on the machine (DESIGN
 * 13: a purge inside a MARK takes cheap routes only). A look at every
 * process's fds took 520-570 ms with 200 processes holding 1,000 fds each.
 *
 * Helpers: up to HELPERS processes holding up to HELPER_FDS fds each on
 * /dev/null (fewer where RLIMIT_NOFILE or fork says so: the label says how
 * many fds were open). The marker: this program again (bench --marker),
 * with the shim, a private region and VOLATILE_BUDGET=RANGE. Each round it
 * marks RANGE freshly written bytes of a memfd A (within the budget), forks
 * a child that keeps A's fd and marks nothing, closes its own fd on A, and
 * marks RANGE bytes of another memfd B: over the budget, that MARK purges A,
 * the oldest, which only the child holds now. Beside it, in the same round:
 * the same MARK of B when it purges nothing, and a raw PUNCH_HOLE of RANGE
 * written bytes of a memfd. What the purging MARK takes beyond those two is
 * what reaching A and punching a file it does not hold cost it (the figure
 * and its target). The note also gives the same MARK purging a file the
 * marker still holds at its recorded fd (the cheapest route, and the same
 * punch): the difference is the reach alone.
 *
 * Times are wall-clock: a stall is what the program waits, and the punch
 * of a file the process does not hold runs in a thread of the library's.
 */
#include "bench.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <volatile.h>

#define HELPERS 200
#define HELPER_FDS 1000
#define RANGE 65536
#define ROUNDS 9

/* ---- the marker (bench --marker, with the shim and VOLATILE_BUDGET=RANGE) ---------- */

static int refill(int fd)
{
	static char buf[RANGE];

	memset(buf, 0x5a, sizeof(buf));
	return pwrite(fd, buf, RANGE, 0) == RANGE ? 0 : -1;
}

/* A memfd of RANGE written bytes; -1 on error. */
static int filled_memfd(const char *name)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd >= 0 && refill(fd) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

typedef int (*stats_fn)(struct volatile_stats *, size_t);

/*
 * MARK RANGE bytes of b, over the budget: its purge must take exactly RANGE
 * bytes of another file (the oldest), not b's. Its time in *ns; NULL, or
 * what went wrong.
 */
static const char *budget_mark(int b, stats_fn stats, uint64_t *ns)
{
	struct volatile_stats s0, s1;
	uint64_t t0;
	int rc;

	if (refill(b) != 0 || stats(&s0, sizeof(s0)) != 0)
		return "setup";
	t0 = now_ns();
	rc = fallocate(b, FALLOC_FL_MARK_VOLATILE, 0, RANGE);
	*ns = now_ns() - t0;
	if (rc != 0)
		return "MARK of B";
	if (stats(&s1, sizeof(s1)) != 0)
		return "volatile_stats";
	rc = fallocate(b, FALLOC_FL_UNMARK_VOLATILE, 0, RANGE);
	if (rc != 0 || s1.purged_total - s0.purged_total != RANGE)
		return "the budget purge did not take the other file (it took B, or nothing)";
	return NULL;
}

/* A memfd of RANGE written bytes, marked; -1 on error. */
static int marked_memfd(const char *name)
{
	int fd = filled_memfd(name);

	if (fd >= 0 && fallocate(fd, FALLOC_FL_MARK_VOLATILE, 0, RANGE) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* One round: "CHILD_NS HELD_NS PLAIN_NS PUNCH_NS" on stdout, or "error WHAT". */
static int marker_round(int b, stats_fn stats)
{
	uint64_t t0, t_child = 0, t_held = 0, t_plain = 0, t_punch = 0;
	const char *what = NULL;
	int a, scratch, go[2];
	pid_t child;
	char c;

	if (pipe2(go, O_CLOEXEC) != 0 || (a = marked_memfd("child-held")) < 0) {
		printf("error setup: %s\n", strerror(errno));
		return -1;
	}
	child = fork();
	if (child < 0) {
		printf("error fork: %s\n", strerror(errno));
		return -1;
	}
	if (child == 0) {
		/* keeps A's fd (at the number the marker had it) until told */
		close(go[1]);
		_exit(read(go[0], &c, 1) < 0);
	}
	close(go[0]);
	close(a); /* only the child holds A now; its recorded holder does not */
	what = budget_mark(b, stats, &t_child);

	/* the same, the file reached through its recorded holder: this process */
	a = what ? -1 : marked_memfd("held");
	if (what == NULL && a < 0)
		what = "setup";
	if (what == NULL)
		what = budget_mark(b, stats, &t_held);
	if (a >= 0)
		close(a);

	/* the same MARK, within the budget: nothing to purge */
	t0 = now_ns();
	if (what == NULL && fallocate(b, FALLOC_FL_MARK_VOLATILE, 0, RANGE) != 0)
		what = "plain MARK of B";
	t_plain = now_ns() - t0;
	if (what == NULL && fallocate(b, FALLOC_FL_UNMARK_VOLATILE, 0, RANGE) != 0)
		what = "UNMARK of B";

	/* a raw punch of as many written bytes */
	scratch = filled_memfd("punch");
	t0 = now_ns();
	if (what == NULL && (scratch < 0 || syscall(SYS_fallocate, scratch,
						     FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
						     (off_t)0, (off_t)RANGE) != 0))
		what = "raw punch";
	t_punch = now_ns() - t0;
	if (scratch >= 0)
		close(scratch);

	close(go[1]); /* the child reads EOF and exits */
	waitpid(child, NULL, 0);
	if (what) {
		printf("error %s\n", what);
		return -1;
	}
	printf("%llu %llu %llu %llu\n", (unsigned long long)t_child, (unsigned long long)t_held,
	       (unsigned long long)t_plain, (unsigned long long)t_punch);
	return 0;
}

int marker_main(int argc, char **argv)
{
	stats_fn stats = (stats_fn)dlsym(RTLD_DEFAULT, "volatile_stats");
	int rounds = argc > 1 ? atoi(argv[1]) : ROUNDS, b, rc = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (stats == NULL) {
		printf("error the shim is not loaded\n");
		return 1;
	}
	b = filled_memfd("marker");
	if (b < 0) {
		printf("error memfd: %s\n", strerror(errno));
		return 1;
	}
	for (int k = 0; k < rounds && rc == 0; k++)
		rc = marker_round(b, stats);
	return rc ? 1 : 0;
}

/* ---- the helpers: fds open on the machine ------------------------------------------ */

struct helpers {
	pid_t pid[HELPERS];
	int n;     /* processes */
	long fds;  /* fds they hold, all told */
	int per;   /* fds each meant to hold */
	int go;    /* closing it tells them to exit */
};

/* A helper: only its two pipe ends kept, `per` fds opened, their count said, then it waits. */
static void helper(int go, int ready, int per)
{
	int n = 0;
	char c;

	if (dup2(go, 0) < 0 || dup2(ready, 1) < 0)
		_exit(1);
	syscall(SYS_close_range, 2u, ~0u, 0u);
	while (n < per && open("/dev/null", O_RDONLY) >= 0)
		n++;
	if (write(1, &n, sizeof(n)) != (ssize_t)sizeof(n))
		_exit(1);
	close(1);
	_exit(read(0, &c, 1) < 0);
}

static int start_helpers(struct helpers *h)
{
	struct rlimit rl;
	int go[2], ready[2];

	memset(h, 0, sizeof(*h));
	h->per = HELPER_FDS;
	/* main() raised the soft limit to the hard one where it could */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)HELPER_FDS + 16)
		h->per = rl.rlim_cur > 32 ? (int)rl.rlim_cur - 16 : 16;
	if (pipe2(go, O_CLOEXEC) != 0 || pipe2(ready, O_CLOEXEC) != 0)
		return -1;
	for (; h->n < HELPERS; h->n++) {
		pid_t pid = fork();

		if (pid < 0)
			break;
		if (pid == 0) {
			close(go[1]);
			close(ready[0]);
			helper(go[0], ready[1], h->per);
		}
		h->pid[h->n] = pid;
	}
	close(go[0]);
	close(ready[1]);
	h->go = go[1];
	for (int i = 0; i < h->n; i++) {
		int got;

		if (read(ready[0], &got, sizeof(got)) != (ssize_t)sizeof(got))
			break;
		h->fds += got;
	}
	close(ready[0]);
	return 0;
}

static void stop_helpers(struct helpers *h)
{
	if (h->go >= 0)
		close(h->go);
	for (int i = 0; i < h->n; i++)
		waitpid(h->pid[i], NULL, 0);
}

/* ---- the figure ------------------------------------------------------------------ */

static void skipped(struct figure *f, const char *why)
{
	f->status = SKIPPED;
	snprintf(f->note, sizeof(f->note), "skipped: %.140s", why);
}

/* One round's times, in ns. */
struct times {
	double child, held, plain, punch;
};

/* The marker's lines: the rounds it ran, or -1 (its error in err). */
static int run_marker(const char *self, const char *region, struct times *t, char *err,
		      size_t errsize)
{
	char line[256], arg[16];
	int out[2], n = 0;
	pid_t pid;
	FILE *f;

	if (pipe2(out, O_CLOEXEC) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(out[1], 1);
		setenv("VOLATILE_REGION", region, 1);
		setenv("VOLATILE_BUDGET", "65536", 1); /* RANGE */
		/* only the budget purges */
		setenv("VOLATILE_MIN_AVAILABLE", "0", 1);
		setenv("VOLATILE_TMPFS_MIN_FREE", "0", 1);
		unsetenv("VOLATILE_DEBUG");
		snprintf(arg, sizeof(arg), "%d", ROUNDS);
		execl(self, "bench", "--marker", arg, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	if (pid < 0) {
		close(out[0]);
		return -1;
	}
	f = fdopen(out[0], "r");
	snprintf(err, errsize, "the marker said nothing");
	while (f && fgets(line, sizeof(line), f) != NULL) {
		unsigned long long a, b, c, d;

		if (strncmp(line, "error ", 6) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(err, errsize, "%.150s", line + 6);
			n = -1;
			break;
		}
		if (n >= 0 && n < ROUNDS && sscanf(line, "%llu %llu %llu %llu", &a, &b, &c, &d) == 4) {
			t[n].child = (double)a;
			t[n].held = (double)b;
			t[n].plain = (double)c;
			t[n].punch = (double)d;
			n++;
		}
	}
	if (f)
		fclose(f);
	else
		close(out[0]);
	waitpid(pid, NULL, 0);
	return n;
}

void bench_mark_reach(void)
{
	double child[ROUNDS], held[ROUNDS], base[ROUNDS], beyond[ROUNDS], reach[ROUNDS];
	struct figure *f = add_figure("mark_child_held", "MARK purging a file only a child holds");
	char self[1024], region[128], err[200];
	struct helpers h = { .go = -1 };
	struct times t[ROUNDS];
	ssize_t n;
	int rounds;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		skipped(f, "/proc/self/exe unreadable");
		return;
	}
	self[n] = '\0';
	if (start_helpers(&h) != 0) {
		skipped(f, "no pipe for the helpers");
		return;
	}
	snprintf(region, sizeof(region), "/dev/shm/libvolatile-bench-reach.%d", (int)getpid());
	rounds = run_marker(self, region, t, err, sizeof(err));
	stop_helpers(&h);
	unlink(region);
	if (rounds < 1) {
		skipped(f, rounds < 0 ? err : "the marker ran no round");
		return;
	}
	for (int k = 0; k < rounds; k++) {
		child[k] = t[k].child;
		held[k] = t[k].held;
		base[k] = t[k].plain + t[k].punch;
		beyond[k] = t[k].child - base[k];
		reach[k] = t[k].child - t[k].held;
	}
	/* median() sorts: the per-round differences are taken first */
	snprintf(f->label, sizeof(f->label), "MARK purging a child's file, %ld fds open", h.fds);
	f->unit = "us";
	f->value = median(child, rounds) / 1e3;
	f->base = median(base, rounds) / 1e3;
	f->ratio_of = "the same MARK purging nothing, plus a raw punch of the range";
	f->target = "<= +1 ms";
	f->status = met_if(median(beyond, rounds) <= 1e6);
	snprintf(f->note, sizeof(f->note),
		 "+%.1f us beyond its punch; +%.1f us over the same purge of a file it holds "
		 "(%.1f us); %d processes x %d fds; median of %d rounds",
		 median(beyond, rounds) / 1e3, median(reach, rounds) / 1e3,
		 median(held, rounds) / 1e3, h.n, h.per, rounds);
	fprintf(stderr, "bench: %s\n", f->note); /* the table shows no notes */
}
