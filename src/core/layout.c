/* SPDX-License-Identifier: MIT */
/*
 * layout.c - region geometry, format word and integrity sums.
 */
#include "layout.h"

#ifdef VL_COUNT_STEPS
unsigned long vl_walk_steps;
#endif
#include "tomb.h"

#include <errno.h>
#include <string.h>

#define PAGE 4096u

/*
 * Every size a process of another ABI could disagree on goes into the
 * format word (LMDB does the same), so a 32-bit process, another ABI's
 * alignment, or another version of this library sees EPROTO instead of
 * misreading the region.
 */
uint32_t vl_format_abi(void)
{
	uint32_t f = 0;
	union {
		uint16_t u;
		uint8_t b[2];
	} endian = { .u = 1 };

	f |= (uint32_t)(sizeof(struct vl_proc) / 4) << 14;
	f |= (uint32_t)(sizeof(struct vl_file_hdr) / 8) << 20;
	f |= (uint32_t)(sizeof(long) == 8) << 27;
	f |= (uint32_t)(sizeof(struct vl_file) == VL_FILE_SIZE) << 28;
	f |= (uint32_t)endian.b[0] << 29;
	return f;
}

uint32_t vl_format(void)
{
	return VL_VERSION | (uint32_t)(sizeof(struct vl_node) / 4) << 8 | vl_format_abi();
}


uint32_t vl_file_sum_as(const struct vl_region *r, const struct vl_file *f, uint32_t state,
			uint32_t gen)
{
	uint64_t slot = (uint64_t)(f - r->files);
	uint64_t h = vl_mix64(f->h.ident.dev ^ 0x6a09e667f3bcc909ull);

	h = vl_mix64(h ^ f->h.ident.ino);
	/* a birth second fits in 32 bits until 2106; the generation takes the rest */
	h = vl_mix64(h ^ (uint64_t)f->h.ident.btime_sec ^ ((uint64_t)f->h.ident.igen << 32));
	h = vl_mix64(h ^ f->h.ident.btime_nsec ^ ((uint64_t)state << 32));
	h = vl_mix64(h ^ gen ^ (slot << 32));
	return vl_fold32(h);
}

uint32_t vl_file_sum(const struct vl_region *r, const struct vl_file *f)
{
	return vl_file_sum_as(r, f, f->h.state, f->h.gen);
}

uint32_t vl_geometry_sum(const struct vl_geometry *g)
{
	uint64_t h = vl_mix64(g->magic);

	h = vl_mix64(h ^ g->format ^ ((uint64_t)g->header_size << 32));
	h = vl_mix64(h ^ g->region_size);
	h = vl_mix64(h ^ g->node_cap ^ ((uint64_t)g->file_cap << 32));
	h = vl_mix64(h ^ g->hash_cap);
	h = vl_mix64(h ^ g->tomb_off);
	h = vl_mix64(h ^ g->files_off);
	h = vl_mix64(h ^ g->hash_off);
	h = vl_mix64(h ^ g->nodes_off);
	h = vl_mix64(h ^ g->procs_off);
	return vl_fold32(h);
}

void vl_geometry_plan(struct vl_geometry *g, uint32_t ranges, uint32_t files)
{
	memset(g, 0, sizeof(*g));
	g->magic = VL_MAGIC;
	g->format = vl_format();
	g->header_size = sizeof(struct vl_header);
	/* chunk 0 holds the sentinel; the rest are whole chunks */
	g->node_cap = (uint32_t)vl_round_up(vl_clamp32(ranges, VL_MIN_RANGES, VL_MAX_RANGES - VL_CHUNK) +
					 VL_CHUNK, VL_CHUNK);
	g->file_cap = vl_clamp32(files, 2, VL_MAX_FILES - 1) + 1;
	/* at most half full, so probe sequences stay short */
	g->hash_cap = vl_pow2_at_least(2ull * g->file_cap);
	/*
	 * The tombstones go with the header: both are made real when the
	 * region is laid out (region.c), as a read of a hole of a tmpfs file
	 * takes a page too, and a tombstone read at every record made must not
	 * raise SIGBUS on a full file system.
	 */
	g->tomb_off = VL_TOMB_OFF;
	g->files_off = g->tomb_off + VL_TOMB_BYTES;
	g->hash_off = g->files_off + (uint64_t)g->file_cap * sizeof(struct vl_file);
	g->nodes_off = vl_round_up(g->hash_off + (uint64_t)g->hash_cap * sizeof(uint32_t), 64);
	g->procs_off = vl_round_up(g->nodes_off + (uint64_t)g->node_cap * sizeof(struct vl_node), 64);
	g->region_size = vl_round_up(g->procs_off + (uint64_t)VL_PROCS * sizeof(struct vl_proc), PAGE);
	g->check = vl_geometry_sum(g);
}

int vl_geometry_check(const struct vl_geometry *g, uint64_t size)
{
	struct vl_geometry want;

	if (g->magic != VL_MAGIC)
		return -EUCLEAN;
	if (g->format != vl_format() || g->header_size != sizeof(struct vl_header))
		return -EPROTO;
	if (g->check != vl_geometry_sum(g))
		return -EUCLEAN;
	if (g->node_cap < VL_MIN_RANGES + VL_CHUNK || g->node_cap > VL_MAX_RANGES ||
	    g->file_cap < 3 || g->file_cap > VL_MAX_FILES)
		return -EUCLEAN;
	/* the offsets must be exactly what this version would have planned */
	vl_geometry_plan(&want, g->node_cap - VL_CHUNK, g->file_cap - 1);
	if (memcmp(&want, g, sizeof(want)) != 0)
		return -EUCLEAN;
	if (g->region_size != size)
		return -EUCLEAN;
	return 0;
}

