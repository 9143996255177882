/* SPDX-License-Identifier: MIT */
/*
 * test-tidmap.c - the index of thread ids `volatile run` keeps its callers
 * in (core/tidmap.c): every key put and not removed is found, no other,
 * through removals that shift probe runs back, and through the growing
 * and shrinking a caller does as vl_tidmap_want says.
 */
#include "harness.h"

#include "core/tidmap.h"

/* A table as its user keeps it: slots, their number, the entries in them. */
struct table {
	struct vl_tidmap_slot *s;
	uint32_t cap, count;
};

static void resize(struct table *t, uint32_t count)
{
	uint32_t want = vl_tidmap_want(t->cap, count);
	struct vl_tidmap_slot *s;

	if (want == t->cap)
		return;
	s = calloc(want, sizeof(*s));
	ck_assert_ptr_nonnull(s);
	if (t->s)
		vl_tidmap_move(t->s, t->cap, s, want);
	free(t->s);
	t->s = s;
	t->cap = want;
}

static void put(struct table *t, int32_t key)
{
	resize(t, t->count + 1);
	th_check(vl_tidmap_insert(t->s, t->cap, key, (void *)(intptr_t)key) >= 0);
	t->count++;
}

static void del(struct table *t, int32_t key)
{
	long i = vl_tidmap_find(t->s, t->cap, key);

	th_check(i >= 0);
	vl_tidmap_remove(t->s, t->cap, i);
	t->count--;
	resize(t, t->count);
}

/* every key of the model is found with its value, every other key is not */
static void agrees(const struct table *t, const unsigned char *in, int32_t keys)
{
	uint32_t held = 0;

	for (int32_t k = 1; k < keys; k++) {
		long i = vl_tidmap_find(t->s, t->cap, k);

		th_check_msg(in[k] ? i >= 0 : i < 0, "key %d: %s", (int)k,
			     in[k] ? "lost" : "found, never put or removed");
		if (i >= 0)
			th_check((intptr_t)t->s[i].val == k);
	}
	for (uint32_t i = 0; i < t->cap; i++)
		held += t->s[i].key != 0;
	th_check_msg(held == t->count, "%u entries held, %u put", held, t->count);
}

START_TEST(test_empty)
{
	struct vl_tidmap_slot s[VL_TIDMAP_MIN];

	memset(s, 0, sizeof(s));
	ck_assert_int_eq(vl_tidmap_find(NULL, 0, 5), -1);
	ck_assert_int_eq(vl_tidmap_find(s, VL_TIDMAP_MIN, 5), -1);
	/* key 0 is the empty slot's, never a thread's */
	ck_assert_int_eq(vl_tidmap_find(s, VL_TIDMAP_MIN, 0), -1);
	ck_assert_int_eq(vl_tidmap_insert(s, VL_TIDMAP_MIN, 0, NULL), -1);
}
END_TEST

/* a full table (the caller never lets it) still ends every probe */
START_TEST(test_full_table_ends_probes)
{
	struct vl_tidmap_slot s[VL_TIDMAP_MIN];

	memset(s, 0, sizeof(s));
	for (int32_t k = 1; k <= (int32_t)VL_TIDMAP_MIN; k++)
		ck_assert_int_ge(vl_tidmap_insert(s, VL_TIDMAP_MIN, k, NULL), 0);
	ck_assert_int_eq(vl_tidmap_insert(s, VL_TIDMAP_MIN, 1000, NULL), -1);
	ck_assert_int_eq(vl_tidmap_find(s, VL_TIDMAP_MIN, 1000), -1);
	ck_assert_int_ge(vl_tidmap_find(s, VL_TIDMAP_MIN, 64), 0);
}
END_TEST

