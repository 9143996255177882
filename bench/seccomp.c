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
#include <linux/falloc.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <string.h>
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

/* the child's four figures, from `volatile run -- bench --supervised` */
static int run_supervised(const char *volatile_bin, double *ns)
{
	int pipefd[2], status;
	char buf[256], exe[4096];
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
		execl(volatile_bin, volatile_bin, "run", "--", exe, "--supervised", (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	n = pid < 0 ? -1 : read(pipefd[0], buf, sizeof(buf) - 1);
	close(pipefd[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0 || n <= 0)
		return -1;
	buf[n] = '\0';
	return sscanf(buf, "%lf %lf %lf %lf", &ns[SV_PAIR], &ns[SHIM_PAIR], &ns[REJECTED],
		      &ns[GETPPID]) == 4
		       ? 0
		       : -1;
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

	if (under_allow_all(any) != 0)
		any[REJECTED] = any[GETPPID] = 0;
	filtered("filtered_fallocate", "fallocate the filter lets by", in[REJECTED], out[REJECTED],
		 any[REJECTED], 0, "a mode without a volatile bit: the filter's test of it runs");
	filtered("filtered_other", "getppid under the filter", in[GETPPID], out[GETPPID],
		 any[GETPPID], 1, "a call the filter never runs for (the kernel's always-allowed cache)");
}
