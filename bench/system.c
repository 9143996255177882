/* SPDX-License-Identifier: MIT */
/*
 * system.c - the machine's daemon (DESIGN 22) among 100 users' regions.
 *
 * Root only: 100 uids without a passwd entry (SYS_UID0 on) each run a
 * holder (this program again, `bench --sys-holder`, exec'd as that uid
 * with the shim and its DEFAULT region, /dev/shm/libvolatile.UID) that
 * marks ranges of a memfd volatile. Every region of those uids is removed
 * at the end, and at the start (a run killed before its end).
 *
 *   reaction   `volatile daemon --system --foreground --uid ...` (each of
 *              the 100) with VOLATILE_MIN_AVAILABLE 64 MiB below what is
 *              available; the parent allocates until MemAvailable falls
 *              under it (t0, as reaction.c's trial) and watches the
 *              holders' memfds (their allocated blocks, fstat through
 *              /proc/PID/fd) until one has given back a range: the first
 *              range purged, whoever's. Confirmed by UNMARK's 1s after.
 *   wake-ups   the same daemon with the default threshold (10%), memory
 *              plenty: its voluntary context switches in 10 s, and its
 *              100 workers' (reaction.c's way of counting).
 *   global     10,000 ranges a region (1,000,000 in all): `volatile purge
 *              --system --bytes 409600` where each region's oldest range
 *              is older than every region's second (the head layers,
 *              marked in turn by every holder a tick apart), so the pass
 *              purges one range in each of the 100 regions, oldest first;
 *              against the same purge by each user, `volatile purge
 *              --bytes 4096` as each of the 100 in turn. And one range:
 *              `purge --system --bytes 4096` against one user's purge.
 *              The workers' start is timed alone: 100 workers spawned as
 *              root spawns them and each asked one REPORT (each opens its
 *              region): the rest of purge --system is the pass.
 */
#include "bench.h"
#include "../src/core/sysorder.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <volatile.h>

#define MiB (1ull << 20)
#define SYS_USERS 100
#define SYS_UID0 63000u
/* the reaction: 4 ranges of 256 KiB a user (100 MiB in all), 64 MiB below what is available */
#define R_RANGES 4
#define R_RANGE (256 * 1024ull)
#define R_MARGIN (64 * MiB)
#define R_STEP (2 * MiB)
/* the global pass: 10,000 ranges of 4 KiB a user, a page apart (not merged), not filled */
#define G_RANGES 10000
#define G_RANGE 4096ull
#define G_ROUNDS 5
#define IDLE_S 10

struct holder {
	pid_t pid;
	int to, from;  /* its stdin and stdout */
	int cache;     /* root's own open of its memfd (/proc/PID/fd/N) */
	uint64_t full; /* allocated bytes of the memfd, all ranges filled */
};

static struct holder holders[SYS_USERS];
static pid_t running_daemon; /* the daemon --system started, until stopped */
static const char *vbin;
static char self[1024];

/* ---- the holder: exec'd as its uid ------------------------------------------------ */

static void say(const char *fmt, unsigned long long v)
{
	printf(fmt, v);
	fflush(stdout);
}

static int mark_range(int fd, uint64_t i, uint64_t range)
{
	return fallocate(fd, FALLOC_FL_MARK_VOLATILE, (off_t)(i * 2 * range), (off_t)range);
}

/*
 * argv: --sys-holder RANGES RANGE FILL. Says "ready FD"; then, each line
 * read: "mark I" marks range I ("ok"), "bulk I" marks ranges I.. to the
 * end ("ok"), "renew" unmarks every range, fills those purged again and
 * marks them all ("ok PURGED_RANGES"), "quit" (or EOF) exits.
 */
