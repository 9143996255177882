/* SPDX-License-Identifier: MIT */
/*
 * next.c - lazy resolution of the next definition (see next.h).
 */
#include "next.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>

static __thread int resolving __attribute__((tls_model("initial-exec")));

void *vl_next(void **slot, const char *name, void *raw)
{
	void *f;
	int saved = errno;

	if (resolving)
		return raw;
	resolving = 1;
	f = dlsym(RTLD_NEXT, name);
	resolving = 0;
	errno = saved;
	if (f == NULL)
		f = raw;
	__atomic_store_n(slot, f, __ATOMIC_RELEASE);
	return f;
}
