/* SPDX-License-Identifier: MIT */
/*
 * purge.c - the purge protocol, and forgetting the files that are gone.
 *
 * Why a purge can never destroy bytes that UNMARK has promised intact:
 *
 *   1. Every change to a file's ranges (MARK, UNMARK, purge) happens with
 *      that file's lock held, from the first look at the tree to the last
 *      write; a purge also keeps it for the whole punch.
 *   2. A purge flags the range purged (and commits that) BEFORE it punches,
 *      and punches only the extent the range has at that moment, read
 *      under the lock. (It may flag several ranges of the file at once,
 *      then punch each: the lock is held from the first flag to the last
 *      punch.)
 *   So an UNMARK of those bytes runs either wholly before the purge took
 *   the lock (the range is gone or trimmed when the purge looks again, and
 *   nothing of it is punched), or wholly after the punch finished (it sees
 *   the purged flag and returns 1). No punch lands after an UNMARK returned.
 *
 * Why a purge never punches another file:
 *
 *   3. The victim is chosen with no lock (policy.c vl_choose_file), by
 *      the age its file published, and remembered by (file slot, slot
 *      generation, age). After taking the file lock, the generation,
 *      state and record's sum are checked again (a freed and reused slot
 *      fails the generation, a scribbled record its sum: skipped), then
 *      the fields that steer the visit and that no sum covers
 *      (vl_ix_check_steering: the age order's ends are ranges of this file,
 *      `oldest` its head's age; mended if not, and chosen again once;
 *      wrong again in the pass: skipped), then the head's age against the
 *      chosen one (vl_choice_stands; else another caller changed it:
 *      choose again). What is flagged and punched is read from nodes whose sum,
 *      state and file are checked (vl_ix_purge_next).
 *   4. The fd punched through refers to the file's identity (device,
 *      inode, birth time, generation), checked in the table the punch
 *      goes through, which nobody but the punch changes: an fd we opened
 *      or took, checked once we have it; the fd a caller handed to
 *      fallocate (the budget and pressure purges of its own file), never
 *      through its number in the host's table, which any host thread may
 *      renumber, but through the punching thread's copy of the table,
 *      checked there (punch.c vl_punch_fd). No thread can change what a
 *      checked fd names before its punch; where that thread cannot be
 *      made, nothing is punched.
 *
 * And why no punch lands through a region new processes no longer find:
 *
 *   4b. Every punch goes through the gate (attach.c): the permit, then the
 *      look at the region's name, held across the punches (DESIGN 16).
 *
 * And why forgetting a file never makes UNMARK lie:
 *
 *   5. Unpurged ranges may always be forgotten: their bytes are intact, they
 *      just stop being volatile. A record is never freed with a purged
 *      range in it unless its identity was first put in the tombstones
 *      (core/tomb.h), under both its locks (vl_drop_file_locked, evict.c):
 *      from then on an UNMARK of that identity that finds no record says
 *      1, and a record made for it again is TOMB. The tombstones never
 *      lose an identity (the horizon). So when a file is taken for gone
 *      does not matter to the invariant: it only decides when a slot is
 *      freed. The heuristics for that stay: the kernel's ESTALE (inode_gone.c),
 *      or /proc seeing no holder twice VL_GONE_GRACE seconds apart (file_route.c);
 *      /proc cannot see every holder (an fd in flight in a Unix socket, one
 *      in an io_uring's fixed files, a process of another user or pid
 *      namespace), and a holder it missed that UNMARKs later gets a 1.
 *
 * The region lock is never held across a punch or a reopen: only the one
 * file's lock is (DESIGN 13). And why a pass ends, whatever the region
 * holds: rounds_max.
 */
#include "purge.h"

#include "age.h"
#include "core/fault.h"
#include "core/index.h"
#include "core/tomb.h"
#include "env.h"
#include "inode_gone.h"
#include "log.h"
#include "policy.h"
#include "file_route.h"
#include "punch.h"
#include "region.h"
#include "this_process.h"
#include "sys.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#define SKIP_MAX 64
#define OPEN_MAX 8
#define VL_GONE_GRACE 3  /* seconds between the two sightings of a gone file */

