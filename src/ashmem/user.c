/* SPDX-License-Identifier: MIT */
/*
 * user.c - the caller's memory (SET_NAME, GET_NAME, PIN, GET_FILE_ID):
 * read and written with process_vm_readv/writev on ourselves (or, where
 * those are forbidden, through a pipe): a bad pointer gives EFAULT, as in
 * the driver, never a fault in the host program.
 */
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

/* ---- the caller's memory -------------------------------------------------- */

/* Through a pipe, where process_vm_* are not allowed: write(2) says EFAULT. */
static int via_pipe(void *dst, const void *src, size_t n)
{
	int p[2], err = 0;

	if (n > 4096 || vl_raw_pipe2(p, O_CLOEXEC) != 0)
		return -EFAULT;
	if (vl_raw_write(p[1], src, n) != (ssize_t)n || vl_raw_read(p[0], dst, n) != (ssize_t)n)
		err = -EFAULT;
	vl_raw_close(p[0]);
	vl_raw_close(p[1]);
	return err;
}

/* Copy n bytes from the caller's src (write: to the caller's dst). */
static int xfer(void *dst, const void *src, size_t n, int to_user)
{
	struct iovec mine, theirs;
	ssize_t got;

	if (n == 0)
		return 0;
	mine.iov_base = to_user ? (void *)src : dst;
	mine.iov_len = n;
	theirs.iov_base = to_user ? dst : (void *)src;
	theirs.iov_len = n;
	got = to_user ? process_vm_writev(getpid(), &mine, 1, &theirs, 1, 0)
		      : process_vm_readv(getpid(), &mine, 1, &theirs, 1, 0);
	if (got == (ssize_t)n)
		return 0;
	if (got < 0 && (errno == ENOSYS || errno == EPERM))
		return via_pipe(dst, src, n);
	return -EFAULT;
}

int vl_ash_copy_out(void *user, const void *src, size_t n)
{
	return xfer(user, src, n, 1);
}

int ash_copy_in(void *dst, const void *user, size_t n)
{
	return xfer(dst, user, n, 0);
}

int ash_copy_out(void *user, const void *src, size_t n)
{
	return xfer(user, src, n, 1);
}

/*
 * A string of at most max bytes from the caller, page by page, so that a
 * string that ends right before an unmapped page is read whole. Returns the
 * bytes copied (up to the NUL, or max), or -EFAULT.
 */
long ash_copy_in_str(char *dst, const char *user, size_t max)
{
	uint64_t page = ash_page_size();
	size_t done = 0;

	while (done < max) {
		uintptr_t at = (uintptr_t)user + done;
		size_t chunk = (size_t)(page - (at & (page - 1)));

		if (chunk > max - done)
			chunk = max - done;
		if (ash_copy_in(dst + done, (const void *)at, chunk) != 0)
			return -EFAULT;
		if (memchr(dst + done, '\0', chunk) != NULL)
			return (long)(done + strnlen(dst + done, chunk));
		done += chunk;
	}
	return (long)max;
}
