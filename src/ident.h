/* SPDX-License-Identifier: MIT */
/*
 * ident.h - a file's identity (DESIGN 14): what fd or a path refers to,
 * derived, remembered and compared in ident.c and nowhere else. The type
 * and the one comparison, vl_ident_same, are core/layout.h's.
 */
#ifndef VL_IDENT_H
#define VL_IDENT_H

#include "core/layout.h"

#include <stdint.h>

/*
 * What fd (or path, at dirfd) refers to, and its identity. vl_sys_statx:
 * one statx, no generation (id.igen 0); vl_sys_igen then completes the
 * identity of a tmpfs or memfd file (-EOPNOTSUPP for another file
 * system's). vl_sys_fstat: both, for a regular file; a file whose
 * generation cannot be had keeps 0, and no record names it. All -errno.
 */
struct vl_stat {
	struct vl_ident id;
	uint32_t mode;
	uint32_t nlink;
	uint64_t mnt_id;
	int mnt_id_unique;
};
int vl_sys_statx(int fd, struct vl_stat *st);
int vl_sys_igen(int fd, struct vl_stat *st);
int vl_sys_fstat(int fd, struct vl_stat *st);
int vl_sys_stat_at(int dirfd, const char *path, int follow, struct vl_stat *st);
/* The two halves of vl_sys_stat_at, for a caller that compares between them. */
int vl_sys_statx_at(int dirfd, const char *path, int follow, struct vl_stat *st);
int vl_sys_igen_at(int dirfd, const char *path, int follow, struct vl_stat *st);

/*
 * The file handle shmem (tmpfs, memfd) gives a file: type 1, three
 * words: generation, inode number low and high. vl_sys_igen reads the
 * generation from it; vl_ident_handle makes it back from an identity
 * (for open_by_handle_at, inode_gone.c).
 */
#define VL_SHMEM_HANDLE_TYPE 1
#define VL_SHMEM_HANDLE_WORDS 3
struct file_handle;
/* h has room for VL_SHMEM_HANDLE_WORDS words of f_handle */
void vl_ident_handle(const struct vl_ident *id, struct file_handle *h);

/* Is fd a regular tmpfs or memfd file? (the 2012 mode aliases) 1, 0, -errno */
int vl_is_tmpfs_file(int fd);

/*
 * The identity of the file of a MARK or UNMARK (args.c): 0 with *st
 * filled in, generation included, or VL_NEVER_SEALED: the same, and the
 * file is known without asking never to be sealed against writing;
 * -EOPNOTSUPP if it is not a regular tmpfs or memfd file, or if its
 * generation cannot be had (no identity to trust); or -errno. Cheapest
 * for the file this thread asked about last: one statx.
 */
#define VL_NEVER_SEALED 1
int vl_tmpfs_identity(int fd, struct vl_stat *st);

/*
 * "This file can never be sealed against writing" (its seals include
 * F_SEAL_SEAL and neither write seal: seals are only ever added, and
 * F_SEAL_SEAL forbids adding any), for the file vl_tmpfs_identity just
 * found st to be: asked of the cache, and noted once learnt. Without a
 * birth time the cache keeps nothing.
 */
int vl_ident_never_write_sealed(const struct vl_stat *st);
void vl_ident_note_never_write_sealed(const struct vl_stat *st);

#endif
