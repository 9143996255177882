/* SPDX-License-Identifier: MIT */
/*
 * test-layout.c - region geometry, format word and integrity sums
 * (core/layout.c).
 */
#include "harness.h"

#include <stddef.h>
#include <string.h>

_Static_assert(sizeof(struct vl_node) == 48, "a range node is 48 bytes");
_Static_assert(sizeof(struct vl_file) == VL_FILE_SIZE, "a file record is 512 bytes");
_Static_assert(VL_FILE_SIZE == 512, "VL_FILE_SIZE is 512");
_Static_assert(sizeof(struct vl_ident) == 32, "an identity is 32 bytes");
_Static_assert(sizeof(struct vl_proc) == 64, "a process slot is one cache line");

START_TEST(test_sizes)
{
	/* the same, at run time, so a failure shows up in the test log too */
	ck_assert_uint_eq(sizeof(struct vl_node), 48);
	ck_assert_uint_eq(sizeof(struct vl_file), 512);
	ck_assert_uint_ge(VL_PATH_MAX, 256);
	ck_assert_uint_eq(offsetof(struct vl_header, lock) % 64, 0);
}
END_TEST

START_TEST(test_format_word)
{
	uint32_t f = vl_format();

	ck_assert_uint_eq(f & 0xff, VL_VERSION);
	ck_assert_uint_eq((f >> 8) & 0x3f, sizeof(struct vl_node) / 4);
	ck_assert_uint_eq((f >> 28) & 1, 1); /* the file record is VL_FILE_SIZE */
	ck_assert_uint_eq(vl_format(), f);   /* stable */
}
END_TEST

static void check_plan_shape(const struct vl_geometry *g)
{
	ck_assert(g->magic == VL_MAGIC);
	ck_assert_uint_eq(g->format, vl_format());
	ck_assert_uint_eq(g->header_size, sizeof(struct vl_header));
	ck_assert_uint_eq(g->check, vl_geometry_sum(g));
	ck_assert_uint_ge(g->node_cap, VL_MIN_RANGES + VL_CHUNK);
	ck_assert_uint_eq(g->node_cap % VL_CHUNK, 0); /* whole chunks */
	ck_assert_uint_eq(g->nodes_off % 64, 0);     /* on cache lines */
	ck_assert_uint_le(g->node_cap, VL_MAX_RANGES);
	ck_assert_uint_ge(g->file_cap, 3);
	ck_assert_uint_le(g->file_cap, VL_MAX_FILES);
	/* a power of two, at least twice the file slots (at most half full) */
	ck_assert_uint_eq(g->hash_cap & (g->hash_cap - 1), 0);
	ck_assert_uint_ge(g->hash_cap, 2ull * g->file_cap);
	ck_assert_uint_lt(g->hash_cap / 2, 2ull * g->file_cap);
	/* the arrays follow each other, in order, aligned, without overlap */
	ck_assert_uint_eq(g->files_off % 4096, 0);
	ck_assert_uint_ge(g->files_off, sizeof(struct vl_header));
	ck_assert_uint_ge(g->hash_off, g->files_off + (uint64_t)g->file_cap * 512);
	ck_assert_uint_eq(g->hash_off % 8, 0);
	ck_assert_uint_eq(g->nodes_off % 64, 0);
	ck_assert_uint_ge(g->nodes_off, g->hash_off + (uint64_t)g->hash_cap * 4);
	ck_assert_uint_eq(g->procs_off % 64, 0);
	ck_assert_uint_ge(g->procs_off, g->nodes_off + (uint64_t)g->node_cap * 48);
	ck_assert_uint_lt(g->procs_off, g->nodes_off + (uint64_t)g->node_cap * 48 + 64);
	ck_assert_uint_ge(g->region_size, g->procs_off + (uint64_t)VL_PROCS * 64);
	ck_assert_uint_lt(g->region_size, g->procs_off + (uint64_t)VL_PROCS * 64 + 4096);
	ck_assert_uint_eq(g->region_size % 4096, 0);
	ck_assert_int_eq(vl_geometry_check(g, g->region_size), 0);
}

/* node slots for n ranges: chunk 0 (the sentinel's), then whole chunks */
#define CAP_FOR(n) (((n) + 2 * VL_CHUNK - 1) / VL_CHUNK * VL_CHUNK)

