/* SPDX-License-Identifier: MIT */
/*
 * supervise.c - `volatile run`'s supervisor (DESIGN 21): the volatile
 * fallocate calls that the preload cannot see, served through the
 * listener of the filter run put on itself before it exec'd CMD in its
 * place (filter.c, run.c).
 *
 * The supervisor is a process of its own, run's grandchild, in a session
 * of its own: CMD keeps run's pid, parent and terminal, and no signal,
 * stop or exit of CMD's passes through us. Its main thread waits until no
 * process uses the filter (CMD's tree, and whatever of it outlives CMD);
 * threads of its own serve the calls, each call in one of them:
 *
 *   receive          the call's thread, fd, mode, offset, length
 *   pidfd            the calling thread's (kept from its last call), or one
 *                    opened by number and the notification checked still
 *                    valid: the number is the caller's only while it waits
 *   place            where the file is, from /proc: taken only on a mount
 *                    whose file system asks no server (place.c)
 *   pidfd_getfd      our own descriptor of the caller's open file (or, where
 *                    the kernel refuses it, a reopening of a regular file
 *                    through /proc: take_reopened)
 *   the library      vl_volatile_fallocate_as, with the caller's process and
 *                    fd noted as the holder, so purgers reach the file
 *                    through it, not through our copy, closed at once
 *   respond          the result, or the errno, as the shim would give it
 *
 * A caller that cannot be looked into (not dumpable, ptrace refused), one
 * of another effective user (run as root, CMD dropping to a user: that
 * user's region is its own), one in a user namespace that maps our user
 * to another (its library takes itself for that user: its region is
 * another), a file of a file system that may ask a server (FUSE, NFS), a
 * shortage of ours, or an alias mode on a
 * file that is not tmpfs, is let through to the kernel, which answers as
 * without the library (EOPNOTSUPP for a volatile mode). Once the
 * supervisor is gone (killed), the kernel answers ENOSYS. (An alias on a file we could not take is
 * refused as an UNMARK: it might be tmpfs, and purged.)
 */
#include "cli.h"

#include "core/parse.h"
#include "core/tidmap.h"
#include "env.h"
#include "ident.h"
#include "log.h"
#include "ops.h"
#include "sys.h"
#include "default_place.h"
#include "mutex.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_SECCOMP
#include <seccomp.h>
#endif

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

/*
 * run's region as a caller's library would name it (env.c): "" for the
 * user's default place, else VOLATILE_REGION spelled one way. run sets
 * VOLATILE_REGION (--region) before its library reads it.
 */
void vl_sv_region_key(char *buf, size_t size)
{
	const struct vl_config *cfg = vl_config();

	snprintf(buf, size, "%s", cfg->region_chosen ? "" : cfg->region);
}

#ifdef HAVE_SECCOMP

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* Linux 6.9: a pidfd for a thread, not only a leader */
#endif

/* pidfds this serving thread opened: a call that opened one looked its caller up anew */
static __thread unsigned long pidfds_opened;
/* callers looked up anew, by all the serving threads (--debug says it at each) */
static unsigned long lookups;

static int pidfd_open_(pid_t pid, unsigned int flags)
{
	pidfds_opened++;
	return vl_raw_pidfd_open(pid, flags);
}

static int pidfd_getfd_(int pidfd, int fd)
{
	return vl_raw_pidfd_getfd(pidfd, fd, 0);
}

/* fallocate's number in the native ABI and in i386's (-1: none), known once */
static int nr_native = -1, nr_x86 = -1;

/* The call's arguments, as the caller's ABI passes them. */
struct call {
	int fd, mode;
	int64_t off, len;
};

static int decode(const struct seccomp_data *d, struct call *c)
{
	if ((uint32_t)d->arch == seccomp_arch_native() && d->nr == nr_native) {
		c->off = (int64_t)d->args[2];
		c->len = (int64_t)d->args[3];
	} else if (vl_sv_x86_compat(d->arch) && d->nr == nr_x86) {
		/* i386: the two 64-bit values come as low and high 32-bit halves */
		c->off = (int64_t)(((uint64_t)(uint32_t)d->args[3] << 32) | (uint32_t)d->args[2]);
		c->len = (int64_t)(((uint64_t)(uint32_t)d->args[5] << 32) | (uint32_t)d->args[4]);
	} else {
		return -1;
	}
	c->fd = (int)d->args[0];
	c->mode = (int)d->args[1];
	return 0;
}

/*
 * Which region a caller's library would use (DESIGN 9, 21), judged once
 * per exec of its process: `ours` is 1 when it is run's. The exec is known
 * by the 16 random bytes the kernel gives each one (AT_RANDOM: their
 * address in the process's auxiliary vector, the bytes on its new stack):
 * exec keeps the pid, the thread and a kept pidfd, and changes the
 * environment; the bytes read again at that address match only in the
 * same exec (a new one has its own at an address of its own). at_random
 * 0: nothing known, judge again.
 */
struct exec_view {
	uint64_t at_random;
	unsigned char bytes[16];
	int ours;
	int aliases; /* its library takes the 2012 modes (VOLATILE_2012_ABI=1): 1, 0, -1 unknown */
};

/*
 * The callers' threads, by thread id: a pidfd of the thread itself and
 * its process's id (the holder a MARK notes). A thread pidfd is kept: while
 * it takes a descriptor (pidfd_getfd), its thread is alive, so holds its
 * id, so is the caller that waits with that id; once the thread is gone
 * it fails, and the id is looked up again. (A pidfd of a process, all a
 * kernel before 6.9 opens, would stay good after the thread's id went to
 * another process's thread: never kept.) Each entry has its lock: the
 * serving threads share them, and one must not close a kept pidfd that
 * another is using (its number could be reused meanwhile).
 */
struct thread {
	struct cli_mutex lock;
	pid_t tid, tgid;
	int pidfd; /* -1: none kept */
	int nsdir; /* its /proc/TID/ns, opened with the pidfd; -1: none */
	struct exec_view view; /* its region, judged for one exec of its process */
	struct vl_sv_fdinfo fdinfo; /* kept through nsdir (place.c) */
	int watched; /* pidfd is in callers.watch (under lock) */
	/* the table's, under callers.lock */
	pid_t key;	/* the thread id it is filed under; 0: not filed (a spare) */
	unsigned users; /* serving threads that took it (get_thread), not yet put back */
	int gone;	/* its thread exited while taken: the last put frees it */
};