/*
 * The test suite's copy may be told a shorter grace (env.h), so that a
 * test waits for the purge that forgets rather than sleeping 3 s out.
 */
static uint32_t gone_grace(void)
{
	return vl_test_seconds("VOLATILE_FAULT_GONE_GRACE", VL_GONE_GRACE);
}

struct pass {
	const struct vl_region *r;
	const struct vl_hint *hint;
	struct vl_reach_ctx ctx;
	uint32_t now;
	uint32_t age_now; /* the age clock (age.h), which ages are read against */
	uint32_t grace; /* VL_GONE_GRACE, or the test suite's (gone_grace) */
	uint32_t skip[SKIP_MAX];
	int nskip;
	uint32_t mended[SKIP_MAX]; /* files whose age order a visit mended (lru_mend) */
	int nmended;
	int waited; /* a file lock was kept from us for the whole bound (lock_for_visit) */
	struct {
		uint32_t fi, gen;
		struct vl_way way; /* an O_PATH fd: closing it releases no lock */
	} open[OPEN_MAX];
	int nopen;
};

static void init_pass(struct pass *p, const struct vl_region *r, const struct vl_hint *hint,
		      int thorough, int bounded)
{
	memset(p, 0, sizeof(*p));
	vl_age_attach();
	p->r = r;
	p->hint = hint;
	p->ctx.thorough = thorough;
	p->ctx.bounded = bounded;
	uint64_t ms = vl_now_ms();

	p->now = vl_s_of_ms(ms);
	p->age_now = vl_age_now_of(ms);
	p->grace = gone_grace();
}

static void end_pass(struct pass *p)
{
	for (int i = 0; i < p->nopen; i++)
		vl_raw_close(p->open[i].way.opath);
}

static int skipped(const struct pass *p, uint32_t fi)
{
	for (int i = 0; i < p->nskip; i++)
		if (p->skip[i] == fi)
			return 1;
	return 0;
}

static void skip(struct pass *p, uint32_t fi)
{
	if (p->nskip < SKIP_MAX && !skipped(p, fi))
		p->skip[p->nskip++] = fi;
}

static int mended_before(const struct pass *p, uint32_t fi)
{
	for (int i = 0; i < p->nmended; i++)
		if (p->mended[i] == fi)
			return 1;
	return 0;
}

/* The pass's own leave-out, for vl_choose_file: the files it skipped. */
static int set_aside(void *ctx, uint32_t fi)
{
	return skipped(ctx, fi);
}

/*
 * The caller's own fd (MARK's budget and pressure purges of its own file),
 * or a way reached before, remembered with the slot's generation: a slot
 * reused means another file. NULL if neither.
 */
static const struct vl_way *cached_way(struct pass *p, uint32_t fi, uint32_t gen, int *theirs)
{
	*theirs = p->hint != NULL && p->hint->fi == fi && p->hint->gen == gen;
	if (*theirs)
		return NULL;
	for (int i = 0; i < p->nopen; i++)
		if (p->open[i].fi == fi && p->open[i].gen == gen)
			return &p->open[i].way;
	return NULL;
}

static const struct vl_way *keep_way(struct pass *p, uint32_t fi, uint32_t gen,
				     const struct vl_way *w)
{
	if (p->nopen == OPEN_MAX) {
		vl_raw_close(p->open[0].way.opath);
		memmove(&p->open[0], &p->open[1], sizeof(p->open[0]) * (OPEN_MAX - 1));
		p->nopen--;
	}
	p->open[p->nopen].fi = fi;
	p->open[p->nopen].gen = gen;
	p->open[p->nopen].way = *w;
	return &p->open[p->nopen++].way;
}

/* What a reach learnt about file fi goes into its record (region lock taken). */
static void note_reach(const struct vl_region *r, uint32_t fi, uint32_t gen,
		       const struct vl_reached *got, uint32_t gone_since, uint32_t checked_at)
{
	struct vl_file *f = vl_file_at(r, fi);

	if (vl_lock_region(r) != 0)
		return;
	if (f->h.gen == gen && f->h.state == VL_FILE_LIVE && vl_file_ok(r, f)) {
		if (got != NULL && got->holder.pid > 0)
			f->h.holders[VL_HOLDERS - 1] = got->holder;
		/* an ashmem record keeps its state where a path would go */
		if (got != NULL && got->path_len > 0 && got->path_len < VL_PATH_MAX &&
		    !vl_file_holds_state(f)) {
			memcpy(f->path, got->path, got->path_len);
			f->h.path_len = got->path_len;
		}
		f->h.gone_since = gone_since;
		f->h.checked_at = checked_at;
	}
	vl_unlock_region(r);
}

