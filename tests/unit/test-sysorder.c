/* SPDX-License-Identifier: MIT */
/*
 * test-sysorder.c - the machine's daemon's pure decisions (core/sysorder.c,
 * DESIGN 22): an answer with any one field wrong is refused, whatever the
 * others say; the window an answer's oldest age must fall in, at its edges
 * and across the 32-bit wrap of the age clock; and the pick, oldest first,
 * equal ages taking turns, the next oldest as the limit; an ask checked as
 * the worker checks it, the cgroup it may name included, and whether a
 * process's /proc/PID/cgroup text puts it in that cgroup (DESIGN 22).
 */
#include "harness.h"

#include "core/sysorder.h"

#define NOW 1000000000u

static struct vl_sys_ask ask_of(uint32_t op, uint32_t seq)
{
	struct vl_sys_ask q = { .magic = VL_SYS_MAGIC, .op = op, .seq = seq, .bytes = UINT64_MAX };

	return q;
}

/* An answer that passes: a PURGE's or a REPORT's, of seq 7. */
static struct vl_sys_answer good_answer(uint32_t op)
{
	struct vl_sys_answer a = { VL_SYS_MAGIC, 7, 0, NOW - 5000, 1 << 20, 0, 0, 0 };

	if (op == VL_SYS_PURGE) {
		a.purged = 4096;
		a.ranges = 1;
	}
	return a;
}

static int ok(uint32_t op, const struct vl_sys_answer *a, size_t len, uint32_t now)
{
	struct vl_sys_ask q = ask_of(op, 7);

	return vl_sys_answer_ok(&q, a, len, now);
}

START_TEST(test_good_answers_pass)
{
	struct vl_sys_answer a = good_answer(VL_SYS_REPORT);

	ck_assert_int_eq(ok(VL_SYS_REPORT, &a, sizeof(a), NOW), 1);
	a = good_answer(VL_SYS_PURGE);
	ck_assert_int_eq(ok(VL_SYS_PURGE, &a, sizeof(a), NOW), 1);
	/* nothing left: oldest 0 and nothing unpurged */
	a.oldest = 0;
	a.unpurged = 0;
	ck_assert_int_eq(ok(VL_SYS_PURGE, &a, sizeof(a), NOW), 1);
	/* a PURGE that found nothing to purge */
	a.purged = 0;
	a.ranges = 0;
	ck_assert_int_eq(ok(VL_SYS_PURGE, &a, sizeof(a), NOW), 1);
	/* an errno, the other fields as they are */
	a.err = 2; /* ENOENT: no region */
	ck_assert_int_eq(ok(VL_SYS_PURGE, &a, sizeof(a), NOW), 1);
	a.err = 4095;
	ck_assert_int_eq(ok(VL_SYS_PURGE, &a, sizeof(a), NOW), 1);
	/* a purge may pass its goal: whole ranges */
	a = good_answer(VL_SYS_PURGE);
	a.purged = UINT64_MAX;
	a.ranges = UINT32_MAX;
	ck_assert_int_eq(ok(VL_SYS_PURGE, &a, sizeof(a), NOW), 1);
}
END_TEST

