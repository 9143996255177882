/* SPDX-License-Identifier: MIT */
/*
 * spawn.c - children made without fork(): posix_spawn, posix_spawnp,
 * _Fork (fork without its handlers), clone, vfork, and system, popen and
 * wordexp with a command substitution (glibc makes their child with its
 * own posix_spawn, which no interposer sees). fork's pthread_atfork
 * handlers do not run for them, so the ashmem code is told here that a
 * child may inherit this process's region fds (ashmem/own_table.h: the epoch).
 * One atomic add per call.
 */
#include "ashmem/emulation.h"
#include "export.h"
#include "next.h"
#include "this_process.h"

#include <errno.h>
#include <sched.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>
#include <wordexp.h>

typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			const posix_spawnattr_t *, char *const[], char *const[]);
typedef int (*system_fn)(const char *);
typedef FILE *(*popen_fn)(const char *, const char *);
typedef pid_t (*fork_fn)(void);
typedef int (*wordexp_fn)(const char *, wordexp_t *, int);
typedef int (*clone_fn)(int (*)(void *), void *, int, void *, ...);

/* Never reached in practice: libc defines all four. */
static int no_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	(void)pid, (void)path, (void)fa, (void)attr, (void)argv, (void)envp;
	return ENOSYS;
}

static int no_system(const char *cmd)
{
	(void)cmd;
	errno = ENOSYS;
	return -1;
}

static FILE *no_popen(const char *cmd, const char *type)
{
	(void)cmd, (void)type;
	errno = ENOSYS;
	return NULL;
}

static pid_t no_fork(void)
{
	errno = ENOSYS;
	return -1;
}

static int no_clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	(void)fn, (void)stack, (void)flags, (void)arg;
	errno = ENOSYS;
	return -1;
}

static int no_wordexp(const char *words, wordexp_t *we, int flags)
{
	(void)words, (void)we, (void)flags;
	return WRDE_NOSPACE;
}

VL_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	int r;

	vl_ash_spawning(1, 0);
	r = VL_NEXT(spawn_fn, "posix_spawn", no_spawn)(pid, path, fa, attr, argv, envp);
	vl_ash_spawning(0, 0);
	return r;
}

VL_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	int r;

	vl_ash_spawning(1, 0);
	r = VL_NEXT(spawn_fn, "posix_spawnp", no_spawn)(pid, file, fa, attr, argv, envp);
	vl_ash_spawning(0, 0);
	return r;
}

VL_EXPORT int system(const char *cmd)
{
	int r;

	if (cmd != NULL) /* system(NULL) only asks whether a shell exists */
		vl_ash_spawning(1, 0);
	r = VL_NEXT(system_fn, "system", no_system)(cmd);
	if (cmd != NULL)
		vl_ash_spawning(0, 0);
	return r;
}

VL_EXPORT FILE *popen(const char *cmd, const char *type)
{
	FILE *f;

	vl_ash_spawning(1, 0);
	f = VL_NEXT(popen_fn, "popen", no_popen)(cmd, type);
	vl_ash_spawning(0, 0);
	return f;
}

/* glibc 2.34's fork without atfork handlers: a fork all the same */
VL_EXPORT pid_t _Fork(void)
{
	pid_t pid;

	vl_ash_spawning(1, 0);
	pid = VL_NEXT(fork_fn, "_Fork", no_fork)();
	vl_ash_spawning(0, pid == 0);
	if (pid == 0) {
		int saved = errno;

		vl_self_forked(); /* before a vfork child of this child could look */
		errno = saved;
	}
	return pid;
}

/*
 * clone: a new process (not CLONE_THREAD) may inherit any fd, or share
 * the fd table. The child runs fn on its own stack and never comes back
 * here (so its copy still counts a fork under way: the regions it makes
 * are left to the purges). glibc's clone reads its three optional
 * arguments whatever the flags; so does this.
 */
VL_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;
	pid_t *ptid, *ctid;
	void *tls;
	int r;

	va_start(ap, arg);
	ptid = va_arg(ap, pid_t *);
	tls = va_arg(ap, void *);
	ctid = va_arg(ap, pid_t *);
	va_end(ap);
	if (flags & CLONE_THREAD)
		return VL_NEXT(clone_fn, "clone", no_clone)(fn, stack, flags, arg, ptid, tls, ctid);
	vl_ash_spawning(1, 0);
	r = VL_NEXT(clone_fn, "clone", no_clone)(fn, stack, flags, arg, ptid, tls, ctid);
	vl_ash_spawning(0, 0);
	return r;
}

/*
 * vfork cannot be wrapped in C: the child returns through the caller's
 * frame while the parent is stopped, and a frame of ours in between would
 * be popped by the child and then used by the parent. So, on x86_64, a
 * few instructions before glibc's own: remember our pid (a clone child's
 * page may not have it yet: the vfork child must see it to know it is not
 * us, this_process.h) and raise the epoch of regions made here (a child that
 * execs keeps every fd without O_CLOEXEC). Only before: a region another
 * thread makes between that and the vfork itself is not seen (doc/ashmem.md).
 * Elsewhere vfork is not seen at all.
 */
#if defined(__x86_64__)
__asm__(".text\n"
	".globl vfork\n"
	".type vfork, @function\n"
	"vfork:\n"
	"	.cfi_startproc\n"
	"	endbr64\n"
	"	subq $8, %rsp\n" /* the stack 16-aligned for the call */
	"	.cfi_adjust_cfa_offset 8\n"
	"	call vl_self_forked\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	lock addl $1, vl_here_epoch_word(%rip)\n"
	"	jmp __vfork@PLT\n"
	"	.cfi_endproc\n"
	".size vfork, .-vfork\n");
#endif

VL_EXPORT int wordexp(const char *words, wordexp_t *we, int flags)
{
	int r;

	if (!(flags & WRDE_NOCMD)) /* $(...) and `...` run a shell */
		vl_ash_spawning(1, 0);
	r = VL_NEXT(wordexp_fn, "wordexp", no_wordexp)(words, we, flags);
	if (!(flags & WRDE_NOCMD))
		vl_ash_spawning(0, 0);
	return r;
}