int vl_drop_file_locked(const struct vl_region *r, uint32_t fi, uint32_t gen, int how)
{
	int unpurged_only = how == VL_DROP_UNPURGED;
	struct vl_file *f = vl_file_at(r, fi);
	struct vl_change c;
	int err;

	VL_ASSERT_HELD(r, &f->h.lock);
	err = vl_lock_region(r);
	if (err)
		return err;
	if (f->h.gen != gen || f->h.state != VL_FILE_LIVE || !vl_file_ok(r, f)) {
		err = -ESTALE;
	} else if (how == VL_DROP_UNLESS_PURGED && f->h.npurged != 0) {
		err = -EBUSY;
	} else {
		/*
		 * Point 5: the tombstone before any purged range goes, while
		 * the record still answers for the file (a crash in between
		 * leaves both: a false 1 at worst). The count says whether one
		 * is purged; what the clear met says it too, should the count
		 * be wrong: before the slot is freed either way. A flagged record
		 * leaves one too, whatever it holds (vl_file_flagged).
		 */
		int tomb = vl_file_tomb_before(f, unpurged_only);

		if (tomb)
			vl_tomb_add(r->tomb, &f->h.ident);
		VL_STEP("drop: tombstone set (if purged), record kept");
		err = unpurged_only ? vl_ix_forget_unpurged(r, fi, &c) : vl_ix_clear(r, fi, &c);
		if (err == 0 && vl_file_tomb_after(tomb, unpurged_only, c.d_purged))
			vl_tomb_add(r->tomb, &f->h.ident);
		if (err == 0) {
			vl_ix_commit(r, fi, &c);
			/* an ashmem region's record (its name, size, prot) goes only with it */
			if (f->h.nranges == 0 && !(unpurged_only && vl_file_holds_state(f)))
				vl_file_release(r, fi);
			else
				err = -EBUSY; /* purged ranges stay */
		}
	}
	vl_unlock_region(r);
	return err;
}

int vl_drop_file(const struct vl_region *r, uint32_t fi, uint32_t gen, int how)
{
	int err = vl_lock_file(r, fi);

	if (err)
		return err;
	err = vl_drop_file_locked(r, fi, gen, how);
	vl_unlock_file(r, fi);
	return err;
}

/*
 * No route reached file t (reach said err). Forget what may be forgotten
 * (point 5 above); else leave it alone for a while. Returns 1 if its
 * records are gone.
 */
static int unreachable(struct pass *p, const struct vl_target *t, int err,
		       struct vl_purge_report *rep)
{
	const struct vl_region *r = p->r;
	uint32_t since = vl_file_at(r, t->fi)->h.gone_since;
	int proof;

	/*
	 * When a slot may be freed (point 5: the invariant does not rest on
	 * it; a purged range leaves a tombstone whatever is decided here).
	 * The kernel's word first, where it will give it (inode_gone.h): an inode
	 * that no longer exists cannot come back, so that needs no second
	 * sighting; one that exists is not gone, whatever /proc showed (a
	 * memfd in flight, a holder in another PID namespace). Else /proc,
	 * twice, VL_GONE_GRACE s apart: a guess, which keeps a memfd in
	 * flight for a moment its record, not its answer.
	 */
	proof = vl_gone_by_handle(&t->id);
	if (proof == 1 && vl_drop_file(r, t->fi, t->gen, VL_DROP_ALL) == 0) {
		vl_log("file %u is gone (no such inode): its ranges are forgotten (purged ones "
		       "leave a tombstone)", t->fi);
		rep->files_dropped++;
		return 1;
	}
	if (proof == 0) {
		err = -ESRCH;
		since = 0;
	}
	if (err == -ENOENT && since != 0 && p->now - since >= p->grace &&
	    vl_drop_file(r, t->fi, t->gen, VL_DROP_ALL) == 0) {
		vl_log("file %u is gone: its ranges are forgotten (purged ones leave a tombstone)",
		       t->fi);
		rep->files_dropped++;
		return 1;
	}
	if (vl_drop_file(r, t->fi, t->gen, VL_DROP_UNPURGED) == 0) {
		vl_log("file %u unreachable: its unpurged ranges are forgotten", t->fi);
		rep->files_dropped++;
		return 1;
	}
	/* a file seen gone stays so: only reaching it, or its inode, clears that */
	note_reach(r, t->fi, t->gen, NULL, since ? since : err == -ENOENT ? p->now : 0, p->now);
	vl_log("file %u unreachable (%s): left alone for now", t->fi, strerror(-err));
	return 0;
}

