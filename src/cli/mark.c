/* SPDX-License-Identifier: MIT */
/*
 * mark.c - `volatile mark FILE OFFSET LEN` and `volatile unmark ...`,
 * for shell scripts: the same checks and errors as fallocate(2) with the
 * volatile modes.
 */
#include "cli.h"

#include "ops.h"
#include "volatile.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char mark_help[] =
	"Usage: volatile mark FILE OFFSET LEN\n"
	"Mark LEN bytes of FILE from OFFSET volatile: under memory pressure they\n"
	"may be purged (they then read as zeros). FILE must be on tmpfs (or be a\n"
	"memfd, as /proc/PID/fd/N). OFFSET and LEN take K, M, G suffixes.\n"
	"Exit status: 0 done, 2 error.\n";

static const char unmark_help[] =
	"Usage: volatile unmark FILE OFFSET LEN\n"
	"Make LEN bytes of FILE from OFFSET non-volatile again, and tell whether\n"
	"they survived: prints 'intact' and exits 0, or prints 'purged' and exits 1\n"
	"(some of the bytes were purged while volatile and now read as zeros).\n"
	"Exit status 2 on error.\n";

static int mark_or_unmark(int argc, char **argv, int mode, const char *help)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { 0 } };
	const char *what = mode == FALLOC_FL_MARK_VOLATILE ? "mark" : "unmark";
	uint64_t off, len;
	int fd, r;

	optind = 1;
	while (next_opt(argc, argv, "+h", opts, help) != -1)
		;
	if (argc - optind != 3)
		die("%s needs FILE OFFSET LEN (try 'volatile %s --help')", what, what);
	off = size_arg("offset", argv[optind + 1]);
	len = size_arg("length", argv[optind + 2]);
	region_path();
	fd = open(argv[optind], O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		die("%s: %s", argv[optind], strerror(errno));
	r = vl_volatile_fallocate(fd, mode, (int64_t)off, (int64_t)len);
	close(fd);
	/* EOPNOTSUPP's text alone does not say what is wrong with the file */
	if (r == -EOPNOTSUPP)
		die("%s %s: %s (not a tmpfs or memfd file)", what, argv[optind], strerror(-r));
	if (r < 0)
		die("%s %s: %s", what, argv[optind], strerror(-r));
	if (mode == FALLOC_FL_UNMARK_VOLATILE) {
		puts(r ? "purged" : "intact");
		return r ? 1 : 0;
	}
	return 0;
}

int cmd_mark(int argc, char **argv)
{
	return mark_or_unmark(argc, argv, FALLOC_FL_MARK_VOLATILE, mark_help);
}

int cmd_unmark(int argc, char **argv)
{
	return mark_or_unmark(argc, argv, FALLOC_FL_UNMARK_VOLATILE, unmark_help);
}
