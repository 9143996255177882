/* SPDX-License-Identifier: MIT */
/*
 * policy.c - the purge decision (policy.h, DESIGN 6): goals for purge.c,
 * at a MARK and for the daemon, and in a pass which file a visit goes to
 * and how far it goes.
 */
#include "policy.h"

#include "core/compiler.h"
#include "core/index.h"
#include "core/pressure.h"
#include "log.h"
#include "sys.h"
#include "this_process.h"

int vl_relieve_memory(const struct vl_region *r, const struct vl_cgroup *cg,
		      const struct vl_hint *hint, int thorough, struct vl_memstate *ms,
		      uint64_t *threshold, struct vl_purge_report *rep)
{
	/* a hint: a MARK calls, and must not stall on the machine */
	struct vl_goal g = { .thorough = thorough, .bounded = hint != NULL,
			      .reason = VL_PURGE_MEMORY };
	int err = vl_memstate_read(cg, ms);

	if (err)
		return err;
	*threshold = vl_threshold_bytes(&vl_config()->min_available, ms->total);
	g.bytes = vl_purge_need(ms->available, *threshold, VL_MEMORY_ROOM);
	if (g.bytes == 0)
		return 0;
	vl_purge(r, &g, hint, rep);
	return 1;
}

int vl_relieve_tmpfs(const struct vl_region *r, uint64_t dev, uint64_t free_bytes,
		     uint64_t size_bytes, const struct vl_hint *hint, int thorough,
		     uint64_t *threshold, struct vl_purge_report *rep)
{
	struct vl_goal g = { .use_dev = 1, .dev = dev, .thorough = thorough, .bounded = hint != NULL,
			      .reason = VL_PURGE_TMPFS };

	*threshold = vl_threshold_bytes(&vl_config()->tmpfs_min_free, size_bytes);
	g.bytes = vl_purge_need(free_bytes, *threshold, 0);
	if (g.bytes == 0)
		return 0;
	vl_purge(r, &g, hint, rep);
	return 1;
}

/* ---- in a pass ------------------------------------------------------------------ */

/* What vl_choose_file leaves out, for vl_pick_oldest's callback. */
struct choosing {
	const struct vl_region *r;
	const struct vl_goal *g;
	uint32_t now, age_now;
	int (*set_aside)(void *ctx, uint32_t fi);
	void *ctx;
};

/* Was file fi found unreachable a moment ago? Then leave it be (a hint, read with no lock). */
static int resting(const struct vl_region *r, uint32_t fi, uint32_t now)
{
	uint32_t at = vl_file_at(r, fi)->h.checked_at;

	return at != 0 && now - at < VL_RECHECK;
}

/* Not worth trying in this pass: set aside by it, resting, or outside the goal. */
static int left_out(void *ctx, uint32_t fi)
{
	const struct choosing *c = ctx;

	return c->set_aside(c->ctx, fi) || resting(c->r, fi, c->now) ||
	       vl_goal_excludes(c->r, c->g, fi, c->age_now);
}

uint32_t vl_choose_file(const struct vl_region *r, const struct vl_goal *g, uint32_t now,
			uint32_t age_now, int (*set_aside)(void *ctx, uint32_t fi), void *ctx,
			uint32_t last, uint32_t *age, uint32_t *second)
{
	struct choosing c = { .r = r, .g = g, .now = now, .age_now = age_now,
			      .set_aside = set_aside, .ctx = ctx };

	return vl_pick_oldest(r, age_now, left_out, &c, last, age, second);
}

struct vl_u128 vl_volatile_guess(const struct vl_region *r)
{
	uint32_t slot = VL_TOKEN_SLOT(vl_self_token(r->serial));
	struct vl_totals t;

