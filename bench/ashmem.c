/* SPDX-License-Identifier: MIT */
/*
 * ashmem.c - the life of an ashmem region, as a legacy program lives it:
 * open /dev/ashmem, SET_SIZE, mmap, munmap, close. Against the same life
 * of a memfd in raw system calls, and with 10 then 1,000 other fds open
 * (closing a region must not look at every fd of the process).
 */
#include "bench.h"

#include <fcntl.h>
#include <linux/ashmem.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SIZE 65536
#define CYCLES 2000
#define ROUNDS 9

static int region_cycle(void)
{
	int fd = open("/dev/ashmem", O_RDWR | O_CLOEXEC);
	void *p;

	if (fd < 0 || ioctl(fd, ASHMEM_SET_SIZE, (size_t)SIZE) != 0)
		return -1;
	p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	munmap(p, SIZE);
	return close(fd);
}

static int raw_cycle(void)
{
	int fd = (int)syscall(SYS_memfd_create, "raw", MFD_CLOEXEC);
	long p;

	if (fd < 0 || syscall(SYS_ftruncate, fd, SIZE) != 0)
		return -1;
	p = syscall(SYS_mmap, NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p < 0 && p > -4096)
		return -1;
	syscall(SYS_munmap, p, SIZE);
	return (int)syscall(SYS_close, fd);
}

/* ns per cycle: median of ROUNDS rounds, alternating with the raw life */
static int measure(double *region_ns, double *raw_ns)
{
	double a[ROUNDS], b[ROUNDS];

	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t = now_ns();

		for (int i = 0; i < CYCLES; i++)
			if (region_cycle() != 0)
				return -1;
		a[r] = (double)(now_ns() - t) / CYCLES;
		t = now_ns();
		for (int i = 0; i < CYCLES; i++)
			if (raw_cycle() != 0)
				return -1;
		b[r] = (double)(now_ns() - t) / CYCLES;
	}
	*region_ns = median(a, ROUNDS);
	*raw_ns = median(b, ROUNDS);
	return 0;
}

/* Open fds until `want` other fds are open; returns how many were opened. */
static int open_others(int *fds, int have, int want)
{
	while (have < want) {
		fds[have] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fds[have] < 0)
			break;
		have++;
	}
	return have;
}

void bench_ashmem(void)
{
	int fds[1000], have;
	double at10, raw10, at1000, raw1000;
	struct figure *f;

	have = open_others(fds, 0, 10);
	if (measure(&at10, &raw10) != 0) {
		f = add_figure("ashmem_cycle", "ashmem region open+size+mmap+munmap+close");
		f->status = SKIPPED;
		snprintf(f->note, sizeof(f->note), "skipped: a region cycle failed");
		goto out;
	}
	f = add_figure("ashmem_cycle", "ashmem open+size+mmap+munmap+close, 10 fds");
	f->value = at10;
	f->unit = "ns";
	f->base = raw10;
	f->ratio = at10 / raw10;
	f->ratio_of = "the same life of a memfd in raw system calls";
	f->status = NA;
	have = open_others(fds, have, 1000);
	if (have < 1000 || measure(&at1000, &raw1000) != 0) {
		f = add_figure("ashmem_cycle_fds", "the same, 1000 fds open");
		f->status = SKIPPED;
		snprintf(f->note, sizeof(f->note), "skipped: only %d fds", have);
		goto out;
	}
	f = add_figure("ashmem_cycle_fds", "the same, 1000 fds open");
	f->value = at1000;
	f->unit = "ns";
	f->base = at10;
	/* each over the raw life beside it: the machine's drift cancels */
	f->ratio = (at1000 / raw1000) / (at10 / raw10);
	f->ratio_of = "the same at 10 fds (each over its raw life)";
	f->target = "<= 1.2x";
	f->status = met_if(f->ratio <= 1.2);
out:
	while (have > 0)
		close(fds[--have]);
}
