/* SPDX-License-Identifier: MIT */
/*
 * syswork.c - `volatile system-worker` (DESIGN 22): one user's side of the
 * machine's daemon. Root starts it (system.c) as that user, with an empty
 * environment and a SOCK_SEQPACKET socket as fd 3 (VL_SYS_FD), and asks;
 * it answers each ask (core/sysorder.h) from the user's own region with
 * the library's own purge, as any process of the user could, and exits 0
 * when root closes the socket. An ask naming a memory cgroup looks only
 * at the files a holder of which is in it (DESIGN 22). An ask that is not
 * one (vl_sys_ask_ok) ends it at once with status 2: root then sees the
 * socket close. It prints nothing while it serves; VOLATILE_DEBUG gives the
 * library's log (root's daemon passes it on with --debug).
 */
#include "cli.h"

#include "age.h"
#include "log.h"
#include "move.h"
#include "policy.h"
#include "purge.h"
#include "region.h"
#include "system.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/*
 * Root checks that an age is at most 2^31 - 1 ms behind its clock
 * (vl_sys_answer_ok), while a region keeps ages up to 40 days
 * (VL_AGE_RESTAMP_MS): an older one is told as this old. Ranges older
 * than 24 days then tie in the machine's order; a PURGE limited to this
 * age still takes every one of them. The margin (4.6 hours) is for
 * root's clock, read after this one's.
 */
#define TOLD_BACK_MAX (0x7fffffffu - 0x1000000u)

struct worker {
	struct vl_region r; /* the region asks are answered from, while open */
	int open;
	char names[2][PATH_MAX]; /* a followed region's name (r.path keeps it), and the next's */
	int name;
};

/* Is fd 3 what root gives a worker: a SOCK_SEQPACKET socket? */
static int started_by_root(void)
{
	int type = 0;
	socklen_t len = sizeof(type);

	return getsockopt(VL_SYS_FD, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
	       type == SOCK_SEQPACKET;
}

/* Has root closed its end (a recv of 0 bytes: that, or an empty datagram)? */
static int root_gone(void)
{
	struct pollfd p = { .fd = VL_SYS_FD, .events = POLLIN | POLLRDHUP };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLRDHUP)) != 0;
}

/*
 * The next ask in *q: 1, or 0 once root closed the socket. Anything but
 * an ask (vl_sys_ask_ok: an empty datagram included; a failed recv)
 * ends the worker with status 2: what sent it is not root's
 * daemon, or no longer speaks its protocol.
 */
static int next_ask(struct vl_sys_ask *q)
{
	union {
		struct vl_sys_ask q;
		char more[sizeof(struct vl_sys_ask) + 1]; /* a longer datagram is seen as such */
	} got;
	ssize_t n;

	do
		n = recv(VL_SYS_FD, &got, sizeof(got), MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n == 0 && root_gone())
		return 0;
	if (n < 0 || !vl_sys_ask_ok(&got.q, (size_t)n)) {
		vl_log("system-worker: not an ask (%zd bytes): exiting", n);
		exit(EXIT_USAGE);
	}
	*q = got.q;
	return 1;
}

/* Let go of the open region, if any. */
static void close_region(struct worker *w)
{
	if (w->open)
		vl_region_unmap(&w->r);
	w->open = 0;
}

/*
 * The open region's name no longer leads to it (removed, replaced,
 * renamed; or the default place changed): its records are moved into the
 * region new processes find, made if need be, as the user's daemon does
 * (daemon.c follow), and that one answers from now on. If they cannot be,
 * the open one is let go: the next ask opens what the name leads to.
 */
static void follow(struct worker *w)
{
	char *path = w->names[w->name ^ 1];
	struct vl_region next;
	int err;

	memset(&next, 0, sizeof(next));
	err = vl_region_open_wanted(path, PATH_MAX, &next);
	if (err == 0)
		err = vl_region_move(&w->r, &next);
	if (err) {
		vl_log("system-worker: the region %s is no longer the one new processes find; "
		       "its records not moved to %s: %s",
		       w->r.path, path, strerror(-err));
		if (next.hdr != NULL)
			vl_region_unmap(&next);
		close_region(w);
		return;
	}
	vl_region_settle(&next);
	vl_log("system-worker: the region %s is no longer the one new processes find: its "
	       "records are moved to %s", w->r.path, path);
	close_region(w);
	w->r = next;
	w->open = 1;
	w->name ^= 1;
}

/*
 * The region to answer from, kept open between asks: followed if its
 * name moved; opened by its name if none is open, never made (DESIGN 22:
 * a user with no region has nothing to purge). 0, or -errno: -ENOENT none;
 * -EACCES, -EUCLEAN, -EPROTO refused (DESIGN 9).
 */
static int have_region(struct worker *w)
{
	/* -1, cannot be told: answered from the open one */
	if (w->open && (vl_region_fresh(&w->r) == 0 ||
			__atomic_load_n(&w->r.hdr->fate.retired, __ATOMIC_ACQUIRE) != 0))
		follow(w);
	if (!w->open) {
		int err = try_open_region(&w->r);

		if (err)
			return err;
		w->open = 1;
	}
	return 0;
}

/*
 * The age root is told of an age of the region read at now (age.h): 0
 * stays 0 (none), a stamp ahead of now is now (as the region reads it,
 * layout.h vl_age_back), one older than TOLD_BACK_MAX that old.
 */
