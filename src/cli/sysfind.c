/* SPDX-License-Identifier: MIT */
/*
 * sysfind.c - the users the machine's daemon serves (sysfind.h, DESIGN 22).
 *
 * Root looks at names any user can make (/dev/shm) or own (/run/user/N),
 * so it trusts none of them: a directory is read for names, and only a
 * name of a region's form is stat'ed, without following it, and never
 * opened; what it finds decides only which uid gets a worker, which then
 * opens its own default region as that user (the library's own checks,
 * DESIGN 9). A /dev/shm of 100,000 names costs its getdents calls and one
 * statx per name of the form.
 *
 * A user may mount a FUSE file system on its own /run/user/N, or on a file
 * of its own in /dev/shm; a server that never answers would stall root
 * for every user. So every statx is AT_STATX_DONT_SYNC (FUSE answers from
 * what it has cached, asking nothing), and /run/user/N is looked into
 * only once its mount is known, from mountinfo, to be a tmpfs.
 */
#include "cli.h"
#include "sysfind.h"

#include "core/parse.h"
#include "sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define SHM_PREFIX "libvolatile."
#define IN_USER_DIR "libvolatile"
#define ROOTS_NAME "libvolatile.0"
/* refusals said one by one in a call; the rest are counted */
#define REFUSALS_SAID 64
/* what a region's name is stat'ed for */
#define SEEN (STATX_TYPE | STATX_MODE | STATX_NLINK | STATX_UID | STATX_GID)

enum place { PLACE_RUN_USER, PLACE_RUN, PLACE_DEV_SHM };

struct find {
	struct vl_sys_user *out;
	int max, n;
	const uint32_t *only;
	int nonly;
	void (*refused)(const char *path, const char *why, void *ctx);
	void *ctx;
	int sorted; /* out is in order (tidy), not appended to since */
	unsigned said, unsaid;
	char run[48], run_user[48], dev_shm[48];
};

const char *vl_sys_uid_of(const char *s, size_t len, uint32_t *uid)
{
	uint64_t v = 0;

	if (len == 0 || len > 10)
		return len == 0 ? "no uid" : "not a uid";
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return "not a decimal uid";
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	/* one user, one name: "061001" would be a second name of uid 61001 */
	if (s[0] == '0' && len > 1)
		return "a uid with a leading zero";
	if (v >= UINT32_MAX)
		return "not a uid";
	*uid = (uint32_t)v;
	return NULL;
}

/*
 * The places' roots. The test build alone may put them under another
 * directory (VOLATILE_FAULT_SYS_ROOT), so that a test can make a tree of
 * users without touching the machine's; the installed command looks at
 * the machine's only, and carries no such name (fault-release.sh).
 */
static int set_roots(struct find *f)
{
	const char *top = "";

#ifdef VL_FAULT_INJECTION
	const char *t = secure_getenv("VOLATILE_FAULT_SYS_ROOT");

	if (t != NULL && t[0] == '/')
		top = t;
#endif
	if ((size_t)snprintf(f->run, sizeof(f->run), "%s/run", top) >= sizeof(f->run) ||
	    (size_t)snprintf(f->run_user, sizeof(f->run_user), "%s/run/user", top) >=
		    sizeof(f->run_user) ||
	    (size_t)snprintf(f->dev_shm, sizeof(f->dev_shm), "%s/dev/shm", top) >=
		    sizeof(f->dev_shm))
		return -1;
	return 0;
}

static void refuse(struct find *f, const char *path, const char *why)
{
	if (f->refused == NULL)
		return;
	if (f->said < REFUSALS_SAID) {
		f->said++;
		f->refused(path, why, f->ctx);
	} else {
		f->unsaid++;
	}
}

static int wanted(const struct find *f, uint32_t uid)
{
	if (f->nonly <= 0)
		return 1;
	for (int i = 0; i < f->nonly; i++)
		if (f->only[i] == uid)
			return 1;
	return 0;
}

