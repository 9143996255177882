/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what the files of the ashmem emulation share (emulation.h is
 * what the rest of the library sees).
 *
 * Where the state lives. A region's name, size, prot mask and "mapped
 * yet" live in the record of its memfd in the shared region (the path
 * field of a memfd's record is never used: memfds have no path), keyed
 * by the memfd's identity like every record, so a forked child or a
 * process that received the fd over a socket finds the same state. The
 * pins are the memfd's volatile ranges. VL_FF_ASHMEM keeps the record
 * while the region has no unpinned range; it goes at the last close of a
 * region made here and held by nothing else (vl_ash_close_begin), or at
 * its last munmap after that close (vl_ash_munmapped), or else
 * when the memfd is found gone (purge.c, vl_collect: `volatile purge`,
 * the daemon; a purged range leaves a tombstone, so a file taken for gone
 * that was not answers 1, DESIGN 15). open() never collects.
 *
 * The state is guarded by the file's lock; the record's flags by the
 * region lock (VL_ASH_DEV never changes after creation); they are taken
 * in the one order of the region's locks (core/layout.h, struct vl_lock).
 *
 * The caller's pointers (SET_NAME, GET_NAME, PIN, GET_FILE_ID) are read
 * and written with process_vm_readv/writev on ourselves (or, where those
 * are forbidden, through a pipe): a bad pointer gives EFAULT, as in the
 * driver, never a fault in the host program.
 */
#ifndef VL_ASHMEM_INTERNAL_H
#define VL_ASHMEM_INTERNAL_H

#include "emulation.h"
#include "own_table.h"

#include "core/ashmem_rules.h"
#include "core/layout.h"
#include "ident.h"
#include "region.h"
#include "sys.h"

#include <stddef.h>
#include <stdint.h>

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001U
#endif
#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING 0x0002U
#endif

struct rec {
	uint32_t fi, gen;   /* fi VL_NIL: the file has no record */
	uint32_t flags;     /* the record's VL_FF_* when looked up */
	uint32_t ashflags;  /* its VL_ASH_* then (VL_FF_ASHMEM only) */
};

struct target {
	int fd;
	struct vl_region *r;
	int region_err;
	struct vl_stat st;
	struct rec x;
};

/* fds.c: fds known as regions opened as /dev/ashmem (what fstat answers when it cannot look) */
extern uint64_t ash_devbits[VL_ASH_FDS / 64];

/* fds.c: the per-fd bits, and a memfd named as regions are */
void ash_set_bit(uint64_t *bits, int fd);
void ash_clear_bit(uint64_t *bits, int fd);
int ash_bit(const uint64_t *bits, int fd);
/* readlink of /proc/self/fd/FD into buf: its length, or -1; errno kept, no lock, no stdio */
long ash_fd_link(int fd, char *buf, size_t size);
int ash_named_region(int fd);

/* memfd.c: the memfd underneath, by system calls that never come back into the shim */
uint64_t ash_page_size(void);
int ash_raw_memfd(const char *name, unsigned flags);
int ash_raw_ftruncate(int fd, uint64_t size);
int ash_file_size(int fd, uint64_t *size);
int ash_memfd_name(int fd, char *name, size_t size);
int ash_apply_size(int fd, uint64_t size);
/* F_GET_SEALS: the memfd's seals, or -errno; is it sealed against writing? */
int ash_seals(int fd);
int ash_write_sealed(int fd);

/* user.c: the caller's memory, never a fault: 0 or -EFAULT */
int ash_copy_in(void *dst, const void *user, size_t n);
int ash_copy_out(void *user, const void *src, size_t n);
long ash_copy_in_str(char *dst, const char *user, size_t max);

/* records.c: a region's record in the shared region */
int ash_lookup(const struct vl_region *r, const struct vl_ident *id, struct rec *out);
int ash_record_once(const struct vl_region *r, const struct vl_stat *st, int fd,
		       const struct vl_ashmem *init, struct rec *out);
int ash_make_record(const struct vl_region *r, const struct vl_stat *st, int fd,
		       const struct vl_ashmem *init, struct rec *out);
int ash_lock_rec(const struct vl_region *r, const struct rec *x, int want_ash);
int ash_is_ash(const struct target *t);
int ash_lock_target(struct target *t);

/* ioctl.c: 1 if fd is a memfd (its record looked up in *t), 0 if not (region entered) */
int ash_identify(int fd, struct target *t);

/* own_regions.c: regions made here */
int ash_fds_holding(const struct vl_ident *ids, int n, int skip, int *held);
int ash_made_alone(int fd, const struct vl_ident *id);

/* close.c: regions let go of here, settled in batches */
void ash_settle(void);
void ash_settle_if_due(uint32_t count);

#endif