/*
 * The table of callers' threads (DESIGN 21 step 2): an entry for each
 * thread with something kept, however many, found by thread id
 * (core/tidmap.h), so a thread seen before is never looked up again while
 * it lives. Bounded by the threads alive: each kept pidfd is watched
 * (epoll), and polls readable once its thread has exited; a thread of our
 * own (reap_callers) then frees the entry and closes what it held, or marks
 * it gone for the serving thread that has it to free. An entry with
 * nothing kept is freed when put back. The descriptors each kept thread
 * holds (pidfd, ns directory, fdinfo file) are bounded by `budget`: past
 * it, or when the table cannot grow, a thread's call is served as before
 * there was a table: looked up, served, closed.
 */
#define FDS_PER_THREAD 3
#define FDS_SPARE 512 /* for the serving threads' calls and the library */
static struct {
	struct cli_mutex lock;
	struct vl_tidmap_slot *slot;
	uint32_t cap, count;
	int watch;	 /* epoll of the watched pidfds; -1: none, nothing kept */
	unsigned kept;	 /* entries with a pidfd watched (atomic) */
	unsigned budget; /* at most so many */
} callers = { CLI_MUTEX_INITIALIZER, NULL, 0, 0, -1, 0, 0 };

/* /proc/TID/status, in buf */
static const char *status_path(pid_t tid, char *buf, size_t size)
{
	snprintf(buf, size, "/proc/%d/status", (int)tid);
	return buf;
}

/* tid's process, from /proc: the holder a MARK notes (a guess purgers check) */
static pid_t tgid_of(pid_t tid)
{
	char path[64];
	long tgid = proc_status_number(status_path(tid, path, sizeof(path)), "Tgid:", 0);

	return tgid > 0 ? (pid_t)tgid : tid;
}

/*
 * What PIDFD_GET_INFO (Linux 6.13) says of a pidfd's task; the first
 * version's layout (64 bytes), of which only the credentials are read.
 */
struct pidfd_info_ {
	uint64_t mask, cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code;
};
#define PIDFD_GET_INFO_ _IOWR(0xFF, 11, struct pidfd_info_)
#define PIDFD_INFO_CREDS_ (1UL << 1)

/*
 * The effective user of thread tid, whose pidfd is `thread` (a pidfd of
 * that very thread, or -1): credentials are a thread's, and the region a
 * program uses is its effective user's (DESIGN 9). -1 if it cannot tell.
 */
static long euid_of(int thread, pid_t tid)
{
	char path[64];

	if (thread >= 0) {
		struct pidfd_info_ info;

		memset(&info, 0, sizeof(info));
		info.mask = PIDFD_INFO_CREDS_;
		if (ioctl(thread, PIDFD_GET_INFO_, &info) == 0 && (info.mask & PIDFD_INFO_CREDS_))
			return (long)info.euid;
	}
	/* "Uid:	real	effective	saved	fs" */
	return proc_status_number(status_path(tid, path, sizeof(path)), "Uid:", 1);
}

/*
 * Our descriptor got of the caller's fd, if the caller is of our user;
 * else closed, and NOT_OURS: another user's region is its own, never ours
 * to change (nor its ranges ours to keep), and its call goes on to the
 * kernel, as without run. Its thread waits, so cannot change its
 * credentials meanwhile.
 */
#define NOT_OURS (-EREMOTE) /* another user's call (take_fd) */

/*
 * run's own user namespace, as /proc/self/ns/user reads ("user:[INO]"),
 * and its effective user: noted once (start_server); run changes neither.
 */
static char own_userns[64];
static uid_t own_euid;

struct uid_map_arg {
	uint64_t euid; /* the caller's effective user, as we see it */
	int found;
	uint64_t inside; /* what it is in the caller's user namespace */
};

static int on_uid_map(void *arg, char *line)
{
	struct uid_map_arg *m = arg;

	m->found = vl_id_map_inside(line, m->euid, &m->inside) == 0;
	return m->found;
}

/*
 * Does thread tid's library take itself for our user, euid (ours, as we
 * see its credentials)? Its region is then ours: the default names are
 * made of the effective user each process sees in its own user namespace
 * (default_place.c), and a file's owner is checked against it (region.c). In our
 * user namespace, yes; in another, the user its uid_map maps ours to must
 * be ours too (a namespace that maps the user to itself, as bwrap and
 * unshare --map-current-user do); a namespace that maps ours to another
 * user (unshare -U --map-user, --map-root-user), or not at all, has
 * programs whose preloaded library keeps their ranges in another region,
 * where an UNMARK we made in ours would find nothing and say 0. 0 if it
 * cannot tell.
 */
static int same_user_view(int nsdir, pid_t tid, uid_t euid)
{
	char path[64], ns[64];
	struct uid_map_arg m = { euid, 0, 0 };

	/*
	 * Asked at every call: a thread alone in its process may enter another
	 * user namespace (unshare, setns) between two. A link read through the
	 * thread's kept /proc/TID/ns costs ~2 us here, stat ~6 us (nsfs makes an
	 * inode for it).
	 */
	if (own_userns[0] == '\0')
		return 0;
	if (proc_ns_link(nsdir, tid, "user", ns, sizeof(ns)) < 0)
		return 0;
	if (strcmp(ns, own_userns) == 0)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)tid);
	if (vl_each_line(path, on_uid_map, &m) < 0)
		return 0;
	return m.found && m.inside == euid;
}

/* run's region, as vl_sv_region_key names it: noted once (start_server) */
static char own_region[PATH_MAX];

/*
 * Whether a library given value as VOLATILE_REGION (NULL: none) uses the
 * region key names: the default place when it is unset or empty, else the
 * path as env.c spells it; one too long for it (refused there) is nobody's.
 */
static int same_region(const char *value, size_t len, const char *key)
{
	char path[PATH_MAX];

	if (value == NULL || len == 0)
		return key[0] == '\0';
	if (len >= sizeof(path) || key[0] == '\0')
		return 0;
	memcpy(path, value, len);
	path[len] = '\0';
	vl_path_normalize(path);
	return strcmp(path, key) == 0;
}

/*
 * What the environment thread tid's process was started with says to a
 * library (env.c, shim/fallocate.c): the first VOLATILE_REGION (value,
 * up to sizeof(value) - 1 bytes; len past that when longer), and whether
 * the first VOLATILE_2012_ABI is "1". From /proc/TID/environ, the strings
 * exec put on its stack, as they read now.
 */
struct env_seen {
	int region; /* VOLATILE_REGION found */
	char value[PATH_MAX];
	size_t len;
	int aliases;
};

/*
 * Streamed, so an environment of any size is read in bounded memory; at
 * most ENV_MAX bytes (the kernel allows 6 MiB of strings): 0, or -1 if it
 * cannot tell.
 */
