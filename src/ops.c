/* SPDX-License-Identifier: MIT */
/*
 * ops.c - MARK and UNMARK: the lock protocol around the rules of ranges.c.
 *
 *   no lock:      guess the file's record (vl_file_probe)
 *   file lock:    check the guess: LIVE, sound, this identity; if it is
 *                 not, find (or make) the record under the region lock
 *     take a node of the file's chunk     (file lock only)
 *     the rules change the tree           (file lock only)
 *     punch, if a MARK merged into a purged range
 *     commit: LRU, nodes let go into their chunks, counters (file lock only)
 *     region lock, only if free at once: note who holds the file (MARK)
 *   no lock:      what the purge policy asks of a MARK (policy.h): the
 *                 budget, memory and tmpfs space
 *
 * So a MARK or UNMARK of a file that has a record naming its marker
 * takes no lock but the file's (and the region's when the region looks
 * full); two processes working on two files write no line in common
 * (DESIGN 10). The file lock is held from the first look at the tree to
 * the commit, so a purge of this file (which holds it across its punch) is
 * either wholly before or wholly after; see purge.c for why that keeps
 * THE INVARIANT.
 */
#include "ops.h"

#include "reentry.h"
#include "age.h"
#include "env.h"
#include "core/compiler.h"
#include "core/fault.h"
#include "core/index.h"
#include "core/tomb.h"
#include "evict.h"
#include "args.h"
#include "log.h"
#include "policy.h"
#include "punch.h"
#include "purge.h"
#include "file_route.h"
#include "region.h"
#include "this_process.h"
#include "sys.h"
#include "volatile.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RETRIES 64
#define EVICTIONS 2 /* times a MARK that finds the table full makes room and looks again */

/* A name that reaches fd's file now, for purgers in other processes. */
static int fd_path(int fd, char *buf, size_t size)
{
	static const char deleted[] = " (deleted)";
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = VL_SYSCALL("readlink fd path", vl_raw_readlinkat(AT_FDCWD, link, buf, size - 1));
	if (n <= 0 || (size_t)n >= size - 1 || buf[0] != '/')
		return 0;
	buf[n] = '\0';
	if ((size_t)n >= sizeof(deleted) - 1 &&
	    strcmp(buf + n - (sizeof(deleted) - 1), deleted) == 0)
		return 0;
	return (int)n;
}

/* Who holds the file: one slot per process, the others round-robin (region lock held). */
static void note_holder(const struct vl_region *r, struct vl_file *f, const struct vl_holder *h,
			const struct vl_stat *st)
{
	int32_t self = h->pid;
	int slot = -1;

	VL_ASSERT_HELD(r, &r->hdr->lock);
	for (int i = 0; i < VL_HOLDERS && slot < 0; i++)
		if (f->h.holders[i].pid == self)
			slot = i;
	for (int i = 0; i < VL_HOLDERS && slot < 0; i++)
		if (f->h.holders[i].pid == 0)
			slot = i;
	if (slot < 0) {
		slot = (int)((f->h.flags >> VL_FF_TURN_SHIFT) % VL_HOLDERS);
		f->h.flags += 1u << VL_FF_TURN_SHIFT;
	}
	f->h.holders[slot] = *h;
	if (st->nlink == 0)
		f->h.flags |= VL_FF_ANON;
	else
		f->h.flags &= ~VL_FF_ANON;
}

/*
 * Should this MARK look for a name of the file? Until one is tried
 * (note_path), once per record (region lock held).
 */
static int path_wanted(const struct vl_region *r, struct vl_file *f, const struct vl_stat *st)
{
	VL_ASSERT_HELD(r, &r->hdr->lock);
	return st->nlink != 0 && f->h.path_len == 0 && !(f->h.flags & VL_FF_PATH_TRIED) &&
	       !vl_file_holds_state(f);
}

struct found {
	uint32_t fi, gen;
};

/*
 * The record this thread found last, a guess checked as the probe's is:
 * a program marks and unmarks the same file again and again, and the
 * hash probe is then the same walk each time.
 */
static __thread struct {
	const struct vl_region *r;
	uint32_t fi;
} last_found __attribute__((tls_model("initial-exec")));