	/*
	 * Until the recount that empties every slot is made, the others hold
	 * what they held when the totals were made shared: all of them read
	 * (tests/shell/budget-slots.sh), as seldom as a recount is owed.
	 */
	if (__atomic_load_n(&vl_counters(r)->recount_owed, __ATOMIC_RELAXED) != 0)
		vl_totals_read(r, NULL, &t);
	else
		vl_totals_read(r, vl_proc_at(r, slot), &t); /* slot 0: no token yet, no deltas */
	return t.volatile_bytes;
}

uint32_t vl_region_oldest(const struct vl_region *r, uint64_t *unpurged)
{
	struct vl_totals t;
	uint32_t age, second;

	vl_age_attach();
	if (vl_pick_oldest(r, vl_age_now_of(vl_now_ms()), NULL, NULL, VL_NIL, &age, &second) ==
	    VL_NIL) {
		*unpurged = 0;
		return 0;
	}
	/*
	 * Every process's slot read, not this one's alone (vl_volatile_guess):
	 * its caller, a worker, commits nothing, and what it reports is all
	 * root knows of the region.
	 */
	vl_totals_read(r, NULL, &t);
	*unpurged = vl_u128_sat(&t.volatile_bytes);
	return age;
}

/* What vl_region_oldest_of leaves out, and the unpurged bytes of what it leaves in. */
struct oldest_of {
	const struct vl_region *r;
	const struct vl_goal *g;
	uint32_t age_now;
	uint64_t unpurged;
};

/*
 * vl_pick_oldest's callback: calls it once for each LIVE file that
 * publishes an age, so the bytes of those the goal leaves in are summed
 * in the same bounded walk (a file with no age has no unpurged range).
 */
static int not_of(void *ctx, uint32_t fi)
{
	struct oldest_of *o = ctx;
	uint64_t v;

	if (vl_goal_excludes(o->r, o->g, fi, o->age_now))
		return 1;
	v = __atomic_load_n(&vl_file_at(o->r, fi)->h.vbytes, __ATOMIC_RELAXED);
	o->unpurged = v > UINT64_MAX - o->unpurged ? UINT64_MAX : o->unpurged + v;
	return 0;
}

uint32_t vl_region_oldest_of(const struct vl_region *r, const struct vl_goal *g,
			     uint64_t *unpurged)
{
	struct oldest_of o = { .r = r, .g = g };
	uint32_t age, second;

	if (g == NULL)
		return vl_region_oldest(r, unpurged);
	vl_age_attach();
	o.age_now = vl_age_now_of(vl_now_ms());
	if (vl_pick_oldest(r, o.age_now, not_of, &o, VL_NIL, &age, &second) == VL_NIL) {
		*unpurged = 0;
		return 0;
	}
	*unpurged = o.unpurged;
	return age;
}

int vl_choice_stands(const struct vl_region *r, uint32_t fi, uint32_t age)
{
	VL_ASSERT_HELD(r, &vl_file_at(r, fi)->h.lock);
	return vl_ix_oldest_is(r, fi, age);
}

int vl_goal_met(const struct vl_region *r, const struct vl_goal *g,
		const struct vl_purge_report *rep)
{
	if (g->use_ceiling) {
		struct vl_u128 v = vl_volatile_guess(r);

		return vl_u128_cmp(&v, g->ceiling) <= 0;
	}
	return rep->bytes >= g->bytes;
}

/*
 * Is one of f's recorded holders one g->held_by accepts? Read with no
 * lock, each pid once: a pid the region's users wrote (DESIGN 22 says why
 * that is enough here); 0 or less is an empty slot.
 */
static int held(const struct vl_file *f, const struct vl_goal *g)
{
	for (int k = 0; k < VL_HOLDERS; k++) {
		int32_t pid = __atomic_load_n(&f->h.holders[k].pid, __ATOMIC_RELAXED);

		if (pid > 0 && g->held_by(g->held_ctx, pid))
			return 1;
	}
	return 0;
}

