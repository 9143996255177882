/* SPDX-License-Identifier: MIT */
/*
 * fuzz-ranges.c - libFuzzer target: sequences of MARK, UNMARK and purges
 * on the real core (range tree, pool, commit) against the naive model of
 * DESIGN 3 (tests/unit/model.c).
 *
 * The input is a program. Its first byte chooses the world: the capacity
 * of the region (8 to 64 ranges, so it runs full), the offset space (32 to
 * 256 bytes, byte granular) and the number of files (1 to 4). Every
 * following 4 bytes are one operation {op, a, b, c}:
 *
 *   MARK [s, e)              anywhere, inside or touching a range
 *   UNMARK [s, e)            anywhere, or inside a range (splits)
 *   purge the oldest         the head of the file whose published age is
 *                            the oldest, as the purger picks it
 *   purge a given range      any range of a file, purged or not
 *   clear, forget unpurged   what forgetting a gone/unreachable file does
 *   absorb                   a LIVE leftover merged back, as crash repair does
 *   recycle                  an empty file's record released, a new file of
 *                            the same inode number made (the slot reused)
 *
 * After each operation everything is compared with the model: the ranges
 * and purged flags of every file, ages, each file's age order and the
 * age it publishes (the region's oldest range the oldest of the files'
 * heads), the byte and range counters of files and region, every node in
 * exactly one place (a tree, a file's spares, VL_SPARES at most, or the
 * free list); slot 0 of the nodes and of
 * the files, which must read all zeros; and THE INVARIANT on simulated
 * contents: a byte is lost only if a punch hit it, a punch hits only bytes
 * of purged ranges, and UNMARK returns 0 only if no byte it gives back was
 * lost. A mismatch prints the last operations and both views of the
 * files, and aborts.
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>

#define OPS_MAX 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

void model_fail(const char *msg)
{
	fprintf(stderr, "fuzz-ranges: core and model disagree:\n%s\n", msg);
	abort();
}

static const uint32_t caps[4] = { 8, 12, 16, 64 };
static const uint64_t spaces[4] = { 32, 64, 128, 256 };

/* A span [s, e) of [0, space) from two bytes: mostly short, sometimes long. */
static void span(const struct world *w, uint8_t b, uint8_t c, uint64_t *s, uint64_t *e)
{
	uint64_t len = c & 0x80 ? 1 + (c & 0x7f) * w->space / 128 : 1 + (c & 0x0f);

	*s = b % w->space;
	*e = umin(*s + len, w->space);
}

/* A span inside range i of file f (a split, a trim, or all of it). */
static void inside(const struct world *w, int f, uint8_t a, uint8_t b, uint8_t c, uint64_t *s,
		   uint64_t *e)
{
	const struct mr *x = &w->m[f].a[a % w->m[f].n];
	uint64_t len = x->e - x->s;

	*s = x->s + b % len;
	*e = *s + 1 + c % (x->e - *s);
}

/* A span that touches range i of file f, or overlaps it by one byte. */
static void touching(const struct world *w, int f, uint8_t a, uint8_t b, uint8_t c, uint64_t *s,
		     uint64_t *e)
{
	const struct mr *x = &w->m[f].a[a % w->m[f].n];
	uint64_t len = 1 + (c & 0x1f);

	if (b & 1) {
		*s = x->e - ((b >> 1) & 1);
		*e = umin(*s + len, w->space);
	} else {
		*e = x->s + ((b >> 1) & 1);
		*s = *e > len ? *e - len : 0;
	}
}

static void step(struct world *w, const uint8_t *op)
{
	int f = (op[1] >> 4) % w->nf;
	uint8_t a = op[1] & 0x0f, b = op[2], c = op[3];
	int n = w->m[f].n;
	uint64_t s, e;

	switch (op[0] % 16) {
	case 0:
	case 1:
	case 2:
		span(w, b, c, &s, &e);
		do_mark(w, f, s, e);
		break;
	case 3:
		if (n > 0) {
			inside(w, f, a, b, c, &s, &e);
			do_mark(w, f, s, e);
		}
		break;
	case 4:
		if (n > 0) {
			touching(w, f, a, b, c, &s, &e);
			if (s < e)
				do_mark(w, f, s, e);
		}
		break;
	case 5:
	case 6:
		span(w, b, c, &s, &e);
		do_unmark(w, f, s, e);
		break;
	case 7:
		if (n > 0) {
			inside(w, f, a, b, c, &s, &e);
			do_unmark(w, f, s, e);
		}
		break;
	case 8:
	case 9:
		do_purge_oldest(w);
		break;
	case 10:
		if (n > 0)
			do_purge(w, f, nth_node(w, f, (int)(b % n)));
		break;
	case 11:
		do_clear(w, f);
		break;
	case 12:
		do_forget_unpurged(w, f);
		break;
	case 13:
		/* a leftover of a crash needs a free slot; repair never allocates */
		if (m_total(w) < (int)w->cap) {
			span(w, b, c, &s, &e);
			do_absorb(w, f, s, e, a & 1);
		}
		break;
	case 14:
		do_recycle(w, f);
		break;
	default:
		/* unmark everything of the file, then recycle it */
		do_unmark(w, f, 0, w->space);
		do_recycle(w, f);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct world *w;
	size_t i;

	if (size < 1)
		return 0;
	w = world_new_nf(caps[data[0] & 3], spaces[(data[0] >> 2) & 3], 1 + ((data[0] >> 4) & 3));
	w->seed = data[0];
	for (i = 1; i + 4 <= size && (i - 1) / 4 < OPS_MAX; i += 4) {
		w->step = (int)((i - 1) / 4);
		step(w, data + i);
		/* also after the operations that change nothing, and so verify nothing */
		if (!model_sentinels_zero(w->r))
			model_failf("slot 0 of the nodes or the files was written\n%s",
				    world_ctx(w));
	}
	world_free(w);
	return 0;
}
