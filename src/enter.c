/*
 * enter.c - every entry into the library, guarded (see enter.h).
 */
#include "enter.h"

#include <errno.h>
#include <pthread.h>

static __thread int in_shim __attribute__((tls_model("initial-exec")));
static __thread int cancel_was __attribute__((tls_model("initial-exec")));

/*
 * Inside the library a thread is not cancelled: glibc's open, read,
 * close, pread and usleep are cancellation points, and a thread cancelled
 * there would leave behind a lock it held (the attach lock, a region
 * lock), so that fork and every later MARK waited for ever, or an fd it
 * opened. Disabling cancellation for the whole call is one flag write in
 * glibc each way; a cancellation requested meanwhile is acted on at the
 * caller's next cancellation point.
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
