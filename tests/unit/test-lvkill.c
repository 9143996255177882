/* SPDX-License-Identifier: MIT */
/*
 * test-lvkill.c - format 10's leaves with a writer killed after every
 * store (doc/format10-plan.md step 3, leaves.h "Kills"): leaves.c is built
 * here with VL_LV_STORE_HOOK, whose hook stops a change after its k-th
 * store (a longjmp: the change never returns, its reservation and what it
 * let go are not given back, as a dead writer's). Every k of every kind of
 * change, on trees of height 1 to 3 holding purged ranges; then the
 * repair; then: the tree's shape sound, every block of the file in it or
 * given back, and every key unit either as before the change, as after
 * it, or purged where the change would have left it unpurged: never
 * unpurged where it was purged, never a purged unit lost (DESIGN 4).
 */
#include <setjmp.h>

#include "harness.h"

#include "core/leaves.h"

/* ---- the hook ---------------------------------------------------------------- */

static long store_count;
static long store_kill; /* 0: never */
static jmp_buf killed;

static int store_line; /* leaves.c's line of the last store */

void vl_lv_store_hook(int line);
void vl_lv_store_hook(int line)
{
	store_count++;
	store_line = line;
	if (store_kill != 0 && store_count == store_kill)
		longjmp(killed, 1);
}

/* ---- a tree in heap memory and its allocator -------------------------------------- */

#define SPACE 3000u /* key units */
#define CAP 600u

struct kt {
	union vl_lv_block b[CAP];
	struct vl_lv_root root;
	uint32_t free[CAP];
	uint32_t nfree;
	struct vl_lv_res res;
};

static struct vl_lv tree_of(struct kt *x)
{
	return (struct vl_lv){ .b = x->b, .cap = CAP, .file = 7, .root = &x->root };
}

static void kt_init(struct kt *x)
{
	uint32_t i;

	memset(x, 0, sizeof(*x));
	for (i = CAP - 1; i >= 1; i--)
		x->free[x->nfree++] = i;
}

static void kt_reserve(struct kt *x)
{
	struct vl_lv t = tree_of(x);

	while (x->res.n < vl_lv_need(&t) && x->nfree > 0)
		x->res.blk[x->res.n++] = x->free[--x->nfree];
}

static void kt_commit(struct kt *x, uint32_t freed, uint32_t nfreed)
{
	uint32_t b = freed, k;

	for (k = 0; k < nfreed; k++) {
		th_check(b != 0 && b < CAP);
		x->free[x->nfree++] = b;
		b = x->b[b].next_free;
	}
	th_check(b == 0);
}

/* ---- what the tree says, a key unit at a time ------------------------------------- */

enum { NONE, VOL, GONE }; /* no range, unpurged, purged */

/* The tree's ranges into st[]: 0, or -EUCLEAN if a walk cannot read them. */
static int units_of(struct kt *x, unsigned char *st)
{
	struct vl_lv t = tree_of(x);
	struct vl_lv_walk w;
	struct vl_lv_range r;
	int got;

	memset(st, NONE, SPACE);
	vl_lv_walk_init(&w, &t);
	while ((got = vl_lv_walk_next(&w, &r)) == 1) {
		uint64_t u;

		if (r.end > SPACE)
			return -EUCLEAN;
		for (u = r.start; u < r.end; u++)
			st[u] = r.purged ? GONE : VOL;
	}
	return got;
}

/* ---- the tree's shape, as test-leaves.c checks it ---------------------------------- */

struct shape {
	uint64_t lo, hi;
	uint32_t min, blocks;
};

