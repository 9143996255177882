/* SPDX-License-Identifier: MIT */
/*
 * sysorder.h - the machine's daemon's protocol and decisions, pure
 * (DESIGN 22): the datagrams root and a user's worker exchange, the check
 * of every answer (a worker runs as its user, who may have replaced it:
 * nothing it says is trusted unchecked), and which region purges next so
 * that the machine's oldest volatile bytes go first.
 *
 * An ask and its answer are one datagram each, of exactly their size.
 */
#ifndef VL_CORE_SYSORDER_H
#define VL_CORE_SYSORDER_H

#include <stddef.h>
#include <stdint.h>

#define VL_SYS_MAGIC 0x766c5379u /* "ySlv": a datagram of this protocol */
#define VL_SYS_FD 3              /* the worker's end of the socket */

enum vl_sys_op {
	VL_SYS_REPORT = 1, /* the region's oldest unpurged age and unpurged bytes */
	VL_SYS_PURGE = 2,  /* purge oldest first: `bytes`, ranges not younger than `until` */
};

/* the longest memory cgroup path an ask may name, as /proc/PID/cgroup writes it */
#define VL_SYS_CGROUP_MAX 4096

/*
 * An ask is one datagram of exactly vl_sys_ask_len() bytes: the fixed
 * part and cg_len bytes of cgroup[] (no NUL). With a cgroup, a REPORT
 * and a PURGE see only the files with a recorded holder (DESIGN 10)
 * whose memory cgroup is that one or below it (DESIGN 22): that cgroup
 * at its limit is relieved by its own holders' ranges.
 */
struct vl_sys_ask {
	uint32_t magic;
	uint32_t op;     /* enum vl_sys_op */
	uint32_t seq;    /* echoed in the answer: a late answer is told from the current one */
	uint32_t until;  /* PURGE: only ranges whose age is not younger than this (0: any) */
	uint64_t bytes;  /* PURGE: stop once this many bytes are purged (UINT64_MAX: all) */
	uint32_t cg_version; /* 0: the whole region; 1: a cgroup v1 memory controller's
				path; 2: a cgroup v2 path (the "0::" line) */
	uint32_t cg_len;     /* bytes of cgroup[] used: 0 exactly when cg_version is 0 */
	char cgroup[VL_SYS_CGROUP_MAX]; /* "/", or "/a/b" with no "//", no NUL, no "/" last */
};

/* The bytes ask q takes on the wire: its fixed part and cg_len bytes of path. */
static inline size_t vl_sys_ask_len(const struct vl_sys_ask *q)
{
	return offsetof(struct vl_sys_ask, cgroup) + q->cg_len;
}

/*
 * Is q (len bytes received) an ask? The magic, a known op, len exactly
 * vl_sys_ask_len (cg_len checked first against VL_SYS_CGROUP_MAX), and
 * the cgroup as struct vl_sys_ask says. 1 if it passes, else 0. The worker
 * checks every ask with it: what is on its fd 3 is root's, but a worker
 * keeps no promise on an ask it does not understand.
 */
int vl_sys_ask_ok(const struct vl_sys_ask *q, size_t len);

/*
 * Is a process whose /proc/PID/cgroup reads text (len bytes) in the
 * cgroup q names, or below it? v1: the line whose controller list holds
 * "memory"; v2: the "0::" line. Below: the path equal to q's, or q's
 * followed by "/" (q's "/": every path). 1 yes, 0 no (no such line, or
 * text cut short). Pure: the worker reads the file, this decides.
 */
int vl_sys_cgroup_holds(const struct vl_sys_ask *q, const char *text, size_t len);

struct vl_sys_answer {
	uint32_t magic;
	uint32_t seq;      /* the ask's */
	int32_t err;       /* 0, or a positive errno: ENOENT no region; EACCES, EUCLEAN,
			      EPROTO refused (DESIGN 9); another: the ask failed */
	uint32_t oldest;   /* after the ask: the region's oldest unpurged age (0: none) */
	uint64_t unpurged; /* after the ask: its unpurged volatile bytes (saturated) */
	uint64_t purged;   /* PURGE: bytes purged (whole ranges: may pass `bytes`) */
	uint32_t ranges;   /* PURGE: ranges purged */
	uint32_t pad;      /* 0 */
};

/*
 * Does answer a (len bytes received) answer ask, now being the reader's
 * age clock (age.h)? Exactly its size, the magic, the ask's seq, pad 0,
 * err 0 or a positive errno below 4096, an oldest age that is 0 or at most
 * 2^31 - 1 ms behind now (an age ahead of now is no age a region holds),
 * unpurged 0 when oldest is 0, and for a REPORT nothing purged; for a
 * PURGE, ranges 0 exactly when purged is 0. 1 if it passes, else 0.
 */
int vl_sys_answer_ok(const struct vl_sys_ask *ask, const struct vl_sys_answer *a, size_t len,
		     uint32_t now);

/* Root's view of one region in a pass: from its last answer that passed. */
struct vl_sys_seen {
	uint32_t oldest;   /* 0: nothing unpurged */
	uint64_t unpurged;
	int usable;        /* may be asked in this pass (answered in time, made progress) */
};

/*
 * The region to purge next: the usable one whose oldest age is the oldest
 * for a reader whose age clock reads now (ties: the first of them after
 * `last`, in index order wrapping, so that equal ages take turns), and in
 * *until the oldest age of the others (0: none), up to which it may purge
 * (ties taken, as within a region: DESIGN 6). -1: none has anything.
 */
int vl_sys_pick(const struct vl_sys_seen *s, int n, int last, uint32_t now, uint32_t *until);

#endif
