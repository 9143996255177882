/*
 * pool.c - allocators, LRU, file table and counters (see pool.h); their
 * rebuild after a lock holder died is rebuild.c.
 */
#include "pool.h"

#include "fault.h"
#include "tomb.h"

#include <errno.h>
#include <string.h>

/*
 * Slots are handed out lowest first (the free list is refilled only by
 * frees; the high-water mark grows only when it is empty), so the pages
 * of the sparse region file that are ever touched follow the peak use.
 */
uint32_t vl_node_alloc(const struct vl_region *r, uint32_t file)
{
	struct vl_counters *c = vl_counters(r);
	uint32_t n = c->node_free;
	struct vl_node *x;

	if (n != VL_NIL && n < r->node_cap && vl_node_state(vl_node_at(r, n)) == VL_NODE_FREE) {
		c->node_free = vl_node_at(r, n)->next;
	} else if (c->node_hwm != VL_NIL && c->node_hwm < r->node_cap) {
		/* (a mark scribbled to 0 would hand out the sentinel: full until a rebuild) */
		c->node_free = VL_NIL; /* a corrupt head is dropped, not followed */
		n = c->node_hwm++;
	} else {
		return VL_NIL;
	}
	VL_STEP("node_alloc: taken from the free list");
	x = vl_node_at(r, n);
	memset(x, 0, sizeof(*x));
	VL_STEP("node_alloc: zeroed");
	x->meta = vl_meta(file, VL_NODE_PENDING, 0);
	vl_node_seal(r, x);
	c->nodes_used++;
	return n;
}

void vl_node_free(const struct vl_region *r, uint32_t n)
{
	struct vl_counters *c = vl_counters(r);
	struct vl_node *x = vl_node_at(r, n);

	if (n == VL_NIL || n >= r->node_cap || vl_node_state(x) == VL_NODE_FREE)
		return;
	vl_lru_unlink(r, n);
	VL_STEP("node_free: unlinked");
	memset(x, 0, sizeof(*x));
	vl_set_next(r, n, c->node_free);
	c->node_free = n;
	c->nodes_used--;
}

int vl_lru_linked(const struct vl_region *r, uint32_t n)
{
	return n != VL_NIL && (vl_node_at(r, n)->prev != VL_NIL || vl_counters(r)->lru_head == n);
}

/*
 * The links of the LRU come from shared memory: a scribbled prev or next
 * (or end of the list) names slot 0 to reads, and the setters drop the
 * writes through it. Only a real node n is linked or unlinked: a head
 * scribbled to a bad index must not make us empty the list through it.
 */
void vl_lru_unlink(const struct vl_region *r, uint32_t n)
{
	struct vl_counters *c = vl_counters(r);
	struct vl_node *x = vl_node_at(r, n);

	if (vl_node_w(r, n) == NULL || !vl_lru_linked(r, n))
		return;
	if (x->prev != VL_NIL)
		vl_set_next(r, x->prev, x->next);
	else
		c->lru_head = x->next;
	VL_STEP("lru_unlink: half unlinked");
	if (x->next != VL_NIL)
		vl_set_prev(r, x->next, x->prev);
	else
		c->lru_tail = x->prev;
	vl_set_prev(r, n, VL_NIL);
	vl_set_next(r, n, VL_NIL);
}

void vl_lru_insert_after(const struct vl_region *r, uint32_t after, uint32_t n)
{
	struct vl_counters *c = vl_counters(r);
	uint32_t next;

	if (vl_node_w(r, n) == NULL)
		return;
	vl_lru_unlink(r, n);
	if (after == VL_NIL) { /* at the head: the oldest */
		vl_set_next(r, n, c->lru_head);
		if (c->lru_head != VL_NIL)
			vl_set_prev(r, c->lru_head, n);
		else
			c->lru_tail = n;
		c->lru_head = n;
		return;
	}
	next = vl_node_at(r, after)->next;
	vl_set_prev(r, n, after);
	vl_set_next(r, n, next);
	VL_STEP("lru_insert: half linked");
	if (next != VL_NIL)
		vl_set_prev(r, next, n);
	else
		c->lru_tail = n;
	vl_set_next(r, after, n);
}

void vl_lru_append(const struct vl_region *r, uint32_t n)
{
	vl_lru_unlink(r, n);
	vl_lru_insert_after(r, vl_counters(r)->lru_tail, n);
}

/*
 * A change of one file's count, applied to the region's: the file's count
 * before and after lies in [0, 2^63) (its ranges do not overlap), so the
 * change, read as signed, is exact.
 */
static void add_change(struct vl_u128 *a, int64_t d)
{
	if (d < 0)
		vl_u128_sub(a, (uint64_t)0 - (uint64_t)d);
	else
		vl_u128_add(a, (uint64_t)d);
}