/*
 * Seen to be the file's, as the probe sees it, before its lock is taken:
 * a record of another file, kept locked by a stopped process, would make
 * this call wait and fail for a file it is not about.
 */
static uint32_t probe(const struct vl_region *r, const struct vl_ident *id)
{
	if (last_found.r == r && vl_file_seems(r, last_found.fi, id))
		return last_found.fi;
	return vl_file_probe(r, id);
}

static void found_last(const struct vl_region *r, uint32_t fi)
{
	last_found.r = r;
	last_found.fi = fi;
}

/*
 * The record the lock-free probe guessed, locked, if it is st's file. With
 * its lock held a LIVE record cannot be freed (that needs both locks), so
 * cannot become another file's; and its identity and sum were written
 * before the release store of its state that our acquire load reads.
 * 1 locked, 0 not (look for it under the region lock), or -errno from
 * the lock: a slot that looked like the file's is kept by a live process
 * (-EAGAIN: the bound is not spent twice), or the region is moving.
 */
static int lock_probed(const struct vl_region *r, const struct vl_stat *st, struct found *fd)
{
	uint32_t fi = probe(r, &st->id);
	struct vl_file *f;
	int err;

	if (fi == VL_NIL)
		return 0;
	err = vl_lock_file(r, fi);
	if (err)
		return err == -EAGAIN || err == -ESTALE ? err : 0;
	f = vl_file_at(r, fi);
	/*
	 * Its identity is the check: the record's sum guards purgers, who
	 * trust the identity they read; this caller has the file's own.
	 */
	if (__atomic_load_n(&f->h.state, __ATOMIC_ACQUIRE) == VL_FILE_LIVE &&
	    vl_ident_same(&f->h.ident, &st->id)) {
		fd->fi = fi;
		fd->gen = f->h.gen;
		found_last(r, fi);
		return 1;
	}
	vl_unlock_file(r, fi);
	return 0;
}

/*
 * Find file st->id (making its record if create), with the region lock
 * held. Only a record of exactly this identity is ours: one with our
 * device and inode number but another birth time is another file (gone,
 * or alive with a wrapped inode counter), and we never touch it.
 */
static int find_file(const struct vl_region *r, const struct vl_stat *st, int create,
		     struct found *out)
{
	uint32_t fi;
	int err = vl_file_lookup(r, &st->id, &fi);

	if (err == 0 && fi == VL_NIL && create)
		err = vl_file_new(r, &st->id, &fi);
	if (err)
		return err;
	out->fi = fi;
	out->gen = fi == VL_NIL ? 0 : vl_file_at(r, fi)->h.gen;
	return 0;
}

/* find_and_lock's way when the probe's guess is not the file's: under the region lock */
static VL_COLD int find_locked(const struct vl_region *r, const struct vl_stat *st, int create,
				struct found *fd)
{
	int err, evictions = 0;

	for (int tries = 0; tries < RETRIES; tries++) {
		struct vl_file *f;

		err = vl_lock_region(r);
		if (err)
			return err;
		err = find_file(r, st, create, fd);
		vl_unlock_region(r);
		/* a full table: free the records nobody can clear (evict.c), with no lock held */
		if (err == -ENOMEM && create && evictions++ < EVICTIONS && vl_evict(r) > 0)
			continue;
		if (err || fd->fi == VL_NIL)
			return err;

		f = vl_file_at(r, fd->fi);
		err = vl_lock_file(r, fd->fi);
		if (err)
			return err;
		/*
		 * A release (gen++) needs both locks, so the file lock we hold
		 * keeps the gen still; a publish may reuse a freed slot under the
		 * region lock alone, but leaves the gen as the release left it
		 * (vl_file_publish): these atomic reads see "freed since".
		 */
		if (__atomic_load_n(&f->h.gen, __ATOMIC_ACQUIRE) == fd->gen &&
		    __atomic_load_n(&f->h.state, __ATOMIC_ACQUIRE) == VL_FILE_LIVE) {
			found_last(r, fd->fi);
			return 0;
		}
		vl_unlock_file(r, fd->fi);
	}
	return -EAGAIN;
}