int sys_holder_main(int argc, char **argv)
{
	uint64_t nr, range, n;
	char line[64], *buf;
	int fd, fill;

	if (argc != 4)
		return 2;
	nr = strtoull(argv[1], NULL, 10);
	range = strtoull(argv[2], NULL, 10);
	fill = atoi(argv[3]);
	fd = memfd_create("sys-cache", MFD_CLOEXEC);
	if (nr == 0 || range == 0 || fd < 0 || ftruncate(fd, (off_t)(nr * 2 * range)) != 0)
		return 3;
	buf = malloc(range);
	if (buf == NULL)
		return 3;
	memset(buf, 0x5a, range);
	for (uint64_t i = 0; fill && i < nr; i++)
		if (pwrite(fd, buf, range, (off_t)(i * 2 * range)) != (ssize_t)range)
			return 3;
	say("ready %llu\n", (unsigned long long)fd);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (sscanf(line, "mark %llu", (unsigned long long *)&n) == 1) {
			if (n >= nr || mark_range(fd, n, range) != 0)
				return 4;
		} else if (sscanf(line, "bulk %llu", (unsigned long long *)&n) == 1) {
			for (uint64_t i = n; i < nr; i++)
				if (mark_range(fd, i, range) != 0)
					return 4;
		} else if (strcmp(line, "renew\n") == 0) {
			uint64_t purged = 0;

			for (uint64_t i = 0; i < nr; i++) {
				int r = fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, (off_t)(i * 2 * range),
						  (off_t)range);

				if (r < 0)
					return 4;
				purged += r == 1;
				if (r == 1 && fill &&
				    pwrite(fd, buf, range, (off_t)(i * 2 * range)) != (ssize_t)range)
					return 3;
				if (mark_range(fd, i, range) != 0)
					return 4;
			}
			say("ok %llu\n", (unsigned long long)purged);
			continue;
		} else {
			break;
		}
		puts("ok");
		fflush(stdout);
	}
	return 0;
}

/* ---- root's side: users, regions, holders --------------------------------------------- */

static void remove_regions(void)
{
	static const char *const tails[] = { "", ".daemon", ".lock" };
	char path[128];

	for (unsigned u = 0; u < SYS_USERS; u++)
		for (size_t t = 0; t < sizeof(tails) / sizeof(tails[0]); t++) {
			snprintf(path, sizeof(path), "/dev/shm/libvolatile.%u%s", SYS_UID0 + u,
				 tails[t]);
			unlink(path);
		}
}

/* Exactly uid (gid the same number, no groups), as root's worker for a uid with no passwd entry */
static int become(uid_t uid)
{
	return setgroups(0, NULL) == 0 && setresgid(uid, uid, uid) == 0 &&
			       setresuid(uid, uid, uid) == 0 ?
		       0 :
		       -1;
}

static void stop_holders(void)
{
	for (int u = 0; u < SYS_USERS; u++) {
		struct holder *h = &holders[u];

		if (h->pid <= 0)
			continue;
		close(h->to);
		close(h->from);
		if (h->cache >= 0)
			close(h->cache);
		kill(h->pid, SIGKILL);
		waitpid(h->pid, NULL, 0);
		h->pid = 0;
	}
}

static void cleanup(void)
{
	/* its workers die with it (PR_SET_PDEATHSIG) */
	if (running_daemon > 0) {
		kill(running_daemon, SIGKILL);
		waitpid(running_daemon, NULL, 0);
		running_daemon = 0;
	}
	stop_holders();
	remove_regions();
}