START_TEST(test_plan_checks_ok)
{
	static const uint32_t ranges[] = { 0, 1, 8, 9, 100, 1000, 4096, 65536, VL_DEFAULT_RANGES };
	static const uint32_t files[] = { 0, 1, 2, 3, 7, 100, 1000, VL_DEFAULT_FILES };
	size_t i, j;

	for (i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		for (j = 0; j < sizeof(files) / sizeof(files[0]); j++) {
			struct vl_geometry g;

			vl_geometry_plan(&g, ranges[i], files[j]);
			check_plan_shape(&g);
			if (ranges[i] >= VL_MIN_RANGES)
				ck_assert_uint_eq(g.node_cap, CAP_FOR(ranges[i]));
			if (files[j] >= 2)
				ck_assert_uint_eq(g.file_cap, files[j] + 1);
		}
	}
}
END_TEST

START_TEST(test_caps_clamped)
{
	struct vl_geometry g;

	vl_geometry_plan(&g, 0, 0);
	ck_assert_uint_eq(g.node_cap, CAP_FOR(VL_MIN_RANGES));
	ck_assert_uint_eq(g.file_cap, 3);
	check_plan_shape(&g);

	vl_geometry_plan(&g, VL_MIN_RANGES - 1, 1);
	ck_assert_uint_eq(g.node_cap, CAP_FOR(VL_MIN_RANGES));
	ck_assert_uint_eq(g.file_cap, 3);

	vl_geometry_plan(&g, UINT32_MAX, UINT32_MAX);
	ck_assert_uint_eq(g.node_cap, VL_MAX_RANGES);
	ck_assert_uint_eq(g.file_cap, VL_MAX_FILES);
	check_plan_shape(&g);

	vl_geometry_plan(&g, VL_MAX_RANGES, VL_MAX_FILES);
	ck_assert_uint_eq(g.node_cap, VL_MAX_RANGES);
	ck_assert_uint_eq(g.file_cap, VL_MAX_FILES);

	vl_geometry_plan(&g, VL_MAX_RANGES - 1, VL_MAX_FILES - 1);
	ck_assert_uint_eq(g.node_cap, VL_MAX_RANGES);
	ck_assert_uint_eq(g.file_cap, VL_MAX_FILES);
	/* the largest node index still fits the parent links (31 bits) */
	ck_assert_uint_lt((uint64_t)g.node_cap - 1, 1ull << 31);
}
END_TEST

START_TEST(test_region_size_grows)
{
	struct vl_geometry a, b;
	uint32_t n, f;

	for (n = 8; n < (1u << 22); n *= 2) {
		vl_geometry_plan(&a, n, 64);
		vl_geometry_plan(&b, n * 2, 64);
		ck_assert_uint_ge(b.region_size, a.region_size);
		if (n * 48 >= 4096) /* at least a page more */
			ck_assert_uint_gt(b.region_size, a.region_size);
		vl_geometry_plan(&b, n + 1, 64);
		ck_assert_uint_ge(b.region_size, a.region_size);
	}
	for (f = 2; f < (1u << 20); f *= 2) {
		vl_geometry_plan(&a, 1024, f);
		vl_geometry_plan(&b, 1024, f * 2);
		ck_assert_uint_ge(b.region_size, a.region_size);
		if (f * 512 >= 4096)
			ck_assert_uint_gt(b.region_size, a.region_size);
		vl_geometry_plan(&b, 1024, f + 1);
		ck_assert_uint_ge(b.region_size, a.region_size);
	}
	/* the default region: about 2M ranges of 48 bytes plus 64K files of 512 */
	vl_geometry_plan(&a, VL_DEFAULT_RANGES, VL_DEFAULT_FILES);
	ck_assert_uint_ge(a.region_size, (uint64_t)VL_DEFAULT_RANGES * 48 + VL_DEFAULT_FILES * 512ull);
	ck_assert_uint_lt(a.region_size, (VL_DEFAULT_RANGES + 1ull) * 48 +
						 (VL_DEFAULT_FILES + 1ull) * (512 + 16) + 3 * 4096);
}
END_TEST