static int wants_lru(const struct vl_region *r, uint32_t n)
{
	const struct vl_node *x = vl_node_at(r, n);

	return vl_node_state(x) == VL_NODE_LIVE && !vl_node_purged(x);
}

void vl_commit(const struct vl_region *r, uint32_t fi, const struct vl_change *c,
	       uint32_t spare)
{
	struct vl_counters *k = vl_counters(r);
	struct vl_file *f = vl_file_at(r, fi);
	uint32_t n, next, steps = 0;

	for (n = c->freed; n != VL_NIL && steps++ < r->node_cap; n = next) {
		next = vl_node_at(r, n)->left;
		vl_node_free(r, n);
	}
	if (!vl_spare_used(c, spare))
		vl_node_free(r, spare);
	VL_STEP("commit: nodes freed");

	if (c->keep != VL_NIL) {
		struct vl_node *x = vl_node_w(r, c->keep);

		if (c->keep_aged && x != NULL) {
			x->seq = ++k->seq;
			vl_node_seal(r, x);
		}
		if (!wants_lru(r, c->keep))
			vl_lru_unlink(r, c->keep);
		else if (c->keep_aged || !vl_lru_linked(r, c->keep))
			vl_lru_append(r, c->keep);
	}
	if (c->split != VL_NIL && wants_lru(r, c->split)) {
		/* the two halves of a split range share its age: keep them side by side */
		if (vl_lru_linked(r, c->split_of))
			vl_lru_insert_after(r, c->split_of, c->split);
		else
			vl_lru_append(r, c->split);
	}

	VL_STEP("commit: lru done");
	add_change(&k->volatile_bytes, c->d_vbytes);
	add_change(&k->purged_bytes, c->d_pbytes);
	VL_STEP("commit: counters half done");
	k->ranges += (uint32_t)c->d_ranges;
	k->ranges_purged += (uint32_t)c->d_purged;
	f->h.nranges += (uint32_t)c->d_ranges;
	f->h.npurged += (uint32_t)c->d_purged;
	f->h.vbytes += (uint64_t)c->d_vbytes;
	f->h.pbytes += (uint64_t)c->d_pbytes;
}

/* ---- file table: open addressing, linear probing, backward-shift delete ---- */

