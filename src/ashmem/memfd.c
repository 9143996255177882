/* SPDX-License-Identifier: MIT */
/*
 * memfd.c - the memfd underneath a region, by system calls that never come
 * back into the shim.
 */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

/* ---- system calls that must not come back into the shim ---------------- */

int ash_raw_memfd(const char *name, unsigned flags)
{
	return VL_SYSCALL("memfd_create", vl_raw_memfd_create(name, flags));
}

int ash_raw_ftruncate(int fd, uint64_t size)
{
	if (size > (uint64_t)LLONG_MAX)
		return -EINVAL;
	return VL_SYSCALL("ftruncate memfd", vl_raw_ftruncate(fd, (off_t)size));
}

int ash_seals(int fd)
{
	return VL_SYSCALL("get seals", vl_raw_fcntl(fd, F_GET_SEALS));
}

int ash_write_sealed(int fd)
{
	int seals = ash_seals(fd);

	return seals > 0 && ((unsigned)seals & (VL_SEAL_WRITE | VL_SEAL_FUTURE_WRITE)) != 0;
}

int ash_file_size(int fd, uint64_t *size)
{
	struct stat st;
	int err = VL_SYSCALL("fstat memfd", vl_raw_fstat(fd, &st));

	if (err < 0)
		return err;
	*size = (uint64_t)st.st_size;
	return 0;
}

/* "/memfd:NAME (deleted)" -> NAME; 0, or -1 if fd is not a memfd. */
int ash_memfd_name(int fd, char *name, size_t size)
{
	static const char pre[] = "/memfd:", del[] = " (deleted)";
	char buf[PATH_MAX];
	long n = ash_fd_link(fd, buf, sizeof(buf) - 1);

	if (n < (long)sizeof(pre) - 1 || memcmp(buf, pre, sizeof(pre) - 1) != 0)
		return -1;
	buf[n] = '\0';
	if ((size_t)n >= sizeof(pre) - 1 + sizeof(del) - 1 &&
	    strcmp(buf + n - (sizeof(del) - 1), del) == 0)
		buf[n - (sizeof(del) - 1)] = '\0';
	if (name != NULL && size > 0) {
		size_t len = strlen(buf + sizeof(pre) - 1);

		if (len >= size)
			len = size - 1;
		memcpy(name, buf + sizeof(pre) - 1, len);
		name[len] = '\0';
	}
	return 0;
}

uint64_t ash_page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 ? (uint64_t)p : 4096;
}

/*
 * The memfd always has the region's size, from SET_SIZE on (the driver
 * made its file at the first mmap): so a mapping made where no gate saw it
 * (an fd this process did not know) cannot fault past the end. It only
 * shrinks when it holds no data (written before the first mmap, which the
 * driver refused): those bytes are not ours to drop (DESIGN 4).
 */
int ash_apply_size(int fd, uint64_t size)
{
	struct stat st;
	int err = VL_SYSCALL("fstat memfd", vl_raw_fstat(fd, &st));

	if (err != 0)
		return err;
	if (size == (uint64_t)st.st_size || (size < (uint64_t)st.st_size && st.st_blocks != 0))
		return 0;
	return ash_raw_ftruncate(fd, size);
}