#define ENV_MAX (8u << 20)
static int environ_of(pid_t tid, struct env_seen *e)
{
	static const char *const names[2] = { "VOLATILE_REGION=", "VOLATILE_2012_ABI=" };
	char path[64], buf[4096], abi[2];
	size_t at = 0, total = 0, alen = 0; /* bytes into the string; read so far */
	int fd, head[2] = { 1, 1 }, found[2] = { 0, 0 };
	int in = -1; /* in the value of names[in]; -1 its name; -2 another string */
	ssize_t n = 0;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	memset(e, 0, sizeof(*e));
	while (!(found[0] && found[1]) && total <= ENV_MAX && (n = read(fd, buf, sizeof(buf))) > 0) {
		total += (size_t)n;
		for (ssize_t i = 0; i < n; i++) {
			char c = buf[i];
			int any = 0;

			if (c == '\0') {
				if (in >= 0)
					found[in] = 1;
				in = -1;
				at = 0;
				head[0] = head[1] = 1;
			} else if (in == 0) {
				/* len reaches sizeof(value) only for a value too long */
				if (e->len < sizeof(e->value) - 1)
					e->value[e->len] = c;
				if (e->len < sizeof(e->value))
					e->len++;
			} else if (in == 1) {
				if (alen < sizeof(abi))
					abi[alen] = c;
				alen += alen < sizeof(abi);
			} else if (in == -1) {
				/* the first of each name counts, as for getenv */
				for (int k = 0; k < 2; k++) {
					head[k] = head[k] && c == names[k][at];
					if (head[k] && names[k][at + 1] == '\0')
						in = found[k] ? -2 : k;
					any |= head[k];
				}
				at++;
				if (in == -1 && !any)
					in = -2;
			}
		}
	}
	close(fd);
	if (n < 0 || in >= 0 || (!(found[0] && found[1]) && total > ENV_MAX))
		return -1; /* a read failed, a string without its end, or too much */
	e->region = found[0];
	e->aliases = found[1] && alen == 1 && abi[0] == '1';
	return 0;
}

/*
 * AT_RANDOM's address and AT_SECURE in thread tid's process's auxiliary
 * vector (/proc/TID/auxv, which the process cannot change): 0, or -1.
 * Pairs of the process's own word, 64-bit or (a 32-bit process on x86-64)
 * 32-bit: read as 64-bit pairs first, taken only if AT_PAGESZ reads the
 * page size. Every vector has that entry, and 32-bit pairs read as 64-bit
 * ones could show it only from an entry (AT_PAGESZ, 0), which none has;
 * so the word is never mistaken, and AT_RANDOM never read from a wrong
 * place.
 */
static int auxv_of(pid_t tid, uint64_t *at_random, int *secure)
{
	char path[64];
	unsigned char buf[1024];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	for (size_t w = sizeof(uint64_t); n > 0 && w >= sizeof(uint32_t); w /= 2) {
		uint64_t pagesz = 0;
		int ok = 0;

		*at_random = 0;
		*secure = 0;
		for (size_t i = 0; i + 2 * w <= (size_t)n; i += 2 * w) {
			uint64_t type = 0, val = 0;

			memcpy(&type, buf + i, w); /* little-endian: the low bytes */
			memcpy(&val, buf + i + w, w);
			if (w == sizeof(uint32_t)) {
				type = (uint32_t)type;
				val = (uint32_t)val;
			}
			if (type == AT_NULL) {
				ok = 1;
				break;
			}
			if (type >= 1024)
				break;
			if (type == AT_RANDOM)
				*at_random = val;
			else if (type == AT_SECURE)
				*secure = val != 0;
			else if (type == AT_PAGESZ)
				pagesz = val;
		}
		if (ok && *at_random != 0 && pagesz == (uint64_t)sysconf(_SC_PAGESIZE))
			return 0;
		if (sizeof(long) < sizeof(uint64_t))
			break;
	}
	return -1;
}

/* the 16 bytes at AT_RANDOM in thread tid's process now: 0, or -1 */
static int random_bytes(pid_t tid, uint64_t at, unsigned char out[16])
{
	struct iovec local = { out, 16 }, remote = { (void *)(uintptr_t)at, 16 };

	return process_vm_readv(tid, &local, 1, &remote, 1, 0) == 16 ? 0 : -1;
}

/*
 * Judge thread tid's region into v: ours when the VOLATILE_REGION its
 * process was started with names run's (a secure execution reads none:
 * the default place). Read by number: the caller checks afterwards that
 * the call still waits (NOTIF_ID_VALID), which proves tid was the caller
 * all along, and its process the same exec (an exec by another thread
 * kills the caller before it changes the memory). Cannot tell: not ours,
 * and not kept (at_random 0).
 */
static void judge_region(pid_t tid, struct exec_view *v)
{
	struct env_seen e;
	int secure = 0;

	v->ours = 0;
	v->aliases = -1;
	if (auxv_of(tid, &v->at_random, &secure) != 0 ||
	    random_bytes(tid, v->at_random, v->bytes) != 0)
		v->at_random = 0;
	if (secure) {
		v->ours = own_region[0] == '\0';
		v->aliases = 0;
		return;
	}
	if (environ_of(tid, &e) != 0) {
		v->at_random = 0;
		return;
	}
	v->ours = same_region(e.region ? e.value : NULL, e.len, own_region);
	v->aliases = e.aliases;
}

/* Is v still the judgement of thread tid's process: the same exec? */
static int same_exec(const struct exec_view *v, pid_t tid)
{
	unsigned char now[16];

	return v->at_random != 0 && random_bytes(tid, v->at_random, now) == 0 &&
	       memcmp(now, v->bytes, sizeof(now)) == 0;
}

static void note_own_user(void)
{
	ssize_t n = readlink("/proc/self/ns/user", own_userns, sizeof(own_userns) - 1);

	own_userns[n > 0 ? n : 0] = '\0';
	own_euid = geteuid();
	vl_sv_region_key(own_region, sizeof(own_region));
}

/*
 * A caller of our user whose library would use another region (another
 * VOLATILE_REGION, its own or a `volatile run` inside this one's): its
 * ranges live there, where an UNMARK we made in ours would find nothing
 * and say 0 (take_fd).
 */
#define OTHER_REGION (-EXDEV)

static int ours(int got, int thread, int nsdir, pid_t tid, int region_ours, int *not_tmpfs)
{
	if (got < 0)
		return got;
	if (euid_of(thread, tid) != (long)own_euid || !same_user_view(nsdir, tid, own_euid)) {
		close(got);
		return NOT_OURS;
	}
	if (!region_ours) {
		/* refused, but seen: an alias mode on it may still be the kernel's (serve) */
		*not_tmpfs = vl_is_tmpfs_file(got) == 0;
		close(got);
		return OTHER_REGION;
	}
	return got;
}