/* A geometry with one field changed: the expected error. */
START_TEST(test_check_each_field)
{
	struct vl_geometry good, g;
	uint64_t size;

	vl_geometry_plan(&good, 1000, 100);
	size = good.region_size;
	ck_assert_int_eq(vl_geometry_check(&good, size), 0);

#define TRY(stmt, reseal, want)                                                          \
	do {                                                                             \
		g = good;                                                                \
		stmt;                                                                    \
		if (reseal)                                                              \
			g.check = vl_geometry_sum(&g);                                   \
		ck_assert_msg(vl_geometry_check(&g, size) == (want),                     \
			      "%s%s: got %d, want %d", #stmt, (reseal) ? " (resealed)" : "", \
			      vl_geometry_check(&g, size), (want));                      \
	} while (0)

	TRY(g.magic ^= 1, 0, -EUCLEAN);
	TRY(g.magic ^= 1, 1, -EUCLEAN);
	TRY(g.magic = 0, 1, -EUCLEAN);
	TRY(g.format ^= 1, 0, -EPROTO);
	TRY(g.format ^= 1, 1, -EPROTO);
	TRY(g.format ^= 1u << 14, 1, -EPROTO);
	TRY(g.header_size += 8, 0, -EPROTO);
	TRY(g.header_size -= 8, 1, -EPROTO);
	TRY(g.region_size += 4096, 0, -EUCLEAN);
	TRY(g.region_size += 4096, 1, -EUCLEAN);
	TRY(g.region_size -= 4096, 1, -EUCLEAN);
	TRY(g.node_cap += 1, 0, -EUCLEAN);
	TRY(g.node_cap += 1000, 1, -EUCLEAN);
	TRY(g.node_cap = 0, 1, -EUCLEAN);
	TRY(g.node_cap = VL_MIN_RANGES, 1, -EUCLEAN);
	TRY(g.node_cap = VL_MAX_RANGES + 1, 1, -EUCLEAN);
	TRY(g.file_cap += 1, 0, -EUCLEAN);
	TRY(g.file_cap += 1, 1, -EUCLEAN);
	TRY(g.file_cap = 2, 1, -EUCLEAN);
	TRY(g.file_cap = VL_MAX_FILES + 1, 1, -EUCLEAN);
	TRY(g.hash_cap *= 2, 0, -EUCLEAN);
	TRY(g.hash_cap *= 2, 1, -EUCLEAN);
	TRY(g.hash_cap /= 2, 1, -EUCLEAN);
	TRY(g.hash_cap += 1, 1, -EUCLEAN);
	TRY(g.check ^= 1, 0, -EUCLEAN);
	TRY(g.check = 0, 0, -EUCLEAN);
	TRY(g.files_off += 4096, 0, -EUCLEAN);
	TRY(g.files_off += 4096, 1, -EUCLEAN);
	TRY(g.files_off -= 64, 1, -EUCLEAN);
	TRY(g.hash_off += 64, 0, -EUCLEAN);
	TRY(g.hash_off += 64, 1, -EUCLEAN);
	TRY(g.hash_off -= 512, 1, -EUCLEAN);
	TRY(g.nodes_off += 64, 0, -EUCLEAN);
	TRY(g.nodes_off += 64, 1, -EUCLEAN);
	TRY(g.nodes_off -= 64, 1, -EUCLEAN);
#undef TRY

	/* the right geometry in a file of the wrong size */
	ck_assert_int_eq(vl_geometry_check(&good, size + 4096), -EUCLEAN);
	ck_assert_int_eq(vl_geometry_check(&good, size - 4096), -EUCLEAN);
	ck_assert_int_eq(vl_geometry_check(&good, size + 1), -EUCLEAN);
	ck_assert_int_eq(vl_geometry_check(&good, 0), -EUCLEAN);
	ck_assert_int_eq(vl_geometry_check(&good, size), 0);

	/* a consistent geometry of another capacity is fine at its own size */
	vl_geometry_plan(&g, 5000, 100);
	ck_assert_int_eq(vl_geometry_check(&g, g.region_size), 0);
	ck_assert_int_eq(vl_geometry_check(&g, size), -EUCLEAN);
}
END_TEST

/* magic is judged first, then the version/ABI, then the sum */
START_TEST(test_check_order)
{
	struct vl_geometry g;

	vl_geometry_plan(&g, 100, 10);
	g.magic = 0;
	g.format ^= 1;
	ck_assert_int_eq(vl_geometry_check(&g, g.region_size), -EUCLEAN);
	vl_geometry_plan(&g, 100, 10);
	g.format ^= 1;
	g.check ^= 1;
	g.region_size += 4096;
	ck_assert_int_eq(vl_geometry_check(&g, g.region_size), -EPROTO);
}
END_TEST