static uint32_t hash_of(const struct vl_region *r, uint64_t dev, uint64_t ino)
{
	uint64_t h = (ino ^ (dev * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;

	return (uint32_t)(h >> 32) & (r->hash_cap - 1);
}

/* Equal to id, read while a publisher may be writing it (vl_file_probe). */
static int ident_seen(const struct vl_ident *a, const struct vl_ident *id)
{
	return __atomic_load_n(&a->dev, __ATOMIC_RELAXED) == id->dev &&
	       __atomic_load_n(&a->ino, __ATOMIC_RELAXED) == id->ino &&
	       __atomic_load_n(&a->btime_sec, __ATOMIC_RELAXED) == id->btime_sec &&
	       __atomic_load_n(&a->btime_nsec, __ATOMIC_RELAXED) == id->btime_nsec &&
	       __atomic_load_n(&a->igen, __ATOMIC_RELAXED) == id->igen;
}

static void ident_store(struct vl_ident *a, const struct vl_ident *id)
{
	__atomic_store_n(&a->dev, id->dev, __ATOMIC_RELAXED);
	__atomic_store_n(&a->ino, id->ino, __ATOMIC_RELAXED);
	__atomic_store_n(&a->btime_sec, id->btime_sec, __ATOMIC_RELAXED);
	__atomic_store_n(&a->btime_nsec, id->btime_nsec, __ATOMIC_RELAXED);
	__atomic_store_n(&a->igen, id->igen, __ATOMIC_RELAXED);
}

int vl_file_lookup(const struct vl_region *r, const struct vl_ident *id, uint32_t *fi)
{
	uint32_t i = hash_of(r, id->dev, id->ino), steps;

	for (steps = 0; steps < r->hash_cap; steps++, i = (i + 1) & (r->hash_cap - 1)) {
		uint32_t s = r->hash[i];
		struct vl_file *f;

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
 * and the caller checks it under the file's lock or asks again locked.
 */
uint32_t vl_file_probe(const struct vl_region *r, const struct vl_ident *id)
{
	uint32_t mask = r->hash_cap - 1, i = hash_of(r, id->dev, id->ino), steps;

	for (steps = 0; steps < r->hash_cap; steps++, i = (i + 1) & mask) {
		uint32_t s = __atomic_load_n(&r->hash[i], __ATOMIC_ACQUIRE);
		const struct vl_file *f;

		if (s == VL_NIL || s >= r->file_cap)
			return VL_NIL;
		f = vl_file_at(r, s);
		if (__atomic_load_n(&f->h.state, __ATOMIC_ACQUIRE) == VL_FILE_LIVE &&
		    ident_seen(&f->h.ident, id))
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
	uint32_t i = hash_of(r, f->h.ident.dev, f->h.ident.ino), steps;

	for (steps = 0; steps < r->hash_cap; steps++, i = (i + 1) & (r->hash_cap - 1)) {
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

	i = hash_of(r, f->h.ident.dev, f->h.ident.ino);
	for (steps = 0; r->hash[i] != fi; i = (i + 1) & mask)
		if (r->hash[i] == VL_NIL || ++steps >= r->hash_cap)
			return;
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
		uint32_t home = hash_of(r, g->h.ident.dev, g->h.ident.ino);

		if (((j - home) & mask) >= ((j - i) & mask)) {
			hash_set(r, i, r->hash[j]);
			hash_set(r, j, VL_NIL);
			i = j;
		}
	}
}

uint32_t vl_file_take(const struct vl_region *r, int *fresh)
{
	struct vl_counters *c = vl_counters(r);
	uint32_t fi = c->file_free;

	*fresh = 0;
	if (fi != VL_NIL && fi < r->file_cap && vl_file_at(r, fi)->h.state == VL_FILE_FREE) {
		c->file_free = vl_file_at(r, fi)->h.next_free;
	} else if (c->file_hwm != VL_NIL && c->file_hwm < r->file_cap &&
		   c->files_used * 2 < r->hash_cap) {
		c->file_free = VL_NIL;
		fi = c->file_hwm++;
		*fresh = 1;
	} else {
		return VL_NIL;
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
	ident_store(&f->h.ident, id);
	/*
	 * A file whose record was evicted with purged ranges (evict.c): the
	 * flag is set before the record is LIVE, so no UNMARK can find the
	 * record without it, and say 0 over bytes the evicted ranges covered.
	 */
	if (vl_tomb_has(r->tomb, id))
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
 * The kept spare is taken by its file's lock holder, and may be stolen by
 * a MARK of another file when the region is full (vl_spare_steal, region
 * lock held): the field is exchanged atomically, so exactly one of them
 * gets the node.
 */
/* Is n what a kept spare of file fi is: a sound PENDING node of fi? */
static int spare_sound(const struct vl_region *r, uint32_t n, uint32_t fi)
{
	const struct vl_node *x;

	if (n == VL_NIL || n >= r->node_cap)
		return 0;
	x = vl_node_at(r, n);
	return vl_node_state(x) == VL_NODE_PENDING && vl_node_file(x) == fi &&
	       x->check == vl_node_sum(r, x);
}

uint32_t vl_spare_take(const struct vl_region *r, uint32_t fi)
{
	uint32_t n = __atomic_exchange_n(&vl_file_at(r, fi)->h.spare, VL_NIL, __ATOMIC_ACQ_REL);

	/* a scribbled index must not hand out a node in use */
	return spare_sound(r, n, fi) ? n : VL_NIL;
}

void vl_spare_keep(const struct vl_region *r, uint32_t fi, uint32_t n)
{
	__atomic_store_n(&vl_file_at(r, fi)->h.spare, n, __ATOMIC_RELEASE);
}

int vl_spare_used(const struct vl_change *c, uint32_t spare)
{
	return spare != VL_NIL && ((c->keep_new && c->keep == spare) || c->split == spare);
}

uint32_t vl_spare_steal(const struct vl_region *r, uint32_t to)
{
	uint32_t hwm = vl_file_hwm(r);

	for (uint32_t fi = 1; fi < hwm; fi++) {
		struct vl_file *f = vl_file_at(r, fi);
		uint32_t n = __atomic_load_n(&f->h.spare, __ATOMIC_ACQUIRE);
		struct vl_node *x;

		if (fi == to || !spare_sound(r, n, fi) ||
		    !__atomic_compare_exchange_n(&f->h.spare, &n, VL_NIL, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			continue;
		/* a kept spare is only ever a PENDING node of its file: still so */
		x = vl_node_at(r, n);
		VL_STEP("spare_steal: taken, not given");
		x->meta = vl_meta(to, VL_NODE_PENDING, 0);
		vl_node_seal(r, x);
		return n;
	}
	return VL_NIL;
}

void vl_file_release(const struct vl_region *r, uint32_t fi)
{
	struct vl_counters *c = vl_counters(r);
	struct vl_file *f = vl_file_at(r, fi);

	if (fi == VL_NIL || fi >= r->file_cap || f->h.state == VL_FILE_FREE)
		return;
	hash_remove(r, fi);
	VL_STEP("file_release: out of the table");
	vl_node_free(r, vl_spare_take(r, fi));
	__atomic_store_n(&f->h.state, VL_FILE_FREE, __ATOMIC_RELEASE);
	VL_STEP("file_release: free, gen not bumped");
	f->h.gen++; /* anyone who looked this slot up before must look again */
	f->h.root = VL_NIL;
	f->h.next_free = c->file_free;
	vl_file_seal(r, f);
	c->file_free = fi;
	c->files_used--;
}
