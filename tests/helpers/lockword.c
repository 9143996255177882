/* SPDX-License-Identifier: MIT */
/*
 * lockword - look at, and scribble on, the lock words of a region, as a
 * process of the user may by mistake (DESIGN 18: any of them may scribble
 * on the region). It maps the region file named by $VOLATILE_REGION
 * read-write and reads it with the library's own layout (core/layout.h);
 * it takes no lock and registers nowhere. Commands, run in order, each
 * answering with one line:
 *
 *   slot PATH        the record of PATH's file (a LIVE record with its
 *                    device and inode number): "slot PATH = N", or "= none"
 *   word N           record N's lock word: "word N = 0xHEX"
 *   set N HEX        store HEX into record N's lock word: "set N = 0xOLD"
 *   token PID        the token of PID's slot in the table of processes
 *                    (LIVE and DONE): "token PID = 0xHEX", or "= none"
 *   held PID         which locks PID's token holds: "held PID = region
 *                    file N ..." or "held PID = none"; a record that is
 *                    not LIVE (being made or freed) is "unlisted N", one
 *                    whose vers is even (taken, not yet made odd; or made
 *                    even, not yet dropped) "settled N"
 *   digest N         a sum of everything in record N but its lock word,
 *                    and of every node that names record N (in slot order):
 *                    "digest N = HEX nodes=K"
 *   counts           the region's ranges and volatile bytes:
 *                    "counts = ranges=R bytes=B"
 *   field N NAME     record N's age order field NAME (oldest, lru_head,
 *                    lru_tail): "field N NAME = 0xHEX"
 *   setfield N NAME HEX  store HEX there: "setfield N NAME = 0xOLD"
 *   node N K         the slot of the K-th LIVE node (in slot order) that
 *                    names record N: "node N = S", or "= none"
 *
 * Exit status 0; 2 when the region cannot be had or a command is wrong.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "core/layout.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static struct vl_header *hdr;
static char *base;

static struct vl_file *file_at(uint32_t i)
{
	return (struct vl_file *)(base + hdr->geo.files_off) + (i < hdr->geo.file_cap ? i : 0);
}

static struct vl_proc *proc_at(uint32_t i)
{
	return (struct vl_proc *)(base + hdr->geo.procs_off) + (i < VL_PROCS ? i : 0);
}

static uint32_t file_hwm(void)
{
	uint32_t hwm = __atomic_load_n(&hdr->c.file_hwm, __ATOMIC_RELAXED);

	return hwm < hdr->geo.file_cap ? hwm : hdr->geo.file_cap;
}

static uint32_t *field_of(uint32_t fi, const char *name)
{
	struct vl_file *f = file_at(fi);

	if (strcmp(name, "oldest") == 0)
		return &f->h.oldest;
	if (strcmp(name, "lru_head") == 0)
		return &f->h.lru_head;
	if (strcmp(name, "lru_tail") == 0)
		return &f->h.lru_tail;
	return NULL;
}

static uint32_t token_of(int pid)
{
	for (uint32_t i = 1; i < VL_PROCS; i++) {
		uint32_t tag = __atomic_load_n(&proc_at(i)->tag, __ATOMIC_ACQUIRE);

		if ((tag & VL_PROC_LIVE) && (tag & VL_PROC_DONE) && proc_at(i)->pid == (uint32_t)pid)
			return tag & VL_TOKEN_MASK;
	}
	return 0;
}

/* FNV-1a over n bytes */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static void digest(uint32_t fi)
{
	const struct vl_file *f = file_at(fi);
	const struct vl_node *nodes = (const struct vl_node *)(base + hdr->geo.nodes_off);
	uint32_t hwm = __atomic_load_n(&hdr->c.node_hwm, __ATOMIC_RELAXED), k = 0;
	uint64_t h = 0xcbf29ce484222325ull;

	h = fnv(h, (const char *)f + sizeof(struct vl_lock), sizeof(*f) - sizeof(struct vl_lock));
	if (hwm > hdr->geo.node_cap)
		hwm = hdr->geo.node_cap;
	for (uint32_t i = 1; i < hwm; i++) {
		if ((nodes[i].meta & VL_META_FILE_MASK) != fi ||
		    ((nodes[i].meta & VL_META_STATE_MASK) >> VL_META_STATE_SHIFT) == VL_NODE_FREE)
			continue;
		h = fnv(h, &i, sizeof(i));
		h = fnv(h, &nodes[i], sizeof(nodes[i]));
		k++;
	}
	printf("digest %u = %016llx nodes=%u\n", fi, (unsigned long long)h, k);
}