/*
 * Inside a MARK (its budget, its pressure) only cheap routes are tried
 * (file_route.h, DESIGN 13), so not reaching a file proves nothing: some
 * process may hold it that only a look at every process's fds would find.
 * Its records are left as they are, unpurged ranges included (forgetting
 * them would take a live file's ranges out of every purge), for the
 * daemon and `volatile purge`, which look everywhere. The pass goes on to
 * the next oldest range it can reach. Only the kernel's word that the
 * file is gone, cheap where it is given (inode_gone.h: CAP_DAC_READ_SEARCH),
 * lets its records go now.
 *
 * And this process does not look for it again for VL_RECHECK seconds:
 * while its unpurged bytes keep the region over a budget, every MARK
 * would. Remembered here, by identity, not in the record's checked_at,
 * which would make the daemon and `volatile purge` skip it too. One
 * thread at a time, by a try-lock: a thread that finds it taken looks as
 * if nothing were remembered (a fork child that finds it taken for good
 * only looks every time).
 */
#define UNREACHED 64

static struct {
	struct vl_ident id;
	uint32_t at; /* vl_now_s(), never 0; 0: a free slot */
} unreached[UNREACHED];
static int unreached_busy;

static int unreached_lately(const struct vl_ident *id, uint32_t now)
{
	int hit = 0;

	if (__atomic_exchange_n(&unreached_busy, 1, __ATOMIC_ACQUIRE))
		return 0;
	for (int i = 0; i < UNREACHED && !hit; i++)
		hit = unreached[i].at != 0 && now - unreached[i].at < VL_RECHECK &&
		      vl_ident_same(&unreached[i].id, id);
	__atomic_store_n(&unreached_busy, 0, __ATOMIC_RELEASE);
	return hit;
}

static void unreached_note(const struct vl_ident *id, uint32_t now)
{
	int slot = 0;

	if (__atomic_exchange_n(&unreached_busy, 1, __ATOMIC_ACQUIRE))
		return;
	for (int i = 0; i < UNREACHED; i++) {
		if (unreached[i].at != 0 && vl_ident_same(&unreached[i].id, id)) {
			slot = i;
			break;
		}
		if (unreached[i].at < unreached[slot].at)
			slot = i; /* a free slot, else the oldest */
	}
	unreached[slot].id = *id;
	unreached[slot].at = now;
	__atomic_store_n(&unreached_busy, 0, __ATOMIC_RELEASE);
}

/* No cheap route reached file t (bounded). Returns 1 if its records are gone. */
static int bounded_unreached(struct pass *p, const struct vl_target *t,
			     struct vl_purge_report *rep)
{
	if (vl_gone_by_handle(&t->id) == 1 &&
	    vl_drop_file(p->r, t->fi, t->gen, VL_DROP_ALL) == 0) {
		vl_log("file %u is gone (no such inode): its ranges are forgotten", t->fi);
		rep->files_dropped++;
		return 1;
	}
	unreached_note(&t->id, p->now);
	vl_log("file %u: no cheap route reaches it; left to the daemon and `volatile purge`",
	       t->fi);
	return 0;
}

/*
 * A way to file t, or NULL: the caller's own fd (*theirs), skipped, or
 * dropped. Nothing is opened for I/O here (file_route.c): only O_PATH fds.
 */
static const struct vl_way *way_for(struct pass *p, const struct vl_target *t,
				    struct vl_purge_report *rep, int *theirs)
{
	const struct vl_way *w = cached_way(p, t->fi, t->gen, theirs);
	struct vl_reached got;
	struct vl_way found;
	int fd;