static void forget_thread(struct thread *t)
{
	/* closed, its pidfd leaves the epoll set by itself */
	if (t->watched)
		__atomic_sub_fetch(&callers.kept, 1, __ATOMIC_RELAXED);
	t->watched = 0;
	if (t->pidfd >= 0)
		close(t->pidfd);
	if (t->nsdir >= 0)
		close(t->nsdir);
	vl_sv_place_forget(&t->fdinfo);
	t->tid = 0;
	t->pidfd = -1;
	t->nsdir = -1;
	t->view.at_random = 0;
}

#define GONE (-ESRCH) /* the caller is gone: nobody waits for an answer */
/*
 * The caller's file is on another file system than tmpfs, as /proc shows
 * (place.c): not taken, the kernel answers, as without run (EOPNOTSUPP).
 * A descriptor of it in run could ask its server and never come back: a
 * FUSE file is flushed at every close.
 */
#define ELSEWHERE (-EMEDIUMTYPE) /* not OTHER_REGION's -EXDEV: each has its answer */

/*
 * Does /proc/locks show a lease on the file stx describes? Opening it for
 * writing would start the lease's break even with O_NONBLOCK: SIGIO to its
 * holder (fatal by default), the lease taken away. A write lease is had by
 * the file's one opener only, the caller itself on the fd of its call. No
 * /proc/locks: no file locking in this kernel, so no lease either.
 */
static int leased(const struct statx *stx)
{
	char line[256];
	int found = 0;
	FILE *f = fopen("/proc/locks", "re");

	if (f == NULL)
		return 0;
	/* "1: LEASE  ACTIVE    WRITE 1234 00:1a:5678 0 EOF" */
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		const char *kind = strstr(line, " LEASE ");
		unsigned int major, minor;
		unsigned long long ino;

		found = kind != NULL &&
			sscanf(kind, " LEASE %*s %*s %*d %x:%x:%llu", &major, &minor, &ino) == 3 &&
			major == stx->stx_dev_major && minor == stx->stx_dev_minor &&
			ino == stx->stx_ino;
	}
	fclose(f);
	return found;
}

/*
 * Our descriptor of the caller's fd where the kernel refuses pidfd_getfd
 * though we may look into the caller: Yama's ptrace_scope 1 lets a process
 * take descriptors (PTRACE_MODE_ATTACH) of its descendants only, and the
 * supervisor is nobody's ancestor, while /proc's fd links (READ mode) stay
 * open to it. A new open file description of the same file, opened through
 * the caller's /proc/TID/fd/N with the caller's access mode (the library
 * then gives its own errors in their order, DESIGN 5), of a regular file
 * only: opening anything else does something (a FIFO waits, a device
 * opens), and -EPERM answers it as a caller we cannot look into; so too a
 * leased file, whose lease the open would break (leased). The file
 * is pinned (O_PATH) first and the fdinfo read after must name its inode
 * and mount: a number another thread of the caller gave to another file
 * meanwhile is never taken for it (-EAGAIN, answered so too, as is the
 * file's own refusal, EACCES). nsdir, kept with the caller thread's pidfd,
 * names that thread and no other: by number (-1), nothing is taken.
 */
static int take_reopened(int nsdir, int fd)
{
	char path[64], text[512];
	struct statx stx;
	uint64_t flags, ino, mnt;
	int pinned, info, got;
	ssize_t n;

	if (nsdir < 0)
		return -EPERM;
	snprintf(path, sizeof(path), "../fd/%d", fd);
	pinned = openat(nsdir, path, O_PATH | O_CLOEXEC); /* the link followed: the file */
	if (pinned < 0)
		return errno == ENOENT ? -EBADF : -errno;
	snprintf(path, sizeof(path), "../fdinfo/%d", fd);
	info = openat(nsdir, path, O_RDONLY | O_CLOEXEC);
	n = info < 0 ? -1 : read(info, text, sizeof(text) - 1);
	if (info >= 0)
		close(info);
	got = -EAGAIN;
	if (n <= 0 ||
	    statx(pinned, "", AT_EMPTY_PATH, STATX_TYPE | STATX_INO | STATX_MNT_ID, &stx) != 0)
		goto out;
	text[n] = '\0';
	if (vl_fdinfo_field(text, "flags", 8, &flags) != 0 ||
	    vl_fdinfo_field(text, "ino", 10, &ino) != 0 ||
	    vl_fdinfo_field(text, "mnt_id", 10, &mnt) != 0 || !(stx.stx_mask & STATX_MNT_ID) ||
	    ino != stx.stx_ino || mnt != stx.stx_mnt_id)
		goto out;
	if (flags & O_PATH) {
		got = -EBADF; /* not open, for fallocate (DESIGN 5) */
		goto out;
	}
	if (!S_ISREG(stx.stx_mode) || leased(&stx)) {
		got = -EPERM;
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", pinned);
	/* O_NONBLOCK: a lease set since it was looked for is not waited for */
	got = open(path, (int)(flags & O_ACCMODE) | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (got < 0)
		got = -errno;
	else if (vl_log_enabled())
		fprintf(stderr, "volatile run: fd %d reopened through /proc: pidfd_getfd refused\n",
			fd);
out:
	close(pinned);
	return got;
}

/* Our descriptor of the caller's fd: its own description, or a reopened one. */
static int take_caller_fd(int pidfd, int nsdir, int fd)
{
	int got = VL_SYSCALL("sv_getfd", pidfd_getfd_(pidfd, fd));

	if (got >= 0)
		return got;
	return got == -EPERM ? take_reopened(nsdir, fd) : got;
}

/*
 * Our own descriptor of the caller's fd, the caller's process in *tgid,
 * and in *aliases whether its library takes the 2012 modes (exec_view):
 * the descriptor, or -errno (-EBADF: not open; GONE).
 */
static int take_fd_locked(int listener, const struct seccomp_notif *req, struct thread *t, int fd,
			  pid_t *tgid, int *aliases, int *not_tmpfs)
{
	pid_t tid = (pid_t)req->pid;
	int pidfd, got, kept = 0, nsdir, place;
	struct exec_view view;
	char path[64];

	if (t->tid == tid && t->pidfd >= 0) {
		place = vl_sv_place(t->nsdir, tid, fd, &t->fdinfo);
		if (place != VL_PLACE_TAKE && place != -ESRCH) {
			*tgid = t->tgid;
			return place == VL_PLACE_LEAVE ? ELSEWHERE : place;
		}
		got = place == -ESRCH ? -ESRCH : take_caller_fd(t->pidfd, t->nsdir, fd);
		if (got >= 0 || got == -EBADF) {
			*tgid = t->tgid;
			if (got < 0)
				return -EBADF;
			/*
			 * Alive (the pidfd took its fd), so the caller; its region
			 * as judged, unless its process exec'd since (~0.5 us).
			 */
			if (!same_exec(&t->view, tid)) {
				judge_region(tid, &t->view);
				if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) != 0) {
					close(got);
					t->view.at_random = 0;
					return GONE;
				}
			}
			*aliases = t->view.aliases;
			return ours(got, t->pidfd, t->nsdir, tid, t->view.ours, not_tmpfs);
		}
	}
	if (t->tid != 0)
		forget_thread(t);
	*tgid = tgid_of(tid);
	pidfd = pidfd_open_(tid, PIDFD_THREAD);
	if (pidfd >= 0)
		kept = 1;
	else if (pidfd == -EINVAL && (pidfd = pidfd_open_(tid, 0)) == -EINVAL)
		pidfd = pidfd_open_(*tgid, 0); /* a thread that is not the leader */
	if (pidfd < 0)
		return pidfd == -ESRCH ? GONE : pidfd;
	snprintf(path, sizeof(path), "/proc/%d/ns", (int)tid);
	nsdir = kept ? open(path, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	judge_region(tid, &view);
	/* what was kept was of the thread t named before, if any: never of this one */
	vl_sv_place_forget(&t->fdinfo);
	place = vl_sv_place(nsdir, tid, fd, &t->fdinfo);
	/*
	 * Opened by number: the number is the caller's only while its call
	 * waits, and so is what /proc said of it before. (The ns directory
	 * then names the caller's thread as the pidfd does, for as long.)
	 */
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) != 0) {
		close(pidfd);
		if (nsdir >= 0)
			close(nsdir);
		vl_sv_place_forget(&t->fdinfo);
		return GONE;
	}
	if (place == VL_PLACE_TAKE) {
		got = take_caller_fd(pidfd, kept ? nsdir : -1, fd);
		got = got < 0 ? got : ours(got, kept ? pidfd : -1, nsdir, tid, view.ours, not_tmpfs);
	} else {
		/* the caller waits: its thread is not gone, whatever /proc said */
		got = place == VL_PLACE_LEAVE ? ELSEWHERE : place == -ESRCH ? -EIO : place;
	}
	*aliases = view.aliases;
	if (kept) {
		t->tid = tid;
		t->tgid = *tgid;
		t->pidfd = pidfd;
		t->nsdir = nsdir;
		t->view = view;
	} else {
		close(pidfd);
	}
	return got;
}

