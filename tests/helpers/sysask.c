/* SPDX-License-Identifier: MIT */
/*
 * sysask.c - test helper: root's side of the machine's daemon's protocol
 * (core/sysorder.h, DESIGN 22), played against one `volatile
 * system-worker`, as the test's own user. It makes a SOCK_SEQPACKET
 * socket pair, starts $VOLATILE_CMD system-worker with one end as its fd
 * 3 (its environment, VOLATILE_REGION included, the helper's), and sends
 * the asks named on its command line, in order, one answer line each:
 *
 *   report             a REPORT
 *   purge UNTIL BYTES  a PURGE: UNTIL a number or "oldest" (the oldest age
 *                      the last answer gave), BYTES a number (K, M
 *                      suffixes) or "all"
 *   op N               an ask of op N, otherwise well formed
 *   cgroup V PATH      the asks that follow name memory cgroup PATH of
 *                      version V (1: v1, 2: v2), as given (unchecked: a
 *                      bad one is the worker's to refuse); V 0: none (PATH
 *                      not read, "-" say)
 *   raw N              N bytes of garbage, as one datagram
 *   touch PATH         make PATH (no ask: the test's cue)
 *   wait PATH          until PATH exists, 60 s at most (no ask)
 *
 * An answer prints "err=E oldest=A unpurged=U purged=P ranges=R" (E 0 or
 * an errno's name), or "closed" once the worker closed its end; and every
 * answer is checked as root checks it (core/sysorder.c vl_sys_answer_ok,
 * against this process's age clock, VOLATILE_FAULT_AGE_SHIFT seconds on
 * as the test build's worker's is): one that fails prints "bad answer"
 * and its fields and exits 1; no answer in 20 s "timeout", exit 1. At the
 * end the socket is closed and the worker waited for: "worker exit N" (or
 * "worker signal N"). Exit 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "age.h"
#include "core/sysorder.h"
#include "say.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define ANSWER_WAIT_MS 20000

static int sock = -1;
static int closed;
static uint32_t seq;
static uint32_t last_oldest;
static uint64_t age_shift_ms; /* VOLATILE_FAULT_AGE_SHIFT, as the worker's test build reads it */
static uint32_t cg_version; /* the cgroup the asks name (cgroup V PATH) */
static char cg_path[VL_SYS_CGROUP_MAX];
static uint32_t cg_len;

static void usage(const char *why)
{
	fprintf(stderr, "sysask: %s\nusage: VOLATILE_CMD=PATH sysask ASK...\n", why);
	exit(2);
}

static uint64_t number(const char *s)
{
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || end == s)
		usage("not a number");
	if (*end == 'K' || *end == 'M')
		v <<= *end++ == 'K' ? 10 : 20;
	if (*end != '\0')
		usage("not a number");
	return v;
}