static int attach(void)
{
	const char *path = getenv("VOLATILE_REGION");
	struct stat st;
	int fd;

	if (path == NULL) {
		fprintf(stderr, "lockword: VOLATILE_REGION is not set\n");
		return -1;
	}
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0 || (uint64_t)st.st_size <= VL_MAP_OFFSET) {
		fprintf(stderr, "lockword: %s: %s\n", path, fd < 0 ? strerror(errno) : "too short");
		return -1;
	}
	base = mmap(NULL, (size_t)((uint64_t)st.st_size - VL_MAP_OFFSET), PROT_READ | PROT_WRITE,
		    MAP_SHARED, fd, (off_t)VL_MAP_OFFSET);
	close(fd);
	if (base == MAP_FAILED) {
		fprintf(stderr, "lockword: mmap %s: %s\n", path, strerror(errno));
		return -1;
	}
	hdr = (struct vl_header *)base;
	if (hdr->geo.magic != VL_MAGIC ||
	    hdr->geo.region_size > (uint64_t)st.st_size - VL_MAP_OFFSET) {
		fprintf(stderr, "lockword: %s: not a region of this layout\n", path);
		return -1;
	}
	return 0;
}

/*
 * What status makes of a record whose lock is held: "unlisted" if it is
 * not LIVE (being made or freed: status lists no such); "settled" if its
 * vers is even (the holder stopped between the take and vers_odd, or
 * between the drop's even vers and the release: the record is whole, and
 * status reads it with no lock, as it should); else "file".
 */
static const char *held_kind(const struct vl_file *f)
{
	if (__atomic_load_n(&f->h.state, __ATOMIC_ACQUIRE) != VL_FILE_LIVE)
		return "unlisted";
	return (__atomic_load_n(&f->h.vers, __ATOMIC_ACQUIRE) & 1) == 0 ? "settled" : "file";
}