	if (w != NULL || *theirs)
		return w;
	if (p->ctx.bounded && unreached_lately(&t->id, p->now)) {
		skip(p, t->fi);
		rep->files_skipped++;
		return NULL;
	}
	fd = vl_reach(t, &p->ctx, &got);
	if (fd >= 0) {
		found.opath = fd;
		found.via = got.via;
		if (got.holder.pid > 0 || got.path_len > 0 || t->checked_at || t->gone_since)
			note_reach(p->r, t->fi, t->gen, &got, 0, 0);
		return keep_way(p, t->fi, t->gen, &found);
	}
	if (p->ctx.bounded ? !bounded_unreached(p, t, rep) : !unreachable(p, t, fd, rep)) {
		skip(p, t->fi);
		rep->files_skipped++;
	}
	return NULL;
}

/* What a visit, or a step of one, comes to; GO: on to the visit's next step. */
enum { PURGED, RETRY, STOP, GO };

/*
 * Flag the file's oldest range and the ones after it in age, as far as
 * the goal wants and while they are older than every other file's
 * oldest (vl_batch_next; its lock held). Returns how many, their extents
 * in ext.
 */
static int flag_batch(const struct vl_region *r, const struct vl_goal *g, struct vl_file *f,
		      uint32_t fi, uint32_t second, uint32_t now, struct vl_extent *ext,
		      struct vl_purge_report *rep)
{
	struct vl_counters *k = vl_counters(r);
	struct vl_ix_aged a;
	uint64_t bytes = 0;
	int got = 0;

	VL_ASSERT_HELD(r, &f->h.lock);
	/* the first: the file's oldest, which the choice was made by (checked: lock_and_check) */
	vl_ix_oldest(r, fi, &a);
	do {
		struct vl_change c;

		if (vl_ix_purge_next(r, fi, &a, &c) != 0)
			break;
		vl_ix_commit(r, fi, &c);
		__atomic_fetch_add(&k->purges, 1, __ATOMIC_RELAXED);
		vl_u128_add_shared(&k->purged_total, c.punch_end - c.punch_start);
		ext[got].start = c.punch_start;
		ext[got].end = c.punch_end;
		rep->bytes += c.punch_end - c.punch_start;
		rep->ranges++;
		bytes += c.punch_end - c.punch_start;
		got++;
	} while (vl_batch_next(r, g, rep, fi, &a, second, now, bytes, got));
	return got;
}

static int skip_file(struct pass *p, uint32_t fi, struct vl_purge_report *rep)
{
	skip(p, fi);
	rep->files_skipped++;
	return p->nskip < SKIP_MAX ? RETRY : STOP;
}

/*
 * File fi's age order failed vl_ix_check_steering (its lock held): err 1, its
 * published age was wrong and is its head's now; -EUCLEAN, an end of the
 * order is not its own: its tree and age order are rebuilt from the
 * nodes that name it, as after a holder's death (the region lock too,
 * as vl_ix_repair asks).
 */
static void lru_mend(const struct vl_region *r, uint32_t fi, int err)
{
	VL_ASSERT_HELD(r, &vl_file_at(r, fi)->h.lock);

	if (err == 1) {
		vl_log("file %u: its published age was not its oldest range's: mended", fi);
		return;
	}
	if (vl_lock_region(r) != 0) {
		vl_log("file %u: its age order is unsound, not repaired (region lock)", fi);
		return;
	}
	vl_ix_repair(r, fi, vl_age_now_of(vl_now_ms()));
	vl_unlock_region(r);
	vl_log("file %u: its age order was unsound: repaired", fi);
}

/*
 * The file's lock, for a visit. A pass waits the lock bound
 * (VOLATILE_LOCK_WAIT) once at most: after a lock a live holder kept for
 * all of it (a stopped holder, or a lock word scribbled to name a live
 * process), it takes only locks that are free at once, and skips the
 * files whose are not (-EBUSY; a holder gone is then repaired by the next
 * taker, not by this pass). So 64 such words cost a pass one wait, not 64.
 */
