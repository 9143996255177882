/*
 * enter.c - every entry into the library, guarded (see enter.h).
 */
#include "enter.h"

#include <errno.h>
#include <pthread.h>

static __thread int in_shim __attribute__((tls_model("initial-exec")));
static __thread int cancel_was __attribute__((tls_model("initial-exec")));

/*
 * The library calls no cancellation point itself: its system calls are
 * raw (sys.h), never glibc's open, read, close, pread or usleep, and
 * tests/shell/symbols.sh fails when it imports any of glibc's
 * cancellation points. That is not enough for a thread not to be
 * cancelled inside it: a signal handler that interrupts the thread there
 * may call write() (async-signal-safe, and a cancellation point: the
 * self-pipe trick), and a thread may run with asynchronous cancellation.
 * Either would unwind the thread out of the library with a lock held (a
 * file's, the region's, the attach lock), so that every later MARK of the
 * file failed with EAGAIN, or fork and every later MARK waited for ever
 * (cancel-signal.sh). So cancellation is disabled for the whole call: one
 * flag write in glibc each way; a cancellation requested meanwhile is
 * acted on at the caller's next cancellation point (cancel.sh).
 */
int vl_enter(void)
{
	if (__atomic_load_n(&in_shim, __ATOMIC_RELAXED))
		return -EINTR;
	__atomic_store_n(&in_shim, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_was);
	return 0;
}

void vl_leave(void)
{
	int ignored;

	pthread_setcancelstate(cancel_was, &ignored);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&in_shim, 0, __ATOMIC_RELAXED);
}
