/* SPDX-License-Identifier: MIT */
/*
 * reentry.h - the guard every entry into the library takes.
 *
 * Each entry point (the fallocate shim, the C API, the ashmem hooks) does
 * its work between vl_enter() and vl_leave(). A signal handler that
 * interrupts this thread inside the library, and calls in again, is told
 * so (-EINTR) instead of working on state its own interrupted frame is
 * changing, or waiting for a lock that frame holds. Inside, the thread
 * cannot be cancelled (reentry.c says why). One thread-local flag and two
 * glibc flag writes, inline: every MARK and UNMARK takes the guard, and
 * the two calls into reentry.c were a tenth of what the guard costs.
 */
#ifndef VL_REENTRY_H
#define VL_REENTRY_H

#include <errno.h>
#include <pthread.h>

extern __thread int vl_in_shim __attribute__((tls_model("initial-exec")));
extern __thread int vl_cancel_was __attribute__((tls_model("initial-exec")));

/* 0 entered; -EINTR: this thread is inside already (a signal handler). */
static inline int vl_enter(void)
{
	if (__atomic_load_n(&vl_in_shim, __ATOMIC_RELAXED))
		return -EINTR;
	__atomic_store_n(&vl_in_shim, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &vl_cancel_was);
	return 0;
}

static inline void vl_leave(void)
{
	int ignored;

	pthread_setcancelstate(vl_cancel_was, &ignored);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&vl_in_shim, 0, __ATOMIC_RELAXED);
}

#endif
