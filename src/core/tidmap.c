/* SPDX-License-Identifier: MIT */
/*
 * tidmap.c - an index of thread ids (tidmap.h).
 */
#include "tidmap.h"

/*
 * Thread ids come mostly in runs (a program's threads, made one after
 * another): Fibonacci hashing spreads a run over the whole table.
 */
static uint32_t home(int32_t key, uint32_t cap)
{
	return (uint32_t)(((uint64_t)(uint32_t)key * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

long vl_tidmap_find(const struct vl_tidmap_slot *s, uint32_t cap, int32_t key)
{
	if (cap == 0 || key <= 0)
		return -1;
	/* bounded by cap: a table the caller let fill up ends the probe too */
	for (uint32_t n = 0, i = home(key, cap); n < cap; n++, i = (i + 1) & (cap - 1)) {
		if (s[i].key == key)
			return (long)i;
		if (s[i].key == 0)
			return -1;
	}
	return -1;
}

long vl_tidmap_insert(struct vl_tidmap_slot *s, uint32_t cap, int32_t key, void *val)
{
	if (cap == 0 || key <= 0)
		return -1;
	for (uint32_t n = 0, i = home(key, cap); n < cap; n++, i = (i + 1) & (cap - 1)) {
		if (s[i].key == 0) {
			s[i].key = key;
			s[i].val = val;
			return (long)i;
		}
	}
	return -1;
}

void vl_tidmap_remove(struct vl_tidmap_slot *s, uint32_t cap, long i)
{
	uint32_t hole = (uint32_t)i, j = hole;

	if (cap == 0 || i < 0 || (uint32_t)i >= cap)
		return;
	for (uint32_t n = 1; n < cap; n++) {
		uint32_t h;

		j = (j + 1) & (cap - 1);
		if (s[j].key == 0)
			break;
		h = home(s[j].key, cap);
		/*
		 * The entry at j may move back into the hole only if its home is
		 * not in (hole, j], cyclically: else a probe from its home would
		 * meet the hole's emptiness before reaching it.
		 */
		if (((j - h) & (cap - 1)) >= ((j - hole) & (cap - 1))) {
			s[hole] = s[j];
			hole = j;
		}
	}
	s[hole].key = 0;
	s[hole].val = (void *)0;
}

uint32_t vl_tidmap_want(uint32_t cap, uint32_t count)
{
	if (cap < VL_TIDMAP_MIN)
		cap = VL_TIDMAP_MIN;
	while (count > cap / 2 && cap <= UINT32_MAX / 2)
		cap *= 2;
	while (count < cap / 8 && cap / 2 >= VL_TIDMAP_MIN)
		cap /= 2;
	return cap;
}

void vl_tidmap_move(const struct vl_tidmap_slot *from, uint32_t fcap, struct vl_tidmap_slot *to,
		    uint32_t tcap)
{
	for (uint32_t i = 0; i < fcap; i++)
		if (from[i].key != 0)
			(void)vl_tidmap_insert(to, tcap, from[i].key, from[i].val);
}
