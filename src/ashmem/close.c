/* SPDX-License-Identifier: MIT */
/*
 * close.c - regions this process let go of: close, and their settling.
 */
#include "internal.h"

#include "reentry.h"
#include "log.h"
#include "purge.h"
#include "file_route.h"
#include "this_process.h"

#include <errno.h>
#include <string.h>

/* ---- regions that may have died here: settled in batches ------------------- */

/*
 * A region made here whose last fd here was closed, in the epoch it was
 * made in, never sent (own_table.h), waits among the dying. Settling
 * them takes one look at /proc/self/fd (an fd the table cannot see keeps
 * its region) and, for those mapped here once, at the maps: a region
 * neither holds is gone, and its record (and its ranges: there is nothing
 * left to punch) is forgotten at once, instead of waiting for a purge to
 * find it gone; one still mapped waits for the next settling. They are
 * settled when SETTLE_AT of them wait, when a new region finds the table
 * full, at most once a second at a close or munmap, and at exit: so a
 * close costs the same with 10 or 1,000 fds open, the look at every fd
 * shared by many regions.
 */
#define SETTLE_AT 128
#define SETTLE_EVERY_MS 1000

static uint64_t settled_ms;

/* Forget the record of a region made here that nothing here holds any more. */
static void forget_dead(const struct vl_ident *id)
{
	struct target t;
	int err;

	memset(&t, 0, sizeof(t));
	t.fd = -1;
	t.st.id = *id;
	if (vl_region_get(&t.r) != 0 || ash_lookup(t.r, &t.st.id, &t.x) != 0 || !ash_is_ash(&t))
		return;
	/* under the file's lock, it checks the record is still that one (gen) */
	err = vl_drop_file(t.r, t.x.fi, t.x.gen, VL_DROP_UNLESS_PURGED);
	vl_log("ashmem: a region made here has no fd or mapping left: its record %s%s",
	       err ? "stays: " : "is forgotten", err ? strerror(-err) : "");
}

/* Settle the dying (inside the library). */
void ash_settle(void)
{
	struct vl_here_death d[SETTLE_AT];
	struct vl_ident ids[SETTLE_AT];
	int held[SETTLE_AT], n, k;

	__atomic_store_n(&settled_ms, vl_now_ms(), __ATOMIC_RELAXED);
	while ((n = vl_here_deaths(d, SETTLE_AT)) > 0) {
		/*
		 * Its last fd was closed alone (no child had it then). A child made
		 * since may have its mapping: one mapped here is left to the purges.
		 */
		k = 0;
		for (int i = 0; i < n; i++)
			if (!d[i].mapped || vl_here_settled(d[i].epoch))
				d[k++] = d[i];
		for (int i = 0; i < k; i++) {
			ids[i] = d[i].id;
			held[i] = 0;
		}
		if (k == 0 || ash_fds_holding(ids, k, -1, held) != 0)
			continue; /* no /proc: left to the purges */
		for (int i = 0; i < k; i++) {
			uint64_t lo, hi;

			if (held[i] || vl_here_held(&ids[i]))
				continue; /* an fd on it again: its own close decides */
			if (d[i].mapped && vl_mapped_span(&ids[i], &lo, &hi)) {
				vl_here_still_dying(&d[i]);
				continue;
			}
			forget_dead(&ids[i]);
		}
		if (n < SETTLE_AT)
			break;
	}
}

/* Settle now if some wait and it is time (count: how many wait, or 0 to ask). */
void ash_settle_if_due(uint32_t count)
{
	uint64_t was = __atomic_load_n(&settled_ms, __ATOMIC_RELAXED);

	if (count == 0 || (count < SETTLE_AT && vl_now_ms() - was < SETTLE_EVERY_MS))
		return;
	if (vl_enter() != 0)
		return;
	ash_settle();
	vl_leave();
}

void vl_ash_munmapped(void)
{
	ash_settle_if_due(__atomic_load_n(&vl_here_ndying, __ATOMIC_RELAXED));
}

/* At exit: the regions this process let go of are forgotten before it goes. */
__attribute__((destructor)) static void settle_at_exit(void)
{
	int saved = errno;

	if (__atomic_load_n(&vl_here_ndying, __ATOMIC_RELAXED) != 0 && !vl_borrowed() &&
	    vl_enter() == 0) {
		ash_settle();
		vl_leave();
	}
	errno = saved;
}

/* ---- close ---------------------------------------------------------------- */

/*
 * close() of a flagged fd (also dup2/dup3 over one). Costs a getpid and a
 * look at the table of regions made here; for a region made here, an
 * fstat; for its last fd here, a place among the dying (above).
 *
 * A process that shares our memory without being us (a vfork child that
 * closes its fds before exec) changes nothing here: the bits and the
 * table are its parent's, and the parent still holds the fd.
 */
void vl_ash_close_begin(int fd, struct vl_ash_closing *c)
{
	struct vl_stat st;

	memset(c, 0, sizeof(*c));
	if (vl_borrowed()) {
		c->borrowed = 1;
		return;
	}
	c->flagged = vl_ash_flagged(fd);
	c->dev = ash_bit(ash_devbits, fd);
	/* before the close: the number may be reused by another thread at once after */
	vl_ash_unflag(fd);
	c->taken = vl_here_take(fd, &c->entry);
	/* an entry for a number closed unseen (close_range, a raw close) is no one's */
	if (c->taken && (vl_sys_fstat(fd, &st) != 0 || !vl_ident_same(&st.id, &c->entry.id)))
		c->stale = 1;
}

void vl_ash_close_end(int fd, const struct vl_ash_closing *c, int closed)
{
	int n;

	if (c->borrowed)
		return;
	if (!closed) {
		/* the fd was not touched (dup2 or dup3 failed): follow it as before */
		if (c->flagged)
			vl_ash_flag(fd);
		if (c->dev)
			ash_set_bit(ash_devbits, fd);
		if (c->taken && !c->stale)
			vl_here_put(&c->entry);
		return;
	}
	if (!c->taken || c->stale)
		return;
	n = vl_here_dying(&c->entry);
	if (n > 0)
		ash_settle_if_due((uint32_t)n);
}