int main(int argc, char **argv)
{
	if (attach() != 0)
		return 2;
	for (int i = 1; i < argc; i++) {
		const char *cmd = argv[i];

		if (strcmp(cmd, "slot") == 0 && i + 1 < argc) {
			const char *path = argv[++i];
			uint32_t found = 0;
			struct stat st;

			if (stat(path, &st) != 0) {
				fprintf(stderr, "lockword: %s: %s\n", path, strerror(errno));
				return 2;
			}
			for (uint32_t fi = 1; fi < file_hwm() && found == 0; fi++) {
				const struct vl_file *f = file_at(fi);

				if (__atomic_load_n(&f->h.state, __ATOMIC_ACQUIRE) == VL_FILE_LIVE &&
				    f->h.ident.dev == (uint64_t)st.st_dev &&
				    f->h.ident.ino == (uint64_t)st.st_ino)
					found = fi;
			}
			if (found)
				printf("slot %s = %u\n", path, found);
			else
				printf("slot %s = none\n", path);
		} else if (strcmp(cmd, "word") == 0 && i + 1 < argc) {
			uint32_t fi = (uint32_t)strtoul(argv[++i], NULL, 0);

			printf("word %u = %#x\n", fi,
			       __atomic_load_n(&file_at(fi)->h.lock.word, __ATOMIC_ACQUIRE));
		} else if (strcmp(cmd, "set") == 0 && i + 2 < argc) {
			uint32_t fi = (uint32_t)strtoul(argv[i + 1], NULL, 0);
			uint32_t v = (uint32_t)strtoul(argv[i + 2], NULL, 16);

			i += 2;
			printf("set %u = %#x\n", fi,
			       __atomic_exchange_n(&file_at(fi)->h.lock.word, v, __ATOMIC_ACQ_REL));
		} else if (strcmp(cmd, "token") == 0 && i + 1 < argc) {
			int pid = atoi(argv[++i]);
			uint32_t t = token_of(pid);

			if (t)
				printf("token %d = %#x\n", pid, t);
			else
				printf("token %d = none\n", pid);
		} else if (strcmp(cmd, "held") == 0 && i + 1 < argc) {
			int pid = atoi(argv[++i]);
			uint32_t t = token_of(pid), any = 0;

			printf("held %d =", pid);
			if (t != 0 &&
			    (__atomic_load_n(&hdr->lock.word, __ATOMIC_ACQUIRE) & VL_TOKEN_MASK) == t) {
				printf(" region");
				any = 1;
			}
			for (uint32_t fi = 1; t != 0 && fi < file_hwm(); fi++)
				if ((__atomic_load_n(&file_at(fi)->h.lock.word, __ATOMIC_ACQUIRE) &
				     VL_TOKEN_MASK) == t) {
					printf(" %s %u", held_kind(file_at(fi)), fi);
					any = 1;
				}
			printf("%s\n", any ? "" : " none");
		} else if (strcmp(cmd, "digest") == 0 && i + 1 < argc) {
			digest((uint32_t)strtoul(argv[++i], NULL, 0));
		} else if ((strcmp(cmd, "field") == 0 && i + 2 < argc) ||
			   (strcmp(cmd, "setfield") == 0 && i + 3 < argc)) {
			uint32_t fi = (uint32_t)strtoul(argv[i + 1], NULL, 0);
			uint32_t *w = field_of(fi, argv[i + 2]);

			if (w == NULL) {
				fprintf(stderr, "lockword: no field %s\n", argv[i + 2]);
				return 2;
			}
			printf("%s %u %s = %#x\n", cmd, fi, argv[i + 2],
			       cmd[0] == 's' ? __atomic_exchange_n(w, (uint32_t)strtoul(argv[i + 3], NULL, 16),
								   __ATOMIC_ACQ_REL)
					     : __atomic_load_n(w, __ATOMIC_ACQUIRE));
			i += cmd[0] == 's' ? 3 : 2;
		} else if (strcmp(cmd, "node") == 0 && i + 2 < argc) {
			uint32_t fi = (uint32_t)strtoul(argv[i + 1], NULL, 0);
			uint32_t k = (uint32_t)strtoul(argv[i + 2], NULL, 0), found = 0;
			const struct vl_node *nodes = (const struct vl_node *)(base + hdr->geo.nodes_off);
			uint32_t hwm = __atomic_load_n(&hdr->c.node_hwm, __ATOMIC_RELAXED);

			i += 2;
			hwm = hwm < hdr->geo.node_cap ? hwm : hdr->geo.node_cap;
			for (uint32_t n = 1; n < hwm && found == 0; n++) {
				uint32_t m = __atomic_load_n(&nodes[n].meta, __ATOMIC_ACQUIRE);

				if ((m & VL_META_FILE_MASK) == fi &&
				    ((m & VL_META_STATE_MASK) >> VL_META_STATE_SHIFT) == VL_NODE_LIVE &&
				    k-- == 0)
					found = n;
			}
			if (found)
				printf("node %u = %u\n", fi, found);
			else
				printf("node %u = none\n", fi);
		} else if (strcmp(cmd, "counts") == 0) {
			struct vl_u128 v;
			uint32_t nr = __atomic_load_n(&hdr->c.ranges, __ATOMIC_RELAXED);

			v.lo = __atomic_load_n(&hdr->c.volatile_bytes.lo, __ATOMIC_RELAXED);
			v.hi = __atomic_load_n(&hdr->c.volatile_bytes.hi, __ATOMIC_RELAXED);
			/* and every process's deltas not yet folded in (DESIGN 10): exact */
			for (uint32_t p = 1; p < VL_PROCS; p++) {
				v.lo += (uint64_t)__atomic_load_n(&proc_at(p)->d_vbytes, __ATOMIC_RELAXED);
				nr += (uint32_t)__atomic_load_n(&proc_at(p)->d_ranges, __ATOMIC_RELAXED);
			}
			printf("counts = ranges=%u bytes=%llu\n", nr, (unsigned long long)v.lo);
		} else {
			fprintf(stderr, "lockword: bad command %s\n", cmd);
			return 2;
		}
	}
	return 0;
}
