/* SPDX-License-Identifier: MIT */
/*
 * ashmem_ioctl.c - ioctl: requests of type 0x77 (ashmem's) on a memfd are
 * answered here (DESIGN 7); every other call goes to the next
 * ioctl after one compare.
 */
#include "ashmem/emulation.h"
#include "core/ashmem_rules.h"
#include "export.h"
#include "next.h"
#include "sys.h"

#include <errno.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int (*ioctl_fn)(int, unsigned long, ...);

static int raw_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	return (int)vl_as_libc(vl_raw_ioctl(fd, req, (unsigned long)arg));
}

VL_EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (__builtin_expect(vl_ash_type(req), 0)) {
		int saved = errno, handled;
		long r = vl_ash_ioctl(fd, req, (unsigned long)arg, &handled);

		if (handled) {
			if (r < 0) {
				errno = (int)-r;
				return -1;
			}
			errno = saved;
			return (int)r;
		}
		errno = saved;
	}
	return VL_NEXT(ioctl_fn, "ioctl", raw_ioctl)(fd, req, arg);
}
