/* SPDX-License-Identifier: MIT */
/*
 * region.c - make, validate and map a region file; its records (this
 * process's own region, attached and followed, is attach.c; its locks,
 * taken with their repair, lock.c).
 *
 * A region is made complete before it has its name (make): laid out in
 * an anonymous file, then linked at the name only if the name is free.
 * So whatever an opener finds at the name is a whole region or not ours:
 * it is checked (owner, mode, one link, geometry, format) and refused if
 * it fails, never laid out again. The geometry never changes afterwards;
 * the data has its own locks (lock.c).
 */
#include "region.h"

#include "lock.h"
#include "core/compiler.h"
#include "core/fault.h"
#include "core/pool.h"
#include "log.h"
#include "sys.h"
#include "default_place.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#if defined(__has_include)
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif
#endif
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * A region reachable through a symlink is refused (DESIGN 9), wherever the
 * symlink is on its path: openat2's RESOLVE_NO_SYMLINKS (ELOOP). Where
 * the kernel has no openat2 (before 5.6, or a seccomp filter refuses it),
 * only the last name is checked (O_NOFOLLOW).
 */
static int open_no_symlinks(int dirfd, const char *path, int flags, mode_t mode)
{
#if defined(SYS_openat2) && defined(RESOLVE_NO_SYMLINKS)
	struct open_how how;
	int fd;

	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(unsigned)flags;
	how.mode = (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? mode : 0;
	how.resolve = RESOLVE_NO_SYMLINKS;
	fd = VL_SYSCALL("openat2 region", vl_raw_openat2(dirfd, path, &how, sizeof(how)));
	if (fd >= 0 || (fd != -ENOSYS && fd != -EPERM))
		return fd;
#endif
	return VL_SYSCALL("openat region", vl_raw_openat(dirfd, path, flags, mode));
}

/* The directory of path (O_PATH), and its last name in *name. */
static int open_dir(const char *path, char *name, size_t size)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	int fd;

	if (path[0] != '/' || slash == NULL || slash[1] == '\0' ||
	    (size_t)(slash - path) >= sizeof(dir) || strlen(slash + 1) >= size)
		return -EINVAL;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash == path ? 1 : slash - path] = '\0';
	if (slash == path)
		dir[0] = '/';
	strcpy(name, slash + 1);
	fd = VL_SYSCALL("open region dir",
			open_no_symlinks(AT_FDCWD, dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0));
	if (fd < 0)
		return fd == -ELOOP ? -EACCES : fd;
	return fd;
}

/*
 * Ours to use: a regular file of this user, no group or other access.
 * (Another name linked to it is no harm here, as nothing that opens the
 * region truncates or lays it out; refusing it would let anyone who can
 * make hard links deny the feature.)
 */
static int trusted(int fd, struct stat *st)
{
	int err = VL_SYSCALL("fstat region", vl_raw_fstat(fd, st));

	if (err != 0)
		return err;
	if (!S_ISREG(st->st_mode) || st->st_uid != vl_raw_geteuid() || (st->st_mode & 077) != 0) {
		vl_log("region refused: mode %o owner %u", (unsigned)st->st_mode,
		       (unsigned)st->st_uid);
		return -EACCES;
	}
	return 0;
}

static int map(int fd, size_t size, void **base)
{
	void *p = VL_SYSCALL_PTR("mmap region",
				 vl_raw_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				      (off_t)VL_MAP_OFFSET));

	if (vl_map_error(p))
		return vl_map_error(p);
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
	int err = VL_SYSCALL("madvise populate",
			     vl_raw_madvise((void *)start, end - start, MADV_POPULATE_WRITE));

	if (err == 0 || err == -EINVAL)
		return 0;
	return -ENOSPC;
}

static int ready_slots(const struct vl_region *r, uint64_t off, uint32_t size, uint32_t hwm,
		       uint32_t cap, uint32_t *ready)
{
	uint32_t want;

	if (hwm < *ready)
		return 0;
	want = hwm + VL_READY_CHUNK / size;
	if (want > cap)
		want = cap;
	if (want <= hwm || populate(r->hdr, off + (uint64_t)hwm * size,
				    (uint64_t)(want - hwm) * size) != 0)
		return -ENOSPC;
	*ready = want;
	return 0;
}

/* The node allocator (core/pool.c), the pages of its new slots made present here. */
uint32_t vl_node_get(const struct vl_region *r, uint32_t fi)
{
	return vl_node_take(r, fi, populate);
}

int vl_room_for_file(const struct vl_region *r)
{
	const struct vl_counters *c = &r->hdr->c;

	VL_ASSERT_HELD(r, &r->hdr->lock);
	if (c->file_free != VL_NIL)
		return 0;
	return ready_slots(r, r->hdr->geo.files_off, sizeof(struct vl_file), c->file_hwm,
			   r->file_cap, &r->hdr->c.file_ready);
}

