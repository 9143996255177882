/* SPDX-License-Identifier: MIT */
/*
 * api.c - the C API of volatile.h for tools and for programs that link
 * libvolatile.
 */
#include "core/layout.h"
#include "core/pool.h"
#include "reentry.h"
#include "export.h"
#include "ops.h"
#include "purge.h"
#include "region.h"
#include "volatile.h"

#include <errno.h>
#include <string.h>

/*
 * Records are not all files with ranges: an ashmem region keeps its
 * record (name, size, mask) with none. A walk up to the high-water mark,
 * under the region lock, which guards both fields read.
 */
static uint64_t files_with_ranges(const struct vl_region *r)
{
	uint32_t hwm = vl_file_hwm(r);
	uint64_t n = 0;

	for (uint32_t fi = 1; fi < hwm; fi++) {
		const struct vl_file *f = vl_file_at(r, fi);

		n += f->h.state == VL_FILE_LIVE && f->h.nranges != 0;
	}
	return n;
}

static void read_stats(const struct vl_region *r, struct volatile_stats *st)
{
	const struct vl_counters *c = &r->hdr->c;
	const struct vl_geometry *g = &r->hdr->geo;
	struct vl_totals t;
	struct vl_u128 v;

	memset(st, 0, sizeof(*st));
	st->files = files_with_ranges(r);
	/* the shared totals and every process's unfolded deltas: exact (core/pool.h) */
	vl_totals_read(r, NULL, &t);
	st->ranges = t.ranges;
	st->ranges_purged = t.ranges_purged;
	/* counted in 128 bits: UINT64_MAX says "at least that", as volatile.h documents */
	st->volatile_bytes = vl_u128_sat(&t.volatile_bytes);
	st->purged_bytes = vl_u128_sat(&t.purged_bytes);
	st->capacity_ranges = g->node_cap - VL_CHUNK;
	st->capacity_files = g->file_cap - 1;
	st->purges = __atomic_load_n(&c->purges, __ATOMIC_RELAXED);
	v = vl_u128_load(&c->purged_total);
	st->purged_total = vl_u128_sat(&v);
	/* the sparse file's pages in use: everything up to each high-water mark */
	st->region_bytes = g->files_off + (uint64_t)c->file_hwm * sizeof(struct vl_file) +
			   (uint64_t)g->hash_cap * sizeof(uint32_t) +
			   (uint64_t)c->node_hwm * sizeof(struct vl_node);
}

VL_EXPORT int volatile_stats(struct volatile_stats *out, size_t size)
{
	struct volatile_stats st;
	struct vl_region *r;
	int err, saved = errno;

	if (out == NULL) {
		errno = EINVAL;
		return -1;
	}
	err = vl_enter();
	if (err == 0) {
		/* counters changed by atomic adds, read so: no lock (pool.h) */
		err = vl_region_get(&r);
		if (err == 0)
			read_stats(r, &st);
		vl_leave();
	}
	if (err) {
		errno = -err;
		return -1;
	}
	memcpy(out, &st, size < sizeof(st) ? size : sizeof(st));
	errno = saved;
	return 0;
}

VL_EXPORT int64_t volatile_purge(uint64_t bytes)
{
	struct vl_goal g = { .bytes = bytes, .reason = VL_PURGE_API };
	struct vl_purge_report rep;
	struct vl_region *r;
	int err, saved = errno;

	err = vl_enter();
	if (err == 0) {
		err = vl_region_get(&r);
		if (err == 0)
			err = vl_purge(r, &g, NULL, &rep);
		vl_leave();
	}
	if (err) {
		errno = -err;
		return -1;
	}
	errno = saved;
	return (int64_t)rep.bytes;
}
