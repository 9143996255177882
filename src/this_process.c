/* SPDX-License-Identifier: MIT */
/*
 * this_process.c - this process, as children of every kind see it (see this_process.h).
 */
#include "this_process.h"

#include "core/compiler.h"
#include "core/fault.h"
#include "core/parse.h"
#include "lock.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TOKENS 4

struct self_page {
	pid_t pid;
	int have_id;
	int registering; /* one thread registers at a time (lock.c) */
	/* zeroed is unlocked (glibc's and musl's initialisers are all zeros) */
	pthread_mutex_t mutexes[VL_SELF_MUTEXES];
#ifdef VL_DEBUG_LOCKS
	/* who holds each mutex and the registration lock (0: nobody), wiped with the rest */
	pthread_t holder[VL_SELF_MUTEXES + 1];
#endif
	struct vl_self_id id;
	struct {
		uint64_t serial;
		uint32_t token;
	} tokens[TOKENS];
	uint32_t next;
};

static struct self_page *page;
static struct self_page fallback; /* no page could be had: cleared at fork only */
static pthread_once_t fallback_once = PTHREAD_ONCE_INIT;

static void clear_fallback(void)
{
	memset(&fallback, 0, sizeof(fallback));
}

static void fallback_init(void)
{
	pthread_atfork(NULL, NULL, clear_fallback);
}

/* In a child of fork: our pid, now, before a vfork child of ours could store its own. */
static void child_knows_itself(void)
{
	vl_self();
}

/*
 * At load, and in each fork child: the pid is in the page before any
 * child that shares our memory can run (vl_borrowed). The constructor
 * costs an mmap, an madvise and a getpid.
 */
__attribute__((constructor)) static void self_at_load(void)
{
	int saved = errno;

	vl_self();
	pthread_atfork(NULL, NULL, child_knows_itself);
	errno = saved;
}

/*
 * The page, made at first use. Two threads may make one each: one wins
 * the exchange, the other gives its page back. A kernel without
 * MADV_WIPEONFORK (before 4.14) gets a static copy cleared by an atfork
 * handler: right after fork, not after _Fork or clone. That copy, once
 * it serves, serves for good (exchanged in as a page is): a page had
 * later would hold none of the mutexes and tokens held in it
 * (self-page.sh).
 */
