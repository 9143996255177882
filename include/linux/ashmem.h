/* SPDX-License-Identifier: MIT */
/*
 * linux/ashmem.h - the ioctl ABI of Android's ashmem driver, for legacy
 * programs built against it, as libvolatile emulates it on memfd.
 *
 * Written for libvolatile from the driver's published ABI (the numbers,
 * the argument structure and the return values): a program compiled
 * with this header talks to the real driver or to libvolatile's
 * emulation alike. See libvolatile(7), section ASHMEM.
 */
#ifndef _LINUX_ASHMEM_H
#define _LINUX_ASHMEM_H

#include <linux/ioctl.h>
#include <linux/types.h>
#include <stddef.h> /* size_t, in ASHMEM_SET_SIZE */

#define ASHMEM_NAME_LEN 256

/* what ASHMEM_GET_NAME says of a region that was never named */
#define ASHMEM_NAME_DEF "dev/ashmem"

/* ASHMEM_PIN: was any of the range purged while it was unpinned? */
#define ASHMEM_NOT_PURGED 0
#define ASHMEM_WAS_PURGED 1

/* ASHMEM_GET_PIN_STATUS: is any page of the range unpinned? */
#define ASHMEM_IS_UNPINNED 0
#define ASHMEM_IS_PINNED 1

/* PIN, UNPIN, GET_PIN_STATUS: page-aligned; len 0 means "to the end" */
struct ashmem_pin {
	__u32 offset;
	__u32 len;
};

#define __ASHMEMIOC 0x77

#define ASHMEM_SET_NAME _IOW(__ASHMEMIOC, 1, char[ASHMEM_NAME_LEN])
#define ASHMEM_GET_NAME _IOR(__ASHMEMIOC, 2, char[ASHMEM_NAME_LEN])
#define ASHMEM_SET_SIZE _IOW(__ASHMEMIOC, 3, size_t)
#define ASHMEM_GET_SIZE _IO(__ASHMEMIOC, 4)
#define ASHMEM_SET_PROT_MASK _IOW(__ASHMEMIOC, 5, unsigned long)
#define ASHMEM_GET_PROT_MASK _IO(__ASHMEMIOC, 6)
#define ASHMEM_PIN _IOW(__ASHMEMIOC, 7, struct ashmem_pin)
#define ASHMEM_UNPIN _IOW(__ASHMEMIOC, 8, struct ashmem_pin)
/* reads a struct ashmem_pin although it is declared without an argument */
#define ASHMEM_GET_PIN_STATUS _IO(__ASHMEMIOC, 9)
#define ASHMEM_PURGE_ALL_CACHES _IO(__ASHMEMIOC, 10)
#define ASHMEM_GET_FILE_ID _IOR(__ASHMEMIOC, 11, unsigned long)

#endif /* _LINUX_ASHMEM_H */
