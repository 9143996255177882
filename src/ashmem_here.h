/*
 * ashmem_here.h - the ashmem regions this process made, and its fds on
 * them.
 *
 * A region made here may be forgotten the moment its fd is closed
 * (ashmem.c, vl_ash_close_begin) only if nothing else can hold its memfd:
 * no other fd of this process on it, no child that may have inherited it,
 * never sent over a socket. This table answers that in time proportional
 * to this process's region fds, at any fd number, instead of looking at
 * every open fd. It only ever errs towards "someone else may hold it":
 * the record is then left to the purges, which find it gone.
 *
 * The epoch goes up whenever a holder may exist that the table does not
 * see: a child of any kind is made (it inherits every fd), an fd on a
 * region arrives over a socket or is reopened through /proc (it may be a
 * twin of one made here), the table is full, or an update had to be
 * skipped (a signal handler that interrupted the library). An entry made
 * in an older epoch is never "alone".
 */
#ifndef VL_ASHMEM_HERE_H
#define VL_ASHMEM_HERE_H

#include "core/layout.h"

#include <stdint.h>

/* A region was made here, on fd. */
void vl_here_made(int fd, const struct vl_ident *id);
/* `to` became a duplicate of `from` (dup, dup2, dup3, F_DUPFD). */
void vl_here_dup(int from, int to);
/* fd was sent over a socket: its region has a holder elsewhere now. */
void vl_here_sent(int fd);
/* id (a region made here) was mapped here. */
void vl_here_mapped(const struct vl_ident *id);
/* Something may hold a region made here that this table cannot see. One atomic add. */
void vl_here_unsure(void);
uint32_t vl_here_epoch(void);

/*
 * fd, found to be on id's file, is about to be closed. 1 if it is the
 * last holder of a region made here in this epoch that was never sent
 * and has no other fd here; *mapped then says whether it was ever
 * mapped here (the caller looks at the maps), *epoch its epoch.
 */
int vl_here_last(int fd, const struct vl_ident *id, int *mapped, uint32_t *epoch);
/* fd was closed (or replaced by dup2/dup3): forget it. */
void vl_here_closed(int fd);
/* Does an fd of this process on id's region, made here, remain? */
int vl_here_held(const struct vl_ident *id);

#endif
