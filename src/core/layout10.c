/* SPDX-License-Identifier: MIT */
/*
 * layout10.c - format 10's region geometry and its check (layout10.h says
 * what lies where and why).
 */
#include "layout10.h"
#include "tomb.h"

#include <errno.h>
#include <string.h>

#define PAGE 4096u

uint32_t vl_format10(void)
{
	uint32_t f = VL10_VERSION | (uint32_t)(VL10_BLOCK / 64) << 8 | vl_format_abi();

	/* the allocator's parts, which format 9 has not */
	f |= (uint32_t)(sizeof(struct vl_lp_slot) == 8 && sizeof(struct vl_lp_hdr) == 128) << 30;
	return f;
}

uint32_t vl_geometry10_sum(const struct vl_geometry10 *g)
{
	uint64_t h = vl_mix64(g->magic ^ 0x510e527fade682d1ull);

	h = vl_mix64(h ^ g->format ^ ((uint64_t)g->header_size << 32));
	h = vl_mix64(h ^ g->region_size);
	h = vl_mix64(h ^ g->block_cap ^ ((uint64_t)g->file_cap << 32));
	h = vl_mix64(h ^ g->hash_cap ^ ((uint64_t)g->proc_cap << 32));
	h = vl_mix64(h ^ g->pad);
	h = vl_mix64(h ^ g->tomb_off);
	h = vl_mix64(h ^ g->files_off);
	h = vl_mix64(h ^ g->hash_off);
	h = vl_mix64(h ^ g->lp_off);
	h = vl_mix64(h ^ g->slots_off);
	h = vl_mix64(h ^ g->blocks_off);
	h = vl_mix64(h ^ g->procs_off);
	return vl_fold32(h);
}

uint32_t vl_lv_worst_blocks(uint32_t r)
{
	uint64_t n, total;

	/* two leaves of VL_LV_MIN stay two (no underflow merges them): 10 ranges, 3 blocks */
	if (r < 2 * VL_LV_MIN)
		return 1; /* the root leaf, whatever it holds */
	/* as many leaves as hold VL_LV_MIN each, then inner levels at VL_LV_FAN_MIN */
	n = r / VL_LV_MIN;
	total = n;
	while (n > 1) {
		/* up to VL_LV_FAN children have one root; more, nodes of >= 7 each */
		n = n <= VL_LV_FAN ? 1 : n / VL_LV_FAN_MIN;
		total += n;
	}
	return (uint32_t)total;
}

/* One file per range while there are files, the rest at 7/30 of a block each. */
static uint64_t trees_worst(uint64_t ranges, uint64_t files)
{
	uint64_t first = ranges < files ? ranges : files;

	return first + (7 * (ranges - first) + 29) / 30;
}

static uint32_t clamp_ranges(uint32_t ranges)
{
	return ranges < VL_MIN_RANGES ? VL_MIN_RANGES : ranges;
}

static uint32_t clamp_files(uint32_t files)
{
	return vl_clamp32(files, 2, VL_MAX_FILES - 1);
}

/* whole pages of process slots: a slot more or less changes region_size, so is seen */
static uint32_t clamp_procs(uint32_t procs)
{
	return (uint32_t)vl_round_up(vl_clamp32(procs, 2, VL10_MAX_PROCS), VL10_PAGE_PROCS);
}

static uint64_t blocks_for(uint32_t ranges, uint32_t files, uint32_t procs)
{
	return vl_round_up(1 + trees_worst(ranges, files) + (uint64_t)procs * VL_LV_RES_MAX,
			VL10_PAGE_BLOCKS);
}

/* the most any request plans (clamped), so the plan never needs to clamp blocks */
_Static_assert((7ull * UINT32_MAX + 29) / 30 + VL_MAX_FILES + 1 +
			       (uint64_t)VL10_MAX_PROCS * VL_LV_RES_MAX + VL10_PAGE_BLOCKS <=
		       VL10_MAX_BLOCKS,
	       "every count of ranges, files and processes plans within lvpool's blocks");

uint32_t vl_geometry10_blocks(uint32_t ranges, uint32_t files, uint32_t procs)
{
	return (uint32_t)blocks_for(clamp_ranges(ranges), clamp_files(files), clamp_procs(procs));
}

void vl_geometry10_for(uint32_t ranges, uint32_t files, uint32_t procs, struct vl_geometry10 *g)
{
	memset(g, 0, sizeof(*g));
	g->magic = VL_MAGIC;
	g->format = vl_format10();
	g->header_size = sizeof(struct vl_header);
	g->block_cap = vl_geometry10_blocks(ranges, files, procs);
	g->file_cap = clamp_files(files) + 1;
	/* at most half full, so probe sequences stay short (as format 9) */
	g->hash_cap = vl_pow2_at_least(2ull * g->file_cap);
	g->proc_cap = clamp_procs(procs);
	/* the header and the tombstones are made real at creation (layout.c says why) */
	g->tomb_off = VL_TOMB_OFF;
	g->files_off = g->tomb_off + VL_TOMB_BYTES;
	g->hash_off = g->files_off + (uint64_t)g->file_cap * sizeof(struct vl_file);
	g->lp_off = vl_round_up(g->hash_off + (uint64_t)g->hash_cap * sizeof(uint32_t), 64);
	g->slots_off = g->lp_off + sizeof(struct vl_lp_hdr);
	/* a page: block b's 256 bytes never straddle one, and the first leaves' page is theirs */
	g->blocks_off = vl_round_up(g->slots_off + (uint64_t)g->block_cap * sizeof(struct vl_lp_slot),
				 PAGE);
	g->procs_off = g->blocks_off + (uint64_t)g->block_cap * VL10_BLOCK;
	g->region_size = vl_round_up(g->procs_off + (uint64_t)g->proc_cap * sizeof(struct vl_proc),
				  PAGE);
	g->check = vl_geometry10_sum(g);
}