/*
 * Lay out a new region in fd, a file nobody else can see yet (make).
 * The magic goes last; as nobody sees the file until it is complete, a
 * creator killed anywhere in here leaves nothing behind.
 */
static int lay_out(int fd, uint32_t ranges, uint32_t files, const char *path, int chosen,
		   void **base, size_t *size)
{
	struct vl_geometry g, unsealed;
	struct vl_header *h;
	int err;

	vl_geometry_plan(&g, ranges, files);
	err = VL_SYSCALL("ftruncate region",
			 vl_raw_ftruncate(fd, (off_t)(VL_MAP_OFFSET + g.region_size)));
	if (err)
		return err;
	err = map(fd, g.region_size, base);
	if (err)
		return err;
	h = *base;
	/*
	 * The header, the file table's index and the table of processes are
	 * written without asking first (a lock taker registers without the
	 * region lock): make them real now.
	 */
	if (populate(h, 0, g.files_off) != 0 || populate(h, g.hash_off, g.nodes_off - g.hash_off) ||
	    populate(h, g.procs_off, g.region_size - g.procs_off)) {
		vl_raw_munmap(*base, g.region_size);
		return -ENOSPC;
	}
	unsealed = g;
	unsealed.magic = 0;
	vl_region_format(h, &unsealed);
	/* answers nothing until its maker has looked for older regions (vl_region_settle) */
	h->fate.waiting = 1;
	h->fate.chosen = chosen;
	snprintf(h->fate.path, sizeof(h->fate.path), "%s", path);
	VL_STEP("lay_out: all but the magic");
	__atomic_store_n(&h->geo.magic, VL_MAGIC, __ATOMIC_RELEASE);
	*size = g.region_size;
	vl_log("region laid out: %u ranges, %u files, %llu bytes", g.node_cap - VL_CHUNK,
	       g.file_cap - 1, (unsigned long long)g.region_size);
	return 0;
}

/*
 * Put the complete file fd (anonymous: O_TMPFILE) at name in dirfd,
 * unless something is there already (-EEXIST). linkat through
 * /proc/self/fd needs no privilege; AT_EMPTY_PATH needs
 * CAP_DAC_READ_SEARCH, for where /proc is not mounted.
 */
static int publish_anonymous(int fd, int dirfd, const char *name)
{
	char self[64];
	int err;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	err = VL_SYSCALL("link region",
			 vl_raw_linkat(AT_FDCWD, self, dirfd, name, AT_SYMLINK_FOLLOW));
	if (err == 0 || err == -EEXIST)
		return err;
	return vl_raw_linkat(fd, "", dirfd, name, AT_EMPTY_PATH);
}

/*
 * Make a new region at name in dirfd: laid out complete under no name
 * (O_TMPFILE) or a name of its own, then given the region's name only if
 * it is free. So no file at the region's name is ever half made, and the
 * library lays out only files it has just made itself: a file found at
 * the name, whatever its bytes, is checked, never overwritten (DESIGN 9).
 * -EEXIST if another process published one first: use that.
 */