static void thread_init(struct thread *t, pid_t key)
{
	memset(t, 0, sizeof(*t));
	cli_mutex_init(&t->lock);
	t->pidfd = -1;
	t->nsdir = -1;
	t->fdinfo.fd = -1;
	t->key = key;
}

static void thread_free(struct thread *t)
{
	forget_thread(t);
	cli_mutex_destroy(&t->lock);
	if (t->key != 0)
		free(t);
}

/*
 * The table sized for count entries, callers.lock held: 0, or -1 (no
 * memory for a larger one; a smaller one is only a saving, and skipped).
 */
static int resize_callers(uint32_t count)
{
	uint32_t want = vl_tidmap_want(callers.cap, count);
	struct vl_tidmap_slot *slot;

	CLI_ASSERT_HELD(&callers.lock);
	if (want == callers.cap)
		return 0;
	slot = calloc(want, sizeof(*slot));
	if (slot == NULL)
		return count < callers.cap ? 0 : -1;
	if (callers.slot != NULL)
		vl_tidmap_move(callers.slot, callers.cap, slot, want);
	free(callers.slot);
	callers.slot = slot;
	callers.cap = want;
	return 0;
}

/* callers.lock held */
static void unfile_thread(struct thread *t)
{
	CLI_ASSERT_HELD(&callers.lock);
	vl_tidmap_remove(callers.slot, callers.cap, vl_tidmap_find(callers.slot, callers.cap, t->key));
	callers.count--;
	(void)resize_callers(callers.count);
}

/*
 * Thread tid's entry, taken: the one filed for it, or a new one filed; if
 * none can be (no memory), spare, made afresh, which put_thread forgets.
 */
static struct thread *get_thread(pid_t tid, struct thread *spare)
{
	struct thread *t = NULL;
	long i;

	cli_lock(&callers.lock);
	i = vl_tidmap_find(callers.slot, callers.cap, tid);
	if (i >= 0) {
		t = callers.slot[i].val;
	} else if (resize_callers(callers.count + 1) == 0 && (t = malloc(sizeof(*t))) != NULL) {
		thread_init(t, tid);
		(void)vl_tidmap_insert(callers.slot, callers.cap, tid, t);
		callers.count++;
	}
	if (t != NULL)
		t->users++;
	cli_unlock(&callers.lock);
	if (t == NULL) {
		thread_init(spare, 0);
		t = spare;
	}
	return t;
}

/*
 * Watch t's newly kept pidfd, t->lock held: 0, or -1 (the budget spent,
 * no epoll, or it refused).
 */
static int watch_thread(struct thread *t)
{
	struct epoll_event ev;

	CLI_ASSERT_HELD(&t->lock);
	if (callers.watch < 0 ||
	    __atomic_add_fetch(&callers.kept, 1, __ATOMIC_RELAXED) > callers.budget) {
		__atomic_sub_fetch(&callers.kept, 1, __ATOMIC_RELAXED);
		return -1;
	}
	/* one event, then quiet: the entry goes, or its next pidfd is added anew */
	ev.events = EPOLLIN | EPOLLONESHOT;
	ev.data.u64 = (uint64_t)(uint32_t)t->key;
	if (epoll_ctl(callers.watch, EPOLL_CTL_ADD, t->pidfd, &ev) != 0) {
		__atomic_sub_fetch(&callers.kept, 1, __ATOMIC_RELAXED);
		return -1;
	}
	t->watched = 1;
	return 0;
}

/*
 * Put back an entry get_thread gave, its lock held. A pidfd it keeps
 * unwatched is watched, or closed (the call after looks the thread up
 * again, as a thread past the budget is at each call); an entry that keeps
 * nothing, or whose thread exited meanwhile, is freed by its last user.
 */
