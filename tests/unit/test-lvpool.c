/* SPDX-License-Identifier: MIT */
/*
 * test-lvpool.c - core/lvpool.c, format 10's block allocator: built into
 * this program alone (not yet in the library), with VL_LP_STEPS, so that
 * vl_lp_step() below runs after its every store to shared memory.
 *
 * The threads case under ThreadSanitizer (it knows the atomics; helgrind
 * does not, and reports every relaxed load and store of a link as a race),
 * from the source directory with build/ configured:
 *
 *   clang -g -O1 -fsanitize=thread -DVL_LP_STEPS -include build/config.h \
 *     -Isrc -Itests/unit -Iinclude -pthread tests/unit/test-lvpool.c \
 *     src/core/lvpool.c -o /tmp/test-lvpool $(pkg-config --cflags --libs check)
 *   VL_LP_ROUNDS=300000 CK_FORK=no CK_RUN_CASE=threads /tmp/test-lvpool
 */
#include "harness.h"

#include "core/lvpool.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- a pool in shared memory (a child's stores are the parent's) -------- */

#define CAP 64u
#define SIZE 256u

struct shared {
	struct vl_lp_hdr h;
	struct vl_lp_slot s[CAP];
	uint32_t linked[CAP]; /* the test's "trees": the file that links block b, 0 none */
};

static struct shared *sh;
static struct vl_lp P;

static void pool_new(uint32_t cap)
{
	if (sh == NULL) {
		sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			  -1, 0);
		ck_assert_ptr_ne(sh, MAP_FAILED);
	}
	memset(sh, 0, sizeof(*sh));
	ck_assert_int_eq(vl_lp_init(&P, &sh->h, sh->s, SIZE, cap), 0);
}

/* ---- the store counter ---------------------------------------------------- */

static uint32_t steps, stop_at;	     /* stop_at: 0 = never */
static void (*at_stop)(void);	     /* what happens there: NULL = the process dies */
static uint32_t contend;	     /* each store followed by another's push: the tag moves */

void vl_lp_step(void);
void vl_lp_step(void)
{
	void (*f)(void) = at_stop;

	if (contend)
		sh->h.top += 1ull << 32;
	if (stop_at == 0 || ++steps != stop_at)
		return;
	if (f == NULL)
		_exit(0); /* killed right after this store */
	at_stop = NULL;
	f();
}

/* ---- the accounting check -------------------------------------------------- */

struct census {
	uint32_t listed;  /* on the free stack */
	uint32_t held;    /* PENDING, in one of the live reservations given */
	uint32_t used;    /* USED by the file the test's trees say links it */
	uint32_t fresh;   /* never handed out: 0 at or above the mark */
	uint32_t lost;    /* FREE on no list below the mark */
	uint32_t orphan;  /* PENDING of no live reservation */
	uint32_t strange; /* USED not linked, linked not USED, unreadable */
};

/*
 * Every block exactly once: on the stack, in a live reservation (PENDING
 * with its token), USED and linked, or never handed out; what is not is
 * counted as lost, orphan or strange. A block in two places fails here.
 */
static struct census audit(struct vl_lp_res *const *res, uint32_t nres)
{
	uint8_t where[CAP] = { 0 };
	struct census c = { 0 };
	uint32_t hwm = sh->h.hwm > P.cap ? P.cap : sh->h.hwm, b = (uint32_t)sh->h.top;

	for (uint32_t k = 0; b != 0; k++, b = sh->s[b].next) {
		ck_assert_msg(k < P.cap, "the stack loops");
		ck_assert_msg(b < hwm, "block %u on the stack, mark %u", b, hwm);
		ck_assert_msg(VL_LP_STATE(sh->s[b].state) == VL_LP_FREE, "block %u listed, word %#x", b,
			      sh->s[b].state);
		ck_assert_msg(!where[b], "block %u listed twice", b);
		where[b] = 1;
		c.listed++;
	}
	for (uint32_t i = 0; i < nres; i++)
		for (uint32_t j = 0; j < res[i]->n; j++) {
			b = res[i]->b[j];
			ck_assert_msg(b > 0 && b < P.cap, "reservation holds %u", b);
			ck_assert_msg(!where[b], "block %u held and %s", b,
				      where[b] == 1 ? "listed" : "held again");
			ck_assert_msg(sh->s[b].state == VL_LP_WORD(VL_LP_PENDING, res[i]->tok),
				      "block %u held by %u, word %#x", b, res[i]->tok, sh->s[b].state);
			where[b] = 2;
			c.held++;
		}
	for (b = 1; b < P.cap; b++) {
		uint32_t x = sh->s[b].state;

		if (where[b])
			continue;
		if (VL_LP_STATE(x) == VL_LP_FREE && b >= hwm && x == 0)
			c.fresh++;
		else if (VL_LP_STATE(x) == VL_LP_FREE && !sh->linked[b])
			c.lost++;
		else if (VL_LP_STATE(x) == VL_LP_PENDING && !sh->linked[b])
			c.orphan++;
		else if (VL_LP_STATE(x) == VL_LP_USED && sh->linked[b] == VL_LP_ARG(x))
			c.used++;
		else
			c.strange++;
	}
	return c;
}

/* Nothing lost, orphaned or strange; and the sum is every block. */
static void audit_clean(struct vl_lp_res *const *res, uint32_t nres)
{
	struct census c = audit(res, nres);

	ck_assert_msg(c.lost == 0 && c.orphan == 0 && c.strange == 0,
		      "lost %u orphan %u strange %u (listed %u held %u used %u fresh %u)", c.lost,
		      c.orphan, c.strange, c.listed, c.held, c.used, c.fresh);
	ck_assert_uint_eq(c.listed + c.held + c.used + c.fresh, P.cap - 1);
}

