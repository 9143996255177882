/* SPDX-License-Identifier: MIT */
/*
 * lvpool.h - format 10's block allocator: fixed-size blocks of the shared
 * region (the leaves and inner nodes of the files' B+trees, core/leaves.h)
 * handed out and taken back with no lock, by processes that may be killed
 * at any instruction or scribble by mistake (DESIGN 18). A pure module: no
 * I/O, no system call, atomic operations only. Not yet linked into the
 * library: the region's layout places it in a later step.
 *
 * What the caller places in shared memory (64-byte aligned), and keeps in
 * its own:
 *
 *   struct vl_lp_hdr      two cache lines: the free stack's top word,
 *                         the high-water mark and the counts (line 0,
 *                         atomic operations only); the geometry and its
 *                         sum (line 1, written once by vl_lp_init)
 *   struct vl_lp_slot[N]  one per block, 8 bytes: the block's state word,
 *                         which only this module writes, and the free
 *                         stack's link. Apart from the blocks, so that a
 *                         block's bytes are the tree's alone.
 *   the blocks            N x size bytes; this module never reads them
 *   struct vl_lp          (the caller's memory) where the three are
 *   struct vl_lp_res      (the caller's memory, one per process or
 *                         thread) a reservation: blocks taken, PENDING
 *                         with the caller's token, not yet in a tree
 *
 * Block 0 is nil: never handed out. A state word (vl_lp_slot.state) is
 * a state in its two high bits and an argument in the low 30:
 *
 *   FREE     stamp    on the free stack, or about to be (stamp: the low 30
 *                     bits of the stack's tag at its push; 0 only for a
 *                     block never handed out, at or above the high-water
 *                     mark or claimed from it and not yet taken)
 *   PENDING  token    taken by the process whose token (layout.h
 *                     VL_TOKEN) it names, in no tree: its reservation
 *   USED     file     may be linked into file's tree (a block is made
 *                     USED before a tree links it, and made PENDING again
 *                     only after no tree links it)
 *
 * The transitions and what a kill at each point leaves (every one is a
 * compare-and-swap from the exact word seen, so of two processes that
 * race for a block one wins and the other passes it over):
 *
 *   take from the stack (vl_lp_fill):
 *     1 walk up to `want` blocks from the top, each in range, FREE, met
 *       once; one compare-and-swap of the top word (tag + 1) pops them all
 *                          killed here: FREE blocks on no list -> sweep
 *     2 each FREE(stamp seen) -> PENDING(token)
 *                          killed here: PENDING(dead token) -> repair
 *   take above the high-water mark (the stack empty):
 *     1 the mark raised by compare-and-swap over k blocks
 *                          killed here: FREE(0) below the mark -> sweep
 *     2 each FREE(0) -> PENDING(token)
 *   use (vl_lp_use, before the tree links the block): PENDING(token) ->
 *     USED(file)           killed after, before the link: a USED block no
 *                          tree links -> sweep with an owner oracle
 *   unuse (vl_lp_unuse, after the tree no longer links it): USED(file)
 *     -> PENDING(token)    killed before: as above
 *   give back (vl_lp_give, vl_lp_repair):
 *     1 each block's link written (ours: PENDING), then each
 *       PENDING(token) -> FREE(stamp of the tag the push will make)
 *                          killed here: FREE blocks on no list -> sweep
 *     2 one compare-and-swap of the top pushes them all; if it fails, each
 *       FREE(stamp) -> PENDING(token) again (failing: a sweep took it,
 *       it is no longer ours) and retry
 *   sweep (vl_lp_sweep, one sweeper: the region lock):
 *     1 the stack emptied, its tag moved by 2: the sweep's stamp S is one
 *       no push or pop ever stamps (they stamp tag + 1 of a tag they read)
 *     2 every FREE block not stamped since S (after S and no later than
 *       the tag now + 1: on the new stack) made FREE(S) and chained; with
 *       the callbacks, PENDING of a dead token and USED or unreadable
 *       words the owner oracle says no tree links, too
 *                          killed here: FREE blocks on no list, stamped
 *                          before the next sweep's stamp -> that sweep
 *     3 the chain pushed by one compare-and-swap
 *
 * So every block is, at every instant, exactly one of: on the free stack,
 * FREE on no list (a sweep lists it), PENDING of a live token (its
 * reservation) or of a dead one (vl_lp_repair gives it back), USED (in
 * its file's tree, or leaked: vl_lp_sweep with an owner oracle). A block
 * is handed out only by a compare-and-swap from the FREE word its taker
 * saw, and every process that writes a FREE word writes a stamp no stalled
 * taker can have seen: a block is never handed to two takers, whatever the
 * free stack says. What the free stack says is checked where it is read
 * (index in range, FREE, met once in one walk); a stack found wrong is cut
 * at the first bad entry (the rest: lost until a sweep, which rebuilds the
 * stack from the state words, never from the old links; `damaged` says a
 * sweep is owed).
 *
 * Limits. Tags are 32 bits and stamps 30: a taker stalled between reading
 * the top and its compare-and-swap for 2^32 stack operations, or between
 * popping and taking for 2^30, could take a stale block (as any tagged
 * Treiber stack). What the state words say is what this module goes by:
 * a FREE word forged over a block a tree links (and that block put on the
 * stack by a forged link, or the mark scribbled down to it with the word
 * forged 0) could be handed out until a sweep with an owner oracle makes
 * it USED again; a word forged over a block a live reservation holds (in
 * no tree: PENDING) reads to that sweep as a leak, and is given back
 * while held. A mark scribbled down hides the blocks above it from
 * repairs and sweeps (never hands one out twice: a claim takes only a
 * word that is 0) until takers raise it past them again; the stack's
 * blocks above it are cut as bad. Tokens are repaired by value: a dead
 * token's PENDING blocks must be given back (vl_lp_repair) before its
 * slot's generation (14 bits) comes round.
 */
