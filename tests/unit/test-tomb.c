/* SPDX-License-Identifier: MIT */
/*
 * test-tomb.c - the tombstone filter (core/tomb.c) and where the region
 * keeps it (core/layout.c), and the flag it puts on records made for an
 * identity it holds (core/pool.c).
 */
#include "harness.h"

#include "core/tomb.h"

static uint64_t filter[VL_TOMB_WORDS];

/* A random identity: every field random, as a real one is in parts. */
static struct vl_ident rand_ident(uint64_t *seed)
{
	struct vl_ident id;

	memset(&id, 0, sizeof(id));
	id.dev = th_below(seed, 64);
	id.ino = th_rand(seed);
	id.btime_sec = (int64_t)th_below(seed, 1u << 31);
	id.btime_nsec = (uint32_t)th_below(seed, 1000000000u);
	id.igen = (uint32_t)th_rand(seed);
	return id;
}

static unsigned bits_set(void)
{
	unsigned n = 0;

	for (unsigned i = 0; i < VL_TOMB_WORDS; i++)
		n += (unsigned)__builtin_popcountll(filter[i]);
	return n;
}

START_TEST(test_empty_holds_nothing)
{
	uint64_t seed = 1;

	memset(filter, 0, sizeof(filter));
	for (int i = 0; i < 10000; i++) {
		struct vl_ident id = rand_ident(&seed);

		th_check(!vl_tomb_has(filter, &id));
	}
}
END_TEST

START_TEST(test_bits_of_differ_and_fit)
{
	uint64_t seed = 2;

	for (int i = 0; i < 100000; i++) {
		struct vl_ident id = rand_ident(&seed);
		uint32_t b[VL_TOMB_K], again[VL_TOMB_K];

		vl_tomb_bits_of(&id, b);
		vl_tomb_bits_of(&id, again);
		for (int k = 0; k < VL_TOMB_K; k++) {
			th_check(b[k] < VL_TOMB_BITS);
			th_check(b[k] == again[k]); /* the same identity, the same bits */
			for (int j = 0; j < k; j++)
				th_check(b[j] != b[k]); /* K bits, not fewer */
		}
	}
}
END_TEST

START_TEST(test_add_then_has)
{
	uint64_t seed = 3;
	struct vl_ident id = rand_ident(&seed);

	memset(filter, 0, sizeof(filter));
	ck_assert(!vl_tomb_has(filter, &id));
	vl_tomb_add(filter, &id);
	ck_assert(vl_tomb_has(filter, &id));
	ck_assert_uint_eq(bits_set(), VL_TOMB_K);
	vl_tomb_add(filter, &id); /* twice: nothing more */
	ck_assert_uint_eq(bits_set(), VL_TOMB_K);
}
END_TEST

/* THE property: whatever was added tests true, however full the filter. */
START_TEST(test_no_false_negatives)
{
	enum { N = 200000 };
	static struct vl_ident ids[N];
	uint64_t seed = 4;

	memset(filter, 0, sizeof(filter));
	for (int i = 0; i < N; i++) {
		ids[i] = rand_ident(&seed);
		vl_tomb_add(filter, &ids[i]);
		/* the ones added so far, now and then (all of them at the end) */
		if (i % 20000 == 0)
			for (int j = 0; j <= i; j++)
				th_check_msg(vl_tomb_has(filter, &ids[j]), "identity %d lost after %d", j,
					     i);
	}
	for (int i = 0; i < N; i++)
		th_check_msg(vl_tomb_has(filter, &ids[i]), "identity %d lost", i);
}
END_TEST

/*
 * Any one field that differs makes another identity: a reused inode
 * number (another birth time or generation), a tmpfs mounted again
 * (another device). Each tests false in an empty-enough filter.
 */
START_TEST(test_each_field_counts)
{
	uint64_t seed = 5;
	int hits = 0;

	memset(filter, 0, sizeof(filter));
	for (int i = 0; i < 2000; i++) {
		struct vl_ident id = rand_ident(&seed), o;

		vl_tomb_add(filter, &id);
		for (int f = 0; f < 5; f++) {
			o = id;
			switch (f) {
			case 0: o.dev ^= 1; break;
			case 1: o.ino ^= 1ull << 40; break;
			case 2: o.btime_sec += 1; break;
			case 3: o.btime_nsec ^= 1; break;
			default: o.igen ^= 0x80000000u; break;
			}
			hits += vl_tomb_has(filter, &o);
		}
	}
	/* 2000 identities in 2^19 bits: about 2.5e-7 each; 10,000 tries */
	ck_assert_int_le(hits, 1);
}
END_TEST

