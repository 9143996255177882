/* SPDX-License-Identifier: MIT */
/*
 * tomb.c - the tombstones: an exact table under a rising horizon (see tomb.h).
 */
#include "tomb.h"

/*
 * Every field of the identity goes in: two files that differ in any of
 * them (a reused inode number, a tmpfs mounted again) are two identities,
 * and only a 64-bit collision makes one pay for the other.
 */
uint64_t vl_tomb_fp(const struct vl_ident *id)
{
	uint64_t h = vl_mix64(id->dev ^ 0x243f6a8885a308d3ull);

	h = vl_mix64(h ^ id->ino);
	h = vl_mix64(h ^ (uint64_t)id->btime_sec);
	h = vl_mix64(h ^ id->btime_nsec ^ ((uint64_t)id->igen << 32));
	return h != 0 ? h : 1; /* 0 is a free way */
}

#define NS 1000000000ull

/*
 * Rounded up where it must be: a birth taken later than it was only
 * raises the horizon more when it is pushed out (more false 1s). Unknown
 * (0, or before 1970) is 1: under every horizon there is.
 */
uint64_t vl_tomb_birth(const struct vl_ident *id)
{
	uint64_t ns = id->btime_nsec < NS ? id->btime_nsec : NS - 1;

	if (id->btime_sec <= 0)
		return id->btime_sec == 0 && ns != 0 ? ns : 1;
	if ((uint64_t)id->btime_sec >= UINT64_MAX / NS)
		return UINT64_MAX;
	return (uint64_t)id->btime_sec * NS + ns;
}

void vl_tomb_raise(struct vl_tomb *t, uint64_t h)
{
	VL_ASSERT_MINE(vl_tomb_region_lock(t));
	if (h > __atomic_load_n(&t->horizon, __ATOMIC_RELAXED))
		__atomic_store_n(&t->horizon, h, __ATOMIC_RELEASE);
}

void vl_tomb_add_fp(struct vl_tomb *t, uint64_t fp, uint64_t birth)
{
	uint64_t h = __atomic_load_n(&t->horizon, __ATOMIC_RELAXED);
	uint64_t *fps, *births;
	unsigned way = VL_TOMB_WAYS, oldest = 0;

	VL_ASSERT_MINE(vl_tomb_region_lock(t));
	if (fp == 0) /* (a moved table's, scribbled) */
		fp = 1;
	if (birth == 0)
		birth = 1;
	fps = t->fp[fp % VL_TOMB_SETS];
	births = t->birth[fp % VL_TOMB_SETS];
	if (h != 0 && birth <= h)
		return; /* under the horizon already */
	for (unsigned w = 0; w < VL_TOMB_WAYS; w++) {
		uint64_t f = __atomic_load_n(&fps[w], __ATOMIC_RELAXED);

		if (f == fp) {
			/* two identities of one fingerprint: whoever pushes it out covers both */
			if (births[w] < birth)
				births[w] = birth;
			return;
		}
		if (way == VL_TOMB_WAYS && (f == 0 || (h != 0 && births[w] <= h)))
			way = w; /* free, or covered by the horizon: goes for nothing */
		if (births[w] < births[oldest])
			oldest = w;
	}
	if (way == VL_TOMB_WAYS) {
		/* full: the first born goes, the newcomer included, over the horizon */
		__atomic_fetch_add(&t->pushed, 1, __ATOMIC_RELAXED);
		if (birth <= births[oldest]) {
			vl_tomb_raise(t, birth);
			return;
		}
		vl_tomb_raise(t, births[oldest]);
		way = oldest;
	}
	births[way] = birth;
	/* after the horizon: a reader that misses the one it replaces sees it raised */
	__atomic_store_n(&fps[way], fp, __ATOMIC_RELEASE);
	__atomic_fetch_add(&t->added, 1, __ATOMIC_RELAXED);
}

void vl_tomb_add(struct vl_tomb *t, const struct vl_ident *id)
{
	VL_ASSERT_MINE(vl_tomb_region_lock(t));
	vl_tomb_add_fp(t, vl_tomb_fp(id), vl_tomb_birth(id));
}

int vl_tomb_has(const struct vl_tomb *t, const struct vl_ident *id)
{
	uint64_t fp = vl_tomb_fp(id), h;
	const uint64_t *fps = t->fp[fp % VL_TOMB_SETS];

	for (unsigned w = 0; w < VL_TOMB_WAYS; w++)
		if (__atomic_load_n(&fps[w], __ATOMIC_ACQUIRE) == fp)
			return 1;
	/* after the fingerprints (tomb.h): never an older horizon than they were pushed out by */
	h = __atomic_load_n(&t->horizon, __ATOMIC_ACQUIRE);
	return h != 0 && vl_tomb_birth(id) <= h;
}