/* ---- single process: take, use, give back, reserve ------------------------ */

START_TEST(test_init_and_geometry)
{
	struct vl_lp q;

	pool_new(CAP);
	ck_assert_int_eq(vl_lp_init(&q, &sh->h, sh->s, SIZE, 1), -EINVAL);
	ck_assert_int_eq(vl_lp_init(&q, &sh->h, sh->s, 0, CAP), -EINVAL);
	pool_new(CAP);
	ck_assert_int_eq(vl_lp_attach(&q, &sh->h, sh->s), 0);
	ck_assert_uint_eq(q.cap, CAP);
	ck_assert_uint_eq(q.size, SIZE);
	sh->h.cap = CAP * 2; /* a scribbled geometry fails its sum */
	ck_assert_int_eq(vl_lp_attach(&q, &sh->h, sh->s), -EUCLEAN);
	sh->h.cap = CAP;
	sh->h.size = 1;
	ck_assert_int_eq(vl_lp_attach(&q, &sh->h, sh->s), -EUCLEAN);
}
END_TEST

START_TEST(test_lowest_first_and_sparse)
{
	struct vl_lp_res a = { .tok = 5 }, *all[] = { &a };

	pool_new(CAP);
	ck_assert_int_eq(vl_lp_reserve(&P, &a, 5), 0);
	ck_assert_uint_eq(a.n, 5);
	for (uint32_t i = 0; i < 5; i++)
		ck_assert_uint_eq(a.b[i], i + 1); /* the lowest, from the mark */
	ck_assert_uint_eq(sh->h.hwm, 6);
	ck_assert_uint_eq(sh->h.out, 5);
	audit_clean(all, 1);
	/* back on the stack in one push: taken again from there, the mark still */
	ck_assert_uint_eq(vl_lp_give(&P, &a, 0), 5);
	ck_assert_uint_eq(a.n, 0);
	ck_assert_uint_eq(sh->h.out, 0);
	audit_clean(all, 1);
	ck_assert_int_eq(vl_lp_reserve(&P, &a, 3), 0);
	ck_assert_uint_eq(sh->h.hwm, 6);
	ck_assert_uint_eq(a.b[0], 1);
	ck_assert_uint_eq(a.b[1], 2);
	ck_assert_uint_eq(a.b[2], 3);
	/* three more: two from the stack, then the mark rises by one */
	ck_assert_int_eq(vl_lp_reserve(&P, &a, 6), 0);
	ck_assert_uint_eq(sh->h.hwm, 7);
	audit_clean(all, 1);
}
END_TEST

START_TEST(test_empty_reservation_touches_nothing)
{
	struct vl_lp_res a = { .tok = 5 };
	struct shared before;

	pool_new(CAP);
	ck_assert_int_eq(vl_lp_reserve(&P, &a, 9), 0);
	memcpy(&before, sh, sizeof(before));
	for (uint32_t want = 0; want <= 9; want++)
		ck_assert_int_eq(vl_lp_reserve(&P, &a, want), 0);
	ck_assert_int_eq(memcmp(&before, sh, sizeof(before)), 0);
	ck_assert_uint_eq(a.n, 9);
	ck_assert_int_eq(vl_lp_reserve(&P, &a, VL_LP_RES_MAX + 1), -EINVAL);
}
END_TEST

START_TEST(test_full_then_room_again)
{
	struct vl_lp_res a = { .tok = 5 }, b = { .tok = 6 }, *all[] = { &a, &b };

	pool_new(12);
	ck_assert_int_eq(vl_lp_reserve(&P, &a, 11), 0);
	ck_assert_int_eq(vl_lp_reserve(&P, &b, 1), -ENOMEM);
	ck_assert_uint_eq(b.n, 0);
	ck_assert_uint_eq(vl_lp_give(&P, &a, 8), 3);
	ck_assert_int_eq(vl_lp_reserve(&P, &b, 4), -ENOMEM);
	ck_assert_uint_eq(b.n, 3); /* what there was, kept */
	audit_clean(all, 2);
	ck_assert_uint_eq(vl_lp_give(&P, &b, 0), 3);
	ck_assert_int_eq(vl_lp_reserve(&P, &b, 3), 0);
	audit_clean(all, 2);
}
END_TEST

START_TEST(test_use_and_unuse)
{
	struct vl_lp_res a = { .tok = 5 }, *all[] = { &a };
	uint32_t x, y;

	pool_new(CAP);
	ck_assert_int_eq(vl_lp_reserve(&P, &a, 3), 0);
	x = vl_lp_pop(&a);
	y = vl_lp_pop(&a);
	ck_assert_int_eq(vl_lp_use(&P, x, 6, 9), -EUCLEAN); /* not PENDING of token 6 */
	ck_assert_int_eq(vl_lp_use(&P, 0, 5, 9), -EUCLEAN);
	ck_assert_int_eq(vl_lp_use(&P, CAP, 5, 9), -EUCLEAN);
	ck_assert_int_eq(vl_lp_use(&P, x, 5, 9), 0);
	ck_assert_int_eq(vl_lp_use(&P, x, 5, 9), -EUCLEAN); /* USED now */
	sh->linked[x] = 9;
	ck_assert_uint_eq(sh->s[x].state, VL_LP_WORD(VL_LP_USED, 9));
	ck_assert_int_eq(vl_lp_use(&P, y, 5, 10), 0);
	sh->linked[y] = 10;
	audit_clean(all, 1);
	ck_assert_int_eq(vl_lp_unuse(&P, &a, x, 10), -EUCLEAN); /* file 9's */
	sh->linked[x] = 0;
	ck_assert_int_eq(vl_lp_unuse(&P, &a, x, 9), 0);
	ck_assert_uint_eq(a.b[a.n - 1], x);
	audit_clean(all, 1);
	/* a full reservation gives half back to take one more */
	ck_assert_int_eq(vl_lp_reserve(&P, &a, VL_LP_RES_MAX), 0);
	sh->linked[y] = 0;
	ck_assert_int_eq(vl_lp_unuse(&P, &a, y, 10), 0);
	ck_assert_uint_eq(a.n, VL_LP_RES_MAX / 2 + 1);
	audit_clean(all, 1);
}
END_TEST

