/*
 * purge.c - the purge protocol.
 *
 * Why a purge can never destroy bytes that UNMARK has promised intact:
 *
 *   1. Every change to a file's ranges (MARK, UNMARK, purge) happens with
 *      that file's lock held, from the first look at the tree to the last
 *      write; a purge also keeps it for the whole punch.
 *   2. A purge flags the range purged (and commits that) BEFORE it punches,
 *      and punches only the extent the range has at that moment, read
 *      under the lock.
 *   So an UNMARK of those bytes runs either wholly before the purge took
 *   the lock (the range is gone or trimmed when the purge looks again, and
 *   nothing of it is punched), or wholly after the punch finished (it sees
 *   the purged flag and returns 1). No punch lands after an UNMARK returned.
 *
 * Why a purge never punches another file:
 *
 *   3. The victim is chosen under the region lock, but only remembered by
 *      (file slot, slot generation, node slot, node age). After taking the
 *      file lock, all four are checked again; a freed and reused slot fails
 *      the generation or age check.
 *   4. The fd punched through is verified to refer to the file's identity
 *      (device, inode, birth time) after it was opened (reach.c), so a
 *      reused pid, fd number or inode number is caught. The verified fd is
 *      ours: a concurrent close elsewhere cannot change what it refers to.
 *
 * The region lock is never held across a punch or a reopen: only the one
 * file's lock is (SPEC section 9).
 */
#include "purge.h"

#include "core/pool.h"
#include "core/ranges.h"
#include "log.h"
#include "reach.h"
#include "region.h"
#include "sys.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#define SKIP_MAX 64
#define OPEN_MAX 8

struct pass {
	const struct vl_region *r;
	const struct vl_hint *hint;
	struct vl_reach_ctx ctx;
	uint32_t skip[SKIP_MAX];
	int nskip;
	struct {
		uint32_t fi, gen;
		int fd;
	} open[OPEN_MAX];
	int nopen;
};

static int skipped(const struct pass *p, uint32_t fi)
{
	for (int i = 0; i < p->nskip; i++)
		if (p->skip[i] == fi)
			return 1;
	return 0;
}

static int done(const struct vl_region *r, const struct vl_goal *g,
		const struct vl_purge_report *rep)
{
	if (g->use_ceiling)
		return r->hdr->c.volatile_bytes <= g->ceiling;
	return rep->bytes >= g->bytes;
}

/* The oldest unpurged range not in a skipped file (region lock held). */
static uint32_t pick(const struct pass *p)
{
	const struct vl_region *r = p->r;
	uint32_t n = r->hdr->c.lru_head, steps = 0;

	while (n != VL_NIL && n < r->node_cap && steps++ < r->node_cap) {
		if (!skipped(p, vl_node_file(vl_node_at(r, n))))
			return n;
		n = vl_node_at(r, n)->next;
	}
	return VL_NIL;
}

/* Remember the generation with the fd: a slot reused means another file. */
static int cached_fd(struct pass *p, uint32_t fi, uint32_t gen)
{
	if (p->hint != NULL && p->hint->fi == fi && p->hint->gen == gen)
		return p->hint->fd;
	for (int i = 0; i < p->nopen; i++)
		if (p->open[i].fi == fi && p->open[i].gen == gen)
			return p->open[i].fd;
	return -1;
}

static void keep_fd(struct pass *p, uint32_t fi, uint32_t gen, int fd)
{
	if (p->nopen == OPEN_MAX) {
		close(p->open[0].fd);
		memmove(&p->open[0], &p->open[1], sizeof(p->open[0]) * (OPEN_MAX - 1));
		p->nopen--;
	}
	p->open[p->nopen].fi = fi;
	p->open[p->nopen].gen = gen;
	p->open[p->nopen].fd = fd;
	p->nopen++;
}

static void remember_holder(const struct vl_region *r, uint32_t fi, uint32_t gen,
			    const struct vl_holder *h)
{
	struct vl_file *f = vl_file_at(r, fi);

	if (h->pid <= 0 || vl_lock_region(r) != 0)
		return;
	if (f->h.gen == gen && f->h.state != VL_FILE_FREE)
		f->h.holders[VL_HOLDERS - 1] = *h;
	vl_unlock_region(r);
}

int vl_drop_file(const struct vl_region *r, uint32_t fi, uint32_t gen, int unpurged_only)
{
	struct vl_file *f = vl_file_at(r, fi);
	struct vl_change c;
	int err;

	err = vl_lock_file(r, fi);
	if (err)
		return err;
	err = vl_lock_region(r);
	if (err)
		goto out;
	if (f->h.gen != gen || f->h.state == VL_FILE_FREE) {
		err = -ESTALE;
	} else if (unpurged_only && f->h.pbytes != 0) {
		err = -EBUSY;
	} else {
		err = vl_ranges_clear(r, &f->h.root, fi, &c);
		if (err == 0) {
			vl_commit(r, fi, &c, VL_NIL);
			vl_file_release(r, fi);
		}
	}
	vl_unlock_region(r);
out:
	vl_unlock_file(r, fi);
	return err;
}

/*
 * No process reaches file t. Forgetting its unpurged ranges is always
 * safe (the bytes are intact; they just stop being volatile). Forgetting
 * a purged range is safe only if the file is certainly gone: else a later
 * UNMARK would say "intact" over zeros. That certainty we grant only to a
 * nameless file (memfd) that no process we can see holds or maps.
 * Returns whether the records were dropped.
 */
