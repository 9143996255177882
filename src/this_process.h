/* SPDX-License-Identifier: MIT */
/*
 * this_process.h - what this process is, right in children of every kind.
 *
 * The pid, and the token this process holds in each region's table of
 * processes (src/lock.c), live in one page marked MADV_WIPEONFORK: the
 * kernel hands every child that does not share our memory (fork, _Fork,
 * clone without CLONE_VM, posix_spawn's helpers after their exec) a zero
 * page, so a child never takes its parent's pid or token for its own,
 * whether or not it ran the atfork handlers. Children that share our
 * memory (vfork, CLONE_VM) see the parent's page: they must only exec or
 * _exit, as POSIX says of vfork.
 */
#ifndef VL_THIS_PROCESS_H
#define VL_THIS_PROCESS_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

/* This process's pid, remembered. */
pid_t vl_self(void);
/*
 * Remember our pid now, if it is not yet: in a child just made without the
 * atfork handlers (_Fork), and before a vfork. errno is kept.
 */
void vl_self_forked(void);

/*
 * Is the running process one that shares this process's memory without
 * being it (a vfork child, a clone(CLONE_VM) child)? What it does must not
 * change this process's state. Costs a getpid system call.
 */
int vl_borrowed(void);

/*
 * Mutexes that a child of any kind gets unlocked, whichever thread held
 * them at the fork: no fork handler takes them, so a fork from a signal
 * handler that interrupted their holder does not wait on it either.
 * What they guard must be usable from any instruction of their holder.
 */
enum vl_self_mutex {
	VL_SELF_ATTACH, /* attach.c: one thread attaches at a time */
	VL_SELF_HERE,   /* ashmem/own_table.c: the table of regions made here */
	VL_SELF_MUTEXES
};
void vl_self_lock(enum vl_self_mutex which);
void vl_self_unlock(enum vl_self_mutex which);

/* This process's token in the region mapping `serial`; 0 if it has none yet. */
uint32_t vl_self_token(uint64_t serial);
/* Remember it (a few regions at most: an older one is forgotten). */
void vl_self_set_token(uint64_t serial, uint32_t token);
/* Is token one this process image holds, in any of its mappings? */
int vl_self_owns_token(uint32_t token);
/* One registration at a time in this process (lock.c, my_token). */
void vl_self_register_lock(void);
void vl_self_register_unlock(void);
/* the registration lock, for VL_ASSERT_SELF_HELD */
#define VL_SELF_REGISTERING VL_SELF_MUTEXES

/*
 * VL_ASSERT_SELF_HELD(which): the calling thread holds this process's
 * mutex `which` (or VL_SELF_REGISTERING), as a function whose comment
 * says "(the ... mutex held)" needs. As VL_ASSERT_HELD (core/layout.h):
 * in the debug build (VL_DEBUG_LOCKS) each lock keeps its holding thread
 * beside it in the self page, and a thread that is not it aborts with a
 * line naming the function and the lock; nothing in the release build.
 * Unlike a region's locks these tell one thread from another.
 */
#ifdef VL_DEBUG_LOCKS
void vl_self_assert_held(unsigned which, const char *lock, const char *func);
#define VL_ASSERT_SELF_HELD(which) vl_self_assert_held((which), #which, __func__)
#else
#define VL_ASSERT_SELF_HELD(which) ((void)sizeof(which))
#endif

/*
 * What a waiter in another process checks to tell whether we are alive:
 * our pid as /proc shows it, our start time, the start of our stack (a
 * new one at each exec: a process that exec'd while a thread of it held
 * a lock is not the one that took it), which /proc that is, and our time
 * namespace. Read once per process; -errno if /proc cannot be read.
 */
struct vl_self_id {
	uint32_t pid;
	uint64_t start;
	uint64_t stack;
	uint64_t procdev;
	uint64_t timens;
};
int vl_self_id(struct vl_self_id *id);

/*
 * Is the process described so alive, seen from here? 1 alive, or cannot
 * tell (another /proc, another time namespace, no /proc now, a /proc that
 * hides processes); 0 gone (no such pid, another process with its pid,
 * the same one after an exec, or a zombie with no live thread). Judged
 * through the view this process has now, not the one it registered with.
 */
int vl_proc_alive(const struct vl_self_id *who);

/*
 * Does a /proc of this process's hide processes (mounted hidepid: those
 * it may not trace are not listed)? 1 also when it cannot tell.
 */
int vl_proc_hides(void);

#endif
