/* SPDX-License-Identifier: MIT */
/*
 * bench.h - what the parts of the benchmark share: clock, medians, results.
 */
#ifndef VL_BENCH_H
#define VL_BENCH_H

#include <sys/types.h>
#include <stdint.h>
#include <stdio.h>

#define MAX_ROUNDS 101

uint64_t now_ns(void);
double median(double *v, int n);

/* One line of the table (and one object of the JSON). */
enum status { NA, MET, MISSED, SKIPPED };

struct figure {
	const char *key;     /* JSON key */
	char label[64];      /* table label */
	double value;        /* the absolute figure, in unit */
	const char *unit;    /* "ns", "bytes", "B/s"... */
	double base;         /* the figure it is compared with, in unit (0: none) */
	double ratio;        /* value / base, or the ratio the target is about */
	const char *ratio_of; /* what the ratio is to */
	const char *target;  /* e.g. "<= 1.02x", NULL: none */
	enum status status;
	char note[160];      /* "skipped: why", or a remark */
};

struct figure *add_figure(const char *key, const char *label);
int met_if(int ok);

/* An ashmem region's life, at 10 and 1,000 open fds (bench/ashmem.c). */
void bench_ashmem(void);
/* The daemon's reaction: fills figures itself, or "skipped: why". */
void bench_reaction(const char *volatile_bin, int trials);
/* A process's voluntary context switches, all its threads: the sleeps it woke from (reaction.c). */
long long proc_wakeups(pid_t pid);
/* Read a line from fd within ms milliseconds, without its newline; 0 on success (reaction.c). */
int read_line(int fd, char *buf, size_t size, int ms);
/*
 * A MARK whose budget purge must reach a file only a forked child holds,
 * with many fds open on the machine (bench/reach.c).
 */
void bench_mark_reach(void);
/* The process that marks there (bench --marker ROUNDS); returns the exit status. */
int marker_main(int argc, char **argv);
/* Instructions per pair, as callgrind counts them (bench/counts.c). */
void bench_counts(void);
/* Last-level misses per pair at a random spot, callgrind's cache simulation. */
void bench_llmiss(int ranges);
/* bench --pairs N LAYOUT [RANGES], what callgrind runs; returns the exit status. */
int pairs_main(int argc, char **argv);
/* The pair through `volatile run`'s supervisor, and the filter's cost (bench/seccomp.c). */
void bench_seccomp(const char *volatile_bin);
/* bench --supervised, run under `volatile run`; returns the exit status. */
int supervised_main(int argc, char **argv);
/* bench --threads N PAIRS, run under `volatile run`; returns the exit status. */
int threads_main(int argc, char **argv);
/* The machine's daemon among 100 users' regions (bench/system.c); root only. */
void bench_system(const char *volatile_bin, int trials);
/* A user's holder there (bench --sys-holder ...); returns the exit status. */
int sys_holder_main(int argc, char **argv);
/* The process that holds the cache (bench --holder ...); returns the exit status. */
int holder_main(int argc, char **argv);

#endif
