/* SPDX-License-Identifier: MIT */
/*
 * test-tomb.c - the tombstones (core/tomb.c: an exact table under a
 * rising horizon) and where the region keeps them (core/layout.c), and
 * the flag they put on records made for an identity they hold
 * (core/pool.c).
 */
#include "harness.h"

#include "core/tomb.h"

#include <pthread.h>

static struct vl_tomb tomb;

#define SEC 1000000000ull
#define T0 1700000000ll /* a birth second of this century */

/* A random identity born at ns (since 1970): the other fields random, as a real one's are in parts. */
static struct vl_ident ident_born(uint64_t *seed, uint64_t ns)
{
	struct vl_ident id;

	memset(&id, 0, sizeof(id));
	id.dev = th_below(seed, 64);
	id.ino = th_rand(seed);
	id.btime_sec = (int64_t)(ns / SEC);
	id.btime_nsec = (uint32_t)(ns % SEC);
	id.igen = (uint32_t)th_rand(seed);
	return id;
}

static struct vl_ident rand_ident(uint64_t *seed)
{
	return ident_born(seed, (uint64_t)T0 * SEC + th_below(seed, 100000ull * SEC));
}

/* A random identity whose fingerprint falls in set s, born at ns. */
static struct vl_ident ident_in_set(uint64_t *seed, unsigned s, uint64_t ns)
{
	struct vl_ident id;

	do
		id = ident_born(seed, ns);
	while (vl_tomb_fp(&id) % VL_TOMB_SETS != s);
	return id;
}

START_TEST(test_empty_holds_nothing)
{
	uint64_t seed = 1;

	memset(&tomb, 0, sizeof(tomb));
	for (int i = 0; i < 10000; i++) {
		struct vl_ident id = rand_ident(&seed);

		th_check(!vl_tomb_has(&tomb, &id));
	}
	/* no horizon yet: not even an identity with no birth time */
	th_check(!vl_tomb_has(&tomb, &(struct vl_ident){ .dev = 1, .ino = 2 }));
}
END_TEST

START_TEST(test_birth)
{
	struct vl_ident id = { .dev = 1, .ino = 2 };

	ck_assert_uint_eq(vl_tomb_birth(&id), 1); /* none: 1, under any horizon */
	id.btime_sec = -5;
	ck_assert_uint_eq(vl_tomb_birth(&id), 1);
	id.btime_sec = T0;
	id.btime_nsec = 7;
	ck_assert_uint_eq(vl_tomb_birth(&id), (uint64_t)T0 * SEC + 7);
	id.btime_nsec = 2000000000u; /* nonsense: rounded up, within its second */
	ck_assert_uint_eq(vl_tomb_birth(&id), (uint64_t)T0 * SEC + SEC - 1);
	id.btime_sec = INT64_MAX;
	ck_assert_uint_eq(vl_tomb_birth(&id), UINT64_MAX);
}
END_TEST

/* Any one field that differs makes another fingerprint; the same identity, the same. */
START_TEST(test_each_field_counts)
{
	uint64_t seed = 5;

	for (int i = 0; i < 20000; i++) {
		struct vl_ident id = rand_ident(&seed), o = id;

		th_check(vl_tomb_fp(&id) == vl_tomb_fp(&o) && vl_tomb_fp(&id) != 0);
		for (int f = 0; f < 5; f++) {
			o = id;
			switch (f) {
			case 0: o.dev ^= 1; break;
			case 1: o.ino ^= 1ull << 40; break;
			case 2: o.btime_sec += 1; break;
			case 3: o.btime_nsec ^= 1; break;
			default: o.igen ^= 0x80000000u; break;
			}
			th_check_msg(vl_tomb_fp(&o) != vl_tomb_fp(&id), "field %d of identity %d", f, i);
		}
	}
}
END_TEST

START_TEST(test_add_then_has)
{
	uint64_t seed = 3;
	struct vl_ident id = rand_ident(&seed), other = rand_ident(&seed);

	memset(&tomb, 0, sizeof(tomb));
	ck_assert(!vl_tomb_has(&tomb, &id));
	vl_tomb_add(&tomb, &id);
	ck_assert(vl_tomb_has(&tomb, &id));
	ck_assert(!vl_tomb_has(&tomb, &other));
	ck_assert_uint_eq(tomb.added, 1);
	vl_tomb_add(&tomb, &id); /* twice: nothing more */
	ck_assert_uint_eq(tomb.added, 1);
	ck_assert_uint_eq(tomb.horizon, 0);
}
END_TEST

/*
 * A full set pushes out the first born, newcomer included, and the
 * horizon rises to its birth: nothing pushed out tests false.
 */
