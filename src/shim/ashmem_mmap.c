/*
 * ashmem_mmap.c - mmap of an ashmem region: its prot mask (EPERM) and
 * size (EINVAL) are enforced, a shared mapping under a mask without
 * PROT_WRITE cannot gain it by mprotect, and the first mapping fixes the
 * region's name and size, as the driver does. Any mmap of an fd this process never saw as
 * a region costs one load and goes to the next mmap.
 */
#include "ashmem.h"
#include "export.h"
#include "next.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *raw_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
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

VL_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return gate(VL_NEXT(vl_mmap_fn, "mmap64", raw_mmap), addr, len, prot, flags, fd, off);
}