/*
 * Find the record of the file and lock it; make it if `create` (MARK).
 * The probe's guess is enough almost always; else the region lock finds
 * it for sure, and the record may be freed and reused between that and
 * the file lock: then its generation differs and we look again.
 * Returns 0 with the file locked, 0 with fd->fi == VL_NIL (UNMARK: no
 * record), or -errno.
 */
static int find_and_lock(const struct vl_region *r, const struct vl_stat *st, int create,
			 struct found *fd)
{
	int err = lock_probed(r, st, fd);

	if (err != 0)
		return err < 0 ? err : 0;
	return find_locked(r, st, create, fd);
}

/* reserve_when_full's look under the region lock: a sweep, then a steal */
static VL_COLD int sweep_and_steal(const struct vl_region *r, uint32_t fi, struct vl_ix_res *res,
				   int *lock_err)
{
	uint32_t found;
	int had;

	/*
	 * A region lock not had (a live holder kept it for the bound, or it is
	 * broken): no sweep, no steal; the caller says why, not ENOMEM, as
	 * there may be room it could not look for.
	 */
	if ((*lock_err = vl_lock_region(r)) != 0)
		return 0;
	/* full, it seems: find what killed processes lost, then what another file kept */
	had = vl_ix_reserve_swept(r, fi, res, &found);
	vl_unlock_region(r);
	vl_log("region full: %u free nodes found again%s", found, had ? "" : "; none to take");
	return had;
}

/*
 * reserve's way when neither what the file kept nor the region has
 * room. Still none: the files whose lock a dead process holds are repaired
 * (their PENDING nodes freed: a dead freer's chunk among them, which no
 * sweep may take while it cannot tell it from a live one's), and the look
 * made once more.
 */
static VL_COLD int reserve_when_full(const struct vl_region *r, uint32_t fi,
				      struct vl_ix_res *res, int *lock_err)
{
	int had = sweep_and_steal(r, fi, res, lock_err);

	if (!had && *lock_err == 0 && vl_repair_dead_holders(r, fi) > 0)
		had = sweep_and_steal(r, fi, res, lock_err);
	return had;
}

/*
 * A reservation for a change of file fi (its lock held), before anything
 * changes: what it kept, else from the region (no lock), else, the region
 * looking full, what a sweep finds, or what another file kept (the region
 * lock: one sweeper at a time, and the last room is anyone's). Returned
 * by value: on the MARK's path it stays in a register, as a node did.
 */
static VL_INLINE struct vl_ix_res reserve(const struct vl_region *r, uint32_t fi, int *lock_err)
{
	struct vl_ix_res res;

	VL_ASSERT_HELD(r, &vl_file_at(r, fi)->h.lock);
	*lock_err = 0;
	if (!vl_ix_reserve_kept(r, fi, &res) && !vl_ix_reserve_new(r, fi, &res))
		reserve_when_full(r, fi, &res, lock_err);
	return res;
}

/*
 * Who marked, for finish(): NULL for an UNMARK. fd is the descriptor
 * this process uses (to punch, to name the file); holder the process and
 * descriptor that purgers are to reach the file through: this process's
 * own, or the program's whose call `volatile run` serves (supervise.c).
 */
struct marker {
	int fd;
	struct vl_holder holder;
	const struct vl_stat *st;
	int want_path;
	int over_budget;
};

/*
 * Does the record name this holder already, with the file's name state?
 * What a MARK of a file it marked before finds: nothing to write.
 */
static int holder_known(const struct vl_file *f, const struct vl_holder *h,
			const struct vl_stat *st)
{
	uint32_t flags = __atomic_load_n(&f->h.flags, __ATOMIC_RELAXED);

	if (((flags & VL_FF_ANON) != 0) != (st->nlink == 0))
		return 0;
	for (int i = 0; i < VL_HOLDERS; i++)
		if (f->h.holders[i].pid == h->pid && f->h.holders[i].fd == h->fd)
			return 1;
	return 0;
}

