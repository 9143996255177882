/* SPDX-License-Identifier: MIT */
/*
 * tomb.c - the tombstone filter (see tomb.h).
 */
#include "tomb.h"

/*
 * Every field of the identity goes in: two files that differ in any of
 * them (a reused inode number, a tmpfs mounted again) are two identities,
 * and the filter must not make one pay for the other more than chance
 * does. K indices from two hashes (Kirsch and Mitzenmacher): as good as K
 * independent hashes for a Bloom filter, at the cost of two.
 */
void vl_tomb_bits_of(const struct vl_ident *id, uint32_t out[VL_TOMB_K])
{
	uint64_t h = vl_mix64(id->dev ^ 0x243f6a8885a308d3ull);
	uint32_t h1, h2;

	h = vl_mix64(h ^ id->ino);
	h = vl_mix64(h ^ (uint64_t)id->btime_sec);
	h = vl_mix64(h ^ id->btime_nsec ^ ((uint64_t)id->igen << 32));
	h1 = (uint32_t)(h >> 32);
	/* odd, and the filter a power of two: the K bits of one identity all differ */
	h2 = (uint32_t)vl_mix64(h ^ 0x13198a2e03707344ull) | 1;
	for (int i = 0; i < VL_TOMB_K; i++)
		out[i] = (h1 + (uint32_t)i * h2) & (VL_TOMB_BITS - 1);
}

void vl_tomb_add(uint64_t *bits, const struct vl_ident *id)
{
	uint32_t b[VL_TOMB_K];

	vl_tomb_bits_of(id, b);
	for (int i = 0; i < VL_TOMB_K; i++)
		__atomic_fetch_or(&bits[b[i] / 64], 1ull << (b[i] % 64), __ATOMIC_RELAXED);
}

int vl_tomb_has(const uint64_t *bits, const struct vl_ident *id)
{
	uint32_t b[VL_TOMB_K];

	vl_tomb_bits_of(id, b);
	for (int i = 0; i < VL_TOMB_K; i++)
		if (!((__atomic_load_n(&bits[b[i] / 64], __ATOMIC_RELAXED) >> (b[i] % 64)) & 1))
			return 0;
	return 1;
}
