/* SPDX-License-Identifier: MIT */
/*
 * reaction.c - how soon `volatile daemon` gives memory back.
 *
 * A holder process (this program again, `bench --holder`, with the shim
 * and a private region) fills a memfd cache and marks it volatile in
 * ranges. Then it allocates anonymous memory step by step, reading how
 * much memory is available after each step:
 *
 *   t0  the first reading below the threshold;
 *   t1  the first reading back above it (the daemon has purged enough);
 *   t2  the first reading at which the cache file has given back every
 *       byte that was purged (its allocated blocks, fstat; how many bytes
 *       were purged is learnt afterwards, from UNMARK's answers).
 *
 * "Available" is the cgroup's limit minus its usage (a cgroup v1 memory
 * cgroup made for the holder, the daemon started with --cgroup), or
 * MemAvailable (no cgroup; the threshold just below what is available).
 * A daemon is started for each trial, with VOLATILE_MIN_AVAILABLE set,
 * and stopped after it; the holder puts its cache back between trials.
 *
 * And how often the daemon wakes when nothing presses: a holder with a
 * small cache marked volatile, the daemon with the default threshold
 * (10%), its voluntary context switches (each sleep it wakes from) in 10 s.
 */
#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <volatile.h>

#define MiB (1ull << 20)

/* the cgroup trial: a 512 MiB cgroup, 256 MiB of cache, purging below 96 MiB */
#define CG_LIMIT (512 * MiB)
#define CG_CACHE (256 * MiB)
#define CG_RANGE (4 * MiB)
#define CG_THRESHOLD (96 * MiB)
#define CG_STEP (1 * MiB)
/* the system trial: 128 MiB of cache, purging 64 MiB below MemAvailable */
#define SYS_CACHE (128 * MiB)
#define SYS_RANGE (2 * MiB)
#define SYS_MARGIN (64 * MiB)
#define SYS_STEP (2 * MiB)

/* the wake-ups row: 8 MiB of cache, for 10 s */
#define IDLE_CACHE (8 * MiB)
#define IDLE_RANGE (2 * MiB)
#define IDLE_S 10

#define MAX_SAMPLES 40000
#define POLL_NS 100000ull /* 100 us between readings */

/* ---- the holder ------------------------------------------------------------------ */

static int level_fd = -1;
static int by_cgroup;
static uint64_t cg_limit;

/* Bytes available now, or 0 if it cannot be read. */
static uint64_t available(void)
{
	char buf[4096];
	ssize_t n = pread(level_fd, buf, sizeof(buf) - 1, 0);
	const char *p;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (by_cgroup) {
		uint64_t usage = strtoull(buf, NULL, 10);

		return usage < cg_limit ? cg_limit - usage : 0;
	}
	p = strstr(buf, "MemAvailable:");
	return p ? strtoull(p + 13, NULL, 10) * 1024 : 0;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	nanosleep(&ts, NULL);
}

static void fill_range(int fd, uint64_t off, uint64_t len)
{
	static char buf[1 << 20];

	memset(buf, 0x5a, sizeof(buf));
	for (uint64_t o = 0; o < len; o += sizeof(buf)) {
		size_t n = len - o < sizeof(buf) ? (size_t)(len - o) : sizeof(buf);

		if (pwrite(fd, buf, n, (off_t)(off + o)) != (ssize_t)n)
			exit(3);
	}
}

struct sample {
	uint64_t t, avail, held;
};

/* bytes the cache file holds in memory */
static uint64_t held(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? (uint64_t)st.st_blocks * 512 : 0;
}

static struct sample samples[MAX_SAMPLES];

/*
 * argv: --holder MODE LEVEL_FILE CACHE RANGE STEP LIMIT
 * Says "ready AVAIL", reads "go THRESHOLD" (or "quit"), says
 * "lat T1_NS T2_NS PURGED_BYTES" (-1: not seen; -2: the cache was purged
 * before the trial began), and so on.
 */