/* finish's note of a marker the record does not name yet, if the region lock is free */
static VL_COLD void note_marker(const struct vl_region *r, struct vl_file *f, struct marker *m)
{
	if (vl_trylock_region(r) != 0)
		return;
	note_holder(r, f, &m->holder, m->st);
	m->want_path = path_wanted(r, f, m->st);
	VL_STEP("finish: holder noted, region locked");
	vl_unlock_region(r);
}

/*
 * Commit the change (after an error, none: the reservation is kept), and note
 * the marker. Only the file's lock is held: the commit needs no other
 * (pool.h). Who holds the file, and whether a path is wanted, are the
 * region lock's (purgers copy them under it): taken only when they
 * change, and only if free at once, as the change is made already and a
 * note is worth no wait; the next MARK notes what this one could not.
 */
static void finish(const struct vl_region *r, uint32_t fi, struct vl_change *c, int err,
		   struct vl_ix_res res, struct marker *m, uint64_t now_ms)
{
	struct vl_file *f = vl_file_at(r, fi);
	uint32_t now = vl_s_of_ms(now_ms);

	if (err)
		memset(c, 0, sizeof(*c));
	/* a MARK's range takes the clock the call read (DESIGN 10); an UNMARK's takes none */
	c->age = vl_age_stamp(vl_age_now_of(now_ms));
	vl_ix_commit_res(r, fi, c, &res);
	VL_STEP("finish: committed");
	/* in use: not one to evict (evict.c) */
	if (__atomic_load_n(&f->h.alive_at, __ATOMIC_RELAXED) != now)
		__atomic_store_n(&f->h.alive_at, now, __ATOMIC_RELAXED);
	if (m == NULL)
		return;
	m->over_budget = vl_over_budget(r, fi);
	if (!holder_known(f, &m->holder, m->st) ||
	    (m->st->nlink != 0 && f->h.path_len == 0 && !(f->h.flags & VL_FF_PATH_TRIED)))
		note_marker(r, f, m);
}

/*
 * Give the record a name that reaches the file, once (file lock held).
 * The region lock only if it is free at once (as in finish): else the
 * next MARK tries again.
 */
static VL_COLD void note_path(const struct vl_region *r, uint32_t fi, int fdnum)
{
	struct vl_file *f = vl_file_at(r, fi);
	char path[VL_PATH_MAX];
	int plen = fd_path(fdnum, path, sizeof(path));

	VL_ASSERT_HELD(r, &vl_file_at(r, fi)->h.lock);
	if (vl_trylock_region(r) != 0)
		return;
	if (plen > 0 && f->h.path_len == 0 && !vl_file_holds_state(f)) {
		memcpy(f->path, path, (size_t)plen);
		f->h.path_len = (uint32_t)plen;
	}
	f->h.flags |= VL_FF_PATH_TRIED;
	vl_unlock_region(r);
}

/*
 * A MARK merged into a purged range: the new bytes and the ranges they
 * overlapped are punched, so the range's flag is true of them (DESIGN 3).
 * Through the caller's fd as the punching thread's own copy of the fd
 * table has it, checked there (punch.c): the number itself may name
 * another file by now. Not punched (a seccomp filter, the thread not
 * made, the fd another file's): the range stays flagged purged over
 * intact bytes, and its UNMARK says 1, the safe way (file lock held).
 */
static VL_COLD void punch_merged(const struct vl_region *r, uint32_t fi, int fdnum,
				 const struct vl_stat *st, uint64_t s, uint64_t e,
				 const struct vl_change *c)
{
	struct vl_extent x = { c->punch_start, c->punch_end };
	struct vl_gate gate;
	int done;

	VL_ASSERT_HELD(r, &vl_file_at(r, fi)->h.lock);
	/* as a purge's punch: through the gate (DESIGN 16), in a table nobody renumbers */
	vl_gate_init(&gate, r);
	done = vl_punch_fd(fdnum, &st->id, &x, 1, &gate);

	vl_log("mark [%llu, %llu) joins a purged range: punched [%llu, %llu): %s",
	       (unsigned long long)s, (unsigned long long)e, (unsigned long long)x.start,
	       (unsigned long long)x.end,
	       done == 1 ? "ok" : done < 0 ? strerror(-done) : "failed (flagged purged anyway)");
}