/* Each field wrong in turn, the rest as a good answer has them. */
START_TEST(test_each_field_wrong_is_refused)
{
	static const uint32_t ops[] = { VL_SYS_REPORT, VL_SYS_PURGE };

	for (int i = 0; i < 2; i++) {
		uint32_t op = ops[i];
		struct vl_sys_answer a = good_answer(op), b;

		ck_assert_int_eq(ok(op, &a, sizeof(a), NOW), 1);
		/* its size: one byte short, one more, none */
		ck_assert_int_eq(ok(op, &a, sizeof(a) - 1, NOW), 0);
		ck_assert_int_eq(ok(op, &a, sizeof(a) + 1, NOW), 0);
		ck_assert_int_eq(ok(op, &a, 0, NOW), 0);
		b = a;
		b.magic ^= 1;
		ck_assert_int_eq(ok(op, &b, sizeof(b), NOW), 0);
		b = a;
		b.seq = 6; /* a late answer to the ask before */
		ck_assert_int_eq(ok(op, &b, sizeof(b), NOW), 0);
		b = a;
		b.pad = 1;
		ck_assert_int_eq(ok(op, &b, sizeof(b), NOW), 0);
		b = a;
		b.err = -1;
		ck_assert_int_eq(ok(op, &b, sizeof(b), NOW), 0);
		b.err = 4096;
		ck_assert_int_eq(ok(op, &b, sizeof(b), NOW), 0);
		b.err = INT32_MIN;
		ck_assert_int_eq(ok(op, &b, sizeof(b), NOW), 0);
		b = a;
		b.oldest = NOW + 1; /* ahead of now */
		ck_assert_int_eq(ok(op, &b, sizeof(b), NOW), 0);
		b = a;
		b.oldest = 0; /* nothing unpurged, yet bytes unpurged */
		ck_assert_int_eq(ok(op, &b, sizeof(b), NOW), 0);
	}
	/* a REPORT purges nothing */
	{
		struct vl_sys_answer a = good_answer(VL_SYS_REPORT), b;

		b = a;
		b.purged = 1;
		b.ranges = 1;
		ck_assert_int_eq(ok(VL_SYS_REPORT, &b, sizeof(b), NOW), 0);
		b = a;
		b.purged = 4096;
		ck_assert_int_eq(ok(VL_SYS_REPORT, &b, sizeof(b), NOW), 0);
		b = a;
		b.ranges = 1;
		ck_assert_int_eq(ok(VL_SYS_REPORT, &b, sizeof(b), NOW), 0);
	}
	/* a PURGE's ranges are 0 exactly when it purged nothing */
	{
		struct vl_sys_answer b = good_answer(VL_SYS_PURGE);

		b.ranges = 0;
		ck_assert_int_eq(ok(VL_SYS_PURGE, &b, sizeof(b), NOW), 0);
		b = good_answer(VL_SYS_PURGE);
		b.purged = 0;
		ck_assert_int_eq(ok(VL_SYS_PURGE, &b, sizeof(b), NOW), 0);
	}
}
END_TEST

/* An answer is checked against the ask it answers: not one of another op or seq. */
START_TEST(test_answer_of_the_ask)
{
	struct vl_sys_answer a = good_answer(VL_SYS_PURGE);
	struct vl_sys_ask q = ask_of(VL_SYS_REPORT, 7);

	/* purged bytes answer no REPORT */
	ck_assert_int_eq(vl_sys_answer_ok(&q, &a, sizeof(a), NOW), 0);
	q = ask_of(VL_SYS_PURGE, 8);
	ck_assert_int_eq(vl_sys_answer_ok(&q, &a, sizeof(a), NOW), 0);
	q = ask_of(VL_SYS_PURGE, 7);
	ck_assert_int_eq(vl_sys_answer_ok(&q, &a, sizeof(a), NOW), 1);
}
END_TEST

static int oldest_ok(uint32_t oldest, uint32_t now)
{
	struct vl_sys_answer a = good_answer(VL_SYS_REPORT);

	a.oldest = oldest;
	return ok(VL_SYS_REPORT, &a, sizeof(a), now);
}

/* now - 2^31 + 1 passes; now - 2^31 and now + 1 do not; the same across the wrap */
START_TEST(test_age_window_edges)
{
	static const uint32_t nows[] = { NOW, 5, 0x80000000u, 0x7ffffffeu, UINT32_MAX, 1 };

	for (size_t i = 0; i < sizeof(nows) / sizeof(nows[0]); i++) {
		uint32_t now = nows[i];

		ck_assert_msg(now == 0 || oldest_ok(now, now), "now %u: now itself", now);
		ck_assert_msg(oldest_ok(now - 0x80000000u + 1, now), "now %u: now - 2^31 + 1", now);
		ck_assert_msg(!oldest_ok(now - 0x80000000u, now), "now %u: now - 2^31", now);
		ck_assert_msg(!oldest_ok(now + 1, now), "now %u: now + 1", now);
		ck_assert_msg(!oldest_ok(now + 0x7fffffffu, now), "now %u: now + 2^31 - 1", now);
	}
	/* across the wrap: now 5, an age 10 ms before it, stamped before the clock wrapped */
	ck_assert_int_eq(oldest_ok(UINT32_MAX - 4, 5), 1);
	ck_assert_int_eq(oldest_ok(6, 5), 0);
}
END_TEST