int holder_main(int argc, char **argv)
{
	uint64_t cache, range, step, stride, nr, full;
	char line[128];
	int fd;

	if (argc != 7)
		return 2;
	by_cgroup = strcmp(argv[1], "cg") == 0;
	level_fd = open(argv[2], O_RDONLY | O_CLOEXEC);
	cache = strtoull(argv[3], NULL, 10);
	range = strtoull(argv[4], NULL, 10);
	step = strtoull(argv[5], NULL, 10);
	cg_limit = strtoull(argv[6], NULL, 10);
	if (level_fd < 0 || range == 0 || step == 0)
		return 3;
	nr = cache / range;
	stride = range + 4096; /* a page apart: the ranges do not merge */
	fd = memfd_create("cache", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)(nr * stride)) != 0)
		return 3;
	fill_range(fd, 0, nr * stride);
	for (uint64_t i = 0; i < nr; i++)
		if (fallocate(fd, FALLOC_FL_MARK_VOLATILE, (off_t)(i * stride), (off_t)range) != 0)
			return 4;
	full = held(fd);

	for (;;) {
		uint64_t threshold, t0 = 0, purged = 0;
		int64_t t1 = -1, t2 = -1;
		void *pieces[4096];
		int npieces = 0, ns = 0;

		printf("ready %llu\n", (unsigned long long)available());
		fflush(stdout);
		if (fgets(line, sizeof(line), stdin) == NULL || strncmp(line, "go ", 3) != 0)
			break;
		threshold = strtoull(line + 3, NULL, 10);
		if (held(fd) < full) {
			/* something else made memory short meanwhile: not a trial */
			t1 = t2 = -2;
			goto restore;
		}

		/* allocate until available memory crosses the threshold */
		while (npieces < 4096 && (uint64_t)npieces * step < 2048 * MiB) {
			void *p = mmap(NULL, step, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			uint64_t a;

			if (p == MAP_FAILED)
				break;
			memset(p, 1, step);
			pieces[npieces++] = p;
			a = available();
			if (a < threshold) {
				t0 = now_ns();
				break;
			}
		}
		/* watch it come back: until 300 ms after it did, 3 s at most */
		if (t0) {
			uint64_t back = 0;

			while (ns < MAX_SAMPLES) {
				uint64_t t = now_ns();

				samples[ns].t = t;
				samples[ns].avail = available();
				samples[ns].held = held(fd);
				if (!back && samples[ns].avail >= threshold)
					back = t;
				ns++;
				if ((back && t - back > 300000000ull) || t - t0 > 3000000000ull)
					break;
				sleep_ns(POLL_NS);
			}
		}
		for (int i = 0; i < npieces; i++)
			munmap(pieces[i], step);
restore:
		/* what was purged, put back and marked again */
		for (uint64_t i = 0; i < nr; i++) {
			int r = fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, (off_t)(i * stride),
					  (off_t)range);

			if (r < 0)
				return 4;
			if (r == 1) {
				purged += range;
				fill_range(fd, i * stride, range);
			}
			if (fallocate(fd, FALLOC_FL_MARK_VOLATILE, (off_t)(i * stride),
				      (off_t)range) != 0)
				return 4;
		}
		for (int i = 0; i < ns; i++) {
			if (t1 < 0 && samples[i].avail >= threshold)
				t1 = (int64_t)(samples[i].t - t0);
			if (t2 < 0 && purged && samples[i].held + purged <= full)
				t2 = (int64_t)(samples[i].t - t0);
		}
		printf("lat %lld %lld %llu\n", (long long)t1, (long long)t2,
		       (unsigned long long)purged);
		fflush(stdout);
		sleep_ns(50000000ull);
	}
	return 0;
}

/* ---- the parent: cgroup, daemon, trials ---------------------------------------------- */

/* This process's memory cgroup (v1) directory, or "" */
static void own_memory_cgroup(char *dir, size_t size)
{
	char line[512];
	FILE *f = fopen("/proc/self/cgroup", "re");

	dir[0] = '\0';
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, ":memory:");

		if (p) {
			p += 8;
			p[strcspn(p, "\n")] = '\0';
			snprintf(dir, size, "/sys/fs/cgroup/memory%s", strcmp(p, "/") ? p : "");
			break;
		}
	}
	fclose(f);
}

static int write_file(const char *dir, const char *name, unsigned long long v)
{
	char path[1024], text[32];
	int fd, n, ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(text, sizeof(text), "%llu", v);
	ok = write(fd, text, (size_t)n) == n;
	n = errno;
	close(fd);
	return ok ? 0 : -n;
}

/* Read a line from fd within ms milliseconds; 0 on success. */
int read_line(int fd, char *buf, size_t size, int ms)
{
	size_t have = 0;

	while (have < size - 1) {
		struct pollfd p = { fd, POLLIN, 0 };
		char c;

		if (poll(&p, 1, ms) <= 0 || read(fd, &c, 1) != 1)
			return -1;
		if (c == '\n')
			break;
		buf[have++] = c;
	}
	buf[have] = '\0';
	return 0;
}

