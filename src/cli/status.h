/* SPDX-License-Identifier: MIT */
/*
 * status.h - what `volatile status` reads of the region (status.c) and
 * prints of it (status_print.c): a snapshot taken with no lock.
 */
#ifndef VL_CLI_STATUS_H
#define VL_CLI_STATUS_H

#include "cli.h"
#include "core/layout.h"
#include "env.h"
#include "mem_state.h"
#include "file_route.h"

#include <stddef.h>
#include <stdint.h>

#define STATUS_WAIT_MS "100" /* a file lock a live process keeps: so long, then not read */

struct range_out {
	uint64_t start, end;
	uint32_t age;
	int purged;
};

struct file_out {
	struct vl_target t;
	int unread;                      /* its lock was kept by a live process */
	int32_t holder;                  /* ... this one (0: not known) */
	int8_t holder_gone[VL_HOLDERS];  /* that recorded holder no longer holds it */
	int holders_gone;                /* holders were recorded, all of them gone */
	size_t n;
	struct range_out *ranges;
	int unsound;                     /* its index's walk passed its bound: no ranges read */
	int ashmem;                      /* an ashmem region: its name and size */
	char ash_name[VL_ASH_NAME_LEN];
	uint64_t ash_size;
};

struct snapshot {
	int ndaemons;         /* the daemons serving the region (daemons.c) */
	struct daemon_seen daemons[MAX_DAEMONS];
	int exists;
	int waiting;          /* made anew, older regions not moved in yet (ESTALE) */
	int blind;            /* serving, older removed regions left to their users */
	int retired;          /* its records moved to the region new processes find */
	struct vl_counters c;
	struct vl_geometry g;
	uint64_t region_bytes;
	size_t nfiles;
	struct file_out *files;
	uint32_t with_ranges; /* files of the list with a range (records: c.files_used) */
	int npurges;          /* the region's log of the last purges, newest first */
	struct vl_purge_entry purges[VL_PURGE_LOG];
	uint64_t now_ms;      /* when it was taken, on the log's clock */
	uint64_t tomb_added;  /* identities put in the tombstones (core/tomb.h) */
	uint64_t tomb_pushed; /* ... pushed out of their table under the horizon */
	uint64_t tomb_horizon; /* ns since 1970; 0: none */
};

/* Memory as the library sees it for this process (DESIGN 6). */
struct pressure {
	struct vl_cgroup cg;
	int have_cg;
	struct vl_memstate ms;
	int known;
	uint64_t threshold;
	int low;
};

void take_snapshot(struct snapshot *s);
void free_snapshot(struct snapshot *s);
void pressure_now(struct pressure *p);
const char *human(uint64_t v, char *buf, size_t size);
const char *human128(const struct vl_u128 *v, char *buf, size_t size);
const char *dec128(const struct vl_u128 *v, char buf[40]);

void print_json(const struct snapshot *s, const struct vl_config *cfg);
void print_text(const struct snapshot *s, const struct vl_config *cfg, int all_ranges);
/* `--watch`'s frame: the totals, memory, the files with most volatile bytes, the last purges */
void print_watch(const struct snapshot *s, const struct vl_config *cfg);

#endif