static void on_signal(int sig)
{
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int start_holder(struct holder *h, uid_t uid, uint64_t nr, uint64_t range, int fill)
{
	int in[2], out[2];
	char line[64], path[64];
	unsigned fd;

	h->cache = -1;
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		return -1;
	h->pid = fork();
	if (h->pid == 0) {
		char a[3][24];

		dup2(in[0], 0);
		dup2(out[1], 1);
		/* its user's default place; only the daemon purges */
		unsetenv("VOLATILE_REGION");
		setenv("VOLATILE_MIN_AVAILABLE", "0", 1);
		setenv("VOLATILE_TMPFS_MIN_FREE", "0", 1);
		snprintf(a[0], sizeof(a[0]), "%llu", (unsigned long long)nr);
		snprintf(a[1], sizeof(a[1]), "%llu", (unsigned long long)range);
		snprintf(a[2], sizeof(a[2]), "%d", fill);
		if (become(uid) == 0)
			execl(self, "bench", "--sys-holder", a[0], a[1], a[2], (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	h->to = in[1];
	h->from = out[0];
	if (h->pid < 0 || read_line(h->from, line, sizeof(line), 60000) != 0 ||
	    sscanf(line, "ready %u", &fd) != 1)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/fd/%u", (int)h->pid, fd);
	h->cache = open(path, O_RDONLY | O_CLOEXEC);
	return h->cache >= 0 ? 0 : -1;
}

/* Send a command to holder h and read its answer "ok[ N]"; N, or -1 */
static long long tell(struct holder *h, const char *cmd, int ms)
{
	char line[64];
	long long n = 0;

	if (dprintf(h->to, "%s\n", cmd) < 0 || read_line(h->from, line, sizeof(line), ms) != 0 ||
	    strncmp(line, "ok", 2) != 0)
		return -1;
	if (line[2] == ' ')
		n = atoll(line + 3);
	return n;
}

static int start_holders(uint64_t nr, uint64_t range, int fill)
{
	for (int u = 0; u < SYS_USERS; u++)
		if (start_holder(&holders[u], SYS_UID0 + (uid_t)u, nr, range, fill) != 0)
			return -1;
	return 0;
}

static uint64_t blocks_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? (uint64_t)st.st_blocks * 512 : 0;
}

static void snooze_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* ---- the daemon ------------------------------------------------------------------------- */

/* The uid options, "--uid" "63000" ... for all 100 */
static char uid_text[SYS_USERS][12];

static void add_uids(char **argv, int *n)
{
	for (int u = 0; u < SYS_USERS; u++) {
		snprintf(uid_text[u], sizeof(uid_text[u]), "%u", SYS_UID0 + (unsigned)u);
		argv[(*n)++] = (char *)"--uid";
		argv[(*n)++] = uid_text[u];
	}
}

/* A pid's children whose command is `volatile system-worker`: their pids in w, how many */
static int workers_of(pid_t daemon, pid_t *w, int max)
{
	char path[64], buf[256];
	struct dirent *e;
	DIR *d = opendir("/proc");
	int n = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL && n < max) {
		pid_t pid = (pid_t)atoi(e->d_name);
		ssize_t len;
		int fd, ppid = 0;
		char *p;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		len = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		p = strrchr(buf, ')');
		if (p == NULL || sscanf(p + 2, "%*c %d", &ppid) != 1 || ppid != daemon)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		len = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		/* exec'd: the worker's own command line, not the daemon's */
		if (len > 0 && memcmp(buf, "volatile\0system-worker", 23) == 0)
			w[n++] = pid;
	}
	closedir(d);
	return n;
}

/*
 * Start `volatile daemon --system --foreground` for the 100 uids with
 * VOLATILE_MIN_AVAILABLE threshold (0: its default), and wait until it
 * watches and its 100 workers have exec'd. Its pid, or -1 (why in why).
 */
static pid_t start_sys_daemon_once(uint64_t threshold, int *err_fd, char *why, size_t size,
				   int *busy)
{
	char *argv[8 + 2 * SYS_USERS], line[512], t[24];
	pid_t pid, w[SYS_USERS];
	int n = 0, e[2];

	argv[n++] = (char *)"volatile";
	argv[n++] = (char *)"daemon";
	argv[n++] = (char *)"--system";
	argv[n++] = (char *)"--foreground";
	add_uids(argv, &n);
	argv[n] = NULL;
	if (pipe2(e, O_CLOEXEC) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		dup2(e[1], 2);
		unsetenv("LD_PRELOAD");
		unsetenv("VOLATILE_REGION");
		snprintf(t, sizeof(t), "%llu", (unsigned long long)threshold);
		if (threshold)
			setenv("VOLATILE_MIN_AVAILABLE", t, 1);
		else
			unsetenv("VOLATILE_MIN_AVAILABLE");
		execv(vbin, argv);
		_exit(127);
	}
	close(e[1]);
	running_daemon = pid;
	snprintf(why, size, "the daemon did not start");
	while (read_line(e[0], line, sizeof(line), 5000) == 0) {
		if (strstr(line, "already running")) {
			/* the machine's own daemon: one a machine */
			snprintf(why, size, "a machine's daemon already runs here");
			*busy = 1;
			break;
		}
		if (strstr(line, "watching the machine's memory") == NULL)
			continue;
		for (int i = 0; i < 1000; i++) {
			if (workers_of(pid, w, SYS_USERS) == SYS_USERS) {
				*err_fd = e[0];
				return pid;
			}
			snooze_ms(10);
		}
		snprintf(why, size, "its 100 workers did not all start in 10 s");
		break;
	}
	close(e[0]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	running_daemon = 0;
	return -1;
}

/* One a machine: a test's daemon may hold the lock for a while; waited for, 60 s at most. */
static pid_t start_sys_daemon(uint64_t threshold, int *err_fd, char *why, size_t size)
{
	for (int i = 0; i < 30; i++) {
		int busy = 0;
		pid_t pid = start_sys_daemon_once(threshold, err_fd, why, size, &busy);

		if (pid > 0 || !busy)
			return pid;
		snooze_ms(2000);
	}
	return -1;
}

static void stop_sys_daemon(pid_t pid, int err_fd)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	running_daemon = 0;
	close(err_fd);
}

static uint64_t mem_available(uint64_t *total)
{
	char buf[4096], *p;
	int fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (total && (p = strstr(buf, "MemTotal:")) != NULL)
		*total = strtoull(p + 9, NULL, 10) * 1024;
	p = strstr(buf, "MemAvailable:");
	return p ? strtoull(p + 13, NULL, 10) * 1024 : 0;
}

/* ---- 1: the reaction ------------------------------------------------------------------ */

/*
 * One trial: ms from the crossing to the first range purged; -1 not seen
 * in 3 s, -2 spoiled, -3 a holder failed. The daemon is stopped in it.
 */
static double one_reaction(uint64_t threshold, long long *purged, pid_t daemon, int err_fd)
{
	static void *pieces[2048];
	uint64_t t0 = 0, t1 = 0;
	int np = 0;

	*purged = 0;
	int spoiled = 0;

	/* purged before the trial began (the machine's other work): put back, not a trial */
	for (int u = 0; u < SYS_USERS; u++)
		if (blocks_of(holders[u].cache) < holders[u].full)
			spoiled = 1;
	while (!spoiled && np < 2048) {
		void *p = mmap(NULL, R_STEP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		if (p == MAP_FAILED)
			break;
		memset(p, 1, R_STEP);
		pieces[np++] = p;
		if (mem_available(NULL) < threshold) {
			t0 = now_ns();
			break;
		}
	}
	while (t0 && now_ns() - t0 < 3000000000ull && !t1) {
		for (int u = 0; u < SYS_USERS && !t1; u++)
			if (blocks_of(holders[u].cache) < holders[u].full)
				t1 = now_ns();
		if (!t1) {
			struct timespec ts = { 0, 50000 };

			nanosleep(&ts, NULL);
		}
	}
	for (int i = 0; i < np; i++)
		munmap(pieces[i], R_STEP);
	/* before the ranges are put back: else it may purge them again, spoiling the next trial */
	stop_sys_daemon(daemon, err_fd);
	/* what UNMARK says: the ranges purged (put back, and marked again) */
	for (int u = 0; u < SYS_USERS; u++) {
		long long n = tell(&holders[u], "renew", 30000);

		if (n < 0)
			return -3;
		*purged += n;
	}
	if (spoiled)
		return -2;
	return t1 ? (double)(t1 - t0) / 1e6 : -1;
}

/*
 * A new daemon for each trial (as reaction.c's), with the threshold 64
 * MiB below what is available then: its workers have exec'd and wait,
 * their regions not open yet, so the first pass opens 100 regions (once
 * open, the workers' memory moves what is available by about as much as
 * the margin).
 */
static void reaction(struct figure *f, int trials)
{
	double ms[MAX_ROUNDS];
	int n = 0, spoiled = 0, lost = 0, efd = -1;
	long long purged, total = 0;
	char why[128] = "";

	f->unit = "ms";
	f->target = "<= 50 ms";
	for (int k = 0, tries = 0; k < trials && tries < 3 * trials; tries++) {
		uint64_t avail = mem_available(NULL), threshold;
		double r;
		pid_t d;

		threshold = avail > R_MARGIN ? avail - R_MARGIN : 0;
		d = start_sys_daemon(threshold, &efd, why, sizeof(why));
		if (d < 0)
			break;
		snooze_ms(200); /* past its first look */
		r = one_reaction(threshold, &purged, d, efd);
		if (r == -3)
			break;
		if (r == -2) {
			spoiled++;
			continue;
		}
		k++;
		total += purged;
		if (r < 0)
			lost++;
		else
			ms[n++] = r;
	}
	if (n == 0) {
		f->status = SKIPPED;
		snprintf(f->note, sizeof(f->note), "skipped: %s",
			 why[0] ? why : "no range purged within 3 s");
		return;
	}
	f->value = median(ms, n);
	f->status = met_if(f->value <= 50);
	snprintf(f->note, sizeof(f->note),
		 "median of %d trials (%d lost, %d spoiled), a new daemon each; UNMARK said 1 "
		 "for %d ranges in all",
		 n, lost, spoiled, (int)total);
}

/* ---- 2: wake-ups ----------------------------------------------------------------------- */

static void wakeups(struct figure *fd, struct figure *fw)
{
	pid_t d, w[SYS_USERS];
	long long d0, d1, w0 = 0, w1 = 0;
	uint64_t total = 0, avail = mem_available(&total);
	char why[128];
	int efd = -1, nw;

	fd->unit = fw->unit = "wake-ups";
	fd->target = fw->target = "<= 10";
	d = start_sys_daemon(0, &efd, why, sizeof(why));
	if (d < 0) {
		fd->status = fw->status = SKIPPED;
		snprintf(fd->note, sizeof(fd->note), "skipped: %s", why);
		snprintf(fw->note, sizeof(fw->note), "skipped: %s", why);
		return;
	}
	snooze_ms(200); /* past its first look */
	nw = workers_of(d, w, SYS_USERS);
	d0 = proc_wakeups(d);
	for (int i = 0; i < nw; i++)
		w0 += proc_wakeups(w[i]);
	snooze_ms(IDLE_S * 1000);
	d1 = proc_wakeups(d);
	for (int i = 0; i < nw; i++)
		w1 += proc_wakeups(w[i]);
	stop_sys_daemon(d, efd);
	fd->value = (double)(d1 - d0);
	fw->value = (double)(w1 - w0);
	if (avail > total / 10 + (4ull << 30)) {
		fd->status = met_if(fd->value <= 10);
		fw->status = met_if(fw->value <= 10);
		snprintf(fd->note, sizeof(fd->note),
			 "%.1f GiB available, threshold 10%% (%.1f GiB), 100 users' regions",
			 (double)avail / (1u << 30), (double)total / 10 / (1u << 30));
	} else {
		fd->status = fw->status = NA;
		snprintf(fd->note, sizeof(fd->note), "memory not plenty here: %.1f GiB available",
			 (double)avail / (1u << 30));
	}
	snprintf(fw->note, sizeof(fw->note), "all %d workers together, the same 10 s", nw);
}

/* ---- 3: the global pass among 1,000,000 ranges ----------------------------------------- */

/* How many lines of text begin with what */
static int lines_with(const char *text, const char *what)
{
	int n = 0;

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		n += strncmp(p, what, strlen(what)) == 0;
	return n;
}

/*
 * Run the volatile command (as uid, unless root's: uid 0) with args; its
 * wall time in ms, or -1 if it failed or its last line does not start
 * with expect, or fewer than `each` lines end with per_uid (purge
 * --system's line for each uid).
 */
static double run_cmd(uid_t uid, char **argv, const char *expect, const char *per_uid, int each)
{
	char out[16384], *last;
	size_t have = 0;
	uint64_t t0 = now_ns(), t1;
	int p[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		static char path_env[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
		char *envp[] = { path_env, NULL };
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(p[1], 1);
		dup2(null, 2);
		if (uid == 0 || become(uid) == 0)
			execve(vbin, argv, envp);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], out + have, sizeof(out) - 1 - have)) > 0)
		have += (size_t)n;
	close(p[0]);
	waitpid(pid, &status, 0);
	t1 = now_ns();
	out[have] = '\0';
	while (have && out[have - 1] == '\n')
		out[--have] = '\0';
	last = strrchr(out, '\n');
	last = last ? last + 1 : out;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || strncmp(last, expect, strlen(expect)))
		return -1;
	if (per_uid) {
		int found = 0;

		for (const char *at = strstr(out, per_uid); at; at = strstr(at + 1, per_uid))
			found++;
		if (found < each || lines_with(out, "uid ") != each)
			return -1;
	}
	return (double)(t1 - t0) / 1e6;
}