START_TEST(test_full_set_raises_horizon)
{
	uint64_t seed = 8;
	struct vl_ident ids[VL_TOMB_WAYS + 2], early;
	unsigned s = 17;

	memset(&tomb, 0, sizeof(tomb));
	for (unsigned i = 0; i < VL_TOMB_WAYS; i++) {
		ids[i] = ident_in_set(&seed, s, (uint64_t)T0 * SEC + (i + 1) * SEC);
		vl_tomb_add(&tomb, &ids[i]);
	}
	ck_assert_uint_eq(tomb.horizon, 0);
	ck_assert_uint_eq(tomb.pushed, 0);
	/* one more, born later: the first born (ids[0]) goes, under the horizon */
	ids[VL_TOMB_WAYS] = ident_in_set(&seed, s, (uint64_t)T0 * SEC + 100 * SEC);
	vl_tomb_add(&tomb, &ids[VL_TOMB_WAYS]);
	ck_assert_uint_eq(tomb.pushed, 1);
	ck_assert_uint_eq(tomb.horizon, vl_tomb_birth(&ids[0]));
	for (unsigned i = 0; i <= VL_TOMB_WAYS; i++)
		ck_assert(vl_tomb_has(&tomb, &ids[i]));
	/* one born before all of them: it is the one that goes, the table unchanged */
	early = ident_in_set(&seed, s, (uint64_t)T0 * SEC + SEC + SEC / 2);
	vl_tomb_add(&tomb, &early);
	ck_assert_uint_eq(tomb.horizon, vl_tomb_birth(&early));
	ck_assert(vl_tomb_has(&tomb, &early));
	for (unsigned i = 0; i <= VL_TOMB_WAYS; i++)
		ck_assert(vl_tomb_has(&tomb, &ids[i]));
	/* born under the horizon: nothing written, and yes */
	ids[VL_TOMB_WAYS + 1] = ident_in_set(&seed, s, (uint64_t)T0 * SEC);
	ck_assert(vl_tomb_has(&tomb, &ids[VL_TOMB_WAYS + 1]));
	/* born after the horizon and never added: no, in this set or another */
	early = ident_in_set(&seed, s, (uint64_t)T0 * SEC + 50 * SEC);
	ck_assert(!vl_tomb_has(&tomb, &early));
	early = ident_in_set(&seed, s + 1, (uint64_t)T0 * SEC + 50 * SEC);
	ck_assert(!vl_tomb_has(&tomb, &early));
	/* and with a horizon, an identity with no birth time is taken as tombstoned */
	ck_assert(vl_tomb_has(&tomb, &(struct vl_ident){ .dev = 1, .ino = 2 }));
}
END_TEST

/*
 * THE property, at the scale of months of a daemon collecting every
 * minute: 1,000,000 files forgotten with purged ranges, born over 10,000 s
 * and forgotten in an order that is not quite their births' (up to a
 * minute out). Every one tests tombstoned, now and then while they are
 * added and all at the end; the horizon never falls. Then the false 1s
 * tomb.h states: for identities born after the horizon, measured; for
 * those born at or before it, every one.
 */
#define N 1000000

static uint64_t births[N];
static struct vl_ident ids[N];

START_TEST(test_million_forgotten)
{
	uint64_t seed = 4, last = 0, h;
	unsigned kept = 0, hits = 0;

	memset(&tomb, 0, sizeof(tomb));
	for (int i = 0; i < N; i++) {
		uint64_t ns = (uint64_t)T0 * SEC + (uint64_t)i * (10000 * SEC / N) +
			      th_below(&seed, 60 * SEC);

		ids[i] = ident_born(&seed, ns);
		births[i] = ns;
		vl_tomb_add(&tomb, &ids[i]);
		th_check_msg(tomb.horizon >= last, "the horizon fell at %d", i);
		last = tomb.horizon;
		if (i % 100000 == 99999)
			for (int j = 0; j <= i; j += 7)
				th_check_msg(vl_tomb_has(&tomb, &ids[j]), "identity %d lost after %d", j, i);
	}
	for (int i = 0; i < N; i++)
		th_check_msg(vl_tomb_has(&tomb, &ids[i]), "identity %d lost", i);
	h = tomb.horizon;
	for (int i = 0; i < N; i++)
		kept += births[i] > h;
	/* what the table holds above the horizon: the newest born (1,804 here) */
	printf("tomb: after %d forgotten: %u born after the horizon, %llu pushed out\n", N, kept,
	       (unsigned long long)tomb.pushed);
	ck_assert_uint_ge(kept, 1000);
	ck_assert_uint_le(kept, VL_TOMB_SETS * VL_TOMB_WAYS);

	/* born after the horizon, never forgotten: only a 64-bit collision says 1 */
	for (int i = 0; i < N; i++) {
		struct vl_ident id = ident_born(&seed, h + 1 + th_below(&seed, 86400 * SEC));

		hits += vl_tomb_has(&tomb, &id);
	}
	printf("tomb: %u of %d identities born after the horizon test tombstoned\n", hits, N);
	ck_assert_uint_lt(hits, N / 100000); /* below 1 in 100,000 (expected: 16 in 2^64) */
	/* born at or before it: all of them (tomb.h: the price) */
	for (int i = 0; i < 10000; i++) {
		struct vl_ident id = ident_born(&seed, h - th_below(&seed, 86400 * SEC));

		th_check(vl_tomb_has(&tomb, &id));
	}
}
END_TEST

