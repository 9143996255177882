/* SPDX-License-Identifier: MIT */
/*
 * args.c - the checks of the arguments of a MARK or UNMARK (DESIGN 5).
 *
 * The kernel's vfs_fallocate checks, in order: offset and length, mode,
 * open for writing, append-only/immutable, FIFO, directory, regular file
 * or block device, and offset + len against the maximum size. Asking the
 * kernel itself for a hole punch at LLONG_MAX + 1 runs every one of those
 * checks and then fails with EFBIG without touching the file: one system
 * call answers rows 4 to 8 of DESIGN 5 exactly as the kernel would,
 * append-only included (a punch is refused on an append-only file). The
 * file must then be on tmpfs, with an identity (ident.c), and a MARK's
 * memfd not sealed against writing.
 */
#include "args.h"

#include "core/compiler.h"
#include "core/fault.h"

#include "sys.h"
#include "volatile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/falloc.h>

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

#define MODE_VOLATILE (FALLOC_FL_MARK_VOLATILE | FALLOC_FL_UNMARK_VOLATILE)

/* EBADF or EINVAL for arguments fallocate refuses */
static VL_COLD int bad_arguments(int fd)
{
	/* an fd that is not open comes first, as in the kernel, for
	 * which an O_PATH fd is not open either */
	int fl = VL_SYSCALL("getfl", vl_raw_fcntl(fd, F_GETFL));

	if (fl < 0 || (fl & O_PATH))
		return -EBADF;
	return -EINVAL;
}

/*
 * A MARK of a memfd not known never to be write-sealed: 0, or -EPERM if
 * it is. Only a memfd can be sealed, and a memfd has no name.
 */
static VL_COLD int seals_allow(int fd, const struct vl_stat *st)
{
	int seals;

	if (vl_ident_never_write_sealed(st))
		return 0;
	seals = VL_SYSCALL("get seals", vl_raw_fcntl(fd, F_GET_SEALS));
	if (seals > 0 && (seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)))
		return -EPERM;
	if (seals > 0 && (seals & F_SEAL_SEAL))
		vl_ident_note_never_write_sealed(st);
	return 0;
}

int vl_check_args(int fd, int mode, int64_t off, int64_t len, struct vl_stat *st)
{
	int mark = (mode & FALLOC_FL_MARK_VOLATILE) != 0;
	int unmark = (mode & FALLOC_FL_UNMARK_VOLATILE) != 0;
	int others = mode & ~(MODE_VOLATILE | FALLOC_FL_KEEP_SIZE);
	int err, known;

	if (off < 0 || len <= 0 || (mark && unmark) || others)
		return bad_arguments(fd);
	err = vl_sys_fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, LLONG_MAX, 1);
	if (err != -EFBIG)
		return err == 0 ? -EIO : err;
	if (off > LLONG_MAX - len)
		return -EFBIG; /* tmpfs's maximum size is LLONG_MAX */
	known = vl_tmpfs_identity(fd, st);
	if (known < 0)
		return known;
	if (mark && st->nlink == 0 && known != VL_NEVER_SEALED && (err = seals_allow(fd, st)) != 0)
		return err;
	return mark ? VL_OP_MARK : VL_OP_UNMARK;
}