static int mark(const struct vl_region *r, int fdnum, const struct vl_caller *as, uint64_t s,
		uint64_t e, const struct vl_stat *st, uint64_t now_ms)
{
	struct found fd = { VL_NIL, 0 };
	struct marker m = { fdnum, as->holder, st, 0, 0 };
	struct vl_change c;
	struct vl_ix_res res;
	int err, lock_err;

	err = find_and_lock(r, st, 1, &fd);
	if (err)
		return err;
	res = reserve(r, fd.fi, &lock_err);
	VL_STEP("mark: spare taken, file locked");
	if (as->early != NULL && !vl_ix_reserved(&res)) {
		/*
		 * Answered early, a MARK must not fail after: with no node, one
		 * that needs one fails (ENOMEM, or why the region lock was not
		 * had), and one that needs none cannot be told apart before the
		 * change. Failed here, nothing changed: the caller is told so.
		 */
		err = lock_err != 0 ? lock_err : -ENOMEM;
	} else {
		/*
		 * With the file locked and a node had, no other process's change
		 * comes between. Not told (its caller killed meanwhile): not made.
		 */
		if (as->early != NULL)
			err = as->early(as->arg);
		if (err == 0) {
			err = vl_ix_mark(r, fd.fi, s, e, &res, &c);
			if (err == -ENOMEM && lock_err != 0)
				err = lock_err; /* no node, and the region lock was not had to look for one */
		}
	}
	VL_STEP("mark: tree changed, not committed");
	if (err == 0 && c.punch_end > c.punch_start)
		punch_merged(r, fd.fi, fdnum, st, s, e, &c);
	finish(r, fd.fi, &c, err, res, err ? NULL : &m, now_ms);
	VL_STEP("mark: committed, file locked");
	if (m.want_path)
		note_path(r, fd.fi, fdnum);
	vl_unlock_file(r, fd.fi);
	if (err)
		return err;
	vl_after_mark(r, &(struct vl_hint){ fd.fi, fd.gen, fdnum }, st, m.over_budget, now_ms);
	return 0;
}

/*
 * The region serves while an older one it could not take in may hold
 * records of this file (VL_BLIND, DESIGN 16): read after the change, with
 * the file's lock held, so that a settle that took the last of them in
 * (their records added under this lock) and then cleared it came before.
 */
static int blind(const struct vl_region *r)
{
	return __atomic_load_n(&r->hdr->fate.waiting, __ATOMIC_ACQUIRE) == VL_BLIND;
}

/*
 * *now_ms: the clock, read after the tree change (DESIGN 16: the age of
 * the region's last look is judged from a reading taken after it).
 */
static int unmark(const struct vl_region *r, uint64_t s, uint64_t e, const struct vl_stat *st,
		  const struct vl_caller *as, uint64_t *now_ms)
{
	struct found fd = { VL_NIL, 0 };
	struct vl_change c;
	struct vl_ix_res res;
	struct vl_file *f;
	int err, tomb, lock_err, whole;

	err = find_and_lock(r, st, 0, &fd);
	if (err)
		return err;
	/*
	 * No record: nothing of it is volatile, unless a record of it was
	 * forgotten with purged ranges (purge.c point 5, evict.c): then 1,
	 * as the tombstones tell; written before that record went, and seen
	 * since through the region lock under which find_and_lock found no
	 * record (they never lose an identity after: core/tomb.h). Or an
	 * older region left to its users may hold it (DESIGN 16).
	 */
	if (fd.fi == VL_NIL) {
		*now_ms = vl_now_ms();
		/* blind first: its clear comes after the horizon's raise (attach.c settled) */
		return blind(r) || vl_tomb_has(r->tomb, &st->id);
	}
	f = vl_file_at(r, fd.fi);
	VL_STEP("unmark: file locked");
	if (as != NULL && as->waits != NULL) {
		/* a caller gone: nothing made (ops.h) */
		err = as->waits(as->arg);
		if (err) {
			vl_unlock_file(r, fd.fi);
			return err;
		}
	}
	/* read now: finish may free the record; set before it was LIVE, never cleared */
	tomb = (__atomic_load_n(&f->h.flags, __ATOMIC_RELAXED) & VL_FF_TOMB) != 0;
	/* reserved from what the file kept once it splits a range (most do not) */
	err = vl_ix_unmark_reserving(r, fd.fi, s, e, &res, &c);
	if (err == -ENOMEM) { /* a split needs room: reserve, then do it all again */
		res = reserve(r, fd.fi, &lock_err);
		err = vl_ix_reserved(&res) ? vl_ix_unmark(r, fd.fi, s, e, &res, &c)
		      : lock_err != 0	   ? lock_err
					   : -ENOMEM;
	}
	VL_STEP("unmark: tree changed, not committed");
	*now_ms = vl_now_ms();
	/* what this region does not hold whole, an older one left to its users may have purged */
	whole = err == 0 && (uint64_t)-(c.d_vbytes + c.d_pbytes) == e - s;
	whole = whole || !blind(r);
	finish(r, fd.fi, &c, err, res, NULL, *now_ms);
	vl_unlock_file(r, fd.fi);
	/* an evicted file's every UNMARK says 1 (evict.c says why not fewer) */
	return err ? err : c.was_purged || tomb || !whole;
}

