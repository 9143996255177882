/* SPDX-License-Identifier: MIT */
/*
 * daemon.c - `volatile daemon [--foreground] [--cgroup DIR] [--interval MS]`
 *
 * Watches memory and purges volatile ranges, oldest first, when available
 * memory (the system's, or the cgroup's headroom) falls below
 * VOLATILE_MIN_AVAILABLE, and a tmpfs's own ranges when its free space
 * falls below VOLATILE_TMPFS_MIN_FREE (DESIGN 6). So idle programs'
 * caches give way too, not only those of programs that keep marking.
 *
 * It wakes on whatever the kernel offers, all optional:
 *   - a PSI trigger on /proc/pressure/memory (or the cgroup v2 file
 *     memory.pressure): some stall in a 2 s window;
 *   - cgroup v1 eventfds: memory.pressure_level "low", and a threshold on
 *     memory.usage_in_bytes at limit - VOLATILE_MIN_AVAILABLE;
 *   - cgroup v2: memory.events.local of the cgroup and its ancestors (it
 *     changes when one reaches its memory.high or memory.max);
 *   - and a timeout, which polls in proportion to how near the threshold
 *     is: it sleeps as long as available memory (a tmpfs's free space)
 *     would take to fall to the threshold at FALL_RATE, or faster if it
 *     was seen to fall faster, within --interval (20 ms) and FAR_MS (1 s);
 *     with nothing to purge, IDLE_MS. So a memory falling at up to that
 *     rate is looked at every 20 ms by the time it crosses, and an idle
 *     machine sees one wake-up a second. PSI windows of 2 s and more are
 *     too slow on their own to get ahead of an allocating program.
 * Each purge is logged in one line: what, how much, why.
 */
#include "cli.h"
#include "daemon.h"
#include "system.h"

#include "core/parse.h"
#include "core/pool.h"
#include "env.h"
#include "move.h"
#include "policy.h"
#include "purge.h"
#include "region.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>

static const char help[] =
	"Usage: volatile daemon [--foreground] [--cgroup DIR] [--interval MS]\n"
	"       volatile daemon --stop\n"
	"       volatile daemon --system [--foreground] [--uid UID]... [--debug]\n"
	"Watch memory and purge volatile ranges, oldest first, when available memory\n"
	"falls below VOLATILE_MIN_AVAILABLE (default 10%: of the memory, or of the\n"
	"cgroup's limit) or a tmpfs's free space below VOLATILE_TMPFS_MIN_FREE\n"
	"(default 10% of it). Runs as the user, for the user's region; --system\n"
	"(root): the machine's daemon, for every user's region (--system --help).\n"
	"\n"
	"  --foreground    stay in the foreground and log to stderr (for systemd);\n"
	"                  otherwise detach and log to syslog\n"
	"  --cgroup DIR    watch this memory cgroup (a directory under\n"
	"                  /sys/fs/cgroup) instead of the daemon's own\n"
	"  --interval MS   the shortest poll, when available memory (a tmpfs's free\n"
	"                  space) is near the threshold (20); far from it, once a\n"
	"                  second (an MS above 1000: every poll that long)\n"
	"\n"
	"It wakes on PSI triggers and cgroup pressure events where the kernel\n"
	"offers them, and polls in proportion to how near the threshold is: as long\n"
	"as memory takes to fall to it at 4 GiB/s. SIGTERM or SIGINT: it exits,\n"
	"status 0.\n"
	"One daemon per region: a second one exits with status 2. 'volatile status'\n"
	"names the daemon serving the region: pid, since when, last wake-up.\n"
	"\n"
	"  --stop          stop the region's daemon (SIGTERM) and wait until it is\n"
	"                  gone, 10 s at most: exit 0 once it is gone or if none ran\n"
	"                  (as systemctl stop), 1 if it is still there\n";

#define FAR_MS DAEMON_FAR_MS
#define IDLE_MS DAEMON_IDLE_MS
/*
 * The fastest fall of available memory (and of a tmpfs's free space) the
 * poll is planned for, in bytes a second: faster than one thread faults
 * memory in (the bench's allocating loop: 0.5 to 1.8 GiB/s on a 2-core
 * VM; a few GiB/s on a fast machine). A fall that fast is met by a 20 ms
 * poll by the time it reaches the threshold; a faster one is seen at the
 * next look and planned for from then on.
 */
