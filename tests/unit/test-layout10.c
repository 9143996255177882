/* SPDX-License-Identifier: MIT */
/*
 * test-layout10.c - format 10's region geometry (core/layout10.c): the
 * default region's capacities, the plan's areas, the check at attach fed
 * scribbled geometries, and the block allocator laid out where the plan
 * says.
 */
#include "harness.h"
#include "core/layout10.h"
#include "core/lvpool.h"

#include <stddef.h>
#include <string.h>

/* the most blocks a tree of r ranges takes, at the best fill (11 a leaf, 15 children) */
static uint64_t best_blocks(uint64_t r)
{
	uint64_t n = (r + VL_LV_CAP - 1) / VL_LV_CAP, total = n;

	while (n > 1) {
		n = (n + VL_LV_FAN - 1) / VL_LV_FAN;
		total += n;
	}
	return total;
}

/* the most ranges one file holds at the worst fill in `blocks` blocks */
static uint32_t one_file_capacity(uint32_t blocks)
{
	uint32_t lo = 1, hi = UINT32_MAX;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;

		if (vl_lv_worst_blocks(mid) <= blocks)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

START_TEST(test_worst_tree)
{
	ck_assert_uint_eq(vl_lv_worst_blocks(0), 1);
	ck_assert_uint_eq(vl_lv_worst_blocks(1), 1);
	ck_assert_uint_eq(vl_lv_worst_blocks(9), 1);
	/* two leaves of five, no underflow to merge them, and their root */
	ck_assert_uint_eq(vl_lv_worst_blocks(10), 3);
	ck_assert_uint_eq(vl_lv_worst_blocks(75), 16);     /* 15 leaves, one root */
	ck_assert_uint_eq(vl_lv_worst_blocks(80), 19);     /* 16 leaves, 2 inner, a root */
	ck_assert_uint_eq(vl_lv_worst_blocks(1000000), 233330);
	/* 59.7 bytes a range at a million, as leaves.h says */
	ck_assert_uint_le(256ull * vl_lv_worst_blocks(1000000), 59732480ull);
	/* the bound the plan rests on: every tree within 1 + 7 (r - 1) / 30 blocks */
	for (uint32_t r = 1; r <= 4000000; r++)
		th_check(30ull * (vl_lv_worst_blocks(r) - 1) <= 7ull * (r - 1));
	/* and monotone, so one_file_capacity's search is right */
	for (uint32_t r = 1; r <= 100000; r++)
		th_check(vl_lv_worst_blocks(r) <= vl_lv_worst_blocks(r + 1));
}
END_TEST

START_TEST(test_default_region)
{
	struct vl_geometry10 g;
	uint32_t spare = VL_PROCS * VL_LV_RES_MAX, trees;
	uint64_t bound;

	vl_geometry10_for(VL10_DEFAULT_RANGES, VL_DEFAULT_FILES, VL_PROCS, &g);
	ck_assert_int_eq(vl_geometry10_ok(&g, g.region_size), 0);
	ck_assert_uint_eq(g.block_cap, 345024);
	ck_assert_uint_eq(g.block_cap, vl_geometry10_blocks(1000000, 65535, 4096));
	trees = g.block_cap - 1 - spare;

	/* a million ranges, one a file for 65,535 files, the rest at the worst fill */
	bound = VL_DEFAULT_FILES + (7ull * (1000000 - VL_DEFAULT_FILES) + 29) / 30;
	ck_assert_uint_le(bound, trees);
	/* or all in one file */
	ck_assert_uint_le(vl_lv_worst_blocks(1000000), trees);
	ck_assert_uint_eq(one_file_capacity(trees), 1215374);
	/* the files' capacity: every file of the table one range, and room beside */
	ck_assert_uint_le(VL_DEFAULT_FILES, trees);
	ck_assert_uint_ge((uint64_t)(trees - VL_DEFAULT_FILES) * 30 / 7, 1000000 - 65535);
	/* at the best fill, one file: 2,911,xxx */
	ck_assert_uint_le(best_blocks(2910000), trees);
	ck_assert_uint_gt(best_blocks(2920000), trees);

	ck_assert_uint_eq(g.region_size, 125497344);
	ck_assert_uint_eq((uint64_t)g.block_cap * 256, 88326144);
	ck_assert_uint_eq((uint64_t)g.block_cap * 8, 2760192);

	fprintf(stderr,
		"format 10 default: %u blocks (%.1f MB), region %.1f MB virtual; "
		"one file holds %u ranges at the worst fill; a range at 1,000,000 costs "
		"%.1f (best) .. %.1f (worst) bytes, the slot counted\n",
		g.block_cap, g.block_cap * 256.0 / 1e6, g.region_size / 1e6,
		one_file_capacity(trees), best_blocks(1000000) * 264.0 / 1e6,
		vl_lv_worst_blocks(1000000) * 264.0 / 1e6);
	ck_assert_uint_le(vl_lv_worst_blocks(1000000) * 264ull, 64000000ull); /* issue 28 */
}
END_TEST

static void check_shape(const struct vl_geometry10 *g)
{
	ck_assert_uint_eq(g->check, vl_geometry10_sum(g));
	ck_assert_uint_eq(g->tomb_off % 4096, 0);
	ck_assert_uint_ge(g->tomb_off, sizeof(struct vl_header));
	ck_assert_uint_eq(g->files_off, g->tomb_off + 65536);
	ck_assert_uint_eq(g->hash_off, g->files_off + (uint64_t)g->file_cap * 512);
	ck_assert_uint_eq(g->hash_cap & (g->hash_cap - 1), 0);
	ck_assert_uint_ge(g->hash_cap, 2ull * g->file_cap);
	ck_assert_uint_eq(g->lp_off % 64, 0);
	ck_assert_uint_ge(g->lp_off, g->hash_off + (uint64_t)g->hash_cap * 4);
	ck_assert_uint_eq(g->slots_off, g->lp_off + 128);
	ck_assert_uint_eq(g->blocks_off % 4096, 0);
	ck_assert_uint_ge(g->blocks_off, g->slots_off + (uint64_t)g->block_cap * 8);
	ck_assert_uint_lt(g->blocks_off, g->slots_off + (uint64_t)g->block_cap * 8 + 4096);
	ck_assert_uint_eq(g->procs_off, g->blocks_off + (uint64_t)g->block_cap * 256);
	ck_assert_uint_eq(g->procs_off % 64, 0);
	ck_assert_uint_eq(g->region_size % 4096, 0);
	ck_assert_uint_ge(g->region_size, g->procs_off + (uint64_t)g->proc_cap * 64);
	ck_assert_uint_lt(g->region_size, g->procs_off + (uint64_t)g->proc_cap * 64 + 4096);
	ck_assert_int_eq(vl_geometry10_areas_ok(g), 0);
	ck_assert_int_eq(vl_geometry10_ok(g, g->region_size), 0);
}

START_TEST(test_plans_check_ok)
{
	static const uint32_t ranges[] = { 0, 1, 10, 1000, 65536, 1000000, 1u << 30, UINT32_MAX };
	static const uint32_t files[] = { 0, 1, 2, 100, VL_DEFAULT_FILES, UINT32_MAX };
	static const uint32_t procs[] = { 0, 2, 64, VL_PROCS, 65536, UINT32_MAX };
	struct vl_geometry10 g;

	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
		for (size_t j = 0; j < sizeof(files) / sizeof(files[0]); j++)
			for (size_t k = 0; k < sizeof(procs) / sizeof(procs[0]); k++) {
				vl_geometry10_for(ranges[i], files[j], procs[k], &g);
				check_shape(&g);
				ck_assert_uint_le(g.block_cap, VL10_MAX_BLOCKS);
				ck_assert_uint_le(g.file_cap, VL_MAX_FILES);
				ck_assert_uint_le(g.proc_cap, VL10_MAX_PROCS);
			}
	/* the largest plan: every limit at once, still within lvpool's blocks */
	vl_geometry10_for(UINT32_MAX, UINT32_MAX, UINT32_MAX, &g);
	ck_assert_uint_le(g.block_cap, VL10_MAX_BLOCKS);
	ck_assert_uint_eq(g.file_cap, VL_MAX_FILES);
	ck_assert_uint_eq(g.proc_cap, VL10_MAX_PROCS);
	/* format 9 stays the format in use */
	ck_assert_uint_eq(vl_format() & 0xff, VL_VERSION);
	ck_assert_uint_eq(VL_VERSION, 9);
	ck_assert_uint_eq(vl_format10() & 0xff, 10);
	ck_assert_uint_ne(vl_format10(), vl_format());
}
END_TEST

/* Every field scribbled, sealed again or not: each one rejected. */
START_TEST(test_scribbled_rejected)
{
	struct vl_geometry10 good, g;
	uint64_t size;

	vl_geometry10_for(5000, 100, 16, &good);
	size = good.region_size;
	ck_assert_int_eq(vl_geometry10_ok(&good, size), 0);

#define TRY(stmt, want)                                                                     \
	do {                                                                                \
		for (int reseal = 0; reseal < 2; reseal++) {                                \
			g = good;                                                           \
			stmt;                                                               \
			if (reseal)                                                         \
				g.check = vl_geometry10_sum(&g);                            \
			int got = vl_geometry10_ok(&g, reseal ? g.region_size : size);      \
			ck_assert_msg(got == (reseal ? (want) : (want) == -EPROTO ? -EPROTO \
										: -EUCLEAN), \
				      "%s%s: got %d", #stmt, reseal ? " (resealed)" : "", got); \
		}                                                                           \
	} while (0)

	TRY(g.magic ^= 1, -EUCLEAN);
	TRY(g.magic = 0, -EUCLEAN);
	TRY(g.format ^= 1, -EPROTO);
	TRY(g.format = vl_format(), -EPROTO);
	TRY(g.format ^= 1u << 8, -EPROTO);
	TRY(g.header_size += 64, -EPROTO);
	TRY(g.header_size = 0, -EPROTO);
	TRY(g.region_size += 4096, -EUCLEAN);
	TRY(g.region_size -= 4096, -EUCLEAN);
	TRY(g.region_size += 1, -EUCLEAN);
	TRY(g.region_size = 0, -EUCLEAN);
	TRY(g.region_size = UINT64_MAX, -EUCLEAN);
	TRY(g.block_cap += 1, -EUCLEAN);
	TRY(g.block_cap += 16, -EUCLEAN);
	TRY(g.block_cap -= 16, -EUCLEAN);
	TRY(g.block_cap = 0, -EUCLEAN);
	TRY(g.block_cap = 1, -EUCLEAN);
	TRY(g.block_cap = VL10_MAX_BLOCKS + 1, -EUCLEAN);
	TRY(g.block_cap = UINT32_MAX, -EUCLEAN);
	TRY(g.file_cap += 1, -EUCLEAN);
	TRY(g.file_cap -= 1, -EUCLEAN);
	TRY(g.file_cap = 2, -EUCLEAN);
	TRY(g.file_cap = VL_MAX_FILES + 1, -EUCLEAN);
	TRY(g.file_cap = UINT32_MAX, -EUCLEAN);
	TRY(g.hash_cap *= 2, -EUCLEAN);
	TRY(g.hash_cap /= 2, -EUCLEAN);
	TRY(g.hash_cap += 1, -EUCLEAN);
	TRY(g.hash_cap = 0, -EUCLEAN);
	TRY(g.proc_cap += 1, -EUCLEAN);
	TRY(g.proc_cap -= 1, -EUCLEAN);
	TRY(g.proc_cap = 1, -EUCLEAN);
	TRY(g.proc_cap = VL10_MAX_PROCS + 1, -EUCLEAN);
	TRY(g.pad = 1, -EUCLEAN);
	TRY(g.tomb_off += 4096, -EUCLEAN);
	TRY(g.tomb_off -= 4096, -EUCLEAN);
	TRY(g.tomb_off += 64, -EUCLEAN);
	TRY(g.files_off += 4096, -EUCLEAN);
	TRY(g.files_off -= 4096, -EUCLEAN);
	TRY(g.files_off -= 512, -EUCLEAN);
	TRY(g.hash_off += 64, -EUCLEAN);
	TRY(g.hash_off -= 512, -EUCLEAN);
	TRY(g.hash_off += 4, -EUCLEAN);
	TRY(g.lp_off += 64, -EUCLEAN);
	TRY(g.lp_off -= 64, -EUCLEAN);
	TRY(g.lp_off += 8, -EUCLEAN);
	TRY(g.slots_off += 8, -EUCLEAN);
	TRY(g.slots_off -= 8, -EUCLEAN);
	TRY(g.slots_off = g.lp_off, -EUCLEAN);
	TRY(g.blocks_off += 4096, -EUCLEAN);
	TRY(g.blocks_off -= 4096, -EUCLEAN);
	TRY(g.blocks_off += 256, -EUCLEAN);
	TRY(g.blocks_off = g.slots_off, -EUCLEAN);
	TRY(g.procs_off += 64, -EUCLEAN);
	TRY(g.procs_off -= 64, -EUCLEAN);
	TRY(g.procs_off += 32, -EUCLEAN);
	TRY(g.procs_off = g.region_size, -EUCLEAN);
	TRY(g.procs_off = UINT64_MAX - 63, -EUCLEAN);
	TRY(g.blocks_off = UINT64_MAX - 4095, -EUCLEAN);
#undef TRY

	g = good;
	g.check ^= 1;
	ck_assert_int_eq(vl_geometry10_ok(&g, size), -EUCLEAN);
	g.check = 0;
	ck_assert_int_eq(vl_geometry10_ok(&g, size), -EUCLEAN);

	/* the right geometry in a file of the wrong size */
	ck_assert_int_eq(vl_geometry10_ok(&good, size + 4096), -EUCLEAN);
	ck_assert_int_eq(vl_geometry10_ok(&good, size - 4096), -EUCLEAN);
	ck_assert_int_eq(vl_geometry10_ok(&good, 0), -EUCLEAN);
	/* a sound geometry of another capacity is fine at its own size only */
	vl_geometry10_for(6000, 100, 16, &g);
	ck_assert_uint_gt(g.block_cap, good.block_cap);
	ck_assert_int_eq(vl_geometry10_ok(&g, g.region_size), 0);
	ck_assert_int_eq(vl_geometry10_ok(&g, size), -EUCLEAN);

	/* a format 9 geometry's bytes are not a format 10 one */
	{
		struct vl_geometry nine;

		vl_geometry_plan(&nine, 5000, 100);
		memset(&g, 0, sizeof(g));
		memcpy(&g, &nine, sizeof(nine));
		ck_assert_int_eq(vl_geometry10_ok(&g, nine.region_size), -EPROTO);
	}
}
END_TEST

/*
 * The areas' own checks, with no sum or plan to hide behind: each kind of
 * overlap, overrun, wrap and misalignment, in each area.
 */
START_TEST(test_areas_scribbled)
{
	struct vl_geometry10 good, g;

	vl_geometry10_for(100000, 1000, 64, &good);
	ck_assert_int_eq(vl_geometry10_areas_ok(&good), 0);

#define BAD(stmt)                                                              \
	do {                                                                   \
		g = good;                                                      \
		stmt;                                                          \
		ck_assert_msg(vl_geometry10_areas_ok(&g) == -EUCLEAN, "%s passed", #stmt); \
	} while (0)

	BAD(g.region_size += 1);
	BAD(g.region_size = g.procs_off + 64 * (uint64_t)g.proc_cap - 4096);
	BAD(g.region_size = 0);
	BAD(g.tomb_off = 0);                     /* over the header */
	BAD(g.tomb_off = g.region_size);         /* past the end */
	BAD(g.tomb_off += 1);
	BAD(g.files_off = g.tomb_off);           /* over the tombstones */
	BAD(g.files_off = UINT64_MAX & ~4095ull);
	BAD(g.file_cap = UINT32_MAX);            /* the table past the end */
	BAD(g.file_cap += 1);                    /* the table over the hash */
	BAD(g.hash_off -= 8);
	BAD(g.hash_off += 1);
	BAD(g.hash_cap *= 2);                    /* over the allocator */
	BAD(g.lp_off -= 64);
	BAD(g.lp_off += 1);
	BAD(g.slots_off -= 8);                   /* over the allocator's header */
	BAD(g.slots_off += 4);
	BAD(g.block_cap += 1024);                /* slots over the blocks */
	BAD(g.block_cap = UINT32_MAX);           /* blocks past the end, no wrap */
	BAD(g.blocks_off -= 4096);
	BAD(g.blocks_off += 64);
	BAD(g.blocks_off = UINT64_MAX - 4095);
	BAD(g.procs_off -= 64);                  /* over the last block */
	BAD(g.procs_off += 4096);                /* past the end */
	BAD(g.procs_off += 8);
	BAD(g.proc_cap += 64);                   /* past the end */
	BAD(g.proc_cap = UINT32_MAX);
#undef BAD
}
END_TEST

/* lvpool laid out where the plan says: every block it hands out lies in the block area. */
START_TEST(test_lvpool_in_place)
{
	struct vl_geometry10 g;
	struct vl_lp p, q;
	struct vl_lp_res res = { .tok = VL_TOKEN(1, 1) };
	uint32_t taken = 0;
	char *base;

	vl_geometry10_for(1000, 10, 4, &g);
	base = calloc(1, g.region_size);
	ck_assert_ptr_nonnull(base);
	ck_assert_int_eq(vl_lp_init(&p, (struct vl_lp_hdr *)(base + g.lp_off),
				    (struct vl_lp_slot *)(base + g.slots_off), VL10_BLOCK,
				    g.block_cap), 0);
	ck_assert_int_eq(vl_lp_attach(&q, (struct vl_lp_hdr *)(base + g.lp_off),
				      (struct vl_lp_slot *)(base + g.slots_off)), 0);
	/* what the caller compares at attach */
	ck_assert_uint_eq(q.cap, g.block_cap);
	ck_assert_uint_eq(q.size, VL10_BLOCK);
	for (;;) {
		int rc = vl_lp_fill(&q, &res, VL_LP_RES_MAX);

		for (uint32_t i = 0; i < res.n; i++) {
			uint64_t at = g.blocks_off + (uint64_t)res.b[i] * VL10_BLOCK;

			ck_assert_uint_ne(res.b[i], 0);
			ck_assert_uint_ge(at, g.blocks_off + VL10_BLOCK);
			ck_assert_uint_le(at + VL10_BLOCK, g.procs_off);
			/* a block is used whole: fill it, the test's areas checked below */
			memset(base + at, 0xa5, VL10_BLOCK);
			taken++;
		}
		res.n = 0;
		if (rc == -ENOMEM)
			break;
		ck_assert_int_eq(rc, 0);
	}
	ck_assert_uint_eq(taken, g.block_cap - 1);
	/* nothing around the blocks was written: block 0 and the procs are zero */
	for (uint64_t o = 0; o < VL10_BLOCK; o++)
		ck_assert_int_eq(base[g.blocks_off + o], 0);
	for (uint64_t o = g.procs_off; o < g.region_size; o++)
		th_check(base[o] == 0);
	ck_assert_int_eq(vl_lp_attach(&q, (struct vl_lp_hdr *)(base + g.lp_off),
				      (struct vl_lp_slot *)(base + g.slots_off)), 0);
	free(base);
}
END_TEST

static Suite *layout10_suite(void)
{
	Suite *s = suite_create("layout10");
	TCase *tc = tcase_create("geometry");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_worst_tree);
	tcase_add_test(tc, test_default_region);
	tcase_add_test(tc, test_plans_check_ok);
	tcase_add_test(tc, test_scribbled_rejected);
	tcase_add_test(tc, test_areas_scribbled);
	tcase_add_test(tc, test_lvpool_in_place);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return th_run(layout10_suite());
}
