/* SPDX-License-Identifier: MIT */
/*
 * own_table.h - the ashmem regions this process made, its fds on them,
 * and those of them that may have died.
 *
 * A region made here may be forgotten soon after its last fd here is
 * closed only if nothing else can hold its memfd: no other fd of this
 * process on it, no child that may have inherited it, never sent over a
 * socket, nothing here mapping it. The table answers the first three in
 * time proportional to this process's region fds, at any fd number; a
 * region that passes waits on a short list of the dying, which close.c
 * settles in batches: one look at /proc/self/fd (for an fd the table
 * cannot see: one opened through /proc by glibc itself, or taken with
 * pidfd_getfd) and at the maps serves them all. The table only ever
 * errs towards "someone else may hold it": the record is then left to
 * the purges, which find it gone.
 *
 * The epoch goes up whenever a holder may exist that the table does not
 * see: a child of any kind is made (it inherits every fd), an fd on a
 * region arrives over a socket or is reopened through /proc (it may be a
 * twin of one made here), or an update had to be skipped (a signal
 * handler that interrupted the table). An entry made in an older epoch is
 * never "alone".
 */
#ifndef VL_ASHMEM_OWN_TABLE_H
#define VL_ASHMEM_OWN_TABLE_H

#include "core/layout.h"

#include <stdint.h>

/* An fd's entry. */
struct vl_here {
	int fd1; /* fd + 1; 0: a free entry */
	uint32_t epoch;
	uint8_t shared, mapped;
	struct vl_ident id;
};

/* A region that may have died here: its last fd here was closed in `epoch`. */
struct vl_here_death {
	struct vl_ident id;
	uint32_t epoch;
	int mapped; /* mapped here once: look at the maps before saying it is gone */
};

/* Something may hold a region made here that the table cannot see. One atomic add. */
void vl_here_unsure(void);
uint32_t vl_here_epoch(void);
/* A child is being made (begin), or was (end; child: in the child). */
void vl_here_fork_begin(void);
void vl_here_fork_end(int child);
/* Is a region that died in `epoch` still certainly this process's alone? */
int vl_here_settled(uint32_t epoch);

/* A region was made here on fd; epoch: read before its memfd was made. */
void vl_here_made(int fd, const struct vl_ident *id, uint32_t epoch);
/* `to` became a duplicate of `from` (dup, dup2, dup3, F_DUPFD). */
void vl_here_dup(int from, int to);
/* fd was sent over a socket: its region has a holder elsewhere now. */
void vl_here_sent(int fd);
/* id (a region made here) was mapped here. */
void vl_here_mapped(const struct vl_ident *id);

/*
 * fd is about to be closed (or replaced by dup2/dup3): take its entry out
 * now, while the number is still ours (after the close, another thread
 * may get it). 1 and *e if it had one. vl_here_put gives it back if the
 * fd stays open after all.
 */
int vl_here_take(int fd, struct vl_here *e);
/* The same, leaving it in. */
int vl_here_peek(int fd, struct vl_here *e);
void vl_here_put(const struct vl_here *e);
/* Is fd's entry (taken or not) the region's last here? (no other entry, this epoch, not sent) */
int vl_here_alone(const struct vl_here *e);
/* Does an fd of this process on id's region, as far as the table knows, remain? */
int vl_here_held(const struct vl_ident *id);

/*
 * The dying: e (taken, alone) joins them; returns how many there are, or
 * -1 if it could not (the list is full: left to the purges).
 */
int vl_here_dying(const struct vl_here *e);
/* How many are dying now: one load. */
extern uint32_t vl_here_ndying;
/* Move up to max of them out, to settle; returns how many. */
int vl_here_deaths(struct vl_here_death *out, int max);
/* d is not settled yet (still mapped here): back to the list. */
void vl_here_still_dying(const struct vl_here_death *d);

#endif