static __attribute__((noinline, cold)) struct self_page *first_self_page(void)
{
	struct self_page *none = NULL;
	void *m;

	m = vl_raw_mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (vl_map_error(m))
		goto no_page;
	if (vl_raw_madvise(m, 4096, MADV_WIPEONFORK) != 0) {
		vl_raw_munmap(m, 4096);
		goto no_page;
	}
	if (!__atomic_compare_exchange_n(&page, &none, (struct self_page *)m, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		vl_raw_munmap(m, 4096);
		return none;
	}
	return m;
no_page:
	pthread_once(&fallback_once, fallback_init);
	if (!__atomic_compare_exchange_n(&page, &none, &fallback, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return none; /* another thread's page won: nobody used the copy */
	return &fallback;
}

/* Asked by every lock token: the load alone inline, the first page made out of line */
static inline struct self_page *self_page(void)
{
	struct self_page *p = __atomic_load_n(&page, __ATOMIC_ACQUIRE);

	return p != NULL ? p : first_self_page();
}

pid_t vl_self(void)
{
	struct self_page *p = self_page();
	pid_t pid = __atomic_load_n(&p->pid, __ATOMIC_RELAXED);

	if (pid == 0) {
		pid = vl_raw_getpid();
		__atomic_store_n(&p->pid, pid, __ATOMIC_RELAXED);
	}
	return pid;
}

/* used: spawn.c's vfork child calls it from assembly, which LTO cannot see */
__attribute__((used)) void vl_self_forked(void)
{
	int saved = errno;

	vl_self();
	errno = saved;
}

int vl_borrowed(void)
{
	pid_t pid = __atomic_load_n(&self_page()->pid, __ATOMIC_RELAXED);

	return pid != 0 && pid != vl_raw_getpid();
}

/*
 * Not cancelled while one is held, even outside vl_enter (the close hook
 * takes the table of regions made here before it enters): a signal
 * handler's write() with a cancellation pending would unwind the thread
 * with the mutex locked, and every later close of a region fd would wait
 * for ever (cancel-signal.sh). The state before, per mutex: they nest.
 */
static __thread int cancel_was[VL_SELF_MUTEXES] __attribute__((tls_model("initial-exec")));

/* ---- the debug build's note of each lock's holder (VL_ASSERT_SELF_HELD) ---- */

#ifdef VL_DEBUG_LOCKS
static void note_holder(struct self_page *p, unsigned which, int held)
{
	pthread_t none;

	memset(&none, 0, sizeof(none));
	__atomic_store(&p->holder[which], held ? &(pthread_t){ pthread_self() } : &none,
		       __ATOMIC_RELAXED);
}

static const char *const self_lock_names[VL_SELF_MUTEXES + 1] = {
	[VL_SELF_ATTACH] = "the attach mutex",
	[VL_SELF_HERE] = "the mutex of the table of regions made here",
	[VL_SELF_REGISTERING] = "the registration lock",
};

/*
 * A function that needs one of this process's locks held was called by a
 * thread that does not hold it: a bug, caught as vl_lock_assert_held
 * catches one of a region's locks, with the same kind of line (lock.c).
 */
VL_COLD void vl_self_assert_held(unsigned which, const char *lock, const char *func)
{
	pthread_t holder;

	__atomic_load(&self_page()->holder[which], &holder, __ATOMIC_RELAXED);
	if (pthread_equal(holder, pthread_self()))
		return;
	vl_lock_check_failed("libvolatile: %s: %s (%s) is not held by this thread\n", func,
			     self_lock_names[which], lock);
}
#else
#define note_holder(p, which, held) ((void)0)
#endif

void vl_self_lock(enum vl_self_mutex which)
{
	struct self_page *p = self_page();
	int was;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &was);
	pthread_mutex_lock(&p->mutexes[which]);
	note_holder(p, which, 1);
	cancel_was[which] = was;
}

void vl_self_unlock(enum vl_self_mutex which)
{
	struct self_page *p = self_page();
	int was = cancel_was[which], ignored;

	note_holder(p, which, 0);
	pthread_mutex_unlock(&p->mutexes[which]);
	pthread_setcancelstate(was, &ignored);
}

uint32_t vl_self_token(uint64_t serial)
{
	struct self_page *p = self_page();

	for (int i = 0; i < TOKENS; i++)
		if (__atomic_load_n(&p->tokens[i].serial, __ATOMIC_ACQUIRE) == serial)
			return __atomic_load_n(&p->tokens[i].token, __ATOMIC_RELAXED);
	return 0;
}

int vl_self_owns_token(uint32_t token)
{
	struct self_page *p = self_page();

	for (int i = 0; i < TOKENS; i++)
		if (__atomic_load_n(&p->tokens[i].serial, __ATOMIC_ACQUIRE) != 0 &&
		    __atomic_load_n(&p->tokens[i].token, __ATOMIC_RELAXED) == token)
			return 1;
	return 0;
}

/*
 * A spin lock in the self page: a child gets it unlocked (wiped), so a
 * fork while another thread held it leaves no child waiting on nobody.
 * Held for a registration only (a few /proc reads at most).
 */
void vl_self_register_lock(void)
{
	struct self_page *p = self_page();

	while (__atomic_exchange_n(&p->registering, 1, __ATOMIC_ACQUIRE))
		vl_raw_sched_yield();
	note_holder(p, VL_SELF_REGISTERING, 1);
}

void vl_self_register_unlock(void)
{
	struct self_page *p = self_page();

	note_holder(p, VL_SELF_REGISTERING, 0);
	__atomic_store_n(&p->registering, 0, __ATOMIC_RELEASE);
}

void vl_self_set_token(uint64_t serial, uint32_t token)
{
	struct self_page *p = self_page();
	uint32_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED) % TOKENS;

	__atomic_store_n(&p->tokens[i].serial, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&p->tokens[i].token, token, __ATOMIC_RELAXED);
	__atomic_store_n(&p->tokens[i].serial, serial, __ATOMIC_RELEASE);
}

/*
 * Read a small /proc file with raw system calls: no cancellation point
 * (glibc's open, read and close are), no stdio, no allocation.
 */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = VL_SYSCALL("open proc", vl_raw_open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY));
	ssize_t n;

	if (fd < 0)
		return fd;
	n = VL_SYSCALL("read proc", vl_raw_read(fd, buf, size - 1));
	if (n >= 0)
		buf[n] = '\0';
	vl_raw_close(fd);
	return n;
}