static int lock_for_visit(struct pass *p, uint32_t fi)
{
	int err;

	if (!p->waited) {
		err = vl_lock_file(p->r, fi);
		p->waited = err == -EAGAIN;
		return err;
	}
	err = vl_trylock_file(p->r, fi);
	/* what vl_lock_file checks after its take (a mover takes every file lock after setting it) */
	if (err == 0 && __atomic_load_n(&p->r->hdr->fate.retired, __ATOMIC_SEQ_CST) != 0) {
		vl_unlock_file(p->r, fi);
		return -ESTALE;
	}
	return err;
}

/* What one visit knows of the file it chose. */
struct visit {
	struct vl_file *f;
	struct vl_target t;    /* its identity and ways, copied under the region lock */
	const struct vl_way *w;
	int theirs;            /* reached through the caller's own fd (p->hint) */
	uint32_t age, second;  /* as vl_choose_file chose it */
};

/*
 * Step 1, no lock: the file whose oldest range is the oldest (policy.c);
 * then, under the region lock, its record checked and what reaches it
 * copied (the ways to reach it are the region lock's, pool.h).
 */
static int choose(struct pass *p, const struct vl_goal *g, struct visit *v,
		  struct vl_purge_report *rep)
{
	const struct vl_region *r = p->r;
	uint32_t fi, gen;
	int sound;

	/* a MARK's own file last of those its age ties with (vl_pick_oldest) */
	fi = vl_choose_file(r, g, p->now, p->age_now, set_aside, p,
			    p->hint != NULL ? p->hint->fi : VL_NIL, &v->age, &v->second);
	if (fi == VL_NIL)
		return STOP;
	/*
	 * The age limit (DESIGN 22) on the age chosen by, which the file's
	 * head is checked to have under its lock (vl_choice_stands): the
	 * leave-out read the age once before, and it may have changed since
	 * (another caller's change: choose again). The batch stops at the limit.
	 */
	if (vl_goal_too_young(g, v->age, p->age_now))
		return RETRY;
	v->second = vl_goal_second(g, v->second, p->age_now);
	v->f = vl_file_at(r, fi);
	gen = __atomic_load_n(&v->f->h.gen, __ATOMIC_ACQUIRE);
	if (vl_lock_region(r) != 0)
		return STOP;
	sound = v->f->h.state == VL_FILE_LIVE && v->f->h.gen == gen && vl_file_ok(r, v->f);
	if (sound)
		vl_target_copy(r, fi, &v->t);
	vl_unlock_region(r);

	if (!sound) { /* a record we cannot read: its identity is not to be trusted */
		vl_log("file %u fails validation: not purged", fi);
		return skip_file(p, fi, rep);
	}
	return GO;
}

/* Step 2, no lock: a way to the file, and a thread that may punch through it. */
static int reach(struct pass *p, struct visit *v, struct vl_purge_report *rep)
{
	v->w = way_for(p, &v->t, rep, &v->theirs);
	if (v->w == NULL && !v->theirs)
		return p->nskip < SKIP_MAX ? RETRY : STOP;
	if (!vl_punch_ready()) {
		vl_log("file %u: this thread may not make the punching thread (seccomp); "
		       "left to others", v->t.fi);
		return skip_file(p, v->t.fi, rep);
	}
	return GO;
}

/*
 * File fi's age order failed vl_ix_check_steering with err: mend it and let go of
 * its lock. Mended, the file may be chosen again by what it publishes
 * now, once: found wrong a second time in the pass, it is skipped.
 */
static int mend_and_choose_again(struct pass *p, uint32_t fi, int err,
				  struct vl_purge_report *rep)
{
	int again = mended_before(p, fi);

	lru_mend(p->r, fi, err);
	vl_unlock_file(p->r, fi);
	if (again || p->nmended == SKIP_MAX)
		return skip_file(p, fi, rep);
	p->mended[p->nmended++] = fi;
	return RETRY;
}

/*
 * Step 3: the file's lock, and under it the checks again: the slot (its
 * generation, state and sum), the fields that steer the visit, the
 * choice. GO with the lock held; anything else without it.
 */
