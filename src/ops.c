/*
 * ops.c - MARK and UNMARK: the lock protocol around the rules of ranges.c.
 *
 *   region lock:  find (or make) the file's record, note who holds it
 *   file lock:    check the record is still that file (generation)
 *     region lock:  take a spare node (MARK)
 *     the rules change the tree                  (file lock only)
 *     punch, if a MARK merged into a purged range (file lock only)
 *     region lock:  commit: LRU, free nodes, counters
 *
 * The file lock is held from the first look at the tree to the commit, so
 * a purge of this file (which holds it across its punch) is either wholly
 * before or wholly after; see purge.c for why that keeps THE INVARIANT.
 */
#include "ops.h"

#include "env.h"
#include "core/fault.h"
#include "core/pool.h"
#include "core/ranges.h"
#include "ident.h"
#include "log.h"
#include "pressure.h"
#include "purge.h"
#include "reach.h"
#include "region.h"
#include "sys.h"
#include "volatile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RETRIES 64

static __thread int in_shim __attribute__((tls_model("initial-exec")));

int vl_enter(void)
{
	if (__atomic_load_n(&in_shim, __ATOMIC_RELAXED))
		return -EINTR;
	__atomic_store_n(&in_shim, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return 0;
}

void vl_leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&in_shim, 0, __ATOMIC_RELAXED);
}

/* A name that reaches fd's file now, for purgers in other processes. */
static int fd_path(int fd, char *buf, size_t size)
{
	static const char deleted[] = " (deleted)";
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, size - 1);
	if (n <= 0 || (size_t)n >= size - 1 || buf[0] != '/')
		return 0;
	buf[n] = '\0';
	if ((size_t)n >= sizeof(deleted) - 1 &&
	    strcmp(buf + n - (sizeof(deleted) - 1), deleted) == 0)
		return 0;
	return (int)n;
}

/* Who holds the file: one slot per process, the others round-robin. */
static void note_holder(struct vl_file *f, int fd, const struct vl_stat *st)
{
	int32_t self = vl_self();
	int slot = -1;

	for (int i = 0; i < VL_HOLDERS && slot < 0; i++)
		if (f->h.holders[i].pid == self)
			slot = i;
	for (int i = 0; i < VL_HOLDERS && slot < 0; i++)
		if (f->h.holders[i].pid == 0)
			slot = i;
	if (slot < 0) {
		slot = (int)((f->h.flags >> 8) % VL_HOLDERS);
		f->h.flags += 1u << 8;
	}
	f->h.holders[slot].pid = self;
	f->h.holders[slot].fd = fd;
	if (st->nlink == 0)
		f->h.flags |= VL_FF_ANON;
	else
		f->h.flags &= ~VL_FF_ANON;
}

struct found {
	uint32_t fi, gen;
};

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
	int fresh, err = vl_file_lookup(r, &st->id, &fi);

	if (err)
		return err;
	if (fi == VL_NIL && create) {
		if (vl_room_for_file(r) != 0)
			return -ENOMEM; /* the file system of the region is full */
		fi = vl_file_create(r, &st->id, &fresh);
		if (fi == VL_NIL)
			return -ENOMEM;
		if (fresh) {
			err = vl_file_lock_init(r, fi);
			if (err)
				return err;
		}
	}
	out->fi = fi;
	out->gen = fi == VL_NIL ? 0 : vl_file_at(r, fi)->h.gen;
	return 0;
}

/*
 * Find the record of the file and lock it. fdnum is the caller's fd for a
 * MARK (the record is made if missing, and the fd noted as a holder), -1
 * for an UNMARK. The record may be freed and reused
 * between the two locks: then its generation differs and we look again.
 * Returns 0 with the file locked, 0 with fd->fi == VL_NIL (UNMARK: no
 * record), or -errno. For a MARK of a named file whose path is not known
 * yet, *plen gets the length of a path written to path (else stays 0).
 */
static int find_and_lock(const struct vl_region *r, const struct vl_stat *st, int fdnum,
			 struct found *fd, char *path, int *plen)
{
	int mark = fdnum >= 0, err;