START_TEST(test_size_follows_count)
{
	ck_assert_uint_eq(vl_tidmap_want(0, 1), VL_TIDMAP_MIN);
	ck_assert_uint_eq(vl_tidmap_want(64, 32), 64);
	ck_assert_uint_eq(vl_tidmap_want(64, 33), 128);
	ck_assert_uint_eq(vl_tidmap_want(64, 4097), 16384);
	ck_assert_uint_eq(vl_tidmap_want(16384, 2048), 16384);
	ck_assert_uint_eq(vl_tidmap_want(16384, 2047), 8192);
	ck_assert_uint_eq(vl_tidmap_want(16384, 0), VL_TIDMAP_MIN);
}
END_TEST

/*
 * Random puts and removals against a model, thread ids in runs as a
 * program makes them and scattered: the table agrees with the model after
 * every step of a first thousand, and every thousand after.
 */
START_TEST(test_random_against_model)
{
	enum { KEYS = 20000, STEPS = 400000 };
	unsigned char *in = calloc(KEYS, 1);
	struct table t = { NULL, 0, 0 };
	uint64_t seed = 42;
	uint32_t most = 0;

	ck_assert_ptr_nonnull(in);
	for (int step = 0; step < STEPS; step++) {
		/* phases: mostly puts, then mostly removals, so the size goes both ways */
		int growing = (step / 50000) % 2 == 0;
		int32_t k = (int32_t)(1 + (th_below(&seed, 4) == 0 ? th_below(&seed, KEYS - 1)
					    : (uint64_t)(step / 7) % (KEYS - 1)));
		int want_in = th_below(&seed, 10) < (growing ? 7u : 3u);

		if (want_in && !in[k]) {
			put(&t, k);
			in[k] = 1;
		} else if (!want_in && in[k]) {
			del(&t, k);
			in[k] = 0;
		}
		if (t.count > most)
			most = t.count;
		if (step < 1000 || step % 1000 == 0)
			agrees(&t, in, KEYS);
		th_check(t.cap == vl_tidmap_want(t.cap, t.count));
	}
	agrees(&t, in, KEYS);
	ck_assert_uint_gt(most, 5000); /* it grew well past the least size */
	for (int32_t k = 1; k < KEYS; k++)
		if (in[k])
			del(&t, k);
	ck_assert_uint_eq(t.count, 0);
	ck_assert_uint_eq(t.cap, VL_TIDMAP_MIN); /* and shrank back */
	free(t.s);
	free(in);
}
END_TEST

/*
 * Removal in a probe run that wraps around the end of the array: keys
 * whose home is the last slot fill it and the first ones; removing any of
 * them leaves every other reachable.
 */
START_TEST(test_removal_wraps)
{
	struct vl_tidmap_slot s[VL_TIDMAP_MIN];
	int32_t keys[8];
	int n = 0;

	for (int32_t k = 1; n < 8 && k < 10000000; k++) {
		struct vl_tidmap_slot one[VL_TIDMAP_MIN];

		memset(one, 0, sizeof(one));
		/* its home: where it lands alone */
		if (vl_tidmap_insert(one, VL_TIDMAP_MIN, k, NULL) == VL_TIDMAP_MIN - 1)
			keys[n++] = k;
	}
	ck_assert_int_eq(n, 8);
	for (int victim = 0; victim < 8; victim++) {
		memset(s, 0, sizeof(s));
		for (int i = 0; i < 8; i++)
			ck_assert_int_eq(vl_tidmap_insert(s, VL_TIDMAP_MIN, keys[i], NULL),
					 (i + VL_TIDMAP_MIN - 1) % VL_TIDMAP_MIN);
		vl_tidmap_remove(s, VL_TIDMAP_MIN, vl_tidmap_find(s, VL_TIDMAP_MIN, keys[victim]));
		for (int i = 0; i < 8; i++)
			ck_assert_int_eq(vl_tidmap_find(s, VL_TIDMAP_MIN, keys[i]) >= 0, i != victim);
	}
}
END_TEST

static Suite *tidmap_suite(void)
{
	Suite *s = suite_create("tidmap");
	TCase *tc = th_tcase("index", 60);

	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_full_table_ends_probes);
	tcase_add_test(tc, test_size_follows_count);
	tcase_add_test(tc, test_random_against_model);
	tcase_add_test(tc, test_removal_wraps);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return th_run(tidmap_suite());
}