static struct vl_sys_seen seen(uint32_t oldest, int usable)
{
	struct vl_sys_seen s = { oldest, oldest ? 4096 : 0, usable };

	return s;
}

START_TEST(test_pick_oldest_first)
{
	struct vl_sys_seen s[4] = { seen(NOW - 100, 1), seen(NOW - 300, 1), seen(NOW - 200, 1),
				    seen(0, 1) };
	uint32_t until = 1;

	ck_assert_int_eq(vl_sys_pick(s, 4, -1, NOW, &until), 1);
	ck_assert_uint_eq(until, NOW - 200);
	/* whatever last was */
	for (int last = -1; last < 4; last++) {
		until = 1;
		ck_assert_int_eq(vl_sys_pick(s, 4, last, NOW, &until), 1);
		ck_assert_uint_eq(until, NOW - 200);
	}
	/* region 1 purged up to 2's age: 2 next, 0 its limit */
	s[1].oldest = 0;
	s[1].unpurged = 0;
	ck_assert_int_eq(vl_sys_pick(s, 4, 1, NOW, &until), 2);
	ck_assert_uint_eq(until, NOW - 100);
}
END_TEST

/* Ages across the wrap compare as the age clock does: older is further back from now. */
START_TEST(test_pick_across_wrap)
{
	struct vl_sys_seen s[3] = { seen(10, 1), seen(UINT32_MAX - 10, 1), seen(20, 1) };
	uint32_t until = 1;

	ck_assert_int_eq(vl_sys_pick(s, 3, -1, 30, &until), 1);
	ck_assert_uint_eq(until, 10);
}
END_TEST

START_TEST(test_pick_ties_take_turns)
{
	struct vl_sys_seen s[5] = { seen(NOW - 50, 1), seen(NOW - 300, 1), seen(NOW - 300, 1),
				    seen(NOW - 10, 1), seen(NOW - 300, 1) };
	uint32_t until = 1;

	/* the first of the oldest after last, wrapping */
	ck_assert_int_eq(vl_sys_pick(s, 5, -1, NOW, &until), 1);
	ck_assert_uint_eq(until, NOW - 300);
	ck_assert_int_eq(vl_sys_pick(s, 5, 1, NOW, &until), 2);
	ck_assert_uint_eq(until, NOW - 300);
	ck_assert_int_eq(vl_sys_pick(s, 5, 2, NOW, &until), 4);
	ck_assert_int_eq(vl_sys_pick(s, 5, 3, NOW, &until), 4);
	ck_assert_int_eq(vl_sys_pick(s, 5, 4, NOW, &until), 1);
	ck_assert_int_eq(vl_sys_pick(s, 5, 0, NOW, &until), 1);
	ck_assert_uint_eq(until, NOW - 300);
}
END_TEST

START_TEST(test_pick_skips_unusable)
{
	struct vl_sys_seen s[4] = { seen(NOW - 100, 1), seen(NOW - 900, 0), seen(NOW - 200, 1),
				    seen(NOW - 800, 0) };
	uint32_t until = 1;

	/* neither the oldest pick nor the limit is an unusable region's */
	ck_assert_int_eq(vl_sys_pick(s, 4, -1, NOW, &until), 2);
	ck_assert_uint_eq(until, NOW - 100);
	s[0].usable = 0;
	until = 1;
	ck_assert_int_eq(vl_sys_pick(s, 4, -1, NOW, &until), 2);
	ck_assert_uint_eq(until, 0);
	s[2].usable = 0;
	ck_assert_int_eq(vl_sys_pick(s, 4, -1, NOW, &until), -1);
}
END_TEST

START_TEST(test_pick_none)
{
	struct vl_sys_seen s[3] = { seen(0, 1), seen(0, 1), seen(NOW - 5, 0) };
	uint32_t until = 1;

	ck_assert_int_eq(vl_sys_pick(s, 3, -1, NOW, &until), -1);
	ck_assert_int_eq(vl_sys_pick(s, 0, -1, NOW, &until), -1);
	ck_assert_int_eq(vl_sys_pick(NULL, 0, -1, NOW, &until), -1);
}
END_TEST

