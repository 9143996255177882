/* SPDX-License-Identifier: MIT */
/*
 * test-sysorder.c - the machine's daemon's pure decisions (core/sysorder.c,
 * DESIGN 22): an answer with any one field wrong is refused, whatever the
 * others say; the window an answer's oldest age must fall in, at its edges
 * and across the 32-bit wrap of the age clock; and the pick, oldest first,
 * equal ages taking turns, the next oldest as the limit.
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

static Suite *sysorder_suite(void)
{
	Suite *s = suite_create("sysorder");
	TCase *tc = th_tcase("answer", 30);
	TCase *tp = th_tcase("pick", 30);

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
	return s;
}

int main(void)
{
	return th_run(sysorder_suite());
}