/*
 * UNMARK in this process's region, its answer standing only if the
 * region's last look at its name was read less than a second before a
 * reading taken after the change (vl_region_confirm, DESIGN 16): else
 * the process looks now, and if it followed to the region new processes
 * find, the UNMARK is made there too and says 1 if either did; where it
 * cannot be told, 1.
 */
static int unmark_here(struct vl_region **r, uint64_t s, uint64_t e, const struct vl_stat *st,
		       const struct vl_caller *as)
{
	struct vl_region *next;
	uint64_t now_ms;
	int ret, there, said = 0;

	ret = vl_region_get_unaged(r);
	if (ret)
		return ret;
	ret = unmark(*r, s, e, st, as, &now_ms);
	/* each region followed to is judged as the first was: three at most, then 1 */
	for (int hops = 0; ret >= 0; hops++) {
		said |= ret;
		switch (vl_region_confirm(*r, now_ms, &next)) {
		case 0:
			return said;
		case 1:
			if (hops == 2)
				return 1;
			vl_log("unmark: the region was no longer the one new processes find: "
			       "unmarked in that one too");
			*r = next;
			there = unmark(next, s, e, st, as, &now_ms);
			if (there < 0)
				return 1; /* unmarked in one region, not known in the other */
			ret = there;
			break;
		default:
			return 1;
		}
	}
	return ret;
}

int vl_volatile_fallocate_as(int fd, int mode, int64_t off, int64_t len,
			     const struct vl_caller *as)
{
	struct vl_region *r;
	struct vl_stat st;
	struct vl_caller self;
	int op, ret;

	ret = vl_enter();
	if (ret)
		return ret;
	op = vl_check_args(fd, mode, off, len, &st);
	if (op < 0) {
		ret = op;
	} else {
		/*
		 * ESTALE from a file lock: the region was being moved (move.c),
		 * nothing was changed; the next vl_region_get follows it.
		 */
		for (int tries = 0; tries < 2; tries++) {
			if (op == VL_OP_MARK) {
				/* the clock, read once for the call: vDSO reads add up on a pair */
				uint64_t now_ms = vl_now_ms();

				ret = vl_region_get_at(&r, now_ms);
				if (ret == 0 && as == NULL) {
					self.holder.pid = vl_self();
					self.holder.fd = fd;
					self.early = NULL;
					self.waits = NULL;
					as = &self;
				}
				if (ret == 0)
					ret = mark(r, fd, as, (uint64_t)off, (uint64_t)(off + len), &st,
						   now_ms);
			} else {
				ret = unmark_here(&r, (uint64_t)off, (uint64_t)(off + len), &st, as);
			}
			if (ret != -ESTALE)
				break;
		}
	}
	vl_leave();
	vl_log("%s fd %d [%lld, +%lld) -> %d%s%s", (mode & FALLOC_FL_MARK_VOLATILE) ? "mark" : "unmark", fd,
	       (long long)off, (long long)len, ret < 0 ? -1 : ret, ret < 0 ? " " : "",
	       ret < 0 ? strerror(-ret) : "");
	return ret;
}