/* 0 or a reason */
static const char *shape_of(struct kt *x, uint32_t b, uint32_t level, int root, struct shape *s)
{
	uint32_t i;

	if (b == 0 || b >= CAP)
		return "block out of range";
	s->blocks = 1;
	s->min = VL_LV_NOAGE;
	if (level == 0) {
		const struct vl_lv_line *l = x->b[b].line;
		uint32_t n = l[0].age[0] & 0xffff;

		if ((l[0].age[0] & 0xffff0000u) != VL_LV_LEAF || n > VL_LV_CAP)
			return "not a leaf";
		if (!root && n < VL_LV_MIN)
			return "leaf under its fill";
		s->lo = l[0].start[0];
		s->hi = l[0].end[0];
		for (i = 0; i < n; i++) {
			const struct vl_lv_line *y = &l[(i + 1) / 3];
			unsigned j = (i + 1) % 3;
			uint64_t st = y->start[j] & ~VL_LV_PURGED;

			if (st < s->lo || st >= s->hi)
				return "range outside its leaf";
			if (!(y->start[j] >> 63) && y->age[j] < s->min)
				s->min = y->age[j];
		}
		return NULL;
	} else {
		const struct vl_lv_inner *in = &x->b[b].in;
		uint32_t n = in->hdr & 0xff;

		if ((in->hdr & 0xff000000u) != VL_LV_INNER || ((in->hdr >> 8) & 0xff) != level)
			return "not an inner node";
		if (n > VL_LV_FAN || n < (root ? 2u : VL_LV_FAN_MIN))
			return "inner node's count";
		for (i = 0; i < n; i++) {
			struct shape c;
			const char *why = shape_of(x, in->child[i], level - 1, 0, &c);

			if (why)
				return why;
			if (c.lo != in->key[i])
				return "inner key";
			if (c.min != in->minage[i])
				return "inner least age";
			if (i == 0)
				s->lo = c.lo;
			else if (c.lo != s->hi)
				return "intervals do not meet";
			s->hi = c.hi;
			if (c.min < s->min)
				s->min = c.min;
			s->blocks += c.blocks;
		}
		return NULL;
	}
}

/* The shape sound and every block in the tree, free or reserved: 0 or a reason. */
static const char *kt_shape(struct kt *x)
{
	struct shape s = { 0 };
	struct vl_lv t = tree_of(x);
	uint32_t leaves, inner;
	uint64_t ranges;
	const char *why;

	if (x->root.height != 0) {
		why = shape_of(x, x->root.block, x->root.height - 1, 1, &s);
		if (why)
			return why;
		if (s.lo != 0 || s.hi != VL_LV_END)
			return "the tree's interval";
	} else if (x->root.block != 0) {
		return "root word";
	}
	if (s.blocks + x->nfree + x->res.n != CAP - 1)
		return "blocks lost or twice";
	if (vl_lv_count(&t, &leaves, &inner, &ranges) != 0)
		return "vl_lv_count fails";
	return NULL;
}

/* ---- the changes ---------------------------------------------------------------- */

enum { K_MARK, K_UNMARK, K_PURGE, K_CLEAR, K_FORGET, K_ABSORB, K_RESTAMP, K_N };
static const char *const kname[K_N] = { "mark", "unmark", "purge", "clear", "forget",
					 "absorb", "restamp" };

struct op {
	int kind;
	uint64_t s, e;
	int purged;
	uint32_t age;
};

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static struct vl_lv_change last; /* the last change run() made */

/* Run op on x: its result; the change given back to the allocator when it returns. */
static int run(struct kt *x, const struct op *o)
{
	struct vl_lv t = tree_of(x);
	struct vl_lv_change c;
	struct vl_lv_range old;
	int r;

	memset(&c, 0, sizeof(c));
	kt_reserve(x);
	switch (o->kind) {
	case K_MARK:
		r = vl_lv_mark(&t, o->s, o->e, o->age, &x->res, &c);
		break;
	case K_UNMARK:
		r = vl_lv_unmark(&t, o->s, o->e, &x->res, &c);
		break;
	case K_PURGE:
		r = vl_lv_oldest(&t, &old);
		if (r == 1)
			r = vl_lv_purge(&t, old.start, &c);
		break;
	case K_CLEAR:
		r = vl_lv_clear(&t, &c);
		break;
	case K_FORGET:
		r = vl_lv_forget_unpurged(&t, &c);
		break;
	case K_ABSORB:
		r = vl_lv_absorb(&t, o->s, o->e, o->purged, o->age, &x->res, &c);
		break;
	default:
		r = vl_lv_restamp(&t, o->age);
		break;
	}
	if (r >= 0)
		kt_commit(x, c.freed, c.nfreed);
	last = c;
	return r;
}

