/*
 * enter.h - the guard every entry into the library takes.
 *
 * Each entry point (the fallocate shim, the C API, the ashmem hooks) does
 * its work between vl_enter() and vl_leave(). A signal handler that
 * interrupts this thread inside the library, and calls in again, is told
 * so (-EINTR) instead of working on state its own interrupted frame is
 * changing, or waiting for a lock that frame holds. Inside, the thread
 * cannot be cancelled (enter.c). One thread-local flag and two glibc flag
 * writes.
 */
#ifndef VL_ENTER_H
#define VL_ENTER_H

/* 0 entered; -EINTR: this thread is inside already (a signal handler). */
int vl_enter(void);
void vl_leave(void);

#endif
