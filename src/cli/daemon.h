/* SPDX-License-Identifier: MIT */
/*
 * daemon.h - what the user's daemon (daemon.c, DESIGN 8) and the
 * machine's (system.c, DESIGN 22) share: the log, the PSI trigger, the
 * cgroup events, the poll in proportion to how near memory is to its
 * threshold, detaching.
 */
#ifndef VL_CLI_DAEMON_H
#define VL_CLI_DAEMON_H

#include <stdint.h>

/* the longest sleep with something to purge (memory far above the threshold) */
#define DAEMON_FAR_MS 1000
/* ... and with nothing to purge */
#define DAEMON_IDLE_MS 1000

/* Log one line: to stderr ("volatile daemon: ..."), or syslog once detached. */
extern int daemon_use_syslog;
void daemon_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * A PSI trigger (some stall in a 2 s window) on cgroup_dir's
 * memory.pressure (v2), or the machine's /proc/pressure/memory (NULL):
 * an fd to poll for POLLPRI, or -1 (said why) to poll on time alone.
 */
int daemon_psi_trigger(const char *cgroup_dir);

/*
 * cgroup v1: an eventfd the kernel signals per args on dir's file
 * (cgroup.event_control: "low" on memory.pressure_level, a usage on
 * memory.usage_in_bytes), or -1.
 */
int daemon_v1_event(const char *dir, const char *file, const char *args);
/*
 * cgroup v1: *fd the usage threshold of dir at limit - threshold, which
 * the kernel signals when usage crosses it; armed again only when that
 * value moves (*armed: the one armed, 0 none). Nothing for no limit.
 */
void daemon_v1_usage(const char *dir, uint64_t limit, uint64_t threshold, int *fd,
		     uint64_t *armed);
/*
 * cgroup v2: a memory.events (or .local) file opened and read once: the
 * kernel flags it for poll (POLLPRI) when a count changes, until it is
 * read again (daemon_events_reread). -1 if it cannot be.
 */
int daemon_events_open(const char *path);
/* Read again after poll flagged it: 0, or -1 and closed (its cgroup removed). */
int daemon_events_reread(int fd, short revents);

/* Available memory at the last look, and when (CLOCK_MONOTONIC ns, 0: none yet). */
struct daemon_fall {
	uint64_t last_avail;
	uint64_t last_look;
};
/* The rate of fall to plan for (vl_fall_rate), of a look at now_ns that saw available. */
uint64_t daemon_fall_rate(const struct daemon_fall *f, uint64_t available, uint64_t now_ns);
/*
 * The last look of a wake-up (after its purges): remembered, and how long
 * to sleep: as long as available takes to fall to threshold at rate,
 * within min_ms and DAEMON_FAR_MS.
 */
unsigned daemon_memory_sleep(struct daemon_fall *f, uint64_t available, uint64_t threshold,
			     uint64_t rate, unsigned min_ms);

/* Fork into the background; the parent exits once the child writes a byte to *ready. */
void daemon_detach(int *ready);
/* 0, 1 and 2 on /dev/null, and the directory /. */
void daemon_quiet_stdio(void);

#endif
