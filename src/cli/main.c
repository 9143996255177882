/* SPDX-License-Identifier: MIT */
/*
 * main.c - `volatile`: run a program with the shim, inspect, purge, mark.
 */
#include "cli.h"

#include "punch.h"
#include "system.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
	"Usage: volatile COMMAND [OPTION...] [ARG...]\n"
	"Volatile ranges for tmpfs and memfd files.\n"
	"\n"
	"Commands:\n"
	"  run [--budget SIZE] [--region PATH] [--2012-abi] [--debug] [--no-seccomp]\n"
	"      -- CMD [ARG...]    run CMD with libvolatile.so preloaded, serving the\n"
	"                         programs it cannot reach\n"
	"  status [--ranges] [--json] [--watch [--count N]]\n"
	"                         show the region: files, ranges, bytes, budget, memory,\n"
	"                         the last purges; --watch redraws it once a second\n"
	"  status --system [--uid UID]...\n"
	"                         (root) the users with a region in a default place\n"
	"  purge [--all | --bytes SIZE]\n"
	"                         purge volatile ranges now, oldest first\n"
	"  purge --system [--all | --bytes SIZE] [--uid UID]... [--debug]\n"
	"                         (root) the machine's oldest first, every user's region\n"
	"  mark FILE OFFSET LEN   mark bytes of a tmpfs file volatile\n"
	"  unmark FILE OFFSET LEN unmark them; prints 'intact' (exit 0) or 'purged' (exit 1)\n"
	"  daemon [--foreground] [--cgroup DIR] [--interval MS]\n"
	"                         purge under memory pressure, in the background\n"
	"  daemon --stop          stop the region's daemon ('status' names it)\n"
	"  daemon --system [--foreground] [--uid UID]... [--debug]\n"
	"                         (root) the machine's daemon, for every user's region\n"
	"\n"
	"SIZE, OFFSET and LEN take K, M, G and T suffixes (powers of 1024).\n"
	"The region is VOLATILE_REGION, or the user's default (status names it).\n"
	"'volatile COMMAND --help' describes each command.\n"
	"\n"
	"Exit status: 0, or 2 on bad usage or an error (unmark: 1 when purged);\n"
	"run becomes CMD (exec), so its status is CMD's; or 125 (its own\n"
	"failure), 126 (CMD cannot be executed), 127 (CMD not found).\n";

static const struct {
	const char *name;
	int (*fn)(int, char **);
} commands[] = {
	{ "run", cmd_run },       { "status", cmd_status }, { "purge", cmd_purge },
	{ "mark", cmd_mark },     { "unmark", cmd_unmark }, { "daemon", cmd_daemon },
	/* root's daemon starts it (DESIGN 22): not in the usage */
	{ "system-worker", cmd_system_worker },
};

/*
 * Started with 0, 1 or 2 closed, the command would give those numbers to
 * the first descriptors it opens (a region file, run's listener, a
 * caller's file taken with pidfd_getfd), and its messages and the
 * library's log lines, written to 1 and 2, would go into them. So each
 * closed one is held on /dev/null (O_PATH of / where there is none: an fd
 * nothing can be written through) before anything is opened; close-on-exec,
 * so that CMD, which `run` execs, starts with it closed as without run.
 */
static void hold_std_fds(void)
{
	for (int fd = 0; fd < 3; fd++) {
		int got;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		got = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (got < 0)
			got = open("/", O_PATH | O_CLOEXEC);
		if (got < 0)
			_exit(2); /* no descriptor to be had: nothing can be done safely */
		/* the lowest free number, so fd itself: the lower ones are open */
		if (got != fd) {
			if (dup3(got, fd, O_CLOEXEC) != fd)
				_exit(2);
			close(got);
		}
	}
}

int main(int argc, char **argv)
{
	hold_std_fds();
	/* the command takes no POSIX locks: a purge's punches need no child here */
	vl_punch_here();
	if (argc < 2)
		die("no command given (try 'volatile --help')");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		fputs(usage, stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("volatile (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	die("unknown command '%s' (try 'volatile --help')", argv[1]);
}
