/* SPDX-License-Identifier: MIT */
/*
 * system.c - root's side of the machine's daemon (DESIGN 22):
 * `volatile purge --system` and `volatile daemon --system`.
 *
 * Root maps no user's region and punches no user's file: each user found
 * with a region in a default place (sysfind.h) is served by a worker, the
 * command itself exec'd as exactly that user (`volatile system-worker`,
 * syswork.c), asked over a SOCK_SEQPACKET socket (core/sysorder.h). A
 * pass asks every worker for a REPORT at once (100 ms), then PURGEs the
 * machine's oldest region first (vl_sys_pick), up to the next one's age,
 * until the need is met or no region can give more. Every answer is
 * checked (vl_sys_answer_ok) and every wait is bounded: a worker that
 * answers wrong, late or with nothing purged is set aside for the pass;
 * one late stays busy (its answer, when it comes, is read and dropped) and
 * is killed after 10 s, then spawned again once reaped. So a user can
 * waste at most their own worker's share of a pass.
 */
#include "cli.h"
#include "daemon.h"
#include "syscg.h"
#include "sysfind.h"
#include "system.h"

#include "age.h"
#include "core/pressure.h"
#include "env.h"
#include "mem_state.h"
#include "policy.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define REPORT_MS 100
#define PURGE_MS 1000
/*
 * A worker's first answer comes after an exec and the open of its region:
 * on a loaded machine more than REPORT_MS. purge --system, which runs one
 * pass, waits this long for it. The daemon does not: a worker that never
 * answered would hold up every user's pass by this much once per spawn
 * (every BUSY_MS); one late to its first pass is asked again at the next.
 */
#define START_MS 2000
#define BUSY_MS 10000
#define PURGE_ASKS_MAX 16
#define RESCAN_MS 10000
#define RESPAWN_MS 1000
/* the workers' exit once their sockets close, before they are killed */
#define CLOSE_MS 1000
/*
 * The daemon says what it purged at most this often: under a threshold it
 * wakes every 20 ms, and a worker may claim a purge at each (system-liar.sh).
 */
#define SAY_MS 1000
/* memory cgroups watched at once (DESIGN 22): each user's in turn, the oldest holders' first */
#define WATCHED_MAX 32

static const char purge_help[] =
	"Usage: volatile purge --system [--all | --bytes SIZE] [--cgroup DIR] [--uid UID]...\n"
	"                              [--debug]\n"
	"Root only: purge the machine's oldest volatile ranges first, across every\n"
	"user's region in its default place, through a worker running as each user\n"
	"(root punches no user's file): all of them (--all, the default), or until\n"
	"at least SIZE bytes have been purged. Prints what was purged per user, and\n"
	"the total; names refused on stderr.\n"
	"\n"
	"  --cgroup DIR  only the ranges of files whose recorded holders are in this\n"
	"                memory cgroup or below it (a directory under /sys/fs/cgroup)\n"
	"  --uid UID     only this user (repeatable)\n"
	"  --debug       the workers run with VOLATILE_DEBUG=1; their stderr is\n"
	"                /dev/null (a user's process gets no descriptor of root's):\n"
	"                strace -e write a worker to read it\n";

static const char daemon_help[] =
	"Usage: volatile daemon --system [--foreground] [--uid UID]... [--debug]\n"
	"Root only: the machine's daemon. Watches the machine's memory and, when\n"
	"MemAvailable falls below VOLATILE_MIN_AVAILABLE (default 10%), purges the\n"
	"machine's oldest volatile ranges first, across every user's region in its\n"
	"default place, through a worker running as each user. It watches too each\n"
	"memory cgroup with a limit that holds some user's volatile ranges (32 at\n"
	"most): one whose headroom falls below VOLATILE_MIN_AVAILABLE of its limit\n"
	"gives up first the ranges its own processes hold. Users, and the cgroups\n"
	"they hold ranges in, are looked for again every 10 s. One per machine\n"
	"(" VL_SYS_DAEMON_FILE ").\n"
	"\n"
	"  --foreground  stay in the foreground and log to stderr; otherwise detach\n"
	"                and log to syslog\n"
	"  --uid UID     only this user (repeatable)\n"
	"  --debug       the workers run with VOLATILE_DEBUG=1 (their stderr is\n"
	"                /dev/null: strace -e write a worker to read it)\n"
	"SIGTERM or SIGINT: it closes its workers and exits, status 0.\n";

struct worker {
	struct vl_sys_user u;
	pid_t pid;            /* 0: none (never spawned, or reaped) */
	int sock;             /* root's end; -1: none */
	int found;            /* found by the last look for users */
	int answered;         /* has answered since it was spawned */
	int killed;           /* SIGKILLed, not reaped yet */
	int waiting;          /* ask not answered yet (past its deadline: busy) */
	struct vl_sys_ask ask;
	uint64_t asked_ms, deadline_ms, spawned_ms;
	struct vl_sys_answer got; /* the answer to ask, if it passed */
	int got_ok;
	int err;              /* why it was set aside in the last pass (0: it was not) */
	int asks;             /* PURGE asks in this pass */
	int doubted;          /* the daemon: set aside until the wake-up ends (pass, wake_up) */
	uint64_t spent_ms;    /* the daemon: how long its asks took in this wake-up */
	uint64_t bytes;       /* purged, over the command's run */
	uint64_t ranges;
};

struct machine {
	struct worker *w;     /* sorted by uid */
	struct vl_sys_seen *seen;
	int n;
	const uint32_t *only;
	int nonly;
	int debug;
	int last;             /* the pick's last region */
	uint32_t seq;
	int refused;          /* names refused at the last look */
	int quiet_refusals;   /* the daemon logs refusals when their count changes */
	int to_stderr;        /* purge --system: refusals are the command's own errors */
	unsigned first_ms;    /* how long a worker's first answer is waited for */
	int measured;         /* the daemon: a PURGE counts as far as memory shows it */
	int quiet;            /* the daemon: this wake-up says nothing of its purges */
	int spoke;            /* ... and this one said something */
	uint64_t said_ms;     /* when the daemon last said what it purged */
	const struct watched *cg; /* the pass's memory cgroup; NULL: the whole machine */
};