struct run {
	const char *bin, *cgdir, *region;
	char self[1024];
	pid_t holder;
	int to, from; /* the holder's stdin and stdout */
};

static pid_t start_holder(struct run *r, const char *level, uint64_t cache, uint64_t range,
			  uint64_t step, uint64_t limit)
{
	int in[2], out[2];
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		char a[4][24];

		if (r->cgdir && write_file(r->cgdir, "cgroup.procs", (unsigned long long)getpid()))
			_exit(3);
		dup2(in[0], 0);
		dup2(out[1], 1);
		setenv("VOLATILE_REGION", r->region, 1);
		/* only the daemon purges */
		setenv("VOLATILE_MIN_AVAILABLE", "0", 1);
		setenv("VOLATILE_TMPFS_MIN_FREE", "0", 1);
		snprintf(a[0], sizeof(a[0]), "%llu", (unsigned long long)cache);
		snprintf(a[1], sizeof(a[1]), "%llu", (unsigned long long)range);
		snprintf(a[2], sizeof(a[2]), "%llu", (unsigned long long)step);
		snprintf(a[3], sizeof(a[3]), "%llu", (unsigned long long)limit);
		execl(r->self, "bench", "--holder", r->cgdir ? "cg" : "sys", level, a[0], a[1],
		      a[2], a[3], (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	r->to = in[1];
	r->from = out[0];
	return pid;
}

/* Start the daemon and wait until it watches; its pid, or -1 */
static pid_t start_daemon(const struct run *r, uint64_t threshold, int *err_fd)
{
	int e[2];
	pid_t pid;
	char line[512];

	if (pipe2(e, O_CLOEXEC) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		char t[24];
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		dup2(e[1], 2);
		unsetenv("LD_PRELOAD");
		setenv("VOLATILE_REGION", r->region, 1);
		snprintf(t, sizeof(t), "%llu", (unsigned long long)threshold);
		if (threshold)
			setenv("VOLATILE_MIN_AVAILABLE", t, 1);
		else
			unsetenv("VOLATILE_MIN_AVAILABLE"); /* the default, 10% */
		setenv("VOLATILE_TMPFS_MIN_FREE", "0", 1);
		if (r->cgdir)
			execl(r->bin, "volatile", "daemon", "--foreground", "--cgroup", r->cgdir,
			      (char *)NULL);
		else
			execl(r->bin, "volatile", "daemon", "--foreground", (char *)NULL);
		_exit(127);
	}
	close(e[1]);
	while (read_line(e[0], line, sizeof(line), 5000) == 0)
		if (strstr(line, "watching region")) {
			*err_fd = e[0];
			return pid;
		}
	close(e[0]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

static void stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
}

/* Run the trials; fills the figure. */
static void trials(struct run *r, struct figure *f, int n, const char *level, uint64_t cache,
		   uint64_t range, uint64_t step, uint64_t limit, uint64_t fixed_threshold,
		   uint64_t margin)
{
	double t1[MAX_ROUNDS], t2[MAX_ROUNDS], mib = 0;
	int n1 = 0, n2 = 0, failed = 0, spoiled = 0, tries = 0, broken = 0;
	uint64_t threshold = 0;
	char line[256];

	r->holder = start_holder(r, level, cache, range, step, limit);
	if (r->holder < 0) {
		f->status = SKIPPED;
		snprintf(f->note, sizeof(f->note), "skipped: fork: %s", strerror(errno));
		return;
	}
	for (int k = 0; k < n && tries++ < 2 * n; k++) {
		unsigned long long a;
		long long l1, l2;
		unsigned long long p;
		int efd = -1;
		pid_t d;

		if (read_line(r->from, line, sizeof(line), 30000) != 0 ||
		    sscanf(line, "ready %llu", &a) != 1) {
			broken = -1;
			break;
		}
		threshold = fixed_threshold ? fixed_threshold : a - margin;
		d = start_daemon(r, threshold, &efd);
		if (d < 0) {
			broken = -2;
			break;
		}
		sleep_ns(150000000ull); /* its first round: it arms its cgroup threshold */
		dprintf(r->to, "go %llu\n", (unsigned long long)threshold);
		if (read_line(r->from, line, sizeof(line), 30000) != 0 ||
		    sscanf(line, "lat %lld %lld %llu", &l1, &l2, &p) != 3) {
			stop(d);
			close(efd);
			broken = -1;
			break;
		}
		stop(d);
		close(efd);
		if (l1 == -2) {
			spoiled++;
			k--;
			continue;
		}
		if (l1 >= 0)
			t1[n1++] = (double)l1 / 1e6;
		if (l2 >= 0)
			t2[n2++] = (double)l2 / 1e6;
		else
			failed++;
		mib += (double)p / MiB;
	}
	dprintf(r->to, "quit\n");
	close(r->to);
	close(r->from);
	waitpid(r->holder, NULL, 0);

	f->unit = "ms";
	f->target = "<= 50 ms";
	if (n2 == 0) {
		f->status = SKIPPED;
		snprintf(f->note, sizeof(f->note), "skipped: %s",
			 broken == -1 ? "the holder process failed" :
			 broken == -2 ? "the daemon did not start" :
					"the memory never came back within 3 s");
		return;
	}
	f->value = median(t2, n2);
	f->status = met_if(f->value <= 50);
	snprintf(f->note, sizeof(f->note),
		 "median of %d trials (%d failed, %d spoiled by others); above the threshold "
		 "again after %.1f ms; %.0f MiB purged a trial",
		 n2, failed, spoiled, n1 ? median(t1, n1) : -1.0, mib / (n2 + failed));
}

/* A process's voluntary context switches, all its threads: the sleeps it woke from. */
long long proc_wakeups(pid_t pid)
{
	char path[300], line[128];
	long long sum = 0, v;
	struct dirent *e;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (dir == NULL)
		return 0;
	while ((e = readdir(dir)) != NULL) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status", (int)pid, e->d_name);
		f = fopen(path, "re");
		if (f == NULL)
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "voluntary_ctxt_switches: %lld", &v) == 1)
				sum += v;
		fclose(f);
	}
	closedir(dir);
	return sum;
}