/*
 * Is [off, off + len) inside [from, size), off aligned to align? Each
 * area starts at or after the end of the one before (from), so no two
 * overlap; in 64 bits with no sum that can wrap, as every field is a
 * scribble's to choose.
 */
static int area_ok(uint64_t off, uint64_t len, uint64_t align, uint64_t from, uint64_t size)
{
	return off % align == 0 && off >= from && off <= size && len <= size - off;
}

int vl_geometry10_areas_ok(const struct vl_geometry10 *g)
{
	uint64_t size = g->region_size, at = g->header_size;

	if (size % PAGE != 0)
		return -EUCLEAN;
	if (!area_ok(g->tomb_off, VL_TOMB_BYTES, PAGE, at, size))
		return -EUCLEAN;
	at = g->tomb_off + VL_TOMB_BYTES;
	if (!area_ok(g->files_off, (uint64_t)g->file_cap * sizeof(struct vl_file), PAGE, at, size))
		return -EUCLEAN;
	at = g->files_off + (uint64_t)g->file_cap * sizeof(struct vl_file);
	if (!area_ok(g->hash_off, (uint64_t)g->hash_cap * sizeof(uint32_t), 8, at, size))
		return -EUCLEAN;
	at = g->hash_off + (uint64_t)g->hash_cap * sizeof(uint32_t);
	if (!area_ok(g->lp_off, sizeof(struct vl_lp_hdr), 64, at, size))
		return -EUCLEAN;
	at = g->lp_off + sizeof(struct vl_lp_hdr);
	if (!area_ok(g->slots_off, (uint64_t)g->block_cap * sizeof(struct vl_lp_slot), 8, at, size))
		return -EUCLEAN;
	at = g->slots_off + (uint64_t)g->block_cap * sizeof(struct vl_lp_slot);
	if (!area_ok(g->blocks_off, (uint64_t)g->block_cap * VL10_BLOCK, PAGE, at, size))
		return -EUCLEAN;
	at = g->blocks_off + (uint64_t)g->block_cap * VL10_BLOCK;
	if (!area_ok(g->procs_off, (uint64_t)g->proc_cap * sizeof(struct vl_proc), 64, at, size))
		return -EUCLEAN;
	return 0;
}

static int caps_ok(const struct vl_geometry10 *g)
{
	return g->block_cap >= 2 && g->block_cap <= VL10_MAX_BLOCKS &&
	       g->block_cap % VL10_PAGE_BLOCKS == 0 && g->file_cap >= 3 &&
	       g->file_cap <= VL_MAX_FILES && g->hash_cap >= 2ull * g->file_cap &&
	       (g->hash_cap & (g->hash_cap - 1)) == 0 && g->proc_cap >= VL10_PAGE_PROCS &&
	       g->proc_cap % VL10_PAGE_PROCS == 0 &&
	       g->proc_cap <= VL10_MAX_PROCS && g->pad == 0;
}

int vl_geometry10_ok(const struct vl_geometry10 *g, uint64_t size)
{
	struct vl_geometry10 want;

	if (g->magic != VL_MAGIC)
		return -EUCLEAN;
	if (g->format != vl_format10() || g->header_size != sizeof(struct vl_header))
		return -EPROTO;
	if (g->check != vl_geometry10_sum(g))
		return -EUCLEAN;
	if (g->region_size != size || !caps_ok(g))
		return -EUCLEAN;
	/* caps and areas first: whatever the plan below says, these hold on their own */
	if (vl_geometry10_areas_ok(g) != 0)
		return -EUCLEAN;
	/*
	 * And exactly what this version plans for its capacities: the block
	 * count is not recovered from them (any count a page of blocks long
	 * is a sound region), so the plan is compared from the files on.
	 */
	vl_geometry10_for(VL_MIN_RANGES, g->file_cap - 1, g->proc_cap, &want);
	if (want.tomb_off != g->tomb_off || want.files_off != g->files_off ||
	    want.hash_off != g->hash_off || want.hash_cap != g->hash_cap ||
	    want.lp_off != g->lp_off || want.slots_off != g->slots_off)
		return -EUCLEAN;
	if (g->blocks_off != vl_round_up(g->slots_off + (uint64_t)g->block_cap *
						  sizeof(struct vl_lp_slot), PAGE) ||
	    g->procs_off != g->blocks_off + (uint64_t)g->block_cap * VL10_BLOCK ||
	    g->region_size != vl_round_up(g->procs_off + (uint64_t)g->proc_cap *
						   sizeof(struct vl_proc), PAGE))
		return -EUCLEAN;
	return 0;
}
