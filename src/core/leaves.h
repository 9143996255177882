/* SPDX-License-Identifier: MIT */
/*
 * leaves.h - format 10's index of one file's ranges: a B+tree of
 * cache-line leaves in blocks of a caller's array (issue 28).
 *
 * Pure logic, as ranges.c is: no I/O, no lock, no allocation, not linked
 * into the runtime yet (core/index.h is the seam that will reach it). The
 * rules are DESIGN 3's exactly as format 9's ranges.c applies them (the
 * merge of overlapping and touching ranges, mark_punch's rule, the split,
 * the purge's join of purged neighbours); tests/unit/test-leaves.c checks
 * that against tests/unit/model.c.
 *
 * Storage. Blocks of VL_LV_BLOCK = 256 bytes (four cache lines), in an
 * array the caller gives (base, capacity), named by 32-bit indices; 0 is
 * nil and never used. Nothing in a block is a pointer. A block is a leaf
 * or an inner node. The module never allocates: a change that may add a
 * block takes it from a struct vl_lv_res the caller filled before (at
 * most VL_LV_RES_MAX; a change needs vl_lv_need(): the tree's height + 1,
 * a leaf split up to a new root), reports how many it took (the last ones
 * of the array) and chains the blocks it let go (change->freed, through
 * each freed block's first word). Short of blocks it returns -ENOMEM
 * before changing anything.
 *
 * A leaf: 12 slots of 20 bytes, three a line, each line's first word a
 * check over the rest of the line. Slot 0 is the header, slots 1..11 the
 * ranges in key order (start), `count` of them:
 *
 *   line 0 (bytes 0-63), lines 1-3 alike with slots 3k..3k+2:
 *   +0  u32 check   sum of words +4..+63, keyed by (block, file, line)
 *   +4  u32 age[0]  slot 0: VL_LV_LEAF | count      (header)
 *   +8  u32 age[1]  slot 1: range 0's age (its MARK's stamp)
 *   +12 u32 age[2]  slot 2: range 1's age
 *   +16 u64 start[0] slot 0: lo     the leaf's key interval [lo, hi):
 *   +24 u64 start[1] slot 1: range 0's start | VL_LV_PURGED (bit 63)
 *   +32 u64 start[2]
 *   +40 u64 end[0]  slot 0: hi      a file's leaves partition [0, 2^63)
 *   +48 u64 end[1]  slot 1: range 0's end
 *   +56 u64 end[2]
 *
 * Every range of a leaf starts in [lo, hi) (it may end past hi). A line
 * copied from another block, file or line fails its check.
 *
 * An inner node (trusted for nothing: it steers, the leaf reached decides):
 *
 *   +0   u32 hdr        VL_LV_INNER | level << 8 | count (level 1: children are leaves)
 *   +4   u32 pad
 *   +8   u64 key[15]    key[i]: lo of child i (key[0]: the node's own lo)
 *   +128 u32 child[15]
 *   +188 u32 minage[15] the least age of an unpurged range below child i,
 *                       VL_LV_NOAGE if none: the purge's descent (oldest first)
 *   +248 u64 spare
 *
 * Fill: a leaf other than the root holds 5..11 ranges, an inner node
 * other than the root 7..15 children (the root inner node 2..15). Worst
 * case, all counted: 256 / 5 = 51.2 bytes a range in leaves, plus inner
 * nodes 256 / (5 * 7) * (1 + 1/7 + ...) = 8.5: 59.7 bytes a range (<= 64,
 * issue 28). A tree of one leaf costs its 256 bytes whatever it holds.
 *
 * Untrusted memory (DESIGN 18). Every leaf reached is checked (its lines'
 * checks, its magic, count <= 11, its ranges in order, non-empty, within
 * [lo, hi)); a descent checks lo <= x < hi on the leaf it reaches; a step
 * to a neighbour leaf checks that the two intervals meet and the ranges
 * stay in order across them. A leaf not read decides nothing: a change's
 * first look steps to the next leaf only when this leaf's hi (under its
 * line 0's check) does not already put every range there past what the
 * change overlaps or touches. Every loop is bounded (height <=
 * VL_LV_HMAX, counts, the capacity). A check that fails gives -EUCLEAN.
 * A change first looks at everything it will change (the run of ranges
 * it merges or cuts), then changes; an inner node scribbled so that the
 * second pass's descents fail can leave a change half done, reported
 * -EUCLEAN (the repair's case). The purge's descent checks that the least
 * age it follows is the one its parent recorded, at every level: a
 * scribbled minage gives -EUCLEAN, or, raised on a subtree off the path,
 * a purge of a range that is not the oldest (an order, never a byte).
 * A freed block's header is wiped (magic gone), so a scribbled child
 * index naming it cannot pass for a leaf; blocks the caller's allocator
 * hands out must not hold a sound leaf of this file either (zero them, or
 * wipe on free as here).
 *
 * Ages are compared as numbers, older = less, ties to the lower start;
 * VL_LV_NOAGE (UINT32_MAX) is none. Left for the switch-over: format 9's
 * stamps wrap (vl_age_back); the caller must hand the leaves ages that
 * order as numbers (a stamp's distance back from an epoch the restamp
 * moves), which vl_lv_restamp's floor serves.
 *
 * Kills (step 3 of the plan: vl_lv_repair below, tests/unit/test-lvkill.c).
 * A writer may die at any store (leaves.c marks each with STORED(), a
 * test's kill point). The stores of a change, in order: a new block
 * filled, its header line last (unreachable until linked); a leaf's
 * lines, each one 64-byte assignment sealed with it, in an order that
 * keeps every range that stays in some slot: where the ranges that stay
 * shift right the lines go from the last down and the header last, else
 * the header first and the lines up, and a line past the new last one
 * that held ranges is written empty (so a slot past the count holds a
 * range only when a writer died); inner nodes' keys, children, least
 * ages and counts; the root word last when the height changes. A join
 * over ranges of several leaves (merge_in's join_across) writes the
 * joined range first, over those of its leaf, then takes those of the
 * leaves after it out, a leaf at a time. So a dead writer may leave:
 *   - a leaf whose ranges are out of order (a range in two slots), or
 *     one past its count; a split's new leaf and the one it cuts holding
 *     the same ranges, intervals overlapping; a borrow's range in both
 *     siblings (the receiver is written first); a merge's right leaf
 *     still linked or unlinked; a joined range overlapping the ranges it
 *     covers in the next leaves; a leaf short of its fill;
 *   - inner nodes whose counts, keys or least ages disagree with their
 *     leaves, blocks let go and not given back, a new leaf not linked;
 * never a byte of a range in no slot. The repair, in place, with the
 * file's lock and the list of its blocks in hand (the caller's allocator
 * knows them; a dead writer's blocks taken from its reservation are the
 * file's too): every block with a line that checks as this file's leaf,
 * sorted by lo in the list; their ranges streamed in key order through
 * a window on the stack, ranges seen twice one, overlaps joined purged-
 * wins as vl_ranges_absorb does; a slot of an unsound leaf, or past the
 * count, kept purged; a line whose check fails (a stray write) stands
 * for all between the sound ranges around it, purged; written into the
 * same blocks full (11 a leaf: the output never overtakes what is still
 * to read), the last two evened to >= 5; the inner levels built bottom-up
 * from the other blocks, least ages recomputed; the root word last; the
 * rest wiped and given back. About 0.2 s for 1,000,000 ranges, intact
 * or with every inner node lost (make bench-lvrepair).
 */
