/* SPDX-License-Identifier: MIT */
/*
 * seals.c - a write seal added to a region (DESIGN 7).
 *
 * A memfd sealed against writing (F_SEAL_WRITE, F_SEAL_FUTURE_WRITE) can
 * never be punched: the kernel refuses the hole (EPERM). So none of it may
 * stay volatile: a purge would flag a range purged and then fail to punch
 * it, and the next PIN would say WAS_PURGED of bytes that are intact (the
 * safe direction of DESIGN 4, but a lie the program pays for). So a write
 * seal that a program adds through fcntl to a region this process knows
 * is added under the region's lock, the lock every purge holds from the
 * flag to the punch, and the region's unpurged unpinned ranges are pinned
 * again under it (forgotten: their bytes are intact, they just stop being
 * volatile). Ranges already purged stay so: PIN says WAS_PURGED, truly.
 * Later UNPINs mark nothing (ioctl.c): MARK refuses the sealed memfd.
 *
 * A seal added where this cannot see it (a raw system call, a process
 * without the library), or while another thread's UNPIN is between its
 * check of the seals and its lock, leaves what was unpinned volatile; a
 * purge then flags it without punching, and PIN says WAS_PURGED of intact
 * bytes: never the other way.
 */
#include "internal.h"

#include "reentry.h"
#include "log.h"
#include "purge.h"

#include <string.h>

void vl_ash_seal_begin(int fd, unsigned seals, struct vl_ash_sealing *c)
{
	struct target t;

	memset(c, 0, sizeof(*c));
	/* as mmap asks (mmap.c): no region made or mapped for a memfd that cannot be one */
	if (!(seals & (VL_SEAL_WRITE | VL_SEAL_FUTURE_WRITE)) ||
	    (!vl_region_attached() && !ash_named_region(fd)) || vl_enter() != 0)
		return;
	c->entered = 1;
	if (!ash_identify(fd, &t) || !ash_is_ash(&t) || ash_lock_target(&t) != 0)
		return;
	c->locked = 1;
	c->fd = fd;
	c->r = t.r;
	c->fi = t.x.fi;
	c->gen = t.x.gen;
}

void vl_ash_seal_end(struct vl_ash_sealing *c, int sealed)
{
	if (c->locked) {
		const struct vl_file *f = vl_file_at(c->r, c->fi);
		uint32_t n = f->h.nranges, p = f->h.npurged;

		if (sealed && n > p) {
			int err = vl_drop_file_locked(c->r, c->fi, c->gen, VL_DROP_UNPURGED);

			vl_log("ashmem: fd %d sealed against writing: %u unpinned range%s pinned "
			       "again%s%s", c->fd, n - p, n - p == 1 ? "" : "s",
			       err && err != -EBUSY ? ": " : "",
			       err && err != -EBUSY ? strerror(-err) : "");
		}
		vl_unlock_file(c->r, c->fi);
	}
	if (c->entered)
		vl_leave();
}