/*
 * A memory cgroup with a limit (syscg.h): one the daemon watches once a
 * worker reports unpurged bytes held in it, or the one a command names.
 */
struct watched {
	struct vl_sys_cg cg;
	struct vl_cgroup at; /* its directory alone: its own limit, not its parents' */
	int users;           /* workers that reported unpurged bytes held in it */
	uint32_t oldest;     /* the oldest age they reported */
	int efd;             /* v1 the usage threshold's eventfd, v2 memory.events; -1 */
	int psi;             /* v2 a PSI trigger on its memory.pressure; -1 */
	uint64_t armed;      /* v1: the usage the threshold is armed at (0: none) */
	int found;           /* found again at the last look */
};

static struct worker workers[VL_SYS_USERS_MAX];
static struct vl_sys_seen seen[VL_SYS_USERS_MAX];
static uint32_t only_uids[VL_SYS_USERS_MAX];

/* ---- the worker's side of the fork: exactly its user, then exec ------------------ */

static void close_from(int first)
{
	struct rlimit rl;

	if (vl_raw_close_range((unsigned)first, ~0u, 0) == 0)
		return;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur > 1u << 20)
		rl.rlim_cur = 1u << 20;
	for (int fd = first; fd < (int)rl.rlim_cur; fd++)
		close(fd);
}

/* The socket at VL_SYS_FD, 0/1/2 on /dev/null, every other fd closed. */
static int worker_fds(int sock)
{
	int null;

	if (sock == VL_SYS_FD) {
		if (fcntl(sock, F_SETFD, 0) != 0)
			return -1;
	} else if (dup2(sock, VL_SYS_FD) != VL_SYS_FD) {
		return -1;
	}
	null = open("/dev/null", O_RDWR);
	if (null < 0 || dup2(null, 0) != 0 || dup2(null, 1) != 1 || dup2(null, 2) != 2)
		return -1;
	close_from(VL_SYS_FD + 1);
	return 0;
}

/*
 * The user's uid and groups, nothing else: its passwd groups if it has an
 * entry, else none but the region file's group (a group its owner was in
 * when it made it, or chgrp'ed it). Checked afterwards, all three ids of
 * each; and setgroups must fail from now on (no capability left).
 */
static int drop_to(const struct vl_sys_user *u)
{
	struct passwd *pw = getpwuid(u->uid);
	uid_t ru, eu, su;
	gid_t gid = pw != NULL ? pw->pw_gid : u->gid, rg, eg, sg;

	if (pw != NULL ? initgroups(pw->pw_name, gid) != 0 : setgroups(0, NULL) != 0)
		return -1;
	if (setresgid(gid, gid, gid) != 0 || setresuid(u->uid, u->uid, u->uid) != 0)
		return -1;
	if (getresuid(&ru, &eu, &su) != 0 || ru != u->uid || eu != u->uid || su != u->uid)
		return -1;
	if (getresgid(&rg, &eg, &sg) != 0 || rg != gid || eg != gid || sg != gid)
		return -1;
	return setgroups(0, NULL) == 0 ? -1 : 0;
}

static void become_worker(const struct vl_sys_user *u, int sock, int debug, pid_t parent)
	__attribute__((noreturn));
static void become_worker(const struct vl_sys_user *u, int sock, int debug, pid_t parent)
{
	static char arg0[] = "volatile", arg1[] = "system-worker";
	static char path_env[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin", debug_env[] = "VOLATILE_DEBUG=1";
	char *argv[] = { arg0, arg1, NULL };
	char *envp[] = { path_env, debug ? debug_env : NULL, NULL };
	sigset_t none;

	/* what the daemon blocks and ignores would be the worker's across the exec */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (worker_fds(sock) != 0)
		_exit(127);
	/*
	 * A session of its own: no controlling terminal. In root's, a worker
	 * (its user's to ptrace) could open /dev/tty, root's terminal when the
	 * daemon runs from one (system-ctty.sh).
	 */
	if (setsid() < 0)
		_exit(127);
	if (u->uid != 0 && drop_to(u) != 0)
		_exit(127);
	/*
	 * Root's process gone (killed, even): its workers go too. Asked after
	 * the drop: a change of uids or gids clears the parent-death signal
	 * (system-pdeath.sh); the parent checked after, as it may be gone by then.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(127);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || chdir("/") != 0)
		_exit(127);
	/* a clean library state, and the user's default place found by its own code */
	execve("/proc/self/exe", argv, envp);
	_exit(127);
}

/* ---- root's side: spawning, asking, reaping ---------------------------------------- */

static void spawn(struct machine *m, struct worker *w, uint64_t now)
{
	pid_t parent = getpid(), pid;
	int sv[2];

	w->spawned_ms = now;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		w->err = errno;
		return;
	}
	pid = fork();
	if (pid == 0)
		become_worker(&w->u, sv[1], m->debug, parent);
	close(sv[1]);
	if (pid < 0) {
		w->err = errno;
		close(sv[0]);
		return;
	}
	w->pid = pid;
	w->sock = sv[0];
	w->answered = w->killed = w->waiting = 0;
}

static void lost(struct worker *w, int err)
{
	if (w->sock >= 0)
		close(w->sock);
	w->sock = -1;
	w->waiting = 0;
	w->err = err;
}