static int rank(const struct find *f, const char *path)
{
	size_t len = strlen(f->run_user);

	if (strncmp(path, f->run_user, len) == 0 && path[len] == '/')
		return PLACE_RUN_USER;
	len = strlen(f->run);
	if (strncmp(path, f->run, len) == 0 && path[len] == '/')
		return PLACE_RUN;
	return PLACE_DEV_SHM;
}

/* the call being sorted, for by_uid (qsort gives its comparator nothing else) */
static const struct find *sorting;

/* by uid, then by place: a uid's first place first */
static int by_uid(const void *pa, const void *pb)
{
	const struct vl_sys_user *a = pa, *b = pb;

	if (a->uid != b->uid)
		return a->uid < b->uid ? -1 : 1;
	return rank(sorting, a->path) - rank(sorting, b->path);
}

/* out sorted by uid, each uid once (its first place) */
static void tidy(struct find *f)
{
	int kept = 0;

	sorting = f;
	qsort(f->out, (size_t)f->n, sizeof(f->out[0]), by_uid);
	for (int i = 0; i < f->n; i++)
		if (kept == 0 || f->out[kept - 1].uid != f->out[i].uid)
			f->out[kept++] = f->out[i];
	f->n = kept;
	f->sorted = 1;
}

static void refuse_beyond(struct find *f, const char *path)
{
	char why[64];

	snprintf(why, sizeof(why), "beyond the %d users served (the lowest uids)", f->max);
	refuse(f, path, why);
}

/*
 * Keep a user found. Appended while there is room, sorted once full (a
 * machine's users are found with at most one sort); then only a lower uid
 * gets in, in place of the highest.
 */
static void found(struct find *f, uint32_t uid, gid_t gid, const char *path)
{
	/*
	 * Uid 0 aside, a file of group 0 is root's chown, not a group its
	 * owner was in: a worker of a uid with no passwd entry takes the
	 * file's group, and root's would give it more than its user had
	 * (system-gid0.sh).
	 */
	struct vl_sys_user u = { uid, gid == 0 && uid != 0 ? VL_SYS_NOGROUP : gid, "" };
	int i;

	snprintf(u.path, sizeof(u.path), "%s", path);
	if (f->n == f->max && !f->sorted)
		tidy(f);
	if (f->n < f->max) {
		f->out[f->n++] = u;
		f->sorted = 0;
		return;
	}
	for (i = 0; i < f->n; i++)
		if (f->out[i].uid == uid)
			return; /* found in an earlier place */
	if (f->n == 0 || uid > f->out[f->n - 1].uid) {
		refuse_beyond(f, path);
		return;
	}
	refuse_beyond(f, f->out[f->n - 1].path);
	for (i = f->n - 1; i > 0 && f->out[i - 1].uid > uid; i--)
		f->out[i] = f->out[i - 1];
	f->out[i] = u;
}

static int see(int dirfd, const char *name, int flags, struct statx *sx)
{
	memset(sx, 0, sizeof(*sx));
	if (statx(dirfd, name, flags | AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
		  SEEN | STATX_MNT_ID, sx) != 0)
		return -errno;
	return (sx->stx_mask & SEEN) == SEEN ? 0 : -ENODATA;
}

/* Why the name seen as sx is no region of uid's (NULL: it is one); dir_mnt 0: unknown. */
static const char *not_region(const struct statx *sx, uint32_t uid, uint64_t dir_mnt, char *buf,
			      size_t size)
{
	if (S_ISLNK(sx->stx_mode))
		return "a symlink";
	if (!S_ISREG(sx->stx_mode))
		return "not a regular file";
	if (sx->stx_uid != uid) {
		snprintf(buf, size, "owned by uid %u, not %u", sx->stx_uid, uid);
		return buf;
	}
	if (sx->stx_mode != (S_IFREG | 0600)) {
		snprintf(buf, size, "mode %04o, not 0600", sx->stx_mode & 07777u);
		return buf;
	}
	if (sx->stx_nlink != 1) {
		snprintf(buf, size, "%u links, not 1", sx->stx_nlink);
		return buf;
	}
	if (dir_mnt != 0 && (sx->stx_mask & STATX_MNT_ID) && sx->stx_mnt_id != dir_mnt)
		return "a mount point";
	return NULL;
}