/*
 * Three takers, a random run of reserve, use (a tree links it), unuse,
 * give back: after every step every block is in exactly one place.
 */
#define TAKERS 3
static struct vl_lp_res tk[TAKERS], *tk_all[TAKERS] = { &tk[0], &tk[1], &tk[2] };
static uint32_t tk_used[TAKERS][CAP], tk_nused[TAKERS];

static void taker_step(uint64_t *rnd, uint32_t t)
{
	struct vl_lp_res *res = &tk[t];
	uint32_t file = t + 1, b;
	int r;

	switch (th_below(rnd, 4)) {
	case 0:
		r = vl_lp_reserve(&P, res, (uint32_t)th_below(rnd, 10));
		ck_assert_msg(r == 0 || r == -ENOMEM, "reserve: %d", r);
		break;
	case 1:
		b = vl_lp_pop(res);
		if (b == 0)
			break;
		ck_assert_int_eq(vl_lp_use(&P, b, res->tok, file), 0);
		sh->linked[b] = file;
		tk_used[t][tk_nused[t]++] = b;
		break;
	case 2:
		if (tk_nused[t] == 0)
			break;
		uint32_t i = (uint32_t)th_below(rnd, tk_nused[t]);

		b = tk_used[t][i];
		tk_used[t][i] = tk_used[t][--tk_nused[t]];
		sh->linked[b] = 0;
		ck_assert_int_eq(vl_lp_unuse(&P, res, b, file), 0);
		break;
	default:
		vl_lp_give(&P, res, (uint32_t)th_below(rnd, 4));
		break;
	}
}

static void takers_new(void)
{
	memset(tk, 0, sizeof(tk));
	memset(tk_nused, 0, sizeof(tk_nused));
	for (uint32_t t = 0; t < TAKERS; t++)
		tk[t].tok = VL_TOKEN(t + 1, 1);
}

START_TEST(test_random_takers_account)
{
	uint64_t rnd = 28;

	pool_new(CAP);
	takers_new();
	for (uint32_t i = 0; i < 20000; i++) {
		taker_step(&rnd, (uint32_t)th_below(&rnd, TAKERS));
		audit_clean(tk_all, TAKERS);
	}
	ck_assert_uint_ge(sh->h.hwm, CAP / 2);
}
END_TEST

/* The test's trees as the sweep's owner oracle. */
static int owner_linked(void *ctx, uint32_t b, uint32_t *file)
{
	(void)ctx;
	if (b == 0 || b >= CAP)
		return -1;
	*file = sh->linked[b];
	return *file != 0;
}

/* ---- kills: a process dies after any store; the repair and the sweep ---- */

#define KID VL_TOKEN(7, 3)
#define DEAD VL_TOKEN(8, 1)
#define ME VL_TOKEN(9, 1)
#define OTHER VL_TOKEN(10, 2)

static struct vl_lp_res kid, other;

static int dead_is_dead(void *ctx, uint32_t tok)
{
	(void)ctx;
	return tok != DEAD && tok != KID;
}
static const struct vl_lp_sweep_ops judge = { .alive = dead_is_dead, .owner = owner_linked };

/* Some blocks on the stack, some USED and linked, some another live taker holds. */
static void setup_mixed(void)
{
	struct vl_lp_res t = { .tok = ME };

	pool_new(CAP);
	other = (struct vl_lp_res){ .tok = OTHER };
	kid = (struct vl_lp_res){ .tok = KID };
	ck_assert_int_eq(vl_lp_reserve(&P, &t, 12), 0);
	for (uint32_t i = 0; i < 3; i++) {
		uint32_t b = vl_lp_pop(&t);

		ck_assert_int_eq(vl_lp_use(&P, b, ME, 4), 0);
		sh->linked[b] = 4;
	}
	ck_assert_uint_eq(vl_lp_give(&P, &t, 0), 9);
	ck_assert_int_eq(vl_lp_reserve(&P, &other, 2), 0);
}

static void op_fill_mark(void)
{
	vl_lp_reserve(&P, &kid, 5);
}
static void setup_fill_mark(void)
{
	pool_new(CAP);
	other = (struct vl_lp_res){ .tok = OTHER };
	kid = (struct vl_lp_res){ .tok = KID };
}

static void op_fill_both(void)
{
	vl_lp_reserve(&P, &kid, 12); /* 7 on the stack, then the mark */
}

static void op_give(void)
{
	vl_lp_give(&P, &kid, 2);
}
static void setup_give(void)
{
	setup_mixed();
	ck_assert_int_eq(vl_lp_reserve(&P, &kid, 8), 0);
}

/* use two (a tree links them), then one unlinked and unused, then all given back */
static void op_use_unuse(void)
{
	uint32_t a = vl_lp_pop(&kid), b = vl_lp_pop(&kid);

	if (vl_lp_use(&P, a, KID, 5) == 0)
		sh->linked[a] = 5;
	if (vl_lp_use(&P, b, KID, 5) == 0)
		sh->linked[b] = 5;
	sh->linked[a] = 0;
	vl_lp_unuse(&P, &kid, a, 5);
	vl_lp_give(&P, &kid, 0);
}
static void setup_use(void)
{
	setup_mixed();
	ck_assert_int_eq(vl_lp_reserve(&P, &kid, 4), 0);
}