START_TEST(test_format_and_bind)
{
	struct th_region t;
	struct vl_header *h;

	th_region_init(&t, 100, 10);
	h = t.base;
	ck_assert(memcmp(&h->geo, &t.g, sizeof(t.g)) == 0);
	ck_assert_uint_eq(h->c.node_hwm, VL_CHUNK);
	ck_assert_uint_eq(h->c.file_hwm, 1);
	ck_assert_uint_eq(h->c.nodes_used, 0);
	ck_assert_uint_eq(h->c.files_used, 0);
	ck_assert_uint_eq(h->c.node_top, 0); /* an empty free list, tag 0 */
	for (uint32_t i = 0; i < t.r.file_cap; i++) /* no file has an age order */
		ck_assert(t.r.files[i].h.lru_head == VL_NIL && t.r.files[i].h.oldest == 0);
	ck_assert_uint_eq(h->c.age_clock, VL_AGE_CLOCK);
	ck_assert_ptr_eq(t.r.hdr, h);
	ck_assert_ptr_eq((char *)t.r.files, (char *)t.base + t.g.files_off);
	ck_assert_ptr_eq((char *)t.r.hash, (char *)t.base + t.g.hash_off);
	ck_assert_ptr_eq((char *)t.r.nodes, (char *)t.base + t.g.nodes_off);
	ck_assert_uint_eq(t.r.size, t.g.region_size);
	/* the last node ends inside the region */
	ck_assert((char *)&t.r.nodes[t.r.node_cap] <= (char *)t.base + t.r.size);
	ck_assert((char *)&t.r.files[t.r.file_cap] <= (char *)t.r.hash);
	ck_assert((char *)&t.r.hash[t.r.hash_cap] <= (char *)t.r.nodes);
	/* clamping */
	ck_assert_ptr_eq(vl_node_at(&t.r, t.r.node_cap), &t.r.nodes[0]);
	ck_assert_ptr_eq(vl_node_at(&t.r, UINT32_MAX), &t.r.nodes[0]);
	ck_assert_ptr_eq(vl_node_at(&t.r, t.r.node_cap - 1), &t.r.nodes[t.r.node_cap - 1]);
	ck_assert_ptr_eq(vl_file_at(&t.r, t.r.file_cap), &t.r.files[0]);
	ck_assert_ptr_eq(vl_file_at(&t.r, t.r.file_cap - 1), &t.r.files[t.r.file_cap - 1]);
	th_region_fini(&t);
}
END_TEST

START_TEST(test_meta_bits)
{
	struct vl_node n;
	uint32_t m = vl_meta(0x00abcdefu, VL_NODE_LIVE, 1);

	memset(&n, 0, sizeof(n));
	n.meta = m;
	ck_assert_uint_eq(vl_node_file(&n), 0x00abcdefu);
	ck_assert_uint_eq(vl_node_state(&n), VL_NODE_LIVE);
	ck_assert_int_eq(vl_node_purged(&n), 1);
	n.meta = vl_meta(0xffffffffu, VL_NODE_PENDING, 0);
	ck_assert_uint_eq(vl_node_file(&n), VL_META_FILE_MASK);
	ck_assert_uint_eq(vl_node_state(&n), VL_NODE_PENDING);
	ck_assert_int_eq(vl_node_purged(&n), 0);
}
END_TEST