static int drop_unreachable(const struct vl_region *r, const struct vl_target *t, int reach_err)
{
	int certain = reach_err == -ENOENT && (t->flags & VL_FF_ANON);

	if (reach_err == -EDEADLK)
		return 0;
	return vl_drop_file(r, t->fi, t->gen, !certain) == 0;
}

/* Get an fd for file fi, or skip (or drop) it. Returns fd, or -1. */
static int fd_for(struct pass *p, struct vl_target *t, struct vl_purge_report *rep)
{
	struct vl_holder found;
	int fd = cached_fd(p, t->fi, t->gen), err;

	if (fd >= 0)
		return fd;
	fd = vl_reach(t, &p->ctx, &found);
	if (fd >= 0) {
		keep_fd(p, t->fi, t->gen, fd);
		if (found.pid > 0)
			remember_holder(p->r, t->fi, t->gen, &found);
		return fd;
	}
	err = fd;
	if (drop_unreachable(p->r, t, err)) {
		vl_log("file %u is gone: its ranges are forgotten", t->fi);
		rep->files_dropped++;
		return -1;
	}
	vl_log("file %u unreachable (%s): skipped", t->fi, strerror(-err));
	if (p->nskip < SKIP_MAX)
		p->skip[p->nskip++] = t->fi;
	rep->files_skipped++;
	return -1;
}

enum { PURGED, RETRY, STOP };

/* One victim: choose, reach, lock, check again, flag, punch. */
static int purge_one(struct pass *p, const struct vl_goal *g, struct vl_purge_report *rep)
{
	const struct vl_region *r = p->r;
	struct vl_target t;
	struct vl_change c;
	struct vl_file *f;
	uint32_t n, seq;
	int fd, err, stale;

	if (vl_lock_region(r) != 0)
		return STOP;
	n = done(r, g, rep) ? VL_NIL : pick(p);
	if (n == VL_NIL) {
		vl_unlock_region(r);
		return STOP;
	}
	seq = vl_node_at(r, n)->seq;
	vl_target_copy(r, vl_node_file(vl_node_at(r, n)), &t);
	stale = vl_file_at(r, t.fi)->h.state == VL_FILE_STALE;
	vl_unlock_region(r);

	if (stale) { /* its inode number was reused: the file is gone */
		if (vl_drop_file(r, t.fi, t.gen, 0) == 0)
			rep->files_dropped++;
		else if (p->nskip < SKIP_MAX)
			p->skip[p->nskip++] = t.fi;
		return RETRY;
	}
	fd = fd_for(p, &t, rep);
	if (fd < 0)
		return p->nskip < SKIP_MAX ? RETRY : STOP;

	f = vl_file_at(r, t.fi);
	if (vl_lock_file(r, t.fi) != 0)
		return STOP;
	if (vl_lock_region(r) != 0) {
		vl_unlock_file(r, t.fi);
		return STOP;
	}
	if (f->h.gen != t.gen || vl_node_file(vl_node_at(r, n)) != t.fi ||
	    vl_node_at(r, n)->seq != seq || vl_node_purged(vl_node_at(r, n))) {
		/* changed while we were away: choose again */
		vl_unlock_region(r);
		vl_unlock_file(r, t.fi);
		return RETRY;
	}
	if (vl_ranges_purge(r, &f->h.root, t.fi, n, &c) != 0) {
		/* corrupt: leave this file alone rather than guess */
		vl_unlock_region(r);
		vl_unlock_file(r, t.fi);
		vl_log("file %u fails validation: not purged", t.fi);
		if (p->nskip < SKIP_MAX)
			p->skip[p->nskip++] = t.fi;
		rep->files_skipped++;
		return p->nskip < SKIP_MAX ? RETRY : STOP;
	}
	vl_commit(r, t.fi, &c, VL_NIL);
	r->hdr->c.purges++;
	r->hdr->c.purged_total += c.punch_end - c.punch_start;
	vl_unlock_region(r);

	err = vl_sys_punch(fd, c.punch_start, c.punch_end - c.punch_start);
	vl_unlock_file(r, t.fi);
	if (err)
		vl_log("punch of file %u [%llu, %llu) failed: %s (flagged purged anyway)", t.fi,
		       (unsigned long long)c.punch_start, (unsigned long long)c.punch_end,
		       strerror(-err));
	else
		vl_log("purged file %u [%llu, %llu)", t.fi, (unsigned long long)c.punch_start,
		       (unsigned long long)c.punch_end);
	rep->bytes += c.punch_end - c.punch_start;
	rep->ranges++;
	return PURGED;
}

int vl_purge(const struct vl_region *r, const struct vl_goal *goal, const struct vl_hint *hint,
	     struct vl_purge_report *rep)
{
	struct pass p;
	uint64_t rounds = 0, limit;

	memset(rep, 0, sizeof(*rep));
	memset(&p, 0, sizeof(p));
	p.r = r;
	p.hint = hint;
	/* every round purges, drops or skips something, or a racer changed
	 * the LRU under us; bound the retries anyway */
	limit = 4ull * r->node_cap + SKIP_MAX;
	while (rounds++ < limit && purge_one(&p, goal, rep) != STOP)
		;
	for (int i = 0; i < p.nopen; i++)
		close(p.open[i].fd);
	return 0;
}