/* The false positives tomb.h promises: about 1 in 35,000 after 10,000. */
START_TEST(test_false_positive_rate)
{
	uint64_t seed = 6;
	int hits = 0;

	memset(filter, 0, sizeof(filter));
	for (int i = 0; i < 10000; i++) {
		struct vl_ident id = rand_ident(&seed);

		vl_tomb_add(filter, &id);
	}
	for (int i = 0; i < 1000000; i++) {
		struct vl_ident id = rand_ident(&seed);

		hits += vl_tomb_has(filter, &id);
	}
	/* expected 29 in a million; a bad hash would give thousands */
	ck_assert_int_le(hits, 100);
}
END_TEST

/* ---- in the region ---------------------------------------------------------- */

START_TEST(test_region_has_room)
{
	struct th_region t;
	const char *base;

	th_region_init(&t, 100, 10);
	base = t.base;
	/* after the header, before the records, page aligned, all zeros when made */
	ck_assert_uint_ge(t.g.tomb_off, sizeof(struct vl_header));
	ck_assert_uint_eq(t.g.tomb_off % 4096, 0);
	ck_assert_uint_le(t.g.tomb_off + VL_TOMB_BYTES, t.g.files_off);
	ck_assert_ptr_eq(t.r.tomb, (const void *)(base + t.g.tomb_off));
	for (unsigned i = 0; i < VL_TOMB_WORDS; i++)
		th_check(t.r.tomb[i] == 0);
	/* a geometry with the filter elsewhere is not this version's */
	t.g.tomb_off += 4096;
	t.g.check = vl_geometry_sum(&t.g);
	ck_assert_int_eq(vl_geometry_check(&t.g, t.g.region_size), -EUCLEAN);
	th_region_fini(&t);
}
END_TEST

/* A record made for an identity the filter holds is flagged as it is made. */
START_TEST(test_publish_flags_tombstoned)
{
	struct th_region t;
	struct vl_ident a = th_ident(7, 100), b = th_ident(7, 101);
	uint32_t fa, fb;
	int fresh;

	th_region_init(&t, 100, 10);
	vl_tomb_add(t.r.tomb, &a);
	fa = vl_file_create(&t.r, &a, &fresh);
	fb = vl_file_create(&t.r, &b, &fresh);
	ck_assert_uint_ne(fa, VL_NIL);
	ck_assert_uint_ne(fb, VL_NIL);
	ck_assert(vl_file_at(&t.r, fa)->h.flags & VL_FF_TOMB);
	ck_assert(!(vl_file_at(&t.r, fb)->h.flags & VL_FF_TOMB));
	ck_assert(vl_file_ok(&t.r, vl_file_at(&t.r, fa)));
	/* freed and made again for another identity: the flag does not stay */
	vl_file_release(&t.r, fa);
	fb = vl_file_create(&t.r, &(struct vl_ident){ .dev = 7, .ino = 102 }, &fresh);
	ck_assert_uint_eq(fb, fa);
	ck_assert(!(vl_file_at(&t.r, fb)->h.flags & VL_FF_TOMB));
	th_region_fini(&t);
}
END_TEST

static Suite *tomb_suite(void)
{
	Suite *s = suite_create("tomb");
	TCase *tc = th_tcase("filter", 60);

	tcase_add_test(tc, test_empty_holds_nothing);
	tcase_add_test(tc, test_bits_of_differ_and_fit);
	tcase_add_test(tc, test_add_then_has);
	tcase_add_test(tc, test_no_false_negatives);
	tcase_add_test(tc, test_each_field_counts);
	tcase_add_test(tc, test_false_positive_rate);
	suite_add_tcase(s, tc);
	tc = th_tcase("region", 30);
	tcase_add_test(tc, test_region_has_room);
	tcase_add_test(tc, test_publish_flags_tombstoned);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return th_run(tomb_suite());
}
