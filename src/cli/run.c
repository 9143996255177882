/*
 * run.c - `volatile run [options] -- CMD [ARG...]`: exec CMD with
 * libvolatile.so added in front of LD_PRELOAD (an existing LD_PRELOAD is
 * kept after it) and the options passed as environment.
 */
#include "cli.h"

#include "core/parse.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef VL_LIBDIR
#define VL_LIBDIR "/usr/local/lib"
#endif

#define SONAME "libvolatile.so.0"

static const char help[] =
	"Usage: volatile run [OPTION...] -- CMD [ARG...]\n"
	"Run CMD with libvolatile.so preloaded, so that its fallocate() calls with\n"
	"FALLOC_FL_MARK_VOLATILE / FALLOC_FL_UNMARK_VOLATILE work on tmpfs and memfd\n"
	"files. An existing LD_PRELOAD is kept.\n"
	"\n"
	"  --budget SIZE   keep the region's unpurged volatile bytes within SIZE at\n"
	"                  each MARK of CMD (VOLATILE_BUDGET)\n"
	"  --region PATH   use the region file PATH (VOLATILE_REGION; a relative PATH\n"
	"                  is taken from this directory and passed on absolute)\n"
	"  --2012-abi      also take the modes of the 2012 kernel patches, 0x04 and\n"
	"                  0x08, as MARK and UNMARK on tmpfs and memfd files\n"
	"                  (VOLATILE_2012_ABI=1); otherwise they are the kernel's\n"
	"                  NO_HIDE_STALE and COLLAPSE_RANGE\n"
	"  --debug         log each decision of the library to stderr (VOLATILE_DEBUG)\n"
	"\n"
	"Setuid and setgid programs are refused: the dynamic linker ignores\n"
	"LD_PRELOAD for them. Static programs, and programs that call the fallocate\n"
	"system call directly (Go programs), bypass the library too.\n";

static int exists(const char *path)
{
	return access(path, R_OK) == 0;
}

/*
 * The library to preload, by absolute path: VOLATILE_LIBRARY if set; the
 * build tree's when this binary runs from one (src/volatile next to
 * src/.libs/); else the installed one.
 */
static void library_path(char *buf, size_t size)
{
	const char *env = getenv("VOLATILE_LIBRARY");
	char exe[PATH_MAX];
	ssize_t n;

	if (env != NULL && *env != '\0') {
		if (env[0] != '/' || !exists(env))
			die("VOLATILE_LIBRARY=%s is not an absolute path to a readable file", env);
		snprintf(buf, size, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash != NULL) {
			int len;

			*slash = '\0';
			len = snprintf(buf, size, "%s/.libs/%s", exe, SONAME);
			if (len > 0 && (size_t)len < size && exists(buf))
				return;
		}
	}
	snprintf(buf, size, "%s/%s", VL_LIBDIR, SONAME);
	if (!exists(buf))
		die("cannot find %s (set VOLATILE_LIBRARY to its path)", buf);
}

/* Where execvp would find cmd; empty if it would not. */
static void find_command(const char *cmd, char *buf, size_t size)
{
	const char *path = getenv("PATH"), *p, *end;

	buf[0] = '\0';
	if (strchr(cmd, '/') != NULL) {
		snprintf(buf, size, "%s", cmd);
		return;
	}
	if (path == NULL || *path == '\0')
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p; p = *end ? end + 1 : end) {
		int len;

		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		len = (int)(end - p);
		snprintf(buf, size, "%.*s%s%s", len, len ? p : ".", "/", cmd);
		if (access(buf, X_OK) == 0)
			return;
	}
	buf[0] = '\0';
}

/*
 * VOLATILE_REGION for CMD. The library refuses a relative path (each
 * process would resolve it against its own working directory), so a
 * relative PATH is made absolute here, against ours, as the user meant.
 */
static void set_region(const char *path)
{
	char cwd[PATH_MAX], *abs = NULL;

	if (path[0] == '\0')
		die("--region needs a path");
	if (path[0] != '/') {
		if (getcwd(cwd, sizeof(cwd)) == NULL)
			die("--region %s: cannot tell the working directory: %s", path,
			    strerror(errno));
		while (path[0] == '.' && path[1] == '/')
			path += 2;
		if (asprintf(&abs, "%s/%s", strcmp(cwd, "/") == 0 ? "" : cwd, path) < 0)
			die("out of memory");
		path = abs;
	}
	if (setenv("VOLATILE_REGION", path, 1) != 0)
		die("cannot set VOLATILE_REGION: %s", strerror(errno));
	free(abs);
}

/* LD_PRELOAD with lib first, the old list after it (without lib twice). */
static void compose_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	size_t size = strlen(lib) + (old ? strlen(old) : 0) + 2;
	char *list = malloc(size), *tok, *save, *copy;

	if (list == NULL)
		die("out of memory");
	strcpy(list, lib);
	if (old != NULL) {
		copy = strdup(old);
		if (copy == NULL)
			die("out of memory");
		for (tok = strtok_r(copy, " :", &save); tok; tok = strtok_r(NULL, " :", &save)) {
			if (strcmp(tok, lib) == 0)
				continue;
			strcat(list, ":");
			strcat(list, tok);
		}
		free(copy);
	}
	if (setenv("LD_PRELOAD", list, 1) != 0)
		die("cannot set LD_PRELOAD: %s", strerror(errno));
	free(list);
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = { { "budget", required_argument, NULL, 'b' },
					      { "region", required_argument, NULL, 'r' },
					      { "2012-abi", no_argument, NULL, 'A' },
					      { "debug", no_argument, NULL, 'd' },
					      { "help", no_argument, NULL, 'h' },
					      { 0 } };
	char lib[PATH_MAX], cmd[PATH_MAX];
	struct stat st;
	int c;

	optind = 1;
	while ((c = next_opt(argc, argv, "+b:r:dh", opts, help)) != -1) {
		switch (c) {
		case 'b':
			size_arg("budget", optarg);
			setenv("VOLATILE_BUDGET", optarg, 1);
			break;
		case 'r':
			set_region(optarg);
			break;
		case 'A':
			setenv("VOLATILE_2012_ABI", "1", 1);
			break;
		case 'd':
			setenv("VOLATILE_DEBUG", "1", 1);
			break;
		}
	}
	if (optind >= argc)
		die("run needs a command (try 'volatile run --help')");
	find_command(argv[optind], cmd, sizeof(cmd));
	if (cmd[0] == '\0' || stat(cmd, &st) != 0)
		die("%s: command not found", argv[optind]);
	if (st.st_mode & (S_ISUID | S_ISGID))
		die("%s is set-user-ID or set-group-ID: the dynamic linker would ignore "
		    "LD_PRELOAD", cmd);
	library_path(lib, sizeof(lib));
	compose_preload(lib);
	execv(cmd, argv + optind);
	die("%s: %s", cmd, strerror(errno));
}