	for (int tries = 0; tries < RETRIES; tries++) {
		struct vl_file *f;
		int want_path = 0;

		err = vl_lock_region(r);
		if (err)
			return err;
		err = find_file(r, st, mark, fd);
		if (err == 0 && mark) {
			f = vl_file_at(r, fd->fi);
			note_holder(f, fdnum, st);
			want_path = st->nlink > 0 && f->h.path_len == 0 &&
				    !(f->h.flags & (VL_FF_PATH_TRIED | VL_FF_ASHMEM));
			if (want_path)
				f->h.flags |= VL_FF_PATH_TRIED;
		}
		vl_unlock_region(r);
		if (err || fd->fi == VL_NIL)
			return err;
		if (want_path)
			*plen = fd_path(fdnum, path, VL_PATH_MAX);

		f = vl_file_at(r, fd->fi);
		err = vl_lock_file(r, fd->fi);
		if (err)
			return err;
		/*
		 * A release (gen++) needs both locks, so the file lock we hold
		 * keeps the gen still; a create may reuse a freed slot under the
		 * region lock alone, but leaves the gen as the release left it
		 * (vl_file_create): these atomic reads see "freed since".
		 */
		if (__atomic_load_n(&f->h.gen, __ATOMIC_ACQUIRE) == fd->gen &&
		    __atomic_load_n(&f->h.state, __ATOMIC_ACQUIRE) == VL_FILE_LIVE)
			return 0;
		vl_unlock_file(r, fd->fi);
	}
	return -EAGAIN;
}

static int changed(const struct vl_change *c)
{
	return c->freed != VL_NIL || c->split != VL_NIL || c->keep_new || c->keep_aged ||
	       c->d_vbytes || c->d_pbytes || c->d_ranges;
}

/* Commit (or, after an error, undo nothing but the spare), free an empty record. */
static void finish(const struct vl_region *r, uint32_t fi, struct vl_change *c, int err,
		   uint32_t spare)
{
	struct vl_file *f = vl_file_at(r, fi);

	if (err)
		memset(c, 0, sizeof(*c));
	if (!changed(c) && spare == VL_NIL && (f->h.nranges != 0 || (f->h.flags & VL_FF_ASHMEM)))
		return; /* nothing shared to touch: spare the region lock */
	if (vl_lock_region(r) != 0)
		return;
	vl_commit(r, fi, c, spare);
	VL_STEP("finish: committed, region locked");
	/* an ashmem region's record holds its state: it lives as long as the region */
	if (f->h.nranges == 0 && !(f->h.flags & VL_FF_ASHMEM))
		vl_file_release(r, fi);
	vl_unlock_region(r);
}

static void enforce_budget(const struct vl_region *r, const struct found *fd, int fdnum)
{
	const struct vl_config *cfg = vl_config();
	struct vl_goal g = { .ceiling = cfg->budget, .use_ceiling = 1 };
	struct vl_hint h = { fd->fi, fd->gen, fdnum };
	struct vl_purge_report rep;

	if (!cfg->has_budget || r->hdr->c.volatile_bytes <= cfg->budget)
		return;
	vl_purge(r, &g, &h, &rep);
	vl_log("budget %llu: purged %u ranges, %llu bytes", (unsigned long long)cfg->budget,
	       rep.ranges, (unsigned long long)rep.bytes);
}

/*
 * Memory and tmpfs space are looked at on MARK at most every 250 ms per
 * process (a coarse clock read and a compare the rest of the time), so
 * the check costs nothing a benchmark of MARK can see.
 */
#define PRESSURE_EVERY_MS 250
static uint64_t pressure_checked_ms;

static int pressure_due(void)
{
	struct timespec ts;
	uint64_t now, last;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	last = __atomic_load_n(&pressure_checked_ms, __ATOMIC_RELAXED);
	if (now - last < PRESSURE_EVERY_MS)
		return 0;
	/* one thread checks; the others go on */
	return __atomic_compare_exchange_n(&pressure_checked_ms, &last, now, 0, __ATOMIC_RELAXED,
					   __ATOMIC_RELAXED);
}

