/*
 * enter.c - every entry into the library, guarded (see enter.h).
 */
#include "enter.h"

#include <errno.h>

static __thread int in_shim __attribute__((tls_model("initial-exec")));

/*
 * No pthread_setcancelstate: inside the library a thread meets no
 * cancellation point to be cancelled at, as the library calls none. Its
 * system calls are raw (sys.h), never glibc's open, read, close, pread or
 * usleep, whose cancellation would leave behind a lock the thread held (the
 * attach lock, a region lock), so that fork and every later MARK waited
 * for ever, or an fd it opened. tests/shell/symbols.sh fails when the
 * library imports any of glibc's cancellation points; cancel.sh shows a
 * thread with a cancellation pending going through the first attach and a
 * purge. A cancellation requested meanwhile is acted on at the caller's
 * next cancellation point, as before.
 */
int vl_enter(void)
{
	if (__atomic_load_n(&in_shim, __ATOMIC_RELAXED))
		return -EINTR;
	__atomic_store_n(&in_shim, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return 0;
}

void vl_leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&in_shim, 0, __ATOMIC_RELAXED);
}
