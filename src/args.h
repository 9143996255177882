/* SPDX-License-Identifier: MIT */
/*
 * args.h - the checks of DESIGN 5, in the kernel's order, of the
 * arguments of a MARK or UNMARK.
 */
#ifndef VL_ARGS_H
#define VL_ARGS_H

#include "ident.h"

#include <stdint.h>

enum vl_op { VL_OP_MARK = 1, VL_OP_UNMARK = 2 };

/*
 * Check a MARK or UNMARK (mode carries FALLOC_FL_MARK_VOLATILE or
 * FALLOC_FL_UNMARK_VOLATILE, possibly with other bits) of [off, off+len)
 * on fd. Returns the operation (VL_OP_*) and fills *st with the file's
 * identity (ident.c), or -errno.
 * Costs two system calls when all is well: three the first time this
 * process sees the file (its file handle, ident.c), and on kernels without
 * unique mount ids every time; one more for the first MARK on a memfd
 * that may still be sealed, and for every MARK on one that may be sealed
 * later.
 */
int vl_check_args(int fd, int mode, int64_t off, int64_t len, struct vl_stat *st);

#endif
