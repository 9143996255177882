/* SPDX-License-Identifier: MIT */
/*
 * fault.h - fault injection, for tests only (DESIGN 11's repairs, crash safety).
 *
 * A build with VL_FAULT_INJECTION defined (the test suite's own copy of
 * the library, tests/fault/libvolatile-fault.la; never the installed one)
 * counts, per process:
 *
 *   steps:    VL_STEP(where) marks a point inside a critical section
 *             where a process may die: shared state half-changed, locks
 *             held. VOLATILE_FAULT_KILL=N: the Nth step SIGKILLs the
 *             process there.
 *   syscalls: VL_SYSCALL(where, call) wraps a system call the library
 *             makes. VOLATILE_FAULT_SYSCALL=N:ERRNO (a number, or EINTR,
 *             ENOMEM, EAGAIN, EIO): the Nth one returns -ERRNO
 *             instead of being made. VOLATILE_FAULT_SYSCALL=WHERE:ERRNO:
 *             every one at the point named WHERE fails so.
 *
 * And two settings, so that a test need not wait a long time out:
 * VOLATILE_FAULT_EVICT_AGE=S, the seconds of silence after which a full
 * table may evict a record (src/evict.c; a minute otherwise), and
 * VOLATILE_FAULT_GONE_GRACE=S, the seconds between the two sightings of
 * a gone file (src/purge.c; 3 otherwise). And one place:
 * VOLATILE_FAULT_SYS_ROOT=DIR, under which `volatile status --system`
 * looks for users' regions (DIR/run, DIR/run/user, DIR/dev/shm: cli/sysfind.c)
 * instead of the machine's, so that a test makes its users in a tree of
 * its own (system-find.sh).
 *
 * VOLATILE_FAULT_REPORT=PATH appends one line per fault injected
 * ("kill N WHERE", "syscall N WHERE ERRNO"), so that a test walking N
 * upwards knows when it has passed the last point. With
 * VOLATILE_FAULT_TRACE=1 it also appends one line per point passed
 * ("step N WHERE", "call N WHERE"), so that a test that walks only some
 * points knows every point's number and name from one run (fault.sh).
 * Elsewhere the macros are the bare statement and cost nothing.
 */
#ifndef VL_CORE_FAULT_H
#define VL_CORE_FAULT_H

#ifdef VL_FAULT_INJECTION

void vl_fault_step(const char *where);
/* 1 if this system call is to fail, else 0; errno untouched */
int vl_fault_syscall(const char *where);
/* the errno it is to fail with */
int vl_fault_errno(void);

/*
 * Every call site's convention (sys.h): the result, or -errno. An
 * injected failure is -ERRNO without the call made; errno is not written.
 */
#define VL_STEP(where) vl_fault_step(where)
#define VL_SYSCALL(where, call) (vl_fault_syscall(where) ? -vl_fault_errno() : (call))
/* mmap's: the failure as vl_raw_mmap gives it (sys.h, vl_map_error) */
#define VL_SYSCALL_PTR(where, call) \
	(vl_fault_syscall(where) ? (void *)(long)-vl_fault_errno() : (call))

#else

#define VL_STEP(where) ((void)0)
#define VL_SYSCALL(where, call) (call)
#define VL_SYSCALL_PTR(where, call) (call)

#endif
#endif