static int lock_and_check(struct pass *p, struct visit *v, struct vl_purge_report *rep)
{
	const struct vl_region *r = p->r;
	int err = lock_for_visit(p, v->t.fi);

	if (err) {
		/* a holder that does not let go (stopped?): the file waits, the others do not */
		vl_log("file %u: not locked (%s): skipped", v->t.fi, strerror(-err));
		return err == -EAGAIN || err == -EBUSY ? skip_file(p, v->t.fi, rep) : STOP;
	}
	if (v->f->h.gen != v->t.gen || v->f->h.state != VL_FILE_LIVE || !vl_file_ok(r, v->f)) {
		/* freed, or another file's, or scribbled, while we were away */
		vl_unlock_file(r, v->t.fi);
		return skip_file(p, v->t.fi, rep);
	}
	/*
	 * What steers this visit (its age order's ends, the age it published)
	 * is in no sum: checked here, where it is used, and mended (DESIGN 13).
	 */
	err = vl_ix_check_steering(r, v->t.fi);
	if (err != 0)
		return mend_and_choose_again(p, v->t.fi, err, rep);
	if (!vl_choice_stands(r, v->t.fi, v->age)) {
		/*
		 * A MARK, UNMARK or purge of it came between (its age order is
		 * sound): choose again. Each such round is another caller's
		 * change; vl_purge bounds them.
		 */
		vl_unlock_file(r, v->t.fi);
		return RETRY;
	}
	return GO;
}

/*
 * The k flagged extents, punched through the gate (DESIGN 16): not through
 * a region new processes no longer find, as they may have said "intact" of
 * these bytes from the one they find. The gate (the permit, then that
 * look) is opened in the punching thread and held across the punches;
 * closed, nothing is punched and the ranges stay flagged purged: UNMARK
 * says 1, the safe way. Returns the punches made, or -errno.
 */
static int punch_batch(const struct pass *p, const struct visit *v,
		       const struct vl_extent *ext, int k)
{
	struct vl_gate gate;

	vl_gate_init(&gate, p->r);
	/* the caller's own fd is checked again there, in a table nobody renumbers */
	return v->theirs ? vl_punch_fd(p->hint->fd, &v->t.id, ext, k, &gate)
			 : vl_punch_way(v->w, &v->t.id, ext, k, &gate);
}

/* Step 4, the file's lock held, and let go at the end: flag the batch, then punch it. */
static int flag_and_punch(struct pass *p, const struct vl_goal *g, struct visit *v,
			  struct vl_purge_report *rep)
{
	const struct vl_region *r = p->r;
	struct vl_extent ext[VL_BATCH];
	int err, k;

	VL_ASSERT_HELD(r, &v->f->h.lock);
	/*
	 * The caller's fd is looked at here only not to flag what its punch
	 * would then miss: the punch checks it again where it cannot change.
	 */
	k = (v->theirs && !vl_fd_is(p->hint->fd, &v->t.id))
		    ? 0
		    : flag_batch(r, g, v->f, v->t.fi, v->second, p->age_now, ext, rep);
	if (k == 0) {
		/* the caller's fd is another file now, or the tree is corrupt */
		vl_unlock_file(r, v->t.fi);
		vl_log("file %u: not purged (fd changed, or validation failed)", v->t.fi);
		return skip_file(p, v->t.fi, rep);
	}
	VL_STEP("purge: flagged purged, file locked");

	err = punch_batch(p, v, ext, k);
	if (err == -ESTALE)
		vl_log("file %u: the region is no longer the one new processes find (or its "
		       "permit is not had): not punched", v->t.fi);
	else if (err != k)
		vl_log("file %u: %d of %d punches made%s%s (flagged purged anyway)", v->t.fi,
		       err < 0 ? 0 : err, k, err < 0 ? ": " : "", err < 0 ? strerror(-err) : "");
	vl_log("purged file %u: %d range%s from [%llu, %llu)", v->t.fi, k, k == 1 ? "" : "s",
	       (unsigned long long)ext[0].start, (unsigned long long)ext[0].end);
	vl_unlock_file(r, v->t.fi);
	return PURGED;
}

/*
 * One visit: the steps of DESIGN 13 in their order, each check next to
 * the lock it needs (choose, reach, lock and check again, flag and
 * punch); the proof reads it top to bottom. Unless the goal is met.
 */