START_TEST(test_pick_single_region)
{
	struct vl_sys_seen s[1] = { seen(NOW - 70, 1) };
	uint32_t until = 1;

	ck_assert_int_eq(vl_sys_pick(s, 1, -1, NOW, &until), 0);
	ck_assert_uint_eq(until, 0);
	until = 1;
	ck_assert_int_eq(vl_sys_pick(s, 1, 0, NOW, &until), 0);
	ck_assert_uint_eq(until, 0);
}
END_TEST

/* A last out of the array (the set of regions shrank) starts from the first. */
START_TEST(test_pick_last_out_of_range)
{
	struct vl_sys_seen s[2] = { seen(NOW - 70, 1), seen(NOW - 70, 1) };
	uint32_t until = 1;

	ck_assert_int_eq(vl_sys_pick(s, 2, 9, NOW, &until), 0);
	ck_assert_uint_eq(until, NOW - 70);
	ck_assert_int_eq(vl_sys_pick(s, 2, -7, NOW, &until), 0);
}
END_TEST

/* ---- an ask, and the cgroup it may name ------------------------------------ */

/* An ask of op naming cgroup path (NULL: none) of version v: well formed but for what a test sets. */
static struct vl_sys_ask cg_ask(uint32_t op, uint32_t v, const char *path)
{
	struct vl_sys_ask q = ask_of(op, 3);

	if (path != NULL) {
		q.cg_version = v;
		q.cg_len = (uint32_t)strlen(path);
		memcpy(q.cgroup, path, q.cg_len);
	}
	return q;
}

static int ask_ok(const struct vl_sys_ask *q)
{
	return vl_sys_ask_ok(q, vl_sys_ask_len(q));
}

START_TEST(test_good_asks_pass)
{
	static const char *const paths[] = { "/", "/a", "/a/b", "/system.slice/x.service",
					     "/a:b c" };
	struct vl_sys_ask q;

	for (uint32_t op = VL_SYS_REPORT; op <= VL_SYS_PURGE; op++) {
		q = cg_ask(op, 0, NULL);
		ck_assert_int_eq(ask_ok(&q), 1);
		ck_assert_uint_eq(vl_sys_ask_len(&q), offsetof(struct vl_sys_ask, cgroup));
		for (uint32_t v = 1; v <= 2; v++)
			for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
				q = cg_ask(op, v, paths[i]);
				ck_assert_msg(ask_ok(&q), "op %u v%u %s refused", op, v, paths[i]);
			}
	}
	/* the longest path there is room for */
	q = cg_ask(VL_SYS_PURGE, 1, "/");
	memset(q.cgroup + 1, 'x', VL_SYS_CGROUP_MAX - 1);
	q.cg_len = VL_SYS_CGROUP_MAX;
	ck_assert_uint_eq(vl_sys_ask_len(&q), sizeof(q));
	ck_assert_int_eq(vl_sys_ask_ok(&q, sizeof(q)), 1);
}
END_TEST

