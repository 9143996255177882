/* SPDX-License-Identifier: MIT */
/*
 * layout10.h - format 10's region, as pure geometry: where the blocks of
 * the files' B+trees (core/leaves.h) and their allocator (core/lvpool.h)
 * lie, and the check of it all at attach (doc/format10-plan.md, step 6).
 *
 * Not the format in use: format 9 (layout.h, DESIGN 10) is, and stays so
 * until the switch-over (step 7) makes the region with this geometry. So
 * nothing here is linked into the library; the unit tests build it.
 *
 *   +--------------------------+ 0
 *   | struct vl_header         |  as format 9's; its geo becomes a struct
 *   |                          |  vl_geometry10 at step 7 (it fits the same
 *   |                          |  128 bytes before the region lock)
 *   +--------------------------+ tomb_off (a page)
 *   | struct vl_tomb           |  64 KiB of tombstones (tomb.h)
 *   +--------------------------+ files_off (a page)
 *   | struct vl_file [F]       |  512 bytes a file record, sentinel included
 *   +--------------------------+ hash_off
 *   | uint32_t [H]             |  (dev, ino) -> file index, H = 2^k >= 2F
 *   +--------------------------+ lp_off (64)
 *   | struct vl_lp_hdr         |  the allocator's two lines (lvpool.h)
 *   +--------------------------+ slots_off = lp_off + 128
 *   | struct vl_lp_slot [B]    |  8 bytes a block: state word, stack link
 *   +--------------------------+ blocks_off (a page: 4096)
 *   | 256-byte blocks [B]      |  leaves and inner nodes (leaves.h);
 *   |                          |  block 0 is nil, never handed out
 *   +--------------------------+ procs_off (64) = blocks_off + 256 B
 *   | struct vl_proc [P]       |  64 bytes a process slot
 *   +--------------------------+ region_size (a page)
 *
 * The file is sparse: the file table, the state slots and the blocks are
 * handed out lowest first (pool.c's files, lvpool's high-water mark), so
 * the pages a region takes follow its high-water marks, not B. The slots
 * sit apart from the blocks so that a block's 256 bytes are its tree's
 * alone (lvpool.h), and a page of slots serves 512 blocks (128 KiB of
 * them): 3% over the blocks' own bytes.
 *
 * How many blocks (vl_geometry10_blocks). A tree of r ranges takes at most
 * vl_lv_worst_blocks(r) blocks, at the least fill leaves.h allows (5
 * ranges a leaf other than the root, 7 children an inner node other than
 * the root): 1 block up to 11 ranges (the root leaf), 3 for 10 ranges
 * split in two leaves, 59.7 bytes a range for a large tree. Every tree
 * keeps within 1 + 7 (r - 1) / 30 blocks (a large tree's limit is
 * 1/5 * 7/6 = 7/30 a range; test-layout10 checks the bound for every r up
 * to 4,000,000), so R ranges over at most F files take at most
 *
 *     F' + 7 (R - F') / 30,   F' = min(F, R)   (the most: one range a file,
 *                                              the rest in trees at 5 a leaf)
 *
 * blocks, as a file's first range costs a whole block and every further
 * one at most 7/30 of one. On top of that every process slot may hold a
 * reservation of VL_LV_RES_MAX blocks (the most one change takes: height
 * + 1) that is in no tree; and block 0. Rounded up to 16 blocks (a page).
 * So the switch-over keeps a reservation at VL_LV_RES_MAX blocks, not
 * lvpool's VL_LP_RES_MAX (32), and a dead process's are given back by
 * vl_lp_repair before they count.
 *
 * The default (VL10_DEFAULT_RANGES, VL_DEFAULT_FILES, VL_PROCS):
 *     1 + 65,535 + 218,042 + 4,096 * 15 = 345,018 -> 345,024 blocks
 * so any 1,000,000 ranges over any of the 65,535 files fit at the worst
 * fill with every process slot's reservation full. Its capacities, the
 * reservations aside (283,583 blocks): 65,535 files of one range each
 * (65,535 blocks) and the other 934,465 of the million at the worst fill
 * beside them;
 * or one file of 1,215,374 ranges at the worst fill; or at the best fill
 * (11 a leaf, 15 children) 2,910,000 ranges and more. Virtual size 125.5 MB
 * (format 9's default: 135.1 MB, for 2,097,152 ranges of 48 bytes); the
 * blocks are 88.3 MB of it, the slots 2.8 MB.
 *
 * Memory at 1,000,000 ranges in one file, region bytes a range, the
 * block's slot counted (264 bytes a block): best (full leaves and inner
 * nodes) 25.7; typical 37.1 (a million ranges marked in a random order:
 * `bench/leaves --ranges 1000000 --only lv-rand` counts 36.0 bytes of
 * blocks a range, height 6); worst (5 a leaf, 7 children) 61.6, within
 * issue 28's 64. The fixed part on top: the
 * header and the tombstones (68 KiB, made real at creation), a file
 * record per file used (512 bytes), and the pages of the hash table and
 * of the process slots touched.
 *
 * Limits: blocks are named by 32-bit indices, and lvpool takes fewer than
 * 2^30 of them (its words' argument is 30 bits): VL10_MAX_BLOCKS. Every
 * uint32_t count of ranges plans within it (a static assertion below);
 * files as format 9 (VL_MAX_FILES, a file index fits the 30-bit argument
 * of a USED word); process slots at most 2^16 (a token's slot is 16
 * bits), in whole pages of 64. The plan clamps what it is asked into
 * those limits.
 *
 * The check at attach (vl_geometry10_ok): -EUCLEAN for a wrong magic, a
 * sum that fails, a capacity outside its limits, an area that overlaps
 * the one before it, lies past region_size, or is not aligned, a
 * region_size that is not the file's, or a geometry this version would
 * not have planned; -EPROTO for another version or ABI (the format word,
 * the header's size). The lvpool header's own geometry (block size and
 * count) must then say what this one says: vl_lp_attach checks its sum,
 * the caller compares (test-layout10 does).
 */