/* a dead taker's reservation, given back by the kid */
static void op_repair(void)
{
	vl_lp_repair(&P, DEAD, KID);
}
static void setup_repair(void)
{
	struct vl_lp_res d = { .tok = DEAD };

	setup_mixed();
	ck_assert_int_eq(vl_lp_reserve(&P, &d, 20), 0); /* > the stack: the mark rises too */
}

/* a sweep, finding lost blocks (popped, never taken) and a dead taker's */
static void op_sweep(void)
{
	vl_lp_sweep(&P, &judge, NULL);
}
static void setup_sweep(void)
{
	struct vl_lp_res t = { .tok = ME };
	uint64_t top;

	setup_repair();
	ck_assert_int_eq(vl_lp_reserve(&P, &t, 5), 0);
	ck_assert_uint_eq(vl_lp_give(&P, &t, 0), 5);
	/* a taker that popped two and died before taking them */
	top = sh->h.top;
	for (uint32_t i = 0; i < 2; i++)
		top = ((top >> 32) + 1) << 32 | sh->s[(uint32_t)top].next;
	sh->h.top = top;
}

struct kill_case {
	const char *name;
	void (*setup)(void);
	void (*op)(void);
};
static const struct kill_case kills[] = {
	{ "fill from the mark", setup_fill_mark, op_fill_mark },
	{ "fill from the stack and the mark", setup_mixed, op_fill_both },
	{ "give back", setup_give, op_give },
	{ "use and unuse", setup_use, op_use_unuse },
	{ "repair", setup_repair, op_repair },
	{ "sweep", setup_sweep, op_sweep },
};

/* Every block not in use nor held: taken, in reservations of ME, none twice (audit). */
static void take_all(struct vl_lp_res *more, uint32_t nmore, uint32_t expect)
{
	struct vl_lp_res *all[2 + CAP / VL_LP_RES_MAX + 1] = { &other };
	uint32_t got = 0, i = 0;

	ck_assert_uint_le(nmore, CAP / VL_LP_RES_MAX + 1);
	for (; i < nmore; i++) {
		more[i] = (struct vl_lp_res){ .tok = ME };
		int r = vl_lp_reserve(&P, &more[i], VL_LP_RES_MAX);

		all[i + 1] = &more[i];
		got += more[i].n;
		if (r == -ENOMEM)
			break;
		ck_assert_int_eq(r, 0);
	}
	ck_assert_uint_eq(got, expect);
	audit_clean(all, i + 2 > nmore + 1 ? nmore + 1 : i + 2);
}

/*
 * After the kid is killed after its k-th store, k = 1, 2, ... until it
 * finishes: the repair of its token (and DEAD's) and a sweep, then every
 * block in exactly one place, and every free one can be taken.
 */
START_TEST(test_killed_after_each_store)
{
	const struct kill_case *kc = &kills[_i];
	uint32_t k;

	for (k = 1; k < 10000; k++) {
		struct vl_lp_res more[CAP / VL_LP_RES_MAX + 1], *live[] = { &other };
		struct vl_lp_swept sw;
		struct census c;
		pid_t pid;
		int st;

		kc->setup();
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			steps = 0;
			stop_at = k;
			kc->op();
			_exit(2);
		}
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert(WIFEXITED(st));
		vl_lp_repair(&P, KID, ME);
		vl_lp_repair(&P, DEAD, ME);
		ck_assert_int_eq(vl_lp_sweep(&P, &judge, &sw), 0);
		c = audit(live, 1);
		ck_assert_msg(c.lost == 0 && c.orphan == 0 && c.strange == 0,
			      "%s, killed after store %u: lost %u orphan %u strange %u", kc->name,
			      k, c.lost, c.orphan, c.strange);
		take_all(more, CAP / VL_LP_RES_MAX + 1, c.listed + c.fresh);
		if (WEXITSTATUS(st) == 2)
			break;
	}
	ck_assert_uint_gt(k, 3);
	fprintf(stderr, "%s: %u stores walked\n", kc->name, k - 1);
}
END_TEST

/*
 * A taker stopped after its k-th store while others take blocks (after a
 * sweep, unless the stopped one is the sweep: every block they can, or
 * two, which leaves the sweep's list to the stopped one), then goes on:
 * no block is in two places (the audit), and a sweep then leaves none
 * lost.
 */
static struct vl_lp_res grab[2];
static int sweeping, grab_few;

static void interfere(void)
{
	if (!sweeping)
		ck_assert_int_ge(vl_lp_sweep(&P, NULL, NULL), -EUCLEAN);
	for (uint32_t i = 0; i < 2; i++)
		vl_lp_reserve(&P, &grab[i], grab_few ? 1 : VL_LP_RES_MAX);
}

static int dead_only(void *ctx, uint32_t tok)
{
	(void)ctx;
	return tok != DEAD;
}
static const struct vl_lp_sweep_ops judge_alive = { .alive = dead_only, .owner = owner_linked };

static int all_alive(void *ctx, uint32_t tok)
{
	(void)ctx;
	(void)tok;
	return 1;
}
static int none_alive(void *ctx, uint32_t tok)
{
	(void)ctx;
	(void)tok;
	return 0;
}
static const struct vl_lp_sweep_ops oracle_live = { .alive = all_alive, .owner = owner_linked };
static const struct vl_lp_sweep_ops judge_all = { .alive = none_alive, .owner = owner_linked };

