/* SPDX-License-Identifier: MIT */
/*
 * pool.c - allocators, LRU, file table and counters (see pool.h); their
 * rebuild after a lock holder died is rebuild.c.
 */
#include "pool.h"

#include "compiler.h"
#include "fault.h"
#include "tomb.h"

#include <errno.h>
#include <string.h>

/*
 * The nodes: a free list of chunks (VL_CHUNK nodes, layout.h) that
 * processes pop and push with no lock (a Treiber stack through the first
 * node of each chunk; the tag in the top word's high half, bumped by
 * every change, makes a pop that read a stale head fail its
 * compare-and-swap), then the high-water mark, raised a chunk at a time
 * by compare-and-swap too. Chunks are handed out lowest first where they
 * can be, so the pages of the sparse region file that are ever touched
 * follow the peak use.
 *
 * A FREE chunk is whoever's owns its first node: one compare-and-swap of
 * that node's meta from FREE to PENDING (take) makes the chunk someone's,
 * a pop, a claim of a new chunk and a sweep alike; only then are its
 * other nodes written. A chunk in use is its nodes', each PENDING, LIVE or
 * IDLE; an IDLE node is taken by one compare-and-swap IDLE -> PENDING
 * (take_idle), and a chunk goes back to the list only once its every node
 * was taken so (chunk_reclaim). A node's next is written only by its owner.
 * A freer whose push fails takes its chunk back first, if its FREE
 * (stamped with the list's tag, 24 bits of it) is still there. So a list
 * gone wrong (a process killed between taking a chunk off the list and
 * taking the chunk, or between making it FREE and pushing it; a scribble)
 * can lose chunks or name chunks in use, never give one node to two owners
 * or write into a node in use. Lost chunks are found again by
 * vl_nodes_sweep, when the region looks full.
 */
#define TOP(tag, head) (((uint64_t)(tag) << 32) | (head))
#define TOP_HEAD(t) ((uint32_t)(t))
#define TOP_TAG(t) ((uint32_t)((t) >> 32))

/* The first slot of n's chunk. */
static VL_INLINE uint32_t chunk_of(uint32_t n)
{
	return n & ~(VL_CHUNK - 1);
}

/* Is c the first slot of a chunk that can be handed out (not chunk 0)? */
static VL_INLINE int chunk_ok(const struct vl_region *r, uint32_t c)
{
	return c >= VL_CHUNK && c < r->node_cap && chunk_of(c) == c;
}

/*
 * Make slot n a PENDING node of file, if its meta is still exactly the
 * FREE `seen` (read before the slot was taken off the list, or claimed):
 * 1, or 0. Exactly: a sweep may have taken the node meanwhile and made
 * it FREE again, stamped anew, on its way back to the list; that FREE is
 * not the one this caller found, and the node is not this caller's.
 */
