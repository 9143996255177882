/* SPDX-License-Identifier: MIT */
/*
 * fusestall - a FUSE file system that answers until its file is open,
 * then stops answering (DESIGN 13).
 *
 *   fusestall DIR getattr|all
 *
 * As root, mounts a FUSE file system on DIR through /dev/fuse directly
 * (no libfuse) and serves it: a root directory holding one regular file,
 * "f" (64 KiB, mode 0666). It answers INIT, LOOKUP, GETATTR, STATFS, OPEN,
 * FLUSH and RELEASE; anything else gets ENOSYS. Attributes are given as
 * valid for no time, so any stat that may ask the server does. It prints
 * "mounted" once INIT is answered. Once it has answered the first OPEN it
 * prints "stalled" and from then on leaves unanswered, for ever:
 *   getattr  every GETATTR and STATX (the file's attributes);
 *   all      every request but LOOKUP and OPEN: attributes, STATFS, the
 *            FLUSH of every close, ...
 * That is a server that hangs once a program has the file open (more
 * programs may still open it): whoever asks it then waits until this
 * program exits (the kernel then aborts the connection: ENOTCONN), and a
 * thread waiting for an answer to a request the server has read cannot
 * even be killed. Runs until it is killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* 7.39's opcode, not in older headers: asked by kernels that know it */
#define FUSESTALL_STATX 52

#define FILE_ID 2
#define FILE_SIZE 65536

static int dev;

static void reply(const struct fuse_in_header *in, int error, const void *body, size_t len)
{
	struct fuse_out_header out = { 0 };
	struct iovec iov[2] = { { &out, sizeof(out) }, { (void *)body, len } };

	out.len = (uint32_t)(sizeof(out) + (error ? 0 : len));
	out.error = -error;
	out.unique = in->unique;
	/* ENOENT: the request was interrupted meanwhile */
	(void)writev(dev, iov, error ? 1 : 2);
}

static void attr_of(uint64_t node, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = node;
	a->nlink = 1;
	a->blksize = 4096;
	if (node == FUSE_ROOT_ID) {
		a->mode = S_IFDIR | 0755;
		a->nlink = 2;
	} else {
		a->mode = S_IFREG | 0666;
		a->size = FILE_SIZE;
		a->blocks = FILE_SIZE / 512;
	}
}

static int stalls(const struct fuse_in_header *in, int all)
{
	if (all)
		return in->opcode != FUSE_LOOKUP && in->opcode != FUSE_OPEN;
	return in->opcode == FUSE_GETATTR || in->opcode == FUSESTALL_STATX;
}

int main(int argc, char **argv)
{
	static char buf[FUSE_MIN_READ_BUFFER + 65536];
	char opts[128];
	int all, stalled = 0;

	if (argc != 3 || (strcmp(argv[2], "getattr") != 0 && strcmp(argv[2], "all") != 0)) {
		fprintf(stderr, "usage: fusestall DIR getattr|all\n");
		return 2;
	}
	all = strcmp(argv[2], "all") == 0;
	dev = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (dev < 0) {
		perror("fusestall: /dev/fuse");
		return 2;
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other",
		 dev);
	if (mount("fusestall", argv[1], "fuse", MS_NOSUID | MS_NODEV, opts) != 0) {
		perror("fusestall: mount");
		return 2;
	}
	for (;;) {
		ssize_t n = read(dev, buf, sizeof(buf));
		const struct fuse_in_header *in = (const void *)buf;
		const void *body = buf + sizeof(*in);

		if (n < 0 && (errno == EINTR || errno == ENOENT || errno == EAGAIN))
			continue;
		if (n < 0) {
			perror("fusestall: read");
			return 1;
		}
		if ((size_t)n < sizeof(*in))
			continue;
		if (stalled && stalls(in, all))
			continue; /* never answered */
		switch (in->opcode) {
		case FUSE_INIT: {
			const struct fuse_init_in *ii = body;
			struct fuse_init_out o = { 0 };

			o.major = FUSE_KERNEL_VERSION;
			o.minor = ii->minor < FUSE_KERNEL_MINOR_VERSION ? ii->minor
									 : FUSE_KERNEL_MINOR_VERSION;
			o.max_readahead = ii->max_readahead;
			o.max_write = 65536;
			o.max_background = 16;
			o.congestion_threshold = 12;
			o.time_gran = 1;
			reply(in, 0, &o, sizeof(o));
			printf("mounted\n");
			fflush(stdout);
			break;
		}
		case FUSE_LOOKUP: {
			struct fuse_entry_out o = { 0 };

			if (in->nodeid != FUSE_ROOT_ID || strcmp(body, "f") != 0) {
				reply(in, ENOENT, NULL, 0);
				break;
			}
			o.nodeid = FILE_ID;
			o.generation = 1;
			o.entry_valid = 3600;
			attr_of(FILE_ID, &o.attr);
			reply(in, 0, &o, sizeof(o));
			break;
		}
		case FUSE_GETATTR: {
			struct fuse_attr_out o = { 0 };

			attr_of(in->nodeid, &o.attr);
			reply(in, 0, &o, sizeof(o));
			break;
		}
		case FUSE_STATFS: {
			struct fuse_statfs_out o = { 0 };

			o.st.bsize = 4096;
			o.st.frsize = 4096;
			o.st.namelen = 255;
			reply(in, 0, &o, sizeof(o));
			break;
		}
		case FUSE_OPEN: {
			struct fuse_open_out o = { 0 };

			o.fh = 1;
			o.open_flags = FOPEN_DIRECT_IO;
			reply(in, 0, &o, sizeof(o));
			if (!stalled) {
				stalled = 1;
				printf("stalled\n");
				fflush(stdout);
			}
			break;
		}
		case FUSE_FLUSH:
		case FUSE_RELEASE:
			reply(in, 0, NULL, 0);
			break;
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
		case FUSE_INTERRUPT:
			break; /* no answer is expected */
		default:
			reply(in, ENOSYS, NULL, 0);
			break;
		}
	}
}