START_TEST(test_stopped_after_each_store)
{
	const struct kill_case *kc = &kills[_i / 2];
	uint32_t k;

	grab_few = _i % 2;
	for (k = 1; k < 10000; k++) {
		struct vl_lp_res *live[] = { &other, &kid, &grab[0], &grab[1] };
		int stopped;

		kc->setup();
		grab[0] = (struct vl_lp_res){ .tok = VL_TOKEN(11, 1) };
		grab[1] = (struct vl_lp_res){ .tok = VL_TOKEN(12, 1) };
		sweeping = kc->op == op_sweep;
		steps = 0;
		stop_at = k;
		at_stop = interfere;
		kc->op();
		stopped = at_stop == NULL;
		stop_at = 0;
		at_stop = NULL;
		(void)audit(live, 4); /* none twice, whatever else */
		vl_lp_repair(&P, DEAD, ME);
		ck_assert_int_eq(vl_lp_sweep(&P, &judge_alive, NULL), 0);
		audit_clean(live, 4);
		if (!stopped)
			break;
	}
	ck_assert_uint_gt(k, 3);
}
END_TEST

/* ---- scribbles: a stray write into the stack or a state word ------------ */

/*
 * Blocks 1..10 handed out; 1..6 given back in order (the stack 1, 2, ..,
 * 6); 7, 8 USED and linked by file 4; 9, 10 held by another taker.
 */
static void setup_scribble(void)
{
	struct vl_lp_res t = { .tok = ME };

	pool_new(CAP);
	other = (struct vl_lp_res){ .tok = OTHER };
	ck_assert_int_eq(vl_lp_reserve(&P, &t, 8), 0);
	ck_assert_int_eq(vl_lp_reserve(&P, &other, 2), 0);
	for (uint32_t b = 8; b >= 7; b--) {
		ck_assert_uint_eq(t.b[t.n - 1], b);
		ck_assert_int_eq(vl_lp_use(&P, vl_lp_pop(&t), ME, 4), 0);
		sh->linked[b] = 4;
	}
	ck_assert_uint_eq(vl_lp_give(&P, &t, 0), 6);
	ck_assert_uint_eq((uint32_t)sh->h.top, 1);
	audit_clean((struct vl_lp_res *[]){ &other }, 1);
}

/* Take every block the allocator gives (ending: -ENOMEM), none twice, none in use. */
static uint32_t take_until_full(struct vl_lp_res *more, uint32_t nmore)
{
	uint32_t got = 0, i;
	int r = 0;

	for (i = 0; i < nmore; i++)
		more[i] = (struct vl_lp_res){ .tok = ME };
	for (i = 0; i < nmore && r != -ENOMEM; i++) {
		r = vl_lp_reserve(&P, &more[i], VL_LP_RES_MAX);
		ck_assert_msg(r == 0 || r == -ENOMEM, "reserve: %d", r);
		got += more[i].n;
	}
	ck_assert_int_eq(r, -ENOMEM);
	return got;
}

static void stack_scribble(uint32_t which)
{
	switch (which) {
	case 0: sh->s[6].next = 1; break;		/* a cycle back to the head */
	case 1: sh->s[2].next = 2; break;		/* a block its own next */
	case 2: sh->s[3].next = CAP + 7; break;		/* out of the array */
	case 3: sh->s[3].next = 40; break;		/* above the mark: never handed out */
	case 4: sh->s[3].next = 7; break;		/* a USED block */
	case 5: sh->s[3].next = 9; break;		/* another taker's PENDING block */
	case 6: sh->h.top = (sh->h.top & ~0xffffffffull) | 0xdeadbeefu; break; /* the head */
	default: sh->h.top = (sh->h.top & ~0xffffffffull) | 8; break; /* the head: in use */
	}
}

/*
 * The stack scribbled: takers take what it holds up to the bad entry,
 * then from the mark, never a block in use nor one twice, and stop; a
 * sweep says it found the stack damaged and rebuilds it; then nothing is
 * lost and every free block can be taken.
 */
START_TEST(test_scribbled_stack)
{
	struct vl_lp_res more[4], *all[5] = { &other, &more[0], &more[1], &more[2], &more[3] };
	struct vl_lp_swept sw;
	struct census c;
	uint32_t got;

	setup_scribble();
	stack_scribble((uint32_t)_i);
	got = take_until_full(more, 4);
	c = audit(all, 5); /* the takers' blocks: none twice, each PENDING of its taker */
	ck_assert_uint_eq(c.strange, 0);
	ck_assert_uint_eq(c.used, 2);
	ck_assert_uint_eq(c.held, 2 + got);
	ck_assert_uint_eq(sh->h.damaged, 1);
	for (uint32_t i = 0; i < 4; i++)
		vl_lp_give(&P, &more[i], 0);
	ck_assert_int_eq(vl_lp_sweep(&P, &judge, &sw), -EUCLEAN);
	ck_assert_uint_eq(sh->h.damaged, 0);
	audit_clean(all, 1);
	ck_assert_uint_eq(take_until_full(more, 4), CAP - 1 - 4);
	audit_clean(all, 5);
	ck_assert_int_eq(vl_lp_sweep(&P, &judge, &sw), 0);
}
END_TEST

/*
 * A state word scribbled to state 3 (never written): never handed out;
 * a sweep with no oracle leaves it and says -EUCLEAN, one whose oracle
 * says no tree links it gives it back.
 */
START_TEST(test_scribbled_state_unknown)
{
	struct vl_lp_res more[4], *all[5] = { &other, &more[0], &more[1], &more[2], &more[3] };
	struct vl_lp_swept sw;

	setup_scribble();
	sh->s[3].state = 0xc0000003u; /* on the stack: the walk stops before it */
	sh->s[30].state = 0xffffffffu; /* above the mark: the claim passes it over */
	take_until_full(more, 4);
	for (uint32_t i = 0; i < 4; i++)
		for (uint32_t j = 0; j < more[i].n; j++)
			ck_assert(more[i].b[j] != 3 && more[i].b[j] != 30);
	for (uint32_t i = 0; i < 4; i++)
		vl_lp_give(&P, &more[i], 0);
	ck_assert_int_eq(vl_lp_sweep(&P, NULL, &sw), -EUCLEAN);
	ck_assert_uint_eq(sw.unknown, 2);
	ck_assert_uint_eq(sh->s[3].state, 0xc0000003u);
	ck_assert_int_eq(vl_lp_sweep(&P, &judge, &sw), 0);
	ck_assert_uint_eq(sw.leaked, 2);
	audit_clean(all, 1);
	ck_assert_uint_eq(take_until_full(more, 4), CAP - 1 - 4);
}
END_TEST