static uint32_t told_age(uint32_t age, uint32_t now)
{
	uint32_t back;

	if (age == 0)
		return 0;
	back = vl_age_back(age, now);
	return vl_age_stamp(now - (back < TOLD_BACK_MAX ? back : TOLD_BACK_MAX));
}

/*
 * An ask's answers for the pids it looked at: each pid's /proc read once
 * an ask while there is room, then read each time (bounded either way:
 * a region has VL_HOLDERS pids a file).
 */
#define HELD_CACHE 64
/* /proc/PID/cgroup read in one read: a v1 machine's is well under 1 KiB */
#define CGROUP_TEXT_MAX 8192

struct held_cache {
	const struct vl_sys_ask *q;
	int n;
	struct {
		int32_t pid;
		int yes;
	} e[HELD_CACHE];
};

/*
 * Is process pid in the cgroup q names (vl_sys_cgroup_holds)? One read
 * of its /proc/PID/cgroup: gone, unreadable, or longer than the read
 * (cut short) is not held. The pid is the region's word: this is all
 * that is done with it.
 */
static int pid_in_cgroup(const struct vl_sys_ask *q, int32_t pid)
{
	static char text[CGROUP_TEXT_MAX];
	char path[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	do
		n = read(fd, text, sizeof(text));
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0 || (size_t)n == sizeof(text))
		return 0;
	return vl_sys_cgroup_holds(q, text, (size_t)n);
}

/* vl_goal's held_by for an ask naming a cgroup: pid_in_cgroup, through the cache. */
static int held_by(void *ctx, int32_t pid)
{
	struct held_cache *c = ctx;
	int yes;

	for (int i = 0; i < c->n; i++)
		if (c->e[i].pid == pid)
			return c->e[i].yes;
	yes = pid_in_cgroup(c->q, pid);
	if (c->n < HELD_CACHE) {
		c->e[c->n].pid = pid;
		c->e[c->n++].yes = yes;
	}
	return yes;
}

/*
 * The goal an ask's look at the region has: with a cgroup, only files
 * a holder of which is in it (DESIGN 22); else the whole region.
 */
static void ask_goal(const struct vl_sys_ask *q, struct held_cache *c, struct vl_goal *g)
{
	memset(g, 0, sizeof(*g));
	c->q = q;
	c->n = 0;
	if (q->cg_version != 0) {
		g->held_by = held_by;
		g->held_ctx = c;
	}
}

/*
 * PURGE: oldest first, until q->bytes are purged, of the ranges not
 * younger than q->until (0: any; ties taken), of g's files. Thorough: a
 * worker runs outside any MARK, and may look at every process for a way
 * to a file.
 */
static int purge(struct worker *w, const struct vl_sys_ask *q, struct vl_goal *g,
		 struct vl_sys_answer *a)
{
	struct vl_purge_report rep;
	int err;

	g->bytes = q->bytes;
	g->use_until = q->until != 0;
	g->until = q->until;
	g->thorough = 1;
	g->reason = VL_PURGE_SYSTEM;
	err = vl_purge(&w->r, g, NULL, &rep);
	a->purged = rep.bytes;
	a->ranges = rep.ranges;
	return err;
}

/*
 * The answer to q in *a: what was done, then the region as it is after
 * it (with a cgroup, what of it the cgroup's holders hold).
 */
static void serve(struct worker *w, const struct vl_sys_ask *q, struct vl_sys_answer *a)
{
	static struct held_cache cache;
	struct vl_goal g;
	int err = have_region(w);

	ask_goal(q, &cache, &g);
	if (err == 0 && q->op == VL_SYS_PURGE)
		err = purge(w, q, &g, a);
	if (w->open) {
		struct vl_goal look = { .held_by = g.held_by, .held_ctx = g.held_ctx };
		uint32_t age = q->cg_version != 0 ? vl_region_oldest_of(&w->r, &look, &a->unpurged)
						  : vl_region_oldest(&w->r, &a->unpurged);

		a->oldest = told_age(age, vl_age_now_of(vl_now_ms()));
	}
	a->err = err < 0 ? -err : 0;
}

static const char help[] =
	"Usage: volatile system-worker\n"
	"Serve the machine's daemon (volatile daemon --system) as this user: answer\n"
	"its asks, on fd 3, from this user's region, purging what it asks for, until\n"
	"it closes fd 3. Root's daemon starts it, with fd 3 a SOCK_SEQPACKET socket.\n";

int cmd_system_worker(int argc, char **argv)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { 0 } };
	static struct worker w;
	struct vl_sys_ask q;

	optind = 1;
	while (next_opt(argc, argv, "+h", opts, help) != -1)
		;
	if (optind != argc)
		die("system-worker takes no arguments (try 'volatile system-worker --help')");
	if (!started_by_root())
		die("system-worker: fd %d is not a SOCK_SEQPACKET socket: the machine's daemon "
		    "starts it (volatile daemon --system)",
		    VL_SYS_FD);
	/* root gone: the send fails (EPIPE), and the worker ends */
	signal(SIGPIPE, SIG_IGN);
	while (next_ask(&q)) {
		struct vl_sys_answer a = { .magic = VL_SYS_MAGIC, .seq = q.seq };

		serve(&w, &q, &a);
		if (send(VL_SYS_FD, &a, sizeof(a), MSG_NOSIGNAL) != (ssize_t)sizeof(a))
			break;
	}
	close_region(&w);
	return 0;
}
