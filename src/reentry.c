/* SPDX-License-Identifier: MIT */
/*
 * reentry.c - every entry into the library, guarded (see reentry.h).
 *
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
#include "reentry.h"

/* inside the library (a signal handler that calls in is told EINTR) */
__thread int vl_in_shim __attribute__((tls_model("initial-exec")));
/* the cancel state vl_enter found, for vl_leave */
__thread int vl_cancel_was __attribute__((tls_model("initial-exec")));
