/* SPDX-License-Identifier: MIT */
/*
 * test-pool-steps.c - core/pool.c with another process's step made inside
 * a call, at one of its VL_STEP points: linked with the fault-injecting
 * build (tests/fault/libvlrt-fault.la), whose every step calls
 * vl_fault_hook, defined here.
 */
#include "harness.h"

#define TOP(tag, head) (((uint64_t)(tag) << 32) | (head))

/* The step to act at, and what to do there (once). */
static const char *hook_at;
static void (*hook_do)(void);

void vl_fault_hook(const char *where);
void vl_fault_hook(const char *where)
{
	void (*f)(void) = hook_do;

	if (f == NULL || hook_at == NULL || strcmp(where, hook_at) != 0)
		return;
	hook_do = NULL;
	f();
}

/*
 * A claimer stopped (SIGSTOP, a debugger, the scheduler) between raising
 * the high-water mark over chunk h and taking it (claim_new: "node_alloc:
 * slot claimed, not taken") takes it, when it goes on, if h's first node
 * is exactly 0 (FREE, stamp 0), by compare-and-swap, as take() does:
 * that makes the chunk its own. The sweep stamps the chunks it takes
 * FREE with the tag it began at; that tag's low 24 bits are 0 once in
 * 2^24 list operations, and then the chunk's first node is 0 from its
 * taking to its push. The sweep writes it again when it pushes (plain
 * stores: "only a sweep writes a chunk that is FREE and on no list"): the
 * claimer's chunk goes on the free list, and to the next taker.
 */
static struct th_region st_t;
static uint32_t st_h, st_claimer_took;
#define CLAIMER 3
#define OTHER 4

static void claimer_goes_on(void)
{
	uint32_t seen = 0;

	st_claimer_took = __atomic_compare_exchange_n(&st_t.r.nodes[st_h].meta, &seen,
						      vl_meta(CLAIMER, VL_NODE_PENDING, 0), 0,
						      __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

START_TEST(test_sweep_stamp_zero_vs_stopped_claimer)
{
	const struct vl_region *r;
	struct vl_counters *c;
	uint32_t n, t;

	th_region_init(&st_t, 16, 8);
	r = &st_t.r;
	c = vl_counters(r);
	/* the claimer raises the mark over chunk h and stops */
	st_h = c->node_hwm;
	ck_assert_uint_eq(st_h, VL_CHUNK);
	c->node_hwm = st_h + VL_CHUNK;
	/* a sweep finds h (stamp 0, older than it) and lists it */
	ck_assert_uint_eq(vl_nodes_sweep(r), VL_CHUNK);
	ck_assert_uint_eq((uint32_t)c->node_top, st_h);
	/*
	 * 2^24 list operations later (the tag as they leave it): file 1 takes
	 * h from the list and gives it back (its chunk let go), and a sweep
	 * begins with a tag whose low 24 bits are 0: h, pushed 2 operations
	 * before, is taken by it, its first node made 0.
	 */
	c->node_top = TOP(0xfffffdu, st_h);
	n = vl_node_alloc(r, 1);
	ck_assert_uint_eq(n, st_h);
	vl_file_at(r, 1)->h.chunk = VL_NIL;
	vl_node_free(r, n);
	ck_assert_uint_eq((uint32_t)c->node_top, st_h);
	hook_at = "nodes_sweep: chained, not pushed";
	hook_do = claimer_goes_on;
	ck_assert_uint_eq(vl_nodes_sweep(r), VL_CHUNK);
	t = (uint32_t)(c->node_top >> 32);
	ck_assert_msg(hook_do == NULL, "the sweep never reached \"%s\"", hook_at);
	/* the claimer that went on holds h if it took it; h must then not be listed */
	if (st_claimer_took) {
		uint32_t m = r->nodes[st_h].meta;

		ck_assert_msg((uint32_t)c->node_top != st_h,
			      "chunk %u taken by the stopped claimer when it went on (its first node "
			      "was 0 in the sweep's chain, tag %#x), and pushed by the sweep after "
			      "(meta now %#x): on the free list while the claimer owns it",
			      st_h, t, m);
	}
	/* whoever takes from the list gets a chunk no one holds */
	n = vl_node_alloc(r, OTHER);
	ck_assert_msg(!st_claimer_took || n != st_h,
		      "node %u handed to file %u while the claimer (file %u) holds it", n, OTHER,
		      CLAIMER);
	th_region_fini(&st_t);
}
END_TEST

static Suite *steps_suite(void)
{
	Suite *s = suite_create("pool-steps");
	TCase *tc = th_tcase("sweep", 30);

	tcase_add_test(tc, test_sweep_stamp_zero_vs_stopped_claimer);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return th_run(steps_suite());
}