static int make(int dirfd, const char *name, uint32_t ranges, uint32_t files, const char *path,
		int chosen, void **base, size_t *size, struct stat *st)
{
	char tmp[NAME_MAX + 1];
	int fd, err, named = 0;

	fd = VL_SYSCALL("create region",
			vl_raw_openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
	if (fd < 0 && fd != -EOPNOTSUPP && fd != -EISDIR && fd != -EINVAL)
		return fd;
	if (fd < 0) {
		/* no O_TMPFILE here: a name of our own, O_EXCL, then renamed */
		if ((size_t)snprintf(tmp, sizeof(tmp), ".%.200s.new.%d.%lx", name, (int)getpid(),
				     (unsigned long)(uintptr_t)&tmp) >= sizeof(tmp))
			return -ENAMETOOLONG;
		fd = VL_SYSCALL("create region",
				vl_raw_openat(dirfd, tmp, O_RDWR | O_CREAT | O_EXCL |
								    O_NOFOLLOW | O_CLOEXEC |
								    O_NOCTTY, 0600));
		if (fd < 0)
			return fd;
		named = 1;
	}
	/* the umask may have taken bits: exactly 0600, whatever it was */
	err = vl_raw_fchmod(fd, 0600);
	if (err == 0)
		err = VL_SYSCALL("fstat new region", vl_raw_fstat(fd, st));
	if (err == 0)
		err = lay_out(fd, ranges, files, path, chosen, base, size);
	if (err == 0) {
		if (!named) {
			err = publish_anonymous(fd, dirfd, name);
		} else {
			err = VL_SYSCALL("rename region",
					 vl_raw_renameat2(dirfd, tmp, dirfd, name, RENAME_NOREPLACE));
			/* no renameat2 on this file system: link, which fails on a name taken */
			if (err == -EINVAL || err == -ENOSYS)
				err = vl_raw_linkat(dirfd, tmp, dirfd, name, 0);
		}
		if (err)
			vl_raw_munmap(*base, *size);
	}
	if (named)
		vl_raw_unlinkat(dirfd, tmp, 0); /* renamed away already, or garbage */
	vl_raw_close(fd);
	return err;
}

static int attach(int fd, const struct stat *st, void **base, size_t *size)
{
	struct vl_geometry g;
	uint64_t have;
	int err;

	if ((uint64_t)st->st_size < VL_MAP_OFFSET + sizeof(g))
		return -EUCLEAN;
	have = (uint64_t)st->st_size - VL_MAP_OFFSET;
	if (VL_SYSCALL("read region", vl_raw_pread(fd, &g, sizeof(g), (off_t)VL_MAP_OFFSET)) !=
	    (ssize_t)sizeof(g))
		return -EUCLEAN;
	err = vl_geometry_check(&g, have);
	if (err)
		return err;
	err = map(fd, (size_t)have, base);
	if (err)
		return err;
	/* check what is mapped, not what was read a moment ago */
	err = vl_geometry_check(&((struct vl_header *)*base)->geo, have);
	if (err) {
		vl_raw_munmap(*base, (size_t)have);
		return err;
	}
	*size = (size_t)have;
	return 0;
}

/*
 * Which user, and which name, a region is for, as one byte of its file
 * (in the hole before VL_MAP_OFFSET): FNV-1a of the user and the name it
 * was made with, or "(default)" for a region at the default place, whose
 * name moves between places.
 */
static uint64_t tag_of(uint32_t uid, const char *name, int chosen)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const char *p;

	for (int i = 0; i < 4; i++, uid >>= 8)
		h = (h ^ (uid & 0xff)) * 0x100000001b3ull;
	for (p = chosen ? "(default)" : name; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	return VL_TAG_BASE + h % VL_TAG_SPAN;
}

uint64_t vl_region_tag(const struct vl_region *r)
{
	const struct vl_fate *f = &r->hdr->fate;
	char name[sizeof(f->path)];

	memcpy(name, f->path, sizeof(name));
	name[sizeof(name) - 1] = '\0';
	return tag_of((uint32_t)vl_raw_geteuid(), name, f->chosen != 0);
}

/*
 * Say, for as long as this process maps r, that it uses r: an OFD read
 * lock on r's tag byte. The mapping holds the open file description, and
 * the lock with it, after the fd is closed; the kernel drops it when the
 * last mapping goes, whatever kills the process. /proc/locks lists OFD
 * locks of every process, in every pid namespace, dumpable or not (their
 * /proc/PID/maps may be closed to us): a region made anew finds there the
 * regions of its name still in use that it cannot see otherwise, and
 * waits for them (vl_region_settle).
 */
static void show_in_use(int fd, const struct vl_region *r)
{
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_len = 1 };
	int err;

	fl.l_start = (off_t)vl_region_tag(r);
	err = VL_SYSCALL("tag lock", vl_raw_fcntl(fd, F_OFD_SETLK, &fl));
	if (err != 0)
		vl_log("region: cannot take its tag lock (%s): unseen users may go unnoticed",
		       strerror(-err));
}

/*
 * A retired region (move.c) found at the name: its records were moved to
 * a successor (or are being moved, by its users), and it answers nothing
 * (ESTALE) for ever. It got back to its name (renamed back, or the
 * default place went back to it when a runtime directory was unmounted):
 * take its name away, so that a new region is made there, which settles
 * like any new one (its successor, wherever it is, is moved in). Under
 * its move lock, so that two openers that found it do not take away the
 * name of the region one of them made since; only if the name still
 * leads to it.
 */
static void discard_retired(void *base, size_t size, int dirfd, const char *name,
			    const struct stat *st)
{
	struct vl_region r;
	struct stat now;
	int e;

	vl_region_bind(&r, base, size);
	e = vl_lock_take(&r, &r.hdr->fate.move_lock);
	if (e >= 0) {
		if (VL_SYSCALL("fstatat region",
			       vl_raw_fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW)) == 0 && now.st_dev == st->st_dev &&
		    now.st_ino == st->st_ino &&
		    VL_SYSCALL("unlink retired name", vl_raw_unlinkat(dirfd, name, 0)) == 0)
			vl_log("a retired region was back at %s: its name is taken away", name);
		vl_lock_drop(&r, &r.hdr->fate.move_lock);
	}
	vl_raw_munmap(base, size);
}

