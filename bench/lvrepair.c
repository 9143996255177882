/* SPDX-License-Identifier: MIT */
/*
 * bench/lvrepair.c - how long format 10's repair (vl_lv_repair, leaves.h)
 * takes over one file of 1,000,000 ranges (a third purged, marked in a
 * scattered order): the tree intact, then every inner node wiped (the
 * root word too), the leaves' ranges alone to rebuild it from. Core only:
 * `make bench-lvrepair`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/leaves.h"

#define RANGES 1000000u
#define CAP 400000u

static union vl_lv_block *blocks;
static struct vl_lv_root root;
static struct vl_lv tree;
static struct vl_lv_res res;
static uint32_t *freelist, nfree, *list;
static unsigned char *held;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void build(void)
{
	struct vl_lv_change c;
	struct vl_lv_range o;
	uint32_t i;

	for (i = CAP - 1; i >= 1; i--)
		freelist[nfree++] = i;
	for (i = 0; i < RANGES; i++) {
		uint64_t k = (uint64_t)i * 7919u % RANGES;

		while (res.n < vl_lv_need(&tree))
			res.blk[res.n++] = freelist[--nfree];
		if (vl_lv_mark(&tree, 4 * k, 4 * k + 2, i + 1, &res, &c) != 0)
			exit(1);
		if (i % 3 == 0 && (vl_lv_oldest(&tree, &o) != 1 ||
				   vl_lv_purge(&tree, o.start, &c) != 0))
			exit(1);
	}
}

/* The file's blocks: every one the allocator does not hold. */
static uint32_t owned(void)
{
	uint32_t i, n = 0;

	memset(held, 0, CAP);
	for (i = 0; i < nfree; i++)
		held[freelist[i]] = 1;
	for (i = 0; i < res.n; i++)
		held[res.blk[i]] = 1;
	for (i = 1; i < CAP; i++)
		if (!held[i])
			list[n++] = i;
	return n;
}

static uint32_t wipe_inner(uint32_t b, uint32_t h)
{
	uint32_t i, n = 1, cnt = blocks[b].in.hdr & 0xff;

	if (h < 2)
		return 0;
	for (i = 0; i < cnt; i++)
		n += wipe_inner(blocks[b].in.child[i], h - 1);
	memset(&blocks[b], 0, sizeof(blocks[b]));
	return n;
}

static void repair(const char *what)
{
	struct vl_lv_change c;
	uint32_t n = owned(), leaves, inner, i, b;
	uint64_t ranges;
	double t0, t1;
	int err;

	t0 = now();
	err = vl_lv_repair(&tree, list, n, CAP, &res, &c);
	t1 = now();
	for (i = 0, b = c.freed; i < c.nfreed; i++, b = blocks[b].next_free)
		freelist[nfree++] = b;
	if (err || vl_lv_count(&tree, &leaves, &inner, &ranges) != 0 || ranges != RANGES) {
		printf("%s: the repair failed (%d)\n", what, err);
		exit(1);
	}
	printf("%-26s %8.1f ms  %u blocks in: %u leaves, %u inner nodes out, %u let go\n", what,
	       (t1 - t0) * 1e3, n, leaves, inner, c.nfreed);
}

int main(void)
{
	if (posix_memalign((void **)&blocks, 64, (size_t)CAP * sizeof(*blocks)) != 0)
		return 1;
	memset(blocks, 0, (size_t)CAP * sizeof(*blocks));
	freelist = malloc(CAP * sizeof(uint32_t));
	list = malloc(CAP * sizeof(uint32_t));
	held = malloc(CAP);
	if (freelist == NULL || list == NULL || held == NULL)
		return 1;
	tree = (struct vl_lv){ .b = blocks, .cap = CAP, .file = 3, .root = &root };
	build();
	repair("intact, as marked");
	repair("intact, as repaired");
	printf("wiped %u inner nodes\n", wipe_inner(root.block, root.height));
	root = (struct vl_lv_root){ 0, 0 };
	repair("every inner node wiped");
	return 0;
}