static void send_ask(struct machine *m, struct worker *w, uint32_t op, uint32_t until,
		     uint64_t bytes, unsigned ms)
{
	uint64_t now = vl_now_ms();

	if (++m->seq == 0)
		m->seq = 1;
	w->ask = (struct vl_sys_ask){ .magic = VL_SYS_MAGIC, .op = op, .seq = m->seq,
				      .until = until, .bytes = bytes };
	if (m->cg != NULL) {
		/* syscg.c checked it is a path an ask may carry */
		w->ask.cg_version = (uint32_t)m->cg->cg.version;
		w->ask.cg_len = m->cg->cg.len;
		memcpy(w->ask.cgroup, m->cg->cg.path, m->cg->cg.len);
	}
	w->got_ok = 0;
	if (send(w->sock, &w->ask, vl_sys_ask_len(&w->ask), MSG_DONTWAIT | MSG_NOSIGNAL) !=
	    (ssize_t)vl_sys_ask_len(&w->ask)) {
		/* a full socket: its worker reads no asks, as good as busy */
		if (errno != EAGAIN)
			lost(w, EPIPE);
		else
			w->err = ETIMEDOUT;
		return;
	}
	w->waiting = 1;
	w->asked_ms = now;
	w->deadline_ms = now + (w->answered || ms >= m->first_ms ? ms : m->first_ms);
}

/*
 * Read what the worker sent. A datagram answering the ask waited for ends
 * the wait: kept (got_ok) only if in time and it passes the checks; late,
 * it is dropped. Anything else is dropped. EOF: the worker is gone.
 * 1 if a datagram was read.
 */
static int take_answer(struct worker *w, int in_time)
{
	union {
		struct vl_sys_answer a;
		char more[sizeof(struct vl_sys_answer) + 1];
	} buf;
	ssize_t n = recv(w->sock, &buf, sizeof(buf), MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		lost(w, EPIPE);
		return 0;
	}
	if (!w->waiting || (size_t)n < offsetof(struct vl_sys_answer, err) ||
	    buf.a.seq != w->ask.seq)
		return 1;
	w->waiting = 0;
	/* a first answer (an exec, a region opened) is not held against the wake-up's time */
	if (in_time && w->answered)
		w->spent_ms += vl_now_ms() - w->asked_ms;
	w->answered = 1;
	if (!in_time)
		return 1;
	if (!vl_sys_answer_ok(&w->ask, &buf.a, (size_t)n, vl_age_now_of(vl_now_ms()))) {
		w->err = EPROTO;
		return 1;
	}
	w->got = buf.a;
	w->got_ok = 1;
	return 1;
}

/* Until every worker asked in this round answered or passed its deadline. */
static void collect(struct machine *m)
{
	struct pollfd pfd[VL_SYS_USERS_MAX];
	int idx[VL_SYS_USERS_MAX];

	for (;;) {
		uint64_t now = vl_now_ms(), next = UINT64_MAX;
		int k = 0;

		for (int i = 0; i < m->n; i++) {
			struct worker *w = &m->w[i];

			if (w->sock < 0 || !w->waiting || w->deadline_ms == 0)
				continue;
			if (now >= w->deadline_ms) {
				/* late: busy from now on, its answer dropped when it comes */
				w->deadline_ms = 0;
				w->err = ETIMEDOUT;
				if (w->answered)
					w->spent_ms += now - w->asked_ms;
				continue;
			}
			if (w->deadline_ms < next)
				next = w->deadline_ms;
			pfd[k] = (struct pollfd){ w->sock, POLLIN, 0 };
			idx[k++] = i;
		}
		if (k == 0)
			return;
		if (poll(pfd, (nfds_t)k, (int)(next - now)) < 0 && errno != EINTR)
			return;
		for (int j = 0; j < k; j++)
			if (pfd[j].revents)
				take_answer(&m->w[idx[j]], 1);
	}
}

/*
 * Between passes: late answers read and dropped (the worker is free
 * again), one busy for BUSY_MS killed, the dead reaped, and a worker
 * spawned for each user found that has none (not more often than once
 * every RESPAWN_MS; RESCAN_MS after one that never answered).
 */
static void tend(struct machine *m)
{
	uint64_t now = vl_now_ms();

	for (int i = 0; i < m->n; i++) {
		struct worker *w = &m->w[i];
		int status;

		/* bounded: a worker may send datagrams as fast as they are read */
		for (int k = 0; k < 64 && w->sock >= 0 && w->waiting && take_answer(w, 0); k++)
			;
		if (w->pid > 0 && !w->killed && w->waiting && now - w->asked_ms >= BUSY_MS) {
			daemon_say("uid %u: its worker (pid %d) is busy for %d s: killed", w->u.uid,
				   (int)w->pid, BUSY_MS / 1000);
			kill(w->pid, SIGKILL);
			w->killed = 1;
			lost(w, ETIMEDOUT);
		}
		if (w->pid > 0 && waitpid(w->pid, &status, WNOHANG) == w->pid) {
			w->pid = 0;
			lost(w, w->err ? w->err : EPIPE);
		}
		/* one that never answered (its exec failed?) is tried again at the look's pace */
		if (w->found && w->pid == 0 &&
		    (w->spawned_ms == 0 ||
		     now - w->spawned_ms >= (w->answered ? RESPAWN_MS : RESCAN_MS)))
			spawn(m, w, now);
	}
}

/* The names refused at a look (vl_sys_find says at most 65 a call). */
#define REFUSALS_KEPT 72
struct refusals {
	int n;
	char line[REFUSALS_KEPT][160];
};

static void keep_refused(const char *path, const char *why, void *ctx)
{
	struct refusals *r = ctx;

	if (r->n < REFUSALS_KEPT)
		snprintf(r->line[r->n], sizeof(r->line[0]), "%s refused: %s", path, why);
	r->n++;
}

/*
 * Look for users again: each found keeps its worker, or gets one at the
 * next tend; a worker whose user is no longer found is closed (it exits
 * on EOF) and forgotten once reaped.
 */
