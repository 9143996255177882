/* SPDX-License-Identifier: MIT */
/*
 * lvpool.c - format 10's block allocator (see lvpool.h for the states,
 * the transitions and what a kill leaves at each point).
 */
#include "lvpool.h"

#include <errno.h>
#include <stddef.h>

/*
 * VL_LP_STEPS (the unit test's build only): every store to shared memory
 * is followed by a call of vl_lp_step(), which the test defines, so that
 * it can stop a process after any one of them (test-lvpool.c).
 */
#ifdef VL_LP_STEPS
void vl_lp_step(void);
#define STEP() vl_lp_step()
#else
#define STEP() ((void)0)
#endif

#define TOP(tag, head) (((uint64_t)(tag) << 32) | (head))
#define TOP_HEAD(t) ((uint32_t)(t))
#define TOP_TAG(t) ((uint32_t)((t) >> 32))

/*
 * Compare-and-swap loops over a word others change: each failure is
 * someone else's success, so this many in a row means a stack that
 * changes faster than anyone can take from it (or a scribble that keeps
 * changing): give up rather than spin for ever.
 */
#define LP_TRIES 4096u

static uint32_t geometry_sum(uint32_t magic, uint32_t size, uint32_t cap)
{
	uint32_t x = magic * 0x9e3779b1u;

	x = (x ^ size) * 0x85ebca6bu;
	x = (x ^ cap) * 0xc2b2ae35u;
	return x ^ (x >> 16);
}

int vl_lp_init(struct vl_lp *p, struct vl_lp_hdr *h, struct vl_lp_slot *s, uint32_t size,
	       uint32_t cap)
{
	if (cap < 2 || cap > VL_LP_ARG_MASK || size == 0)
		return -EINVAL;
	h->top = 0;
	h->hwm = 1;
	h->out = 0;
	h->damaged = 0;
	h->magic = VL_LP_MAGIC;
	h->size = size;
	h->cap = cap;
	h->check = geometry_sum(VL_LP_MAGIC, size, cap);
	return vl_lp_attach(p, h, s);
}

int vl_lp_attach(struct vl_lp *p, struct vl_lp_hdr *h, struct vl_lp_slot *s)
{
	uint32_t magic = h->magic, size = h->size, cap = h->cap;

	if (magic != VL_LP_MAGIC || cap < 2 || cap > VL_LP_ARG_MASK || size == 0 ||
	    h->check != geometry_sum(magic, size, cap))
		return -EUCLEAN;
	p->h = h;
	p->s = s;
	p->cap = cap;
	p->size = size;
	return 0;
}

/* A FREE word's stamp for a push that makes the stack's tag `tag`; never 0 (never taken). */
static inline uint32_t stamp_of(uint32_t tag)
{
	uint32_t st = tag & VL_LP_ARG_MASK;

	return st != 0 ? st : 1;
}

/*
 * Is the FREE word's stamp st one a push made since the sweep whose stamp
 * is `sweep` began (so the block is on the new stack, or about to be)?
 * Those stamps lie after the sweep's and no later than the tag now + 1
 * (a push stamps the tag it reads, + 1), modulo 2^30; any other stamp,
 * and 0 (never taken), is older: a scribbled stamp from the future too,
 * so that it is not left alone for ever.
 */
static inline int stamped_since(const struct vl_lp *p, uint32_t st, uint32_t sweep)
{
	uint32_t now = stamp_of(TOP_TAG(__atomic_load_n(&p->h->top, __ATOMIC_ACQUIRE)) + 1);
	uint32_t d = (st - sweep) & VL_LP_ARG_MASK;

	return st != 0 && d != 0 && d <= ((now - sweep) & VL_LP_ARG_MASK);
}

/* The high-water mark, read from the region and clamped into [1, cap]. */
static inline uint32_t hwm_of(const struct vl_lp *p)
{
	uint32_t m = __atomic_load_n(&p->h->hwm, __ATOMIC_ACQUIRE);

	return m < 1 ? 1 : m > p->cap ? p->cap : m;
}