static uint64_t serials;

void vl_region_bind(struct vl_region *r, void *base, size_t size)
{
	struct vl_header *h = base;

	r->hdr = h;
	r->tomb = (struct vl_tomb *)((char *)base + h->geo.tomb_off);
	r->files = (struct vl_file *)((char *)base + h->geo.files_off);
	r->hash = (uint32_t *)((char *)base + h->geo.hash_off);
	r->nodes = (struct vl_node *)((char *)base + h->geo.nodes_off);
	r->procs = (struct vl_proc *)((char *)base + h->geo.procs_off);
	/* tells this mapping from an earlier one at the same address (src/lock.c) */
	r->serial = __atomic_add_fetch(&serials, 1, __ATOMIC_RELAXED);
	r->node_cap = h->geo.node_cap;
	r->file_cap = h->geo.file_cap;
	r->hash_cap = h->geo.hash_cap;
	r->size = size;
}

void vl_region_format(void *base, const struct vl_geometry *g)
{
	struct vl_header *h = base;

	h->geo = *g;
	memset(&h->c, 0, sizeof(h->c));
	memset(&h->fate, 0, sizeof(h->fate));
	h->c.node_hwm = VL_CHUNK; /* chunk 0 holds the sentinel */
	h->c.file_hwm = 1;
	h->c.age_clock = VL_AGE_CLOCK;
}

/*
 * An odd seq this far (in entries, either way) from the one a writer wants
 * is taken as left by a writer that died inside it, or by a scribble: the
 * slot is taken over. Nearer, another writer is inside the slot (the ring
 * wrapped onto it while it was stalled): the entry is dropped, as two
 * writers' stores in one slot would make an entry that mixes two purges.
 */
#define VL_PURGE_LOG_STALE (1024 * VL_PURGE_LOG)
/* looks at an entry's seq before giving it up: bounded, a scribbler may race us */
#define PURGE_LOG_CLAIM_TRIES 4

/* Make e's seq 2i + 1 unless another writer is inside e: 1 if done. */
static int purge_log_claim(struct vl_purge_entry *e, uint64_t i)
{
	uint64_t want = 2 * i + 1, cur = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);

	for (int tries = 0; tries < PURGE_LOG_CLAIM_TRIES; tries++) {
		if (cur & 1) {
			int64_t d = (int64_t)(want - cur) / 2;

			if (d < VL_PURGE_LOG_STALE && d > -VL_PURGE_LOG_STALE)
				return 0;
		}
		if (__atomic_compare_exchange_n(&e->seq, &cur, want, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			return 1;
	}
	return 0;
}

void vl_purge_log_add(struct vl_purge_log *l, uint64_t at_ms, uint64_t bytes, uint32_t ranges,
		      int32_t pid, uint32_t reason)
{
	uint64_t i = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);
	struct vl_purge_entry *e = &l->e[i % VL_PURGE_LOG];

	if (!purge_log_claim(e, i))
		return;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&e->at_ms, at_ms, __ATOMIC_RELAXED);
	__atomic_store_n(&e->bytes, bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&e->ranges, ranges, __ATOMIC_RELAXED);
	__atomic_store_n(&e->pid, pid, __ATOMIC_RELAXED);
	__atomic_store_n(&e->reason, reason, __ATOMIC_RELAXED);
	__atomic_store_n(&e->seq, 2 * i + 2, __ATOMIC_RELEASE);
}

int vl_purge_log_read(const struct vl_purge_log *l, struct vl_purge_entry *out, int max)
{
	uint64_t next = __atomic_load_n(&l->next, __ATOMIC_ACQUIRE);
	int n = 0;

	for (uint64_t k = 0; k < VL_PURGE_LOG && k < next && n < max; k++) {
		uint64_t i = next - 1 - k;
		const struct vl_purge_entry *e = &l->e[i % VL_PURGE_LOG];
		uint64_t s1 = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE), s2;

		if (s1 != 2 * i + 2)
			continue; /* being written, or overtaken */
		out[n].at_ms = __atomic_load_n(&e->at_ms, __ATOMIC_RELAXED);
		out[n].bytes = __atomic_load_n(&e->bytes, __ATOMIC_RELAXED);
		out[n].ranges = __atomic_load_n(&e->ranges, __ATOMIC_RELAXED);
		out[n].pid = __atomic_load_n(&e->pid, __ATOMIC_RELAXED);
		out[n].reason = __atomic_load_n(&e->reason, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
		if (s2 != s1)
			continue;
		out[n].seq = s1;
		n++;
	}
	return n;
}

const char *vl_purge_reason_name(uint32_t reason)
{
	static const char *const names[] = { "other",	"budget", "memory", "tmpfs",
					     "command", "api",	  "ashmem", "system" };

	return reason < sizeof(names) / sizeof(names[0]) ? names[reason] : "other";
}