/* Look at one name of a region's form in dirfd; path is how it is spelt. */
static void look_at(struct find *f, int dirfd, const char *name, uint32_t uid, uint64_t dir_mnt,
		    const char *path)
{
	struct statx sx;
	char buf[64];
	const char *why;
	int err = see(dirfd, name, 0, &sx);

	if (err == -ENOENT)
		return;
	if (err != 0) {
		refuse(f, path, err == -ENODATA ? "not seen whole" : strerror(-err));
		return;
	}
	why = not_region(&sx, uid, dir_mnt, buf, sizeof(buf));
	if (why != NULL)
		refuse(f, path, why);
	else
		found(f, uid, sx.stx_gid, path);
}

struct mount_find {
	uint64_t id;
	int found, tmpfs;
};

static int on_mount(void *arg, char *line)
{
	struct mount_find *m = arg;
	struct vl_mount_fields mf;

	if (vl_parse_mount_line(line, &mf) != 0 || mf.id != m->id)
		return 0;
	m->found = 1;
	m->tmpfs = mf.fstype_len == 5 && memcmp(mf.fstype, "tmpfs", 5) == 0;
	return 1;
}

/*
 * Is the directory fd (seen as sx) on a tmpfs? Its mount's type, from
 * mountinfo: no question reaches its file system. A kernel without
 * STATX_MNT_ID (before 5.8): fstatfs, which a FUSE mount answers without
 * its server for any process it does not allow (root included, unless
 * allow_other).
 */
static int on_tmpfs(int fd, const struct statx *sx)
{
	struct mount_find m = { sx->stx_mnt_id, 0, 0 };
	struct statfs sf;

	if (sx->stx_mask & STATX_MNT_ID) {
		if (vl_each_line("/proc/self/mountinfo", on_mount, &m) == 1 && m.found)
			return m.tmpfs;
		return 0;
	}
	return fstatfs(fd, &sf) == 0 && sf.f_type == TMPFS_MAGIC;
}

/* Why /run/user/N (fd, seen as sx) is no place of uid's region: NULL if it is one. */
static const char *not_user_dir(int fd, const struct statx *sx, uint32_t uid, char *buf,
				size_t size)
{
	if (!S_ISDIR(sx->stx_mode))
		return "not a directory";
	if (sx->stx_uid != uid) {
		snprintf(buf, size, "owned by uid %u, not %u", sx->stx_uid, uid);
		return buf;
	}
	if (sx->stx_mode & 022)
		return "writable by group or others";
	if (!on_tmpfs(fd, sx))
		return "not on a tmpfs";
	return NULL;
}

/* /run/user/N: the directory checked first, then its region's name. */
static void look_in_user_dir(struct find *f, int parent, const char *name, uint32_t uid)
{
	char dir[64], path[80], buf[64];
	const char *why = NULL;
	struct statx sx;
	int fd, err;

	if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", f->run_user, name) >= sizeof(dir))
		return; /* a uid's ten digits at most: the test build's root is too long */
	/* O_PATH: nothing of the directory's file system is asked to open it */
	fd = openat(parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		if (see(parent, name, 0, &sx) == 0)
			why = S_ISLNK(sx.stx_mode) ? "a symlink" : "not a directory";
		else if (err != ENOENT)
			why = strerror(err);
		if (why != NULL)
			refuse(f, dir, why);
		return;
	}
	err = see(fd, "", AT_EMPTY_PATH, &sx);
	if (err != 0)
		why = strerror(-err);
	else
		why = not_user_dir(fd, &sx, uid, buf, sizeof(buf));
	if (why != NULL) {
		refuse(f, dir, why);
	} else if ((size_t)snprintf(path, sizeof(path), "%s/" IN_USER_DIR, dir) >=
		   sizeof(f->out[0].path)) {
		refuse(f, dir, "too long a name");
	} else {
		look_at(f, fd, IN_USER_DIR, uid, (sx.stx_mask & STATX_MNT_ID) ? sx.stx_mnt_id : 0,
			path);
	}
	close(fd);
}

