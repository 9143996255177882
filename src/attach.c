/* SPDX-License-Identifier: MIT */
/*
 * attach.c - this process's region: attached at first use, checked once a
 * second to be the one new processes find, followed when it is not (its
 * records moved into the new one, move.c), and a new region's settling
 * (it waits until every older region of its name is moved in). The
 * region file itself is made, checked and mapped by region.c.
 */
#include "region.h"

#include "age.h"
#include "env.h"
#include "lock.h"
#include "core/compiler.h"
#include "core/fault.h"
#include "core/pool.h"
#include "core/tomb.h"
#include "core/tomb.h"
#include "log.h"
#include "move.h"
#include "punch.h"
#include "file_route.h"
#include "this_process.h"
#include "sys.h"
#include "default_place.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

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
#define SETTLE_BLIND_EVERY_MS 10000 /* a region serving past old ones: a look at every process */
/*
 * A region made anew serves past older ones left to their users only
 * this long after it was first seen at its name: more than CHECK_EVERY_MS
 * plus a tick of the coarse clock (10 ms at HZ=100) on either side
 * (DESIGN 16).
 */
#define YOUNG_MS 2000

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
 * (this_process.h): a child of any kind gets it unlocked, so no fork handler
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
	int err;

	if (r->path == NULL)
		return 1;
	region_wanted(want, sizeof(want));
	if (strcmp(want, r->path) != 0)
		return 0; /* the default place changed: a runtime directory came or went */
	err = VL_SYSCALL("statx region", vl_raw_statx(AT_FDCWD, want,
						       AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
						       STATX_INO, &sx));
	if (err != 0)
		return err != -ENOENT && err != -ENOTDIR ? -1 : 0; /* -1: cannot tell */
	return makedev(sx.stx_dev_major, sx.stx_dev_minor) == r->file_dev &&
	       sx.stx_ino == r->file_ino;
}

/* ---- the permit: no punch of a region in flight when a new one starts serving ---- */

/*
 * A purge (or a MARK that joins a purged range) checks that its region
 * is still the one new processes find right before it punches; a process
 * stopped between that check and its punch would punch after a new
 * region began to serve, whatever time bound one chose. So the check and
 * the punches are made holding an OFD read lock on one byte of two
 * directories, the root and the region's own, at an offset of the
 * region's user and name (its tag, past VL_MAP_OFFSET so that no tag lock
 * of a region file is mistaken for it); and a region made anew that is to
 * serve while an older one is left (VL_BLIND) first asks the kernel
 * (F_OFD_GETLK) that no such lock is held (no_punch_in_flight). The locks
 * are taken in the punching thread's own fd table (punch.c), closed with
 * it: none ever enters the host's table (DESIGN 17).
 */
static uint64_t permit_byte(const struct vl_region *r)
{
	return VL_MAP_OFFSET + vl_region_tag(r);
}

/* The directory part of path in buf ("/" for "/x"): 0, or -1 if it has none. */
static int dir_of(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	if (slash == NULL || path[0] != '/')
		return -1;
	n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= size)
		return -1;
	memcpy(buf, path, n);
	buf[n] = '\0';
	return 0;
}

static void gate_close(struct vl_gate *g)
{
	for (int i = 0; i < 2; i++)
		if (g->fd[i] >= 0) {
			vl_raw_close(g->fd[i]);
			g->fd[i] = -1;
		}
}

/*
 * Runs in the punching thread: no log, no lock of ours, no allocation.
 * 1: the permit is held and the region is the one new processes find.
 */
static int gate_open(struct vl_gate *g)
{
	const struct vl_region *r = g->r;
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_len = 1 };
	char dir[PATH_MAX];
	const char *at[2] = { "/", dir };

	g->fd[0] = g->fd[1] = -1;
	if (r->path == NULL || dir_of(r->path, dir, sizeof(dir)) != 0)
		return 0;
	fl.l_start = (off_t)permit_byte(r);
	for (int i = 0; i < 2; i++) {
		g->fd[i] = VL_SYSCALL("open region dir",
				      vl_raw_open(at[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY));
		/*
		 * A directory this user may not read (mode --x) takes no lock of
		 * anyone of this user: the new region's test skips it too.
		 */
		if (g->fd[i] == -EACCES)
			continue;
		if (g->fd[i] < 0 || VL_SYSCALL("lock region dir",
					       vl_raw_fcntl(g->fd[i], F_OFD_SETLK, &fl)) != 0)
			return 0;
	}
	if (g->fd[0] < 0 && g->fd[1] < 0)
		return 0; /* no permit at all: no punch */
	/* only now: a region made anew after this look waits for the locks above */
	return vl_region_fresh(r) == 1;
}

