/*
 * region.c - attach, validate and lock the shared region.
 *
 * Creation follows LMDB's lock file: an opener that gets an exclusive
 * flock(2) on it without waiting is alone; if the file is empty (or has
 * no magic: a creator died half way), it lays it out; otherwise, and for
 * openers that find it in use, it checks the geometry. Every user then
 * holds a shared lock while it maps the region (lock_to_open says why):
 * the geometry never changes afterwards, and the data has its own locks.
 */
#include "region.h"

#include "env.h"
#include "core/fault.h"
#include "core/pool.h"
#include "core/rtree.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#if defined(__has_include)
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif
#endif
#include <pthread.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * A region reachable through a symlink is refused (SPEC 9), wherever the
 * symlink is on its path: openat2's RESOLVE_NO_SYMLINKS (ELOOP). Where
 * the kernel has no openat2 (before 5.6, or a seccomp filter refuses it),
 * only the last name is checked (O_NOFOLLOW).
 */
static int open_no_symlinks(const char *path, int flags, mode_t mode)
{
#if defined(SYS_openat2) && defined(RESOLVE_NO_SYMLINKS)
	struct open_how how;
	int fd;

	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(unsigned)flags;
	how.mode = (flags & O_CREAT) ? mode : 0;
	how.resolve = RESOLVE_NO_SYMLINKS;
	fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
		return fd;
#endif
	return open(path, flags, mode);
}

static int open_region_file(const char *path, int create)
{
	int tries, fd;

	for (tries = 0; tries < 8; tries++) {
		fd = VL_SYSCALL("open region",
				open_no_symlinks(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY |
							       O_NONBLOCK, 0));
		if (fd >= 0)
			return fd;
		if (errno == ELOOP)
			return -EACCES; /* a symlink on its way is never followed */
		if (errno != ENOENT || !create)
			return -errno;
		fd = VL_SYSCALL("create region",
				open_no_symlinks(path,
						 O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC |
							 O_NOCTTY,
						 0600));
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EAGAIN;
}

static int trusted(int fd, struct stat *st)
{
	if (VL_SYSCALL("fstat region", fstat(fd, st)) != 0)
		return -errno;
	if (!S_ISREG(st->st_mode) || st->st_uid != geteuid() || (st->st_mode & 077) != 0) {
		vl_log("region refused: mode %o owner %u", (unsigned)st->st_mode,
		       (unsigned)st->st_uid);
		return -EACCES;
	}
	return 0;
}

static int init_mutex(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	int e;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	e = pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
	return -e;
}

static int map(int fd, size_t size, void **base)
{
	void *p = VL_SYSCALL_PTR("mmap region",
				 mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));

	if (p == MAP_FAILED)
		return -errno;
	*base = p;
	return 0;
}

/*
 * Give [off, off + len) of the mapping its pages now. A page of a tmpfs
 * file that cannot be had (the file system is full) raises SIGBUS when it
 * is first written; MADV_POPULATE_WRITE asks for it and reports an error
 * instead. (Kernels before 5.14 lack it: EINVAL, and we go on as before.)
 */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
static int populate(void *base, uint64_t off, uint64_t len)
{
	uintptr_t start = ((uintptr_t)base + off) & ~(uintptr_t)4095;
	uintptr_t end = ((uintptr_t)base + off + len + 4095) & ~(uintptr_t)4095;

	if (VL_SYSCALL("madvise populate",
		       madvise((void *)start, end - start, MADV_POPULATE_WRITE)) == 0 ||
	    errno == EINVAL)
		return 0;
	return -ENOSPC;
}

#define READY_CHUNK 65536 /* bytes of slots made ready at a time */

static int ready_slots(const struct vl_region *r, uint64_t off, uint32_t size, uint32_t hwm,
		       uint32_t cap, uint32_t *ready)
{
	uint32_t want;

	if (hwm < *ready)
		return 0;
	want = hwm + READY_CHUNK / size;
	if (want > cap)
		want = cap;
	if (want <= hwm || populate(r->hdr, off + (uint64_t)hwm * size,
				    (uint64_t)(want - hwm) * size) != 0)
		return -ENOSPC;
	*ready = want;
	return 0;
}

