/* SPDX-License-Identifier: MIT */
/*
 * lvpool.c - what format 10's block allocator (core/lvpool.c) costs a
 * call, in instructions: `make bench-lvpool` runs this under callgrind and
 * prints each operation's instructions per call (its function's inclusive
 * count over ROUNDS calls, the call itself included). One process, no
 * contention: the instructions, not the cache lines others would share.
 */
#include "core/lvpool.h"

#include <stdio.h>
#include <stdlib.h>

#define CAP 4096u
#define ROUNDS 100000u

static struct vl_lp_hdr hdr;
static struct vl_lp_slot slots[CAP];
static struct vl_lp P;
static struct vl_lp_res res = { .tok = 7 };

#define OP __attribute__((noinline)) static

/* a MARK or UNMARK that needs no block: its reservation already holds them */
OP int op_reserve_enough(void)
{
	return vl_lp_reserve(&P, &res, 9);
}
OP int op_take_1(void)
{
	return vl_lp_reserve(&P, &res, 1);
}
OP uint32_t op_give_1(void)
{
	return vl_lp_give(&P, &res, 0);
}
OP int op_take_9(void)
{
	return vl_lp_reserve(&P, &res, 9);
}
OP uint32_t op_give_9(void)
{
	return vl_lp_give(&P, &res, 0);
}
OP int op_use(uint32_t b)
{
	return vl_lp_use(&P, b, res.tok, 3);
}
OP int op_unuse(uint32_t b)
{
	return vl_lp_unuse(&P, &res, b, 3);
}

int main(void)
{
	uint32_t sink = 0;

	if (vl_lp_init(&P, &hdr, slots, 256, CAP) != 0)
		return 1;
	/* blocks on the stack to take from */
	if (vl_lp_reserve(&P, &res, 32) != 0 || vl_lp_give(&P, &res, 0) != 32)
		return 1;
	for (uint32_t i = 0; i < ROUNDS; i++) {
		sink += (uint32_t)op_take_1();
		sink += op_give_1();
	}
	for (uint32_t i = 0; i < ROUNDS; i++) {
		sink += (uint32_t)op_take_9();
		sink += op_give_9();
	}
	if (vl_lp_reserve(&P, &res, 9) != 0)
		return 1;
	for (uint32_t i = 0; i < ROUNDS; i++)
		sink += (uint32_t)op_reserve_enough();
	for (uint32_t i = 0; i < ROUNDS; i++) {
		uint32_t b = vl_lp_pop(&res);

		sink += (uint32_t)op_use(b);
		sink += (uint32_t)op_unuse(b);
	}
	printf("%u rounds (%u)\n", ROUNDS, sink);
	return 0;
}
