/* SPDX-License-Identifier: MIT */
/*
 * tidmap.h - an index of thread ids: open addressing with linear probing
 * over a power-of-two array the caller owns (`volatile run`'s callers,
 * DESIGN 21). Pure: no allocation, no locks; the caller grows and shrinks
 * the array (vl_tidmap_want says to what size) and moves the entries over
 * with vl_tidmap_move.
 *
 * A removal shifts the entries of its probe run back into the hole (no
 * tombstones), so a lookup's probe ends at the first empty slot and the
 * table never fills up with the dead: what it holds is what was put and
 * not removed, and its size follows that count both ways. Thread ids are
 * positive; key 0 marks an empty slot.
 */
#ifndef VL_CORE_TIDMAP_H
#define VL_CORE_TIDMAP_H

#include <stdint.h>

struct vl_tidmap_slot {
	int32_t key; /* 0: empty */
	void *val;
};

#define VL_TIDMAP_MIN 64u /* slots; never smaller */

/* the slot that holds key, or -1 */
long vl_tidmap_find(const struct vl_tidmap_slot *s, uint32_t cap, int32_t key);

/*
 * Put key (not in the table, > 0) with val; the table must have an empty
 * slot (count < cap): the slot it took.
 */
long vl_tidmap_insert(struct vl_tidmap_slot *s, uint32_t cap, int32_t key, void *val);

/* Empty slot i, shifting back the entries behind it whose probe passed through it. */
void vl_tidmap_remove(struct vl_tidmap_slot *s, uint32_t cap, long i);

/*
 * The size a table of cap slots holding count entries should have: twice
 * cap once it would be more than half full, half of it once it is under an
 * eighth full (never under VL_TIDMAP_MIN), else cap. The factor of four
 * between the two thresholds keeps a count that goes up and down by one
 * from resizing at each step.
 */
uint32_t vl_tidmap_want(uint32_t cap, uint32_t count);

/* Put every entry of from (fcap slots) into to (tcap slots, all empty, room for them). */
void vl_tidmap_move(const struct vl_tidmap_slot *from, uint32_t fcap, struct vl_tidmap_slot *to,
		    uint32_t tcap);

#endif