#ifndef VL_CORE_LVPOOL_H
#define VL_CORE_LVPOOL_H

#include <stdint.h>

#define VL_LP_FREE 0u
#define VL_LP_PENDING 1u
#define VL_LP_USED 2u
/* state 3 is never written: a word holding it was scribbled */
#define VL_LP_ARG_MASK 0x3fffffffu
#define VL_LP_STATE(w) ((uint32_t)(w) >> 30)
#define VL_LP_ARG(w) ((uint32_t)(w) & VL_LP_ARG_MASK)
#define VL_LP_WORD(state, arg) (((uint32_t)(state) << 30) | ((uint32_t)(arg) & VL_LP_ARG_MASK))

/* vl_lp_repair's token for "every PENDING block": the caller knows no taker lives */
#define VL_LP_ANY_TOKEN 0xffffffffu
/* the most blocks a reservation holds, and one fill or give moves */
#define VL_LP_RES_MAX 32u
#define VL_LP_MAGIC 0x504c5631u /* "1VLP" */

struct vl_lp_hdr {
	/* line 0: the lock-free part, atomic operations only */
	uint64_t top;     /* the free stack: tag << 32 | first block */
	uint32_t hwm;     /* blocks [1, hwm) have been handed out at least once */
	uint32_t out;     /* blocks off the free stack (a statistic: recounted by a sweep) */
	uint32_t damaged; /* a taker cut the stack at a bad entry: a sweep is owed */
	uint32_t pad0[11];
	/* line 1: the geometry, written by vl_lp_init, checked by vl_lp_attach */
	uint32_t magic;
	uint32_t size;    /* bytes a block */
	uint32_t cap;     /* blocks, block 0 (nil) included */
	uint32_t check;   /* sum of the three above */
	uint32_t pad1[12];
} __attribute__((aligned(64)));

struct vl_lp_slot {
	uint32_t state; /* VL_LP_WORD(state, stamp | token | file) */
	uint32_t next;  /* the free stack's link, written only by the block's owner */
};

/* Where the allocator's parts are, in this process. */
struct vl_lp {
	struct vl_lp_hdr *h;
	struct vl_lp_slot *s;
	uint32_t cap;
	uint32_t size;
};

/*
 * A reservation: blocks PENDING with token tok, taken and not yet in a
 * tree. Process memory (a thread's own), not the region's: so the common
 * MARK or UNMARK, which needs no block, reserves for a compare, and a
 * change that uses blocks takes them from here with no atomic operation.
 */
struct vl_lp_res {
	uint32_t tok;
	uint32_t n;
	uint32_t b[VL_LP_RES_MAX];
};

/*
 * Lay out a fresh allocator in zeroed memory: h, and slots for cap blocks
 * of size bytes (cap >= 2, < 2^30; size > 0). 0, or -EINVAL.
 */
int vl_lp_init(struct vl_lp *p, struct vl_lp_hdr *h, struct vl_lp_slot *s, uint32_t size,
	       uint32_t cap);
/* Bind to an allocator laid out before: 0, or -EUCLEAN if its geometry fails its sum. */
int vl_lp_attach(struct vl_lp *p, struct vl_lp_hdr *h, struct vl_lp_slot *s);