/* MemTotal and MemAvailable, bytes */
static void meminfo(uint64_t *total, uint64_t *avail)
{
	char buf[4096];
	int fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	const char *p;

	*total = *avail = 0;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if ((p = strstr(buf, "MemTotal:")) != NULL)
		*total = strtoull(p + 9, NULL, 10) * 1024;
	if ((p = strstr(buf, "MemAvailable:")) != NULL)
		*avail = strtoull(p + 13, NULL, 10) * 1024;
}

/* The daemon's wake-ups in IDLE_S seconds, ranges present, memory plenty. */
static void idle_wakeups(struct run *r, struct figure *f)
{
	uint64_t total, avail, threshold;
	long long w0, w1;
	char line[256];
	int efd = -1;
	pid_t d;

	f->unit = "wake-ups";
	f->target = "<= 10";
	r->cgdir = NULL;
	r->holder = start_holder(r, "/proc/meminfo", IDLE_CACHE, IDLE_RANGE, IDLE_RANGE, 0);
	if (r->holder < 0 || read_line(r->from, line, sizeof(line), 30000) != 0 ||
	    strncmp(line, "ready ", 6) != 0) {
		f->status = SKIPPED;
		snprintf(f->note, sizeof(f->note), "skipped: the holder process failed");
		goto out;
	}
	meminfo(&total, &avail);
	threshold = total / 10;
	d = start_daemon(r, 0, &efd);
	if (d < 0) {
		f->status = SKIPPED;
		snprintf(f->note, sizeof(f->note), "skipped: the daemon did not start");
		goto out;
	}
	sleep_ns(200000000ull); /* past its first look */
	w0 = proc_wakeups(d);
	sleep_ns(IDLE_S * 1000000000ull);
	w1 = proc_wakeups(d);
	stop(d);
	close(efd);
	f->value = (double)(w1 - w0);
	/* plenty: far enough above the threshold for the longest sleep, 1 s at 4 GiB/s */
	if (avail > threshold + (4ull << 30)) {
		f->status = met_if(f->value <= 10);
		snprintf(f->note, sizeof(f->note),
			 "%.1f GiB available, threshold 10%% (%.1f GiB); 20 ms polls made ~500",
			 (double)avail / (1u << 30), (double)threshold / (1u << 30));
	} else {
		f->status = NA;
		snprintf(f->note, sizeof(f->note),
			 "memory not plenty here: %.1f GiB available, threshold %.1f GiB",
			 (double)avail / (1u << 30), (double)threshold / (1u << 30));
	}
out:
	if (r->holder > 0) {
		dprintf(r->to, "quit\n");
		close(r->to);
		close(r->from);
		waitpid(r->holder, NULL, 0);
	}
}