/* The directory root, opened to be read (not following a symlink), and its mount. */
static int open_root(struct find *f, const char *root, uint64_t *mnt)
{
	struct statx sx;
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	*mnt = 0;
	if (fd < 0) {
		if (errno != ENOENT)
			refuse(f, root, strerror(errno));
		return -1;
	}
	if (see(fd, "", AT_EMPTY_PATH, &sx) == 0 && (sx.stx_mask & STATX_MNT_ID))
		*mnt = sx.stx_mnt_id;
	return fd;
}

/* A name of dir that is all digits but no uid's spelling is a region's name refused. */
static void refuse_name(struct find *f, const char *root, const char *name, const char *why)
{
	char path[128];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, name) < sizeof(path))
		refuse(f, path, why);
}

static int digits(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

static void walk_run_user(struct find *f)
{
	struct vl_dirbuf d;
	struct dirent64 *e;
	uint64_t mnt;

	d.fd = open_root(f, f->run_user, &mnt);
	if (d.fd < 0)
		return;
	d.len = d.pos = 0;
	while ((e = vl_next_dirent(&d)) != NULL) {
		uint32_t uid;
		const char *why;

		if (!digits(e->d_name))
			continue; /* no user's directory: not looked at */
		why = vl_sys_uid_of(e->d_name, strlen(e->d_name), &uid);
		if (why != NULL) {
			if (f->nonly <= 0)
				refuse_name(f, f->run_user, e->d_name, why);
		} else if (wanted(f, uid)) {
			look_in_user_dir(f, d.fd, e->d_name, uid);
		}
	}
	close(d.fd);
}

static void look_at_roots_run(struct find *f)
{
	char path[80];
	uint64_t mnt;
	int fd;

	if (!wanted(f, 0))
		return;
	fd = open_root(f, f->run, &mnt);
	if (fd < 0)
		return;
	snprintf(path, sizeof(path), "%s/" ROOTS_NAME, f->run);
	look_at(f, fd, ROOTS_NAME, 0, mnt, path);
	close(fd);
}

static void walk_dev_shm(struct find *f)
{
	struct vl_dirbuf d;
	struct dirent64 *e;
	uint64_t mnt;
	char path[80];

	d.fd = open_root(f, f->dev_shm, &mnt);
	if (d.fd < 0)
		return;
	d.len = d.pos = 0;
	while ((e = vl_next_dirent(&d)) != NULL) {
		const char *n = e->d_name + strlen(SHM_PREFIX), *why;
		uint32_t uid;

		/* a region's name is the prefix and digits: its daemon's lock file is not one */
		if (strncmp(e->d_name, SHM_PREFIX, strlen(SHM_PREFIX)) != 0 || !digits(n))
			continue;
		why = vl_sys_uid_of(n, strlen(n), &uid);
		if (why != NULL) {
			if (f->nonly <= 0)
				refuse_name(f, f->dev_shm, e->d_name, why);
			continue;
		}
		if (!wanted(f, uid))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", f->dev_shm, e->d_name) >=
		    sizeof(f->out[0].path)) {
			refuse(f, path, "too long a name");
			continue;
		}
		look_at(f, d.fd, e->d_name, uid, mnt, path);
	}
	close(d.fd);
}

int vl_sys_find(struct vl_sys_user *out, int max, const uint32_t *only, int nonly,
		void (*refused)(const char *path, const char *why, void *ctx), void *ctx)
{
	struct find f = { .out = out, .max = max > 0 ? max : 0, .only = only, .nonly = nonly,
			  .refused = refused, .ctx = ctx };

	if (set_roots(&f) != 0) {
		refuse(&f, "/", "the places' roots do not fit");
		return 0;
	}
	/* the order of a user's places (DESIGN 9): a uid found twice keeps the first */
	walk_run_user(&f);
	look_at_roots_run(&f);
	walk_dev_shm(&f);
	tidy(&f);
	if (f.unsaid > 0 && refused != NULL) {
		char why[64];

		snprintf(why, sizeof(why), "%u more names refused, not listed", f.unsaid);
		refused("...", why, ctx);
	}
	return f.n;
}
