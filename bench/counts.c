/* SPDX-License-Identifier: MIT */
/*
 * counts.c - instructions per MARK+UNMARK pair, as callgrind counts them:
 * a figure that does not depend on the machine or its load (the table's
 * times do). The bench runs itself under valgrind (bench --pairs N MID),
 * N pairs and then 2N, each in a region of its own; the difference over N
 * is what one pair costs in user space, library and libc together, with
 * what the process does once taken out. Only the loop of pairs is counted
 * (callgrind's --toggle-collect): attaching the region scans /proc, whose
 * cost follows the machine's processes and differed between the two runs
 * by up to 500 instructions a pair.
 * The pressure rules are off in those runs: they look at memory every
 * 250 ms of the clock, and valgrind's slowness would make that a share
 * of each pair that depends on the machine. Skipped when valgrind is not
 * installed.
 */
#include "bench.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef FALLOC_FL_MARK_VOLATILE
#define FALLOC_FL_MARK_VOLATILE 0x10000000
#define FALLOC_FL_UNMARK_VOLATILE 0x20000000
#endif

/* The pairs alone: what callgrind counts (its name is in collected()'s command). */
static __attribute__((noinline, noclone)) int pairs_loop(int fd, off_t at, int n)
{
	for (int i = 0; i < n; i++)
		if (fallocate(fd, FALLOC_FL_MARK_VOLATILE, at, 4096) != 0 ||
		    fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, at, 4096) != 0)
			return 1;
	return 0;
}

/* bench --pairs N MID: N pairs on a memfd of MID ranges (the pair's in the middle), or of one */
int pairs_main(int argc, char **argv)
{
	int n, mid, fd;
	off_t at;

	if (argc != 3)
		return 2;
	n = atoi(argv[1]);
	mid = atoi(argv[2]);
	fd = memfd_create("pairs", 0);
	if (fd < 0 || ftruncate(fd, (off_t)1 << 32) != 0)
		return 1;
	if (mid > 0) {
		for (int i = 0; i < mid; i++)
			if (fallocate(fd, FALLOC_FL_MARK_VOLATILE, (off_t)i * 16384, 4096) != 0)
				return 1;
		at = (off_t)(mid / 2) * 16384 + 8192; /* between two ranges, touching neither */
	} else {
		if (fallocate(fd, FALLOC_FL_MARK_VOLATILE, 1 << 20, 4096) != 0)
			return 1; /* the file's other range: its record stays */
		at = 0;
	}
	return pairs_loop(fd, at, n);
}

static int have_valgrind(void)
{
	return system("valgrind --version >/dev/null 2>&1") == 0;
}

/* Instructions callgrind counted for `bench --pairs n mid`; -1 on failure. */
static double collected(int n, int mid)
{
	char cmd[512], line[256];
	const char *region = getenv("VOLATILE_REGION");
	double ir = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "VOLATILE_REGION=%s.cg VOLATILE_MIN_AVAILABLE=0 VOLATILE_TMPFS_MIN_FREE=0 "
		 "valgrind --tool=callgrind --callgrind-out-file=/dev/null "
		 "--toggle-collect=pairs_loop "
		 "/proc/%d/exe --pairs %d %d 2>&1; rm -f %s.cg %s.cg.daemon",
		 region ? region : "/dev/shm/libvolatile-bench", (int)getpid(), n, mid,
		 region ? region : "/dev/shm/libvolatile-bench",
		 region ? region : "/dev/shm/libvolatile-bench");
	p = popen(cmd, "r");
	if (p == NULL)
		return -1;
	while (fgets(line, sizeof(line), p) != NULL) {
		const char *c = strstr(line, "Collected : ");

		if (c != NULL) {
			char *d = line, *s;

			/* "==PID== Collected : 1,234,567" or without commas */
			for (s = (char *)c + 12; *s && *s != '\n'; s++)
				if (*s != ',')
					*d++ = *s;
			*d = '\0';
			ir = strtod(line, NULL);
		}
	}
	return pclose(p) == 0 ? ir : -1;
}

static void count_row(const char *key, const char *label, int mid, double target)
{
	struct figure *f = add_figure(key, label);
	double a = collected(1000, mid), b = collected(2000, mid);

	f->unit = "instr";
	snprintf(f->note, sizeof(f->note), "callgrind, user space (library and libc): "
					   "(Ir of 2,000 pairs - Ir of 1,000) / 1,000");
	if (a < 0 || b < 0) {
		f->status = SKIPPED;
		snprintf(f->note, sizeof(f->note), "skipped: valgrind failed");
		return;
	}
	f->value = (b - a) / 1000;
	f->ratio = f->value / target;
	f->ratio_of = "the target";
	f->target = target == 1500 ? "<= 1,500" : "<= 1,200";
	f->status = met_if(f->value <= target);
}

void bench_counts(void)
{
	if (!have_valgrind()) {
		struct figure *f = add_figure("instr_pair", "instructions per pair (callgrind)");

		f->status = SKIPPED;
		snprintf(f->note, sizeof(f->note), "skipped: valgrind is not installed");
		return;
	}
	count_row("instr_pair", "instructions per pair, the file's only other range", 0, 1500);
	count_row("instr_pair_1000", "instructions per pair, among 1,000 ranges", 1000, 1200);
}
