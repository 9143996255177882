/*
 * ops.h - MARK and UNMARK (DESIGN 3), and the whole volatile
 * fallocate as the shim and the command call it.
 */
#ifndef VL_OPS_H
#define VL_OPS_H

#include <stdint.h>

/*
 * fallocate(fd, mode, off, len) where mode carries a volatile bit:
 * checks (DESIGN 5), then MARK (returns 0) or UNMARK (returns 0
 * intact, 1 purged); -errno on error. From a signal handler that
 * interrupted this thread inside it: -EINTR.
 */
int vl_volatile_fallocate(int fd, int mode, int64_t off, int64_t len);

#endif