static void random_op(struct op *o, int kind, uint32_t age)
{
	o->kind = kind;
	o->s = rnd() % (SPACE - 40);
	o->e = o->s + 1 + rnd() % (kind == K_UNMARK ? 30 : 12);
	o->purged = (int)(rnd() & 1);
	o->age = kind == K_RESTAMP ? age / 2 : age;
}

static const char *mend(struct kt *x);

/*
 * A tree of about n ranges, a third of them purged; packed: rewritten by
 * the repair, leaves full and inner nodes even, so that the next range
 * in splits a leaf, a full root, and grows the tree.
 */
static void build(struct kt *x, unsigned n, int packed, uint32_t *age)
{
	struct op o;
	unsigned i;

	kt_init(x);
	for (i = 0; i < n; i++) {
		uint64_t s = packed ? (uint64_t)i * (SPACE / (n + 1)) + 1 : rnd() % (SPACE - 8);

		/* packed: n ranges apart, exactly */
		o = (struct op){ K_MARK, s, s + 1 + (packed ? 0 : rnd() % 3), 0, ++*age };
		th_check(run(x, &o) == 0);
		if (rnd() % 3 == 0) {
			o.kind = K_PURGE;
			th_check(run(x, &o) == 0);
		}
	}
	if (packed)
		th_check(mend(x) == NULL && kt_shape(x) == NULL);
}

/* ---- the repair, when there is one ------------------------------------------------ */

/*
 * What follows a kill before anyone reads the tree again: the repair,
 * given every block the allocator does not hold (the tree's, and those
 * the dead writer took from its reservation), and what is left of the
 * reservation; what it lets go, back to the allocator.
 */
static const char *mend(struct kt *x)
{
	static uint32_t list[CAP];
	static unsigned char held[CAP];
	struct vl_lv t = tree_of(x);
	struct vl_lv_change c;
	uint32_t i, n = 0;

	memset(held, 0, sizeof(held));
	for (i = 0; i < x->nfree; i++)
		held[x->free[i]] = 1;
	for (i = 0; i < x->res.n; i++)
		held[x->res.blk[i]] = 1;
	for (i = 1; i < CAP; i++)
		if (!held[i])
			list[n++] = i;
	if (vl_lv_repair(&t, list, n, CAP, &x->res, &c) != 0)
		return "the repair fails";
	kt_commit(x, c.freed, c.nfreed);
	return NULL;
}

/*
 * The repaired tree goes on: MARK, UNMARK, purge and ABSORB, each
 * answering, UNMARK saying 1 over a purged unit, the shape sound after.
 */
static const char *go_on(struct kt *x, uint32_t age)
{
	static unsigned char st[SPACE];
	static const int kinds[] = { K_MARK, K_UNMARK, K_PURGE, K_ABSORB };
	unsigned i;

	for (i = 0; i < 6; i++) {
		struct op o;
		uint64_t u;
		int gone = 0;

		random_op(&o, kinds[rnd() % 4], age + 1 + i);
		if (units_of(x, st) != 0)
			return "a repaired tree's walk fails";
		for (u = o.s; u < o.e; u++)
			gone |= st[u] == GONE;
		if (run(x, &o) < 0)
			return "a change on a repaired tree fails";
		if (o.kind == K_UNMARK && gone && !last.was_purged)
			return "UNMARK says 0 over a purged unit of a repaired tree";
		if (kt_shape(x) != NULL)
			return "a change on a repaired tree leaves it unsound";
	}
	return NULL;
}

/* ---- every kill ---------------------------------------------------------------- */

struct tally {
	long kills, unsound, lost, unread;
	long gone_lost; /* of lost: a unit purged before and after, not purged now */
	char first[200];
};

/* Is unit state `now` allowed between `was` and `will`? */
static int unit_ok(unsigned char was, unsigned char will, unsigned char now)
{
	if (now == was || now == will)
		return !(now == VOL && was == GONE);
	return now == GONE && (was == VOL || will == VOL);
}

static int kill_line;
static unsigned char site_hit[8192]; /* leaves.c's lines a kill stopped at */

static void note(struct tally *t, const char *what, int kind, long k, long n)
{
	store_line = kill_line;
	if (t->first[0] == 0)
		snprintf(t->first, sizeof(t->first), "%s after store %ld of %ld of a %s (leaves.c:%d)",
			 what, k, n, kname[kind], store_line);
}