#define FALL_RATE (4ull << 30)
#define COLLECT_EVERY_S 60
#define MAX_TMPFS 32
/* cgroup v2 levels whose memory.events.local are watched */
#define MAX_EVENTS 8

int daemon_use_syslog;

void daemon_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (daemon_use_syslog) {
		vsyslog(LOG_INFO, fmt, ap);
	} else {
		fputs("volatile daemon: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}

struct watch {
	struct vl_region r;
	struct vl_cgroup cg;
	int have_cg;
	unsigned min_ms;   /* --interval: the shortest sleep */
	unsigned sleep_ms; /* the next one */
	int sfd, psi, v1_level, v1_usage;
	int v2_events[MAX_EVENTS], n_events;
	uint64_t usage_armed; /* the v1 usage threshold registered, 0: none */
	struct daemon_fall fall;
	uint32_t last_collect;
	uint32_t last_follow;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- what wakes us ---------------------------------------------------------- */

int daemon_psi_trigger(const char *cgroup_dir)
{
	static const char trig[] = "some 150000 2000000";
	char path[PATH_MAX + 32];
	int fd;

	if (cgroup_dir != NULL)
		snprintf(path, sizeof(path), "%s/memory.pressure", cgroup_dir);
	else
		snprintf(path, sizeof(path), "/proc/pressure/memory");
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* the kernel wants the NUL too */
	if (write(fd, trig, sizeof(trig)) < 0) {
		daemon_say("no PSI trigger on %s (%s): polling", path, strerror(errno));
		close(fd);
		return -1;
	}
	daemon_say("PSI trigger on %s: %s", path, trig);
	return fd;
}

int daemon_v1_event(const char *dir, const char *file, const char *args)
{
	char path[PATH_MAX + 64], line[128];
	int efd, ffd, cfd, ok = 0;

	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	ffd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/cgroup.event_control", dir);
	cfd = open(path, O_WRONLY | O_CLOEXEC);
	if (efd >= 0 && ffd >= 0 && cfd >= 0) {
		int n = snprintf(line, sizeof(line), "%d %d %s", efd, ffd, args);

		ok = write(cfd, line, (size_t)n) == n;
	}
	if (ffd >= 0)
		close(ffd);
	if (cfd >= 0)
		close(cfd);
	if (!ok && efd >= 0) {
		close(efd);
		efd = -1;
	}
	return efd;
}

void daemon_v1_usage(const char *dir, uint64_t limit, uint64_t threshold, int *fd,
		     uint64_t *armed)
{
	char args[32];
	uint64_t at;

	if (limit == VL_UNLIMITED || threshold >= limit)
		return;
	at = limit - threshold;
	if (at == *armed && *fd >= 0)
		return;
	if (*fd >= 0)
		close(*fd);
	snprintf(args, sizeof(args), "%llu", (unsigned long long)at);
	*fd = daemon_v1_event(dir, "memory.usage_in_bytes", args);
	*armed = *fd >= 0 ? at : 0;
}

/* Re-arm the v1 usage threshold at limit - threshold (it fires when crossed). */
static void arm_usage(struct watch *w, const struct vl_memstate *ms, uint64_t threshold)
{
	if (w->have_cg && w->cg.version == 1)
		daemon_v1_usage(w->cg.dir, ms->cg_limit, threshold, &w->v1_usage, &w->usage_armed);
}

int daemon_events_open(const char *path)
{
	char buf[256];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	/* flagged until read once */
	if (fd >= 0 && pread(fd, buf, sizeof(buf), 0) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

int daemon_events_reread(int fd, short revents)
{
	char buf[256];

	if ((revents & (POLLERR | POLLNVAL)) || pread(fd, buf, sizeof(buf), 0) < 0) {
		/* it would stay flagged: stop watching it rather than spin */
		close(fd);
		return -1;
	}
	return 0;
}

/*
 * cgroup v2: memory.events.local of the cgroup and of each ancestor up to
 * the top of the hierarchy (with --cgroup, that cgroup only). The kernel
 * flags such a file for poll (POLLPRI) when one of its counts changes ("high",
 * "max", "oom": the cgroup's own limits, not its children's), until it is
 * read again. A v2 root has none; kernels before 5.2 none at all.
 */
static void v2_events(struct watch *w)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	size_t mlen = strlen(w->cg.mnt);

	snprintf(dir, sizeof(dir), "%s", w->cg.dir);
	while (w->n_events < MAX_EVENTS) {
		char *slash;
		int fd;

		snprintf(path, sizeof(path), "%s/memory.events.local", dir);
		fd = daemon_events_open(path);
		if (fd >= 0)
			w->v2_events[w->n_events++] = fd;
		if (strlen(dir) <= mlen || (slash = strrchr(dir, '/')) == NULL ||
		    (size_t)(slash - dir) < mlen)
			break;
		*slash = '\0';
	}
}

/* A flagged memory.events.local read again (daemon_events_reread), or dropped. */
static void rearm(struct watch *w, int i, short revents)
{
	if (daemon_events_reread(w->v2_events[i], revents) != 0)
		w->v2_events[i] = -1;
}

static void drain(int fd)
{
	char buf[64];

	if (fd >= 0)
		while (read(fd, buf, sizeof(buf)) > 0)
			;
}

/* ---- what we do when woken ---------------------------------------------------- */

uint64_t daemon_fall_rate(const struct daemon_fall *f, uint64_t available, uint64_t now_ns)
{
	return vl_fall_rate(f->last_avail, available,
			    f->last_look != 0 && now_ns > f->last_look ? now_ns - f->last_look : 0,
			    FALL_RATE);
}

unsigned daemon_memory_sleep(struct daemon_fall *f, uint64_t available, uint64_t threshold,
			     uint64_t rate, unsigned min_ms)
{
	f->last_avail = available;
	f->last_look = mono_ns();
	return vl_poll_ms(available > threshold ? available - threshold : 0, rate, min_ms, FAR_MS);
}

/*
 * The low-memory rule. Returns how long to sleep as far as memory goes:
 * the time available memory takes to fall to the threshold at FALL_RATE,
 * or at the rate it fell since the last look if that was faster.
 */
static unsigned relieve_memory(struct watch *w)
{
	struct vl_memstate ms;
	uint64_t threshold = 0, rate = FALL_RATE, now = mono_ns();
	int looked = 0;

	for (int round = 0; round < VL_DAEMON_MEMORY_ROUNDS; round++) {
		struct vl_purge_report rep;
		int purged = vl_relieve_memory(&w->r, w->have_cg ? &w->cg : NULL, NULL, 1, &ms,
					       &threshold, &rep);

		if (purged < 0)
			break;
		looked = 1;
		if (round == 0) {
			arm_usage(w, &ms, threshold);
			rate = daemon_fall_rate(&w->fall, ms.available, now);
		}
		if (purged == 0 || (rep.ranges == 0 && rep.files_dropped == 0))
			break; /* not low, or nothing (left) to purge */
		daemon_say("purged %u range%s, %llu bytes: %s %llu bytes available < %llu", rep.ranges,
		    rep.ranges == 1 ? "" : "s", (unsigned long long)rep.bytes,
		    ms.by_cgroup ? "cgroup" : "memory", (unsigned long long)ms.available,
		    (unsigned long long)threshold);
	}
	if (!looked)
		return FAR_MS; /* /proc/meminfo unreadable: nothing to plan with */
	/* the last look: after a purge, what is available once it is done */
	return daemon_memory_sleep(&w->fall, ms.available, threshold, rate, w->min_ms);
}

/*
 * A tmpfs that holds files with unpurged ranges, and ways to its statfs:
 * a file's recorded path, and the processes that marked its files
 * (/proc/PID/fd/FD reaches a file that has no name, or another one now).
 */
#define FS_WAYS 4

struct fs_seen {
	uint64_t dev;
	int nways;
	char way[FS_WAYS][VL_PATH_MAX];
};

static void add_way(struct fs_seen *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_way(struct fs_seen *s, const char *fmt, ...)
{
	va_list ap;

	if (s->nways == FS_WAYS)
		return;
	va_start(ap, fmt);
	vsnprintf(s->way[s->nways++], VL_PATH_MAX, fmt, ap);
	va_end(ap);
}

static int tmpfs_list(struct watch *w, struct fs_seen *seen)
{
	const struct vl_region *r = &w->r;
	uint32_t hwm;
	int n = 0;

	if (vl_lock_region(r) != 0)
		return 0;
	hwm = vl_file_hwm(r);
	for (uint32_t fi = 1; fi < hwm; fi++) {
		const struct vl_file *f = vl_file_at(r, fi);
		struct fs_seen *s = NULL;

		if (f->h.state != VL_FILE_LIVE || f->h.vbytes == 0)
			continue;
		for (int i = 0; i < n && s == NULL; i++)
			if (seen[i].dev == f->h.ident.dev)
				s = &seen[i];
		if (s == NULL) {
			if (n == MAX_TMPFS)
				continue;
			s = &seen[n++];
			s->dev = f->h.ident.dev;
			s->nways = 0;
		}
		if (f->h.path_len != 0 && f->h.path_len < VL_PATH_MAX)
			add_way(s, "%.*s", (int)f->h.path_len, f->path);
		for (int k = 0; k < VL_HOLDERS; k++)
			if (f->h.holders[k].pid > 0 && f->h.holders[k].fd >= 0)
				add_way(s, "/proc/%d/fd/%d", (int)f->h.holders[k].pid,
					(int)f->h.holders[k].fd);
	}
	vl_unlock_region(r);
	return n;
}

/* A way that still reaches a file on that file system, and its statfs. */
static const char *reach_fs(const struct fs_seen *s, struct statfs *sf)
{
	for (int i = 0; i < s->nways; i++) {
		struct stat st;

		if (stat(s->way[i], &st) == 0 && (uint64_t)st.st_dev == s->dev &&
		    statfs(s->way[i], sf) == 0)
			return s->way[i];
	}
	return NULL;
}

/* The full-tmpfs rule. Returns how long to sleep as far as the tmpfs go (as memory). */
static unsigned relieve_tmpfs(struct watch *w)
{
	static struct fs_seen seen[MAX_TMPFS]; /* tens of KiB: not on the stack */
	int n = tmpfs_list(w, seen);
	unsigned sleep_ms = FAR_MS;

	for (int i = 0; i < n; i++) {
		struct vl_purge_report rep;
		struct statfs sf;
		uint64_t free_bytes, size, threshold;
		const char *way = reach_fs(&seen[i], &sf);

		if (way == NULL || sf.f_type != TMPFS_MAGIC || sf.f_blocks == 0)
			continue;
		free_bytes = (uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize;
		size = (uint64_t)sf.f_blocks * (uint64_t)sf.f_bsize;
		if (vl_relieve_tmpfs(&w->r, seen[i].dev, free_bytes, size, NULL, 1, &threshold,
				     &rep)) {
			/* purged (or nothing left to purge): look again soon */
			free_bytes = 0;
			if (rep.ranges)
				daemon_say("purged %u range%s, %llu bytes: tmpfs of %s: %llu bytes free < %llu",
				    rep.ranges, rep.ranges == 1 ? "" : "s",
				    (unsigned long long)rep.bytes, way,
				    (unsigned long long)((uint64_t)sf.f_bavail * sf.f_bsize),
				    (unsigned long long)threshold);
		}
		if (threshold != 0) {
			unsigned ms = vl_poll_ms(free_bytes > threshold ? free_bytes - threshold : 0,
						 FALL_RATE, w->min_ms, FAR_MS);

			if (ms < sleep_ms)
				sleep_ms = ms;
		}
	}
	return sleep_ms;
}

static void collect(struct watch *w)
{
	struct vl_purge_report rep;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (w->last_collect != 0 && (uint32_t)ts.tv_sec - w->last_collect < COLLECT_EVERY_S)
		return;
	w->last_collect = (uint32_t)ts.tv_sec;
	vl_collect(&w->r, &rep);
	if (rep.files_dropped)
		daemon_say("forgot the records of %u file%s", rep.files_dropped,
		    rep.files_dropped == 1 ? " that is gone" : "s that are gone");
}

/*
 * The region's name no longer leads to it (removed, replaced, renamed;
 * or the default place changed, a runtime directory having come or
 * gone): move its records into the region new processes find, and watch
 * that one from now on. Looked at once a second at most.
 */
static void follow(struct watch *w)
{
	static char path[PATH_MAX];
	struct vl_region next;
	struct timespec ts;
	int err;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	if ((uint32_t)ts.tv_sec == w->last_follow)
		return;
	w->last_follow = (uint32_t)ts.tv_sec;
	if (vl_region_fresh(&w->r) != 0 && !w->r.hdr->fate.retired) /* -1: cannot tell, stay */
		return;
	err = vl_region_open_wanted(path, sizeof(path), &next);
	if (err == 0)
		err = vl_region_move(&w->r, &next);
	if (err) {
		daemon_say("the region %s is no longer the one new processes find; cannot move its "
		    "records to %s: %s", w->r.path, path, strerror(-err));
		if (next.hdr != NULL)
			vl_region_unmap(&next);
		return;
	}
	vl_region_settle(&next);
	daemon_say("the region %s is no longer the one new processes find: its records are moved to %s",
	    w->r.path, path);
	vl_region_unmap(&w->r);
	w->r = next;
}

/*
 * No unpurged byte in the region: its totals and every process's unfolded
 * deltas (a process may hold up to VL_FOLD_BYTES of them, core/pool.h).
 */
static int nothing_volatile(const struct vl_region *r)
{
	struct vl_totals t;

	vl_totals_read(r, NULL, &t);
	return vl_u128_cmp(&t.volatile_bytes, 0) == 0;
}

/* Look, purge what the rules say, and set how long to sleep before the next look. */
static void relieve(struct watch *w)
{
	unsigned ms = FAR_MS, t;

	follow(w);
	if (vl_threshold_on(&vl_config()->min_available) && (t = relieve_memory(w)) < ms)
		ms = t;
	if (vl_threshold_on(&vl_config()->tmpfs_min_free) && (t = relieve_tmpfs(w)) < ms)
		ms = t;
	collect(w);
	/* no lock: a count read torn while it crosses 2^64 costs one slow look */
	if (nothing_volatile(&w->r))
		ms = IDLE_MS; /* nothing to purge, whatever memory does */
	w->sleep_ms = ms > w->min_ms ? ms : w->min_ms;
}

/* ---- setup ---------------------------------------------------------------------- */

/*
 * The daemon's file at path, opened (made if need be) and checked to be a
 * private file of this user, not yet locked: the fd; or -1 with errno,
 * *why saying why when the file is refused as someone else's.
 */
static int open_daemon_file(const char *path, char *buf, size_t size, const char **why)
{
	struct stat st;
	int fd, err;

	*why = NULL;
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0600);
	if (fd < 0) {
		err = errno;
		/* another user's file we may not even open: say whose */
		if (lstat(path, &st) == 0)
			*why = not_private_file(&st, buf, size);
		errno = err;
		return -1;
	}
	if (fstat(fd, &st) != 0 || (*why = not_private_file(&st, buf, size)) != NULL) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/*
 * One daemon per region: an flock on "<region>.daemon", which holds the
 * daemon's pid once it runs (written after detaching). The file is
 * checked before it is locked or written: in /dev/shm another user may
 * have made that name first (their flock would stop ours; a hard link
 * from it to our region would have us truncate the region).
 */
static int single(void)
{
	char path[PATH_MAX + 16], buf[160];
	const char *why;
	int fd;

	daemon_file(path, sizeof(path));
	fd = open_daemon_file(path, buf, sizeof(buf), &why);
	if (fd < 0 && why != NULL)
		die("daemon: %s refused: %s", path, why);
	if (fd < 0)
		die("daemon: %s: %s", path, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) != 0)
		die("daemon: already running for region %s", vl_config()->region);
	return fd;
}

static void setup(struct watch *w, const char *cgroup)
{
	const struct vl_config *cfg = vl_config();
	char a[32], b[32], bad[PATH_MAX + 128];
	sigset_t mask;
	int err;

	/*
	 * The library ignores a bad value silently; a typo in the unit's
	 * Environment= would leave the default threshold in force unseen.
	 */
	if (vl_env_refused(bad, sizeof(bad)))
		daemon_say("%s: ignored", bad);
	open_region(&w->r, 1);
	if (cgroup != NULL) {
		err = vl_cgroup_at(cgroup, &w->cg);
		if (err)
			die("daemon: %s is not a memory cgroup directory (%s)", cgroup,
			    strerror(-err));
		w->have_cg = 1;
	} else {
		w->have_cg = vl_own_cgroup(&w->cg) == 0;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	w->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (w->sfd < 0)
		die("daemon: %s", strerror(errno));
	w->psi = daemon_psi_trigger(w->have_cg && w->cg.version == 2 ? w->cg.dir : NULL);
	w->v1_level = w->v1_usage = -1;
	if (w->have_cg && w->cg.version == 1) {
		w->v1_level = daemon_v1_event(w->cg.dir, "memory.pressure_level", "low");
		daemon_say("cgroup v1 %s: pressure events %s", w->cg.dir,
		    w->v1_level >= 0 ? "on" : "unavailable");
	} else if (w->have_cg) {
		v2_events(w);
		daemon_say("cgroup v2 %s: events of %d level%s", w->cg.dir, w->n_events,
		    w->n_events == 1 ? "" : "s");
	}
	daemon_say("watching region %s: purging when available memory < %s, tmpfs free < %s",
	    cfg->region, threshold_text(&cfg->min_available, a, sizeof(a)),
	    threshold_text(&cfg->tmpfs_min_free, b, sizeof(b)));
}

/*
 * The daemon's file removed or replaced since it was locked (a cleaner of
 * /dev/shm, an rm): the lock no longer keeps a second daemon out, and
 * status and --stop, which look by the name, no longer see this one. At
 * each wake-up the name is checked; gone, it is made and locked again, as
 * at start. The lock fd to go on with; -1 if another daemon holds the name
 * by now: that one serves the region, this one is to exit. Any other
 * failure keeps the old lock, to try again at the next wake-up.
 */
static int keep_name(int lock)
{
	char path[PATH_MAX + 16], buf[160];
	const char *why;
	struct stat mine, named;
	int fd, err;

	daemon_file(path, sizeof(path));
	if (fstat(lock, &mine) == 0 && lstat(path, &named) == 0 && mine.st_dev == named.st_dev &&
	    mine.st_ino == named.st_ino)
		return lock;
	fd = open_daemon_file(path, buf, sizeof(buf), &why);
	if (fd < 0)
		return lock;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		err = errno;
		close(fd);
		return err == EWOULDBLOCK ? -1 : lock;
	}
	close(lock);
	daemon_register(fd);
	daemon_say("%s was removed or replaced: made again", path);
	return fd;
}

/* Fork into the background; the parent returns once the child is set up. */
void daemon_detach(int *ready)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC) != 0)
		die("daemon: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("daemon: %s", strerror(errno));
	if (pid > 0) {
		close(p[1]);
		/* the child writes one byte once it runs; EOF means it died */
		exit(read(p[0], &c, 1) == 1 ? 0 : EXIT_USAGE);
	}
	close(p[0]);
	setsid();
	if (fork() != 0)
		_exit(0);
	*ready = p[1];
}

/*
 * --stop: the region's daemons, each stopped and waited for. None running
 * is success, as for `systemctl stop` of a stopped unit: a script or an
 * ExecStop= wants the daemon gone, and it is.
 */
static int stop_daemons(void)
{
	struct daemon_seen d[MAX_DAEMONS];
	int n = daemons_serving(d, MAX_DAEMONS), status = 0, users = 0;

	for (int i = 0; i < n; i++)
		users += strcmp(d[i].kind, "user") == 0;
	if (n == 0)
		printf("no daemon serves region %s\n", vl_config()->region);
	else if (users == 0)
		printf("no daemon of the user's serves region %s (the machine's, pid %d, is "
		       "stopped by root: systemctl stop volatile-system)\n",
		       vl_config()->region, (int)d[0].pid);
	for (int i = 0; i < n; i++) {
		int err;

		if (strcmp(d[i].kind, "user") != 0)
			continue; /* the machine's is systemd's to stop (DESIGN 22) */
		err = daemon_stop(&d[i]);

		if (err == 0) {
			printf("stopped the daemon of region %s (pid %d)\n", vl_config()->region,
			       (int)d[i].pid);
			continue;
		}
		fflush(stdout);
		fprintf(stderr, "volatile: daemon pid %d %s\n", (int)d[i].pid,
			err == -ETIMEDOUT ? "is still there after 10 s" : strerror(-err));
		status = 1;
	}
	return status;
}

void daemon_quiet_stdio(void)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	if (chdir("/") != 0) {
		/* nothing depends on the directory */
	}
}

int cmd_daemon(int argc, char **argv)
{
	static const struct option opts[] = { { "foreground", no_argument, NULL, 'f' },
					      { "cgroup", required_argument, NULL, 'c' },
					      { "interval", required_argument, NULL, 'i' },
					      { "stop", no_argument, NULL, 's' },
					      { "help", no_argument, NULL, 'h' },
					      { 0 } };
	struct watch w;
	const char *cgroup = NULL;
	int c, foreground = 0, ready = -1, lock, stop = 0, other = 0;

	/* the machine's daemon is another program's worth of options (system.c) */
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--system") == 0)
			return cmd_daemon_system(argc, argv);
	memset(&w, 0, sizeof(w));
	w.min_ms = 20;
	optind = 1;
	while ((c = next_opt(argc, argv, "+fc:i:h", opts, help)) != -1) {
		other |= c != 's';
		if (c == 's') {
			stop = 1;
		} else if (c == 'f') {
			foreground = 1;
		} else if (c == 'c') {
			cgroup = optarg;
		} else if (c == 'i') {
			uint64_t ms = size_arg("interval", optarg);

			if (ms == 0 || ms > 60000)
				die("daemon: --interval must be 1 to 60000 milliseconds");
			w.min_ms = (unsigned)ms;
		}
	}
	if (optind != argc)
		die("daemon takes no arguments (try 'volatile daemon --help')");
	if (stop && other)
		die("daemon: --stop takes no other option");
	if (stop)
		return stop_daemons();
	lock = single();
	if (!foreground) {
		daemon_detach(&ready);
		openlog("volatile", LOG_PID, LOG_DAEMON);
		daemon_use_syslog = 1;
		daemon_quiet_stdio();
	}
	daemon_register(lock);
	setup(&w, cgroup);
	if (ready >= 0) {
		if (write(ready, "", 1) != 1) {
			/* the parent is gone: nothing to tell */
		}
		close(ready);
	}

	/* at once: this also arms the cgroup v1 usage threshold */
	relieve(&w);
	vl_age_attach();
	for (;;) {
		struct pollfd pfd[4 + MAX_EVENTS] = {
			{ w.sfd, POLLIN, 0 },
			{ w.psi, POLLPRI, 0 },
			{ w.v1_level, POLLIN, 0 },
			{ w.v1_usage, POLLIN, 0 },
		};

		for (int i = 0; i < w.n_events; i++)
			pfd[4 + i] = (struct pollfd){ w.v2_events[i], POLLPRI, 0 };
		/* one wake-up: the timeout, or what the kernel signals */
		if (poll(pfd, 4 + (nfds_t)w.n_events, (int)w.sleep_ms) < 0 && errno != EINTR)
			die("daemon: poll: %s", strerror(errno));
		if (pfd[0].revents) {
			daemon_say("exiting on a signal");
			return 0;
		}
		/*
		 * The trigger of a cgroup removed since (--cgroup, a stopped
		 * service's) polls POLLERR|POLLPRI for good: stop watching it,
		 * rather than wake at once, again and again.
		 */
		if (pfd[1].revents & (POLLERR | POLLNVAL | POLLHUP)) {
			daemon_say("the PSI trigger is gone (its cgroup removed?): polling");
			close(w.psi);
			w.psi = -1;
		}
		drain(w.v1_level);
		drain(w.v1_usage);
		for (int i = 0; i < w.n_events; i++)
			if (pfd[4 + i].revents)
				rearm(&w, i, pfd[4 + i].revents);
		lock = keep_name(lock);
		if (lock < 0) {
			daemon_say("another daemon serves region %s now: exiting", vl_config()->region);
			return 0;
		}
		daemon_woke(lock);
		relieve(&w);
		/* an idle region's ages, kept from the wrap while nothing purges (DESIGN 10) */
		vl_ages_tend(&w.r, vl_now_ms());
	}
}