void vl_gate_init(struct vl_gate *g, const struct vl_region *r)
{
	g->open = gate_open;
	g->close = gate_close;
	g->r = r;
	g->fd[0] = g->fd[1] = -1;
}

/* Does dir show an OFD lock on r's permit byte (or can it not be asked)? */
static int permit_held_in(const char *dir, uint64_t byte)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 1 };
	int fd = VL_SYSCALL("open region dir",
			    vl_raw_open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY)), held;

	if (fd < 0) /* no such directory, or one this user may not read: no lock of ours in it */
		return fd != -ENOENT && fd != -ENOTDIR && fd != -EACCES;
	fl.l_start = (off_t)byte;
	held = VL_SYSCALL("ask region dir lock",
			  vl_raw_fcntl(fd, F_OFD_GETLK, &fl)) != 0 || fl.l_type != F_UNLCK;
	vl_raw_close(fd);
	return held;
}

/*
 * Is a punch of an older region of cur's name in flight: a permit held in
 * the root, cur's directory, or (at the default place) any directory of a
 * default name? Asked once cur is at its name: every permit taken after
 * this finds cur there, not the older region, and punches nothing.
 */
static int punch_in_flight(const struct vl_region *cur)
{
	char dir[PATH_MAX], dirs[3][64];
	uint64_t byte = permit_byte(cur);
	int n;

	if (cur->path == NULL || dir_of(cur->path, dir, sizeof(dir)) != 0)
		return 1;
	if (permit_held_in("/", byte) || permit_held_in(dir, byte))
		return 1;
	n = cur->hdr->fate.chosen ? vl_default_dirs(dirs, 3) : 0;
	for (int i = 0; i < n; i++)
		if (permit_held_in(dirs[i], byte))
			return 1;
	return 0;
}

/* ---- a new region's settling ------------------------------------------------ */

struct settle {
	const struct vl_region *cur;
	int pending; /* old regions still mapped that could not be moved in */
	int named;   /* of which some may still have a name (could come back to ours) */
	uint64_t seen[32][2];
	int nseen;
	uint64_t left[32][2]; /* those counted in pending: /proc/locks need not count them again */
	int nleft;
};

static void left_note(struct settle *z, uint64_t dev, uint64_t ino)
{
	if (z->nleft < 32) {
		z->left[z->nleft][0] = dev;
		z->left[z->nleft][1] = ino;
		z->nleft++;
	}
}