/*
 * Make res hold at least want blocks (want <= VL_LP_RES_MAX), PENDING with
 * res->tok: 0; -ENOMEM if the region has not that many free (res keeps
 * what it got); -EAGAIN if the stack kept changing under it. Blocks come
 * from the free stack, then from the high-water mark, lowest first, so
 * the region's file stays sparse.
 */
int vl_lp_fill(const struct vl_lp *p, struct vl_lp_res *res, uint32_t want);
static inline int vl_lp_reserve(const struct vl_lp *p, struct vl_lp_res *res, uint32_t want)
{
	if (res->n >= want)
		return 0;
	return vl_lp_fill(p, res, want);
}
/* A block out of res (VL_NIL-like 0 if empty); it stays PENDING. */
static inline uint32_t vl_lp_pop(struct vl_lp_res *res)
{
	return res->n > 0 && res->n <= VL_LP_RES_MAX ? res->b[--res->n] : 0;
}

/*
 * Block b, PENDING of tok, made USED by file (before a tree links it):
 * 0, or -EUCLEAN if b is out of range or not PENDING of tok.
 */
int vl_lp_use(const struct vl_lp *p, uint32_t b, uint32_t tok, uint32_t file);
/*
 * Block b, USED by file and linked by no tree any more, made PENDING of
 * res->tok and kept in res (given back if res is full): 0, or -EUCLEAN if
 * b is out of range or not USED by file.
 */
int vl_lp_unuse(const struct vl_lp *p, struct vl_lp_res *res, uint32_t b, uint32_t file);
/*
 * Give back all but keep of res's blocks to the free stack, in one
 * compare-and-swap where no one else changes it meanwhile. Returns how
 * many went back; a block no longer PENDING of res->tok is dropped from
 * res (not ours: counted nowhere here). A stack that changes under every
 * try makes it give up: the blocks stay in res.
 */
uint32_t vl_lp_give(const struct vl_lp *p, struct vl_lp_res *res, uint32_t keep);

/*
 * Give back every block PENDING of dead, a token whose process is dead
 * (its blocks are in no tree: see USED above), or of any token but mine
 * (dead = VL_LP_ANY_TOKEN) for a caller that knows no other taker is
 * alive. Each block is first made PENDING of mine, the caller's own
 * token, and only then linked: two repairers of one token never write
 * one block's link, and a repairer killed leaves blocks of its own token.
 * Safe with takers, givers, other repairs and a sweep running. Returns
 * how many went back; a stack that changes under every push makes it give
 * up, leaving what it had taken PENDING of mine (repaired as mine's when
 * mine is dead) and the rest of dead's where they were.
 */
uint32_t vl_lp_repair(const struct vl_lp *p, uint32_t dead, uint32_t mine);

/*
 * What the sweep asks its caller. alive(ctx, tok): is the process of
 * token tok alive (1) or dead (0)? NULL: PENDING blocks are left to
 * vl_lp_repair. owner(ctx, b, &file): 1 and the file whose tree links
 * block b, 0 if no tree links it, < 0 if it cannot say; called only while
 * no change is under way in the trees it answers for (the sweeper holds
 * their files' locks, taken by a try as the recount does, answering < 0
 * for one it could not take). NULL: USED and unreadable words are left.
 */
struct vl_lp_sweep_ops {
	int (*alive)(void *ctx, uint32_t tok);
	int (*owner)(void *ctx, uint32_t b, uint32_t *file);
	void *ctx;
};
struct vl_lp_swept {
	uint32_t listed;  /* FREE blocks it put on the stack (those on it before included) */
	uint32_t dead;    /* PENDING of a dead token, given back */
	uint32_t leaked;  /* USED (or unreadable) that no tree links, given back */
	uint32_t fixed;   /* state words set to what the owner oracle says */
	uint32_t unknown; /* unreadable words the oracle could not judge: left, never handed out */
};
/*
 * Rebuild the free stack from the state words below the high-water mark
 * (never from the old links: a scribbled stack, a cycle, an index out of
 * range, a block in use on it, costs nothing but the sweep), and recount.
 * Needs one sweeper at a time (the caller holds the region lock) and, for
 * owner, what owner says; takers, givers and repairs may run meanwhile.
 * A word scribbled to an unknown state with no oracle to judge it, or one
 * the oracle cannot judge, is left as it is (never handed out). Returns 0,
 * or -EUCLEAN if such words were left or the stack had been found damaged
 * (repaired now); *out (may be NULL) says what it did.
 */
int vl_lp_sweep(const struct vl_lp *p, const struct vl_lp_sweep_ops *ops,
		struct vl_lp_swept *out);

#endif