/*
 * What the owner oracle mends: a USED block no tree links (a taker
 * killed between use and link, or a file that let it go), a USED word
 * naming the wrong file, a FREE word over a linked block; and PENDING of
 * a dead token by alive.
 */
START_TEST(test_sweep_mends_by_oracle)
{
	struct vl_lp_res d = { .tok = DEAD }, more[4];
	struct vl_lp_res *all[5] = { &other, &more[0], &more[1], &more[2], &more[3] };
	struct vl_lp_swept sw;

	setup_scribble();
	ck_assert_int_eq(vl_lp_reserve(&P, &d, 3), 0); /* 1, 2, 3: DEAD dies holding them */
	sh->linked[7] = 0;				/* leaked */
	sh->linked[8] = 5;				/* USED(4) says the word */
	sh->linked[12] = 6;				/* linked, above the mark */
	sh->s[12].state = VL_LP_WORD(VL_LP_FREE, 77);
	sh->h.hwm = 13;
	ck_assert_int_eq(vl_lp_sweep(&P, &judge, &sw), 0);
	ck_assert_uint_eq(sw.leaked, 1);
	ck_assert_uint_eq(sw.dead, 3);
	ck_assert_uint_eq(sw.fixed, 2);
	ck_assert_uint_eq(sh->s[8].state, VL_LP_WORD(VL_LP_USED, 5));
	ck_assert_uint_eq(sh->s[12].state, VL_LP_WORD(VL_LP_USED, 6));
	/* the stack: 4, 5, 6 (given back before), 1, 2, 3 (DEAD's), 7, 11: lowest first */
	ck_assert_uint_eq((uint32_t)sh->h.top, 1);
	audit_clean(all, 1);
	ck_assert_uint_eq(take_until_full(more, 4), CAP - 1 - 4);
	audit_clean(all, 5);
}
END_TEST

/* The mark scribbled: above the capacity (full, until a sweep lists the rest), or down. */
START_TEST(test_scribbled_mark)
{
	struct vl_lp_res more[4], *all[5] = { &other, &more[0], &more[1], &more[2], &more[3] };
	struct vl_lp_swept sw;

	setup_scribble();
	sh->h.hwm = 0xfffffff0u;
	ck_assert_uint_eq(take_until_full(more, 4), 6); /* the stack */
	audit(all, 5);
	for (uint32_t i = 0; i < 4; i++)
		vl_lp_give(&P, &more[i], 0);
	ck_assert_int_eq(vl_lp_sweep(&P, &judge, &sw), 0);
	ck_assert_uint_eq(sw.listed, CAP - 1 - 4);
	ck_assert_uint_eq(take_until_full(more, 4), CAP - 1 - 4);
	audit_clean(all, 5);

	/* down: the stack's blocks above it look scribbled (cut), claims pass over those in use */
	setup_scribble();
	sh->h.hwm = 0;
	ck_assert_uint_eq(take_until_full(more, 4), CAP - 1 - 10);
	audit(all, 5);
	ck_assert_uint_eq(sh->h.damaged, 1);
	ck_assert_int_eq(vl_lp_sweep(&P, &judge, &sw), -EUCLEAN);
	ck_assert_uint_eq(sw.listed, 6);
	ck_assert_uint_eq(take_until_full(more, 1), 6);
	ck_assert_uint_eq(more[0].b[0], 1); /* lowest first */
}
END_TEST

/*
 * Random stray writes (a state word, a link, the top, the mark) among
 * three takers' work: no block is ever in two takers' hands, every call
 * returns; a sweep with the oracle then leaves the allocator usable.
 */
static int in_hands(uint32_t b, uint32_t skip_t, uint32_t skip_j)
{
	for (uint32_t t = 0; t < TAKERS; t++) {
		for (uint32_t j = 0; j < tk[t].n; j++)
			if (tk[t].b[j] == b && !(t == skip_t && j == skip_j))
				return 1;
		for (uint32_t j = 0; j < tk_nused[t]; j++)
			if (tk_used[t][j] == b)
				return 1;
	}
	return 0;
}

/*
 * Not among them (lvpool.h, Limits): a FREE word forged over a block a
 * taker holds or a tree links, which the allocator cannot tell from a
 * free one until a sweep asks the oracle; any word forged over a block a
 * live reservation holds (in no tree, PENDING: the sweep would take the
 * forgery for a leak).
 */
static int in_res(uint32_t b)
{
	for (uint32_t t = 0; t < TAKERS; t++)
		for (uint32_t j = 0; j < tk[t].n; j++)
			if (tk[t].b[j] == b)
				return 1;
	return 0;
}

static void scribble_state(uint32_t b, uint32_t w)
{
	if (in_res(b))
		return;
	if (VL_LP_STATE(w) == VL_LP_FREE && in_hands(b, TAKERS, 0))
		w |= 3u << 30;
	sh->s[b].state = w;
}

static void scribble_random(uint64_t *rnd)
{
	uint32_t b = (uint32_t)th_below(rnd, CAP), w = (uint32_t)th_rand(rnd);

	switch (th_below(rnd, 6)) {
	case 0: scribble_state(b, w); break;
	case 1: scribble_state(b, VL_LP_WORD(th_below(rnd, 3), th_below(rnd, 4))); break;
	case 2: sh->s[b].next = w % (CAP + 4); break;
	case 3: sh->s[b].next = w; break;
	case 4: sh->h.top = (sh->h.top & ~0xffffffffull) | (w % (CAP + 4)); break;
	default: sh->h.hwm = w % (CAP + 4); break;
	}
}