#ifndef VL_LEAVES_H
#define VL_LEAVES_H

#include <stdint.h>

#define VL_LV_BLOCK 256
#define VL_LV_LINES 4
#define VL_LV_SLOTS 12               /* 3 a line; slot 0 the header */
#define VL_LV_CAP (VL_LV_SLOTS - 1)  /* ranges a leaf */
#define VL_LV_MIN 5                  /* ranges a leaf other than the root */
#define VL_LV_FAN 15                 /* children an inner node */
#define VL_LV_FAN_MIN 7
#define VL_LV_HMAX 14                /* 2 * 7^12 leaves exceed any capacity */
#define VL_LV_RES_MAX (VL_LV_HMAX + 1)
#define VL_LV_END (1ull << 63)       /* keys are < 2^63; ends <= 2^63 */
#define VL_LV_PURGED (1ull << 63)
#define VL_LV_NOAGE UINT32_MAX

#define VL_LV_LEAF 0x4c560000u       /* "LV" */
#define VL_LV_INNER 0x49000000u      /* "I" */

struct vl_lv_line {
	uint32_t check;
	uint32_t age[3];
	uint64_t start[3];
	uint64_t end[3];
};

struct vl_lv_inner {
	uint32_t hdr;
	uint32_t pad;
	uint64_t key[VL_LV_FAN];
	uint32_t child[VL_LV_FAN];
	uint32_t minage[VL_LV_FAN];
	uint64_t spare;
};