static int purge_one(struct pass *p, const struct vl_goal *g, struct vl_purge_report *rep)
{
	struct visit v;
	int step;

	if (vl_goal_met(p->r, g, rep))
		return STOP;
	step = choose(p, g, &v, rep);
	if (step == GO)
		step = reach(p, &v, rep);
	if (step == GO)
		step = lock_and_check(p, &v, rep);
	if (step == GO)
		step = flag_and_punch(p, g, &v, rep);
	return step;
}

/*
 * The rounds of one pass (DESIGN 13). A round flags at least one unpurged
 * range purged (the region has had node_hwm - 1 nodes at most), skips a
 * file (SKIP_MAX of them, then the pass stops), mends a file's age order
 * (once per file in a pass, SKIP_MAX of them at most), drops a file's
 * records (file_hwm - 1 of them at most), or finds the file it chose
 * changed by another caller in between (a RETRY that only a change by
 * someone else makes). So a pass alone in the region makes at most
 * node_hwm + file_hwm + 2 x SKIP_MAX rounds; racing changes get as many
 * again, then the pass ends, its goal maybe not met (the next MARK over a
 * budget purges again). Both marks are clamped into the region's
 * capacity: a scribbled mark can only end a pass early. Each round reads
 * every file record once (vl_choose_file) and BATCH ranges at most, and makes its
 * system calls.
 */
static uint64_t rounds_max(const struct vl_region *r)
{
	uint32_t nodes = __atomic_load_n(&r->hdr->c.node_hwm, __ATOMIC_RELAXED);

	nodes = nodes < r->node_cap ? nodes : r->node_cap;
	return 2 * ((uint64_t)nodes + vl_file_hwm(r) + 2 * SKIP_MAX);
}

int vl_purge(const struct vl_region *r, const struct vl_goal *goal, const struct vl_hint *hint,
	     struct vl_purge_report *rep)
{
	struct pass p;
	uint64_t rounds = 0, limit;

	memset(rep, 0, sizeof(*rep));
	if (vl_region_fresh(r) != 1) {
		vl_log("purge: the region is no longer the one new processes find: nothing purged");
		return 0;
	}
	init_pass(&p, r, hint, goal->thorough, goal->bounded);
	/* no age read in the pass may have wrapped: those near it are brought up first */
	vl_ages_tend_now(r, vl_now_ms());
	limit = rounds_max(r);
	while (rounds++ < limit && purge_one(&p, goal, rep) != STOP)
		;
	if (rounds > limit)
		vl_log("purge: %llu rounds, the most a pass makes: ended",
		       (unsigned long long)limit);
	end_pass(&p);
	if (rep->ranges > 0) {
		struct vl_self_id me;

		vl_purge_log_add(&r->hdr->log, vl_now_ms(), rep->bytes, rep->ranges,
				 vl_self_id(&me) == 0 ? (int32_t)me.pid : 0, goal->reason);
	}
	return 0;
}

static int collect(const struct vl_region *r, struct vl_purge_report *rep, int ashmem_only)
{
	struct pass p;
	uint32_t hwm;

	memset(rep, 0, sizeof(*rep));
	init_pass(&p, r, NULL, !ashmem_only, 0);
	if (vl_lock_region(r) != 0)
		return -EUCLEAN;
	hwm = vl_file_hwm(r);
	vl_unlock_region(r);

	for (uint32_t fi = 1; fi < hwm; fi++) {
		struct vl_target t;
		struct vl_file *f = vl_file_at(r, fi);
		int sound, theirs;

		if (vl_lock_region(r) != 0)
			break;
		sound = f->h.state == VL_FILE_LIVE && vl_file_ok(r, f) &&
			(!ashmem_only || vl_file_holds_state(f));
		if (sound)
			vl_target_copy(r, fi, &t);
		vl_unlock_region(r);
		if (!sound)
			continue;
		/* reached: alive (its O_PATH fd is kept until the end of the pass) */
		way_for(&p, &t, rep, &theirs);
	}
	end_pass(&p);
	return 0;
}

int vl_collect(const struct vl_region *r, struct vl_purge_report *rep)
{
	return collect(r, rep, 0);
}

int vl_collect_ashmem(const struct vl_region *r, struct vl_purge_report *rep)
{
	return collect(r, rep, 1);
}
