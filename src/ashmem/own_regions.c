/* SPDX-License-Identifier: MIT */
/*
 * own_regions.c - regions made in this process: a new region, and whether one is
 * still this process's alone (for SET_NAME and for forgetting it).
 */
#include "internal.h"

#include "reentry.h"
#include "log.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

/* ---- regions made in this process, for SET_NAME and close ---------------- */

void vl_ash_spawning(int begin, int child)
{
	if (begin)
		vl_here_fork_begin();
	else
		vl_here_fork_end(child);
}

void vl_ash_sent(int fd)
{
	vl_here_sent(fd);
}

/*
 * Which of ids[0..n) does an open fd of this process (other than skip)
 * refer to? held[i] set for those. A getdents of /proc/self/fd and an
 * fstat per open fd: the one look that sees fds the table cannot (opened
 * through /proc by glibc's own fopen, taken with pidfd_getfd). -1 if
 * /proc/self/fd cannot be read (then every one counts as held).
 */
int ash_fds_holding(const struct vl_ident *ids, int n, int skip, int *held)
{
	struct vl_dirbuf d = { .fd = VL_SYSCALL("open fd dir",
						vl_raw_open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) };
	struct dirent64 *e;

	if (d.fd < 0)
		return -1;
	while ((e = vl_next_dirent(&d)) != NULL) {
		struct vl_stat st;
		struct stat sb;
		int fd, maybe = 0;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		fd = atoi(e->d_name);
		/* a plain fstat first: the whole identity only for a memfd with one's number */
		if (fd == skip || fd == d.fd || VL_SYSCALL("fstat fd",
							   vl_raw_fstat(fd, &sb)) != 0 || !S_ISREG(sb.st_mode) ||
		    sb.st_nlink != 0)
			continue;
		for (int i = 0; i < n && !maybe; i++)
			maybe = (uint64_t)sb.st_ino == ids[i].ino && (uint64_t)sb.st_dev == ids[i].dev;
		if (!maybe || vl_sys_fstat(fd, &st) != 0)
			continue;
		for (int i = 0; i < n; i++)
			if (vl_ident_same(&st.id, &ids[i]))
				held[i] = 1;
	}
	vl_raw_close(d.fd);
	return d.len < 0 ? -1 : 0;
}

/*
 * Is fd, on the memfd id, the only holder of a region made here? (no
 * child made since, not sent, no other fd on it here: the table, then a
 * look at every open fd)
 */
int ash_made_alone(int fd, const struct vl_ident *id)
{
	struct vl_here e;
	int held = 0;

	return vl_here_peek(fd, &e) && vl_ident_same(&e.id, id) && vl_here_alone(&e) &&
	       ash_fds_holding(id, 1, fd, &held) == 0 && !held;
}

int vl_ash_new(const char *name, uint64_t size, int dev, int cloexec)
{
	char mname[VL_MEMFD_NAME_MAX + 1];
	struct vl_ashmem init;
	struct vl_region *r;
	struct vl_stat st;
	struct rec x;
	int fd, err;

	uint32_t epoch = vl_here_epoch(); /* before the memfd: a fork from now on is after */

	vl_ash_memfd_name(name, mname, sizeof(mname));
	/*
	 * ashmem_create_region's memfd takes seals, as libcutils' memfd
	 * backend makes it (a program may add F_SEAL_FUTURE_WRITE itself);
	 * one opened as /dev/ashmem takes none, as the driver's file took
	 * none (F_SEAL_SEAL from the start: F_ADD_SEALS says EPERM).
	 */
	fd = ash_raw_memfd(mname, (cloexec ? MFD_CLOEXEC : 0) | (dev ? 0 : MFD_ALLOW_SEALING));
	if (fd < 0)
		return fd;
	if (size > 0 && (err = ash_raw_ftruncate(fd, size)) != 0) {
		vl_raw_close(fd);
		return err;
	}
	vl_ash_init(&init, dev ? VL_ASH_DEV : 0);
	init.size = size;
	if (name != NULL)
		vl_ash_name_set(&init, name, strnlen(name, VL_ASH_NAME_LEN));
	err = vl_enter();
	if (err == 0) {
		err = vl_region_get(&r);
		if (err == 0)
			err = vl_sys_fstat(fd, &st);
		if (err == 0)
			err = ash_make_record(r, &st, fd, &init, &x);
		vl_leave();
	}
	vl_log("ashmem: new region fd %d \"%s\" size %llu%s%s", fd, mname,
	       (unsigned long long)size, err ? ": " : "", err ? strerror(-err) : "");
	if (err) {
		if (dev) { /* no device without its state */
			vl_raw_close(fd);
			return err;
		}
		return fd; /* a plain memfd: pin and unpin will say why not */
	}
	vl_ash_flag(fd);
	if (dev)
		ash_set_bit(ash_devbits, fd);
	vl_here_made(fd, &st.id, epoch);
	return fd;
}