/*
 * Readers with no lock beside the one writer (the region lock's holder):
 * an identity whose add finished before a reader looks tests tombstoned
 * to it, while the writer pushes entries out of full sets under it (births
 * rising, so every add lands in the table, and the horizon follows).
 */
#define RACE_N 300000
#define RACE_READERS 2

static unsigned race_done; /* ids[0, race_done) added */
static int race_misses;

static void *race_reader(void *arg)
{
	uint64_t seed = (uint64_t)(uintptr_t)arg;
	unsigned n;

	while ((n = __atomic_load_n(&race_done, __ATOMIC_ACQUIRE)) < RACE_N) {
		if (n == 0)
			continue;
		/* the newest (in the table) and any older one (perhaps under the horizon) */
		if (!vl_tomb_has(&tomb, &ids[n - 1]) || !vl_tomb_has(&tomb, &ids[th_below(&seed, n)]))
			__atomic_fetch_add(&race_misses, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

START_TEST(test_readers_race_writer)
{
	pthread_t th[RACE_READERS];
	uint64_t seed = 9;

	memset(&tomb, 0, sizeof(tomb));
	race_done = 0;
	race_misses = 0;
	for (int i = 0; i < RACE_N; i++)
		ids[i] = ident_born(&seed, (uint64_t)T0 * SEC + (uint64_t)i * 1000 +
						   th_below(&seed, 1000));
	for (int i = 0; i < RACE_READERS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, race_reader, (void *)(uintptr_t)(i + 1)),
				 0);
	for (unsigned i = 0; i < RACE_N; i++) {
		vl_tomb_add(&tomb, &ids[i]);
		__atomic_store_n(&race_done, i + 1, __ATOMIC_RELEASE);
	}
	for (int i = 0; i < RACE_READERS; i++)
		pthread_join(th[i], NULL);
	/* the horizon went by most of them: entries were pushed out under the readers */
	ck_assert_uint_gt(tomb.horizon, vl_tomb_birth(&ids[RACE_N / 2]));
	ck_assert_int_eq(race_misses, 0);
}
END_TEST

/* ---- in the region ---------------------------------------------------------- */

START_TEST(test_region_has_room)
{
	struct th_region t;
	const char *base;
	const uint64_t *w;

	th_region_init(&t, 100, 10);
	base = t.base;
	/* after the header, before the records, page aligned, all zeros when made */
	ck_assert_uint_ge(t.g.tomb_off, sizeof(struct vl_header));
	ck_assert_uint_eq(t.g.tomb_off % 4096, 0);
	ck_assert_uint_le(t.g.tomb_off + VL_TOMB_BYTES, t.g.files_off);
	ck_assert_ptr_eq(t.r.tomb, (const void *)(base + t.g.tomb_off));
	w = (const uint64_t *)t.r.tomb;
	for (unsigned i = 0; i < VL_TOMB_BYTES / 8; i++)
		th_check(w[i] == 0);
	/* a geometry with them elsewhere is not this version's */
	t.g.tomb_off += 4096;
	t.g.check = vl_geometry_sum(&t.g);
	ck_assert_int_eq(vl_geometry_check(&t.g, t.g.region_size), -EUCLEAN);
	th_region_fini(&t);
}
END_TEST

/* A record made for an identity the tombstones hold is flagged as it is made. */
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
	fb = vl_file_create(&t.r, &(struct vl_ident){ .dev = 7, .ino = 102, .btime_sec = T0 },
			    &fresh);
	ck_assert_uint_eq(fb, fa);
	ck_assert(!(vl_file_at(&t.r, fb)->h.flags & VL_FF_TOMB));
	th_region_fini(&t);
}
END_TEST

static Suite *tomb_suite(void)
{
	Suite *s = suite_create("tomb");
	TCase *tc = th_tcase("table", 120);

	tcase_add_test(tc, test_empty_holds_nothing);
	tcase_add_test(tc, test_birth);
	tcase_add_test(tc, test_each_field_counts);
	tcase_add_test(tc, test_add_then_has);
	tcase_add_test(tc, test_full_set_raises_horizon);
	tcase_add_test(tc, test_million_forgotten);
	tcase_add_test(tc, test_readers_race_writer);
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