union vl_lv_block {
	uint32_t next_free; /* a freed block: the next on the change's chain */
	struct vl_lv_line line[VL_LV_LINES];
	struct vl_lv_inner in;
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct vl_lv_line) == 64, "a leaf line is a cache line");
_Static_assert(sizeof(union vl_lv_block) == VL_LV_BLOCK, "a block is 256 bytes");

/*
 * Where a file's tree is: one 64-bit word, stored last by a change. Both
 * zero: no range; one zero, not the other: -EUCLEAN. A stray write that
 * zeroes both reads as a file without ranges: the word must lie under
 * the file record's own check (the caller's, as format 9's h.root does).
 */
struct vl_lv_root {
	uint32_t block;  /* VL_NIL (0): no range */
	uint32_t height; /* 1: the root is a leaf */
};

/* One file's tree: the blocks, and the key of its leaves' checks. */
struct vl_lv {
	union vl_lv_block *b;
	uint32_t cap;  /* blocks 1..cap-1 may be used */
	uint32_t file;
	struct vl_lv_root *root;
};

struct vl_lv_res {
	uint32_t n;
	uint32_t blk[VL_LV_RES_MAX];
};

struct vl_lv_range {
	uint64_t start, end;
	uint32_t age;
	int purged;
};

/* What a change did: the caller's commit applies it (pool.h vl_commit's part). */
struct vl_lv_change {
	uint64_t punch_start; /* bytes to punch now; empty if start == end */
	uint64_t punch_end;
	int64_t d_vbytes;     /* change of bytes in unpurged ranges (mod 2^64) */
	int64_t d_pbytes;
	int32_t d_ranges;
	int32_t d_purged;
	uint32_t used;        /* blocks taken from the reservation: its last ones */
	uint32_t freed;       /* blocks let go, chained by next_free; VL_NIL ends */
	uint32_t nfreed;
	int was_purged;       /* UNMARK: a byte it took out had been purged */
};

/* A leaf as read and checked: its interval and ranges (one spare slot for a split). */
struct vl_lv_leafcopy {
	uint64_t lo, hi;
	uint32_t n;
	struct vl_lv_range r[VL_LV_CAP + 1];
};

/* The path of a descent and a position among the ranges (a walk's cursor). */
struct vl_lv_cur {
	uint32_t h;
	uint32_t blk[VL_LV_HMAX];
	uint32_t pos[VL_LV_HMAX]; /* pos[i]: blk[i + 1]'s place in blk[i] */
	uint32_t slot;            /* a range of L; L.n: past its last */
	struct vl_lv_leafcopy L;  /* blk[h - 1], as checked */
};

struct vl_lv_walk {
	const struct vl_lv *t;
	struct vl_lv_cur cur;
	uint64_t left; /* ranges before the bound */
	int state;     /* 0 not started, 1 going, 2 ended */
};

/* Blocks a change may take: the height + 1 (1 for an empty tree). */
uint32_t vl_lv_need(const struct vl_lv *t);