START_TEST(test_node_sum)
{
	struct th_region t;
	struct vl_region *r;
	struct vl_node *a, *b, saved;
	uint32_t sum;

	th_region_init(&t, 64, 4);
	r = &t.r;
	a = &r->nodes[5];
	b = &r->nodes[6];
	a->start = 4096;
	a->end = 8192;
	a->seq = 77;
	a->meta = vl_meta(3, VL_NODE_LIVE, 0);
	vl_node_seal(r, a);
	ck_assert(vl_node_ok(r, a));
	sum = a->check;
	saved = *a;

#define COVERED(stmt)                                                                   \
	do {                                                                            \
		*a = saved;                                                             \
		stmt;                                                                   \
		ck_assert_msg(vl_node_sum(r, a) != sum, "%s does not change the sum", #stmt); \
		ck_assert_msg(!vl_node_ok(r, a), "%s: node still ok", #stmt);           \
	} while (0)
#define UNCOVERED(stmt)                                                                 \
	do {                                                                            \
		*a = saved;                                                             \
		stmt;                                                                   \
		ck_assert_msg(vl_node_sum(r, a) == sum, "%s changes the sum", #stmt);   \
		ck_assert_msg(vl_node_ok(r, a), "%s: node no longer ok", #stmt);        \
	} while (0)

	COVERED(a->start ^= 1);
	COVERED(a->start ^= 1ull << 63);
	COVERED(a->end ^= 1);
	COVERED(a->end ^= 1ull << 40);
	COVERED(a->seq ^= 1);
	COVERED(a->seq ^= 1u << 31);
	COVERED(a->meta ^= VL_META_PURGED);
	COVERED(a->meta = vl_meta(3, VL_NODE_PENDING, 0));
	COVERED(a->meta = vl_meta(4, VL_NODE_LIVE, 0));
	COVERED(a->meta ^= 1u << 31);
	/* tree and list links change without resealing (rotations) */
	UNCOVERED(a->left = 9);
	UNCOVERED(a->right = 9);
	UNCOVERED(a->parent = 9 << 1 | 1);
	UNCOVERED(a->prev = 9);
	UNCOVERED(a->next = 9);
#undef COVERED
#undef UNCOVERED

	/* a scribbled check word: the node is not ok */
	*a = saved;
	a->check ^= 1;
	ck_assert(!vl_node_ok(r, a));
	*a = saved;
	ck_assert(vl_node_ok(r, a));

	/* the slot is summed: a copy elsewhere is caught */
	*a = saved;
	*b = saved;
	ck_assert_uint_ne(vl_node_sum(r, b), sum);
	ck_assert(!vl_node_ok(r, b));
	vl_node_seal(r, b);
	ck_assert(vl_node_ok(r, b));
	ck_assert_uint_ne(b->check, a->check);

	/* an empty or reversed range is never ok, even sealed */
	a->end = a->start;
	vl_node_seal(r, a);
	ck_assert(!vl_node_ok(r, a));
	a->end = a->start - 1;
	vl_node_seal(r, a);
	ck_assert(!vl_node_ok(r, a));
	th_region_fini(&t);
}
END_TEST

START_TEST(test_file_sum)
{
	struct th_region t;
	struct vl_region *r;
	struct vl_file *f, *g;
	struct vl_file_hdr saved;
	uint32_t sum;

	th_region_init(&t, 64, 8);
	r = &t.r;
	f = &r->files[2];
	g = &r->files[3];
	f->h.ident = th_ident(0x801, 123456);
	f->h.state = VL_FILE_LIVE;
	f->h.gen = 5;
	vl_file_seal(r, f);
	ck_assert(vl_file_ok(r, f));
	sum = f->h.check;
	saved = f->h;

#define COVERED(stmt)                                                                   \
	do {                                                                            \
		f->h = saved;                                                           \
		stmt;                                                                   \
		ck_assert_msg(vl_file_sum(r, f) != sum, "%s does not change the sum", #stmt); \
		ck_assert_msg(!vl_file_ok(r, f), "%s: file still ok", #stmt);          \
	} while (0)
#define UNCOVERED(stmt)                                                                 \
	do {                                                                            \
		f->h = saved;                                                           \
		stmt;                                                                   \
		ck_assert_msg(vl_file_sum(r, f) == sum, "%s changes the sum", #stmt);   \
	} while (0)

	COVERED(f->h.ident.dev ^= 1);
	COVERED(f->h.ident.ino ^= 1);
	COVERED(f->h.ident.ino ^= 1ull << 63);
	COVERED(f->h.ident.btime_sec ^= 1);
	COVERED(f->h.ident.btime_nsec ^= 1);
	COVERED(f->h.state = VL_FILE_FREE);
	COVERED(f->h.state = VL_FILE_LIVE + 1); /* no such state */
	COVERED(f->h.state ^= 1u << 31);
	COVERED(f->h.gen++);
	COVERED(f->h.gen--);
	COVERED(f->h.gen ^= 1u << 31);
	/* a torn state change (state and gen written, sum not yet) is told apart */
	COVERED(f->h.state = VL_FILE_FREE; f->h.gen++);
	/* guarded by the file's own lock, or not identity: not summed */
	UNCOVERED(f->h.root = 7);
	UNCOVERED(f->h.nranges = 7);
	UNCOVERED(f->h.npurged = 7);
	UNCOVERED(f->h.vbytes = 7);
	UNCOVERED(f->h.pbytes = 7);
	UNCOVERED(f->h.next_free = 7);
	/* what the purger notes about reaching the file: not identity */
	UNCOVERED(f->h.gone_since = 7);
	UNCOVERED(f->h.checked_at = 7);
	UNCOVERED(f->h.holders[0].pid = 7);
	UNCOVERED(f->h.path_len = 7);
	UNCOVERED(f->h.flags = VL_FF_ANON);
#undef COVERED
#undef UNCOVERED

	f->h = saved;
	f->h.check ^= 1;
	ck_assert(!vl_file_ok(r, f));
	f->h = saved;
	ck_assert(vl_file_ok(r, f));
	g->h = saved;
	ck_assert_uint_ne(vl_file_sum(r, g), sum);
	ck_assert(!vl_file_ok(r, g));

	/* twins: the same (dev, ino), born at another time, sum differently */
	f->h = saved;
	f->h.ident.btime_sec += 1000;
	ck_assert_uint_ne(vl_file_sum(r, f), sum);
	f->h = saved;
	f->h.ident.btime_nsec = (f->h.ident.btime_nsec + 1) % 1000000000u;
	ck_assert_uint_ne(vl_file_sum(r, f), sum);
	th_region_fini(&t);
}
END_TEST

START_TEST(test_geometry_sum)
{
	struct vl_geometry g, h;

	vl_geometry_plan(&g, 1000, 100);
#define COVERED(stmt)                                                                   \
	do {                                                                            \
		h = g;                                                                  \
		stmt;                                                                   \
		ck_assert_msg(vl_geometry_sum(&h) != g.check, "%s does not change the sum", \
			      #stmt);                                                   \
	} while (0)
	COVERED(h.magic ^= 1);
	COVERED(h.format ^= 1);
	COVERED(h.header_size ^= 1);
	COVERED(h.region_size ^= 4096);
	COVERED(h.node_cap ^= 1);
	COVERED(h.file_cap ^= 1);
	COVERED(h.hash_cap ^= 1);
	COVERED(h.files_off ^= 64);
	COVERED(h.hash_off ^= 64);
	COVERED(h.nodes_off ^= 64);
#undef COVERED
	h = g;
	h.check ^= 1;
	ck_assert_uint_eq(vl_geometry_sum(&h), g.check);
}
END_TEST

/* ---- the region's 128-bit byte counts -------------------------------------- */

static struct vl_u128 u128(uint64_t hi, uint64_t lo)
{
	struct vl_u128 a = { .lo = lo, .hi = hi };

	return a;
}

START_TEST(test_u128_carry_borrow)
{
	struct vl_u128 a = u128(0, UINT64_MAX - 2);

	/* the carry across 2^64, and the borrow back */
	vl_u128_add(&a, 5);
	th_counts_eq(a, u128(1, 2));
	vl_u128_sub(&a, 5);
	th_counts_eq(a, u128(0, UINT64_MAX - 2));
	vl_u128_add(&a, 3);
	th_counts_eq(a, u128(1, 0));
	vl_u128_sub(&a, 1);
	th_counts_eq(a, u128(0, UINT64_MAX));
	/* the largest addend: a carry with a low half that is not 0 after it */
	a = u128(7, UINT64_MAX);
	vl_u128_add(&a, UINT64_MAX);
	th_counts_eq(a, u128(8, UINT64_MAX - 1));
	vl_u128_sub(&a, UINT64_MAX);
	th_counts_eq(a, u128(7, UINT64_MAX));
	/* no carry, no borrow */
	a = u128(3, 10);
	vl_u128_add(&a, 0);
	vl_u128_sub(&a, 0);
	vl_u128_sub(&a, 10);
	th_counts_eq(a, u128(3, 0));
	/* below 0 wraps modulo 2^128, so adding back is exact */
	a = u128(0, 1);
	vl_u128_sub(&a, 2);
	th_counts_eq(a, u128(UINT64_MAX, UINT64_MAX));
	vl_u128_add(&a, 2);
	th_counts_eq(a, u128(0, 1));
}
END_TEST

/*
 * Three ranges [0, LLONG_MAX) in, then out, in every order: the sum is
 * exact on the way (3 * (2^63 - 1) = 2^64 + 2^63 - 3) and 0 at the end.
 */
START_TEST(test_u128_three_huge_ranges)
{
	const uint64_t len = (uint64_t)INT64_MAX;
	struct vl_u128 a = u128(0, 0);

	vl_u128_add(&a, len);
	vl_u128_add(&a, len);
	th_counts_eq(a, u128(0, UINT64_MAX - 1));
	vl_u128_add(&a, len);
	th_counts_eq(a, u128(1, (1ull << 63) - 3));
	ck_assert_int_gt(vl_u128_cmp(&a, UINT64_MAX), 0);
	ck_assert_uint_eq(vl_u128_sat(&a), UINT64_MAX);
	vl_u128_sub(&a, len);
	th_counts_eq(a, u128(0, UINT64_MAX - 1));
	ck_assert_uint_eq(vl_u128_sat(&a), UINT64_MAX - 1);
	vl_u128_sub(&a, len);
	vl_u128_sub(&a, len);
	th_count_eq(a, 0);
}
END_TEST

START_TEST(test_u128_compare)
{
	struct vl_u128 a = u128(0, 1000);

	ck_assert_int_eq(vl_u128_cmp(&a, 1000), 0);
	ck_assert_int_gt(vl_u128_cmp(&a, 999), 0);
	ck_assert_int_lt(vl_u128_cmp(&a, 1001), 0);
	ck_assert_int_lt(vl_u128_cmp(&a, UINT64_MAX), 0);
	a = u128(0, UINT64_MAX);
	ck_assert_int_eq(vl_u128_cmp(&a, UINT64_MAX), 0);
	ck_assert_int_gt(vl_u128_cmp(&a, 0), 0);
	/* at and past 2^64, above every 64-bit value, though its low half is small */
	a = u128(1, 0);
	ck_assert_int_gt(vl_u128_cmp(&a, UINT64_MAX), 0);
	ck_assert_int_gt(vl_u128_cmp(&a, 0), 0);
	a = u128(1, 5);
	ck_assert_int_gt(vl_u128_cmp(&a, 5), 0);
	ck_assert_int_gt(vl_u128_cmp(&a, 6), 0);
	a = u128(0, 0);
	ck_assert_int_eq(vl_u128_cmp(&a, 0), 0);
	/* the report in 64 bits: exact when it fits, else UINT64_MAX */
	ck_assert_uint_eq(vl_u128_sat(&a), 0);
	a = u128(0, 12345);
	ck_assert_uint_eq(vl_u128_sat(&a), 12345);
	a = u128(1, 0);
	ck_assert_uint_eq(vl_u128_sat(&a), UINT64_MAX);
	a = u128(UINT64_MAX, UINT64_MAX);
	ck_assert_uint_eq(vl_u128_sat(&a), UINT64_MAX);
}
END_TEST


/* The log of purges: newest first, at most VL_PURGE_LOG, whole entries only. */
START_TEST(test_purge_log)
{
	static struct vl_purge_log log;
	struct vl_purge_entry out[VL_PURGE_LOG + 4];
	int n;

	memset(&log, 0, sizeof(log));
	ck_assert_int_eq(vl_purge_log_read(&log, out, VL_PURGE_LOG), 0);
	vl_purge_log_add(&log, 1000, 4096, 1, 42, VL_PURGE_BUDGET);
	vl_purge_log_add(&log, 2000, 8192, 2, 43, VL_PURGE_COMMAND);
	n = vl_purge_log_read(&log, out, VL_PURGE_LOG);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(out[0].at_ms, 2000);
	ck_assert_uint_eq(out[0].bytes, 8192);
	ck_assert_uint_eq(out[0].ranges, 2);
	ck_assert_int_eq(out[0].pid, 43);
	ck_assert_str_eq(vl_purge_reason_name(out[0].reason), "command");
	ck_assert_str_eq(vl_purge_reason_name(out[1].reason), "budget");
	ck_assert_int_eq(vl_purge_log_read(&log, out, 1), 1);
	ck_assert_uint_eq(out[0].at_ms, 2000);

	/* wrapped: the last VL_PURGE_LOG, newest first */
	for (int i = 0; i < 3 * VL_PURGE_LOG; i++)
		vl_purge_log_add(&log, 10000 + (uint64_t)i, 1, 1, i, VL_PURGE_MEMORY);
	n = vl_purge_log_read(&log, out, VL_PURGE_LOG + 4);
	ck_assert_int_eq(n, VL_PURGE_LOG);
	for (int i = 0; i < n; i++)
		ck_assert_uint_eq(out[i].at_ms, 10000 + 3 * VL_PURGE_LOG - 1 - (uint64_t)i);

	/* an entry being written (odd seq), or one a scribble left naming another index: not shown */
	log.e[(log.next - 1) % VL_PURGE_LOG].seq |= 1;
	log.e[(log.next - 2) % VL_PURGE_LOG].seq += 2 * VL_PURGE_LOG;
	n = vl_purge_log_read(&log, out, VL_PURGE_LOG);
	ck_assert_int_eq(n, VL_PURGE_LOG - 2);
	ck_assert_uint_eq(out[0].at_ms, 10000 + 3 * VL_PURGE_LOG - 3);
	ck_assert_str_eq(vl_purge_reason_name(99), "other");
	ck_assert_str_eq(vl_purge_reason_name(VL_PURGE_SYSTEM), "system");
}
END_TEST

/*
 * Two writers on one slot: one took entry i and stalled inside it (its seq
 * odd) while VL_PURGE_LOG more purges came, the last of them taking the same
 * slot for i + VL_PURGE_LOG. The stalled writer's stores then land over the
 * newer entry: a reader must never show an entry whose fields mix the two.
 */
START_TEST(test_purge_log_two_writers)
{
	static struct vl_purge_log log;
	struct vl_purge_entry out[VL_PURGE_LOG];
	uint64_t i0;
	int n;

	memset(&log, 0, sizeof(log));
	i0 = log.next++;
	log.e[i0 % VL_PURGE_LOG].seq = 2 * i0 + 1; /* stalled here */
	for (int k = 0; k < VL_PURGE_LOG; k++)
		vl_purge_log_add(&log, 5000 + (uint64_t)k, 4096, 1, 100 + k, VL_PURGE_BUDGET);
	/* the stalled writer goes on: its fields, then its seq */
	log.e[i0 % VL_PURGE_LOG].at_ms = 1;
	log.e[i0 % VL_PURGE_LOG].bytes = 1 << 30;
	log.e[i0 % VL_PURGE_LOG].ranges = 9;
	for (int pass = 0; pass < 2; pass++) {
		n = vl_purge_log_read(&log, out, VL_PURGE_LOG);
		ck_assert_int_ge(n, VL_PURGE_LOG - 1);
		for (int k = 0; k < n; k++) {
			ck_assert_uint_eq(out[k].bytes, 4096);
			ck_assert_uint_eq(out[k].ranges, 1);
			ck_assert_uint_eq(out[k].at_ms, 5000 + out[k].seq / 2 - 2);
		}
		log.e[i0 % VL_PURGE_LOG].seq = 2 * i0 + 2;
	}
	/* and the log goes on after it */
	vl_purge_log_add(&log, 9000, 8192, 2, 7, VL_PURGE_API);
	ck_assert_int_ge(vl_purge_log_read(&log, out, 1), 1);
	ck_assert_uint_eq(out[0].at_ms, 9000);
}
END_TEST

static Suite *layout_suite(void)
{
	Suite *s = suite_create("layout");
	TCase *tc = tcase_create("geometry");

	tcase_add_test(tc, test_sizes);
	tcase_add_test(tc, test_format_word);
	tcase_add_test(tc, test_plan_checks_ok);
	tcase_add_test(tc, test_caps_clamped);
	tcase_add_test(tc, test_region_size_grows);
	tcase_add_test(tc, test_check_each_field);
	tcase_add_test(tc, test_check_order);
	tcase_add_test(tc, test_format_and_bind);
	suite_add_tcase(s, tc);
	tc = tcase_create("integrity");
	tcase_add_test(tc, test_meta_bits);
	tcase_add_test(tc, test_node_sum);
	tcase_add_test(tc, test_file_sum);
	tcase_add_test(tc, test_geometry_sum);
	suite_add_tcase(s, tc);
	tc = tcase_create("counts");
	tcase_add_test(tc, test_u128_carry_borrow);
	tcase_add_test(tc, test_u128_three_huge_ranges);
	tcase_add_test(tc, test_u128_compare);
	tcase_add_test(tc, test_purge_log);
	tcase_add_test(tc, test_purge_log_two_writers);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return th_run(layout_suite());
}