START_TEST(test_scribbled_random)
{
	uint64_t rnd = 1000 + (uint64_t)_i;
	struct vl_lp_res more[4];

	pool_new(CAP);
	takers_new();
	for (uint32_t i = 0; i < 3000; i++) {
		uint32_t t = (uint32_t)th_below(&rnd, TAKERS), before = tk[t].n;
		struct vl_lp_res *res = &tk[t];
		uint32_t b;

		if (th_below(&rnd, 50) == 0)
			scribble_random(&rnd);
		switch (th_below(&rnd, 5)) {
		case 0:
			vl_lp_reserve(&P, res, (uint32_t)th_below(&rnd, 10));
			for (uint32_t j = before; j < res->n; j++)
				ck_assert_msg(!in_hands(res->b[j], t, j), "block %u handed out twice",
					      res->b[j]);
			break;
		case 1:
			b = vl_lp_pop(res);
			if (b != 0 && vl_lp_use(&P, b, res->tok, t + 1) == 0) {
				sh->linked[b] = t + 1;
				tk_used[t][tk_nused[t]++] = b;
			}
			break;
		case 2:
			if (tk_nused[t] == 0)
				break;
			b = tk_used[t][--tk_nused[t]];
			sh->linked[b] = 0;
			if (vl_lp_unuse(&P, res, b, t + 1) != 0)
				break; /* its word was scribbled: the test lets it go */
			break;
		case 3:
			vl_lp_give(&P, res, (uint32_t)th_below(&rnd, 4));
			break;
		default:
			if (th_below(&rnd, 10) == 0)
				ck_assert_int_ge(vl_lp_sweep(&P, &oracle_live, NULL), -EUCLEAN);
			break;
		}
	}
	for (uint32_t t = 0; t < TAKERS; t++) {
		while (tk_nused[t] > 0)
			sh->linked[tk_used[t][--tk_nused[t]]] = 0;
		tk[t].n = 0;
	}
	/*
	 * Every taker gone: everything not linked goes back, but what a mark
	 * scribbled down hides above it; the mark raised to the end by taking
	 * all there is, and all given back: then all of it.
	 */
	vl_lp_repair(&P, VL_LP_ANY_TOKEN, ME);
	ck_assert_int_ge(vl_lp_sweep(&P, &judge_all, NULL), -EUCLEAN);
	take_until_full(more, 4);
	for (uint32_t i = 0; i < 4; i++)
		vl_lp_give(&P, &more[i], 0);
	vl_lp_repair(&P, VL_LP_ANY_TOKEN, ME);
	ck_assert_int_ge(vl_lp_sweep(&P, &judge_all, NULL), -EUCLEAN);
	ck_assert_int_eq(vl_lp_sweep(&P, &judge_all, NULL), 0);
	audit_clean(NULL, 0);
	ck_assert_uint_eq(take_until_full(more, 4), CAP - 1);
}
END_TEST

/* ---- threads: takers, givers, a sweeper and a repairer at once ---------- */

#define THREADS 4
#define ABANDON VL_TOKEN(20, 1) /* a "process" that takes blocks and dies */

static uint32_t holder[CAP];		/* who the test says holds each block, 0 none */
static struct vl_lp_res th_res[THREADS], th_gone;
static uint32_t th_used[THREADS][CAP], th_nused[THREADS];
static uint32_t th_rounds, th_done, th_doubles, th_errors, th_damaged;

