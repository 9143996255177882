/* SPDX-License-Identifier: MIT */
/*
 * cutils.c - libcutils' ashmem API and the NDK's ASharedMemory, exported
 * by libvolatile.so with their names, signatures and return conventions
 * (DESIGN 7). They go straight to the emulation's logic, so they
 * work in a program linked with -lvolatile as well as under LD_PRELOAD.
 * errno is left alone on success.
 */
#include "ashmem/emulation.h"
#include "export.h"
#include "sys.h"

#include <cutils/ashmem.h>
#include <errno.h>
#include <linux/ashmem.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

/* An ashmem ioctl, as the driver would answer it: result, or -1 and errno. */
static int call(int fd, unsigned long req, unsigned long arg)
{
	int saved = errno, handled;
	long r = vl_ash_ioctl(fd, req, arg, &handled);

	if (!handled) /* not a memfd: what the kernel says (EBADF, ENOTTY) */
		return (int)vl_as_libc(vl_raw_ioctl(fd, req, arg));
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	errno = saved;
	return (int)r;
}

VL_EXPORT int ashmem_valid(int fd)
{
	int saved = errno, handled;
	long r = vl_ash_ioctl(fd, ASHMEM_GET_PROT_MASK, 0, &handled);

	if (handled && r >= 0) {
		errno = saved;
		return 1;
	}
	errno = ENOTTY;
	return 0;
}

/*
 * The exported names call these, and so do the NDK's: a call from inside
 * the library to an exported name would bind through the PLT to whatever
 * the program interposes on it.
 */
static int create_region(const char *name, size_t size)
{
	int saved = errno, fd = vl_ash_new(name, size, 0, 1);

	if (fd < 0) {
		errno = -fd;
		return -1;
	}
	errno = saved;
	return fd;
}

static int set_prot(int fd, int prot)
{
	return call(fd, ASHMEM_SET_PROT_MASK, (unsigned long)prot);
}

static int get_size(int fd)
{
	return call(fd, ASHMEM_GET_SIZE, 0);
}

VL_EXPORT int ashmem_create_region(const char *name, size_t size)
{
	return create_region(name, size);
}

VL_EXPORT int ashmem_set_prot_region(int fd, int prot)
{
	return set_prot(fd, prot);
}

VL_EXPORT int ashmem_pin_region(int fd, size_t offset, size_t len)
{
	struct ashmem_pin pin = { (uint32_t)offset, (uint32_t)len };

	return call(fd, ASHMEM_PIN, (unsigned long)&pin);
}

VL_EXPORT int ashmem_unpin_region(int fd, size_t offset, size_t len)
{
	struct ashmem_pin pin = { (uint32_t)offset, (uint32_t)len };

	return call(fd, ASHMEM_UNPIN, (unsigned long)&pin);
}

VL_EXPORT int ashmem_get_size_region(int fd)
{
	return get_size(fd);
}

VL_EXPORT int ASharedMemory_create(const char *name, size_t size)
{
	if (size == 0)
		return -EINVAL;
	return create_region(name, size);
}

VL_EXPORT size_t ASharedMemory_getSize(int fd)
{
	int saved = errno, r = get_size(fd);

	errno = saved;
	return r < 0 ? 0 : (size_t)r;
}

VL_EXPORT int ASharedMemory_setProt(int fd, int prot)
{
	return set_prot(fd, prot);
}