int vl_room_for_node(const struct vl_region *r)
{
	const struct vl_counters *c = &r->hdr->c;

	if (c->node_free != VL_NIL)
		return 0; /* a slot that was used before: its page is there */
	return ready_slots(r, r->hdr->geo.nodes_off, sizeof(struct vl_node), c->node_hwm,
			   r->node_cap, &r->hdr->c.node_ready);
}

int vl_room_for_file(const struct vl_region *r)
{
	const struct vl_counters *c = &r->hdr->c;

	if (c->file_free != VL_NIL)
		return 0;
	return ready_slots(r, r->hdr->geo.files_off, sizeof(struct vl_file), c->file_hwm,
			   r->file_cap, &r->hdr->c.file_ready);
}

static int lay_out(int fd, uint32_t ranges, uint32_t files, void **base, size_t *size)
{
	struct vl_geometry g, unsealed;
	struct vl_header *h;
	int err;

	vl_geometry_plan(&g, ranges, files);
	/* drop whatever a creator that died left behind, then make it sparse */
	if (VL_SYSCALL("ftruncate region", ftruncate(fd, 0)) != 0 ||
	    ftruncate(fd, (off_t)g.region_size) != 0)
		return -errno;
	err = map(fd, g.region_size, base);
	if (err)
		return err;
	h = *base;
	/* the header and the file table are written at once: make them real now */
	if (populate(h, 0, g.files_off) != 0 || populate(h, g.hash_off, g.nodes_off - g.hash_off)) {
		munmap(*base, g.region_size);
		return -ENOSPC;
	}
	/*
	 * The magic goes last: a header without it is not a region yet, and
	 * whoever opens the file next lays it out again (vl_region_open). So
	 * a creator killed anywhere in here leaves nothing anyone trusts: not
	 * a lock that is not robust, not half a header.
	 */
	unsealed = g;
	unsealed.magic = 0;
	vl_region_format(h, &unsealed);
	VL_STEP("lay_out: formatted, no lock");
	err = init_mutex(&h->lock);
	if (err) {
		munmap(*base, g.region_size);
		return err;
	}
	VL_STEP("lay_out: all but the magic");
	__atomic_store_n(&h->geo.magic, VL_MAGIC, __ATOMIC_RELEASE);
	*size = g.region_size;
	vl_log("region laid out: %u ranges, %u files, %llu bytes", g.node_cap - 1,
	       g.file_cap - 1, (unsigned long long)g.region_size);
	return 0;
}

static int attach(int fd, const struct stat *st, void **base, size_t *size)
{
	struct vl_geometry g;
	int err;

	if ((size_t)st->st_size < sizeof(g))
		return -EUCLEAN;
	if (pread(fd, &g, sizeof(g), 0) != (ssize_t)sizeof(g))
		return -EUCLEAN;
	err = vl_geometry_check(&g, (uint64_t)st->st_size);
	if (err)
		return err;
	err = map(fd, (size_t)st->st_size, base);
	if (err)
		return err;
	/* check what is mapped, not what was read a moment ago */
	err = vl_geometry_check(&((struct vl_header *)*base)->geo, (uint64_t)st->st_size);
	if (err) {
		munmap(*base, (size_t)st->st_size);
		return err;
	}
	*size = (size_t)st->st_size;
	return 0;
}

/* No magic: never finished by its creator (lay_out), so never trusted. */
static int unfinished(int fd, struct stat *st)
{
	struct vl_geometry g;

	if (fstat(fd, st) != 0)
		return -errno;
	return st->st_size == 0 ||
	       (pread(fd, &g, sizeof(g), 0) == (ssize_t)sizeof(g) && g.magic == 0);
}

