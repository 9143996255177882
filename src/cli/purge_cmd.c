/* SPDX-License-Identifier: MIT */
/*
 * purge.c - `volatile purge [--all | --bytes SIZE]`.
 */
#include "cli.h"
#include "system.h"

#include "purge.h"
#include "region.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char help[] =
	"Usage: volatile purge [--all | --bytes SIZE]\n"
	"       volatile purge --system [--all | --bytes SIZE] [--cgroup DIR] [--uid UID]...\n"
	"                               [--debug]\n"
	"Purge volatile ranges of the region now, oldest first, whole ranges at a\n"
	"time: all of them (--all, the default), or until at least SIZE bytes\n"
	"(K, M, G suffixes) have been purged. Prints what was purged.\n"
	"Then looks at every file with volatile ranges and forgets the records of\n"
	"those that are gone (a file found gone twice, some seconds apart).\n"
	"With --system (root): the machine's oldest ranges first, across every\n"
	"user's region (volatile purge --system --help).\n";

int cmd_purge(int argc, char **argv)
{
	static const struct option opts[] = { { "all", no_argument, NULL, 'a' },
					      { "bytes", required_argument, NULL, 'b' },
					      { "help", no_argument, NULL, 'h' },
					      { 0 } };
	struct vl_goal goal = { .bytes = UINT64_MAX, .thorough = 1, .reason = VL_PURGE_COMMAND };
	struct vl_purge_report rep = { 0 };
	struct vl_region r;
	int c, all = 0, bytes = 0;

	/* the machine's purge is another program's worth of options (system.c) */
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--system") == 0)
			return cmd_purge_system(argc, argv);
	optind = 1;
	while ((c = next_opt(argc, argv, "+ab:h", opts, help)) != -1) {
		if (c == 'a') {
			all = 1;
		} else if (c == 'b') {
			bytes = 1;
			goal.bytes = size_arg("size", optarg);
		}
	}
	if (optind != argc)
		die("purge takes no arguments (try 'volatile purge --help')");
	if (all && bytes)
		die("purge: --all and --bytes exclude each other");
	if (open_region(&r, 0) == 0) {
		struct vl_purge_report gc;

		vl_purge(&r, &goal, NULL, &rep);
		/* then look at every file, and forget those that are gone */
		vl_collect(&r, &gc);
		rep.files_dropped += gc.files_dropped;
		rep.files_skipped = gc.files_skipped;
		vl_region_unmap(&r);
	}
	printf("purged %u range%s, %llu bytes", rep.ranges, rep.ranges == 1 ? "" : "s",
	       (unsigned long long)rep.bytes);
	if (rep.files_skipped)
		printf("; %u file%s unreachable", rep.files_skipped,
		       rep.files_skipped == 1 ? "" : "s");
	if (rep.files_dropped)
		printf("; %u file%s gone, forgotten", rep.files_dropped,
		       rep.files_dropped == 1 ? "" : "s");
	putchar('\n');
	return 0;
}