static double purge_system(const char *bytes)
{
	char *argv[8 + 2 * SYS_USERS];
	char expect[64];
	int n = 0;

	argv[n++] = (char *)"volatile";
	argv[n++] = (char *)"purge";
	argv[n++] = (char *)"--system";
	argv[n++] = (char *)"--bytes";
	argv[n++] = (char *)bytes;
	add_uids(argv, &n);
	argv[n] = NULL;
	snprintf(expect, sizeof(expect), "purged %llu range",
		 strtoull(bytes, NULL, 10) / G_RANGE);
	if (strcmp(bytes, "4096") == 0)
		return run_cmd(0, argv, expect, NULL, 0);
	/* one range in each region: each uid's line says so */
	return run_cmd(0, argv, expect, ": purged 1 range, 4096 bytes\n", SYS_USERS);
}

/* each of users's own `volatile purge --bytes 4096`, one after the other; ms in all */
static double purge_by_users(int users)
{
	char *argv[] = { (char *)"volatile", (char *)"purge", (char *)"--bytes", (char *)"4096",
			 NULL };
	double sum = 0;

	for (int u = 0; u < users; u++) {
		double t = run_cmd(SYS_UID0 + (uid_t)u, argv, "purged 1 range, 4096 bytes", NULL,
				   0);

		if (t < 0)
			return -1;
		sum += t;
	}
	return sum;
}