static void put_thread(struct thread *t)
{
	int drop;

	CLI_ASSERT_HELD(&t->lock);
	if (t->key != 0 && t->pidfd >= 0 && !t->watched && watch_thread(t) != 0)
		forget_thread(t);
	cli_unlock(&t->lock);
	if (t->key == 0) {
		thread_free(t);
		return;
	}
	cli_lock(&callers.lock);
	/* no user left: nobody else can read or change it */
	drop = --t->users == 0 && (t->gone || t->pidfd < 0);
	if (drop)
		unfile_thread(t);
	cli_unlock(&callers.lock);
	if (drop)
		thread_free(t);
}

/* Has the thread of pidfd (a thread's, watched) exited? */
static int thread_exited(int pidfd)
{
	struct pollfd p = { pidfd, POLLIN, 0 };

	return pidfd < 0 || (poll(&p, 1, 0) == 1 && p.revents != 0);
}

/*
 * A watched pidfd of thread tid polled readable: its entry freed, or
 * marked gone if a serving thread has it. The event may be of a pidfd the
 * entry no longer holds (the thread's id went to a new thread, looked up
 * since): then the entry's own pidfd says whether to free it.
 */
static void reap_thread(pid_t tid)
{
	struct thread *t = NULL;
	long i;

	cli_lock(&callers.lock);
	i = vl_tidmap_find(callers.slot, callers.cap, tid);
	if (i >= 0) {
		t = callers.slot[i].val;
		if (t->users > 0) {
			t->gone = 1;
			t = NULL;
		} else if (!thread_exited(t->pidfd)) {
			t = NULL;
		} else {
			unfile_thread(t);
		}
	}
	cli_unlock(&callers.lock);
	if (t == NULL)
		return;
	thread_free(t);
	if (vl_log_enabled())
		fprintf(stderr, "volatile run: caller %d gone (%u kept)\n", (int)tid,
			__atomic_load_n(&callers.kept, __ATOMIC_RELAXED));
}

static void *reap_callers(void *arg)
{
	struct epoll_event ev[64];

	(void)arg;
	for (;;) {
		int n = epoll_wait(callers.watch, ev, 64, -1);

		if (n < 0 && errno != EINTR)
			return NULL;
		for (int i = 0; i < n; i++)
			reap_thread((pid_t)(uint32_t)ev[i].data.u64);
	}
}

/*
 * The descriptors the kept threads may hold: all we may open, less a
 * spare; the soft limit raised to the hard one first (the supervisor's
 * own, inherited by no program). And the thread that frees the entries of
 * threads gone. Without it nothing is kept: each call looks its caller up.
 */
static void init_callers(void)
{
	struct rlimit rl;
	pthread_attr_t attr;
	pthread_t reaper;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		rl.rlim_cur = 1024;
	if (rl.rlim_cur > (rlim_t)1 << 30)
		rl.rlim_cur = (rlim_t)1 << 30;
	callers.budget = rl.rlim_cur > FDS_SPARE ? (unsigned)(rl.rlim_cur - FDS_SPARE) / FDS_PER_THREAD
						 : 0;
	callers.watch = epoll_create1(EPOLL_CLOEXEC);
	if (callers.watch < 0)
		return;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* signals as in the serving threads */
	if (pthread_create(&reaper, &attr, reap_callers, NULL) != 0) {
		close(callers.watch);
		callers.watch = -1;
	}
	pthread_attr_destroy(&attr);
}

/* --debug: which process serves, said at its first call (a test counts its descriptors) */
static void say_serving(void)
{
	static int said;

	if (vl_log_enabled() && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "volatile run: serving, pid %d\n", (int)getpid());
}

static int take_fd(int listener, const struct seccomp_notif *req, int fd, pid_t *tgid,
		   int *aliases, int *not_tmpfs)
{
	struct thread spare, *t;
	unsigned long opened = pidfds_opened;
	int got;

	say_serving();
	t = get_thread((pid_t)req->pid, &spare);

	cli_lock(&t->lock);
	*aliases = -1;
	*not_tmpfs = 0;
	got = take_fd_locked(listener, req, t, fd, tgid, aliases, not_tmpfs);
	put_thread(t);
	if (pidfds_opened != opened && vl_log_enabled())
		fprintf(stderr, "volatile run: caller %u looked up (%lu lookups)\n", req->pid,
			__atomic_add_fetch(&lookups, 1, __ATOMIC_RELAXED));
	return got;
}

enum verdict {
	ANSWER,	  /* resp says what the call returns */
	CONTINUE, /* the kernel runs the call as the caller made it */
	NOBODY,	  /* the caller is gone, or has its answer already */
};

/*
 * What the library asks before it changes anything, the file locked
 * (ops.h): a MARK's answer, given early, 0; an UNMARK's caller, still
 * waiting. A caller killed meanwhile (ENOENT) gets no change made after
 * its death (DESIGN 21 step 6).
 */
struct early {
	int listener;
	struct seccomp_notif_resp *resp;
	int given; /* the answer is sent, or there is nobody to send it to */
	int gone;  /* -errno: the caller was gone when asked; nothing was made */
};

static int answer_early(void *arg)
{
	struct early *e = arg;

	if (e->given)
		return e->gone;
	e->resp->error = 0;
	e->resp->val = 0;
	e->given = 1;
	if (ioctl(e->listener, SECCOMP_IOCTL_NOTIF_SEND, e->resp) != 0)
		e->gone = -errno;
	return e->gone;
}

static int still_waits(void *arg)
{
	struct early *e = arg;

	if (ioctl(e->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &e->resp->id) != 0) {
		e->given = 1;
		e->gone = -errno;
	}
	return e->gone;
}

/*
 * Serve one call: a volatile mode, or an alias one (the filter sends no
 * other). A caller we may not look into (not dumpable, another user's) and
 * a shortage of our own go on to the kernel, which answers as without the
 * library: EOPNOTSUPP. A MARK is answered as soon as its file is locked
 * (ops.h says why); an UNMARK once it is made: run killed before it
 * answers leaves the caller an ENOSYS, and the bytes taken for purged.
 */
/* An UNMARK, or its 2012 alias (the filter sends the alias only when it is on) */
static int is_unmark(int mode)
{
	return (mode & FALLOC_FL_UNMARK_VOLATILE) ||
	       (!(mode & FALLOC_FL_MARK_VOLATILE) && (mode & ~FALLOC_FL_KEEP_SIZE) == VL_ALIAS_UNMARK);
}

static enum verdict serve(int listener, const struct seccomp_notif *req,
			  struct seccomp_notif_resp *resp)
{
	struct early e = { listener, resp, 0, 0 };
	struct call c;
	struct vl_caller as;
	pid_t tgid = 0;
	int fd, ret, aliases, not_tmpfs;