#ifndef VL_LAYOUT10_H
#define VL_LAYOUT10_H

#include <stdint.h>

#include "layout.h"
#include "leaves.h"
#include "lvpool.h"

#define VL10_VERSION 10u
#define VL10_BLOCK VL_LV_BLOCK
#define VL10_DEFAULT_RANGES 1000000u /* issue 28's million, at the worst fill */
#define VL10_MAX_BLOCKS ((1u << 30) - 1u) /* lvpool: cap < 2^30 */
#define VL10_MAX_PROCS 65536u             /* a token's slot: 16 bits */
#define VL10_PAGE_BLOCKS (4096u / VL10_BLOCK)
#define VL10_PAGE_PROCS (4096u / 64u)

struct vl_geometry10 {
	uint64_t magic;        /* VL_MAGIC */
	uint32_t format;       /* vl_format10(): version 10 and every ABI size */
	uint32_t header_size;
	uint64_t region_size;
	uint32_t block_cap;    /* blocks, block 0 (nil) included */
	uint32_t file_cap;     /* file records, the sentinel included */
	uint32_t hash_cap;     /* a power of two, >= 2 file_cap */
	uint32_t proc_cap;     /* process slots, the sentinel included */
	uint32_t check;        /* vl_geometry10_sum() of every other field */
	uint32_t pad;          /* 0 */
	uint64_t tomb_off;
	uint64_t files_off;
	uint64_t hash_off;
	uint64_t lp_off;       /* struct vl_lp_hdr */
	uint64_t slots_off;    /* struct vl_lp_slot [block_cap] */
	uint64_t blocks_off;   /* block_cap blocks of VL10_BLOCK bytes */
	uint64_t procs_off;    /* struct vl_proc [proc_cap] */
};

/* step 7 puts it where format 9's geometry is, before the region lock */
_Static_assert(sizeof(struct vl_geometry10) <= offsetof(struct vl_header, lock),
	       "format 10's geometry fits the header's first lines");

/* The format word of format 10: as vl_format(), with the block's size for the node's. */
uint32_t vl_format10(void);
uint32_t vl_geometry10_sum(const struct vl_geometry10 *g);

/* The most blocks one file's tree of r ranges takes (leaves.h's least fill). */
uint32_t vl_lv_worst_blocks(uint32_t r);

/*
 * Blocks, nil included, for `ranges` ranges over at most `files` files
 * with `procs` process slots each holding a full reservation: the bound
 * above, rounded up to a page of blocks; at most VL10_MAX_BLOCKS.
 */
uint32_t vl_geometry10_blocks(uint32_t ranges, uint32_t files, uint32_t procs);

/*
 * Lay out a format 10 region for `ranges` ranges, `files` files and
 * `procs` process slots (each clamped into the limits above); fills *g
 * completely.
 */
void vl_geometry10_for(uint32_t ranges, uint32_t files, uint32_t procs,
		       struct vl_geometry10 *g);

/*
 * Are g's areas sound in a region of g->region_size bytes: each aligned,
 * after the one before it, inside the region? 0 or -EUCLEAN. Part of
 * vl_geometry10_ok, apart so that a test can reach every one of its checks.
 */
int vl_geometry10_areas_ok(const struct vl_geometry10 *g);

/*
 * Check a geometry read from a region `size` bytes long: 0, -EPROTO
 * (another version or ABI), or -EUCLEAN (anything else wrong).
 */
int vl_geometry10_ok(const struct vl_geometry10 *g, uint64_t size);

#endif /* VL_LAYOUT10_H */
