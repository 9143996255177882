/* SPDX-License-Identifier: MIT */
/*
 * fault.c - the counters of core/fault.h; empty unless VL_FAULT_INJECTION.
 *
 * In the runtime, not in core/ beside its header: it reads the
 * environment, writes its report and kills its own process, and core/
 * does no I/O. Its report goes through the door (sys.h's vl_raw_), as
 * every other call: libc's open and close are names the shim defines,
 * and errno stays the caller's.
 */
#include "core/fault.h"
#include "sys.h"

#ifdef VL_FAULT_INJECTION

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long kill_at = -1, sys_at = -1;
static char sys_where[32]; /* a point's name: every call there fails */
static int sys_errno, tracing, inited;
static long steps, calls;

static int errno_named(const char *s)
{
	static const struct {
		const char *name;
		int value;
	} names[] = { { "EINTR", EINTR }, { "ENOMEM", ENOMEM }, { "EAGAIN", EAGAIN },
		      { "EIO", EIO },     { "ENOSPC", ENOSPC }, { "EMFILE", EMFILE },
		      { "EPERM", EPERM } };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i].name) == 0)
			return names[i].value;
	return atoi(s);
}

/*
 * Races between threads reading the environment store the same values.
 * secure_getenv, as for every VOLATILE_* variable (env.c): a report file
 * is opened for writing.
 */
static void init(void)
{
	const char *k, *s;

	if (__atomic_load_n(&inited, __ATOMIC_ACQUIRE))
		return;
	k = secure_getenv("VOLATILE_FAULT_TRACE");
	tracing = k != NULL && strcmp(k, "1") == 0;
	k = secure_getenv("VOLATILE_FAULT_KILL");
	s = secure_getenv("VOLATILE_FAULT_SYSCALL");
	if (k != NULL && *k)
		kill_at = atol(k);
	if (s != NULL && *s && strchr(s, ':') != NULL) {
		size_t len = (size_t)(strchr(s, ':') - s);

		if (*s >= '0' && *s <= '9')
			sys_at = atol(s);
		else if (len < sizeof(sys_where))
			memcpy(sys_where, s, len);
		sys_errno = errno_named(strchr(s, ':') + 1);
		if (sys_errno <= 0) /* -0 would read as a success of a call not made */
			sys_errno = EIO;
	}
	__atomic_store_n(&inited, 1, __ATOMIC_RELEASE);
}

static void report(const char *what, long n, const char *where, int err)
{
	const char *path = secure_getenv("VOLATILE_FAULT_REPORT");
	char line[160];
	int fd, len;

	if (path == NULL || *path == '\0')
		return;
	len = err ? snprintf(line, sizeof(line), "%s %ld %s %d\n", what, n, where, err)
		  : snprintf(line, sizeof(line), "%s %ld %s\n", what, n, where);
	fd = vl_raw_open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0) {
		if (vl_raw_write(fd, line, (size_t)len) != len) {
			/* the test will see a short report */
		}
		vl_raw_close(fd);
	}
}

/*
 * A test program may define this (exported: -rdynamic) to act at each
 * step, in the thread at the step: take a lock, say, where no timing
 * could put it (tests/helpers/lockrace.c).
 */
extern void vl_fault_hook(const char *where) __attribute__((weak, visibility("default")));

void vl_fault_step(const char *where)
{
	long n;

	if (vl_fault_hook != NULL)
		vl_fault_hook(where);
	init();
	n = __atomic_add_fetch(&steps, 1, __ATOMIC_RELAXED);
	if (tracing)
		report("step", n, where, 0);
	if (n == kill_at) {
		report("kill", n, where, 0);
		vl_raw_kill(vl_raw_getpid(), SIGKILL);
	}
}

int vl_fault_syscall(const char *where)
{
	long n;

	init();
	n = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	if (tracing)
		report("call", n, where, 0);
	if (n != sys_at && (sys_where[0] == '\0' || strcmp(where, sys_where) != 0))
		return 0;
	report("syscall", n, where, sys_errno);
	return 1;
}

int vl_fault_errno(void)
{
	return sys_errno;
}

#else

/* ISO C wants something in a translation unit */
typedef int vl_fault_unused;

#endif