void bench_reaction(const char *bin, int n)
{
	struct figure *fc = add_figure("reaction_cgroup", "daemon reaction, cgroup v1 (512 MiB)");
	struct figure *fs = add_figure("reaction_system", "daemon reaction, MemAvailable");
	struct figure *fw = add_figure("daemon_wakeups", "daemon wake-ups in 10 s, memory plenty");
	char region[128], lock[160], base[900], dir[1024];
	struct run r;
	ssize_t n_self;
	int err;

	memset(&r, 0, sizeof(r));
	if (bin == NULL || access(bin, X_OK) != 0) {
		fc->status = fs->status = fw->status = SKIPPED;
		snprintf(fc->note, sizeof(fc->note), "skipped: no volatile command (--volatile PATH)");
		snprintf(fs->note, sizeof(fs->note), "skipped: no volatile command (--volatile PATH)");
		snprintf(fw->note, sizeof(fw->note), "skipped: no volatile command (--volatile PATH)");
		return;
	}
	n_self = readlink("/proc/self/exe", r.self, sizeof(r.self) - 1);
	if (n_self <= 0) {
		fc->status = fs->status = fw->status = SKIPPED;
		snprintf(fc->note, sizeof(fc->note), "skipped: /proc/self/exe unreadable");
		snprintf(fs->note, sizeof(fs->note), "skipped: /proc/self/exe unreadable");
		snprintf(fw->note, sizeof(fw->note), "skipped: /proc/self/exe unreadable");
		return;
	}
	r.self[n_self] = '\0';
	r.bin = bin;
	snprintf(region, sizeof(region), "/dev/shm/libvolatile-bench-reaction.%d", (int)getpid());
	snprintf(lock, sizeof(lock), "%s.daemon", region);
	r.region = region;

	/* in a memory cgroup made for the holder, a child of ours if we may */
	own_memory_cgroup(base, sizeof(base));
	dir[0] = '\0';
	if (geteuid() != 0) {
		fc->status = SKIPPED;
		snprintf(fc->note, sizeof(fc->note), "skipped: not root (a memory cgroup is needed)");
	} else if (access("/sys/fs/cgroup/memory/cgroup.event_control", F_OK) != 0) {
		fc->status = SKIPPED;
		snprintf(fc->note, sizeof(fc->note), "skipped: no cgroup v1 memory hierarchy");
	} else {
		snprintf(dir, sizeof(dir), "%s/vlbench.%d", base[0] ? base : "/sys/fs/cgroup/memory",
			 (int)getpid());
		if (mkdir(dir, 0755) != 0) {
			snprintf(dir, sizeof(dir), "/sys/fs/cgroup/memory/vlbench.%d", (int)getpid());
			if (mkdir(dir, 0755) != 0) {
				fc->status = SKIPPED;
				snprintf(fc->note, sizeof(fc->note), "skipped: mkdir %s: %s", dir,
					 strerror(errno));
				dir[0] = '\0';
			}
		}
	}
	if (dir[0]) {
		char level[1100];

		err = write_file(dir, "memory.limit_in_bytes", CG_LIMIT);
		snprintf(level, sizeof(level), "%s/memory.memsw.limit_in_bytes", dir);
		if (err == 0 && access(level, F_OK) == 0)
			err = write_file(dir, "memory.memsw.limit_in_bytes", CG_LIMIT);
		if (err) {
			fc->status = SKIPPED;
			snprintf(fc->note, sizeof(fc->note), "skipped: cgroup limit: %s",
				 strerror(-err));
		} else {
			snprintf(level, sizeof(level), "%s/memory.usage_in_bytes", dir);
			r.cgdir = dir;
			trials(&r, fc, n, level, CG_CACHE, CG_RANGE, CG_STEP, CG_LIMIT,
			       CG_THRESHOLD, 0);
		}
		/* the holder is gone; its memory goes to the parent cgroup */
		for (int i = 0; i < 50 && rmdir(dir) != 0; i++)
			sleep_ns(20000000ull);
	}
	unlink(lock);
	unlink(region);

	r.cgdir = NULL;
	trials(&r, fs, n, "/proc/meminfo", SYS_CACHE, SYS_RANGE, SYS_STEP, 0, 0, SYS_MARGIN);
	unlink(lock);
	unlink(region);

	idle_wakeups(&r, fw);
	unlink(lock);
	unlink(region);
}
