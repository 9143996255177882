/* SPDX-License-Identifier: MIT */
/*
 * inode_gone.h - is a file gone? Asked of the kernel, by the inode's file handle.
 *
 * A purge proves a file gone from /proc (procs.c): no process of the user
 * holds or maps it. That proof needs every process of the user to be
 * looked into, and where one cannot be (a non-dumpable process, the init
 * of some sandboxes for root) it is never had. The kernel can say it
 * another way: a tmpfs or memfd file's handle names its inode (number
 * and generation), and opening the handle finds that inode if it exists
 * and fails with ESTALE if it does not. An inode that no longer exists
 * cannot come back: a new one with its number has another generation.
 */
#ifndef VL_INODE_GONE_H
#define VL_INODE_GONE_H

#include "core/layout.h"

/*
 * What the kernel says of the file with identity id:
 *   1        certainly gone (ESTALE, from a mount of its own file system);
 *   0        its inode exists;
 *   -errno   cannot tell: no CAP_DAC_READ_SEARCH (open_by_handle_at needs
 *            it), no mount of its tmpfs reachable without blocking, a
 *            seccomp filter, or any other error.
 * Never blocks, never opens anything on another file system, opens no
 * file for I/O (an O_PATH fd, closed at once).
 */
int vl_gone_by_handle(const struct vl_ident *id);

#endif