/*
 * Who may lay the file out. Every process that maps the region holds a
 * shared flock(2) on it for as long as it maps it: the mapping keeps the
 * open file description, and the lock with it, after the fd is closed.
 * So an exclusive lock taken without waiting proves that nobody uses the
 * region, and only then is a file without its magic laid out again (its
 * creator died half way). One that lost its magic while others map it
 * was scribbled on: it is refused (EUCLEAN), for laying it out again
 * would pull their region from under them (their UNMARKs would say
 * intact of purged bytes; a smaller one, SIGBUS). An opener that waits
 * behind a creator takes the shared lock, which waits for the layout.
 * Returns 1 holding the exclusive lock, 0 holding the shared one.
 */
static int lock_to_open(int fd, struct stat *st)
{
	for (int tries = 0; tries < 64; tries++) {
		int left;

		if (VL_SYSCALL("flock region", flock(fd, LOCK_EX | LOCK_NB)) == 0)
			return 1;
		if (errno != EWOULDBLOCK)
			return -errno;
		if (VL_SYSCALL("flock region shared", flock(fd, LOCK_SH)) != 0)
			return -errno;
		left = unfinished(fd, st);
		if (left <= 0)
			return left < 0 ? left : 0;
		/*
		 * No magic, and someone holds a lock: another opener of a file
		 * whose creator died, here for the same reason (it lets go at
		 * once), or users of a scribbled region (they never do).
		 */
		flock(fd, LOCK_UN);
		usleep(500 + (unsigned)(getpid() % 7) * 250);
	}
	return -EUCLEAN;
}

int vl_region_open(const char *path, int create, uint32_t ranges, uint32_t files,
		   struct vl_region *out)
{
	struct stat st;
	void *base = NULL;
	size_t size = 0;
	int fd, err, alone;

	memset(out, 0, sizeof(*out));
	/*
	 * A relative path names another file in each working directory, and
	 * would split the user's processes between regions (SPEC 9). Falling
	 * back to the default region would split them too, from those given
	 * the same path absolute: the region is unusable instead.
	 */
	if (path[0] != '/') {
		vl_log("VOLATILE_REGION=%s is not an absolute path: MARK and UNMARK fail "
		       "with EINVAL", path);
		return -EINVAL;
	}
	fd = open_region_file(path, create);
	if (fd < 0)
		return fd;
	err = trusted(fd, &st);
	if (err)
		goto out;
	alone = lock_to_open(fd, &st);
	if (alone < 0) {
		err = alone;
		goto out;
	}
	err = alone ? unfinished(fd, &st) : 0;
	if (err > 0)
		err = create ? lay_out(fd, ranges, files, &base, &size) : -ENOENT;
	else if (err == 0)
		err = attach(fd, &st, &base, &size);
	/* from an exclusive lock to the shared one all users hold while mapped */
	if (err == 0 && alone && VL_SYSCALL("flock region down", flock(fd, LOCK_SH)) != 0) {
		err = -errno;
		munmap(base, size);
	}
	if (err == 0)
		vl_region_bind(out, base, size);
out:
	/*
	 * Mapped, the shared lock stays with the mapping (see lock_to_open);
	 * otherwise drop it explicitly, whatever the fd's other holders.
	 */
	if (err)
		flock(fd, LOCK_UN);
	close(fd);
	if (err)
		vl_log("region %s unusable: %s", path, strerror(-err));
	return err;
}

void vl_region_unmap(struct vl_region *r)
{
	if (r->hdr != NULL)
		munmap(r->hdr, r->size);
	memset(r, 0, sizeof(*r));
}

static struct vl_region the_region;
static int the_state; /* 0: not tried, 1: attached, < 0: -errno for good */
static pthread_mutex_t attach_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/*
 * A fork while another thread attaches would leave the child with
 * attach_lock held by a thread it does not have: fork waits for the
 * attach instead (it takes a moment, and never waits on this process).
 */
static void before_fork(void)
{
	pthread_mutex_lock(&attach_lock);
}

static void after_fork(void)
{
	pthread_mutex_unlock(&attach_lock);
}

static void register_atfork(void)
{
	pthread_atfork(before_fork, after_fork, after_fork);
}

