/* SPDX-License-Identifier: MIT */
/*
 * sys.c - system call wrappers (see sys.h).
 */
#include "sys.h"

#include "core/fault.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int vl_each_line(const char *path, int (*fn)(void *arg, char *line), void *arg)
{
	char buf[4096];
	size_t have = 0;
	int fd = VL_SYSCALL("open proc file", vl_raw_open(path, O_RDONLY | O_CLOEXEC));
	int skipping = 0, stop = 0;

	if (fd < 0)
		return fd;
	while (stop == 0) {
		ssize_t n = VL_SYSCALL("read proc file",
				       vl_raw_read(fd, buf + have, sizeof(buf) - 1 - have));
		char *line = buf, *nl;

		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		if (skipping) { /* the rest of an overlong line */
			nl = strchr(buf, '\n');
			if (nl == NULL) {
				have = 0;
				continue;
			}
			skipping = 0;
			line = nl + 1;
		}
		for (; stop == 0 && (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
			*nl = '\0';
			stop = fn(arg, line);
		}
		have = (size_t)(buf + have - line);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1) {
			have = 0;
			skipping = 1;
		}
	}
	vl_raw_close(fd);
	return stop;
}

int vl_sys_punch(int fd, uint64_t off, uint64_t len)
{
	return vl_sys_fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (int64_t)off,
				(int64_t)len);
}

/* Next entry of a directory (not . or ..), or NULL. */
struct dirent64 *vl_next_dirent(struct vl_dirbuf *d)
{
	for (;;) {
		struct dirent64 *e;

		if (d->pos >= d->len) {
			d->len = VL_SYSCALL("getdents",
					    vl_raw_getdents64(d->fd, d->buf, sizeof(d->buf)));
			d->pos = 0;
			if (d->len <= 0)
				return NULL;
		}
		e = (struct dirent64 *)(d->buf + d->pos);
		d->pos += e->d_reclen;
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			return e;
	}
}