/* An old region found mapped, opened by its name, or through the mapping (root). */
static int open_old(const struct vl_mapped_region *m)
{
	char path[96];
	struct stat st;
	int fd = -1;

	if (m->name[0] == '/' && !m->deleted)
		fd = VL_SYSCALL("open region",
				vl_raw_open(m->name, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
	if (fd < 0) {
		/* needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE: root, mostly */
		snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", m->pid,
			 (unsigned long long)m->lo, (unsigned long long)m->hi);
		fd = VL_SYSCALL("open region",
				vl_raw_open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
	}
	if (fd >= 0 && (VL_SYSCALL("fstat region",
				   vl_raw_fstat(fd, &st)) != 0 || st.st_dev != m->dev || st.st_ino != m->ino)) {
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
			vl_log("an older region %llu:%llu (%s%s) is mapped by pid %d and cannot be "
			       "opened here: left to its users to move it",
			       (unsigned long long)m->dev, (unsigned long long)m->ino, m->name,
			       m->deleted ? ", removed" : "", m->pid);
			z->pending++;
			/* a name removed never comes back: a file of no link cannot be linked again */
			z->named += !m->deleted;
			left_note(z, m->dev, m->ino);
		}
	} else {
		if (predecessor(z->cur, old.hdr->fate.path, old.hdr->fate.chosen) &&
		    vl_region_move(&old, z->cur) != 0) {
			z->pending++;
			z->named++; /* opened: it may have a name */
			left_note(z, m->dev, m->ino);
		}
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
	const struct settle *z;
	uint64_t tag;
	int pending;
	uint64_t held[32][2]; /* every region of the tag in use, seen in maps or not */
	int nheld;
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
	 * waiting so, as it can by taking its name (doc/environment.md, "The region's name").
	 */
	if (vl_parse_lock_line(line, &dev, &ino, &start) != 0 || start != u->tag ||
	    dev != u->cur->file_dev)
		return 0;
	if (ino == u->cur->file_ino || vl_region_moved_in(u->cur, dev, ino))
		return 0;
	if (u->nheld < 32) {
		u->held[u->nheld][0] = dev;
		u->held[u->nheld][1] = ino;
		u->nheld++;
	}
	/* one settle's look at /proc/PID/maps counted as left already is judged there */
	for (int i = 0; u->z != NULL && i < u->z->nleft; i++)
		if (u->z->left[i][0] == dev && u->z->left[i][1] == ino)
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
static int unseen_users(const struct vl_region *cur, const struct settle *z, struct unseen *u)
{
	int e;

	memset(u, 0, sizeof(*u));
	u->cur = cur;
	u->z = z;
	u->tag = vl_region_tag(cur);
	e = vl_each_line("/proc/locks", on_lock_line, u);
	return (e != 0 && e != -ENOENT) || u->pending;
}

static int listed(const uint64_t (*l)[2], int n, uint64_t dev, uint64_t ino)
{
	for (int i = 0; i < n; i++)
		if (l[i][0] == dev && l[i][1] == ino)
			return 1;
	return 0;
}

static void raise_to_now(const struct vl_region *cur)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) == 0 && ts.tv_sec > 0)
		vl_tomb_raise(cur->tomb, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
}

/*
 * An older region left to its users (one this region could not open or
 * move in) loses its records, purged ranges included, when they exit
 * without moving it in: an idle user never calls again. Nothing then says
 * which files they named (removed-exit.sh: an UNMARK of such a file said
 * 0 over its zeros, whether this region served blind or still waited).
 * But whatever it punched, it punched a file born before this region was
 * at its name (its gate's look fails after, DESIGN 16 point 3): so the
 * horizon raised to any realtime reading taken since covers every one.
 * Raised only when one is found gone so, not when one is seen left (its
 * users mostly move it in, and every file born before would pay): the
 * regions seen left are listed in the tombstones' head, which every
 * settler reads; each is struck off when moved in, or, raising the
 * horizon first, when no process maps or locks it any more and it was
 * not moved in. A list full, or a region seen left once waiting is 0 (no
 * settle would look again): the raise at once. Under the region lock,
 * before this settle may clear waiting (an UNMARK that finds no record
 * reads blind() before the tombstones).
 */
static int watch_left(const struct vl_region *cur, const struct settle *z, const struct unseen *u)
{
	uint64_t (*l)[2] = cur->tomb->left;
	int any = z->nleft > 0 || u->nheld > 0, raise = 0;

	for (unsigned i = 0; !any && i < VL_TOMB_LEFT; i++)
		any = __atomic_load_n(&l[i][1], __ATOMIC_RELAXED) != 0 ||
		      __atomic_load_n(&l[i][0], __ATOMIC_RELAXED) != 0;
	if (!any)
		return 0;
	if (vl_lock_region(cur) != 0)
		return -1; /* locked out: the list stays, the next settle looks */
	for (unsigned i = 0; i < VL_TOMB_LEFT; i++) {
		uint64_t dev = l[i][0], ino = l[i][1];

		if (dev == 0 && ino == 0)
			continue;
		if (vl_region_moved_in(cur, dev, ino)) {
			l[i][0] = l[i][1] = 0;
		} else if (!listed((const uint64_t(*)[2])z->seen, z->nseen, dev, ino) &&
			   !listed((const uint64_t(*)[2])u->held, u->nheld, dev, ino)) {
			raise = 1; /* gone with its users, unmoved */
			l[i][0] = l[i][1] = 0;
		}
	}
	for (int k = 0; k < z->nleft + u->nheld; k++) {
		const uint64_t *e = k < z->nleft ? z->left[k] : u->held[k - z->nleft];
		unsigned i, free = VL_TOMB_LEFT;

		for (i = 0; i < VL_TOMB_LEFT; i++) {
			if (l[i][0] == e[0] && l[i][1] == e[1])
				break;
			if (free == VL_TOMB_LEFT && l[i][0] == 0 && l[i][1] == 0)
				free = i;
		}
		if (i < VL_TOMB_LEFT)
			continue;
		if (free == VL_TOMB_LEFT ||
		    __atomic_load_n(&cur->hdr->fate.waiting, __ATOMIC_ACQUIRE) == 0) {
			raise = 1;
			continue;
		}
		l[free][0] = e[0];
		l[free][1] = e[1];
	}
	if (raise) {
		raise_to_now(cur);
		vl_log("an older region left to its users went unmoved: every file born before now "
		       "counts as forgotten with purged ranges");
	}
	vl_unlock_region(cur);
	return 0;
}

/*
 * This process's time namespace, as a number (1 on a kernel without
 * them: one clock for all), or 0 if it cannot be told. Two readings of
 * CLOCK_MONOTONIC_COARSE compare only within one time namespace.
 */
static uint32_t time_ns(void)
{
	char link[64];
	ssize_t n = VL_SYSCALL("readlink time ns",
			       vl_raw_readlinkat(AT_FDCWD, "/proc/self/ns/time", link, sizeof(link) - 1));
	unsigned long v;

	if (n < 0)
		return n == -ENOENT ? 1 : 0;
	link[n] = '\0';
	if (sscanf(link, "time:[%lu]", &v) != 1 || v == 0 || v > UINT32_MAX)
		return 0;
	return (uint32_t)v;
}

/*
 * A process whose time namespace is not the one the region's young
 * reading was taken in counts from its own first sight of the region.
 */
static struct {
	uint64_t dev, ino, at;
} sighted;

/*
 * Is the region past its young period: YOUNG_MS since it was first seen
 * at its name (DESIGN 16: longer than an old user's freshness cache lasts,
 * with both sides' clock granularity to spare)? now is read after this
 * process opened it by its name, so after it was there.
 */
static int young_over(const struct vl_region *cur, uint64_t now)
{
	uint64_t *young = &cur->hdr->fate.young;
	uint32_t ns = time_ns(), ms = (uint32_t)now ? (uint32_t)now : 1;
	uint64_t y = __atomic_load_n(young, __ATOMIC_ACQUIRE), want = (uint64_t)ns << 32 | ms;

	/* the first reading wins; a loser's y is the winner's */
	if (y == 0 && ns != 0 &&
	    __atomic_compare_exchange_n(young, &y, want, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		y = want;
	if (ns != 0 && (uint32_t)(y >> 32) == ns)
		return (uint32_t)((uint32_t)now - (uint32_t)y) >= YOUNG_MS; /* mod 2^32: late, never early */
	if (sighted.dev != cur->file_dev || sighted.ino != cur->file_ino || sighted.at == 0) {
		sighted.dev = cur->file_dev;
		sighted.ino = cur->file_ino;
		sighted.at = now;
	}
	return now - sighted.at >= YOUNG_MS;
}

int vl_region_settle(const struct vl_region *cur)
{
	struct vl_fate *f = &cur->hdr->fate;
	uint32_t w, expect = VL_WAITING;
	struct settle z;
	struct unseen u;
	int unseen, watched;

	if (renamed_here(cur) && vl_lock_region(cur) == 0) {
		if (renamed_here(cur)) {
			__atomic_store_n(&f->waiting, VL_WAITING, __ATOMIC_RELEASE);
			__atomic_store_n(&f->young, 0, __ATOMIC_RELEASE);
			snprintf(f->path, sizeof(f->path), "%s", cur->path);
			vl_log("region %s was made as another: it looks for older regions first",
			       cur->path);
		}
		vl_unlock_region(cur);
	}
	w = __atomic_load_n(&f->waiting, __ATOMIC_ACQUIRE);
	if (w == 0)
		return 0;
	memset(&z, 0, sizeof(z));
	z.cur = cur;
	if (vl_scan_regions(on_old, &z) != 0) /* no /proc: nothing can be known */
		return w == VL_BLIND ? 0 : -ESTALE;
	unseen = unseen_users(cur, &z, &u);
	/* never cleared while what was left may not have been looked at */
	watched = watch_left(cur, &z, &u);
	if (!z.pending && !unseen && watched == 0) {
		__atomic_store_n(&f->waiting, 0, __ATOMIC_RELEASE);
		vl_log("region settled: every older region mapped here is moved in, or gone with "
		       "its users");
		return 0;
	}
	if (w == VL_BLIND)
		return 0; /* it serves already; what is left is looked at again later */
	/*
	 * Serve while older regions are left (DESIGN 16) only if each is one
	 * whose name is gone for good (it cannot come back to ours), seen in
	 * /proc/PID/maps (one only /proc/locks shows may have a name), after
	 * the young period, with no punch of theirs in flight.
	 */
	if (z.named || unseen || !young_over(cur, vl_now_ms()) || punch_in_flight(cur))
		return -ESTALE;
	if (__atomic_compare_exchange_n(&f->waiting, &expect, VL_BLIND, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		vl_log("region serves: %d older region%s, removed, cannot be opened here and %s "
		       "left to %s users; an UNMARK says 1 of what this region does not hold",
		       z.pending, z.pending == 1 ? "" : "s", z.pending == 1 ? "is" : "are",
		       z.pending == 1 ? "its" : "their");
	return 0; /* else another settler decided: it serves either way */
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
	int err;

	VL_ASSERT_SELF_HELD(VL_SELF_ATTACH);
	err = vl_region_open_wanted(s->path, sizeof(s->path), &s->r);
	if (err)
		return err;
	nslots++;
	*out = &s->r;
	return 0;
}

/*
 * The clock reading taken before the last look at the region's name that
 * found it the one new processes find (or before it was opened by that
 * name): a call whose own reading is less than CHECK_EVERY_MS past it
 * answers from the region without looking. Set only after such a look,
 * never before it (DESIGN 16: the proof counts from a look that saw it).
 */
static void checked_at(uint64_t now)
{
	uint64_t was = __atomic_load_n(&checked_ms, __ATOMIC_RELAXED);

	while ((int64_t)(now - was) > 0 &&
	       !__atomic_compare_exchange_n(&checked_ms, &was, now, 0, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
}

static int cached(uint64_t now)
{
	return (int64_t)(now - __atomic_load_n(&checked_ms, __ATOMIC_ACQUIRE)) < CHECK_EVERY_MS;
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
 * that one current (the attach mutex held). now: read before the look.
 */
static int follow(struct vl_region *old, uint64_t now)
{
	struct vl_region *next;
	int err;

	VL_ASSERT_SELF_HELD(VL_SELF_ATTACH);
	if (nslots == SLOTS)
		return move_without_slot(old);
	err = attach_wanted(&next);
	if (err)
		return err;
	if (next->file_dev == old->file_dev && next->file_ino == old->file_ino) {
		/* the name leads to it after all (it came back, or the look failed) */
		vl_region_unmap(next);
		nslots--;
		if (__atomic_load_n(&old->hdr->fate.retired, __ATOMIC_ACQUIRE))
			return -ESTALE;
		checked_at(now);
		return 0;
	}
	err = vl_region_move(old, next);
	if (err) {
		vl_log("cannot move the old region's records: %s", strerror(-err));
		return -ESTALE;
	}
	__atomic_store_n(&current, next, __ATOMIC_RELEASE);
	checked_at(now); /* opened by its name after now */
	vl_region_settle(next);
	return 0;
}

static int slow_get(struct vl_region **out, uint64_t now)
{
	struct vl_region *r = current;
	int err = refused;
	uint32_t w;

	if (err)
		return err;
	if (r == NULL) {
		vl_age_attach();
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
		/*
		 * The cache is left as it is (0): the next call looks at the name,
		 * so a process that attached and calls again a moment later still
		 * finds a removal that came between (tomb-move.sh's idle user).
		 */
		vl_region_settle(r);
	} else if (__atomic_load_n(&r->hdr->fate.retired, __ATOMIC_ACQUIRE)) {
		err = follow(r, now);
		if (err)
			return err;
		r = current;
	} else if (!cached(now)) {
		/* the look comes after now: a reading before it is what the cache counts from */
		int fresh = vl_region_fresh(r);

		if (fresh == 1) {
			checked_at(now);
		} else if (fresh == 0) {
			err = follow(r, now);
			if (err)
				return err;
			r = current;
		}
		/* cannot tell (-1): the cache is not renewed; an UNMARK will say 1 */
	}
	w = __atomic_load_n(&r->hdr->fate.waiting, __ATOMIC_ACQUIRE);
	if ((w == VL_WAITING && vl_due(&settled_ms, SETTLE_EVERY_MS, now)) ||
	    (w == VL_BLIND && vl_due(&settled_ms, SETTLE_BLIND_EVERY_MS, now)))
		vl_region_settle(r);
	if (__atomic_load_n(&r->hdr->fate.waiting, __ATOMIC_ACQUIRE) == VL_WAITING)
		return -ESTALE;
	*out = r;
	return 0;
}

int vl_region_attached(void)
{
	return __atomic_load_n(&current, __ATOMIC_ACQUIRE) != NULL;
}

/*
 * The way of a call whose region was not looked at in the last second
 * (cached), so taken at most once a second while a process calls: also
 * where its ages near the wrap are looked for, once a minute at most
 * (age.h: no lock is held here, and only file locks free at once are
 * taken), off the MARK's own path.
 */
static VL_COLD int get_attaching(struct vl_region **out, uint64_t now)
{
	int err;

	vl_self_lock(VL_SELF_ATTACH);
	err = slow_get(out, now);
	vl_self_unlock(VL_SELF_ATTACH);
	if (err == 0)
		vl_ages_tend(*out, now);
	return err;
}

int vl_region_get_at(struct vl_region **out, uint64_t now_ms)
{
	struct vl_region *r = __atomic_load_n(&current, __ATOMIC_ACQUIRE);

	/* the common case: attached, in use, and looked at less than a second ago */
	if (r != NULL && !__atomic_load_n(&r->hdr->fate.retired, __ATOMIC_RELAXED) &&
	    __atomic_load_n(&r->hdr->fate.waiting, __ATOMIC_RELAXED) != VL_WAITING &&
	    cached(now_ms)) {
		*out = r;
		return 0;
	}
	return get_attaching(out, now_ms);
}

int vl_region_get(struct vl_region **out)
{
	return vl_region_get_at(out, vl_now_ms());
}

int vl_region_get_unaged(struct vl_region **out)
{
	struct vl_region *r = __atomic_load_n(&current, __ATOMIC_ACQUIRE);

	if (r != NULL && !__atomic_load_n(&r->hdr->fate.retired, __ATOMIC_RELAXED) &&
	    __atomic_load_n(&r->hdr->fate.waiting, __ATOMIC_RELAXED) != VL_WAITING) {
		*out = r;
		return 0;
	}
	return get_attaching(out, vl_now_ms());
}

int vl_region_confirm(const struct vl_region *r, uint64_t now_ms, struct vl_region **next)
{
	int err;

	if (__atomic_load_n(&current, __ATOMIC_ACQUIRE) == r &&
	    !__atomic_load_n(&r->hdr->fate.retired, __ATOMIC_RELAXED) && cached(now_ms))
		return 0;
	err = get_attaching(next, now_ms);
	if (err)
		return -1;
	if (*next != r)
		return 1;
	/* still r: only if a look after now_ms found it at its name */
	return cached(now_ms) && !__atomic_load_n(&r->hdr->fate.retired, __ATOMIC_ACQUIRE) ? 0 : -1;
}
