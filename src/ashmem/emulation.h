/* SPDX-License-Identifier: MIT */
/*
 * ashmem.h - ashmem regions on memfd (DESIGN 7): the logic behind
 * the libcutils API (cutils.c) and the /dev/ashmem emulation (src/shim/).
 *
 * A region is a memfd whose record in the shared region carries
 * VL_FF_ASHMEM and a struct vl_ashmem (name, size, prot mask, mapped
 * yet). Its pins are its volatile ranges: UNPIN is MARK, PIN is UNMARK.
 * Everything here returns -errno, never touches errno on success, and
 * never crashes on a bad pointer from the caller (EFAULT).
 */
#ifndef VL_ASHMEM_EMULATION_H
#define VL_ASHMEM_EMULATION_H

#include "own_table.h"
#include "core/layout.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

struct statx;

/*
 * A new region: a memfd and its record. dev: opened as /dev/ashmem (fstat
 * shows the device; size and name come later); else the libcutils API
 * (named and sized now). Returns the fd, or -errno.
 */
int vl_ash_new(const char *name, uint64_t size, int dev, int cloexec);

/*
 * An ashmem ioctl on fd. Returns the ioctl's result (>= 0) or -errno.
 * *handled is cleared when fd is not a memfd: the request then belongs
 * to the real ioctl.
 */
long vl_ash_ioctl(int fd, unsigned long req, unsigned long arg, int *handled);

/*
 * mmap of a flagged fd (one that may be a region): the prot mask and size
 * rules, and "mapped" recorded, around the real mmap. Returns 1 with
 * *res the result (MAP_FAILED and *err on failure), or 0: not a region,
 * call the real mmap.
 */
typedef void *(*vl_mmap_fn)(void *, size_t, int, int, int, off_t);
int vl_ash_mmap(vl_mmap_fn real, void *addr, size_t len, int prot, int flags, int fd, off_t off,
		void **res, int *err);

/* Is fd (flagged) a region opened as /dev/ashmem? Then fstat shows the device. */
int vl_ash_dev_fd(int fd);

/*
 * close() of a flagged fd (also dup2/dup3 over one): begin before the real
 * close, end after it (closed: the fd is gone; else it stays followed as
 * before). If the region was made here and this fd was its last here,
 * the region joins the dying (own_table.h), forgotten once nothing
 * here holds it.
 */
struct vl_ash_closing {
	int borrowed;     /* a vfork child's close: nothing to do */
	int flagged, dev; /* the fd's bits before */
	int taken, stale; /* its entry in the table of regions made here */
	struct vl_here entry;
};
void vl_ash_close_begin(int fd, struct vl_ash_closing *c);
void vl_ash_close_end(int fd, const struct vl_ash_closing *c, int closed);

/*
 * fcntl(F_ADD_SEALS, seals) of a flagged fd: begin before the real call,
 * end after it (sealed: it succeeded). A write seal (F_SEAL_WRITE,
 * F_SEAL_FUTURE_WRITE) on a region is added under the region's lock, and
 * the region's unpurged unpinned ranges are pinned again under it: the
 * kernel will never punch the memfd (seals.c).
 */
struct vl_ash_sealing {
	int entered, locked, fd;
	struct vl_region *r;
	uint32_t fi, gen;
};
void vl_ash_seal_begin(int fd, unsigned seals, struct vl_ash_sealing *c);
void vl_ash_seal_end(struct vl_ash_sealing *c, int sealed);

/* After a munmap, when regions wait among the dying: settle them if it is time. */
void vl_ash_munmapped(void);

/* Copy n bytes to the caller's memory: 0, or -EFAULT (never a fault). */
int vl_ash_copy_out(void *user, const void *src, size_t n);

/* What stat and fstat show of the emulated device. */
void vl_ash_dev_stat(struct stat *st);
void vl_ash_dev_statx(struct statx *sx);

/*
 * Fds that may be regions, per process: set when a region is made or
 * answers an ioctl here, is duplicated, arrives over a socket (recvmsg,
 * recvmmsg) or is reopened through /proc as a memfd named dev/ashmem (any
 * memfd, once this process uses the region), or, at load, for each fd
 * open on a memfd named dev/ashmem (inherited across exec). A set bit is
 * only a hint (checked against the shared
 * region); an fd never flagged is passed through untouched, at the cost of
 * one load. Fds beyond the bitmap are always "maybe": looked at (an fstat)
 * each time.
 */
#define VL_ASH_FDS 65536
extern uint64_t vl_ash_fdbits[VL_ASH_FDS / 64];

static inline int vl_ash_flagged(int fd)
{
	if (__builtin_expect((unsigned)fd >= VL_ASH_FDS, 0))
		return fd >= 0;
	return (__atomic_load_n(&vl_ash_fdbits[fd / 64], __ATOMIC_RELAXED) >> (fd % 64)) & 1u;
}

/* At load: flag every fd open on a memfd named dev/ashmem (see above). */
void vl_ash_seed(void);

void vl_ash_flag(int fd);
/* fd arrived over a socket: flagged if it may be a region (its name says so). */
void vl_ash_received(int fd);
/* fd was opened through /proc (.../fd/N): the same, and maybe a twin of one made here. */
void vl_ash_reopened(int fd);
/* to is a duplicate of the flagged from (dup, dup2, dup3, F_DUPFD). */
void vl_ash_dup(int from, int to);
/* fd was sent over a socket: another process may hold its memfd now. */
void vl_ash_sent(int fd);
/*
 * A child is being made without fork(): it may inherit any fd, as a forked
 * one. begin before the call, then end after it (child: in the child).
 */
void vl_ash_spawning(int begin, int child);
void vl_ash_unflag(int fd);

#endif