START_TEST(test_each_ask_field_wrong_is_refused)
{
	struct vl_sys_ask good = cg_ask(VL_SYS_PURGE, 1, "/a/b"), q;
	size_t len = vl_sys_ask_len(&good);

	q = good;
	q.magic ^= 1;
	ck_assert_int_eq(vl_sys_ask_ok(&q, len), 0);
	for (uint32_t op = 0; op < 8; op++) {
		q = good;
		q.op = op;
		ck_assert_int_eq(vl_sys_ask_ok(&q, len), op == VL_SYS_REPORT || op == VL_SYS_PURGE);
	}
	q = good;
	q.op = UINT32_MAX;
	ck_assert_int_eq(vl_sys_ask_ok(&q, len), 0);
	/* the length: one byte short or over, the fixed part alone, nothing */
	ck_assert_int_eq(vl_sys_ask_ok(&good, len - 1), 0);
	ck_assert_int_eq(vl_sys_ask_ok(&good, len + 1), 0);
	ck_assert_int_eq(vl_sys_ask_ok(&good, offsetof(struct vl_sys_ask, cgroup)), 0);
	ck_assert_int_eq(vl_sys_ask_ok(&good, offsetof(struct vl_sys_ask, cgroup) - 1), 0);
	ck_assert_int_eq(vl_sys_ask_ok(&good, 0), 0);
	q = cg_ask(VL_SYS_REPORT, 0, NULL);
	ck_assert_int_eq(vl_sys_ask_ok(&q, vl_sys_ask_len(&q) + 1), 0);
	ck_assert_int_eq(vl_sys_ask_ok(&q, vl_sys_ask_len(&q) - 1), 0);
	/* a version: unknown, or none with a path, or one with none */
	for (uint32_t v = 3; v < 6; v++) {
		q = good;
		q.cg_version = v;
		ck_assert_int_eq(vl_sys_ask_ok(&q, len), 0);
	}
	q = good;
	q.cg_version = UINT32_MAX;
	ck_assert_int_eq(vl_sys_ask_ok(&q, len), 0);
	q = good;
	q.cg_version = 0;
	ck_assert_int_eq(vl_sys_ask_ok(&q, len), 0);
	q = cg_ask(VL_SYS_REPORT, 2, "");
	ck_assert_int_eq(ask_ok(&q), 0);
	/* cg_len past the array, with a length that would agree */
	q = good;
	q.cg_len = VL_SYS_CGROUP_MAX + 1;
	ck_assert_int_eq(vl_sys_ask_ok(&q, offsetof(struct vl_sys_ask, cgroup) + q.cg_len), 0);
	q.cg_len = UINT32_MAX;
	ck_assert_int_eq(vl_sys_ask_ok(&q, offsetof(struct vl_sys_ask, cgroup) + q.cg_len), 0);
	ck_assert_int_eq(vl_sys_ask_ok(&q, sizeof(q)), 0);
}
END_TEST

START_TEST(test_bad_cgroup_paths_are_refused)
{
	static const char *const bad[] = { "a", "//", "/a/", "/a//b", "a/b", "//a", "/a/b/",
					   " /a", "\\/a" };
	struct vl_sys_ask q;

	for (uint32_t v = 1; v <= 2; v++) {
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			q = cg_ask(VL_SYS_REPORT, v, bad[i]);
			ck_assert_msg(!ask_ok(&q), "v%u \"%s\" taken", v, bad[i]);
		}
		/* a NUL: first, inside, last */
		q = cg_ask(VL_SYS_REPORT, v, "/a/b");
		q.cgroup[2] = '\0';
		ck_assert_int_eq(ask_ok(&q), 0);
		q = cg_ask(VL_SYS_REPORT, v, "/a/b");
		q.cgroup[3] = '\0';
		ck_assert_int_eq(ask_ok(&q), 0);
		q = cg_ask(VL_SYS_REPORT, v, "/a");
		q.cgroup[0] = '\0';
		ck_assert_int_eq(ask_ok(&q), 0);
		q = cg_ask(VL_SYS_REPORT, v, "/");
		q.cgroup[0] = '\0';
		ck_assert_int_eq(ask_ok(&q), 0);
	}
}
END_TEST

/* Does a process whose /proc/PID/cgroup reads text belong to cgroup path (version v)? */
static int holds(uint32_t v, const char *path, const char *text)
{
	struct vl_sys_ask q = cg_ask(VL_SYS_REPORT, v, path);

	ck_assert_int_eq(ask_ok(&q), 1);
	return vl_sys_cgroup_holds(&q, text, strlen(text));
}

/* /proc/PID/cgroup of a process of a v1 hierarchy (and the hybrid "0::" line) */
static const char v1_text[] = "12:pids:/user.slice\n"
			      "11:name=systemd:/memory/x\n"
			      "10:cpu,cpuacct:/memory\n"
			      "9:memory:/svc/a\n"
			      "0::/v2/path\n";