/* Over 80 lines: the steps of opening a region (DESIGN 9), in order, each with its errno. */
int vl_region_open(const char *path, int create, uint32_t ranges, uint32_t files,
		   struct vl_region *out)
{
	char name[NAME_MAX + 1];
	struct stat st;
	void *base = NULL;
	size_t size = 0;
	int dirfd, fd = -1, err = -EAGAIN;

	memset(out, 0, sizeof(*out));
	/*
	 * A relative path names another file in each working directory, and
	 * would split the user's processes between regions (DESIGN 9). Falling
	 * back to the default region would split them too, from those given
	 * the same path absolute: the region is unusable instead.
	 */
	if (path[0] != '/') {
		vl_log("VOLATILE_REGION=%s is not an absolute path: MARK and UNMARK fail "
		       "with EINVAL", path);
		return -EINVAL;
	}
	/* a region knows the name it was made with (fate.path): it must fit there whole */
	if (strlen(path) >= sizeof(((struct vl_fate *)0)->path)) {
		vl_log("VOLATILE_REGION is %zu bytes long, 255 at most: MARK and UNMARK fail "
		       "with ENAMETOOLONG", strlen(path));
		return -ENAMETOOLONG;
	}
	dirfd = open_dir(path, name, sizeof(name));
	if (dirfd < 0) {
		err = dirfd;
		goto out;
	}
	for (int tries = 0; tries < 8 && err == -EAGAIN; tries++) {
		fd = VL_SYSCALL("open region",
				open_no_symlinks(dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC |
								      O_NOCTTY | O_NONBLOCK, 0));
		if (fd >= 0) {
			err = trusted(fd, &st);
			if (err == 0)
				err = attach(fd, &st, &base, &size);
			if (err == 0 && (create & VL_OPEN_CREATE) &&
			    __atomic_load_n(&((struct vl_header *)base)->fate.retired, __ATOMIC_ACQUIRE)) {
				/* a region whose records went elsewhere, back at its name */
				discard_retired(base, size, dirfd, name, &st);
				vl_raw_close(fd);
				fd = -1;
				err = -EAGAIN;
				continue;
			}
			break;
		}
		if (fd == -ELOOP) {
			err = -EACCES; /* a symlink at the name is never followed */
		} else if (fd != -ENOENT || !create) {
			err = fd;
		} else {
			err = make(dirfd, name, ranges, files, path,
				   (create & VL_OPEN_CHOSEN) || vl_is_default_name(path), &base, &size,
				   &st);
			/*
			 * Made (or another process was first): open it by its name.
			 * A mapping of the anonymous file would show "#INODE
			 * (deleted)" in /proc/PID/maps for as long as it lives, and
			 * that name is how a region is told in there (settling).
			 */
			if (err == 0)
				vl_raw_munmap(base, size);
			if (err == 0 || err == -EEXIST)
				err = -EAGAIN;
		}
	}
	if (err == 0) {
		vl_region_bind(out, base, size);
		out->file_dev = st.st_dev;
		out->file_ino = st.st_ino;
		out->path = path;
		show_in_use(fd, out);
	}
	if (fd >= 0)
		vl_raw_close(fd);
	vl_raw_close(dirfd);
out:
	if (err)
		vl_log("region %s unusable: %s", path, strerror(-err));
	return err;
}

int vl_region_open_fd(int fd, struct vl_region *out)
{
	struct stat st;
	void *base = NULL;
	size_t size = 0;
	int err;

	memset(out, 0, sizeof(*out));
	err = trusted(fd, &st);
	if (err == 0)
		err = attach(fd, &st, &base, &size);
	if (err == 0) {
		vl_region_bind(out, base, size);
		out->file_dev = st.st_dev;
		out->file_ino = st.st_ino;
	}
	return err;
}

void vl_region_unmap(struct vl_region *r)
{
	if (r->hdr != NULL)
		vl_raw_munmap(r->hdr, r->size);
	memset(r, 0, sizeof(*r));
}

/* ---- records ------------------------------------------------------------ */

int vl_file_new(const struct vl_region *r, const struct vl_ident *id, uint32_t *fi)
{
	int fresh;

	VL_ASSERT_HELD(r, &r->hdr->lock);
	if (vl_room_for_file(r) != 0)
		return -ENOMEM; /* the file system of the region is full */
	*fi = vl_file_take(r, &fresh);
	if (*fi == VL_NIL)
		return -ENOMEM;
	/* nobody can wait on a slot never published: whatever its lock says is noise */
	if (fresh)
		__atomic_store_n(&vl_file_at(r, *fi)->h.lock.word, 0, __ATOMIC_RELAXED);
	vl_file_publish(r, *fi, id);
	/* made is a sign of life (evict.c): a record made for a move, an ashmem region, a MARK */
	vl_file_at(r, *fi)->h.alive_at = vl_now_s();
	return 0;
}