int vl_region_get(struct vl_region **out)
{
	int s = __atomic_load_n(&the_state, __ATOMIC_ACQUIRE);

	if (s == 0) {
		const struct vl_config *cfg = vl_config();

		pthread_once(&atfork_once, register_atfork);
		pthread_mutex_lock(&attach_lock);
		s = the_state;
		if (s == 0) {
			int err = vl_region_open(cfg->region, 1, cfg->create_ranges,
						 cfg->create_files, &the_region);

			/*
			 * A region refused is refused for good (SPEC 5: the process
			 * keeps that answer), and so is a relative path (EINVAL: the
			 * environment is read once); a failure that may pass (EINTR,
			 * ENOMEM, EMFILE, ENOSPC...) is tried again at the next call.
			 */
			s = err ? err : 1;
			if (err == 0 || err == -EACCES || err == -EPROTO || err == -EUCLEAN ||
			    err == -EINVAL)
				__atomic_store_n(&the_state, s, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&attach_lock);
	}
	if (s < 0)
		return s;
	*out = &the_region;
	return 0;
}

int vl_file_new(const struct vl_region *r, const struct vl_ident *id, uint32_t *fi)
{
	int fresh, err;

	if (vl_room_for_file(r) != 0)
		return -ENOMEM; /* the file system of the region is full */
	*fi = vl_file_take(r, &fresh);
	if (*fi == VL_NIL)
		return -ENOMEM;
	if (fresh) {
		err = init_mutex(&vl_file_at(r, *fi)->h.lock);
		if (err) {
			r->hdr->c.file_hwm--; /* the slot is the mark's, untouched but its lock */
			return err;
		}
	}
	vl_file_publish(r, *fi, id);
	return 0;
}

/*
 * What is done under these locks takes a few hundred nanoseconds; going
 * to sleep in the kernel and being woken takes microseconds, and with two
 * processes at work that is where the time went. So a locker that finds
 * the lock taken first waits a little on the CPU, only reading the lock
 * word (glibc's, of a robust mutex: the owner's tid, 0 when free) so as
 * not to pull its cache line away from the holder.
 */
#define SPINS 200

#if defined(__GLIBC__) && (defined(__x86_64__) || defined(__i386__))
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__GLIBC__) && defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield")
#endif

static int lock_mutex(pthread_mutex_t *m)
{
#ifdef cpu_relax
	for (int i = 0; i < SPINS && __atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED) != 0;
	     i++)
		cpu_relax();
#endif
	return pthread_mutex_lock(m);
}

static int lock_result(pthread_mutex_t *m, int e)
{
	if (e == 0)
		return 0;
	if (e == ENOTRECOVERABLE)
		return -EUCLEAN;
	(void)m;
	return -e;
}

int vl_lock_region(const struct vl_region *r)
{
	pthread_mutex_t *m = &r->hdr->lock;
	int e = lock_mutex(m);

	if (e == EOWNERDEAD) {
		vl_log("region lock holder died: rebuilding lists and counters");
		vl_pool_rebuild(r);
		pthread_mutex_consistent(m);
		return 0;
	}
	return lock_result(m, e);
}

void vl_unlock_region(const struct vl_region *r)
{
	pthread_mutex_unlock(&r->hdr->lock);
}

/* A holder of file fi's lock died mid-change: vl_file_repair (core/pool.c). */
static void repair_file(const struct vl_region *r, uint32_t fi)
{
	if (vl_lock_region(r) != 0)
		return;
	vl_file_repair(r, fi);
	vl_log("file %u repaired: %u ranges", fi, vl_file_at(r, fi)->h.nranges);
	vl_unlock_region(r);
}

int vl_lock_file(const struct vl_region *r, uint32_t fi)
{
	pthread_mutex_t *m = &vl_file_at(r, fi)->h.lock;
	int e = lock_mutex(m);

	if (e == EOWNERDEAD) {
		vl_log("lock holder of file %u died: repairing", fi);
		repair_file(r, fi);
		pthread_mutex_consistent(m);
		return 0;
	}
	return lock_result(m, e);
}

void vl_unlock_file(const struct vl_region *r, uint32_t fi)
{
	pthread_mutex_unlock(&vl_file_at(r, fi)->h.lock);
}