/* Purge oldest first while available memory is below VOLATILE_MIN_AVAILABLE. */
static void relieve_memory(const struct vl_region *r, const struct vl_hint *h)
{
	struct vl_cgroup cg;
	struct vl_memstate ms;
	int have_cg = vl_own_cgroup(&cg) == 0;

	/* freed memory shows at once; a few rounds bound the work if it does not */
	for (int round = 0; round < 4; round++) {
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
static void relieve_tmpfs(const struct vl_region *r, const struct vl_hint *h,
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

static void enforce_pressure(const struct vl_region *r, const struct found *fd, int fdnum,
			     const struct vl_stat *st)
{
	const struct vl_config *cfg = vl_config();
	struct vl_hint h = { fd->fi, fd->gen, fdnum };

	if (!vl_threshold_on(&cfg->min_available) && !vl_threshold_on(&cfg->tmpfs_min_free))
		return;
	if (!pressure_due())
		return;
	if (vl_threshold_on(&cfg->min_available))
		relieve_memory(r, &h);
	if (vl_threshold_on(&cfg->tmpfs_min_free))
		relieve_tmpfs(r, &h, st);
}

static int mark(const struct vl_region *r, int fdnum, uint64_t s, uint64_t e,
		const struct vl_stat *st)
{
	struct found fd = { VL_NIL, 0 };
	struct vl_change c;
	struct vl_file *f;
	char path[VL_PATH_MAX];
	int plen = 0, err;
	uint32_t spare;

	err = find_and_lock(r, st, fdnum, &fd, path, &plen);
	if (err)
		return err;
	f = vl_file_at(r, fd.fi);
	err = vl_lock_region(r);
	if (err) {
		vl_unlock_file(r, fd.fi);
		return err;
	}
	if (plen > 0) {
		memcpy(f->path, path, (size_t)plen);
		f->h.path_len = (uint32_t)plen;
	}
	spare = vl_room_for_node(r) == 0 ? vl_node_alloc(r, fd.fi) : VL_NIL;
	vl_unlock_region(r);

	VL_STEP("mark: spare taken, file locked");
	err = vl_ranges_mark(r, &f->h.root, fd.fi, s, e, spare, &c);
	VL_STEP("mark: tree changed, not committed");
	if (err == 0 && c.punch_end > c.punch_start) {
		/*
		 * Merged into a purged range: the flag must not lie (SPEC 4). The
		 * fd is the caller's, checked a moment ago; checked again here, in
		 * case another thread of the caller reused its number.
		 */
		int perr = vl_fd_is(fdnum, &st->id)
				   ? vl_sys_punch(fdnum, c.punch_start, c.punch_end - c.punch_start)
				   : -EBADF;

		vl_log("mark [%llu, %llu) joins a purged range: punched [%llu, %llu): %s",
		       (unsigned long long)s, (unsigned long long)e,
		       (unsigned long long)c.punch_start, (unsigned long long)c.punch_end,
		       perr ? strerror(-perr) : "ok");
	}
	finish(r, fd.fi, &c, err, spare);
	VL_STEP("mark: committed, file locked");
	vl_unlock_file(r, fd.fi);
	if (err)
		return err;
	enforce_budget(r, &fd, fdnum);
	enforce_pressure(r, &fd, fdnum, st);
	return 0;
}

static int unmark(const struct vl_region *r, uint64_t s, uint64_t e, const struct vl_stat *st)
{
	struct found fd = { VL_NIL, 0 };
	struct vl_change c;
	struct vl_file *f;
	uint32_t spare = VL_NIL;
	int err;

	err = find_and_lock(r, st, -1, &fd, NULL, NULL);
	if (err || fd.fi == VL_NIL)
		return err; /* no record: nothing of it is volatile */
	f = vl_file_at(r, fd.fi);
	err = vl_ranges_unmark(r, &f->h.root, fd.fi, s, e, VL_NIL, &c);
	if (err == -ENOMEM) { /* a split needs a node: get one, then do it all again */
		err = vl_lock_region(r);
		if (err == 0) {
			spare = vl_room_for_node(r) == 0 ? vl_node_alloc(r, fd.fi) : VL_NIL;
			vl_unlock_region(r);
			err = spare == VL_NIL
				      ? -ENOMEM
				      : vl_ranges_unmark(r, &f->h.root, fd.fi, s, e, spare, &c);
		}
	}
	VL_STEP("unmark: tree changed, not committed");
	finish(r, fd.fi, &c, err, spare);
	vl_unlock_file(r, fd.fi);
	return err ? err : c.was_purged;
}

int vl_volatile_fallocate(int fd, int mode, int64_t off, int64_t len)
{
	struct vl_region *r;
	struct vl_stat st;
	int op, ret;

	ret = vl_enter();
	if (ret)
		return ret;
	op = vl_check(fd, mode, off, len, &st);
	if (op < 0) {
		ret = op;
	} else {
		ret = vl_region_get(&r);
		if (ret == 0)
			ret = op == VL_OP_MARK ? mark(r, fd, (uint64_t)off, (uint64_t)(off + len), &st)
					       : unmark(r, (uint64_t)off, (uint64_t)(off + len), &st);
	}
	vl_leave();
	vl_log("%s fd %d [%lld, +%lld) -> %d%s%s", (mode & FALLOC_FL_MARK_VOLATILE) ? "mark" : "unmark", fd,
	       (long long)off, (long long)len, ret < 0 ? -1 : ret, ret < 0 ? " " : "",
	       ret < 0 ? strerror(-ret) : "");
	return ret;
}
