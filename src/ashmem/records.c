/* SPDX-License-Identifier: MIT */
/*
 * records.c - a region's record in the shared region: found, made, locked
 * (the locks' order: core/layout.h, struct vl_lock).
 */
#include "internal.h"

#include "evict.h"
#include "this_process.h"
#include "core/pool.h"

#include <errno.h>
#include <string.h>

/* ---- records -------------------------------------------------------------- */

int ash_lookup(const struct vl_region *r, const struct vl_ident *id, struct rec *out)
{
	int err = vl_lock_region(r);

	memset(out, 0, sizeof(*out));
	if (err)
		return err;
	err = vl_file_lookup(r, id, &out->fi);
	if (err == 0 && out->fi != VL_NIL) {
		const struct vl_file *f = vl_file_at(r, out->fi);

		out->gen = f->h.gen;
		out->flags = f->h.flags;
		out->ashflags = (f->h.flags & VL_FF_ASHMEM) ? f->ash.flags : 0;
	}
	vl_unlock_region(r);
	return err;
}

static void note_holder(struct vl_file *f, int fd)
{
	int32_t self = vl_self();
	int slot = 0;

	for (int i = 0; i < VL_HOLDERS; i++) {
		if (f->h.holders[i].pid == self || f->h.holders[i].pid == 0) {
			slot = i;
			break;
		}
	}
	f->h.holders[slot].pid = self;
	f->h.holders[slot].fd = fd;
}

/*
 * The record of st's file, made an ashmem record with state *init if it is
 * not one yet (a memfd may have a record already, from fallocate).
 */
int ash_record_once(const struct vl_region *r, const struct vl_stat *st, int fd,
		       const struct vl_ashmem *init, struct rec *out)
{
	struct vl_file *f;
	uint32_t fi;
	int err = vl_lock_region(r);

	if (err)
		return err;
	err = vl_file_lookup(r, &st->id, &fi);
	if (err == 0 && fi == VL_NIL)
		err = vl_file_new(r, &st->id, &fi);
	if (err == 0) {
		f = vl_file_at(r, fi);
		if (!(f->h.flags & VL_FF_ASHMEM)) {
			f->h.flags |= VL_FF_ASHMEM | VL_FF_ANON;
			f->h.path_len = 0;
			f->ash = *init;
		}
		note_holder(f, fd);
		out->fi = fi;
		out->gen = f->h.gen;
		out->flags = f->h.flags;
		out->ashflags = f->ash.flags;
	}
	vl_unlock_region(r);
	return err;
}

/* The same; a full table first makes room (evict.c). Call with no lock held. */
/*
 * The same; a full table first lets go of the regions this process let
 * go of (they may be waiting to be settled), then makes room (evict.c).
 * Call inside the library, with no lock held.
 */
int ash_make_record(const struct vl_region *r, const struct vl_stat *st, int fd,
		       const struct vl_ashmem *init, struct rec *out)
{
	int err = ash_record_once(r, st, fd, init, out);

	if (err == -ENOMEM && __atomic_load_n(&vl_here_ndying, __ATOMIC_RELAXED) != 0) {
		ash_settle();
		err = ash_record_once(r, st, fd, init, out);
	}
	for (int tries = 0; err == -ENOMEM && tries < 2 && vl_evict(r) > 0; tries++)
		err = ash_record_once(r, st, fd, init, out);
	return err;
}

/* Lock the record found; -ESTALE if it is another file's now. */
int ash_lock_rec(const struct vl_region *r, const struct rec *x, int want_ash)
{
	struct vl_file *f = vl_file_at(r, x->fi);
	int err = vl_lock_file(r, x->fi);

	if (err)
		return err;
	if (f->h.gen != x->gen || f->h.state != VL_FILE_LIVE || !vl_file_ok(r, f)) {
		vl_unlock_file(r, x->fi);
		return -ESTALE;
	}
	if (want_ash && (!(f->h.flags & VL_FF_ASHMEM) || !vl_ash_state_ok(&f->ash))) {
		vl_unlock_file(r, x->fi);
		return -EUCLEAN;
	}
	return 0;
}

int ash_is_ash(const struct target *t)
{
	return t->region_err == 0 && t->x.fi != VL_NIL && (t->x.flags & VL_FF_ASHMEM);
}

/* Lock the target's ashmem record, looking it up again if it moved. */
int ash_lock_target(struct target *t)
{
	for (int tries = 0; tries < 8; tries++) {
		int err = ash_lock_rec(t->r, &t->x, 1);

		if (err != -ESTALE)
			return err;
		err = ash_lookup(t->r, &t->st.id, &t->x);
		if (err)
			return err;
		if (!ash_is_ash(t))
			return -ESTALE;
	}
	return -EAGAIN;
}
