/* SPDX-License-Identifier: MIT */
/*
 * next.h - finding the next definition of an interposed libc function.
 *
 * Resolved lazily, on first call: open and stat may be called by other
 * libraries' constructors, or by the dynamic loader's helpers, before
 * ours run. dlsym itself may call malloc, and malloc (or another
 * interposer) may call open or stat: a call made while this thread is
 * resolving gets the raw system call instead of recursing.
 */
#ifndef VL_SHIM_NEXT_H
#define VL_SHIM_NEXT_H

/* The next `name`, stored in *slot; `raw` while resolving or if there is none. */
void *vl_next(void **slot, const char *name, void *raw);

#define VL_NEXT(type, name, raw)                                          \
	({                                                                \
		static void *slot_;                                       \
		void *f_ = __atomic_load_n(&slot_, __ATOMIC_ACQUIRE);     \
		(type)(f_ != NULL ? f_ : vl_next(&slot_, name, (void *)(raw))); \
	})

#endif
