/* SPDX-License-Identifier: MIT */
/*
 * cutils/ashmem.h - the ashmem API of Android's libcutils, and the NDK's
 * ASharedMemory, provided by libvolatile (link with -lvolatile).
 *
 * Regions are memfds. Unlike libcutils' own memfd fallback, pinning and
 * unpinning work: unpinned pages may be purged (freed; they read back as
 * zeros) under memory pressure or by `volatile purge`, and pinning them
 * again says whether that happened. See libvolatile(7), section ASHMEM.
 */
#ifndef _CUTILS_ASHMEM_H
#define _CUTILS_ASHMEM_H

#include <stddef.h>

/*
 * What a pin returns. libcutils' header names them where the driver's
 * <linux/ashmem.h> is not included, and a program written for Android
 * compares with them; the values are the driver's, so the two headers
 * agree in either order.
 */
#ifndef ASHMEM_NOT_PURGED
#define ASHMEM_NOT_PURGED 0
#define ASHMEM_WAS_PURGED 1
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if fd is an ashmem region (or any memfd), else 0. */
int ashmem_valid(int fd);

/*
 * A new region of size bytes named name (NULL: unnamed), pinned, with
 * every protection allowed. Returns its fd (close-on-exec), or -1 and errno.
 */
int ashmem_create_region(const char *name, size_t size);

/* Restrict the protections a later mmap may ask for; bits can only be removed. 0, or -1. */
int ashmem_set_prot_region(int fd, int prot);

/*
 * Pin [offset, offset + len) (page-aligned; len 0: to the end): returns
 * ASHMEM_NOT_PURGED (0) or ASHMEM_WAS_PURGED (1), or -1 and errno.
 * The region must have been mapped once.
 */
int ashmem_pin_region(int fd, size_t offset, size_t len);

/* Unpin: the pages may be purged from now on. 0, or -1 and errno. */
int ashmem_unpin_region(int fd, size_t offset, size_t len);

/* The region's size, or -1 and errno. */
int ashmem_get_size_region(int fd);

/* The NDK's names (<android/sharedmem.h>). */
int ASharedMemory_create(const char *name, size_t size); /* fd, -1 and errno; -EINVAL if size is 0 */
size_t ASharedMemory_getSize(int fd);                     /* 0 if fd is not a region */
int ASharedMemory_setProt(int fd, int prot);              /* 0, or -1 and errno */

#ifdef __cplusplus
}
#endif

#endif /* _CUTILS_ASHMEM_H */
