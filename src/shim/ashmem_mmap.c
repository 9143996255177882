/* SPDX-License-Identifier: MIT */
/*
 * ashmem_mmap.c - mmap of an ashmem region: its prot mask (EPERM) and
 * size (EINVAL) are enforced, a shared mapping under a mask without
 * PROT_WRITE cannot gain it by mprotect, and the first mapping fixes the
 * region's name and size, as the driver does. munmap may settle the regions
 * this process let go of (ashmem/close.c, vl_ash_munmapped). Any mmap of an fd
 * this process never saw as a region costs one load and goes to the next
 * mmap.
 */
#include "ashmem/emulation.h"
#include "export.h"
#include "next.h"
#include "sys.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <stdint.h>
#include <unistd.h>

typedef int (*munmap_fn)(void *, size_t);

static void *raw_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p = vl_raw_mmap(addr, len, prot, flags, fd, off);
	int err = vl_map_error(p);

	if (err) { /* libc's answer to the host */
		errno = -err;
		return MAP_FAILED;
	}
	return p;
}

static void *gate(vl_mmap_fn next, void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (__builtin_expect(vl_ash_flagged(fd), 0) && !(flags & MAP_ANONYMOUS)) {
		int saved = errno, err = 0;
		void *res;

		if (vl_ash_mmap(next, addr, len, prot, flags, fd, off, &res, &err)) {
			errno = res == MAP_FAILED ? err : saved;
			return res;
		}
		errno = saved;
	}
	return next(addr, len, prot, flags, fd, off);
}

VL_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return gate(VL_NEXT(vl_mmap_fn, "mmap", raw_mmap), addr, len, prot, flags, fd, off);
}

static int raw_munmap(void *addr, size_t len)
{
	return (int)vl_as_libc(vl_raw_munmap(addr, len));
}

/* One load unless regions this process let go of wait to be settled. */
VL_EXPORT int munmap(void *addr, size_t len)
{
	int r = VL_NEXT(munmap_fn, "munmap", raw_munmap)(addr, len);

	if (__builtin_expect(__atomic_load_n(&vl_here_ndying, __ATOMIC_RELAXED) != 0, 0) &&
	    r == 0) {
		int saved = errno;

		vl_ash_munmapped();
		errno = saved;
	}
	return r;
}

VL_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return gate(VL_NEXT(vl_mmap_fn, "mmap64", raw_mmap), addr, len, prot, flags, fd, off);
}