/*
 * The workers' start as root's: each forked, its passwd entry looked up
 * (there is none), exactly its user, its socket
 * on fd 3, `volatile system-worker` exec'd, and asked one REPORT (it opens
 * its region). ms until all 100 answered, or -1; *end_ms: then until all
 * exited on their socket's close and were reaped.
 */
static double start_workers(double *end_ms)
{
	static char path_env[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
	pid_t pid[SYS_USERS];
	int sock[SYS_USERS], answered = 0, ok = 1;
	uint64_t t0 = now_ns(), t1;

	for (int u = 0; u < SYS_USERS; u++) {
		int sv[2];

		pid[u] = -1;
		sock[u] = -1;
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
			continue;
		pid[u] = fork();
		if (pid[u] == 0) {
			char *argv[] = { (char *)"volatile", (char *)"system-worker", NULL };
			char *envp[] = { path_env, NULL };
			int null = open("/dev/null", O_RDWR);

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			/* root's worker looks its user up first (system.c drop_to): none here */
			if (getpwuid(SYS_UID0 + (uid_t)u) != NULL)
				_exit(127);
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			if (dup2(sv[1], VL_SYS_FD) == VL_SYS_FD && become(SYS_UID0 + (uid_t)u) == 0 &&
			    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && chdir("/") == 0)
				execve(vbin, argv, envp);
			_exit(127);
		}
		close(sv[1]);
		sock[u] = sv[0];
	}
	for (int u = 0; u < SYS_USERS; u++) {
		struct vl_sys_ask q = { .magic = VL_SYS_MAGIC, .op = VL_SYS_REPORT,
					.seq = (uint32_t)u + 1 };

		if (sock[u] < 0 ||
		    send(sock[u], &q, vl_sys_ask_len(&q), MSG_NOSIGNAL) != (ssize_t)vl_sys_ask_len(&q))
			ok = 0;
	}
	for (int u = 0; u < SYS_USERS && ok; u++) {
		struct vl_sys_answer a;
		struct pollfd p = { sock[u], POLLIN, 0 };

		if (poll(&p, 1, 5000) != 1 || recv(sock[u], &a, sizeof(a), 0) != sizeof(a) ||
		    a.seq != (uint32_t)u + 1 || a.err != 0 || a.oldest == 0)
			ok = 0;
		else
			answered++;
	}
	t1 = now_ns();
	/* as purge --system ends: each socket closed, each worker exits on EOF, reaped */
	for (int u = 0; u < SYS_USERS; u++)
		if (sock[u] >= 0)
			close(sock[u]);
	for (int u = 0; u < SYS_USERS; u++)
		if (pid[u] > 0)
			waitpid(pid[u], NULL, 0);
	*end_ms = (double)(now_ns() - t1) / 1e6;
	return ok && answered == SYS_USERS ? (double)(t1 - t0) / 1e6 : -1;
}

/* Each holder marks its range `layer`, in uid order; then a tick of the age clock passes. */
static int mark_layer(int layer)
{
	char cmd[32];

	snprintf(cmd, sizeof(cmd), "mark %d", layer);
	for (int u = 0; u < SYS_USERS; u++)
		if (tell(&holders[u], cmd, 30000) < 0)
			return -1;
	snooze_ms(15); /* past the coarse clock's tick: the next layer is younger */
	return 0;
}

static void set_pair(struct figure *f, double *sys, double *usr, int n, const char *ratio_of,
		     const char *note)
{
	double q[MAX_ROUNDS];

	for (int i = 0; i < n; i++)
		q[i] = sys[i] / usr[i];
	f->unit = "ms";
	f->base = median(usr, n);
	f->value = median(sys, n);
	f->ratio = median(q, n);
	f->ratio_of = ratio_of;
	f->status = NA;
	snprintf(f->note, sizeof(f->note), "%s", note);
}

static void global_pass(struct figure *f100, struct figure *f1, struct figure *fs,
			struct figure *fe)
{
	double s100[G_ROUNDS], u100[G_ROUNDS], s1[G_ROUNDS], u1[G_ROUNDS], st[G_ROUNDS];
	double end[G_ROUNDS], st1[G_ROUNDS], end1[G_ROUNDS], rest[G_ROUNDS], rest1[G_ROUNDS];
	char note[160];
	const char *fail = NULL;
	int r;

	/* 2 head layers a round (the system's pass, then the users'), then the bulk */
	for (int l = 0; l < 2 * G_ROUNDS && !fail; l++)
		if (mark_layer(l) != 0)
			fail = "a holder failed to mark";
	for (int u = 0; u < SYS_USERS && !fail; u++) {
		char cmd[32];

		snprintf(cmd, sizeof(cmd), "bulk %d", 2 * G_ROUNDS);
		if (tell(&holders[u], cmd, 600000) < 0)
			fail = "a holder failed to mark";
	}
	for (r = 0; r < G_ROUNDS && !fail; r++) {
		s100[r] = purge_system("409600");
		u100[r] = purge_by_users(SYS_USERS);
		st[r] = start_workers(&end[r]);
		if (s100[r] < 0 || u100[r] < 0 || st[r] < 0)
			fail = "a purge did not purge one range a region";
	}
	/* one range: among the bulk, the same cost whoever's */
	for (r = 0; r < G_ROUNDS && !fail; r++) {
		s1[r] = purge_system("4096");
		u1[r] = purge_by_users(1);
		st1[r] = start_workers(&end1[r]);
		if (s1[r] < 0 || u1[r] < 0 || st1[r] < 0)
			fail = "a purge did not purge one range";
	}
	if (fail) {
		f100->status = f1->status = fs->status = fe->status = SKIPPED;
		snprintf(f100->note, sizeof(f100->note), "skipped: %s", fail);
		snprintf(f1->note, sizeof(f1->note), "skipped: %s", fail);
		snprintf(fs->note, sizeof(fs->note), "skipped: %s", fail);
		snprintf(fe->note, sizeof(fe->note), "skipped: %s", fail);
		return;
	}
	/* what purge --system does besides its workers' start and end, round by round */
	for (r = 0; r < G_ROUNDS; r++) {
		rest[r] = s100[r] - st[r] - end[r];
		rest1[r] = s1[r] - st1[r] - end1[r];
	}
	fs->unit = "ms";
	fs->value = median(st, G_ROUNDS);
	fs->status = NA;
	fe->unit = "ms";
	fe->value = median(end, G_ROUNDS);
	fe->status = NA;
	snprintf(fs->note, sizeof(fs->note),
		 "fork, drop, exec, one REPORT each (its region opened), beside the 100-range "
		 "rows; in both rows above");
	snprintf(fe->note, sizeof(fe->note),
		 "their sockets closed: exit, reaped; in both rows above");
	snprintf(note, sizeof(note),
		 "median of %d; against 100 users' own purges one after the other; without the "
		 "workers' start and end %.0f ms",
		 G_ROUNDS, median(rest, G_ROUNDS));
	set_pair(f100, s100, u100, G_ROUNDS, "100 users' own purges", note);
	snprintf(note, sizeof(note),
		 "median of %d; against one user's own purge --bytes 4096; without the "
		 "workers' start and end %.0f ms",
		 G_ROUNDS, median(rest1, G_ROUNDS));
	set_pair(f1, s1, u1, G_ROUNDS, "one user's own purge", note);
}

/* ---- the group --------------------------------------------------------------------------- */

void bench_system(const char *bin, int trials)
{
	struct figure *fr = add_figure("system_reaction", "machine's daemon reaction, 100 users");
	struct figure *fd = add_figure("system_wakeups", "machine's daemon wake-ups in 10 s");
	struct figure *fw = add_figure("system_worker_wakeups", "its 100 workers' wake-ups in 10 s");
	struct figure *f100 = add_figure("system_pass_100",
					 "purge --system, 100 ranges in 100 regions");
	struct figure *f1 = add_figure("system_pass_1", "purge --system, 1 range of 1M");
	struct figure *fs = add_figure("system_workers_start", "100 workers' start, first REPORT");
	struct figure *fe = add_figure("system_workers_end", "100 workers' end");
	struct figure *all[] = { fr, fd, fw, f100, f1, fs, fe };
	const char *why = NULL;
	ssize_t n;

	if (geteuid() != 0)
		why = "skipped: not root (the machine's daemon is root's)";
	else if (bin == NULL || access(bin, X_OK) != 0)
		why = "skipped: no volatile command (--volatile PATH)";
	else if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
		why = "skipped: /proc/self/exe unreadable";
	if (why) {
		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
			all[i]->status = SKIPPED;
			snprintf(all[i]->note, sizeof(all[i]->note), "%s", why);
		}
		return;
	}
	self[n] = '\0';
	vbin = bin;
	remove_regions();
	atexit(cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	if (start_holders(R_RANGES, R_RANGE, 1) != 0) {
		why = "skipped: a holder did not start (can the uids run this build?)";
	} else {
		for (int u = 0; u < SYS_USERS && !why; u++)
			if (tell(&holders[u], "bulk 0", 30000) < 0)
				why = "skipped: a holder failed to mark";
			else
				holders[u].full = blocks_of(holders[u].cache);
	}
	if (why) {
		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
			all[i]->status = SKIPPED;
			snprintf(all[i]->note, sizeof(all[i]->note), "%s", why);
		}
		cleanup();
		return;
	}
	fprintf(stderr, "bench: system: the reaction\n");
	reaction(fr, trials);
	fprintf(stderr, "bench: system: wake-ups\n");
	wakeups(fd, fw);
	cleanup();

	fprintf(stderr, "bench: system: 1,000,000 ranges in 100 regions\n");
	if (start_holders(G_RANGES, G_RANGE, 0) != 0) {
		for (size_t i = 3; i < sizeof(all) / sizeof(all[0]); i++) {
			all[i]->status = SKIPPED;
			snprintf(all[i]->note, sizeof(all[i]->note), "skipped: a holder did not start");
		}
	} else {
		global_pass(f100, f1, fs, fe);
	}
	cleanup();
}