static void kill_every_store(struct kt *x0, const struct op *o, struct tally *ty)
{
	static struct kt after, x;
	static unsigned char was[SPACE], will[SPACE], now[SPACE];
	long n, k;
	uint32_t u;

	th_check(units_of(x0, was) == 0);
	after = *x0;
	store_count = 0;
	store_kill = 0;
	th_check(run(&after, o) >= 0);
	n = store_count;
	th_check(units_of(&after, will) == 0);
	for (k = 1; k <= n; k++) {
		const char *why;

		x = *x0;
		store_count = 0;
		store_kill = k;
		if (setjmp(killed) == 0) {
			run(&x, o);
			ck_abort_msg("%s did not reach store %ld", kname[o->kind], k);
		}
		store_kill = 0;
		kill_line = store_line;
		if (store_line > 0 && store_line < 8192)
			site_hit[store_line] = 1;
		ty[o->kind].kills++;
		why = mend(&x);
		if (why == NULL)
			why = kt_shape(&x);
		if (why) {
			ty[o->kind].unsound++;
			note(&ty[o->kind], why, o->kind, k, n);
		}
		if (units_of(&x, now) != 0) {
			ty[o->kind].unread++;
			note(&ty[o->kind], "a walk fails", o->kind, k, n);
			continue;
		}
		for (u = 0; u < SPACE; u++)
			if (!unit_ok(was[u], will[u], now[u]))
				break;
		if (why == NULL && (why = go_on(&x, o->age + 1)) != NULL) {
			ty[o->kind].unsound++;
			note(&ty[o->kind], why, o->kind, k, n);
		}
		if (u < SPACE) {
			char m[120];

			snprintf(m, sizeof(m), "unit %u was %d, would be %d, is %d", u, was[u],
				 will[u], now[u]);
			ty[o->kind].lost++;
			for (u = 0; u < SPACE; u++)
				if (was[u] == GONE && will[u] == GONE && now[u] != GONE)
					break;
			ty[o->kind].gone_lost += u < SPACE;
			note(&ty[o->kind], m, o->kind, k, n);
		}
	}
}

START_TEST(kills)
{
	static struct kt x0;
	/* heights 1 to 3; packed: an empty tree, one full leaf, a root of 15 full leaves */
	static const unsigned sizes[] = { 4, 9, 30, 60, 200, 400, 0, 11, 165 };
	static const int packed[] = { 0, 0, 0, 0, 0, 0, 1, 1, 1 };
	struct tally ty[K_N];
	long bad = 0;
	unsigned si, rep;
	int kind;

	memset(ty, 0, sizeof(ty));
	rng = 0x9e3779b97f4a7c15ull;
	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		for (rep = 0; rep < 40; rep++) {
			uint32_t age = 1;

			build(&x0, sizes[si], packed[si], &age);
			for (kind = 0; kind < K_N; kind++) {
				struct op o;

				random_op(&o, kind, age + 1);
				kill_every_store(&x0, &o, ty);
			}
		}
	}
	for (kind = 0; kind < K_N; kind++) {
		printf("%-8s %6ld kills: %5ld unsound, %5ld unreadable, %5ld wrong (%ld a purged unit lost)%s%s\n",
		       kname[kind], ty[kind].kills, ty[kind].unsound, ty[kind].unread,
		       ty[kind].lost, ty[kind].gone_lost, ty[kind].first[0] ? "; first: " : "",
		       ty[kind].first);
		bad += ty[kind].unsound + ty[kind].unread + ty[kind].lost;
	}
	for (si = 0, rep = 0; si < 8192; si++)
		rep += site_hit[si];
	printf("kills stopped at %u of leaves.c's store sites\n", rep);
	if (getenv("LVKILL_SITES"))
		for (si = 0; si < 8192; si++)
			if (site_hit[si])
				printf("site %u\n", si);
	fflush(stdout);
	ck_assert_msg(bad == 0, "%ld kills leave the tree unsound or a range wrong", bad);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("lvkill");
	TCase *tc = tcase_create("kills");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, kills);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