START_TEST(test_v1_memory_line)
{
	ck_assert_int_eq(holds(1, "/svc/a", v1_text), 1);
	ck_assert_int_eq(holds(1, "/svc", v1_text), 1);
	ck_assert_int_eq(holds(1, "/", v1_text), 1);
	ck_assert_int_eq(holds(1, "/svc/ab", v1_text), 0);
	ck_assert_int_eq(holds(1, "/svc/a/b", v1_text), 0);
	/* name=systemd's path, cpu's, the v2 line's: not the memory controller's */
	ck_assert_int_eq(holds(1, "/memory", v1_text), 0);
	ck_assert_int_eq(holds(1, "/memory/x", v1_text), 0);
	ck_assert_int_eq(holds(1, "/user.slice", v1_text), 0);
	ck_assert_int_eq(holds(1, "/v2", v1_text), 0);
	/* memory in a list, first, last, in the middle */
	ck_assert_int_eq(holds(1, "/x", "4:memory,cpu:/x\n"), 1);
	ck_assert_int_eq(holds(1, "/x", "4:cpu,memory:/x\n"), 1);
	ck_assert_int_eq(holds(1, "/x", "4:cpu,memory,blkio:/x\n"), 1);
	ck_assert_int_eq(holds(1, "/x", "4:cpu,memory,blkio:/y\n"), 0);
	/* names that only contain it */
	ck_assert_int_eq(holds(1, "/x", "4:memoryx:/x\n"), 0);
	ck_assert_int_eq(holds(1, "/x", "4:xmemory:/x\n"), 0);
	ck_assert_int_eq(holds(1, "/x", "4:name=memory:/x\n"), 0);
	ck_assert_int_eq(holds(1, "/x", "4:memor:/x\n"), 0);
	ck_assert_int_eq(holds(1, "/x", "4:,:/x\n"), 0);
	/* a path with a colon in it: the path is all after the second */
	ck_assert_int_eq(holds(1, "/a:b", "4:memory:/a:b\n"), 1);
	ck_assert_int_eq(holds(1, "/a", "4:memory:/a:b\n"), 0);
}
END_TEST

START_TEST(test_v2_line)
{
	ck_assert_int_eq(holds(2, "/a/b", "0::/a/b\n"), 1);
	ck_assert_int_eq(holds(2, "/a", "0::/a/b\n"), 1);
	ck_assert_int_eq(holds(2, "/", "0::/a/b\n"), 1);
	ck_assert_int_eq(holds(2, "/a/b/c", "0::/a/b\n"), 0);
	ck_assert_int_eq(holds(2, "/a/bc", "0::/a/b\n"), 0);
	ck_assert_int_eq(holds(2, "/a/b", "0::/a/bc\n"), 0);
	/* the v2 line of a hybrid machine; a v1 memory line is not v2's */
	ck_assert_int_eq(holds(2, "/v2", v1_text), 1);
	ck_assert_int_eq(holds(2, "/svc/a", v1_text), 0);
	/* hierarchy 0 with a controller, or "00": no v2 line */
	ck_assert_int_eq(holds(2, "/a", "0:memory:/a\n"), 0);
	ck_assert_int_eq(holds(2, "/a", "00::/a\n"), 0);
	ck_assert_int_eq(holds(2, "/a", "10::/a\n"), 0);
}
END_TEST

START_TEST(test_below_is_by_whole_names)
{
	ck_assert_int_eq(holds(1, "/a", "4:memory:/a\n"), 1);
	ck_assert_int_eq(holds(1, "/a", "4:memory:/a/b\n"), 1);
	ck_assert_int_eq(holds(1, "/a", "4:memory:/a/b/c\n"), 1);
	ck_assert_int_eq(holds(1, "/a", "4:memory:/ab\n"), 0);
	ck_assert_int_eq(holds(1, "/a", "4:memory:/\n"), 0);
	ck_assert_int_eq(holds(1, "/a", "4:memory:\n"), 0);
	ck_assert_int_eq(holds(1, "/a", "4:memory:a\n"), 0);
	ck_assert_int_eq(holds(1, "/a/b", "4:memory:/a\n"), 0);
	/* "/" holds every path, the root's own included */
	ck_assert_int_eq(holds(1, "/", "4:memory:/\n"), 1);
	ck_assert_int_eq(holds(1, "/", "4:memory:/ab/c\n"), 1);
	ck_assert_int_eq(holds(2, "/", "0::/\n"), 1);
}
END_TEST