/* Blocks res[from..n) are this thread's now: nobody else may hold them. */
static void th_took(uint32_t t, const struct vl_lp_res *res, uint32_t from)
{
	for (uint32_t j = from; j < res->n; j++) {
		uint32_t zero = 0;

		if (!__atomic_compare_exchange_n(&holder[res->b[j]], &zero, t + 1, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			__atomic_fetch_add(&th_doubles, 1, __ATOMIC_RELAXED);
	}
}

static void th_let_go(const struct vl_lp_res *res, uint32_t from)
{
	for (uint32_t j = from; j < res->n; j++)
		__atomic_store_n(&holder[res->b[j]], 0, __ATOMIC_RELEASE);
}

static void *th_taker(void *arg)
{
	uint32_t t = (uint32_t)(uintptr_t)arg, file = t + 1;
	struct vl_lp_res *res = &th_res[t];
	uint64_t rnd = 77 + t;

	for (uint32_t i = 0; i < th_rounds; i++) {
		uint32_t before = res->n, b, keep;
		int r;

		switch (th_below(&rnd, 4)) {
		case 0:
			r = vl_lp_reserve(&P, res, 1 + (uint32_t)th_below(&rnd, 9));
			if (r != 0 && r != -ENOMEM && r != -EAGAIN)
				__atomic_fetch_add(&th_errors, 1, __ATOMIC_RELAXED);
			th_took(t, res, before);
			break;
		case 1:
			b = vl_lp_pop(res);
			if (b == 0)
				break;
			if (vl_lp_use(&P, b, res->tok, file) != 0)
				__atomic_fetch_add(&th_errors, 1, __ATOMIC_RELAXED);
			sh->linked[b] = file;
			th_used[t][th_nused[t]++] = b;
			break;
		case 2:
			if (th_nused[t] == 0)
				break;
			b = th_used[t][--th_nused[t]];
			sh->linked[b] = 0;
			if (res->n == VL_LP_RES_MAX) {
				th_let_go(res, VL_LP_RES_MAX / 2);
				vl_lp_give(&P, res, VL_LP_RES_MAX / 2);
			}
			if (vl_lp_unuse(&P, res, b, file) != 0)
				__atomic_fetch_add(&th_errors, 1, __ATOMIC_RELAXED);
			break;
		default:
			keep = (uint32_t)th_below(&rnd, 4);
			if (keep < res->n) {
				th_let_go(res, keep);
				vl_lp_give(&P, res, keep);
			}
			break;
		}
	}
	__atomic_fetch_add(&th_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Sweeps (one sweeper: the region lock's holder) and repairs a taker that dies again and again. */
static void *th_sweeper(void *arg)
{
	uint64_t rnd = 5;

	(void)arg;
	while (__atomic_load_n(&th_done, __ATOMIC_ACQUIRE) < THREADS) {
		th_gone.n = 0;
		if (vl_lp_reserve(&P, &th_gone, 1 + (uint32_t)th_below(&rnd, 4)) == 0 ||
		    th_gone.n > 0)
			th_took(THREADS, &th_gone, 0);
		th_let_go(&th_gone, 0); /* it dies holding them */
		if (th_below(&rnd, 2))
			vl_lp_repair(&P, ABANDON, ME);
		else if (vl_lp_sweep(&P, NULL, NULL) != 0)
			__atomic_fetch_add(&th_damaged, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * THREADS takers on one pool too small for them all (ENOMEM is common),
 * with a sweeper and a repairer of a token that keeps dying: no block is
 * ever held by two, no call fails but for want of room, and at the end
 * every block is in exactly one place. VL_LP_ROUNDS sets the rounds (for
 * runs under helgrind or ThreadSanitizer: test-lvpool.c's header).
 */
START_TEST(test_threads_account)
{
	pthread_t tid[THREADS + 1];
	struct vl_lp_res *live[THREADS];
	struct census c;
	const char *e = getenv("VL_LP_ROUNDS");

	pool_new(CAP);
	memset(holder, 0, sizeof(holder));
	memset(th_nused, 0, sizeof(th_nused));
	th_rounds = e ? (uint32_t)strtoul(e, NULL, 10) : 1000000;
	th_done = th_doubles = th_errors = th_damaged = 0;
	th_gone = (struct vl_lp_res){ .tok = ABANDON };
	for (uint32_t t = 0; t < THREADS; t++) {
		th_res[t] = (struct vl_lp_res){ .tok = VL_TOKEN(t + 1, 1) };
		live[t] = &th_res[t];
		ck_assert_int_eq(pthread_create(&tid[t], NULL, th_taker, (void *)(uintptr_t)t), 0);
	}
	ck_assert_int_eq(pthread_create(&tid[THREADS], NULL, th_sweeper, NULL), 0);
	for (uint32_t t = 0; t <= THREADS; t++)
		ck_assert_int_eq(pthread_join(tid[t], NULL), 0);
	ck_assert_uint_eq(th_doubles, 0);
	ck_assert_uint_eq(th_errors, 0);
	ck_assert_uint_eq(th_damaged, 0);
	/* the stack never cut, no block lost: only the dying taker's to repair */
	c = audit(live, THREADS);
	ck_assert_msg(c.lost == 0 && c.strange == 0 && sh->h.damaged == 0,
		      "lost %u strange %u damaged %u", c.lost, c.strange, sh->h.damaged);
	vl_lp_repair(&P, ABANDON, ME);
	ck_assert_int_eq(vl_lp_sweep(&P, NULL, NULL), 0);
	audit_clean(live, THREADS);
	fprintf(stderr, "threads: %u rounds each, tag %u, mark %u\n", th_rounds,
		(uint32_t)(sh->h.top >> 32), sh->h.hwm);
}
END_TEST

/*
 * A giver that never wins the top (someone else's push after each of its
 * stores, for ever): it gives up, and its blocks stay in its reservation,
 * PENDING of its token, not lost to a live process.
 */
START_TEST(test_give_that_never_wins)
{
	struct vl_lp_res a = { .tok = ME }, *all[] = { &a };

	pool_new(CAP);
	ck_assert_int_eq(vl_lp_reserve(&P, &a, 5), 0);
	contend = 1;
	ck_assert_uint_eq(vl_lp_give(&P, &a, 2), 0);
	contend = 0;
	ck_assert_uint_eq(a.n, 5);
	audit_clean(all, 1);
	ck_assert_uint_eq(vl_lp_give(&P, &a, 2), 3);
	audit_clean(all, 1);
}
END_TEST

static Suite *lvpool_suite(void)
{
	Suite *s = suite_create("lvpool");
	TCase *tc = th_tcase("single", 60);

	tcase_add_test(tc, test_init_and_geometry);
	tcase_add_test(tc, test_lowest_first_and_sparse);
	tcase_add_test(tc, test_empty_reservation_touches_nothing);
	tcase_add_test(tc, test_full_then_room_again);
	tcase_add_test(tc, test_use_and_unuse);
	tcase_add_test(tc, test_random_takers_account);
	tcase_add_test(tc, test_give_that_never_wins);
	suite_add_tcase(s, tc);
	tc = th_tcase("kills", 120);
	tcase_add_loop_test(tc, test_killed_after_each_store, 0, sizeof(kills) / sizeof(kills[0]));
	tcase_add_loop_test(tc, test_stopped_after_each_store, 0,
			    2 * sizeof(kills) / sizeof(kills[0]));
	suite_add_tcase(s, tc);
	tc = th_tcase("scribbles", 120);
	tcase_add_loop_test(tc, test_scribbled_stack, 0, 8);
	tcase_add_test(tc, test_scribbled_state_unknown);
	tcase_add_test(tc, test_sweep_mends_by_oracle);
	tcase_add_test(tc, test_scribbled_mark);
	tcase_add_loop_test(tc, test_scribbled_random, 0, 40);
	suite_add_tcase(s, tc);
	tc = th_tcase("threads", 300);
	tcase_add_test(tc, test_threads_account);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return th_run(lvpool_suite());
}
