/* SPDX-License-Identifier: MIT */
/*
 * fds.c - following region fds around this process: the per-fd bits the
 * hooks read with one load, a memfd named as regions are, fds received,
 * reopened, duplicated, and those inherited across exec.
 */
#include "internal.h"

#include "this_process.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint64_t vl_ash_fdbits[VL_ASH_FDS / 64];
/* fds known to be regions opened as /dev/ashmem: what fstat answers when it cannot look */
uint64_t ash_devbits[VL_ASH_FDS / 64];

void ash_set_bit(uint64_t *bits, int fd)
{
	if (fd >= 0 && fd < VL_ASH_FDS)
		__atomic_fetch_or(&bits[fd / 64], 1ull << (fd % 64), __ATOMIC_RELAXED);
}

void ash_clear_bit(uint64_t *bits, int fd)
{
	if (fd >= 0 && fd < VL_ASH_FDS)
		__atomic_fetch_and(&bits[fd / 64], ~(1ull << (fd % 64)), __ATOMIC_RELAXED);
}

int ash_bit(const uint64_t *bits, int fd)
{
	return fd >= 0 && fd < VL_ASH_FDS &&
	       ((__atomic_load_n(&bits[fd / 64], __ATOMIC_RELAXED) >> (fd % 64)) & 1u);
}

void vl_ash_flag(int fd)
{
	ash_set_bit(vl_ash_fdbits, fd);
}

void vl_ash_unflag(int fd)
{
	ash_clear_bit(vl_ash_fdbits, fd);
	ash_clear_bit(ash_devbits, fd);
}

/* The prefix of a region's memfd as /proc/self/fd shows it (vl_ash_memfd_name). */
static const char region_link[] = "/memfd:" VL_ASH_NAME_DEF;

static int is_region_link(const char *link, long n)
{
	long pre = (long)sizeof(region_link) - 1;

	return n >= pre && memcmp(link, region_link, (size_t)pre) == 0 &&
	       (n == pre || link[pre] == '/' || link[pre] == ' ');
}

/*
 * Is fd a memfd named as the emulation names regions? A readlink, no
 * lock, no allocation: safe in a signal handler that interrupted the
 * library.
 */
long ash_fd_link(int fd, char *buf, size_t size)
{
	char path[32] = "/proc/self/fd/", digits[12];
	int n = 0, at = 14, saved = errno;
	long got;

	if (fd < 0)
		return -1;
	do
		digits[n++] = (char)('0' + fd % 10);
	while ((fd /= 10) != 0);
	while (n > 0)
		path[at++] = digits[--n];
	path[at] = '\0';
	got = VL_SYSCALL("readlink fd", vl_raw_readlinkat(AT_FDCWD, path, buf, size));
	errno = saved;
	return got;
}

int ash_named_region(int fd)
{
	char link[sizeof(region_link) + 1];

	return is_region_link(link, ash_fd_link(fd, link, sizeof(link)));
}

void vl_ash_received(int fd)
{
	if (ash_named_region(fd)) {
		vl_ash_flag(fd);
		vl_here_unsure(); /* it may be a twin of one made here, come back */
	} else if (vl_region_attached()) {
		vl_ash_flag(fd); /* a plain memfd given a prot mask: cheap to look, now */
	}
}

void vl_ash_reopened(int fd)
{
	if (ash_named_region(fd)) {
		vl_ash_flag(fd);
		vl_here_unsure();
	}
}

void vl_ash_dup(int from, int to)
{
	if (vl_borrowed())
		return; /* a vfork child's dup is its own: the table is its parent's */
	vl_ash_flag(to);
	if (ash_bit(ash_devbits, from))
		ash_set_bit(ash_devbits, to);
	else
		ash_clear_bit(ash_devbits, to);
	vl_here_dup(from, to);
}

/*
 * A readlink per open fd, once, at load: a region fd inherited across exec
 * is a memfd named "dev/ashmem..." (vl_ash_memfd_name), so the gates see it.
 */
void vl_ash_seed(void)
{
	char link[sizeof(region_link) + 1];
	int saved = errno;
	struct vl_dirbuf d = { .fd = VL_SYSCALL("open fd dir",
						vl_raw_open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) };
	struct dirent64 *e;

	while (d.fd >= 0 && (e = vl_next_dirent(&d)) != NULL) {
		int fd;

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || (fd = atoi(e->d_name)) == d.fd)
			continue;
		if (is_region_link(link, VL_SYSCALL("readlink fd",
						    vl_raw_readlinkat(d.fd, e->d_name, link, sizeof(link)))))
			vl_ash_flag(fd);
	}
	if (d.fd >= 0)
		vl_raw_close(d.fd);
	errno = saved;
}