	if (decode(&req->data, &c) != 0)
		return CONTINUE;
	fd = take_fd(listener, req, c.fd, &tgid, &aliases, &not_tmpfs);
	if (fd == GONE)
		return NOBODY;
	if (fd == -EBADF) {
		resp->error = -EBADF; /* the caller's: DESIGN 5's first row */
		return ANSWER;
	}
	if (aliases == 0 && !(c.mode & (FALLOC_FL_MARK_VOLATILE | FALLOC_FL_UNMARK_VOLATILE))) {
		/*
		 * A 2012 mode from a process whose environment has no
		 * VOLATILE_2012_ABI=1: its own library passes it to the kernel
		 * (NO_HIDE_STALE, COLLAPSE_RANGE), and so do we, whatever run's
		 * --2012-abi; served as an UNMARK it would take a range away.
		 */
		if (fd >= 0)
			close(fd);
		return CONTINUE;
	}
	if (fd == OTHER_REGION && vl_log_enabled())
		fprintf(stderr, "volatile run: not served: pid %u: %s fd %d: its region is not run's\n",
			req->pid, is_unmark(c.mode) ? "unmark" : "mark", c.fd);
	if (fd < 0 && not_tmpfs && !(c.mode & (FALLOC_FL_MARK_VOLATILE | FALLOC_FL_UNMARK_VOLATILE)))
		return CONTINUE; /* an alias on a file run saw is not tmpfs: the kernel's call */
	if (fd < 0 && fd != NOT_OURS && fd != ELSEWHERE && is_unmark(c.mode)) {
		/*
		 * A caller we may not look into (it made itself non-dumpable
		 * since its MARK, say), or one whose region is another: its
		 * range stays volatile. A failure it takes for purged (DESIGN
		 * 5), not the kernel's EOPNOTSUPP, which it might take for "no
		 * volatile ranges: my bytes are pinned".
		 */
		resp->error = -EPERM;
		return ANSWER;
	}
	if (fd < 0)
		return CONTINUE;
	if (!(c.mode & (FALLOC_FL_MARK_VOLATILE | FALLOC_FL_UNMARK_VOLATILE))) {
		if (vl_is_tmpfs_file(fd) != 1) {
			close(fd);
			return CONTINUE;
		}
		c.mode = vl_alias_as_volatile(c.mode);
	}
	as.holder.pid = (int32_t)tgid;
	as.holder.fd = c.fd;
	as.early = answer_early;
	as.waits = still_waits;
	as.arg = &e;
	ret = vl_volatile_fallocate_as(fd, c.mode, c.off, c.len, &as);
	close(fd);
	if (vl_log_enabled())
		fprintf(stderr, "volatile run: served pid %u: %s fd %d [%lld, +%lld) = %d%s%s%s\n",
			req->pid, c.mode & FALLOC_FL_MARK_VOLATILE ? "mark" : "unmark", c.fd,
			(long long)c.off, (long long)c.len, ret < 0 ? -1 : ret,
			ret < 0 ? " " : "", ret < 0 ? strerror(-ret) : "",
			e.gone ? " (its caller gone: nothing made)"
			: e.given ? " (answered 0 before the change)" : "");
	if (e.given)
		return NOBODY;
	if (ret < 0)
		resp->error = ret;
	else
		resp->val = ret;
	return ANSWER;
}

/*
 * The serving threads. One at a time has the role of taking calls, and
 * serves what it takes, then takes the next: a MARK answered early and
 * the UNMARK its caller makes next meet no second thread on the file's
 * lock. But a call may wait in the library (a lock a stopped process
 * keeps, for VOLATILE_LOCK_WAIT), and the calls behind it, of other files,
 * must not wait with it (DESIGN 11, 18): one more thread watches, and takes the
 * role from a thread that has served one call for WATCH_MS; that one, its
 * call served, watches in turn (or goes, if another does). So a thread
 * per call held up, SERVERS at most.
 */
#define SERVERS 64
#define WATCH_MS 10
#define WATCHES_IDLE 100 /* the watcher sleeps once no call came for so many watches */

struct server {
	int listener;
	struct cli_mutex lock;
	pthread_cond_t wake;  /* the watcher's: a call came while it slept */
	const void *owner;    /* the thread with the role (NULL: none) */
	int busy;             /* it is serving a call */
	uint64_t calls;       /* calls taken so far */
	int watchers;         /* threads waiting for the role */
	int asleep;           /* a watcher waits for a call to come, with no time limit */
	int done;             /* the listener failed: no process uses the filter any more */
	int total;
	int inflight;         /* calls being served */
	int exiting;          /* no process uses the filter: serve no more, wait for inflight == 0 */
	pthread_cond_t idle;  /* inflight fell to 0 while exiting */
};

static struct server the_server;

static int start_one(struct server *sv);

/*
 * Wait for the role, sv->lock held: 1 once this thread (me) has it, 0 if
 * it should go (another watches already).
 */
