/* SPDX-License-Identifier: MIT */
/*
 * attach.c - this process's region: attached at first use, checked once a
 * second to be the one new processes find, followed when it is not (its
 * records moved into the new one, move.c), and a new region's settling
 * (it waits until every older region of its name is moved in). The
 * region file itself is made, checked and mapped by region.c.
 */
#include "region.h"

#include "env.h"
#include "lock.h"
#include "core/compiler.h"
#include "core/fault.h"
#include "core/pool.h"
#include "log.h"
#include "move.h"
#include "reach.h"
#include "self.h"
#include "sys.h"
#include "where.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

/* ---- this process's region ------------------------------------------------ */

/*
 * The regions this process has used. One is current; the others were
 * left when their name stopped leading to them (move.c), and stay mapped
 * for as long as the process runs: another thread may still be inside
 * one, and will see it retired at its next file lock.
 */
#define SLOTS 16
#define CHECK_EVERY_MS 1000 /* is the region still the one new processes find? */
#define SETTLE_EVERY_MS 200 /* a waiting region: are its old ones moved in yet? */

struct slot {
	struct vl_region r;
	char path[PATH_MAX];
};

static struct slot slots[SLOTS];
static int nslots;
static struct vl_region *current;
static int refused; /* -errno for good */
static uint64_t checked_ms, settled_ms;
/*
 * One thread attaches at a time, under the self page's attach mutex
 * (self.h): a child of any kind gets it unlocked, so no fork handler
 * waits for an attach (a fork from a signal handler that interrupted one
 * would wait for ever), and a child made by _Fork or clone while another
 * thread attached does not wait on a thread it does not have. The child
 * sees the state as the fork found it: a slot filled but not yet counted
 * is filled again, one counted but not yet current is left (a mapping
 * the child never uses). Nothing else here is half written.
 */

/* The name new processes of this user would open now. */
static void region_wanted(char *buf, size_t size)
{
	const struct vl_config *cfg = vl_config();
	char why[128];

	if (cfg->region_chosen)
		vl_region_default(buf, size, why, sizeof(why));
	else
		snprintf(buf, size, "%s", cfg->region);
}

int vl_region_fresh(const struct vl_region *r)
{
	char want[PATH_MAX];
	struct statx sx;

	if (r->path == NULL)
		return 1;
	region_wanted(want, sizeof(want));
	if (strcmp(want, r->path) != 0)
		return 0; /* the default place changed: a runtime directory came or went */
	if (vl_raw_statx(AT_FDCWD, want, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_INO, &sx) != 0)
		return errno != ENOENT && errno != ENOTDIR; /* gone; anything else: cannot tell */
	return makedev(sx.stx_dev_major, sx.stx_dev_minor) == r->file_dev &&
	       sx.stx_ino == r->file_ino;
}

/* ---- a new region's settling ------------------------------------------------ */

struct settle {
	const struct vl_region *cur;
	int pending; /* old regions still mapped that could not be moved in */
	uint64_t seen[32][2];
	int nseen;
};

