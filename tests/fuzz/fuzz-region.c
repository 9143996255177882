/* SPDX-License-Identifier: MIT */
/*
 * fuzz-region.c - libFuzzer target: a region file that this process did
 * not write, through every check and repair the runtime runs on it.
 *
 * DESIGN 18: a region whose contents fail validation makes MARK and
 * UNMARK fail cleanly and never crashes the host. So whatever the bytes,
 * nothing here may crash, read or write outside the region (ASan: the
 * buffer is exactly the region's size), invoke undefined behaviour
 * (UBSan), or loop without bound (libFuzzer's -timeout).
 *
 * Input: {flags, nops, nops * {op, a, b, c}, payload}.
 *
 *   flags bit 0  raw: the payload is the region file, every byte of it;
 *                else the payload patches a valid region of 16 ranges and
 *                4 files made by the core (three files with ranges, some
 *                purged, spares, a free node list, a released file), as records
 *                {offset (2 bytes, little-endian; from the tombstones on,
 *                past them: the file records, the file table and the nodes
 *                follow the header), length, bytes}, so the
 *                fuzzer starts past the magic and the sums
 *   flags bit 1  after patching, seal again every sum (geometry, files,
 *                nodes): a scribble that passes the integrity checks
 *   flags bit 2  first rebuild the file table (the region lock's holder died)
 *   flags bit 3  first repair every file (their lock holders died)
 *
 * Attach is what region.c does: vl_geometry_check against the file size,
 * then vl_region_bind. The operations are those of src/ops.c and
 * src/purge.c on the bound region, in the same order of calls: the file
 * table lookup (and create), MARK and UNMARK with their spares (a kept
 * one, a new one, a sweep, another file's) and commits, the purge of the
 * oldest range (the head of the file whose published age is the oldest)
 * with the purger's checks, dropping a file's ranges and the release of
 * its empty record, walks that check every tree, vl_pool_rebuild,
 * vl_file_repair. (The locks in the region are not fuzzed: nothing here
 * locks.)
 *
 * Besides surviving, it checks what the code promises about bad input:
 *   - an operation of core/ranges.c that fails (-EUCLEAN, -ENOMEM) has
 *     changed no byte of the region (but its spare);
 *   - a purge punches exactly the extent of the range it flagged;
 *   - DESIGN 4 and 18, byte by byte (struct track): in a region the input
 *     did not write (the patched mode without a reseal: a region with
 *     scribbles in it, or none), every punch, a purge's or a MARK's,
 *     lies inside bytes marked in that file since they were last
 *     unmarked, or, once the input scribbled, inside bytes ever marked
 *     in that file (what DESIGN 18 promises of a stray write); and an
 *     UNMARK over bytes punched since their MARK says 1, or fails, never
 *     0 (the UNMARK of a file with no record too: tombstones are not
 *     played here, and none is made for a record a scribble lost). But
 *     for the scribbles DESIGN 18 lists as not defended (scribble_kind);
 *   - vl_pool_rebuild writes no node, and after it every sound file
 *     record is found by its identity;
 *   - after vl_file_repair of a live record: a tree that passes
 *     vl_rb_check, with as many ranges as its counter says, an age order
 *     of exactly its unpurged ranges, oldest first, with sound back
 *     links, `oldest` its head's age, and no spares;
 *   - a spare handed out is a PENDING node of the file that asked;
 *   - after every operation, slot 0 of the nodes and of the files is as
 *     the input left it (all zeros, unless the input scribbled it): every
 *     bad index reads slot 0, so no write may ever land there;
 *   - garbage is never a loop (DESIGN 10), counted in steps, not time
 *     (the core is built with VL_COUNT_STEPS: every read of a node, a file
 *     record or a slot of the file table is a step): every call of the
 *     core takes VL_WALK_BOUND steps at most, 256 x (ranges + files +
 *     table slots) of the region; and a whole purge pass, as purge.c
 *     makes it (pick, check and mend under the lock, skip, flag), alone
 *     in the region, makes node_cap + 128 rounds at most, each a
 *     call of that bound, and never chooses a file whose check passed
 *     with an age other than the one it chose it by.
 */
#include "model.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define F_RAW 0x1
#define F_RESEAL 0x2
#define F_REBUILD 0x4
#define F_REPAIR 0x8
#define NOPS_MAX 64

void model_fail(const char *msg)
{
	fprintf(stderr, "fuzz-region: %s\n", msg);
	abort();
}

#define fail_if(cond, ...)                                                        \
	do {                                                                      \
		if (cond)                                                         \
			model_failf(__VA_ARGS__);                                 \
	} while (0)

/*
 * FUZZ_REGION_TRACE=1 in the environment: each operation and each byte the
 * input changed, on stderr, to read a finding by (tests/fuzz/fuzz-region FILE).
 */
static int tracing = -1;