static void scan(struct machine *m)
{
	static struct vl_sys_user found[VL_SYS_USERS_MAX];
	static struct refusals r;
	int nf;

	r.n = 0;
	nf = vl_sys_find(found, VL_SYS_USERS_MAX, m->only, m->nonly, keep_refused, &r);
	/* said at the first look, then when their number changes: not every 10 s */
	if (!m->quiet_refusals || r.n != m->refused)
		for (int i = 0; i < r.n && i < REFUSALS_KEPT; i++) {
			if (m->to_stderr)
				fprintf(stderr, "volatile: %s\n", r.line[i]);
			else
				daemon_say("%s", r.line[i]);
		}
	m->refused = r.n;
	for (int i = 0; i < m->n; i++)
		m->w[i].found = 0;
	for (int j = 0; j < nf; j++) {
		int i = 0;

		while (i < m->n && m->w[i].u.uid != found[j].uid)
			i++;
		if (i == m->n) {
			/* a slot left by a user gone and reaped, else a new one */
			for (i = 0; i < m->n && (m->w[i].found || m->w[i].pid > 0); i++)
				;
			if (i == m->n && m->n == VL_SYS_USERS_MAX)
				continue;
			if (i == m->n)
				m->n++;
			memset(&m->w[i], 0, sizeof(m->w[i]));
			m->w[i].sock = -1;
		}
		m->w[i].u = found[j];
		m->w[i].found = 1;
	}
	for (int i = 0; i < m->n; i++)
		if (!m->w[i].found && m->w[i].sock >= 0)
			lost(&m->w[i], 0);
}

/* MemAvailable now, or the headroom of the pass's cgroup (0: unreadable). */
static uint64_t available_now(const struct machine *m)
{
	struct vl_memstate ms;

	if (m->cg != NULL)
		return vl_memstate_read(&m->cg->at, &ms) == 0 ? ms.cg_headroom : 0;
	return vl_memstate_read(NULL, &ms) == 0 ? ms.available : 0;
}

/*
 * What w's answer to a PURGE counts toward the pass's need, MemAvailable
 * having been before when it was asked. A worker is its user's, who may
 * say any number (DESIGN 22): by hand (purge --system) its word is taken;
 * the daemon, whose need is the machine's memory, counts no more than the
 * memory freed meanwhile shows, so that no user's word (nor ranges over
 * holes) ends the others' turn (system-liar.sh).
 */
