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

static const char purge_help[] =
	"Usage: volatile purge --system [--all | --bytes SIZE] [--uid UID]... [--debug]\n"
	"Root only: purge the machine's oldest volatile ranges first, across every\n"
	"user's region in its default place, through a worker running as each user\n"
	"(root punches no user's file): all of them (--all, the default), or until\n"
	"at least SIZE bytes have been purged. Prints what was purged per user, and\n"
	"the total; names refused on stderr.\n"
	"\n"
	"  --uid UID   only this user (repeatable)\n"
	"  --debug     the workers run with VOLATILE_DEBUG=1; their stderr is /dev/null\n"
	"              (a user's process gets no descriptor of root's): strace -e write\n"
	"              a worker to read it\n";

static const char daemon_help[] =
	"Usage: volatile daemon --system [--foreground] [--uid UID]... [--debug]\n"
	"Root only: the machine's daemon. Watches the machine's memory and, when\n"
	"MemAvailable falls below VOLATILE_MIN_AVAILABLE (default 10%), purges the\n"
	"machine's oldest volatile ranges first, across every user's region in its\n"
	"default place, through a worker running as each user. Users are looked for\n"
	"again every 10 s. One per machine (" VL_SYS_DAEMON_FILE ").\n"
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
	int doubted;          /* the daemon: set aside until the wake-up ends (pass, relieve) */
	uint64_t purge_ms;    /* the daemon: how long its PURGEs took in this wake-up */
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

/* MemAvailable now (0: unreadable). */
static uint64_t available_now(void)
{
	struct vl_memstate ms;

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
	after = available_now();
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
 * more. Returns the bytes purged as the workers said (saturated);
 * *nothing: no region reported anything unpurged.
 */
static uint64_t pass(struct machine *m, uint64_t need, int *nothing)
{
	uint64_t done = 0, said = 0, credit;

	tend(m);
	*nothing = 1;
	for (int i = 0; i < m->n; i++) {
		struct worker *w = &m->w[i];

		w->asks = 0;
		w->err = w->sock < 0 ? EPIPE : w->waiting ? ETIMEDOUT : 0;
		if (w->found && w->sock >= 0 && !w->waiting)
			send_ask(m, w, VL_SYS_REPORT, 0, 0, REPORT_MS);
	}
	collect(m);
	for (int i = 0; i < m->n; i++) {
		struct worker *w = &m->w[i];
		int ok = w->got_ok && w->got.err == 0;

		if (w->got_ok && w->got.err != 0)
			w->err = w->got.err;
		m->seen[i] = (struct vl_sys_seen){ ok ? w->got.oldest : 0, ok ? w->got.unpurged : 0,
						   ok && w->got.oldest != 0 && !w->doubted };
		/* one doubted still holds something: the wake-up is not idle */
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
		before = m->measured ? available_now() : 0;
		send_ask(m, w, VL_SYS_PURGE, until, need == UINT64_MAX ? UINT64_MAX : need - done,
			 PURGE_MS);
		collect(m);
		if (!w->got_ok || w->got.err != 0) {
			if (w->got_ok)
				w->err = w->got.err;
			continue;
		}
		credit = purge_credit(m, w, before);
		w->purge_ms += vl_now_ms() - w->asked_ms;
		/*
		 * Memory showed less than it said (a liar, or memory taken
		 * meanwhile), or its PURGEs took PURGE_MS in all: not asked
		 * again this wake-up. A worker answering "purged" slowly would
		 * else be asked PURGE_ASKS_MAX times a pass while the others
		 * wait (system-liar-slow.sh); the time, since a busy machine's
		 * memory may rise as much as a small lie says.
		 */
		if (m->measured && (credit < w->got.purged || w->purge_ms >= PURGE_MS))
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
					      { "uid", required_argument, NULL, 'u' },
					      { "debug", no_argument, NULL, 'd' },
					      { "help", no_argument, NULL, 'h' },
					      { 0 } };
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
	signal(SIGPIPE, SIG_IGN);
	vl_age_attach();
	m.to_stderr = 1;
	m.first_ms = START_MS;
	scan(&m);
	pass(&m, need, &nothing);
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

/*
 * The memory rule, across the machine: below VOLATILE_MIN_AVAILABLE,
 * passes toward it with some room (vl_purge_need), up to
 * VL_DAEMON_MEMORY_ROUNDS while each frees something. How long to sleep.
 * (Cgroups, issue 29's item 3, would go here: a limited cgroup with a
 * holder watched as the user's daemon watches its own, and its holders'
 * ranges purged first when it is the one at its limit.)
 */
static unsigned relieve(struct machine *m, struct daemon_fall *fall, unsigned min_ms)
{
	struct vl_memstate ms;
	uint64_t threshold = 0, rate = 0;
	int nothing = 0;

	/* a region doubted (pass) is asked again at the next wake-up */
	for (int i = 0; i < m->n; i++) {
		m->w[i].doubted = 0;
		m->w[i].purge_ms = 0;
	}
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
		got = pass(m, need, &nothing);
		if (got == 0)
			break;
		daemon_say("purged %llu bytes: memory %llu bytes available < %llu",
			   (unsigned long long)got, (unsigned long long)ms.available,
			   (unsigned long long)threshold);
	}
	if (nothing)
		return DAEMON_IDLE_MS; /* nothing unpurged anywhere, whatever memory does */
	return daemon_memory_sleep(fall, ms.available, threshold, rate, min_ms);
}

static void log_purges(struct machine *m)
{
	for (int i = 0; i < m->n; i++) {
		struct worker *w = &m->w[i];

		if (w->ranges != 0)
			daemon_say("uid %u: purged %llu range%s, %llu bytes", w->u.uid,
				   (unsigned long long)w->ranges, plural(w->ranges),
				   (unsigned long long)w->bytes);
		w->ranges = w->bytes = 0;
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
	scanned = vl_now_ms();
	m.quiet_refusals = 1;
	m.measured = 1;
	daemon_say("watching the machine's memory: purging when available memory < %s, "
		   "across the regions of %d user%s",
		   threshold_text(&vl_config()->min_available, a, sizeof(a)), m.n,
		   plural((uint64_t)m.n));
	if (ready >= 0) {
		if (write(ready, "", 1) != 1) {
			/* the parent is gone: nothing to tell */
		}
		close(ready);
	}
	sleep_ms = 0;
	for (;;) {
		struct pollfd pfd[2] = { { sfd, POLLIN, 0 }, { psi, POLLPRI, 0 } };

		if (poll(pfd, 2, (int)sleep_ms) < 0 && errno != EINTR)
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
		daemon_woke(lock);
		if (vl_now_ms() - scanned >= RESCAN_MS) {
			scan(&m);
			scanned = vl_now_ms();
		}
		sleep_ms = relieve(&m, &fall, 20);
		log_purges(&m);
		/* a busy worker is killed on time even while memory is plentiful */
		tend(&m);
	}
}
