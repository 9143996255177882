/* SPDX-License-Identifier: MIT */
/*
 * mutex.h - the command's own mutexes (supervise.c, place.c): a pthread
 * mutex, and in the debug build (VL_DEBUG_LOCKS: tests/debug/volatile,
 * which make check runs) the thread that holds it, kept beside it. A
 * function whose comment says "(... lock held)" begins with
 * CLI_ASSERT_HELD(m): there, a calling thread that does not hold m aborts
 * with one line naming the function and the mutex, as the library's own
 * mutexes do (VL_ASSERT_SELF_HELD, this_process.h); in the installed
 * command it is nothing.
 */
#ifndef VL_CLI_MUTEX_H
#define VL_CLI_MUTEX_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cli_mutex {
	pthread_mutex_t m;
#ifdef VL_DEBUG_LOCKS
	pthread_t holder; /* all zeros: nobody */
#endif
};

#define CLI_MUTEX_INITIALIZER { .m = PTHREAD_MUTEX_INITIALIZER }

#ifdef VL_DEBUG_LOCKS
/*
 * A function that needs m held was called by a thread that does not hold
 * it: a bug of the command, caught in its debug build, with a line of the
 * library's kind (lock.c).
 */
static inline void cli_mutex_assert_held(struct cli_mutex *m, const char *name, const char *func)
{
	pthread_t holder;

	__atomic_load(&m->holder, &holder, __ATOMIC_RELAXED);
	if (pthread_equal(holder, pthread_self()))
		return;
	fprintf(stderr, "volatile: %s: the mutex %s is not held by this thread\n", func, name);
	abort();
}
#define CLI_ASSERT_HELD(mutex) cli_mutex_assert_held((mutex), #mutex, __func__)

static inline void cli_mutex_note(struct cli_mutex *m, int held)
{
	pthread_t t;

	memset(&t, 0, sizeof(t));
	if (held)
		t = pthread_self();
	__atomic_store(&m->holder, &t, __ATOMIC_RELAXED);
}
#else
#define CLI_ASSERT_HELD(mutex) ((void)sizeof(mutex))
#define cli_mutex_note(m, held) ((void)0)
#endif

static inline void cli_mutex_init(struct cli_mutex *m)
{
	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->m, NULL);
}

static inline void cli_mutex_destroy(struct cli_mutex *m)
{
	pthread_mutex_destroy(&m->m);
}

static inline void cli_lock(struct cli_mutex *m)
{
	pthread_mutex_lock(&m->m);
	cli_mutex_note(m, 1);
}

static inline void cli_unlock(struct cli_mutex *m)
{
	cli_mutex_note(m, 0);
	pthread_mutex_unlock(&m->m);
}

/* A wait lets go of m: not held meanwhile, held again after. */
static inline void cli_cond_wait(pthread_cond_t *c, struct cli_mutex *m)
{
	cli_mutex_note(m, 0);
	pthread_cond_wait(c, &m->m);
	cli_mutex_note(m, 1);
}

static inline int cli_cond_timedwait(pthread_cond_t *c, struct cli_mutex *m,
				     const struct timespec *until)
{
	int e;

	cli_mutex_note(m, 0);
	e = pthread_cond_timedwait(c, &m->m, until);
	cli_mutex_note(m, 1);
	return e;
}

#endif