START_TEST(test_text_cut_or_without_the_line)
{
	/* the memory line cut before its newline: not read */
	ck_assert_int_eq(holds(1, "/x", "4:memory:/x"), 0);
	ck_assert_int_eq(holds(1, "/", "4:memory:/x"), 0);
	ck_assert_int_eq(holds(2, "/x", "0::/x"), 0);
	ck_assert_int_eq(holds(1, "/x", "3:cpu:/y\n4:memory:/x"), 0);
	/* cut inside: a path that would be taken by its start */
	ck_assert_int_eq(holds(1, "/a", "4:memory:/a/b"), 0);
	/* no memory line; an empty text; lines with too few colons */
	ck_assert_int_eq(holds(1, "/", "3:cpu:/y\n2:pids:/z\n"), 0);
	ck_assert_int_eq(holds(1, "/", ""), 0);
	ck_assert_int_eq(holds(2, "/", "\n\n"), 0);
	ck_assert_int_eq(holds(1, "/", "memory\n4:memory\n"), 0);
	ck_assert_int_eq(holds(2, "/", "0:\n"), 0);
	/* a line with no colons before the one that counts */
	ck_assert_int_eq(holds(1, "/x", "junk\n4:memory:/x\n"), 1);
	/* the length given, not the NUL: a text whose memory line lies past it */
	{
		struct vl_sys_ask q = cg_ask(VL_SYS_REPORT, 1, "/x");
		const char t[] = "3:cpu:/y\n4:memory:/x\n";

		ck_assert_int_eq(vl_sys_cgroup_holds(&q, t, 9), 0);
		ck_assert_int_eq(vl_sys_cgroup_holds(&q, t, sizeof(t) - 2), 0);
		ck_assert_int_eq(vl_sys_cgroup_holds(&q, t, sizeof(t) - 1), 1);
		ck_assert_int_eq(vl_sys_cgroup_holds(&q, t, 0), 0);
	}
}
END_TEST

START_TEST(test_no_cgroup_holds_all)
{
	struct vl_sys_ask q = cg_ask(VL_SYS_REPORT, 0, NULL);

	ck_assert_int_eq(vl_sys_cgroup_holds(&q, "", 0), 1);
	ck_assert_int_eq(vl_sys_cgroup_holds(&q, v1_text, strlen(v1_text)), 1);
}
END_TEST

static Suite *sysorder_suite(void)
{
	Suite *s = suite_create("sysorder");
	TCase *tc = th_tcase("answer", 30);
	TCase *tp = th_tcase("pick", 30);
	TCase *tq = th_tcase("ask", 30);

	tcase_add_test(tc, test_good_answers_pass);
	tcase_add_test(tc, test_each_field_wrong_is_refused);
	tcase_add_test(tc, test_answer_of_the_ask);
	tcase_add_test(tc, test_age_window_edges);
	suite_add_tcase(s, tc);
	tcase_add_test(tp, test_pick_oldest_first);
	tcase_add_test(tp, test_pick_across_wrap);
	tcase_add_test(tp, test_pick_ties_take_turns);
	tcase_add_test(tp, test_pick_skips_unusable);
	tcase_add_test(tp, test_pick_none);
	tcase_add_test(tp, test_pick_single_region);
	tcase_add_test(tp, test_pick_last_out_of_range);
	suite_add_tcase(s, tp);
	tcase_add_test(tq, test_good_asks_pass);
	tcase_add_test(tq, test_each_ask_field_wrong_is_refused);
	tcase_add_test(tq, test_bad_cgroup_paths_are_refused);
	tcase_add_test(tq, test_v1_memory_line);
	tcase_add_test(tq, test_v2_line);
	tcase_add_test(tq, test_below_is_by_whole_names);
	tcase_add_test(tq, test_text_cut_or_without_the_line);
	tcase_add_test(tq, test_no_cgroup_holds_all);
	suite_add_tcase(s, tq);
	return s;
}

int main(void)
{
	return th_run(sysorder_suite());
}