static uint64_t ns_inode(const char *path)
{
	struct stat st;

	return VL_SYSCALL("stat ns", vl_raw_stat(path, &st)) == 0 ? (uint64_t)st.st_ino : 0;
}

static uint64_t dev_of(const char *path)
{
	struct stat st;

	return VL_SYSCALL("stat dev", vl_raw_stat(path, &st)) == 0 ? (uint64_t)st.st_dev : 0;
}

/*
 * Our pid as this /proc shows it: in a pid namespace that was made
 * without a /proc of its own (unshare -pf), getpid() is not the number
 * under /proc, and a waiter reading /proc/<getpid()> would find someone
 * else, or no one, and take our locks.
 */
static uint32_t proc_pid(void)
{
	char buf[32];
	ssize_t n = VL_SYSCALL("readlink self",
			       vl_raw_readlinkat(AT_FDCWD, "/proc/self", buf, sizeof(buf) - 1));

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return (uint32_t)strtoul(buf, NULL, 10);
}

int vl_self_id(struct vl_self_id *id)
{
	struct self_page *p = self_page();
	struct vl_proc_stat ps;
	char line[1024];
	ssize_t n;

	if (__atomic_load_n(&p->have_id, __ATOMIC_ACQUIRE)) {
		*id = p->id;
		return 0;
	}
	n = read_small("/proc/self/stat", line, sizeof(line));
	if (n < 0)
		return (int)n;
	if (vl_parse_proc_stat(line, &ps) != 0)
		return -EIO;
	id->pid = proc_pid();
	id->start = ps.start;
	id->stack = ps.stack;
	id->procdev = id->pid != 0 ? dev_of("/proc/self") : 0;
	id->timens = ns_inode("/proc/self/ns/time");
	/* racing threads store the same values */
	p->id = *id;
	__atomic_store_n(&p->have_id, 1, __ATOMIC_RELEASE);
	return 0;
}

/*
 * A zombie leader may still have live threads (its main thread called
 * pthread_exit): "Threads:" counts the leader until it is reaped, so more
 * than one means someone is still running.
 */
static int other_threads(uint32_t pid)
{
	char path[64], buf[4096];
	const char *t;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return 0;
	t = strstr(buf, "\nThreads:");
	return t != NULL && strtoul(t + 9, NULL, 10) > 1;
}

static int on_mount_line(void *a, char *line)
{
	struct vl_mount_fields m;

	if (vl_parse_mount_line(line, &m) != 0 || !vl_mount_hides_pids(&m))
		return 0;
	*(int *)a = 1;
	return 1;
}

int vl_proc_hides(void)
{
	int hides = 0;

	/* mountinfo unreadable: cannot tell, as if it did */
	return vl_each_line("/proc/self/mountinfo", on_mount_line, &hides) < 0 || hides;
}

int vl_proc_alive(const struct vl_self_id *who)
{
	struct vl_proc_stat ps;
	char path[64], line[1024];
	uint64_t procdev, timens;
	uint32_t pid;
	ssize_t n;

	/*
	 * Through the /proc and time namespace this process has now, not the
	 * ones it registered with: it may have chrooted (no /proc: every
	 * holder would look gone) or joined another time namespace since.
	 */
	pid = proc_pid();
	procdev = pid != 0 ? dev_of("/proc/self") : 0;
	timens = ns_inode("/proc/self/ns/time");
	if (procdev == 0 || who->procdev != procdev || who->timens != timens || who->start == 0 ||
	    who->pid == 0)
		return 1; /* not ours to judge: wait for it */
	if (who->pid == pid) {
		struct vl_self_id me;

		if (vl_self_id(&me) != 0 || me.pid != pid)
			return 1;
		return who->start == me.start && (who->stack == 0 || who->stack == me.stack);
	}
	snprintf(path, sizeof(path), "/proc/%u/stat", who->pid);
	n = read_small(path, line, sizeof(line));
	/* a /proc mounted hidepid hides a live process we may not trace: ENOENT proves nothing */
	if ((n == -ENOENT || n == -ESRCH) && !vl_proc_hides())
		return 0;
	if (n < 0 || vl_parse_proc_stat(line, &ps) != 0)
		return 1;
	if (ps.start != who->start || ps.state == 'X')
		return 0;
	/* the stack's start is hidden (0) from who may not trace it: then it cannot tell */
	if (ps.stack != 0 && who->stack != 0 && ps.stack != who->stack)
		return 0;
	return ps.state != 'Z' || other_threads(who->pid);
}
