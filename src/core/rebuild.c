/* SPDX-License-Identifier: MIT */
/*
 * rebuild.c - the region's lists and counters rebuilt, and a file's tree
 * repaired, after a lock holder died (see pool.h): from the checksummed
 * records and nodes, trusting nothing else.
 */
#include "pool.h"

#include "fault.h"
#include "rtree.h"
#include "tomb.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
static int all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		if (*b++)
			return 0;
	return 1;
}

/* All zeros but, perhaps, the lock: a slot taken fresh and never published. */
static int never_published(const struct vl_file *f)
{
	return all_zero(&f->h.ident, sizeof(*f) - offsetof(struct vl_file, h.ident));
}

/*
 * A record whose sum fails only because a change of its state or
 * generation was cut off before the new sum was written: accept the new
 * values and seal them. Anything else stays unreadable.
 */
static int torn_change(const struct vl_region *r, struct vl_file *f)
{
	uint32_t state = f->h.state, gen = f->h.gen;

	if (state != VL_FILE_FREE && state != VL_FILE_LIVE)
		return 0;
	for (uint32_t s = VL_FILE_FREE; s <= VL_FILE_LIVE; s++) {
		for (uint32_t g = gen - 1; g != gen + 1; g++) {
			f->h.state = s;
			f->h.gen = g;
			if (vl_file_ok(r, f)) {
				f->h.state = state;
				/* a release cut before its gen++: do it, so the slot's next
				 * file is never taken for the dead one */
				f->h.gen = state == VL_FILE_FREE && s == VL_FILE_LIVE && g == gen
						   ? gen + 1
						   : gen;
				vl_file_seal(r, f);
				return 1;
			}
		}
	}
	f->h.state = state;
	f->h.gen = gen;
	return 0;
}

/* Merge sort of the LRU chain by age, oldest first; no memory needed. */
static uint32_t lru_sort(const struct vl_region *r, uint32_t head, uint32_t now)
{
	uint32_t insize = 1, steps = 0;

	if (head == VL_NIL)
		return head;
	for (;;) {
		uint32_t p = head, tail = VL_NIL, merges = 0;

		head = VL_NIL;
		while (p != VL_NIL) {
			uint32_t q = p, psize = 0, qsize = insize, e;

			merges++;
			while (psize < insize && q != VL_NIL) {
				psize++;
				q = vl_node_at(r, q)->next;
			}
			while (psize > 0 || (qsize > 0 && q != VL_NIL)) {
				/* the older goes first; ties (one tick) keep tree order */
				if (psize == 0 || (qsize > 0 && q != VL_NIL &&
						   vl_age_older(vl_node_at(r, q)->seq,
								vl_node_at(r, p)->seq, now))) {
					e = q;
					q = vl_node_at(r, q)->next;
					qsize--;
				} else {
					e = p;
					p = vl_node_at(r, p)->next;
					psize--;
				}
				if (tail != VL_NIL)
					vl_set_next(r, tail, e);
				else
					head = e;
				tail = e;
			}
			p = q;
		}
		vl_set_next(r, tail, VL_NIL);
		if (merges <= 1 || ++steps > 40)
			return head;
		insize *= 2;
	}
}