static void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void trace(const char *fmt, ...)
{
	va_list ap;

	if (tracing < 0)
		tracing = getenv("FUZZ_REGION_TRACE") != NULL;
	if (!tracing)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* ---- steps ------------------------------------------------------------------ */

static const char *steps_what;

/* Count the steps of one call of the core from here. */
static void steps_begin(const char *what)
{
	steps_what = what;
	vl_walk_steps = 0;
}

/* ... to here: within its bound. */
static void steps_end(const struct vl_region *r)
{
	fail_if(vl_walk_steps > VL_WALK_BOUND(r),
		"%s took %lu steps, over its bound %llu (ranges %u, files %u, table %u)",
		steps_what, vl_walk_steps, (unsigned long long)VL_WALK_BOUND(r), r->node_cap,
		r->file_cap, r->hash_cap);
	vl_walk_steps = 0;
}

/* the value of the call e of the core, its steps counted and held to the bound */
#define COUNTED(r, e)                                     \
	__extension__({                                   \
		__typeof__(e) counted_;                   \
		steps_begin(#e);                          \
		counted_ = (e);                           \
		steps_end(r);                             \
		counted_;                                 \
	})
/* the same for a call with no value */
#define COUNTED_V(r, e)            \
	do {                       \
		steps_begin(#e);   \
		e;                 \
		steps_end(r);      \
	} while (0)

/* ---- the base region of the patched mode ---------------------------------- */

static void *base_image;
static size_t base_size;
static struct vl_geometry base_geo;

/* ---- the oracle: what the program's calls marked, and what was punched ------ */

/* The offsets the operations reach (run_op: s < 160, e < 208); the base's are below 128. */
#define SPACE 208
/* the base's files and one new identity a MARK at most */
#define TRACKS (8 + NOPS_MAX)

/* One file, by identity (vl_ident_same): its bytes, as its program's calls left them. */
struct track {
	struct vl_ident id;
	uint8_t ever[SPACE];    /* marked once (by the base, or the input) */
	uint8_t marked[SPACE];  /* marked since they were last unmarked */
	uint8_t punched[SPACE]; /* punched since they were last unmarked */
};

/*
 * What the input wrote over the base image (changed bytes only), by the
 * kinds DESIGN 18 lists as not defended in format 9: each kind is excused
 * from the assertion its expected failure shows broken, and no other.
 */
#define SCR_ANY 0x1    /* any byte: a punch need only lie in bytes ever marked */
#define SCR_LINK 0x2   /* a tree link: a node's left, right or parent (scribbled-link.sh),
			  a record's root naming a node or none (root_kind) */
#define SCR_META 0x4   /* a node's meta: its file, state, purged bit (scribbled-meta.sh) */
#define SCR_COUNT 0x8  /* a record's count of ranges (scribbled-count.sh) */
#define SCR_RECORD 0x10 /* a record's summed fields, its identity (scribbled-record.sh) */
/*
 * a node's start or end: a sound tree answers EUCLEAN, but a repair keeps
 * a node that fails its sum as purged with the extent it reads (DESIGN
 * 11), so the purged bytes of its true extent are no longer its: their
 * UNMARK says 0 (DESIGN 18, not defended; judged only before a repair)
 */
#define SCR_EXTENT 0x20
/* an UNMARK may say 0 over punched bytes: all four XFAIL tests show it */
#define SCR_UNMARK_EXCUSED (SCR_LINK | SCR_META | SCR_COUNT | SCR_RECORD)
/* excused only once a repair has run (struct fz's repaired) */
#define SCR_UNMARK_EXCUSED_REPAIRED SCR_EXTENT
/* a repair may take a range into the slot's next file, which a purge punches (scribbled-count.sh) */
#define SCR_PUNCH_EXCUSED SCR_COUNT

static struct track base_tracks[TRACKS];
static int base_ntracks;
static size_t base_nodes_off, base_files_off, base_hash_off;
static uint32_t base_node_cap, base_file_cap, base_hash_cap;

static struct track *track_find(struct track *t, int n, const struct vl_ident *id)
{
	for (int i = 0; i < n; i++)
		if (vl_ident_same(&t[i].id, id))
			return &t[i];
	return NULL;
}

static void bytes_set(uint8_t *map, uint64_t s, uint64_t e, uint8_t v)
{
	for (uint64_t i = s; i < e && i < SPACE; i++)
		map[i] = v;
}

/* A MARK of the base, recorded as ever marked by its file. */
static void base_mark(struct world *w, int f, uint64_t s, uint64_t e)
{
	const struct vl_ident *id;
	struct track *t;

	do_mark(w, f, s, e);
	id = &vl_file_at(w->r, w->fi[f])->h.ident;
	t = track_find(base_tracks, base_ntracks, id);
	if (t == NULL) {
		t = &base_tracks[base_ntracks++];
		t->id = *id;
	}
	bytes_set(t->ever, s, e, 1);
}

/* The base's ranges as its calls left them: marked, and punched where purged. */
static void base_track_ranges(const struct vl_region *r)
{
	for (int i = 0; i < base_ntracks; i++) {
		struct track *t = &base_tracks[i];
		uint32_t fi, n;

		if (vl_file_lookup(r, &t->id, &fi) != 0 || fi == VL_NIL)
			continue;
		for (n = vl_rb_first(r, vl_file_at(r, fi)->h.root); n != VL_NIL; n = vl_rb_next(r, n)) {
			const struct vl_node *x = vl_node_at(r, n);

			bytes_set(t->marked, x->start, x->end, 1);
			if (vl_node_purged(x))
				bytes_set(t->punched, x->start, x->end, 1);
		}
	}
}

/* A small region in a state a busy program leaves it in, checked by the model. */
static void make_base(void)
{
	struct world *w = world_new_cap(16, 4, 128, 3);

	base_mark(w, 0, 0, 10);
	base_mark(w, 0, 20, 30);
	base_mark(w, 0, 40, 50);
	base_mark(w, 0, 60, 70);
	base_mark(w, 0, 80, 120);
	do_unmark(w, 0, 90, 100); /* a split */
	do_purge_oldest(w);
	base_mark(w, 1, 5, 15);
	base_mark(w, 1, 15, 25);
	base_mark(w, 1, 30, 64);
	do_purge(w, 1, nth_node(w, 1, 1));
	base_mark(w, 2, 0, 1);
	do_unmark(w, 2, 0, 1);
	do_recycle(w, 2); /* a released record, then a new one in its slot */
	base_mark(w, 2, 100, 128);
	base_mark(w, 0, 1, 2); /* inside: nothing changes */
	do_unmark(w, 0, 20, 30); /* a node on the free list */
	do_purge_oldest(w);
	w->r->hdr->c.ages_tended = w->seq; /* the clock fz_now reads: the newest age */
	base_track_ranges(w->r);
	base_nodes_off = (size_t)((char *)w->r->nodes - (char *)w->t.base);
	base_files_off = (size_t)((char *)w->r->files - (char *)w->t.base);
	base_hash_off = (size_t)((char *)w->r->hash - (char *)w->t.base);
	base_hash_cap = w->r->hash_cap;
	base_node_cap = w->r->node_cap;
	base_file_cap = w->r->file_cap;
	base_size = w->t.g.region_size;
	base_image = malloc(base_size);
	if (base_image == NULL)
		abort();
	memcpy(base_image, w->t.base, base_size);
	base_geo = ((const struct vl_header *)base_image)->geo;
	world_free(w);
}

/* The kind of a byte of the base image at off, written with another value. */
static unsigned scribble_kind(size_t off)
{
	size_t in;

	if (off >= base_nodes_off && off - base_nodes_off < base_node_cap * sizeof(struct vl_node)) {
		in = (off - base_nodes_off) % sizeof(struct vl_node);
		if (in >= offsetof(struct vl_node, left) && in < offsetof(struct vl_node, meta))
			return SCR_ANY | SCR_LINK;
		if (in >= offsetof(struct vl_node, meta) && in < offsetof(struct vl_node, prev))
			return SCR_ANY | SCR_META;
		if (in < offsetof(struct vl_node, seq))
			return SCR_ANY | SCR_EXTENT;
		return SCR_ANY;
	}
	/*
	 * an entry of the file table: the lookup misses the record and the
	 * next MARK makes a second one for the file, whose UNMARK says 0 over
	 * the first's purged ranges: a record out of the table, the kind of
	 * scribbled-record.sh (an expected failure; DESIGN 18, not defended)
	 */
	if (off >= base_hash_off && off - base_hash_off < base_hash_cap * sizeof(uint32_t))
		return SCR_ANY | SCR_RECORD;
	if (off >= base_files_off && off - base_files_off < base_file_cap * sizeof(struct vl_file)) {
		in = (off - base_files_off) % sizeof(struct vl_file);
		/*
		 * ident, state, gen and check: any of them written makes the
		 * record fail its sum, as scribbled-record.sh's changed identity
		 * does, and the table's rebuild leaves it out the same way
		 */
		if (in >= offsetof(struct vl_file, h.ident) &&
		    in < offsetof(struct vl_file, h.check) + sizeof(uint32_t))
			return SCR_ANY | SCR_RECORD;
		if (in >= offsetof(struct vl_file, h.nranges) &&
		    in < offsetof(struct vl_file, h.nranges) + sizeof(uint32_t))
			return SCR_ANY | SCR_COUNT;
	}
	return SCR_ANY;
}

/*
 * A record's root written by the input: one that names a node or none is a
 * link of the tree (DESIGN 18, not defended: what it hides from the walks
 * they do not see); one past the node array the descents see for garbage,
 * EUCLEAN (tests/shell/scribbled-root.sh), and stays judged.
 */
static unsigned root_kind(const void *mem)
{
	for (uint32_t i = 0; i < base_file_cap; i++) {
		size_t off = base_files_off + i * sizeof(struct vl_file) +
			     offsetof(struct vl_file, h.root);
		uint32_t was, now;

		memcpy(&was, (const char *)base_image + off, sizeof(was));
		memcpy(&now, (const char *)mem + off, sizeof(now));
		if (now != was && now < base_node_cap)
			return SCR_LINK;
	}
	return 0;
}

/* Trace a byte the input changed: where it lies, and its kind. */
static void trace_byte(size_t off, uint8_t v)
{
	if (off >= base_nodes_off && off - base_nodes_off < base_node_cap * sizeof(struct vl_node))
		trace("scribble node %zu +%zu: %#x, kind %#x\n",
		      (off - base_nodes_off) / sizeof(struct vl_node),
		      (off - base_nodes_off) % sizeof(struct vl_node), v, scribble_kind(off));
	else if (off >= base_files_off && off - base_files_off < base_file_cap * sizeof(struct vl_file))
		trace("scribble file %zu +%zu: %#x, kind %#x\n",
		      (off - base_files_off) / sizeof(struct vl_file),
		      (off - base_files_off) % sizeof(struct vl_file), v, scribble_kind(off));
	else
		trace("scribble byte %zu (files at %zu, nodes at %zu): %#x\n", off, base_files_off,
		      base_nodes_off, v);
}

/* ---- the region under test -------------------------------------------------- */

struct fz {
	struct vl_region r;
	void *mem;
	size_t size;
	void *snap;
	uint64_t purged;  /* bytes punched, to keep the work observable */
	struct vl_node node0; /* slot 0 of each array at attach */
	struct vl_file file0;
	int judged;           /* the oracle holds: a region the input did not write */
	unsigned scribbled;   /* SCR_*: what the input wrote over the base */
	int repaired;         /* a file's repair has run (SCR_UNMARK_EXCUSED_REPAIRED) */
	int ntracks;
	struct track tracks[TRACKS];
};

/* The track of identity id, a new one if it has none (NULL: no room, not judged). */
static struct track *track_of(struct fz *z, const struct vl_ident *id)
{
	struct track *t = track_find(z->tracks, z->ntracks, id);

	if (t == NULL && z->ntracks < TRACKS) {
		t = &z->tracks[z->ntracks++];
		memset(t, 0, sizeof(*t));
		t->id = *id;
	}
	return t;
}

/* id's MARK of [s, e) done. */
static void track_mark(struct fz *z, const struct vl_ident *id, uint64_t s, uint64_t e)
{
	struct track *t = track_of(z, id);

	if (t == NULL)
		return;
	bytes_set(t->ever, s, e, 1);
	bytes_set(t->marked, s, e, 1);
}

/* [s, e) of id's file punched: only bytes its calls marked (DESIGN 4, 18). */
static void track_punch(struct fz *z, const struct vl_ident *id, uint64_t s, uint64_t e,
			const char *what)
{
	struct track *t = track_of(z, id);
	int ever = (z->scribbled & SCR_ANY) != 0;

	if (t == NULL || e <= s)
		return;
	if (z->judged && !(z->scribbled & SCR_PUNCH_EXCUSED))
		for (uint64_t i = s; i < e; i++)
			fail_if(i >= SPACE || !(ever ? t->ever[i] : t->marked[i]),
				"%s punched [%llu,%llu) of file ino %llu: byte %llu was %s", what,
				(unsigned long long)s, (unsigned long long)e,
				(unsigned long long)id->ino, (unsigned long long)i,
				ever ? "never marked" : "not marked since it was unmarked");
	bytes_set(t->punched, s, e, 1);
}

/*
 * id's UNMARK of [s, e) said `said` (1: some byte was purged; 0; <0 an
 * error): never 0 over bytes punched since they were last unmarked. Those
 * it took out are neither marked nor punched any more.
 */
static void track_unmark(struct fz *z, const struct vl_ident *id, uint64_t s, uint64_t e,
			 int said)
{
	struct track *t = track_find(z->tracks, z->ntracks, id);

	if (t == NULL || said < 0)
		return;
	if (z->judged && !(z->scribbled & SCR_UNMARK_EXCUSED) &&
	    !(z->repaired && (z->scribbled & SCR_UNMARK_EXCUSED_REPAIRED)))
		for (uint64_t i = s; i < e && i < SPACE; i++)
			fail_if(t->punched[i] && said == 0,
				"unmark [%llu,%llu) of file ino %llu said 0, byte %llu was punched",
				(unsigned long long)s, (unsigned long long)e,
				(unsigned long long)id->ino, (unsigned long long)i);
	bytes_set(t->marked, s, e, 0);
	bytes_set(t->punched, s, e, 0);
}

/* The age clock a purger reads: a word of the image, so the input sets it too. */
static uint32_t fz_now(const struct fz *z)
{
	return (uint32_t)((const struct vl_header *)z->mem)->c.ages_tended;
}

static void reseal(struct fz *z)
{
	struct vl_header *h = z->mem;
	uint32_t i;

	h->geo.check = vl_geometry_sum(&h->geo);
	if (vl_geometry_check(&h->geo, z->size) != 0)
		return;
	vl_region_bind(&z->r, z->mem, z->size);
	for (i = 0; i < z->r.file_cap; i++)
		vl_file_seal(&z->r, &z->r.files[i]);
	for (i = 1; i < z->r.node_cap; i++)
		vl_node_seal(&z->r, &z->r.nodes[i]);
}

static void snapshot(struct fz *z)
{
	memcpy(z->snap, z->mem, z->size);
}

/* After a failed operation: nothing changed but the spare's slot. */
static void unchanged_but(struct fz *z, uint32_t spare, const char *what, int err)
{
	size_t skip = spare == VL_NIL ? z->size : (size_t)((char *)&z->r.nodes[spare] - (char *)z->mem);
	size_t after = spare == VL_NIL ? z->size : skip + sizeof(struct vl_node);

	fail_if(memcmp(z->mem, z->snap, skip) != 0 ||
			memcmp((char *)z->mem + after, (char *)z->snap + after, z->size - after) != 0,
		"%s failed (%d) but changed the region", what, err);
}

/* ---- what the runtime does ---------------------------------------------------- */

static int file_sound(const struct vl_region *r, uint32_t fi)
{
	const struct vl_file *f = vl_file_at(r, fi);

	return fi != VL_NIL && fi < r->file_cap && f->h.state == VL_FILE_LIVE && vl_file_ok(r, f);
}

/* The identity of file slot i as recorded, or a new one from b. */
static struct vl_ident ident_of(const struct vl_region *r, uint8_t a, uint8_t b)
{
	struct vl_ident id;

	if (a & 0x80) {
		memset(&id, 0, sizeof(id));
		id.dev = 0x900;
		id.ino = 5000 + b;
		id.btime_sec = b;
		return id;
	}
	return vl_file_at(r, a % r->file_cap)->h.ident;
}

/* find_file of src/ops.c: look up, and make the record if asked. */
static int find_file(const struct vl_region *r, const struct vl_ident *id, int create,
		     uint32_t *fi)
{
	int fresh, err = COUNTED(r, vl_file_lookup(r, id, fi));

	if (err)
		return err;
	fail_if(*fi != VL_NIL && (*fi >= r->file_cap ||
				  memcmp(&vl_file_at(r, *fi)->h.ident, id, sizeof(*id) - 4) != 0),
		"lookup found slot %u, not of this identity", *fi);
	if (*fi == VL_NIL && create) {
		*fi = COUNTED(r, vl_file_create(r, id, &fresh));
		if (*fi == VL_NIL)
			return -ENOMEM;
		fail_if(*fi >= r->file_cap || !file_sound(r, *fi), "created a bad record %u", *fi);
	}
	return 0;
}

/* finish() of src/ops.c: the commit; a record stays while empty */
static void finish(const struct vl_region *r, uint32_t fi, struct vl_change *c, int err,
		   uint32_t spare)
{
	if (err)
		memset(c, 0, sizeof(*c));
	COUNTED_V(r, vl_commit(r, fi, c, spare));
}

/*
 * reserve() of src/ops.c: the file's IDLE one, else a new chunk's, else
 * (full, it seems) one a sweep finds, else an IDLE one of any chunk.
 */
static uint32_t get_spare(const struct vl_region *r, uint32_t fi)
{
	uint32_t n = COUNTED(r, vl_spare_take(r, fi));

	if (n == VL_NIL)
		n = COUNTED(r, vl_node_alloc(r, fi));
	if (n == VL_NIL && COUNTED(r, vl_nodes_sweep(r)) > 0)
		n = COUNTED(r, vl_node_alloc(r, fi));
	if (n == VL_NIL)
		n = COUNTED(r, vl_spare_steal(r, fi));
	fail_if(n != VL_NIL && (n >= r->node_cap || vl_node_state(vl_node_at(r, n)) != VL_NODE_PENDING ||
				vl_node_file(vl_node_at(r, n)) != fi),
		"spare of file %u: node %u is not a PENDING node of it", fi, n);
	return n;
}

static void op_mark(struct fz *z, const struct vl_ident *id, uint64_t s, uint64_t e)
{
	const struct vl_region *r = &z->r;
	struct vl_change c;
	uint32_t fi, spare;
	int err;

	if (find_file(r, id, 1, &fi) != 0)
		return;
	spare = get_spare(r, fi);
	snapshot(z);
	err = COUNTED(r, vl_ranges_mark(r, &vl_file_at(r, fi)->h.root, fi, s, e, spare, &c));
	if (err)
		unchanged_but(z, spare, "mark", err);
	else if (c.punch_end > c.punch_start)
		fail_if(c.punch_start > s || c.punch_end < e,
			"mark [%llu,%llu) into a purged range punched [%llu,%llu)",
			(unsigned long long)s, (unsigned long long)e,
			(unsigned long long)c.punch_start, (unsigned long long)c.punch_end);
	if (err == 0) {
		track_mark(z, id, s, e);
		track_punch(z, id, c.punch_start, c.punch_end, "mark");
	}
	finish(r, fi, &c, err, spare);
}

static void op_unmark(struct fz *z, const struct vl_ident *id, uint64_t s, uint64_t e)
{
	const struct vl_region *r = &z->r;
	struct vl_change c;
	uint32_t fi, spare = VL_NIL;
	int err, tomb;

	if (find_file(r, id, 0, &fi) != 0)
		return;
	if (fi == VL_NIL) {
		/* no record: as UNMARK with no tombstone (none is played here), 0 */
		track_unmark(z, id, s, e, 0);
		return;
	}
	/* as ops.c reads it, before the change: every UNMARK of such a record says 1 */
	tomb = (vl_file_at(r, fi)->h.flags & VL_FF_TOMB) != 0;
	snapshot(z);
	err = COUNTED(r, vl_ranges_unmark(r, &vl_file_at(r, fi)->h.root, fi, s, e, VL_NIL, &c));
	if (err)
		unchanged_but(z, VL_NIL, "unmark", err);
	if (err == -ENOMEM) {
		spare = get_spare(r, fi);
		snapshot(z);
		err = spare == VL_NIL ? -ENOMEM
				      : COUNTED(r, vl_ranges_unmark(r, &vl_file_at(r, fi)->h.root, fi,
								    s, e, spare, &c));
		if (err)
			unchanged_but(z, spare, "unmark with a spare", err);
	}
	if (err == 0)
		fail_if(c.punch_end != c.punch_start, "unmark punched");
	track_unmark(z, id, s, e, err ? err : c.was_purged || tomb);
	finish(r, fi, &c, err, spare);
}

/* The files a pass skips, as purge.c keeps them: SKIP_MAX at most, then the pass ends. */
#define SKIP_MAX 64

struct skips {
	uint32_t fi[SKIP_MAX];
	int n;
	uint32_t mended[SKIP_MAX]; /* mended once: chosen again, skipped if wrong again */
	int nmended;
};

static int skipped(void *ctx, uint32_t fi)
{
	const struct skips *k = ctx;

	for (int i = 0; i < k->n; i++)
		if (k->fi[i] == fi)
			return 1;
	return 0;
}

static void skip_file(struct skips *k, uint32_t fi)
{
	if (k != NULL && k->n < SKIP_MAX && !skipped(k, fi))
		k->fi[k->n++] = fi;
}

/*
 * purge_one of src/purge.c: the file whose published age is the oldest
 * (read with no lock), checked as under its lock and mended if its age
 * order is wrong (then skipped), then its oldest range (after `skip` of
 * them, as a visit flags the next ones too). Returns 1 if a range was
 * flagged purged, 0 if the file was skipped, -1 if none was chosen.
 */
static int visit(struct fz *z, uint8_t skip, struct skips *k)
{
	const struct vl_region *r = &z->r;
	uint32_t n, steps = 0, fi, age, second;
	uint64_t s, e;
	struct vl_change c;
	struct vl_file *f;
	int err;

	fi = COUNTED(r, vl_pick_oldest(r, fz_now(z), k != NULL ? skipped : NULL, k, VL_NIL, &age, &second));
	if (fi == VL_NIL)
		return -1;
	fail_if(fi >= r->file_cap || age == 0, "pick chose file %u by age %u", fi, age);
	f = vl_file_at(r, fi);
	if (!file_sound(r, fi)) {
		skip_file(k, fi);
		return 0;
	}
	err = COUNTED(r, vl_lru_check(r, fi));
	if (err < 0) {
		z->repaired = 1;
		COUNTED_V(r, vl_file_repair(r, fi, fz_now(z)));
	}
	if (err != 0) {
		int again = 0;

		fail_if(err == 1 && f->h.oldest == age, "check of file %u: mended, oldest still %u",
			fi, age);
		for (int i = 0; k != NULL && i < k->nmended; i++)
			again |= k->mended[i] == fi;
		if (k != NULL && !again && k->nmended < SKIP_MAX)
			k->mended[k->nmended++] = fi;
		else
			skip_file(k, fi);
		return 0;
	}
	/* what purge.c would RETRY on: alone in the region, it would choose the same again */
	fail_if(f->h.lru_head == VL_NIL || vl_node_at(r, f->h.lru_head)->seq != age,
		"file %u chosen by age %u passed its check with head %u of age %u", fi, age,
		f->h.lru_head, vl_node_at(r, f->h.lru_head)->seq);
	n = f->h.lru_head;
	while (n != VL_NIL && n < r->node_cap && steps++ < r->node_cap && skip-- > 0)
		n = vl_node_at(r, n)->next;
	if (n == VL_NIL || n >= r->node_cap || !vl_range_ok(r, n, fi) ||
	    vl_node_purged(vl_node_at(r, n))) {
		skip_file(k, fi);
		return 0;
	}
	s = vl_node_at(r, n)->start;
	e = vl_node_at(r, n)->end;
	snapshot(z);
	err = COUNTED(r, vl_ranges_purge(r, &f->h.root, fi, n, &c));
	if (err) {
		unchanged_but(z, VL_NIL, "purge", err);
		skip_file(k, fi);
		return 0;
	}
	fail_if(c.punch_start != s || c.punch_end != e,
		"purge of [%llu,%llu) punched [%llu,%llu)", (unsigned long long)s,
		(unsigned long long)e, (unsigned long long)c.punch_start,
		(unsigned long long)c.punch_end);
	track_punch(z, &f->h.ident, c.punch_start, c.punch_end, "purge");
	COUNTED_V(r, vl_commit(r, fi, &c, VL_NIL));
	r->hdr->c.purges++;
	vl_u128_add(&r->hdr->c.purged_total, c.punch_end - c.punch_start);
	z->purged += c.punch_end - c.punch_start;
	return 1;
}

static void op_purge(struct fz *z, uint8_t skip)
{
	(void)visit(z, skip, NULL);
}

/*
 * vl_purge's pass, alone in the region, purging everything: every round
 * flags an unpurged range purged (node_cap - 1 of them at most: a pass
 * unpurges none), mends a file (once each, SKIP_MAX at most) or skips one
 * (SKIP_MAX, then it ends).
 */
static void op_pass(struct fz *z)
{
	const struct vl_region *r = &z->r;
	uint64_t rounds = 0, most = (uint64_t)r->node_cap + 2 * SKIP_MAX;
	struct skips k;

	k.n = k.nmended = 0;
	while (k.n < SKIP_MAX && visit(z, 0, &k) >= 0)
		fail_if(++rounds > most, "a purge pass over %llu rounds (ranges %u, files %u)",
			(unsigned long long)most, r->node_cap, r->file_cap);
}

/*
 * id's ranges dropped: all of them (its file is gone: a new file starts
 * afresh), or its unpurged ones (its program can no longer reach them:
 * they are pinned again, and a punch of them would change its bytes).
 */
static void track_drop(struct fz *z, const struct vl_ident *id, int unpurged_only)
{
	struct track *t = track_find(z->tracks, z->ntracks, id);

	if (t == NULL)
		return;
	for (int i = 0; i < SPACE; i++) {
		t->marked[i] = unpurged_only && t->marked[i] && t->punched[i];
		t->punched[i] = unpurged_only && t->punched[i];
	}
}

/* vl_drop_file of src/purge.c */
static void op_drop(struct fz *z, uint32_t fi, int unpurged_only)
{
	const struct vl_region *r = &z->r;
	struct vl_file *f = vl_file_at(r, fi);
	struct vl_change c;
	int err;

	if (!file_sound(r, fi))
		return;
	snapshot(z);
	err = unpurged_only ? COUNTED(r, vl_ranges_forget_unpurged(r, &f->h.root, fi, &c))
			    : COUNTED(r, vl_ranges_clear(r, &f->h.root, fi, &c));
	if (err) {
		unchanged_but(z, VL_NIL, unpurged_only ? "forget unpurged" : "clear", err);
		return;
	}
	track_drop(z, &f->h.ident, unpurged_only);
	COUNTED_V(r, vl_commit(r, fi, &c, VL_NIL));
	if (f->h.nranges == 0)
		COUNTED_V(r, vl_file_release(r, fi));
}

/*
 * The spare a MARK of file fi gets, as ops.c gets it: its kept one, else
 * another file's; either must be a PENDING node of fi, and is kept again.
 */
static void op_spare(const struct vl_region *r, uint32_t fi)
{
	const char *how = "kept";
	uint32_t n = COUNTED(r, vl_spare_take(r, fi));

	if (n == VL_NIL) {
		how = "stolen";
		n = COUNTED(r, vl_spare_steal(r, fi));
	}
	if (n == VL_NIL)
		return;
	fail_if(vl_node_state(vl_node_at(r, n)) != VL_NODE_PENDING ||
			vl_node_file(vl_node_at(r, n)) != fi,
		"%s spare of file %u: node %u is not a PENDING node of it", how, fi, n);
	COUNTED_V(r, vl_spare_keep(r, fi, n));
}

/* Every tree checked, every sound record looked up by its identity. */
static void op_walk(struct fz *z)
{
	const struct vl_region *r = &z->r;
	uint32_t hwm = r->hdr->c.file_hwm < r->file_cap ? r->hdr->c.file_hwm : r->file_cap;
	uint32_t fi, found;

	for (fi = 1; fi < hwm; fi++) {
		if (!file_sound(r, fi))
			continue;
		(void)COUNTED(r, vl_rb_check(r, vl_file_at(r, fi)->h.root, fi));
		(void)COUNTED(r, vl_file_lookup(r, &vl_file_at(r, fi)->h.ident, &found));
		/* what MARK reads with no lock */
		(void)COUNTED(r, vl_file_probe(r, &vl_file_at(r, fi)->h.ident));
		op_spare(r, fi);
	}
}

/* The file table's rebuild: it writes no node (they are not the region lock's). */
static void op_rebuild(struct fz *z)
{
	const struct vl_region *r = &z->r;
	const struct vl_counters *k = &r->hdr->c;
	size_t nodes = (size_t)r->node_cap * sizeof(struct vl_node);
	uint32_t fi, found;

	memcpy(z->snap, r->nodes, nodes);
	COUNTED_V(r, vl_pool_rebuild(r));
	fail_if(memcmp(z->snap, r->nodes, nodes) != 0, "rebuild wrote a node");
	fail_if(k->file_hwm < 1 || k->file_hwm > r->file_cap, "rebuild: file hwm %u",
		k->file_hwm);
	for (fi = 1; fi < k->file_hwm; fi++) {
		if (!file_sound(r, fi))
			continue;
		fail_if(vl_file_lookup(r, &vl_file_at(r, fi)->h.ident, &found) != 0 ||
				found == VL_NIL,
			"rebuild: sound file %u is not found (%u)", fi, found);
	}
}

static void op_repair(struct fz *z, uint32_t fi)
{
	const struct vl_region *r = &z->r;
	const struct vl_file *f = vl_file_at(r, fi);
	long got;

	uint32_t n, prev = VL_NIL, unpurged = 0, k = 0, now;

	z->repaired = 1;
	COUNTED_V(r, vl_file_repair(r, fi, fz_now(z)));
	if (!file_sound(r, fi))
		return;
	got = vl_rb_check(r, f->h.root, fi);
	fail_if(got < 0 || (uint64_t)got != f->h.nranges,
		"repair of file %u: tree check %ld, %u ranges counted", fi, got, f->h.nranges);
	for (n = vl_rb_first(r, f->h.root); n != VL_NIL; n = vl_rb_next(r, n))
		unpurged += !vl_node_purged(vl_node_at(r, n));
	/* its age order: exactly its unpurged ranges, oldest first */
	now = fz_now(z);
	for (n = f->h.lru_head; n != VL_NIL; prev = n, n = vl_node_at(r, n)->next) {
		const struct vl_node *x = vl_node_at(r, n);

		fail_if(n >= r->node_cap || ++k > unpurged || !vl_range_ok(r, n, fi) ||
				vl_node_purged(x) || x->prev != prev,
			"repair of file %u: age order holds node %u (prev %u, want %u)", fi, n,
			x->prev, prev);
		fail_if(x->seq == 0, "repair of file %u: range %u has no age", fi, n);
		fail_if(prev != VL_NIL && vl_age_older(x->seq, vl_node_at(r, prev)->seq, now),
			"repair of file %u: age order out of order at node %u", fi, n);
	}
	fail_if(k != unpurged, "repair of file %u: age order of %u, %u unpurged ranges", fi, k,
		unpurged);
	fail_if(f->h.lru_tail != prev, "repair of file %u: tail %u, want %u", fi, f->h.lru_tail,
		prev);
	fail_if(f->h.oldest != (prev == VL_NIL ? 0 : vl_node_at(r, f->h.lru_head)->seq),
		"repair of file %u: oldest %u", fi, f->h.oldest);
	/* what a dead holder held is unused again: no PENDING node of fi in its chunk */
	for (uint32_t c = f->h.chunk, i = 0; c < r->node_cap && c % VL_CHUNK == 0 && i < VL_CHUNK;
	     i++)
		fail_if(c + i < r->node_cap &&
				r->nodes[c + i].meta == vl_meta(fi, VL_NODE_PENDING, 0),
			"repair of file %u: node %u of its chunk left PENDING", fi, c + i);
}

/*
 * The look that keeps ages from the wrap (DESIGN 10), its clock some
 * quarter-days (0 to 63.75) past the image's: it writes the age and check
 * of file fi's ranges only, each age it writes "now - 40 days", and its
 * published oldest; not a byte else, whatever the image holds.
 */
static void op_restamp(struct fz *z, uint32_t fi, uint8_t quarters)
{
	const struct vl_region *r = &z->r;
	uint32_t now = fz_now(z) + (uint32_t)quarters * (86400000u / 4);
	uint32_t floor = vl_age_stamp(now - VL_AGE_RESTAMP_MS), done, changed = 0;
	struct vl_node *was = (struct vl_node *)((char *)z->snap + ((char *)r->nodes - (char *)z->mem));
	struct vl_file *fwas =
		(struct vl_file *)((char *)z->snap + ((char *)vl_file_at(r, fi) - (char *)z->mem));

	snapshot(z);
	done = COUNTED(r, vl_lru_restamp(r, fi, now));
	for (uint32_t i = 1; i < r->node_cap; i++) {
		const struct vl_node *x = &r->nodes[i];

		if (x->seq == was[i].seq && x->check == was[i].check)
			continue;
		fail_if(!vl_range_ok(r, i, fi) || x->seq != floor,
			"restamp of file %u at %u wrote node %u: age %u (want %u), its own: %d", fi,
			now, i, x->seq, floor, vl_range_ok(r, i, fi));
		was[i].seq = x->seq;
		was[i].check = x->check;
		changed++;
	}
	fail_if(changed > done, "restamp of file %u: %u nodes changed, %u said", fi, changed, done);
	fwas->h.oldest = vl_file_at(r, fi)->h.oldest;
	fail_if(memcmp(z->mem, z->snap, z->size) != 0,
		"restamp of file %u wrote outside its ranges' ages and its oldest", fi);
}

static void sentinels_keep(struct fz *z)
{
	z->node0 = z->r.nodes[VL_NIL];
	z->file0 = z->r.files[VL_NIL];
}

/* Nothing ever writes slot 0 of either array. */
static void sentinels_check(const struct fz *z, const char *after)
{
	fail_if(memcmp(&z->r.nodes[VL_NIL], &z->node0, sizeof(z->node0)) != 0,
		"%s wrote into slot 0 of the nodes", after);
	fail_if(memcmp(&z->r.files[VL_NIL], &z->file0, sizeof(z->file0)) != 0,
		"%s wrote into slot 0 of the files", after);
}

/* Trace each file's ranges as its tree holds them: node [start,end)p. */
static void trace_files(const struct fz *z)
{
	const struct vl_region *r = &z->r;

	if (!tracing)
		return;
	for (uint32_t fi = 1; fi < r->file_cap; fi++) {
		uint32_t n, steps = 0;

		if (!file_sound(r, fi))
			continue;
		trace("  file %u ino %llu:", fi, (unsigned long long)vl_file_at(r, fi)->h.ident.ino);
		for (n = vl_rb_first(r, vl_file_at(r, fi)->h.root); n != VL_NIL && n < r->node_cap &&
								    steps++ < r->node_cap;
		     n = vl_rb_next(r, n))
			trace(" %u[%llu,%llu)%s%s", n, (unsigned long long)r->nodes[n].start,
			      (unsigned long long)r->nodes[n].end,
			      vl_node_purged(&r->nodes[n]) ? "p" : "",
			      vl_range_ok(r, n, fi) ? "" : "!");
		trace("\n");
	}
}

static void run_op(struct fz *z, const uint8_t *op)
{
	const struct vl_region *r = &z->r;
	struct vl_ident id = ident_of(r, op[1], op[2]);
	uint64_t s = op[2] % 160, e = s + 1 + op[3] % 48;
	uint32_t fi = op[1] % r->file_cap, found;

	trace("op %u (%u %u %u): ident ino %llu, [%llu,%llu), slot %u\n", op[0] % 10, op[1], op[2],
	      op[3], (unsigned long long)id.ino, (unsigned long long)s, (unsigned long long)e, fi);
	switch (op[0] % 10) {
	case 0:
	case 1:
		op_mark(z, &id, s, e);
		break;
	case 2:
	case 3:
		op_unmark(z, &id, s, e);
		break;
	case 4:
		if (op[3] & 8)
			op_pass(z);
		else
			op_purge(z, op[3] & 7);
		break;
	case 5:
		op_drop(z, fi, op[3] & 1);
		break;
	case 6:
		op_walk(z);
		break;
	case 7:
		op_rebuild(z);
		break;
	case 8:
		op_repair(z, fi);
		break;
	default:
		if (op[3] & 16)
			op_restamp(z, fi, op[2]);
		else
			(void)find_file(r, &id, op[3] & 1, &found);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz z;
	const uint8_t *ops, *pay;
	size_t nops, plen, i;
	uint8_t flags;

	if (base_image == NULL)
		make_base();
	if (size < 2)
		return 0;
	flags = data[0];
	nops = data[1] % (NOPS_MAX + 1);
	if (size < 2 + 4 * nops)
		nops = (size - 2) / 4;
	ops = data + 2;
	pay = ops + 4 * nops;
	plen = size - 2 - 4 * nops;

	memset(&z, 0, sizeof(z));
	z.size = flags & F_RAW ? plen : base_size;
	if (z.size == 0)
		return 0;
	/* exactly the region's size: a byte past it is a heap overflow for ASan */
	if (posix_memalign(&z.mem, 64, z.size) != 0)
		abort();
	if (flags & F_RAW) {
		memcpy(z.mem, pay, plen);
	} else {
		memcpy(z.mem, base_image, base_size);
		for (i = 0; i + 3 <= plen;) {
			size_t off = pay[i] | (size_t)pay[i + 1] << 8;

			/* the tombstones' 64 KiB stepped over: the records, the table and the nodes in reach */
			if (off >= base_geo.tomb_off)
				off += base_geo.files_off - base_geo.tomb_off;
			off %= z.size;
			size_t len = pay[i + 2];

			i += 3;
			if (len > plen - i)
				len = plen - i;
			if (len > z.size - off)
				len = z.size - off;
			for (size_t k = 0; k < len; k++)
				if (pay[i + k] != ((const uint8_t *)base_image)[off + k]) {
					z.scribbled |= scribble_kind(off + k);
					trace_byte(off + k, pay[i + k]);
				}
			memcpy((char *)z.mem + off, pay + i, len);
			i += len;
		}
		z.scribbled |= root_kind(z.mem);
		if (flags & F_RESEAL)
			reseal(&z);
		/*
		 * A region the input wrote whole, or resealed, is one of valid-looking
		 * records written on purpose: DESIGN 18 promises nothing of it.
		 */
		z.judged = !(flags & F_RESEAL);
		z.ntracks = base_ntracks;
		memcpy(z.tracks, base_tracks, sizeof(base_tracks));
	}

	/* attach (region.c): the geometry against the file's size, then bind */
	if (z.size < sizeof(struct vl_geometry) ||
	    vl_geometry_check(&((struct vl_header *)z.mem)->geo, z.size) != 0)
		goto out;
	vl_region_bind(&z.r, z.mem, z.size);
	fail_if(z.r.node_cap < 2 || z.r.file_cap < 2 || z.r.hash_cap < 2 ||
			(char *)(z.r.nodes + z.r.node_cap) > (char *)z.mem + z.size ||
			(char *)(z.r.files + z.r.file_cap) > (char *)z.r.hash ||
			(char *)(z.r.hash + z.r.hash_cap) > (char *)z.r.nodes,
		"a geometry that passed the check does not fit its size");
	z.snap = malloc(z.size);
	if (z.snap == NULL)
		abort();

	sentinels_keep(&z);
	if (flags & F_REBUILD)
		op_rebuild(&z);
	sentinels_check(&z, "the first rebuild");
	if (flags & F_REPAIR)
		for (i = 1; i < z.r.file_cap; i++)
			op_repair(&z, (uint32_t)i);
	sentinels_check(&z, "the first repairs");
	trace_files(&z);
	for (i = 0; i < nops; i++) {
		run_op(&z, ops + 4 * i);
		trace_files(&z);
		sentinels_check(&z, "an operation");
	}
	op_walk(&z);
	sentinels_check(&z, "the last walk");
out:
	free(z.snap);
	free(z.mem);
	return 0;
}