/* An old region found mapped, opened by its name, or through the mapping (root). */
static int open_old(const struct vl_mapped_region *m)
{
	char path[96];
	struct stat st;
	int fd = -1;

	if (m->name[0] == '/' && !m->deleted)
		fd = vl_raw_open(m->name, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		/* needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE: root, mostly */
		snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", m->pid,
			 (unsigned long long)m->lo, (unsigned long long)m->hi);
		fd = vl_raw_open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	}
	if (fd >= 0 && (vl_raw_fstat(fd, &st) != 0 || st.st_dev != m->dev || st.st_ino != m->ino)) {
		vl_raw_close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * Is a region made at `path` (chosen: at the default place) one whose
 * records cur should have? The same name, or both at the default place
 * (which moves between /dev/shm and a runtime directory).
 */
static int predecessor(const struct vl_region *cur, const char *path, int chosen)
{
	const struct vl_fate *f = &cur->hdr->fate;

	return strncmp(path, f->path, sizeof(f->path)) == 0 ||
	       (cur->path != NULL && strcmp(path, cur->path) == 0) || (chosen && f->chosen);
}

/*
 * The same from a mapping's name alone, when the file cannot be opened
 * (its name removed, only mapped): the name it had, or for the default
 * place, one of the default names (a runtime directory unmounted from
 * under it shows "/libvolatile").
 */
static int predecessor_named(const struct vl_region *cur, const char *name)
{
	const char *base = strrchr(name, '/');

	if (predecessor(cur, name, 0))
		return 1;
	return cur->hdr->fate.chosen && base != NULL &&
	       (strcmp(base, "/libvolatile") == 0 || strncmp(base, "/libvolatile.", 13) == 0);
}

static void on_old(void *a, const struct vl_mapped_region *m)
{
	struct settle *z = a;
	struct vl_region old;
	int fd, err;

	if ((m->dev == z->cur->file_dev && m->ino == z->cur->file_ino) ||
	    vl_region_moved_in(z->cur, m->dev, m->ino))
		return;
	for (int i = 0; i < z->nseen; i++)
		if (z->seen[i][0] == m->dev && z->seen[i][1] == m->ino)
			return;
	if (z->nseen < 32) {
		z->seen[z->nseen][0] = m->dev;
		z->seen[z->nseen][1] = m->ino;
		z->nseen++;
	}
	fd = open_old(m);
	err = fd < 0 ? -EBADF : vl_region_open_fd(fd, &old);
	if (err) {
		if (predecessor_named(z->cur, m->name)) {
			vl_log("an older region %llu:%llu (%s) is mapped by pid %d and cannot be "
			       "opened here: waiting for its users to move it",
			       (unsigned long long)m->dev, (unsigned long long)m->ino, m->name, m->pid);
			z->pending++;
		}
	} else {
		if (predecessor(z->cur, old.hdr->fate.path, old.hdr->fate.chosen) &&
		    vl_region_move(&old, z->cur) != 0)
			z->pending++;
		vl_region_unmap(&old);
	}
	if (fd >= 0)
		vl_raw_close(fd);
}

/*
 * Was cur made under another name, and renamed to where it is now (a
 * region put in the place of another)? Then it waits as a new one does.
 */
static int renamed_here(const struct vl_region *cur)
{
	return cur->path != NULL &&
	       strncmp(cur->hdr->fate.path, cur->path, sizeof(cur->hdr->fate.path)) != 0;
}

struct unseen {
	const struct vl_region *cur;
	uint64_t tag;
	int pending;
};

/* "3: OFDLCK ADVISORY  READ  -1 00:1b:41747 90123 90123": a region of our tag in use */
static int on_lock_line(void *a, char *line)
{
	struct unseen *u = a;
	uint64_t dev, ino, start;

	/*
	 * Only a file on the new region's own file system: one elsewhere may be
	 * another user's, or another container's (the tag is a public function
	 * of the user and the name), and would make this region wait for
	 * nothing. In a private place (a runtime directory) only this user can
	 * make files; in /dev/shm another user could still hold this region
	 * waiting so, as it can by taking its name (README, "The region's name").
	 */
	if (vl_parse_lock_line(line, &dev, &ino, &start) != 0 || start != u->tag ||
	    dev != u->cur->file_dev)
		return 0;
	if (ino == u->cur->file_ino || vl_region_moved_in(u->cur, dev, ino))
		return 0;
	vl_log("a region of this name (%llu:%llu) is in use by a process that cannot be looked "
	       "into: waiting for it to be moved in", (unsigned long long)dev,
	       (unsigned long long)ino);
	u->pending++;
	return 0;
}

/*
 * Is a region of cur's name in use that only /proc/locks shows (its users
 * cannot be looked into)? A /proc without it (subset=pid) shows no such
 * user: then no.
 */
static int unseen_users(const struct vl_region *cur)
{
	struct unseen u = { cur, vl_region_tag(cur), 0 };
	int e = vl_each_line("/proc/locks", on_lock_line, &u);

	return (e != 0 && e != -ENOENT) || u.pending;
}

int vl_region_settle(const struct vl_region *cur)
{
	struct vl_fate *f = &cur->hdr->fate;
	struct settle z;

	if (renamed_here(cur) && vl_lock_region(cur) == 0) {
		if (renamed_here(cur)) {
			__atomic_store_n(&f->waiting, 1, __ATOMIC_RELEASE);
			snprintf(f->path, sizeof(f->path), "%s", cur->path);
			vl_log("region %s was made as another: it looks for older regions first",
			       cur->path);
		}
		vl_unlock_region(cur);
	}
	if (!__atomic_load_n(&f->waiting, __ATOMIC_ACQUIRE))
		return 0;
	memset(&z, 0, sizeof(z));
	z.cur = cur;
	if (vl_scan_regions(on_old, &z) != 0)
		return -ESTALE; /* no /proc: nothing can be known; keep waiting */
	if (z.pending || unseen_users(cur))
		return -ESTALE;
	__atomic_store_n(&f->waiting, 0, __ATOMIC_RELEASE);
	vl_log("region settled: every older region mapped here is moved in");
	return 0;
}

/* ---- attaching, and following the region ------------------------------------- */

int vl_region_open_wanted(char *path, size_t size, struct vl_region *r)
{
	const struct vl_config *cfg = vl_config();

	region_wanted(path, size);
	return vl_region_open(path, VL_OPEN_CREATE | (cfg->region_chosen ? VL_OPEN_CHOSEN : 0),
			      cfg->create_ranges, cfg->create_files, r);
}

/* Open the region new processes find, into a new slot (the attach mutex held, one free). */
static int attach_wanted(struct vl_region **out)
{
	struct slot *s = &slots[nslots];
	int err = vl_region_open_wanted(s->path, sizeof(s->path), &s->r);

	if (err)
		return err;
	nslots++;
	*out = &s->r;
	return 0;
}

/*
 * Every slot used (the region's name removed SLOTS times in this
 * process's life): the old region's records still go to the region new
 * processes find, through a mapping made for that alone, so that they do
 * not wait for this process; this process itself can follow no further
 * (ESTALE from now on): an old region another thread may still be inside
 * is never unmapped.
 */
static int move_without_slot(struct vl_region *old)
{
	char path[PATH_MAX];
	struct vl_region next;
	int err = vl_region_open_wanted(path, sizeof(path), &next);

	if (err)
		return err;
	err = vl_region_move(old, &next);
	if (err == 0)
		vl_region_settle(&next);
	vl_region_unmap(&next);
	vl_log("this process's region moved too often: its records are moved, it can follow "
	       "no further");
	return -ESTALE;
}

/*
 * The current region no longer is the one new processes find, or someone
 * moved it: move its records into that one (if nobody has yet) and make
 * that one current (the attach mutex held).
 */
static int follow(struct vl_region *old)
{
	struct vl_region *next;
	int err;

	if (nslots == SLOTS)
		return move_without_slot(old);
	err = attach_wanted(&next);
	if (err)
		return err;
	if (next->file_dev == old->file_dev && next->file_ino == old->file_ino) {
		/* the name leads to it after all (it came back, or the look failed) */
		vl_region_unmap(next);
		nslots--;
		return __atomic_load_n(&old->hdr->fate.retired, __ATOMIC_ACQUIRE) ? -ESTALE : 0;
	}
	err = vl_region_move(old, next);
	if (err) {
		vl_log("cannot move the old region's records: %s", strerror(-err));
		return -ESTALE;
	}
	__atomic_store_n(&current, next, __ATOMIC_RELEASE);
	vl_region_settle(next);
	return 0;
}

static int slow_get(struct vl_region **out)
{
	struct vl_region *r = current;
	int err = refused;

	if (err)
		return err;
	if (r == NULL) {
		err = attach_wanted(&r);
		if (err) {
			/*
			 * A region refused is refused for good (DESIGN 5: the process
			 * keeps that answer), and so is a relative path (EINVAL: the
			 * environment is read once); a failure that may pass (EINTR,
			 * ENOMEM, EMFILE, ENOSPC...) is tried again at the next call.
			 */
			if (err == -EACCES || err == -EPROTO || err == -EUCLEAN || err == -EINVAL ||
			    err == -ENAMETOOLONG)
				refused = err;
			return err;
		}
		__atomic_store_n(&current, r, __ATOMIC_RELEASE);
		vl_region_settle(r);
	} else if (__atomic_load_n(&r->hdr->fate.retired, __ATOMIC_ACQUIRE) ||
		   (vl_due(&checked_ms, CHECK_EVERY_MS, vl_now_ms()) && !vl_region_fresh(r))) {
		err = follow(r);
		if (err)
			return err;
		r = current;
	} else if (__atomic_load_n(&r->hdr->fate.waiting, __ATOMIC_ACQUIRE) &&
		   vl_due(&settled_ms, SETTLE_EVERY_MS, vl_now_ms())) {
		vl_region_settle(r);
	}
	if (__atomic_load_n(&r->hdr->fate.waiting, __ATOMIC_ACQUIRE))
		return -ESTALE;
	*out = r;
	return 0;
}

int vl_region_attached(void)
{
	return __atomic_load_n(&current, __ATOMIC_ACQUIRE) != NULL;
}

static VL_COLD int get_attaching(struct vl_region **out)
{
	int err;

	vl_self_lock(VL_SELF_ATTACH);
	err = slow_get(out);
	vl_self_unlock(VL_SELF_ATTACH);
	return err;
}

int vl_region_get_at(struct vl_region **out, uint64_t now_ms)
{
	struct vl_region *r = __atomic_load_n(&current, __ATOMIC_ACQUIRE);

	/* the common case: attached, in use, and looked at less than a second ago */
	if (r != NULL && !__atomic_load_n(&r->hdr->fate.retired, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&r->hdr->fate.waiting, __ATOMIC_RELAXED) &&
	    now_ms - __atomic_load_n(&checked_ms, __ATOMIC_RELAXED) < CHECK_EVERY_MS) {
		*out = r;
		return 0;
	}
	return get_attaching(out);
}

int vl_region_get(struct vl_region **out)
{
	return vl_region_get_at(out, vl_now_ms());
}