static pid_t start_worker(const char *cmd)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		die("socketpair");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		/* dup2 to 3 leaves the copy without close-on-exec; if it is 3 already, clear it */
		if (sv[1] == VL_SYS_FD ? fcntl(sv[1], F_SETFD, 0) != 0
				       : dup2(sv[1], VL_SYS_FD) != VL_SYS_FD)
			_exit(126);
		execl(cmd, "volatile", "system-worker", (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	sock = sv[0];
	return pid;
}

/* A datagram of len bytes, or nothing once the worker is gone. */
static void send_bytes(const void *buf, size_t len)
{
	if (!closed && send(sock, buf, len, MSG_NOSIGNAL) != (ssize_t)len) {
		if (errno != EPIPE && errno != ECONNRESET)
			die("send");
		closed = 1;
	}
}

/* Root's check of answer a (len bytes) to q: else the fields, and exit 1. */
static void check(const struct vl_sys_ask *q, const struct vl_sys_answer *a, ssize_t len)
{
	uint32_t now = vl_age_now_of(vl_now_ms() + age_shift_ms);

	if (len >= 0 && vl_sys_answer_ok(q, a, (size_t)len, now))
		return;
	printf("bad answer: %zd bytes, magic %#x seq %u (ask's %u) err %d oldest %u (now %u) "
	       "unpurged %llu purged %llu ranges %u pad %u\n",
	       len, a->magic, a->seq, q->seq, a->err, a->oldest, now,
	       (unsigned long long)a->unpurged, (unsigned long long)a->purged, a->ranges, a->pad);
	exit(1);
}

/* The answer to ask q: printed and checked, or "closed". */
static void answer(const struct vl_sys_ask *q)
{
	struct vl_sys_answer a[2]; /* room for more than an answer: a long one is seen */
	struct pollfd p = { .fd = sock, .events = POLLIN };
	ssize_t len;
	int n;

	if (closed) {
		printf("closed\n");
		return;
	}
	do
		n = poll(&p, 1, ANSWER_WAIT_MS);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		die("poll");
	if (n == 0) {
		printf("timeout\n");
		exit(1);
	}
	len = recv(sock, a, sizeof(a), MSG_TRUNC);
	if (len < 0 && errno != ECONNRESET)
		die("recv");
	if (len <= 0) {
		closed = 1;
		printf("closed\n");
		return;
	}
	check(q, &a[0], len);
	last_oldest = a[0].oldest;
	printf("err=%s oldest=%u unpurged=%llu purged=%llu ranges=%u\n",
	       a[0].err == 0 ? "0" : ename(a[0].err), a[0].oldest,
	       (unsigned long long)a[0].unpurged, (unsigned long long)a[0].purged, a[0].ranges);
}

static void ask(uint32_t op, uint32_t until, uint64_t bytes)
{
	static struct vl_sys_ask q;

	q = (struct vl_sys_ask){ .magic = VL_SYS_MAGIC, .op = op, .seq = ++seq, .until = until,
				 .bytes = bytes, .cg_version = cg_version, .cg_len = cg_len };
	memcpy(q.cgroup, cg_path, cg_len);
	send_bytes(&q, vl_sys_ask_len(&q));
	answer(&q);
}

static void garbage(size_t n)
{
	unsigned char buf[4096];
	struct vl_sys_ask q = { .seq = ++seq }; /* no answer passes: the worker is to exit */

	if (n > sizeof(buf))
		usage("raw: at most 4096 bytes");
	for (size_t i = 0; i < n; i++)
		buf[i] = (unsigned char)(0xa5 ^ (i * 37));
	send_bytes(buf, n);
	answer(&q);
}

static void wait_path(const char *path)
{
	struct stat st;

	for (int i = 0; stat(path, &st) != 0; i++) {
		if (i == 6000) {
			printf("timed out waiting for %s\n", path);
			exit(1);
		}
		sleep_ms(10);
	}
}

/* One ask (or cue) of the command line at a: how many words it took. */
static int one(char **a)
{
	if (strcmp(a[0], "report") == 0) {
		ask(VL_SYS_REPORT, 0, 0);
		return 1;
	}
	if (a[1] == NULL)
		usage("an ask lacks its argument");
	if (strcmp(a[0], "purge") == 0) {
		uint32_t until;

		if (a[2] == NULL)
			usage("purge UNTIL BYTES");
		until = strcmp(a[1], "oldest") == 0 ? last_oldest : (uint32_t)number(a[1]);
		ask(VL_SYS_PURGE, until, strcmp(a[2], "all") == 0 ? UINT64_MAX : number(a[2]));
		return 3;
	}
	if (strcmp(a[0], "cgroup") == 0) {
		if (a[2] == NULL)
			usage("cgroup V PATH");
		cg_version = (uint32_t)number(a[1]);
		cg_len = cg_version == 0 ? 0 : (uint32_t)strlen(a[2]);
		if (cg_len > sizeof(cg_path))
			usage("cgroup: a path longer than VL_SYS_CGROUP_MAX");
		memcpy(cg_path, a[2], cg_len);
		return 3;
	}
	if (strcmp(a[0], "op") == 0)
		ask((uint32_t)number(a[1]), 0, 0);
	else if (strcmp(a[0], "raw") == 0)
		garbage(number(a[1]));
	else if (strcmp(a[0], "touch") == 0 && close(open(a[1], O_WRONLY | O_CREAT, 0600)) != 0)
		die("touch");
	else if (strcmp(a[0], "wait") == 0)
		wait_path(a[1]);
	else if (strcmp(a[0], "touch") != 0)
		usage("unknown ask");
	return 2;
}

int main(int argc, char **argv)
{
	const char *cmd = getenv("VOLATILE_CMD"), *shift = getenv("VOLATILE_FAULT_AGE_SHIFT");
	pid_t pid;
	int st;

	if (cmd == NULL || argc < 2)
		usage("VOLATILE_CMD names the command; asks follow");
	setvbuf(stdout, NULL, _IOLBF, 0);
	vl_age_attach();
	if (shift != NULL)
		age_shift_ms = number(shift) * 1000;
	signal(SIGPIPE, SIG_IGN);
	pid = start_worker(cmd);
	for (char **a = argv + 1; *a != NULL;)
		a += one(a);
	close(sock);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	if (WIFEXITED(st))
		printf("worker exit %d\n", WEXITSTATUS(st));
	else
		printf("worker signal %d\n", WTERMSIG(st));
	return 0;
}