void vl_pool_rebuild(const struct vl_region *r)
{
	struct vl_counters *c = vl_counters(r);
	uint32_t i;

	VL_ASSERT_HELD(r, &r->hdr->lock);

	/* raised past any record a mark lowered by a stray write left above it (regress-rebuild-hwm-lowered) */
	c->file_hwm = vl_files_used_end(r);
	/*
	 * files: table and free list again from the records. Slots at the top
	 * that were never published (a create cut between raising the mark and
	 * publishing, or a scribbled mark) go back above the mark, so they are
	 * handed out as new, lock initialisation included.
	 */
	while (c->file_hwm > 1 && never_published(vl_file_at(r, c->file_hwm - 1)))
		c->file_hwm--;
	memset(r->hash, 0, (size_t)r->hash_cap * sizeof(uint32_t));
	c->file_free = VL_NIL;
	c->files_used = 0;
	for (i = c->file_hwm - 1; i >= 1; i--) {
		struct vl_file *f = vl_file_at(r, i);

		if ((!vl_file_ok(r, f) && !torn_change(r, f)) ||
		    (f->h.state != VL_FILE_FREE && f->h.state != VL_FILE_LIVE)) {
			/*
			 * A record we cannot read: its identity is not to be trusted,
			 * so it is neither found nor freed for reuse while its ranges
			 * may still name it. Purges skip files that fail their sum.
			 * A state that is neither free nor live is as unreadable as a
			 * bad sum: in the table, it would make every lookup that
			 * probes past it fail (vl_file_lookup says -EUCLEAN there).
			 */
			c->files_used++;
			continue;
		}
		if (f->h.state == VL_FILE_FREE) {
			f->h.next_free = c->file_free;
			c->file_free = i;
			continue;
		}
		c->files_used++;
		vl_file_hash_insert(r, i);
	}
}

/* fi's unpurged ranges, in tree order, chained through next then sorted by age */
static void lru_rebuild(const struct vl_region *r, uint32_t fi, uint32_t now)
{
	struct vl_file *f = vl_file_at(r, fi);
	uint32_t chain = VL_NIL, prev = VL_NIL, last = VL_NIL, steps = 0;

	for (uint32_t x = vl_rb_last(r, f->h.root); x != VL_NIL && steps++ < r->node_cap;
	     x = vl_rb_prev(r, x)) {
		vl_set_prev(r, x, VL_NIL);
		if (vl_node_purged(vl_node_at(r, x)))
			continue;
		vl_set_next(r, x, chain);
		chain = x;
	}
	chain = lru_sort(r, chain, now);
	f->h.lru_head = chain;
	for (uint32_t x = chain; x != VL_NIL; x = vl_node_at(r, x)->next) {
		vl_set_prev(r, x, prev);
		prev = last = x;
	}
	f->h.lru_tail = last;
	vl_lru_publish(r, fi);
}

/*
 * A range x of f the repair cannot put back: its extent unreadable (its
 * start at or past its end: a writer killed between the two, or a stray
 * write), or the tree refused it. If it says purged (a LIVE node's purged
 * bit, once set, is never cleared: one that does not say so was never
 * punched), its punched bytes are now in no range: every UNMARK of the
 * file says 1 from now on, as one of a file the tombstones hold does
 * (VL_FF_TOMB), never 0 over them (fuzz-region's
 * regress-repair-drops-unreadable).
 */
static void lost_range(struct vl_file *f, const struct vl_node *x)
{
	if (vl_node_purged(x))
		__atomic_fetch_or(&f->h.flags, VL_FF_TOMB, __ATOMIC_RELAXED);
}

/*
 * A holder of file fi's lock died mid-change. Rebuild its tree from the
 * nodes that name it: PENDING ones were that holder's spares (a live
 * process only holds PENDING nodes of a file while holding its lock;
 * the file's IDLE ones are left as they are), LIVE
 * ones are merged back, overlaps joined, purged if any part was. Every
 * intermediate state of a change is a set of LIVE nodes whose union is
 * what the file had before or after it, so this loses no volatile byte
 * and invents none. Its age order is then sorted anew from the ranges'
 * ages, and the region's totals corrected by what the counts became
 * (DESIGN 11 says what a death inside a commit leaves them off by).
 */