int vl_goal_excludes(const struct vl_region *r, const struct vl_goal *g, uint32_t fi,
		     uint32_t now)
{
	const struct vl_file *f = vl_file_at(r, fi);

	return (g->use_dev && __atomic_load_n(&f->h.ident.dev, __ATOMIC_RELAXED) != g->dev) ||
	       vl_goal_too_young(g, __atomic_load_n(&f->h.oldest, __ATOMIC_RELAXED), now) ||
	       (g->held_by != NULL && !held(f, g));
}

int vl_batch_more(const struct vl_region *r, const struct vl_goal *g,
		  const struct vl_purge_report *rep, uint32_t fi, const struct vl_ix_aged *next,
		  uint32_t second, uint32_t now, uint64_t bytes)
{
	uint32_t age;

	VL_ASSERT_HELD(r, &vl_file_at(r, fi)->h.lock);
	if (!vl_ix_aged_age(r, next, &age) || bytes >= VL_BATCH_BYTES || vl_goal_met(r, g, rep))
		return 0;
	/* ties taken: within a tick the order across files is not known (DESIGN 6) */
	return second == 0 || !vl_age_older(second, age, now);
}

/* ---- at a MARK ------------------------------------------------------------------ */

VL_COLD void vl_enforce_budget(const struct vl_region *r, const struct vl_hint *h)
{
	const struct vl_config *cfg = vl_config();
	struct vl_goal g = { .ceiling = cfg->budget, .use_ceiling = 1, .bounded = 1,
			      .reason = VL_PURGE_BUDGET };
	struct vl_purge_report rep;

	vl_purge(r, &g, h, &rep);
	vl_log("budget %llu: purged %u ranges, %llu bytes", (unsigned long long)cfg->budget,
	       rep.ranges, (unsigned long long)rep.bytes);
}

/* when a MARK of this process last looked at memory and tmpfs space */
uint64_t vl_pressure_checked_ms;

/* Purge oldest first while available memory is below VOLATILE_MIN_AVAILABLE. */
static VL_COLD void relieve_memory(const struct vl_region *r, const struct vl_hint *h)
{
	struct vl_cgroup cg;
	struct vl_memstate ms;
	int have_cg = vl_own_cgroup(&cg) == 0;

	for (int round = 0; round < VL_MARK_MEMORY_ROUNDS; round++) {
		struct vl_purge_report rep;
		uint64_t threshold;

		if (vl_relieve_memory(r, have_cg ? &cg : NULL, h, 0, &ms, &threshold, &rep) <= 0)
			return;
		vl_log("low memory: %llu bytes available%s < %llu: purged %u ranges, %llu bytes",
		       (unsigned long long)ms.available, ms.by_cgroup ? " in the cgroup" : "",
		       (unsigned long long)threshold, rep.ranges, (unsigned long long)rep.bytes);
		if (rep.bytes == 0)
			return;
	}
}

/* Purge this tmpfs's own ranges while its free space is below VOLATILE_TMPFS_MIN_FREE. */
static VL_COLD void relieve_tmpfs(const struct vl_region *r, const struct vl_hint *h,
				  const struct vl_stat *st)
{
	struct vl_purge_report rep;
	uint64_t free_bytes, size, threshold;

	if (vl_tmpfs_space(h->fd, &free_bytes, &size) != 0)
		return; /* a memfd: no size limit */
	if (vl_relieve_tmpfs(r, st->id.dev, free_bytes, size, h, 0, &threshold, &rep))
		vl_log("tmpfs nearly full: %llu bytes free < %llu: purged %u ranges, %llu bytes",
		       (unsigned long long)free_bytes, (unsigned long long)threshold, rep.ranges,
		       (unsigned long long)rep.bytes);
}

VL_COLD void vl_relieve_pressure(const struct vl_region *r, const struct vl_hint *h,
				 const struct vl_stat *st)
{
	const struct vl_config *cfg = vl_config();

	if (vl_threshold_on(&cfg->min_available))
		relieve_memory(r, h);
	if (vl_threshold_on(&cfg->tmpfs_min_free))
		relieve_tmpfs(r, h, st);
}