static int watch(struct server *sv, const void *me, int may_go)
{
	int idle = 0;

	CLI_ASSERT_HELD(&sv->lock);
	if (sv->done || (may_go && sv->watchers > 0))
		return 0;
	sv->watchers++;
	while (sv->owner != NULL && !sv->done) {
		uint64_t calls = sv->calls;
		int busy = sv->busy;
		struct timespec until;

		if (idle >= WATCHES_IDLE) {
			sv->asleep = 1;
			cli_cond_wait(&sv->wake, &sv->lock);
			sv->asleep = 0;
			idle = 0;
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += WATCH_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		(void)cli_cond_timedwait(&sv->wake, &sv->lock, &until);
		if (sv->owner != NULL && busy && sv->busy && sv->calls == calls)
			break; /* the same call all along: take the role from its thread */
		idle = sv->calls == calls && !sv->busy ? idle + 1 : 0;
	}
	sv->watchers--;
	if (sv->done)
		return 0;
	sv->owner = me;
	sv->busy = 0;
	/* someone to watch the calls this thread takes */
	if (sv->watchers == 0 && sv->total < SERVERS) {
		sv->total++;
		if (start_one(sv) != 0)
			sv->total--;
	}
	return 1;
}

/*
 * A serving thread: takes calls while it has the role, each answered
 * (unless its caller is gone), until the listener fails (no process uses
 * the filter any more) or the process exits with CMD.
 */
static void *serve_loop(void *arg)
{
	struct server *sv = arg;
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	const void *me = &req; /* this thread, as sv->owner names it */

	cli_lock(&sv->lock);
	if (!watch(sv, me, 0))
		goto out;
	for (;;) {
		enum verdict v;

		cli_unlock(&sv->lock);
		/*
		 * The ioctls themselves, not libseccomp's wrappers, whose errors
		 * do not tell a caller gone (ENOENT) from a listener that failed.
		 */
		memset(&req, 0, sizeof(req));
		if (ioctl(sv->listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) {
			cli_lock(&sv->lock);
			/* ENOENT: a caller gone before we looked */
			if (errno == EINTR || errno == ENOENT)
				continue;
			sv->owner = NULL;
			sv->done = 1; /* the watchers go too */
			pthread_cond_broadcast(&sv->wake);
			break;
		}
		cli_lock(&sv->lock);
		if (sv->exiting) {
			/* the supervisor exits: the caller, if any, gets ENOSYS from the kernel */
			cli_unlock(&sv->lock);
			for (;;)
				pause();
		}
		sv->busy = 1;
		sv->calls++;
		sv->inflight++;
		if (sv->asleep)
			pthread_cond_signal(&sv->wake);
		cli_unlock(&sv->lock);

		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		v = serve(sv->listener, &req, &resp);
		if (v == CONTINUE) {
			resp.error = 0;
			resp.val = 0;
			resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		}
		/* ENOENT: the caller was killed meanwhile; nothing waits for the answer */
		if (v != NOBODY)
			(void)ioctl(sv->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);

		cli_lock(&sv->lock);
		if (--sv->inflight == 0 && sv->exiting)
			pthread_cond_broadcast(&sv->idle);
		if (sv->owner == me)
			sv->busy = 0;
		else if (!watch(sv, me, 1)) /* the role was taken meanwhile */
			break;
	}
out:
	sv->total--;
	cli_unlock(&sv->lock);
	return NULL;
}

/* No process uses the filter: wait for the calls being served; take no more. */
static void quiesce(void)
{
	struct server *sv = &the_server;

	if (sv->total == 0 && sv->listener == 0)
		return; /* never started */
	cli_lock(&sv->lock);
	sv->exiting = 1;
	while (sv->inflight > 0)
		cli_cond_wait(&sv->idle, &sv->lock);
	cli_unlock(&sv->lock);
}

/* One more serving thread (counted by the caller): 0, or -1. */
static int start_one(struct server *sv)
{
	pthread_attr_t attr;
	pthread_t t;
	int err;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* signals as the main thread has them: none blocked, each its default action */
	err = pthread_create(&t, &attr, serve_loop, sv);
	pthread_attr_destroy(&attr);
	return err == 0 ? 0 : -1;
}

/* Serve listener in threads of their own: 0, or -1 (nothing served). */
static int start_server(int listener)
{
	struct server *sv = &the_server;
	pthread_condattr_t ca;

	note_own_user();
	vl_sv_place_init();
	init_callers();
	nr_native = seccomp_syscall_resolve_name("fallocate");
	if (seccomp_arch_native() == SCMP_ARCH_X86_64)
		nr_x86 = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86, "fallocate");
	sv->listener = listener;
	cli_mutex_init(&sv->lock);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sv->wake, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&sv->idle, NULL);
	/*
	 * The caller waits while we serve, and we wait while it runs: woken
	 * on the CPU of the one that wakes it (Linux 6.6), each call is two
	 * switches instead of two wake-ups of an idle CPU (tens of
	 * microseconds each on a virtual machine). Older kernels: EINVAL.
	 */
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	sv->total = 1;
	if (start_one(sv) != 0)
		return -1;
	return 0;
}

#endif

/*
 * The signals that came while every one was blocked, from the fork to the
 * setsid: those of CMD's process group (a Ctrl-C to the foreground job
 * while run starts), not ours. Unblocked, one would kill the supervisor
 * where run itself lives on (a signal run's inherited mask blocks: CMD
 * gets it later, as without run). Taken, so none is delivered.
 */
static void discard_pending_signals(void)
{
	struct timespec now = { 0, 0 };
	sigset_t all;

	sigfillset(&all);
	while (sigtimedwait(&all, NULL, &now) > 0)
		;
}

/*
 * Out of CMD's way: a session of its own (no terminal's signals, no
 * hangup, no stop of CMD's job stops it), the root as its directory (no
 * mount kept busy), /dev/null as its standard files (a `$(volatile run --
 * CMD)` ends when CMD's own writers do; stderr kept with --debug), and no
 * other descriptor of run's: sock moves to 3.
 */
static int detach(int sock)
{
	/* run's stderr, kept for --debug if it is one: not a closed 2, not sock */
	int keep_err = vl_log_enabled() && sock != 2 && fcntl(2, F_GETFD) >= 0;
	int high = fcntl(sock, F_DUPFD_CLOEXEC, 10), null;
	sigset_t none;

	if (high >= 0)
		sock = high; /* out of the way of 0, 1, 2, where a closed stdio put it */
	(void)setsid();
	if (chdir("/") != 0) {
		/* a root we cannot enter: the directory we have will do */
	}
	/* 0, 1 and 2 always open: no descriptor taken later gets their numbers */
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0)
		null = open("/", O_PATH | O_CLOEXEC); /* no /dev/null (a chroot): unwritable */
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		if (!keep_err)
			dup2(null, 2);
	}
	if (dup2(sock, 3) == 3)
		sock = 3;
	if (sock == 3 && vl_raw_close_range(4U, ~0U, 0U) != 0) {
		for (int fd = 4; fd < 1024; fd++)
			close(fd);
	}
	discard_pending_signals();
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	return sock;
}

#ifdef HAVE_SECCOMP
/* Until no process uses the filter: the listener then polls as hung up. */
static void wait_unused(int listener)
{
	for (;;) {
		struct pollfd p = { listener, 0, 0 };

		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return;
		if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
			return;
	}
}
#endif

void vl_sv_helper(int sock)
{
	char why[160];
	int listener;

	sock = detach(sock);
	if (send(sock, "r", 1, MSG_NOSIGNAL) != 1)
		_exit(0);
	listener = vl_sv_receive(sock, why, sizeof(why));
	close(sock);
	if (listener < 0)
		_exit(0); /* run put no filter on CMD: nothing to serve */
#ifdef HAVE_SECCOMP
	/*
	 * Serve CMD's tree, and what stays of it once CMD ended, until the
	 * last process under the filter is gone; then wait for the calls
	 * being served (bounded by the library's lock waits), never exiting
	 * with a file's lock held, which the next locker would have to repair.
	 */
	if (start_server(listener) == 0)
		wait_unused(listener);
	quiesce();
#endif
	/* a start that failed: the filter's calls get ENOSYS, as with a supervisor killed */
	_exit(0);
}