/*
 * MARK [s, e) (s < e <= 2^63) with age `age`: 0 (nothing changed if a
 * range held it already), -ENOMEM, -EINVAL, -EUCLEAN.
 */
int vl_lv_mark(const struct vl_lv *t, uint64_t s, uint64_t e, uint32_t age,
	       struct vl_lv_res *res, struct vl_lv_change *c);
/* UNMARK [s, e): 0 (c->was_purged: DESIGN 3's answer), -ENOMEM, -EINVAL, -EUCLEAN. */
int vl_lv_unmark(const struct vl_lv *t, uint64_t s, uint64_t e, struct vl_lv_res *res,
		 struct vl_lv_change *c);
/*
 * [s, e), purged or not, of age `age`, joined as a MARK joins (purged if
 * any part was, then with touching ranges of its state); nothing punched.
 * A moved file's range, a repair's.
 */
int vl_lv_absorb(const struct vl_lv *t, uint64_t s, uint64_t e, int purged, uint32_t age,
		 struct vl_lv_res *res, struct vl_lv_change *c);
/* The oldest unpurged range, by a descent: 1 and *out, 0 none, -EUCLEAN. */
int vl_lv_oldest(const struct vl_lv *t, struct vl_lv_range *out);
/* Flag the unpurged range starting at `start` purged, joined with purged neighbours. */
int vl_lv_purge(const struct vl_lv *t, uint64_t start, struct vl_lv_change *c);
/* Every range out, every block let go. 0 or -EUCLEAN (nothing changed). */
int vl_lv_clear(const struct vl_lv *t, struct vl_lv_change *c);
/* The unpurged ranges out, the purged kept (ranges.h says why). */
int vl_lv_forget_unpurged(const struct vl_lv *t, struct vl_lv_change *c);
/* Unpurged ranges older than floor take floor: how many, or -EUCLEAN. */
int vl_lv_restamp(const struct vl_lv *t, uint32_t floor);
/* Does a range hold a byte of [s, e), s < e? 1, 0, -EUCLEAN. */
int vl_lv_any_in(const struct vl_lv *t, uint64_t s, uint64_t e);

/* A walk in key order, each leaf checked: next gives 1, 0 at the end, -EUCLEAN. */
void vl_lv_walk_init(struct vl_lv_walk *w, const struct vl_lv *t);
int vl_lv_walk_next(struct vl_lv_walk *w, struct vl_lv_range *out);

/*
 * Make the tree sound again after a writer died at any store, or a stray
 * write (-EUCLEAN), in place: the "Kills" above. blk[0..n): every block
 * the file owns (the allocator's USED blocks of the file, and a dead
 * writer's reservation), in the caller's memory of `room` entries, which
 * the repair reorders. Every sound leaf's ranges are kept; what it cannot
 * check is kept purged; ranges seen twice are one, overlaps joined
 * (purged wins); the leaves rewritten full into the same blocks, the
 * inner levels built from the others, the root word stored last; the
 * blocks left over wiped and chained in c->freed. Blocks beyond the
 * file's are taken from res only when its own are too few for the inner
 * levels (every inner node's block lost from the list): at most
 * (leaves - 1) / 14 + 1 a level, entries of room past n for them.
 * 0, -EINVAL (a block out of range, room < n), -ENOMEM (res short:
 * nothing is lost, the leaves are written and a second call with more
 * finishes). Not itself safe to kill: the caller holds the file's lock
 * and a dead repairer's file is repaired from its blocks as they are.
 */
int vl_lv_repair(const struct vl_lv *t, uint32_t *blk, uint32_t n, uint32_t room,
		 struct vl_lv_res *res, struct vl_lv_change *c);

/* The blocks of the tree (leaves, inner nodes) and its ranges: 0, or -EUCLEAN. */
int vl_lv_count(const struct vl_lv *t, uint32_t *leaves, uint32_t *inner, uint64_t *ranges);

#endif