static inline int cas_word(uint32_t *w, uint32_t seen, uint32_t want)
{
	return __atomic_compare_exchange_n(w, &seen, want, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/*
 * One try at popping up to k blocks off the stack into res: how many
 * were taken (0: others took those it popped first), -ENOENT if the
 * stack is empty, -EAGAIN if the top changed under it (*top: the new
 * one). The walk is checked block by block; the compare-and-swap of the
 * tagged top then proves that no pop or push happened since it read the
 * top, so the links it followed were the stack's. An entry out of range
 * or not FREE is a stack gone wrong: it is cut there. A cycle is not
 * looked for (a third of a 9-block take's instructions): a block met twice
 * is taken by the first compare-and-swap of its word and passed over by
 * the second, and the next pop finds the cycle's next block taken.
 */
static int pop_once(const struct vl_lp *p, struct vl_lp_res *res, uint32_t k, uint64_t *top)
{
	struct vl_lp_hdr *h = p->h;
	uint32_t hwm = hwm_of(p), b = TOP_HEAD(*top), n = 0, got = 0, bad = 0;
	uint32_t blk[VL_LP_RES_MAX], w[VL_LP_RES_MAX];

	while (n < k && b != 0) {
		uint32_t x;

		if (b >= hwm) {
			bad = 1;
			break;
		}
		x = __atomic_load_n(&p->s[b].state, __ATOMIC_ACQUIRE);
		if (VL_LP_STATE(x) != VL_LP_FREE) {
			bad = 1;
			break;
		}
		blk[n] = b;
		w[n++] = x;
		b = __atomic_load_n(&p->s[b].next, __ATOMIC_RELAXED);
	}
	if (n == 0 && !bad)
		return -ENOENT;
	if (!__atomic_compare_exchange_n(&h->top, top, TOP(TOP_TAG(*top) + 1, bad ? 0 : b), 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	STEP();
	if (bad) {
		__atomic_store_n(&h->damaged, 1, __ATOMIC_RELAXED);
		STEP();
	}
	for (uint32_t i = 0; i < n; i++) {
		/* the FREE it saw, exactly: one a sweep stamped again since is not ours */
		if (cas_word(&p->s[blk[i]].state, w[i], VL_LP_WORD(VL_LP_PENDING, res->tok)))
			res->b[res->n++] = blk[i], got++;
		STEP();
	}
	if (got)
		__atomic_fetch_add(&h->out, got, __ATOMIC_RELAXED);
	return (int)got;
}

/*
 * Up to k blocks never handed out, from the high-water mark: how many
 * were taken, -ENOMEM if none is left, -EAGAIN if the mark moved.
 */
static int claim_once(const struct vl_lp *p, struct vl_lp_res *res, uint32_t k)
{
	struct vl_lp_hdr *h = p->h;
	uint32_t seen = __atomic_load_n(&h->hwm, __ATOMIC_ACQUIRE), m = seen, got = 0;

	/* (a mark scribbled below 1 starts at 1: the state words say what is taken) */
	if (m < 1)
		m = 1;
	if (m >= p->cap)
		return -ENOMEM;
	if (k > p->cap - m)
		k = p->cap - m;
	if (!__atomic_compare_exchange_n(&h->hwm, &seen, m + k, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return -EAGAIN;
	STEP();
	for (uint32_t b = m; b < m + k; b++) {
		/* 0: never taken; a sweep that found it first stamped it, and listed it */
		if (cas_word(&p->s[b].state, 0, VL_LP_WORD(VL_LP_PENDING, res->tok)))
			res->b[res->n++] = b, got++;
		STEP();
	}
	if (got)
		__atomic_fetch_add(&h->out, got, __ATOMIC_RELAXED);
	return (int)got;
}

int vl_lp_fill(const struct vl_lp *p, struct vl_lp_res *res, uint32_t want)
{
	uint64_t top = __atomic_load_n(&p->h->top, __ATOMIC_ACQUIRE);
	int from_stack = 1;

	if (want > VL_LP_RES_MAX || res->n > VL_LP_RES_MAX)
		return -EINVAL;
	for (uint32_t tries = 0; res->n < want && tries < LP_TRIES; tries++) {
		int r;

		if (from_stack) {
			r = pop_once(p, res, want - res->n, &top);
			if (r == -ENOENT)
				from_stack = 0; /* empty: only then the mark rises (sparse) */
			continue;
		}
		r = claim_once(p, res, want - res->n);
		if (r == -ENOMEM)
			return -ENOMEM;
		/* the mark moved or what it claimed was swept: others may have given back */
		if (r <= 0) {
			top = __atomic_load_n(&p->h->top, __ATOMIC_ACQUIRE);
			from_stack = 1;
		}
	}
	return res->n >= want ? 0 : -EAGAIN;
}

int vl_lp_use(const struct vl_lp *p, uint32_t b, uint32_t tok, uint32_t file)
{
	int ok;

	if (b == 0 || b >= p->cap || file > VL_LP_ARG_MASK)
		return -EUCLEAN;
	ok = cas_word(&p->s[b].state, VL_LP_WORD(VL_LP_PENDING, tok),
		      VL_LP_WORD(VL_LP_USED, file));
	STEP();
	return ok ? 0 : -EUCLEAN;
}

/*
 * Push blk[0..n), each holding the word w[i] (PENDING of someone: the
 * caller owns it), onto the stack, in one compare-and-swap where no one
 * else changes the top meanwhile. Linked last first: each link is written
 * while its block is still ours (PENDING), and once a block is FREE its
 * link is not written again by us. Returns how many went; a block whose
 * word was not w[i] (not ours), or that a sweep stamped again while it
 * was FREE and unpushed (the sweep's now), is passed over. *left: how
 * many are still ours, as they were, in blk[0..*left) (given up: the
 * stack kept changing).
 */
static uint32_t push(const struct vl_lp *p, uint32_t *blk, uint32_t *w, uint32_t n,
		     uint32_t *left)
{
	struct vl_lp_hdr *h = p->h;
	uint64_t top = __atomic_load_n(&h->top, __ATOMIC_ACQUIRE);

	for (uint32_t tries = 0; n > 0 && tries < LP_TRIES; tries++) {
		uint32_t tag = TOP_TAG(top) + 1, st = stamp_of(tag), link = TOP_HEAD(top);
		uint32_t kept = 0;

		for (uint32_t i = n; i-- > 0;) {
			__atomic_store_n(&p->s[blk[i]].next, link, __ATOMIC_RELAXED);
			STEP();
			if (cas_word(&p->s[blk[i]].state, w[i], VL_LP_WORD(VL_LP_FREE, st)))
				link = blk[i], kept++;
			else
				blk[i] = 0; /* not ours */
			STEP();
		}
		if (kept && __atomic_compare_exchange_n(&h->top, &top, TOP(tag, link), 0,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			STEP();
			__atomic_fetch_sub(&h->out, kept, __ATOMIC_RELAXED);
			*left = 0;
			return kept;
		}
		/* taken back, those still as we left them, and tried again on the new top */
		kept = 0;
		for (uint32_t i = 0; i < n; i++) {
			if (blk[i] == 0)
				continue;
			if (cas_word(&p->s[blk[i]].state, VL_LP_WORD(VL_LP_FREE, st), w[i]))
				blk[kept] = blk[i], w[kept++] = w[i];
			STEP();
		}
		n = kept;
	}
	*left = n;
	return 0;
}

uint32_t vl_lp_give(const struct vl_lp *p, struct vl_lp_res *res, uint32_t keep)
{
	uint32_t w[VL_LP_RES_MAX], n, went, left;

	if (res->n > VL_LP_RES_MAX)
		return 0;
	if (res->n <= keep)
		return 0;
	n = res->n - keep;
	for (uint32_t i = 0; i < n; i++)
		w[i] = VL_LP_WORD(VL_LP_PENDING, res->tok);
	went = push(p, res->b + keep, w, n, &left);
	/* given up: kept, still ours, for the next give (else lost while we live) */
	res->n = keep + left;
	return went;
}

int vl_lp_unuse(const struct vl_lp *p, struct vl_lp_res *res, uint32_t b, uint32_t file)
{
	int ok;

	if (b == 0 || b >= p->cap || file > VL_LP_ARG_MASK || res->n > VL_LP_RES_MAX)
		return -EUCLEAN;
	ok = cas_word(&p->s[b].state, VL_LP_WORD(VL_LP_USED, file),
		      VL_LP_WORD(VL_LP_PENDING, res->tok));
	STEP();
	if (!ok)
		return -EUCLEAN;
	if (res->n == VL_LP_RES_MAX)
		vl_lp_give(p, res, VL_LP_RES_MAX / 2);
	res->b[res->n++] = b;
	return 0;
}

uint32_t vl_lp_repair(const struct vl_lp *p, uint32_t dead, uint32_t mine)
{
	uint32_t hwm = hwm_of(p), went = 0;
	struct vl_lp_res res = { .tok = mine, .n = 0 };

	for (uint32_t b = 1; b < hwm; b++) {
		uint32_t x = __atomic_load_n(&p->s[b].state, __ATOMIC_ACQUIRE);

		if (VL_LP_STATE(x) != VL_LP_PENDING || VL_LP_ARG(x) == (mine & VL_LP_ARG_MASK) ||
		    (dead != VL_LP_ANY_TOKEN && VL_LP_ARG(x) != (dead & VL_LP_ARG_MASK)))
			continue;
		/* ours first (see lvpool.h): then no other repairer writes its link */
		if (cas_word(&p->s[b].state, x, VL_LP_WORD(VL_LP_PENDING, mine)))
			res.b[res.n++] = b;
		STEP();
		if (res.n == VL_LP_RES_MAX)
			went += vl_lp_give(p, &res, 0);
		if (res.n == VL_LP_RES_MAX)
			break; /* the stack will not take them: the rest for another repair */
	}
	went += vl_lp_give(p, &res, 0);
	/* (still some: PENDING of mine, the caller's to give back: vl_lp_repair(p, mine, ...) when it is dead) */
	return went;
}

/* ---- the sweep ---------------------------------------------------------- */

/* The stack emptied, its tag moved by 2; returns the sweep's stamp, or 0 if it kept changing. */
static uint32_t sweep_begin(const struct vl_lp *p)
{
	uint64_t top = __atomic_load_n(&p->h->top, __ATOMIC_ACQUIRE);

	for (uint32_t tries = 0; tries < LP_TRIES; tries++) {
		/*
		 * By 2: a push stamps the tag it makes (tag read + 1), so no
		 * push, before or after, stamps tag + 2, which only this sweep
		 * writes: a giver that stamped its blocks before the sweep
		 * began cannot take back one the sweep stamped since.
		 */
		uint32_t tag = TOP_TAG(top) + 2;

		if (__atomic_compare_exchange_n(&p->h->top, &top, TOP(tag, 0), 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			STEP();
			return stamp_of(tag);
		}
	}
	return 0;
}

/* What the word x of block b should be, by the sweep's rules: x itself if it is to be left. */
static uint32_t sweep_judge(const struct vl_lp *p, const struct vl_lp_sweep_ops *ops,
			    uint32_t b, uint32_t x, uint32_t st, struct vl_lp_swept *o)
{
	uint32_t file = 0, free_word = VL_LP_WORD(VL_LP_FREE, st);
	int r;

	switch (VL_LP_STATE(x)) {
	case VL_LP_PENDING:
		if (ops->alive && ops->alive(ops->ctx, VL_LP_ARG(x)) == 0)
			return o->dead++, free_word;
		return x;
	case VL_LP_FREE:
		/* pushed since the sweep began: on the new stack (or, lost since, the next sweep's) */
		if (stamped_since(p, VL_LP_ARG(x), st))
			return x;
		r = ops->owner ? ops->owner(ops->ctx, b, &file) : 0;
		if (r > 0 && file <= VL_LP_ARG_MASK)
			return o->fixed++, VL_LP_WORD(VL_LP_USED, file);
		return free_word;
	default:
		r = ops->owner ? ops->owner(ops->ctx, b, &file) : -1;
		if (r == 0)
			return o->leaked++, free_word;
		if (r > 0 && file <= VL_LP_ARG_MASK) {
			if (x != VL_LP_WORD(VL_LP_USED, file))
				o->fixed++;
			return VL_LP_WORD(VL_LP_USED, file);
		}
		if (VL_LP_STATE(x) != VL_LP_USED)
			o->unknown++;
		return x;
	}
}

/* The chain first..last (linked, FREE, the sweep's) pushed on whatever the stack holds now. */
static int sweep_push(const struct vl_lp *p, uint32_t first, uint32_t last)
{
	uint64_t top = __atomic_load_n(&p->h->top, __ATOMIC_ACQUIRE);

	for (uint32_t tries = 0; tries < LP_TRIES; tries++) {
		__atomic_store_n(&p->s[last].next, TOP_HEAD(top), __ATOMIC_RELAXED);
		STEP();
		if (__atomic_compare_exchange_n(&p->h->top, &top, TOP(TOP_TAG(top) + 1, first), 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			STEP();
			return 0;
		}
	}
	/* (its blocks stay FREE on no list, stamped before the next sweep's: that one lists them) */
	return -EAGAIN;
}

int vl_lp_sweep(const struct vl_lp *p, const struct vl_lp_sweep_ops *ops,
		struct vl_lp_swept *out)
{
	static const struct vl_lp_sweep_ops none;
	struct vl_lp_swept o = { 0 };
	uint32_t st, hwm, first = 0, last = 0, damaged;
	int err = 0;

	if (ops == NULL)
		ops = &none;
	st = sweep_begin(p);
	if (st == 0)
		return -EAGAIN;
	damaged = __atomic_exchange_n(&p->h->damaged, 0, __ATOMIC_RELAXED);
	STEP();
	hwm = hwm_of(p);
	/* a mark scribbled past the end: back to it (one scribbled down shows as it rises again) */
	if (__atomic_load_n(&p->h->hwm, __ATOMIC_RELAXED) > p->cap) {
		__atomic_store_n(&p->h->hwm, p->cap, __ATOMIC_RELAXED);
		STEP();
	}
	/* from the top down, each put first: the stack hands out the lowest first */
	for (uint32_t b = hwm; b-- > 1;) {
		uint32_t x = __atomic_load_n(&p->s[b].state, __ATOMIC_ACQUIRE);
		uint32_t want = sweep_judge(p, ops, b, x, st, &o);

		if (want == x && VL_LP_STATE(x) != VL_LP_FREE)
			continue;
		if (want == x && VL_LP_ARG(x) != st)
			continue; /* a FREE left alone: on the new stack */
		if (!cas_word(&p->s[b].state, x, want))
			continue; /* changed meanwhile (taken, given back): theirs */
		STEP();
		if (VL_LP_STATE(want) != VL_LP_FREE)
			continue;
		/* FREE with our stamp: ours alone, no one else writes its link now */
		__atomic_store_n(&p->s[b].next, first, __ATOMIC_RELAXED);
		STEP();
		if (first == 0)
			last = b;
		first = b;
		o.listed++;
	}
	if (first != 0)
		err = sweep_push(p, first, last);
	/* a statistic: exact if no one took or gave back meanwhile */
	__atomic_store_n(&p->h->out, hwm - 1 - o.listed, __ATOMIC_RELAXED);
	STEP();
	if (out != NULL)
		*out = o;
	if (err == 0 && (o.unknown || damaged))
		err = -EUCLEAN;
	return err;
}