static uint64_t purge_credit(const struct machine *m, const struct worker *w, uint64_t before)
{
	uint64_t after, rise;

	if (!m->measured)
		return w->got.purged;
	after = available_now(m);
	rise = after > before ? after - before : 0;
	return w->got.purged < rise ? w->got.purged : rise;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

/*
 * One pass (DESIGN 22): a REPORT to every free worker at once, then the
 * oldest region first, PURGE up to the next one's oldest age, until need
 * bytes are purged (as purge_credit counts them) or no region can give
 * more. With cg, every ask names that memory cgroup: its holders' ranges
 * only, and a PURGE counts as far as its headroom rose. Returns the bytes
 * purged as the workers said (saturated); *nothing: no region reported
 * anything unpurged.
 */
static uint64_t pass(struct machine *m, uint64_t need, int *nothing, const struct watched *cg)
{
	uint64_t done = 0, said = 0, credit;

	m->cg = cg;
	tend(m);
	*nothing = 1;
	for (int i = 0; i < m->n; i++) {
		struct worker *w = &m->w[i];

		w->asks = 0;
		w->err = w->sock < 0 ? EPIPE : w->waiting ? ETIMEDOUT : 0;
		w->got_ok = 0; /* not asked: no answer of an earlier ask taken for this one's */
		/*
		 * A doubted one is not even asked to REPORT: a look for the
		 * cgroups is a pass a cgroup, and each watched cgroup a pass a
		 * wake-up, so REPORTs answered just in time would cost the
		 * others REPORT_MS times that many (system-cg-slow-report.sh).
		 */
		if (w->found && w->sock >= 0 && !w->waiting && !w->doubted)
			send_ask(m, w, VL_SYS_REPORT, 0, 0, REPORT_MS);
	}
	collect(m);
	for (int i = 0; i < m->n; i++) {
		struct worker *w = &m->w[i];
		int ok = w->got_ok && w->got.err == 0;

		if (w->got_ok && w->got.err != 0)
			w->err = w->got.err;
		if (m->measured && w->spent_ms >= PURGE_MS)
			w->doubted = 1;
		m->seen[i] = (struct vl_sys_seen){ ok ? w->got.oldest : 0, ok ? w->got.unpurged : 0,
						   ok && w->got.oldest != 0 && !w->doubted };
		if (ok && w->got.oldest != 0)
			*nothing = 0;
	}
	/* --all (need UINT64_MAX): to the end, whatever a worker said it purged */
	while (need == UINT64_MAX || done < need) {
		uint32_t until;
		int i = vl_sys_pick(m->seen, m->n, m->last, vl_age_now_of(vl_now_ms()), &until);
		struct worker *w;
		uint64_t before;

		if (i < 0)
			break;
		m->last = i;
		w = &m->w[i];
		m->seen[i].usable = 0;
		if (w->sock < 0 || w->waiting || w->asks >= PURGE_ASKS_MAX)
			continue;
		w->asks++;
		before = m->measured ? available_now(m) : 0;
		send_ask(m, w, VL_SYS_PURGE, until, need == UINT64_MAX ? UINT64_MAX : need - done,
			 PURGE_MS);
		collect(m);
		if (!w->got_ok || w->got.err != 0) {
			if (w->got_ok)
				w->err = w->got.err;
			continue;
		}
		credit = purge_credit(m, w, before);
		/*
		 * Memory showed less than it said (a liar, or memory taken
		 * meanwhile), or its asks took PURGE_MS in all: not asked
		 * again this wake-up. A worker answering "purged" slowly would
		 * else be asked PURGE_ASKS_MAX times a pass while the others
		 * wait (system-liar-slow.sh); the time, since a busy machine's
		 * memory may rise as much as a small lie says.
		 */
		if (m->measured && (credit < w->got.purged || w->spent_ms >= PURGE_MS))
			w->doubted = 1;
		done = add_sat(done, credit);
		said = add_sat(said, w->got.purged);
		/* what it says, for the log: saturated, as a worker may say 2^64 - 1 */
		w->bytes = add_sat(w->bytes, w->got.purged);
		w->ranges = add_sat(w->ranges, w->got.ranges);
		/* purged nothing: set aside for the pass, as the answers say it is done */
		m->seen[i] = (struct vl_sys_seen){ w->got.oldest, w->got.unpurged,
						   w->got.purged != 0 && w->got.oldest != 0 &&
							   !w->doubted };
	}
	return said;
}

/* Every worker's socket closed (it exits on EOF), waited for, killed past CLOSE_MS. */
static void close_workers(struct machine *m)
{
	uint64_t end = vl_now_ms() + CLOSE_MS;
	int left;

	for (int i = 0; i < m->n; i++)
		if (m->w[i].sock >= 0) {
			/* why each was set aside stays, for purge --system to say */
			close(m->w[i].sock);
			m->w[i].sock = -1;
		}
	do {
		left = 0;
		for (int i = 0; i < m->n; i++) {
			struct worker *w = &m->w[i];
			int status;

			if (w->pid > 0 && waitpid(w->pid, &status, WNOHANG) == w->pid)
				w->pid = 0;
			left += w->pid > 0;
		}
		if (left) {
			struct timespec ts = { 0, 5 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
	} while (left && vl_now_ms() < end);
	for (int i = 0; i < m->n; i++) {
		struct worker *w = &m->w[i];
		int status;

		if (w->pid <= 0)
			continue;
		kill(w->pid, SIGKILL);
		while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
			;
		w->pid = 0;
	}
}

/* ---- the commands ------------------------------------------------------------------ */

static void root_only(const char *what)
{
	if (geteuid() != 0)
		die("%s --system: root only (it serves every user's region)", what);
}

static void uid_option(const char *what, const char *s, struct machine *m)
{
	const char *why;

	if (m->nonly == VL_SYS_USERS_MAX)
		die("%s: more than %d --uid", what, VL_SYS_USERS_MAX);
	why = vl_sys_uid_of(s, strlen(s), &only_uids[m->nonly]);
	if (why != NULL)
		die("%s: --uid '%s': %s", what, s, why);
	m->nonly++;
}

static void machine_init(struct machine *m)
{
	memset(m, 0, sizeof(*m));
	m->w = workers;
	m->seen = seen;
	m->only = only_uids;
	m->last = -1;
	m->first_ms = REPORT_MS;
}

static const char *why_not(int err)
{
	if (err == ETIMEDOUT)
		return "no answer in time";
	if (err == EPIPE)
		return "its worker exited";
	if (err == EPROTO)
		return "a wrong answer";
	return strerror(err);
}

int cmd_purge_system(int argc, char **argv)
{
	static const struct option opts[] = { { "system", no_argument, NULL, 's' },
					      { "all", no_argument, NULL, 'a' },
					      { "bytes", required_argument, NULL, 'b' },
					      { "cgroup", required_argument, NULL, 'c' },
					      { "uid", required_argument, NULL, 'u' },
					      { "debug", no_argument, NULL, 'd' },
					      { "help", no_argument, NULL, 'h' },
					      { 0 } };
	static struct watched cg; /* some KiB: not on the stack */
	const char *cgroup = NULL;
	struct machine m;
	uint64_t need = UINT64_MAX, ranges = 0, bytes = 0;
	int c, all = 0, by_bytes = 0, nothing;

	machine_init(&m);
	optind = 1;
	while ((c = next_opt(argc, argv, "+ab:h", opts, purge_help)) != -1) {
		if (c == 'a') {
			all = 1;
		} else if (c == 'b') {
			by_bytes = 1;
			need = size_arg("size", optarg);
		} else if (c == 'c') {
			cgroup = optarg;
		} else if (c == 'u') {
			uid_option("purge", optarg, &m);
		} else if (c == 'd') {
			m.debug = 1;
		}
	}
	if (optind != argc)
		die("purge takes no arguments (try 'volatile purge --system --help')");
	if (all && by_bytes)
		die("purge: --all and --bytes exclude each other");
	root_only("purge");
	if (cgroup != NULL) {
		int err = vl_sys_cg_at(cgroup, &cg.cg);

		if (err)
			die("purge: --cgroup %s: not a memory cgroup directory (%s)", cgroup,
			    strerror(-err));
	}
	signal(SIGPIPE, SIG_IGN);
	vl_age_attach();
	m.to_stderr = 1;
	m.first_ms = START_MS;
	scan(&m);
	pass(&m, need, &nothing, cgroup != NULL ? &cg : NULL);
	close_workers(&m);
	for (int i = 0; i < m.n; i++) {
		const struct worker *w = &m.w[i];

		if (w->ranges == 0 && w->err != 0)
			printf("uid %u: not purged (%s)\n", w->u.uid, why_not(w->err));
		else
			printf("uid %u: purged %llu range%s, %llu bytes\n", w->u.uid,
			       (unsigned long long)w->ranges, plural(w->ranges),
			       (unsigned long long)w->bytes);
		ranges = add_sat(ranges, w->ranges);
		bytes = add_sat(bytes, w->bytes);
	}
	printf("purged %llu range%s, %llu bytes\n", (unsigned long long)ranges, plural(ranges),
	       (unsigned long long)bytes);
	return fflush(stdout) == 0 ? 0 : EXIT_USAGE;
}

/*
 * One machine's daemon: an flock on VL_SYS_DAEMON_FILE, root's file in
 * root's /run, never followed through a symlink, one link, written by root
 * alone, readable by all (every user's status reads it: daemons.c).
 */
static int machine_single(void)
{
	struct stat st;
	int fd = open(VL_SYS_DAEMON_FILE,
		      O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0644);

	if (fd < 0)
		die("daemon --system: %s: %s", VL_SYS_DAEMON_FILE, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 || st.st_nlink != 1)
		die("daemon --system: %s refused: not a file of root's alone", VL_SYS_DAEMON_FILE);
	if (fchmod(fd, 0644) != 0)
		die("daemon --system: %s: %s", VL_SYS_DAEMON_FILE, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) != 0)
		die("daemon --system: already running (%s)", VL_SYS_DAEMON_FILE);
	return fd;
}

/* A line of what the daemon purged: said unless the wake-up is quiet (SAY_MS). */
static void say_purge(struct machine *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say_purge(struct machine *m, const char *fmt, ...)
{
	char line[PATH_MAX + 256];
	va_list ap;

	if (m->quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	daemon_say("%s", line);
	m->spoke = 1;
}

/* A region doubted (pass) is asked again at the next wake-up: its time starts again. */
static void wake_up(struct machine *m)
{
	for (int i = 0; i < m->n; i++) {
		m->w[i].doubted = 0;
		m->w[i].spent_ms = 0;
	}
}

/* One doubted is not asked, and may hold something: the wake-up is not idle. */
static int any_doubted(const struct machine *m)
{
	for (int i = 0; i < m->n; i++)
		if (m->w[i].doubted)
			return 1;
	return 0;
}

/*
 * The memory rule, across the machine: below VOLATILE_MIN_AVAILABLE,
 * passes toward it with some room (vl_purge_need), up to
 * VL_DAEMON_MEMORY_ROUNDS while each frees something. How long to sleep.
 * (The watched cgroups' rule comes first: relieve_cgroups.)
 */
static unsigned relieve(struct machine *m, struct daemon_fall *fall, unsigned min_ms)
{
	struct vl_memstate ms;
	uint64_t threshold = 0, rate = 0;
	int nothing = 0;

	for (int round = 0; round < VL_DAEMON_MEMORY_ROUNDS; round++) {
		uint64_t need, got;

		if (vl_memstate_read(NULL, &ms) != 0)
			return DAEMON_FAR_MS; /* /proc/meminfo unreadable: nothing to plan with */
		threshold = vl_threshold_bytes(&vl_config()->min_available, ms.total);
		if (round == 0) {
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			rate = daemon_fall_rate(fall, ms.available,
						(uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
		}
		need = vl_purge_need(ms.available, threshold, VL_MEMORY_ROOM);
		if (need == 0)
			break;
		got = pass(m, need, &nothing, NULL);
		if (got == 0)
			break;
		say_purge(m, "purged %llu bytes: memory %llu bytes available < %llu",
			   (unsigned long long)got, (unsigned long long)ms.available,
			   (unsigned long long)threshold);
	}
	if (nothing && !any_doubted(m))
		return DAEMON_IDLE_MS; /* nothing unpurged anywhere, whatever memory does */
	return daemon_memory_sleep(fall, ms.available, threshold, rate, min_ms);
}

/*
 * Each user's purges since the last say, unless the wake-up is quiet
 * (SAY_MS since the last one that said something): they add up meanwhile.
 */
static void log_purges(struct machine *m)
{
	if (m->quiet)
		return;
	for (int i = 0; i < m->n; i++) {
		struct worker *w = &m->w[i];

		if (w->ranges != 0)
			say_purge(m, "uid %u: purged %llu range%s, %llu bytes", w->u.uid,
				  (unsigned long long)w->ranges, plural(w->ranges),
				  (unsigned long long)w->bytes);
		w->ranges = w->bytes = 0;
	}
	if (m->spoke)
		m->said_ms = vl_now_ms();
	m->spoke = 0;
}

/* ---- memory cgroups (DESIGN 22) ----------------------------------------------------- */

struct cgroups {
	struct watched w[WATCHED_MAX];
	int n;
	int unwatched; /* with holders but past WATCHED_MAX at the last look: said when it changes */
	int unkept;    /* limited ones past syscg.h's bounds at the last look: likewise */
};

static struct cgroups cgroups;
static struct vl_sys_cgs found_cgs;

/* A limited cgroup with holders at a look, and how old their oldest range is. */
struct candidate {
	int i;         /* in found_cgs */
	int users;
	int turn;      /* the least of its users' counts of cgroups they reported before it */
	uint32_t oldest;
	uint32_t behind; /* how far the oldest is behind the look's end, for the order */
};
static struct candidate cands[VL_SYS_CGS_MAX];
/* per worker, the cgroups it reported unpurged bytes in so far in this look */
static int reported[VL_SYS_USERS_MAX];

/* c's headroom and threshold now (VOLATILE_MIN_AVAILABLE of its limit). 0, or -1. */
static int cg_state(const struct watched *c, struct vl_memstate *ms, uint64_t *threshold)
{
	if (vl_memstate_read(&c->at, ms) != 0 || ms->cg_limit == VL_UNLIMITED)
		return -1; /* removed, or its limit lifted: nothing of its own to relieve */
	*threshold = vl_threshold_bytes(&vl_config()->min_available, ms->total);
	return 0;
}

/*
 * v1: the usage threshold at its limit minus its threshold (armed again
 * at each wake-up, relieve_cgroups, if that moved).
 */
static void cg_arm(struct watched *c)
{
	struct vl_memstate ms;
	uint64_t threshold;

	if (c->cg.version == 1 && cg_state(c, &ms, &threshold) == 0)
		daemon_v1_usage(c->at.dir, ms.cg_limit, threshold, &c->efd, &c->armed);
}

/* What wakes the daemon for c: v1 its usage threshold, v2 memory.events and PSI. */
static int cg_watch(struct watched *c)
{
	char path[PATH_MAX + 32];

	c->efd = c->psi = -1;
	c->armed = 0;
	if (vl_cgroup_at(c->cg.dir, &c->at) != 0)
		return -1;
	if (c->cg.version == 1) {
		cg_arm(c);
	} else {
		/* its own memory.high and memory.max events, and those below it */
		snprintf(path, sizeof(path), "%s/memory.events", c->at.dir);
		c->efd = daemon_events_open(path);
		c->psi = daemon_psi_trigger(c->at.dir);
	}
	daemon_say("watching cgroup v%d %s (holders of %d user%s)", c->cg.version, c->cg.dir,
		   c->users, plural((uint64_t)c->users));
	return 0;
}

static void cg_unwatch(struct watched *c, const char *why)
{
	if (c->efd >= 0)
		close(c->efd);
	if (c->psi >= 0)
		close(c->psi);
	c->efd = c->psi = -1;
	daemon_say("no longer watching cgroup v%d %s: %s", c->cg.version, c->cg.dir, why);
}

static int cg_index(const struct cgroups *cs, const struct vl_sys_cg *cg)
{
	for (int j = 0; j < cs->n; j++)
		if (cs->w[j].cg.version == cg->version && strcmp(cs->w[j].cg.path, cg->path) == 0)
			return j;
	return -1;
}

/*
 * A REPORT naming each limited cgroup to every worker: those in which
 * some worker reports unpurged bytes, in cands, in turns across users
 * (each one's first cgroup, in the walk's order, before any one's second),
 * within a turn the oldest first. The number of them. By age alone, one
 * user claiming every cgroup, its ranges an hour old, would push the
 * others' out of the WATCHED_MAX (system-cg-crowd.sh): a worker's word
 * may move only its own user's ranges in the order.
 */
static int cg_candidates(struct machine *m)
{
	static struct watched probe; /* some KiB: not on the stack */
	uint32_t now;
	int k = 0;

	for (int j = 0; j < m->n; j++)
		reported[j] = 0;
	for (int i = 0; i < found_cgs.n && m->n > 0; i++) {
		int nothing;

		probe.cg = found_cgs.cg[i];
		pass(m, 0, &nothing, &probe);
		if (nothing)
			continue;
		cands[k] = (struct candidate){ i, 0, VL_SYS_CGS_MAX, 0, 0 };
		for (int j = 0; j < m->n; j++) {
			if (!m->seen[j].usable)
				continue;
			cands[k].users++;
			if (reported[j] < cands[k].turn)
				cands[k].turn = reported[j];
			reported[j]++;
			/* the age behind the other by more (the clock wraps: DESIGN 10) */
			if (cands[k].oldest == 0 ||
			    (uint32_t)(cands[k].oldest - m->seen[j].oldest) < 0x80000000u)
				cands[k].oldest = m->seen[j].oldest;
		}
		k++;
	}
	now = vl_age_now_of(vl_now_ms());
	for (int i = 0; i < k; i++)
		cands[i].behind = now - cands[i].oldest;
	/* insertion sort, by turn, then the oldest first: a few hundred at most */
	for (int i = 1; i < k; i++) {
		struct candidate c = cands[i];
		int j = i;

		for (; j > 0 && (cands[j - 1].turn > c.turn ||
				 (cands[j - 1].turn == c.turn && cands[j - 1].behind < c.behind));
		     j--)
			cands[j] = cands[j - 1];
		cands[j] = c;
	}
	return k;
}

/*
 * Look for the cgroups to watch (at start and with each look for users):
 * the limited ones (syscg.c) in which some worker reports unpurged bytes,
 * at most WATCHED_MAX, in cg_candidates' order. Each that starts or
 * stops being watched is said.
 */
static void look_at_cgroups(struct machine *m, struct cgroups *cs)
{
	struct vl_memstate ms;
	int k, watch, n = 0;

	/* the threshold off: no cgroup is relieved, none is worth its workers' REPORTs */
	if (!vl_threshold_on(&vl_config()->min_available) || vl_memstate_read(NULL, &ms) != 0 ||
	    vl_sys_cg_find(&found_cgs, ms.mem_total) != 0)
		found_cgs.n = found_cgs.more = found_cgs.cut = 0;
	if (found_cgs.more + found_cgs.cut != cs->unkept && found_cgs.more + found_cgs.cut != 0)
		daemon_say("memory cgroups: %d limited ones kept (at most %d), %d more not; the walk %s",
			   found_cgs.n, VL_SYS_CGS_MAX, found_cgs.more,
			   found_cgs.cut ? "stopped short (4096 directories, depth 32)" : "saw all");
	cs->unkept = found_cgs.more + found_cgs.cut;
	k = cg_candidates(m);
	watch = k < WATCHED_MAX ? k : WATCHED_MAX;
	for (int j = 0; j < cs->n; j++)
		cs->w[j].found = 0;
	for (int i = 0; i < watch; i++) {
		int j = cg_index(cs, &found_cgs.cg[cands[i].i]);

		if (j >= 0) {
			cs->w[j].found = 1;
			cs->w[j].users = cands[i].users;
			cs->w[j].oldest = cands[i].oldest;
		}
	}
	for (int j = 0; j < cs->n; j++) {
		if (!cs->w[j].found)
			cg_unwatch(&cs->w[j], "no user's volatile ranges held in it, or gone");
		else if (n++ != j)
			cs->w[n - 1] = cs->w[j];
	}
	cs->n = n;
	for (int i = 0; i < watch && cs->n < WATCHED_MAX; i++) {
		struct watched *c = &cs->w[cs->n];

		if (cg_index(cs, &found_cgs.cg[cands[i].i]) >= 0)
			continue;
		c->cg = found_cgs.cg[cands[i].i];
		c->users = cands[i].users;
		c->oldest = cands[i].oldest;
		c->found = 1;
		if (cg_watch(c) == 0)
			cs->n++;
	}
	if (k - watch != cs->unwatched && k > watch)
		daemon_say("%d more memory cgroups hold volatile ranges: not watched (at most %d, "
			   "each user's in turn, those of the oldest ranges first)",
			   k - watch, WATCHED_MAX);
	cs->unwatched = k - watch;
}

/*
 * The rule of each watched cgroup, before the machine's: below its
 * threshold, passes naming it (its holders' ranges only) toward the
 * threshold with room, up to VL_DAEMON_MEMORY_ROUNDS while each frees
 * something. Its headroom is its own limit's, not MemAvailable: when the
 * machine is the tighter, the machine's rule is the one, in its order
 * across every cgroup. 1 if anything was purged (look again soon).
 */
static int relieve_cgroups(struct machine *m, struct cgroups *cs)
{
	int pressed = 0;

	for (int j = 0; j < cs->n; j++) {
		struct watched *c = &cs->w[j];

		for (int round = 0; round < VL_DAEMON_MEMORY_ROUNDS; round++) {
			struct vl_memstate ms;
			uint64_t threshold, need, got;
			int nothing;

			if (cg_state(c, &ms, &threshold) != 0)
				break;
			if (round == 0 && c->cg.version == 1)
				daemon_v1_usage(c->at.dir, ms.cg_limit, threshold, &c->efd, &c->armed);
			need = vl_purge_need(ms.cg_headroom, threshold, VL_MEMORY_ROOM);
			if (need == 0)
				break;
			got = pass(m, need, &nothing, c);
			if (got == 0)
				break;
			pressed = 1;
			say_purge(m, "purged %llu bytes: cgroup v%d %s: %llu bytes available < %llu",
				   (unsigned long long)got, c->cg.version, c->cg.dir,
				   (unsigned long long)ms.cg_headroom, (unsigned long long)threshold);
		}
	}
	return pressed;
}

/* Each watched cgroup's two fds in pfd (-1: poll skips it). How many pfd entries. */
static int cg_pollfds(const struct cgroups *cs, struct pollfd *pfd)
{
	for (int j = 0; j < cs->n; j++) {
		const struct watched *c = &cs->w[j];

		pfd[2 * j] = (struct pollfd){ c->efd, c->cg.version == 1 ? POLLIN : POLLPRI, 0 };
		pfd[2 * j + 1] = (struct pollfd){ c->psi, POLLPRI, 0 };
	}
	return 2 * cs->n;
}

/* What poll said of each: an eventfd drained, memory.events read again, a gone trigger closed. */
static void cg_events(struct cgroups *cs, const struct pollfd *pfd)
{
	for (int j = 0; j < cs->n; j++) {
		struct watched *c = &cs->w[j];
		short ev = pfd[2 * j].revents;
		uint64_t count;

		if (ev && c->cg.version == 1) {
			if ((ev & (POLLERR | POLLNVAL | POLLHUP)) ||
			    (read(c->efd, &count, sizeof(count)) < 0 && errno != EAGAIN)) {
				close(c->efd);
				c->efd = -1;
				c->armed = 0;
			}
		} else if (ev && daemon_events_reread(c->efd, ev) != 0) {
			c->efd = -1;
		}
		if (pfd[2 * j + 1].revents & (POLLERR | POLLNVAL | POLLHUP)) {
			close(c->psi);
			c->psi = -1;
		}
	}
}

int cmd_daemon_system(int argc, char **argv)
{
	static const struct option opts[] = { { "system", no_argument, NULL, 's' },
					      { "foreground", no_argument, NULL, 'f' },
					      { "uid", required_argument, NULL, 'u' },
					      { "debug", no_argument, NULL, 'd' },
					      { "help", no_argument, NULL, 'h' },
					      { 0 } };
	char bad[PATH_MAX + 128], a[32];
	struct daemon_fall fall = { 0, 0 };
	struct machine m;
	uint64_t scanned;
	unsigned sleep_ms;
	sigset_t mask;
	int c, foreground = 0, ready = -1, lock, sfd, psi;

	machine_init(&m);
	optind = 1;
	while ((c = next_opt(argc, argv, "+fh", opts, daemon_help)) != -1) {
		if (c == 'f')
			foreground = 1;
		else if (c == 'u')
			uid_option("daemon", optarg, &m);
		else if (c == 'd')
			m.debug = 1;
	}
	if (optind != argc)
		die("daemon takes no arguments (try 'volatile daemon --system --help')");
	root_only("daemon");
	lock = machine_single();
	if (!foreground) {
		daemon_detach(&ready);
		openlog("volatile", LOG_PID, LOG_DAEMON);
		daemon_use_syslog = 1;
		daemon_quiet_stdio();
	}
	daemon_register(lock);
	if (vl_env_refused(bad, sizeof(bad)))
		daemon_say("%s: ignored", bad);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		die("daemon: %s", strerror(errno));
	psi = daemon_psi_trigger(NULL);
	vl_age_attach();
	scan(&m);
	m.quiet_refusals = 1;
	m.measured = 1;
	daemon_say("watching the machine's memory: purging when available memory < %s, "
		   "across the regions of %d user%s",
		   threshold_text(&vl_config()->min_available, a, sizeof(a)), m.n,
		   plural((uint64_t)m.n));
	/* the first look waits for the workers' first answers, as purge --system does */
	m.first_ms = START_MS;
	look_at_cgroups(&m, &cgroups);
	m.first_ms = REPORT_MS;
	scanned = vl_now_ms();
	if (ready >= 0) {
		if (write(ready, "", 1) != 1) {
			/* the parent is gone: nothing to tell */
		}
		close(ready);
	}
	sleep_ms = 0;
	for (;;) {
		struct pollfd pfd[2 + 2 * WATCHED_MAX] = { { sfd, POLLIN, 0 }, { psi, POLLPRI, 0 } };
		nfds_t nfds = 2 + (nfds_t)cg_pollfds(&cgroups, pfd + 2);
		int pressed;

		if (poll(pfd, nfds, (int)sleep_ms) < 0 && errno != EINTR)
			die("daemon: poll: %s", strerror(errno));
		if (pfd[0].revents) {
			daemon_say("exiting on a signal: closing %d worker%s", m.n, plural((uint64_t)m.n));
			close_workers(&m);
			return 0;
		}
		if (pfd[1].revents & (POLLERR | POLLNVAL | POLLHUP)) {
			daemon_say("the PSI trigger is gone: polling");
			close(psi);
			psi = -1;
		}
		cg_events(&cgroups, pfd + 2);
		daemon_woke(lock);
		/* the look, the cgroups' rule and the machine's share one wake-up's time */
		wake_up(&m);
		if (vl_now_ms() - scanned >= RESCAN_MS) {
			scan(&m);
			look_at_cgroups(&m, &cgroups);
			scanned = vl_now_ms();
		}
		m.quiet = vl_now_ms() - m.said_ms < SAY_MS;
		pressed = relieve_cgroups(&m, &cgroups);
		sleep_ms = relieve(&m, &fall, 20);
		/* a cgroup still short after its rounds is looked at again soon */
		if (pressed && sleep_ms > 20)
			sleep_ms = 20;
		log_purges(&m);
		/* a busy worker is killed on time even while memory is plentiful */
		tend(&m);
	}
}