static int take(const struct vl_region *r, uint32_t n, uint32_t seen, uint32_t file)
{
	struct vl_node *x = vl_node_at(r, n);

	if (!chunk_ok(r, n) || (seen & VL_META_STATE_MASK) >> VL_META_STATE_SHIFT != VL_NODE_FREE)
		return 0;
	return __atomic_compare_exchange_n(&x->meta, &seen, vl_meta(file, VL_NODE_PENDING, 0), 0,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/* Make n, an IDLE node of fi, a PENDING node of `to`: 1, or 0 (not so, or someone was first). */
static VL_INLINE int take_idle(const struct vl_region *r, uint32_t n, uint32_t fi, uint32_t to)
{
	uint32_t want = vl_meta(fi, VL_NODE_IDLE, 0);

	if (n == VL_NIL || n >= r->node_cap ||
	    __atomic_load_n(&r->nodes[n].meta, __ATOMIC_RELAXED) != want)
		return 0;
	return __atomic_compare_exchange_n(&r->nodes[n].meta, &want,
					   vl_meta(to, VL_NODE_PENDING, 0), 0, __ATOMIC_ACQ_REL,
					   __ATOMIC_RELAXED);
}

/* Slot n, taken, made a clean PENDING node of file. */
static VL_INLINE uint32_t node_init(const struct vl_region *r, uint32_t n, uint32_t file)
{
	struct vl_node *x = &r->nodes[n];

	VL_STEP("node_alloc: taken");
	x->start = x->end = 0;
	x->seq = 0;
	x->left = x->right = x->parent = x->prev = x->next = VL_NIL;
	x->meta = vl_meta(file, VL_NODE_PENDING, 0);
	vl_node_seal_at(x, n);
	return n;
}

/* Node n, ours, emptied and stored with meta m (unsealed: FREE or IDLE, unused). */
static VL_INLINE void node_clear(const struct vl_region *r, uint32_t n, uint32_t m)
{
	struct vl_node *x = &r->nodes[n];

	x->start = x->end = 0;
	x->seq = x->check = 0;
	x->left = x->right = x->parent = x->prev = x->next = VL_NIL;
	__atomic_store_n(&x->meta, m, __ATOMIC_RELEASE);
}

/*
 * Chunk c, just taken (its first node PENDING, ours): its first node made
 * a clean PENDING node of file, the others IDLE nodes of file, and the
 * chunk made the file's, where its next changes look first.
 */
static uint32_t chunk_give(const struct vl_region *r, uint32_t c, uint32_t file)
{
	for (uint32_t k = 1; k < VL_CHUNK; k++) {
		uint32_t m = __atomic_load_n(&r->nodes[c + k].meta, __ATOMIC_ACQUIRE);

		/*
		 * A FREE chunk's other nodes are FREE: one that is not (a
		 * scribbled first node made the chunk look free) is someone's,
		 * and is left to them.
		 */
		if ((m & VL_META_STATE_MASK) >> VL_META_STATE_SHIFT == VL_NODE_FREE &&
		    __atomic_compare_exchange_n(&r->nodes[c + k].meta, &m,
						vl_meta(file, VL_NODE_PENDING, 0), 0,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			node_clear(r, c + k, vl_meta(file, VL_NODE_IDLE, 0));
	}
	if (file != VL_NIL && file < r->file_cap)
		__atomic_store_n(&r->files[file].h.chunk, c, __ATOMIC_RELAXED);
	/* counted by the chunk: a file's changes within it touch no shared line */
	__atomic_fetch_add(&vl_counters(r)->nodes_used, VL_CHUNK, __ATOMIC_RELAXED);
	return node_init(r, c, file);
}

/* The head of the free list, made ours; VL_NIL if the list is empty. */
static uint32_t pop_free(const struct vl_region *r, uint32_t file)
{
	struct vl_counters *c = vl_counters(r);
	uint64_t top = __atomic_load_n(&c->node_top, __ATOMIC_ACQUIRE);

	for (uint32_t tries = 0; tries < r->node_cap; tries++) {
		uint32_t n = TOP_HEAD(top), next, seen;

		if (!chunk_ok(r, n))
			return VL_NIL; /* empty, or a scribbled head: the next push replaces it */
		seen = __atomic_load_n(&vl_node_at(r, n)->meta, __ATOMIC_ACQUIRE);
		next = __atomic_load_n(&vl_node_at(r, n)->next, __ATOMIC_RELAXED);
		if (!__atomic_compare_exchange_n(&c->node_top, &top, TOP(TOP_TAG(top) + 1, next), 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;
		VL_STEP("node_alloc: off the list, not taken");
		/* a chunk in use the list named (see above) is passed over */
		if (take(r, n, seen, file))
			return chunk_give(r, n, file);
		top = __atomic_load_n(&c->node_top, __ATOMIC_ACQUIRE);
	}
	return VL_NIL;
}

/* A chunk never used, wholly below limit; VL_NIL if none. */
static uint32_t claim_new(const struct vl_region *r, uint32_t file, uint32_t limit)
{
	struct vl_counters *c = vl_counters(r);
	uint32_t h = __atomic_load_n(&c->node_hwm, __ATOMIC_RELAXED);

	if (limit > r->node_cap)
		limit = r->node_cap;
	/* (a mark scribbled into chunk 0 or off a chunk's start: full instead) */
	while (chunk_ok(r, h) && h + VL_CHUNK <= limit) {
		if (!__atomic_compare_exchange_n(&c->node_hwm, &h, h + VL_CHUNK, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		VL_STEP("node_alloc: slot claimed, not taken");
		/* a sweep may have found it first (its zeros read FREE): then it is on the list */
		if (take(r, h, 0, file))
			return chunk_give(r, h, file);
		h = __atomic_load_n(&c->node_hwm, __ATOMIC_RELAXED);
	}
	return VL_NIL;
}

static VL_INLINE uint32_t spare_take(const struct vl_region *r, uint32_t fi);

uint32_t vl_node_alloc_below(const struct vl_region *r, uint32_t file, uint32_t limit)
{
	uint32_t n = spare_take(r, file);

	if (n == VL_NIL)
		n = pop_free(r, file);
	return n != VL_NIL ? n : claim_new(r, file, limit);
}

uint32_t vl_node_alloc(const struct vl_region *r, uint32_t file)
{
	return vl_node_alloc_below(r, file, r->node_cap);
}

/*
 * A racer may take the last ready slot between our look and our claim;
 * a few tries, each making more slots ready, then the region counts as
 * full for this call.
 */
#define NODE_TAKE_TRIES 4
/* slots made ready at a time: whole chunks */
#define READY_SLOTS (VL_READY_CHUNK / sizeof(struct vl_node) / VL_CHUNK * VL_CHUNK)

/*
 * The ready mark is raised to the highest any racer made ready: making
 * pages present twice is harmless.
 */
uint32_t vl_node_take(const struct vl_region *r, uint32_t fi, vl_make_ready_fn make_ready)
{
	struct vl_counters *c = vl_counters(r);

	for (int tries = 0; tries < NODE_TAKE_TRIES; tries++) {
		uint32_t ready = __atomic_load_n(&c->node_ready, __ATOMIC_ACQUIRE);
		uint32_t n = vl_node_alloc_below(r, fi, ready), hwm, want;

		if (n != VL_NIL)
			return n;
		hwm = __atomic_load_n(&c->node_hwm, __ATOMIC_RELAXED);
		if (hwm + VL_CHUNK > r->node_cap || !chunk_ok(r, hwm))
			return VL_NIL; /* full */
		if (hwm + VL_CHUNK <= ready)
			continue; /* a racer took the last ready chunk first */
		ready = ready < hwm ? ready : hwm;
		want = hwm + READY_SLOTS;
		want = want > r->node_cap ? r->node_cap : want;
		if (make_ready(r->hdr, r->hdr->geo.nodes_off + (uint64_t)ready * sizeof(struct vl_node),
			       (uint64_t)(want - ready) * sizeof(struct vl_node)) != 0)
			return VL_NIL; /* the region's file system is full: ENOMEM, never SIGBUS */
		while (ready < want && !__atomic_compare_exchange_n(&c->node_ready, &ready, want, 0,
								    __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
			;
	}
	return VL_NIL;
}

/*
 * Push chunk c, ours (its first node PENDING of owner; its other nodes
 * written FREE), onto the free list. owner: the file whose lock the
 * caller holds (chunk_reclaim says why).
 */
static void chunk_push(const struct vl_region *r, uint32_t c, uint32_t owner)
{
	struct vl_counters *k = vl_counters(r);
	struct vl_node *x = &r->nodes[c];
	uint64_t top = __atomic_load_n(&k->node_top, __ATOMIC_ACQUIRE);

	x->start = x->end = 0;
	x->seq = x->check = 0;
	x->left = x->right = x->parent = x->prev = VL_NIL;
	for (;;) {
		/*
		 * FREE, stamped with the list's tag: if the push fails, the chunk
		 * is taken back only if its first node is still this very FREE.
		 * A sweep may have taken it and freed it again meanwhile (pushed,
		 * stamped with a later tag): then it is on the list, and not ours.
		 */
		uint32_t mine = vl_meta(TOP_TAG(top), VL_NODE_FREE, 0), m = mine;

		__atomic_store_n(&x->next, TOP_HEAD(top), __ATOMIC_RELAXED); /* still ours */
		__atomic_store_n(&x->meta, mine, __ATOMIC_RELEASE);
		VL_STEP("node_free: free, not on the list");
		if (__atomic_compare_exchange_n(&k->node_top, &top, TOP(TOP_TAG(top) + 1, c), 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			break;
		if (!__atomic_compare_exchange_n(&x->meta, &m, vl_meta(owner, VL_NODE_PENDING, 0), 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			break;
	}
}

static VL_INLINE unsigned meta_state(uint32_t m)
{
	return (m & VL_META_STATE_MASK) >> VL_META_STATE_SHIFT;
}

/*
 * Take every node of chunk c, each IDLE (of whichever file), by
 * compare-and-swap: 1, the chunk ours (its first node PENDING of owner,
 * the others written FREE), or 0, none taken (one was in use, or someone
 * was first: those taken are made IDLE again, as they were).
 *
 * Taken, the nodes are PENDING of owner, the file whose lock the caller
 * holds, never of no file: a process killed before the chunk is pushed
 * leaves them to that file's repair, which frees its PENDING nodes
 * (rebuild.c), and so gives the chunk back; PENDING of no file they
 * would be lost for good. A node past the first that is FREE while the
 * first is IDLE was never made its file's (a chunk_give cut short: the
 * first taken, its others not all yet): no one hands it out alone (a
 * chunk goes out by its first node), so it is taken as unused.
 */
static int chunk_reclaim(const struct vl_region *r, uint32_t c, uint32_t owner)
{
	uint32_t seen[VL_CHUNK], k;

	if (!chunk_ok(r, c))
		return 0;
	for (k = 0; k < VL_CHUNK; k++) {
		seen[k] = __atomic_load_n(&r->nodes[c + k].meta, __ATOMIC_ACQUIRE);
		if (k > 0 && meta_state(seen[k]) == VL_NODE_FREE)
			continue;
		if (meta_state(seen[k]) != VL_NODE_IDLE ||
		    !take_idle(r, c + k, seen[k] & VL_META_FILE_MASK, owner))
			break;
	}
	if (k < VL_CHUNK) {
		while (k-- > 0)
			if (meta_state(seen[k]) == VL_NODE_IDLE)
				__atomic_store_n(&r->nodes[c + k].meta, seen[k], __ATOMIC_RELEASE);
		return 0;
	}
	VL_STEP("chunk_free: taken, not free");
	for (k = 1; k < VL_CHUNK; k++)
		node_clear(r, c + k, vl_meta(0, VL_NODE_FREE, 0));
	__atomic_fetch_sub(&vl_counters(r)->nodes_used, VL_CHUNK, __ATOMIC_RELAXED);
	return 1;
}

/* Chunk c back to the region if none of its nodes is in use; owner's lock held. */
static void chunk_release(const struct vl_region *r, uint32_t c, uint32_t owner)
{
	if (chunk_reclaim(r, c, owner))
		chunk_push(r, c, owner);
}

/*
 * Node n, PENDING and ours, made an IDLE node of fi: emptied first, so
 * whoever takes it next (IDLE -> PENDING) finds it clean. Not sealed: no
 * one reads an unused node's sum, and every field is written (and the
 * node sealed) before it is used, as a spare's always were.
 */
static VL_INLINE void node_idle(const struct vl_region *r, uint32_t n, uint32_t fi)
{
	struct vl_node *x = &r->nodes[n];

	x->start = x->end = 0;
	x->seq = x->check = 0;
	x->left = x->right = x->parent = x->prev = x->next = VL_NIL;
	__atomic_store_n(&x->meta, vl_meta(fi, VL_NODE_IDLE, 0), __ATOMIC_RELEASE);
}

/*
 * Made IDLE, the node of the file it names; its chunk back to the region
 * if that leaves it unused and it is not the file's chunk (where the
 * file's next changes look: its lock holder lets that go, vl_file_release).
 */
void vl_node_free(const struct vl_region *r, uint32_t n)
{
	struct vl_node *x = vl_node_w(r, n);
	uint32_t fi, c;

	if (x == NULL || n < VL_CHUNK || vl_node_state(x) == VL_NODE_FREE ||
	    vl_node_state(x) == VL_NODE_IDLE)
		return;
	fi = vl_node_file(x);
	node_idle(r, n, fi);
	c = chunk_of(n);
	if (fi == VL_NIL || fi >= r->file_cap ||
	    __atomic_load_n(&r->files[fi].h.chunk, __ATOMIC_RELAXED) != c)
		chunk_release(r, c, fi);
}

/*
 * Can a sweep stamp the chunks it holds, on no list, with tag t? Not if
 * its low 24 bits are 0: a first node FREE with stamp 0 reads as a chunk
 * never taken, which a claimer stopped between raising the high-water
 * mark and taking its chunk (claim_new) takes when it goes on, and the
 * sweep's plain stores would then list the claimer's chunk.
 */
static VL_INLINE int stamp_ok(uint32_t t)
{
	return (t & VL_META_FILE_MASK) != 0;
}

/* The list's next tag, one a sweep can stamp with. */
static VL_INLINE uint32_t tag_after(uint32_t t)
{
	return stamp_ok(t + 1) ? t + 1 : t + 2;
}

/*
 * A chunk freed before the sweep began: its first node's FREE was stamped
 * with a tag older than `since` (24 bits, compared as serial numbers).
 * Chunks freed since are on the new list, and must not be taken from it.
 */
static int freed_before(uint32_t meta, uint32_t since)
{
	uint32_t stamp = meta & VL_META_FILE_MASK;
	uint32_t d = (since - stamp) & VL_META_FILE_MASK;

	return (meta & VL_META_STATE_MASK) >> VL_META_STATE_SHIFT == VL_NODE_FREE && d != 0 &&
	       d < (VL_META_FILE_MASK >> 1);
}

/*
 * Unused chunk c made the sweep's, its first node `mine`: its first taken
 * first, IDLE -> mine (so no reclaim and no file takes it meanwhile), then
 * its others, each IDLE -> FREE by compare-and-swap. Beaten to one (a
 * file took it as a spare), those taken are made IDLE again, the first
 * too, as they were. A sweep killed midway leaves the first FREE and
 * older than the next sweep, which takes the chunk; an other node left
 * IDLE then is passed over when the chunk is handed out (chunk_give), and
 * stays its file's.
 */
static int sweep_take_idle(const struct vl_region *r, uint32_t c, uint32_t mine)
{
	uint32_t seen[VL_CHUNK], k;

	seen[0] = __atomic_load_n(&r->nodes[c].meta, __ATOMIC_ACQUIRE);
	if (meta_state(seen[0]) != VL_NODE_IDLE ||
	    !__atomic_compare_exchange_n(&r->nodes[c].meta, &seen[0], mine, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return 0;
	VL_STEP("nodes_sweep: a chunk's first taken, not its others");
	for (k = 1; k < VL_CHUNK; k++) {
		seen[k] = __atomic_load_n(&r->nodes[c + k].meta, __ATOMIC_ACQUIRE);
		if (meta_state(seen[k]) == VL_NODE_FREE)
			continue;
		if (meta_state(seen[k]) != VL_NODE_IDLE ||
		    !__atomic_compare_exchange_n(&r->nodes[c + k].meta, &seen[k],
						 vl_meta(0, VL_NODE_FREE, 0), 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			break;
	}
	if (k < VL_CHUNK) {
		while (k-- > 0)
			if (meta_state(seen[k]) == VL_NODE_IDLE)
				__atomic_store_n(&r->nodes[c + k].meta, seen[k], __ATOMIC_RELEASE);
		return 0;
	}
	__atomic_fetch_sub(&vl_counters(r)->nodes_used, VL_CHUNK, __ATOMIC_RELAXED);
	return 1;
}

/*
 * Chunk c made the sweep's: FREE from before it began, or unused. Its
 * first node is made FREE stamped `since` (never PENDING of no file): on
 * no list until the sweep pushes it, and freed before any later sweep
 * began, so a sweep killed before its push leaves it to the next.
 */
static int sweep_take(const struct vl_region *r, uint32_t c, uint32_t since)
{
	uint32_t m = __atomic_load_n(&vl_node_at(r, c)->meta, __ATOMIC_ACQUIRE);
	uint32_t mine = vl_meta(since, VL_NODE_FREE, 0);

	if (!chunk_ok(r, c))
		return 0;
	/* the very FREE judged old is the one taken: not one pushed since */
	if (freed_before(m, since))
		return __atomic_compare_exchange_n(&r->nodes[c].meta, &m, mine, 0,
						   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
	return sweep_take_idle(r, c, mine);
}

/*
 * node_hwm and node_ready carry no sum, and a repair that trusted a
 * lowered one would leave the file's ranges above it out, purged ones too
 * (UNMARK would say 0 over punched bytes: fuzz-region's
 * regress-repair-hwm-lowered). So the larger of the two (every chunk ever
 * claimed lies below both, claims being made below node_ready: either
 * intact is enough), then every chunk past that whose first node reads
 * other than 0: one in use names its file there, a FREE one a nonzero
 * stamp (stamp_ok), and only one never handed out reads 0. The pages
 * below node_ready are present already; past it, one chunk is read more.
 */
uint32_t vl_nodes_used_end(const struct vl_region *r)
{
	const struct vl_counters *c = vl_counters(r);
	uint32_t hwm = __atomic_load_n(&c->node_hwm, __ATOMIC_RELAXED);
	uint32_t ready = __atomic_load_n(&c->node_ready, __ATOMIC_RELAXED);
	uint32_t end = hwm > ready ? hwm : ready;

	end = end < VL_CHUNK ? VL_CHUNK : end < r->node_cap ? chunk_of(end) : r->node_cap;
	while (end + VL_CHUNK <= r->node_cap &&
	       __atomic_load_n(&vl_node_at(r, end)->meta, __ATOMIC_RELAXED) != 0)
		end += VL_CHUNK;
	return end;
}

uint32_t vl_nodes_sweep(const struct vl_region *r)
{
	struct vl_counters *c = vl_counters(r);
	uint64_t top = __atomic_load_n(&c->node_top, __ATOMIC_ACQUIRE);
	uint32_t hwm, since, head = VL_NIL, last = VL_NIL, found = 0;

	/*
	 * The list, emptied: what was on it, and what killed processes lost,
	 * is FREE with an older stamp than anything pushed from now on. Taken
	 * (FREE, stamped anew: a freer whose push failed finds its stamp gone
	 * and lets the chunk be; a sweep killed from here on leaves them FREE
	 * and older than the next sweep), chained (only a sweep, holding the
	 * region lock, writes a chunk that is FREE and on no list), and pushed
	 * back in one swap. Chunks whose every node is IDLE go with them.
	 */
	while (!__atomic_compare_exchange_n(&c->node_top, &top, TOP(tag_after(TOP_TAG(top)), VL_NIL),
					    0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
	since = tag_after(TOP_TAG(top));
	VL_STEP("nodes_sweep: list emptied");
	hwm = __atomic_load_n(&c->node_hwm, __ATOMIC_RELAXED);
	hwm = hwm < r->node_cap ? hwm : r->node_cap;
	for (uint32_t i = VL_CHUNK; i + VL_CHUNK <= hwm; i += VL_CHUNK) {
		if (!sweep_take(r, i, since))
			continue;
		r->nodes[i].next = head;
		head = i;
		if (last == VL_NIL)
			last = i;
		found++;
	}
	if (head == VL_NIL)
		return 0;
	VL_STEP("nodes_sweep: chained, not pushed");
	top = __atomic_load_n(&c->node_top, __ATOMIC_ACQUIRE);
	for (;;) {
		/* only this sweeper (region lock) touches the chain: FREE, listed by the swap */
		uint32_t i = head;

		if (!stamp_ok(TOP_TAG(top))) {
			/* the list unchanged, its tag moved on: a stamp the chain may have */
			__atomic_compare_exchange_n(&c->node_top, &top,
						    TOP(tag_after(TOP_TAG(top)), TOP_HEAD(top)), 0,
						    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
			top = __atomic_load_n(&c->node_top, __ATOMIC_ACQUIRE);
			continue;
		}
		for (uint32_t k = 0; k < found; k++, i = vl_node_at(r, i)->next)
			__atomic_store_n(&vl_node_at(r, i)->meta, vl_meta(TOP_TAG(top), VL_NODE_FREE, 0),
					 __ATOMIC_RELEASE);
		vl_set_next(r, last, TOP_HEAD(top));
		if (__atomic_compare_exchange_n(&c->node_top, &top, TOP(TOP_TAG(top) + 1, head), 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return found * VL_CHUNK;
	}
}

/* ---- a file's unpurged ranges in age order (its lock held) ---- */

static VL_INLINE void keep_idle(const struct vl_region *r, uint32_t fi, uint32_t n);

/*
 * The commit's helpers are inline into vl_commit (VL_INLINE), with the
 * exported names calling them: a pair of calls passed through a dozen of
 * them, and their calls and frames were a fifth of the commit.
 */
static VL_INLINE int lru_linked(const struct vl_region *r, uint32_t fi, uint32_t n)
{
	return n != VL_NIL &&
	       (vl_node_at(r, n)->prev != VL_NIL || vl_file_at(r, fi)->h.lru_head == n);
}

int vl_lru_linked(const struct vl_region *r, uint32_t fi, uint32_t n)
{
	VL_ASSERT_HELD(r, &vl_file_at(r, fi)->h.lock);

	return lru_linked(r, fi, n);
}

/*
 * Is node i one of file fi's ranges (LIVE, purged or not)? The age order
 * writes a neighbour's link only then: a scribbled link or end (one
 * naming another file's node) must not carry the damage into another
 * file's order. What it leaves wrong in fi's own order, a purge's check
 * finds (vl_lru_check) and a repair mends.
 */
static VL_INLINE int lru_mine(const struct vl_region *r, uint32_t fi, uint32_t i)
{
	return i != VL_NIL && i < r->node_cap &&
	       (r->nodes[i].meta & (VL_META_FILE_MASK | VL_META_STATE_MASK)) ==
		       vl_meta(fi, VL_NODE_LIVE, 0);
}

static VL_INLINE void lru_set_prev(const struct vl_region *r, uint32_t fi, uint32_t i, uint32_t v)
{
	if (lru_mine(r, fi, i))
		r->nodes[i].prev = v;
}

static VL_INLINE void lru_set_next(const struct vl_region *r, uint32_t fi, uint32_t i, uint32_t v)
{
	if (lru_mine(r, fi, i))
		r->nodes[i].next = v;
}

/*
 * The links come from shared memory: a scribbled prev or next (or end of
 * the list) names slot 0 to reads, and the writes through it, or through
 * a node of another file, are dropped. Only a real node n is linked or
 * unlinked.
 */
static VL_INLINE void lru_unlink(const struct vl_region *r, uint32_t fi, uint32_t n)
{
	struct vl_file *f = vl_file_at(r, fi);
	struct vl_node *x = vl_node_at(r, n);

	if (vl_node_w(r, n) == NULL || !lru_linked(r, fi, n))
		return;
	if (x->prev != VL_NIL)
		lru_set_next(r, fi, x->prev, x->next);
	else
		f->h.lru_head = x->next;
	VL_STEP("lru_unlink: half unlinked");
	if (x->next != VL_NIL)
		lru_set_prev(r, fi, x->next, x->prev);
	else
		f->h.lru_tail = x->prev;
	vl_set_prev(r, n, VL_NIL);
	vl_set_next(r, n, VL_NIL);
}

void vl_lru_unlink(const struct vl_region *r, uint32_t fi, uint32_t n)
{
	VL_ASSERT_HELD(r, &vl_file_at(r, fi)->h.lock);

	lru_unlink(r, fi, n);
}

/* Link n, a real node linked nowhere, after `after` (VL_NIL: at the head). */
static VL_INLINE void link_after(const struct vl_region *r, uint32_t fi, uint32_t after,
				 uint32_t n)
{
	struct vl_file *f = vl_file_at(r, fi);
	uint32_t next;

	if (after == VL_NIL) { /* at the head: the oldest */
		vl_set_next(r, n, f->h.lru_head);
		if (f->h.lru_head != VL_NIL)
			lru_set_prev(r, fi, f->h.lru_head, n);
		else
			f->h.lru_tail = n;
		f->h.lru_head = n;
		return;
	}
	if (!lru_mine(r, fi, after)) {
		/*
		 * A tail (or a split's other half) that is not this file's: n
		 * becomes the tail with nothing before it, which the next
		 * purge's check of the order finds (the tail's prev) and mends.
		 */
		vl_set_prev(r, n, VL_NIL);
		vl_set_next(r, n, VL_NIL);
		if (f->h.lru_head == VL_NIL)
			f->h.lru_head = n;
		f->h.lru_tail = n;
		return;
	}
	next = vl_node_at(r, after)->next;
	vl_set_prev(r, n, after);
	vl_set_next(r, n, next);
	VL_STEP("lru_insert: half linked");
	if (next != VL_NIL)
		lru_set_prev(r, fi, next, n);
	else
		f->h.lru_tail = n;
	vl_set_next(r, after, n);
}

void vl_lru_insert_after(const struct vl_region *r, uint32_t fi, uint32_t after, uint32_t n)
{
	VL_ASSERT_HELD(r, &vl_file_at(r, fi)->h.lock);

	if (vl_node_w(r, n) == NULL)
		return;
	lru_unlink(r, fi, n);
	link_after(r, fi, after, n);
}

static VL_INLINE void lru_append(const struct vl_region *r, uint32_t fi, uint32_t n)
{
	struct vl_file *f = vl_file_at(r, fi);

	if (vl_node_w(r, n) == NULL)
		return;
	lru_unlink(r, fi, n);
	/* the tail read after the unlink: n may have been it */
	link_after(r, fi, f->h.lru_tail, n);
}

void vl_lru_append(const struct vl_region *r, uint32_t fi, uint32_t n)
{
	VL_ASSERT_HELD(r, &vl_file_at(r, fi)->h.lock);

	lru_append(r, fi, n);
}

/* What purgers compare with no lock: the age of the file's oldest unpurged range. */
static VL_INLINE void lru_publish(const struct vl_region *r, uint32_t fi)
{
	struct vl_file *f = vl_file_at(r, fi);
	uint32_t h = f->h.lru_head;
	uint32_t age = h == VL_NIL || h >= r->node_cap ? 0 : vl_node_at(r, h)->seq;

	if (__atomic_load_n(&f->h.oldest, __ATOMIC_RELAXED) != age)
		__atomic_store_n(&f->h.oldest, age, __ATOMIC_RELEASE);
}

void vl_lru_publish(const struct vl_region *r, uint32_t fi)
{
	VL_ASSERT_HELD(r, &vl_file_at(r, fi)->h.lock);
	lru_publish(r, fi);
}

/*
 * Is n a fit end of file fi's age order: a sound LIVE unpurged range of
 * fi, with an age? (Its lock held.)
 */
static int lru_end_ok(const struct vl_region *r, uint32_t fi, uint32_t n)
{
	return vl_range_ok(r, n, fi) && !vl_node_purged(vl_node_at(r, n)) &&
	       vl_node_at(r, n)->seq != 0;
}

int vl_lru_check(const struct vl_region *r, uint32_t fi)
{
	const struct vl_file *f = vl_file_at(r, fi);
	uint32_t h = f->h.lru_head, t = f->h.lru_tail, age;

	VL_ASSERT_HELD(r, &f->h.lock);
	if (fi == VL_NIL || fi >= r->file_cap)
		return -EUCLEAN;
	if (h == VL_NIL || t == VL_NIL) {
		/* no unpurged range: both ends and the counts say so, or the order is lost */
		if (h != t || f->h.nranges != f->h.npurged)
			return -EUCLEAN;
	} else if (!lru_end_ok(r, fi, h) || vl_node_at(r, h)->prev != VL_NIL ||
		   !lru_end_ok(r, fi, t) || vl_node_at(r, t)->next != VL_NIL) {
		return -EUCLEAN;
	} else if (h != t) {
		/*
		 * And the links next to each end agree both ways: a chain cut
		 * after the head (a next of VL_NIL, or of another node) shows
		 * here before the head goes, whatever the cut left behind it.
		 */
		uint32_t hn = vl_node_at(r, h)->next, tp = vl_node_at(r, t)->prev;

		if (hn == VL_NIL || hn >= r->node_cap || vl_node_at(r, hn)->prev != h ||
		    tp == VL_NIL || tp >= r->node_cap || vl_node_at(r, tp)->next != t)
			return -EUCLEAN;
	}
	age = h == VL_NIL ? 0 : vl_node_at(r, h)->seq;
	if (__atomic_load_n(&f->h.oldest, __ATOMIC_RELAXED) == age)
		return 0;
	lru_publish(r, fi);
	return 1;
}

uint32_t vl_lru_restamp(const struct vl_region *r, uint32_t fi, uint32_t now)
{
	const struct vl_file *f = vl_file_at(r, fi);
	uint32_t n = f->h.lru_head, steps = 0, done = 0;
	uint32_t floor = vl_age_stamp(now - VL_AGE_RESTAMP_MS);

	VL_ASSERT_HELD(r, &f->h.lock);
	/* no file there: nothing to restamp, and slot 0 is never written */
	if (fi == VL_NIL || fi >= r->file_cap)
		return 0;
	/* in MARK order: the first range younger than the limit ends it (a scribble, sooner) */
	while (n != VL_NIL && steps++ < r->node_cap && vl_range_ok(r, n, fi)) {
		struct vl_node *x = vl_node_w(r, n);

		if (x == NULL || vl_age_back(x->seq, now) <= VL_AGE_RESTAMP_MS)
			break;
		x->seq = floor;
		VL_STEP("restamp: an age written, not sealed");
		vl_node_seal_at(x, n);
		done++;
		n = x->next;
	}
	lru_publish(r, fi);
	return done;
}

uint32_t vl_pick_oldest(const struct vl_region *r, uint32_t now,
			int (*leave)(void *ctx, uint32_t fi), void *ctx, uint32_t last,
			uint32_t *age, uint32_t *second)
{
	uint32_t hwm = vl_file_hwm(r), best = VL_NIL, best_age = 0;

	*second = 0;
	for (uint32_t fi = 1; fi < hwm; fi++) {
		const struct vl_file *f = vl_file_at(r, fi);
		uint32_t a = __atomic_load_n(&f->h.oldest, __ATOMIC_ACQUIRE);

		/* a free record has no range: an age there is a scribble's */
		if (a == 0 || __atomic_load_n(&f->h.state, __ATOMIC_RELAXED) != VL_FILE_LIVE ||
		    (leave != NULL && leave(ctx, fi)))
			continue;
		if (best == VL_NIL || vl_age_older(a, best_age, now) ||
		    (a == best_age && best == last)) {
			if (best != VL_NIL)
				*second = best_age;
			best = fi;
			best_age = a;
		} else if (*second == 0 || vl_age_older(a, *second, now)) {
			*second = a;
		}
	}
	*age = best_age;
	return best;
}

/*
 * A change of one file's count, applied to the region's: the file's count
 * before and after lies in [0, 2^63) (its ranges do not overlap), so the
 * change, read as signed, is exact.
 */
static VL_INLINE void add_change(struct vl_u128 *a, int64_t d)
{
	if (d < 0)
		vl_u128_sub_shared(a, (uint64_t)0 - (uint64_t)d);
	else if (d > 0)
		vl_u128_add_shared(a, (uint64_t)d);
}

static VL_INLINE void shared_add(struct vl_counters *k, const struct vl_change *c)
{
	add_change(&k->volatile_bytes, c->d_vbytes);
	add_change(&k->purged_bytes, c->d_pbytes);
	if (c->d_ranges)
		__atomic_fetch_add(&k->ranges, (uint32_t)c->d_ranges, __ATOMIC_RELAXED);
	if (c->d_purged)
		__atomic_fetch_add(&k->ranges_purged, (uint32_t)c->d_purged, __ATOMIC_RELAXED);
}

void vl_totals_add(const struct vl_region *r, const struct vl_change *c)
{
	shared_add(vl_counters(r), c);
}

/* Take slot p's deltas, leaving 0: adds made meanwhile stay for the next taker. */
static void slot_take(struct vl_proc *p, struct vl_change *d)
{
	d->d_vbytes = __atomic_exchange_n(&p->d_vbytes, 0, __ATOMIC_RELAXED);
	d->d_pbytes = __atomic_exchange_n(&p->d_pbytes, 0, __ATOMIC_RELAXED);
	d->d_ranges = __atomic_exchange_n(&p->d_ranges, 0, __ATOMIC_RELAXED);
	d->d_purged = __atomic_exchange_n(&p->d_purged, 0, __ATOMIC_RELAXED);
}

static VL_COLD void slot_fold(const struct vl_region *r, struct vl_proc *p)
{
	struct vl_change d;

	slot_take(p, &d);
	VL_STEP("totals: a slot's deltas taken, not folded");
	shared_add(vl_counters(r), &d);
}

void vl_totals_forget_slots(const struct vl_region *r)
{
	struct vl_change d;

	for (uint32_t i = 1; i < VL_PROCS; i++)
		slot_take(vl_proc_at(r, i), &d);
}

/*
 * Deltas, or a change, past what a slot keeps: in [-h, h) each as the
 * unsigned sum of it and h, below 2h, a power of two, so the bits at and
 * above 2h of all the sums OR'ed together say whether any is out.
 */
#define FOLD_BYTES_SHIFT 21 /* 2 * VL_FOLD_BYTES */
#define FOLD_RANGES_SHIFT 7 /* 2 * VL_FOLD_RANGES */
_Static_assert(2ull * VL_FOLD_BYTES == 1ull << FOLD_BYTES_SHIFT &&
		       2u * VL_FOLD_RANGES == 1u << FOLD_RANGES_SHIFT,
	       "the fold's bounds are the shifts'");
#define HUGE_BYTES (1ull << 62)

/* nonzero if a slot's bytes v or ranges n are past what it keeps */
static VL_INLINE uint64_t slot_past(int64_t v, int32_t n)
{
	return (((uint64_t)v + VL_FOLD_BYTES) >> FOLD_BYTES_SHIFT) |
	       (((uint32_t)n + VL_FOLD_RANGES) >> FOLD_RANGES_SHIFT);
}

/*
 * Count a commit's change in the region's totals. Under a lock that names
 * a slot of the table of processes (its holder: this process), into that
 * slot's deltas, on the holder's own cache line; folded into the shared
 * totals when one reaches VL_FOLD_BYTES or VL_FOLD_RANGES either way. In a
 * region whose totals a budget needs exact (shared_totals), with no holder
 * named (an orphaned lock, the unit tests), or a change of 2^62
 * bytes or more (which a slot's 64 bits could not take on top of what it
 * holds; ranges are fewer than 2^30), straight into the shared totals.
 */
static VL_INLINE void totals_add(const struct vl_region *r, uint32_t word,
				 const struct vl_change *c)
{
	uint32_t slot = VL_TOKEN_SLOT(word);
	struct vl_proc *p;
	uint64_t past;
	int64_t v, b;
	int32_t n, m;

	if (slot - 1 >= VL_PROCS - 1 ||
	    __atomic_load_n(&vl_counters(r)->shared_totals, __ATOMIC_RELAXED) != 0 ||
	    (((uint64_t)c->d_vbytes + HUGE_BYTES) | ((uint64_t)c->d_pbytes + HUGE_BYTES)) >> 63) {
		shared_add(vl_counters(r), c);
		return;
	}
	p = &r->procs[slot];
	v = __atomic_add_fetch(&p->d_vbytes, c->d_vbytes, __ATOMIC_RELAXED);
	n = __atomic_add_fetch(&p->d_ranges, c->d_ranges, __ATOMIC_RELAXED);
	past = slot_past(v, n);
	/* most MARKs and UNMARKs purge nothing: the purged pair untouched, as it was, not past */
	if ((c->d_pbytes | c->d_purged) != 0) {
		b = __atomic_add_fetch(&p->d_pbytes, c->d_pbytes, __ATOMIC_RELAXED);
		m = __atomic_add_fetch(&p->d_purged, c->d_purged, __ATOMIC_RELAXED);
		past |= slot_past(b, m);
	}
	if (past)
		slot_fold(r, p);
}

/* d, which may be negative, into the 128-bit count a (a reader's copy) */
static void add_signed(struct vl_u128 *a, int64_t d)
{
	if (d < 0)
		vl_u128_sub(a, (uint64_t)0 - (uint64_t)d);
	else
		vl_u128_add(a, (uint64_t)d);
}

static void slot_read(const struct vl_proc *p, struct vl_totals *t)
{
	add_signed(&t->volatile_bytes, __atomic_load_n(&p->d_vbytes, __ATOMIC_RELAXED));
	add_signed(&t->purged_bytes, __atomic_load_n(&p->d_pbytes, __ATOMIC_RELAXED));
	t->ranges += (uint32_t)__atomic_load_n(&p->d_ranges, __ATOMIC_RELAXED);
	t->ranges_purged += (uint32_t)__atomic_load_n(&p->d_purged, __ATOMIC_RELAXED);
}

void vl_totals_read(const struct vl_region *r, const struct vl_proc *own, struct vl_totals *t)
{
	const struct vl_counters *k = vl_counters(r);

	t->volatile_bytes = vl_u128_load(&k->volatile_bytes);
	t->purged_bytes = vl_u128_load(&k->purged_bytes);
	t->ranges = __atomic_load_n(&k->ranges, __ATOMIC_RELAXED);
	t->ranges_purged = __atomic_load_n(&k->ranges_purged, __ATOMIC_RELAXED);
	if (own != NULL) {
		slot_read(own, t);
		return;
	}
	for (uint32_t i = 1; i < VL_PROCS; i++)
		slot_read(vl_proc_at(r, i), t);
}

static VL_INLINE int wants_lru(const struct vl_region *r, uint32_t n)
{
	const struct vl_node *x = vl_node_at(r, n);

	return vl_node_state(x) == VL_NODE_LIVE && !vl_node_purged(x);
}

/* A node out of fi's tree: kept as one of its spares, or freed. */
static VL_INLINE void let_go(const struct vl_region *r, uint32_t fi, uint32_t n)
{
	struct vl_node *x = vl_node_w(r, n);

	if (x == NULL || vl_node_state(x) == VL_NODE_FREE || vl_node_state(x) == VL_NODE_IDLE)
		return;
	lru_unlink(r, fi, n);
	if (vl_node_state(x) == VL_NODE_LIVE && vl_node_file(x) == fi) {
		x->meta = vl_meta(fi, VL_NODE_PENDING, 0);
		VL_STEP("commit: a node made pending, not emptied");
	}
	if (x->meta != vl_meta(fi, VL_NODE_PENDING, 0) || fi >= r->file_cap) {
		vl_node_free(r, n);
		return;
	}
	/*
	 * Emptied, as a new node is: a spare made LIVE by a change that is
	 * cut off before its extent is written must read as nothing to a
	 * repair (start >= end: freed), never as the extent it had in an
	 * earlier life, maybe of bytes nobody marked in this file. A spare the
	 * change did not use has no extent, and is as it was taken: empty.
	 */
	if (x->end != 0)
		node_idle(r, n, fi);
	else
		__atomic_store_n(&x->meta, vl_meta(fi, VL_NODE_IDLE, 0), __ATOMIC_RELEASE);
	keep_idle(r, fi, n);
}

void vl_commit(const struct vl_region *r, uint32_t fi, const struct vl_change *c,
	       uint32_t spare)
{
	struct vl_file *f = vl_file_at(r, fi);
	uint32_t n, next, steps = 0;

	VL_ASSERT_HELD(r, &vl_file_at(r, fi)->h.lock);
	for (n = c->freed; n != VL_NIL && steps++ < r->node_cap; n = next) {
		next = vl_node_at(r, n)->left;
		let_go(r, fi, n);
	}
	if (!vl_spare_used(c, spare))
		let_go(r, fi, spare);
	VL_STEP("commit: nodes let go");

	if (c->keep != VL_NIL) {
		struct vl_node *x = vl_node_w(r, c->keep);

		if (c->keep_aged && x != NULL) {
			x->seq = c->age;
			vl_node_seal_at(x, c->keep);
		}
		if (!wants_lru(r, c->keep))
			lru_unlink(r, fi, c->keep);
		else if (c->keep_aged || !lru_linked(r, fi, c->keep))
			lru_append(r, fi, c->keep);
	}
	if (c->split != VL_NIL && wants_lru(r, c->split)) {
		/* the two halves of a split range share its age: keep them side by side */
		if (lru_linked(r, fi, c->split_of))
			vl_lru_insert_after(r, fi, c->split_of, c->split);
		else
			lru_append(r, fi, c->split);
	}
	lru_publish(r, fi);
	VL_STEP("commit: ages done");
	f->h.nranges += (uint32_t)c->d_ranges;
	f->h.npurged += (uint32_t)c->d_purged;
	f->h.vbytes += (uint64_t)c->d_vbytes;
	f->h.pbytes += (uint64_t)c->d_pbytes;
	VL_STEP("commit: file counted, region not");
	/* the holder's slot, named by the lock it holds: no look-up */
	totals_add(r, __atomic_load_n(&f->h.lock.word, __ATOMIC_RELAXED), c);
}

/* ---- file table: open addressing, linear probing, backward-shift delete ---- */

/* The home slot of an identity: its (dev, ino), so twins share a probe run. */
static uint32_t hash_of(const struct vl_region *r, const struct vl_ident *id)
{
	return (uint32_t)(vl_ident_hash(id) >> 32) & (r->hash_cap - 1);
}

int vl_file_lookup(const struct vl_region *r, const struct vl_ident *id, uint32_t *fi)
{
	uint32_t i = hash_of(r, id), steps;

	for (steps = 0; steps < r->hash_cap; steps++, i = (i + 1) & (r->hash_cap - 1)) {
		uint32_t s = r->hash[i];
		struct vl_file *f;

		VL_WALK();

		if (s == VL_NIL) {
			*fi = VL_NIL;
			return 0;
		}
		f = vl_file_at(r, s);
		if (s >= r->file_cap || f->h.state != VL_FILE_LIVE || !vl_file_ok(r, f))
			return -EUCLEAN;
		if (vl_ident_same(&f->h.ident, id)) {
			*fi = s;
			return 0;
		}
	}
	return -EUCLEAN; /* a table with no empty slot: it is at most half full */
}

/*
 * Without the region lock, a writer may be moving entries of the probe
 * run (hash_remove) or publishing a record: an entry can be missed, or a
 * slot seen that is being freed. Either way the answer is only a guess,
 * and the caller checks it under the file's lock or asks again locked
 * (vl_file_seems, pool.h).
 */
uint32_t vl_file_probe(const struct vl_region *r, const struct vl_ident *id)
{
	uint32_t mask = r->hash_cap - 1, i = hash_of(r, id), steps;

	for (steps = 0; steps < r->hash_cap; steps++, i = (i + 1) & mask) {
		uint32_t s = __atomic_load_n(&r->hash[i], __ATOMIC_ACQUIRE);

		VL_WALK();
		if (s == VL_NIL || s >= r->file_cap)
			return VL_NIL;
		if (vl_file_seems(r, s, id))
			return s;
	}
	return VL_NIL;
}

static void hash_set(const struct vl_region *r, uint32_t i, uint32_t fi)
{
	/* release: a lock-free prober that reads fi sees the record published */
	__atomic_store_n(&r->hash[i], fi, __ATOMIC_RELEASE);
}

void vl_file_hash_insert(const struct vl_region *r, uint32_t fi)
{
	struct vl_file *f = vl_file_at(r, fi);
	uint32_t i = hash_of(r, &f->h.ident), steps;

	for (steps = 0; steps < r->hash_cap; steps++, i = (i + 1) & (r->hash_cap - 1)) {
		VL_WALK();
		if (r->hash[i] == VL_NIL) {
			hash_set(r, i, fi);
			return;
		}
	}
}

static void hash_remove(const struct vl_region *r, uint32_t fi)
{
	uint32_t mask = r->hash_cap - 1, i, j, steps;
	struct vl_file *f = vl_file_at(r, fi);

	i = hash_of(r, &f->h.ident);
	for (steps = 0; r->hash[i] != fi; i = (i + 1) & mask) {
		VL_WALK();
		if (r->hash[i] == VL_NIL || ++steps >= r->hash_cap)
			return;
	}
	/*
	 * Backward shift: pull later entries of the probe run into the hole
	 * unless their home slot lies cyclically in (hole, j], where they
	 * would no longer be found from.
	 */
	hash_set(r, i, VL_NIL);
	VL_STEP("hash_remove: hole made");
	for (j = (i + 1) & mask, steps = 0; r->hash[j] != VL_NIL && steps < r->hash_cap;
	     j = (j + 1) & mask, steps++) {
		struct vl_file *g = vl_file_at(r, r->hash[j]);
		uint32_t home = hash_of(r, &g->h.ident);

		if (((j - home) & mask) >= ((j - i) & mask)) {
			hash_set(r, i, r->hash[j]);
			hash_set(r, j, VL_NIL);
			i = j;
		}
	}
}

/*
 * Was file slot fi never handed out? Its state FREE and its gen, which
 * every release bumps, 0. What the slots at and past file_hwm must be.
 */
static VL_INLINE int file_never_used(const struct vl_region *r, uint32_t fi)
{
	const struct vl_file *f = vl_file_at(r, fi);

	return f->h.state == VL_FILE_FREE && f->h.gen == 0;
}

uint32_t vl_files_used_end(const struct vl_region *r)
{
	uint32_t end = vl_counters(r)->file_hwm;

	end = end < 1 ? 1 : end > r->file_cap ? r->file_cap : end;
	while (end < r->file_cap && !file_never_used(r, end))
		end++;
	return end;
}

uint32_t vl_file_take(const struct vl_region *r, int *fresh)
{
	struct vl_counters *c = vl_counters(r);
	uint32_t fi = c->file_free;

	*fresh = 0;
	if (fi != VL_NIL && fi < r->file_cap && vl_file_at(r, fi)->h.state == VL_FILE_FREE) {
		c->file_free = vl_file_at(r, fi)->h.next_free;
	} else {
		/*
		 * The mark has no sum: lowered by a stray write it would name a
		 * live record, handed out as new over its file's ranges
		 * (regress-file-take-hwm-lowered). One look at the slot it names,
		 * then, only if that one was used, past every used one.
		 */
		fi = c->file_hwm;
		if (fi == VL_NIL || fi >= r->file_cap || !file_never_used(r, fi))
			c->file_hwm = fi = vl_files_used_end(r);
		if (fi >= r->file_cap || c->files_used * 2 >= r->hash_cap)
			return VL_NIL;
		c->file_free = VL_NIL;
		c->file_hwm = fi + 1;
		*fresh = 1;
	}
	VL_STEP("file_take: taken, not published");
	return fi;
}

void vl_file_publish(const struct vl_region *r, uint32_t fi, const struct vl_ident *id)
{
	struct vl_file *f = vl_file_at(r, fi);

	/*
	 * Everything but the lock, the state and the gen. A late waiter may
	 * still be blocked on the lock; and a MARK that found this slot live
	 * before it was freed may be reading its gen right now, holding only
	 * the file lock (find_and_lock in ops.c). The gen has said "freed
	 * since" from the release on and must go on saying it: it is never
	 * written here, not even to the same value through a memset's zero.
	 */
	memset(&f->h.check, 0, sizeof(*f) - offsetof(struct vl_file, h.check));
	VL_STEP("file_create: cleared");
	vl_ident_store(&f->h.ident, id);
	/*
	 * A file whose record was forgotten with purged ranges (tomb.h): the
	 * flag is set before the record is LIVE, so no UNMARK can find the
	 * record without it, and say 0 over bytes the forgotten ranges covered.
	 * So too a record made while the region serves blind (DESIGN 16): an
	 * older region left to its users may have purged bytes of this file
	 * that a MARK here would join unseen, taking them for intact.
	 */
	if (vl_tomb_has(r->tomb, id) ||
	    __atomic_load_n(&r->hdr->fate.waiting, __ATOMIC_ACQUIRE) == VL_BLIND)
		f->h.flags |= VL_FF_TOMB;
	/* sealed before it is LIVE: whoever sees it LIVE sees its sum too */
	f->h.check = vl_file_sum_as(r, f, VL_FILE_LIVE, f->h.gen);
	VL_STEP("file_create: sealed, not live");
	__atomic_store_n(&f->h.state, VL_FILE_LIVE, __ATOMIC_RELEASE);
	vl_file_hash_insert(r, fi);
	VL_STEP("file_create: in the table");
	vl_counters(r)->files_used++;
}

uint32_t vl_file_create(const struct vl_region *r, const struct vl_ident *id, int *fresh)
{
	uint32_t fi = vl_file_take(r, fresh);

	if (fi != VL_NIL)
		vl_file_publish(r, fi, id);
	return fi;
}

/*
 * A file's spares are the IDLE nodes of its chunk (f->h.chunk), taken and
 * kept by its lock holder. The chunk is a hint: each node is taken by
 * compare-and-swap (take_idle), so a scribbled one, or one another file's
 * MARK took a node of when the region was full (vl_spare_steal), hands
 * out nothing it must not.
 */
static VL_INLINE uint32_t spare_take(const struct vl_region *r, uint32_t fi)
{
	uint32_t c = __atomic_load_n(&vl_file_at(r, fi)->h.chunk, __ATOMIC_RELAXED);
	uint32_t idle = vl_meta(fi, VL_NODE_IDLE, 0);
	struct vl_node *x;

	/* a whole chunk: node_cap is one of whole chunks (vl_geometry_check) */
	if (!chunk_ok(r, c))
		return VL_NIL;
	x = &r->nodes[c];
	/* an IDLE node is empty already (node_idle): only its meta changes */
	for (uint32_t k = 0; k < VL_CHUNK; k++) {
		uint32_t m = idle;

		if (__atomic_load_n(&x[k].meta, __ATOMIC_RELAXED) == idle &&
		    __atomic_compare_exchange_n(&x[k].meta, &m, vl_meta(fi, VL_NODE_PENDING, 0), 0,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			return c + k;
	}
	return VL_NIL;
}

uint32_t vl_spare_take(const struct vl_region *r, uint32_t fi)
{
	VL_ASSERT_HELD(r, &vl_file_at(r, fi)->h.lock);
	return spare_take(r, fi);
}

/* Has chunk c an IDLE node of fi? */
static VL_INLINE int chunk_has_idle(const struct vl_region *r, uint32_t c, uint32_t fi)
{
	if (!chunk_ok(r, c))
		return 0;
	for (uint32_t k = 0; k < VL_CHUNK; k++)
		if (__atomic_load_n(&r->nodes[c + k].meta, __ATOMIC_RELAXED) ==
		    vl_meta(fi, VL_NODE_IDLE, 0))
			return 1;
	return 0;
}

/*
 * n, a PENDING node of fi, made IDLE. Its chunk is kept as the file's if
 * the file's own has no IDLE node left (so that a file whose ranges come
 * and go keeps reusing its nodes), and goes back to the region if that
 * left it wholly unused; otherwise it waits for its other nodes.
 */
static VL_INLINE void keep_idle(const struct vl_region *r, uint32_t fi, uint32_t n)
{
	struct vl_file *f = vl_file_at(r, fi);
	uint32_t c = chunk_of(n), mine = __atomic_load_n(&f->h.chunk, __ATOMIC_RELAXED);

	if (c == mine)
		return;
	if (!chunk_has_idle(r, mine, fi))
		__atomic_store_n(&f->h.chunk, c, __ATOMIC_RELAXED);
	else
		chunk_release(r, c, fi);
}

static VL_INLINE void spare_keep(const struct vl_region *r, uint32_t fi, uint32_t n)
{
	if (n >= r->node_cap || fi == VL_NIL || fi >= r->file_cap ||
	    __atomic_load_n(&r->nodes[n].meta, __ATOMIC_RELAXED) !=
		    vl_meta(fi, VL_NODE_PENDING, 0)) {
		vl_node_free(r, n);
		return;
	}
	node_idle(r, n, fi);
	keep_idle(r, fi, n);
}

void vl_spare_keep(const struct vl_region *r, uint32_t fi, uint32_t n)
{
	VL_ASSERT_HELD(r, &vl_file_at(r, fi)->h.lock);
	spare_keep(r, fi, n);
}

int vl_spare_used(const struct vl_change *c, uint32_t spare)
{
	return spare != VL_NIL && ((c->keep_new && c->keep == spare) || c->split == spare);
}

/*
 * The region is full: an IDLE node of any file, wherever it is (one of
 * to's own in a chunk that is not its chunk too). The one case where two
 * files' nodes share a chunk (and a cache line): a chunk so shared goes
 * back once neither uses it.
 */
uint32_t vl_spare_steal(const struct vl_region *r, uint32_t to)
{
	uint32_t hwm = __atomic_load_n(&vl_counters(r)->node_hwm, __ATOMIC_RELAXED);

	VL_ASSERT_HELD(r, &r->hdr->lock);
	hwm = hwm < r->node_cap ? hwm : r->node_cap;
	for (uint32_t n = VL_CHUNK; n < hwm; n++) {
		uint32_t m = __atomic_load_n(&vl_node_at(r, n)->meta, __ATOMIC_RELAXED);

		if ((m & VL_META_STATE_MASK) >> VL_META_STATE_SHIFT != VL_NODE_IDLE)
			continue;
		if (!take_idle(r, n, m & VL_META_FILE_MASK, to))
			continue;
		/* PENDING of `to`, not yet emptied and sealed: its repair frees it */
		VL_STEP("spare_steal: taken, not given");
		return node_init(r, n, to);
	}
	return VL_NIL;
}

/* Is n a PENDING node of a file other than mine in the table? Its file, or VL_NIL. */
static VL_INLINE uint32_t pending_owner(const struct vl_region *r, uint32_t n, uint32_t mine)
{
	uint32_t m = __atomic_load_n(&vl_node_at(r, n)->meta, __ATOMIC_RELAXED);
	uint32_t f = m & VL_META_FILE_MASK;

	if (meta_state(m) != VL_NODE_PENDING || f == mine || f >= r->file_cap)
		return VL_NIL;
	return f;
}

/*
 * The walk starts where the last one that found all it could take
 * stopped (repair_from), not at the first slot: files that stay PENDING
 * owners (a holder alive and stopped, a lock broken) and lie first would
 * otherwise be the whole answer every time, and a dead holder's file above
 * them never repaired. A scribbled cursor is only a place to start.
 */
uint32_t vl_pending_owners(const struct vl_region *r, uint32_t mine, uint32_t *owner,
			   uint32_t cap)
{
	struct vl_counters *c = vl_counters(r);
	uint32_t hwm = __atomic_load_n(&c->node_hwm, __ATOMIC_RELAXED), found = 0, from, n, k;

	hwm = hwm < r->node_cap ? hwm : r->node_cap;
	if (hwm <= VL_CHUNK || cap == 0)
		return 0;
	from = __atomic_load_n(&c->repair_from, __ATOMIC_RELAXED);
	from = from >= VL_CHUNK && from < hwm ? from : VL_CHUNK;
	n = from;
	do {
		uint32_t f = pending_owner(r, n, mine);

		n = n + 1 < hwm ? n + 1 : VL_CHUNK;
		if (f == VL_NIL)
			continue;
		for (k = 0; k < found && owner[k] != f; k++)
			;
		if (k < found)
			continue;
		owner[found++] = f;
		if (found == cap) {
			__atomic_store_n(&c->repair_from, n, __ATOMIC_RELAXED);
			break;
		}
	} while (n != from);
	return found;
}

void vl_chunk_let_go(const struct vl_region *r, uint32_t fi)
{
	struct vl_file *f = vl_file_at(r, fi);
	uint32_t c = f->h.chunk;

	VL_ASSERT_HELD(r, &f->h.lock);
	if (fi == VL_NIL || fi >= r->file_cap)
		return;
	f->h.chunk = VL_NIL;
	chunk_release(r, c, fi);
}

void vl_file_release(const struct vl_region *r, uint32_t fi)
{
	struct vl_counters *c = vl_counters(r);
	struct vl_file *f = vl_file_at(r, fi);

	if (fi == VL_NIL || fi >= r->file_cap || f->h.state == VL_FILE_FREE)
		return;
	hash_remove(r, fi);
	VL_STEP("file_release: out of the table");
	vl_chunk_let_go(r, fi);
	__atomic_store_n(&f->h.state, VL_FILE_FREE, __ATOMIC_RELEASE);
	VL_STEP("file_release: free, gen not bumped");
	f->h.gen++; /* anyone who looked this slot up before must look again */
	f->h.root = f->h.lru_head = f->h.lru_tail = VL_NIL;
	__atomic_store_n(&f->h.oldest, 0, __ATOMIC_RELEASE);
	f->h.next_free = c->file_free;
	vl_file_seal(r, f);
	c->file_free = fi;
	c->files_used--;
}