void vl_file_repair(const struct vl_region *r, uint32_t fi, uint32_t now)
{
	struct vl_file *f = vl_file_at(r, fi);
	struct vl_change sum;
	uint32_t i, hwm, nranges, npurged;
	uint64_t vbytes, pbytes;

	if (fi == VL_NIL || fi >= r->file_cap)
		return; /* slot 0 reads as no file; nothing names it but a scribble */
	VL_ASSERT_HELD(r, &f->h.lock);
	VL_ASSERT_HELD(r, &r->hdr->lock);
	memset(&sum, 0, sizeof(sum));
	/* what the counts said, scribbled maybe (2^63 has no negative in int64_t) */
	nranges = f->h.nranges;
	npurged = f->h.npurged;
	vbytes = f->h.vbytes;
	pbytes = f->h.pbytes;
	f->h.root = f->h.lru_head = f->h.lru_tail = VL_NIL;
	/* its chunk stays: a hint, each node taken by compare-and-swap (pool.c) */
	f->h.nranges = f->h.npurged = 0;
	f->h.vbytes = f->h.pbytes = 0;
	hwm = vl_nodes_used_end(r);
	for (i = 1; i < hwm; i++) {
		struct vl_node *x = vl_node_at(r, i);
		struct vl_change ch;

		/* one read: a FREE node's meta is the free list's (its stamp), read once */
		uint32_t m = __atomic_load_n(&x->meta, __ATOMIC_ACQUIRE);
		unsigned st = (m & VL_META_STATE_MASK) >> VL_META_STATE_SHIFT;

		if (st == VL_NODE_FREE || st == VL_NODE_IDLE || (m & VL_META_FILE_MASK) != fi)
			continue;
		if (st == VL_NODE_PENDING || f->h.state == VL_FILE_FREE || x->start >= x->end) {
			if (st != VL_NODE_PENDING && f->h.state != VL_FILE_FREE)
				lost_range(f, x);
			vl_node_free(r, i);
			continue;
		}
		if (!vl_node_ok(r, x)) {
			/*
			 * Cut off between writing its fields and its sum. Its extent is
			 * the old one or the new one at each end, all of it volatile
			 * before or after the change; whether it was purged we cannot
			 * tell, so it is taken as purged: UNMARK then says 1 over
			 * bytes that may be intact, never 0 over zeros.
			 */
			x->meta |= VL_META_PURGED;
			vl_node_seal(r, x);
		}
		if (!vl_node_purged(x) && x->seq == 0) {
			/*
			 * Put in a tree by a change whose commit, which gives it its
			 * age, never came: it takes the newest now. Age 0 says "none"
			 * (vl_file_hdr.oldest): at the head of the age order it would
			 * hide the file's ranges from every purger.
			 */
			x->seq = vl_age_stamp(now);
			vl_node_seal(r, x);
		}
		vl_set_left(r, i, VL_NIL);
		vl_set_right(r, i, VL_NIL);
		vl_set_parent(r, i, VL_NIL);
		vl_set_prev(r, i, VL_NIL);
		vl_set_next(r, i, VL_NIL);
		VL_STEP("repair_file: a node taken back");
		if (vl_ranges_absorb(r, &f->h.root, fi, i, &ch) != 0) {
			lost_range(f, x);
			vl_node_free(r, i);
			continue;
		}
		for (uint32_t n = ch.freed, steps = 0; n != VL_NIL && steps++ < r->node_cap;) {
			uint32_t next = vl_node_at(r, n)->left;

			vl_node_free(r, n);
			n = next;
		}
		f->h.nranges += (uint32_t)ch.d_ranges;
		f->h.npurged += (uint32_t)ch.d_purged;
		f->h.vbytes += (uint64_t)ch.d_vbytes;
		f->h.pbytes += (uint64_t)ch.d_pbytes;
	}
	if (f->h.state == VL_FILE_FREE)
		vl_chunk_let_go(r, fi);
	lru_rebuild(r, fi, now);
	/* the change, modulo 2^64 (2^32), as the totals' adds and subtracts take it */
	sum.d_ranges = (int32_t)(f->h.nranges - nranges);
	sum.d_purged = (int32_t)(f->h.npurged - npurged);
	sum.d_vbytes = (int64_t)(f->h.vbytes - vbytes);
	sum.d_pbytes = (int64_t)(f->h.pbytes - pbytes);
	vl_totals_add(r, &sum);
}
