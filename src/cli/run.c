/* SPDX-License-Identifier: MIT */
/*
 * run.c - `volatile run [options] -- CMD [ARG...]`: exec CMD with
 * libvolatile.so added to LD_PRELOAD and the options passed as environment.
 *
 * LD_PRELOAD reaches every program CMD starts, whatever its ABI, and two
 * kinds of program must see it do no harm:
 * - Programs of another ABI (a 32-bit one under a 64-bit CMD, or CMD
 *   itself): ld.so prints an error for a preloaded object it cannot load
 *   ("wrong ELF class"), a missing one too. So the library is named
 *   PRELOADDIR/$LIB/libvolatile.so.0, which ld.so expands with its own
 *   ABI's directory name: the native name links to the library, the names
 *   of the machine's other ABIs hold an empty object of that ABI (made at
 *   build time, see m4/vl_preload.m4), loaded without a word.
 * - Programs built with AddressSanitizer: its runtime aborts the program
 *   unless it is the first library loaded. The sanitizer runtimes that
 *   begin LD_PRELOAD stay ahead of the library, and when CMD (the ELF file
 *   exec runs: CMD, or the interpreter of its #! line) needs an ASan
 *   runtime (DT_NEEDED, read by elf.c), that name goes first: a bare name
 *   in LD_PRELOAD is found as CMD's DT_NEEDED is. Other runtimes (TSan, UBSan, LSan) run
 *   fine after the library and are not moved: preloaded, they would reach
 *   every child of CMD (libtsan crashes an uninstrumented bash).
 */
#include "cli.h"

#include "core/fault.h"
#include "core/parse.h"
#include "env.h"
#include "log.h"
#include "sys.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef VL_LIBDIR
#define VL_LIBDIR "/usr/local/lib"
#endif
#ifndef VL_PKGLIBDIR
#define VL_PKGLIBDIR VL_LIBDIR "/libvolatile"
#endif
/* what ld.so expands $LIB to (configure.ac); empty: $LIB is not used */
#ifndef VL_DST_LIB
#define VL_DST_LIB ""
#endif

#define SONAME "libvolatile.so.0"

static const char help[] =
	"Usage: volatile run [OPTION...] -- CMD [ARG...]\n"
	"Run CMD with libvolatile.so preloaded, so that its fallocate() calls with\n"
	"FALLOC_FL_MARK_VOLATILE / FALLOC_FL_UNMARK_VOLATILE work on tmpfs and memfd\n"
	"files. An existing LD_PRELOAD is kept (sanitizer runtimes at its head stay\n"
	"first; the AddressSanitizer runtime CMD needs is put first). Programs of\n"
	"another ABI (32-bit ones) run as without the library.\n"
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
	"  --no-seccomp    no supervisor: only programs the preload reaches get\n"
	"                  volatile ranges\n"
	"\n"
	"Static programs, musl and Go programs, and programs that make the\n"
	"fallocate system call themselves are served by run's supervisor, a\n"
	"process of its own: a seccomp filter sends their volatile fallocate calls\n"
	"to it (every other call stays in the kernel), for as long as any process\n"
	"of CMD's tree lives. Under it, CMD and its children run with\n"
	"no_new_privs: set-user-ID programs they start get no privileges. Where\n"
	"seccomp is refused, run goes on with the preload only. Killed, the\n"
	"supervisor leaves their volatile calls failing with ENOSYS.\n"
	"\n"
	"run then executes CMD in its own place, as eatmydata does: CMD keeps\n"
	"run's pid, parent and terminal, and its exit status, signals and stops\n"
	"are its own.\n"
	"\n"
	"The kernel allows one seccomp listener in a filter chain, and run's filter\n"
	"has it: a program under run that installs a filter with a listener of its\n"
	"own (seccomp with SECCOMP_FILTER_FLAG_NEW_LISTENER: container runtimes,\n"
	"sandboxes, some test harnesses) gets EBUSY, and usually fails to start.\n"
	"Run such a program with --no-seccomp (filters without a listener work).\n"
	"\n"
	"Setuid and setgid programs are refused: the dynamic linker ignores\n"
	"LD_PRELOAD for them. So is a VOLATILE_* variable whose value the library\n"
	"would ignore (VOLATILE_BUDGET=lots) or refuse (a relative VOLATILE_REGION):\n"
	"one line names it.\n"
	"\n"
	"Exit status: CMD's (run became CMD); 125 if run itself fails (a bad\n"
	"option or VOLATILE_* value, a setuid CMD), 126 if CMD cannot be executed,\n"
	"127 if it is not found (as env and timeout).\n";

static int exists(const char *path)
{
	return access(path, R_OK) == 0;
}

/* path with "$LIB" and "${LIB}" as ld.so expands them here; 0, or -1 if too long */
static int expand_lib(const char *path, char *buf, size_t size)
{
	size_t n = 0, len;
	const char *add;

	while (*path != '\0') {
		if (strncmp(path, "$LIB", 4) == 0 || strncmp(path, "${LIB}", 6) == 0) {
			add = VL_DST_LIB;
			len = strlen(add);
			path += path[1] == '{' ? 6 : 4;
		} else {
			add = path++;
			len = 1;
		}
		if (n + len >= size)
			return -1;
		memcpy(buf + n, add, len);
		n += len;
	}
	buf[n] = '\0';
	return 0;
}

/*
 * dir/preload/$LIB/SONAME in buf where that directory is made (its native
 * name links to the library): 0, else -1.
 */
static int preload_entry(const char *dir, char *buf, size_t size)
{
	int len;

	if (VL_DST_LIB[0] == '\0' || strchr(dir, '$') != NULL)
		return -1;
	len = snprintf(buf, size, "%s/preload/%s/%s", dir, VL_DST_LIB, SONAME);
	if (len <= 0 || (size_t)len >= size || !exists(buf))
		return -1;
	snprintf(buf, size, "%s/preload/$LIB/%s", dir, SONAME);
	return 0;
}

/*
 * The library's entry in LD_PRELOAD, by absolute path: VOLATILE_LIBRARY if
 * set (as it is: ld.so expands a $LIB in it); the build tree's when this
 * binary runs from one (src/volatile, its library in src/.libs/, the
 * per-ABI directory src/preload/); else the installed one
 * ($(pkglibdir)/preload/$LIB/, else $(libdir)).
 */
static void library_path(char *buf, size_t size)
{
	const char *env = getenv("VOLATILE_LIBRARY");
	char exe[PATH_MAX], path[PATH_MAX];
	ssize_t n;

	if (env != NULL && *env != '\0') {
		if (env[0] != '/' || expand_lib(env, path, sizeof(path)) != 0 || !exists(path))
			die("VOLATILE_LIBRARY=%s is not an absolute path to a readable file",
			    vl_env_shown(env, path, sizeof(path)));
		snprintf(buf, size, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;
		int len;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash != NULL) {
			*slash = '\0';
			len = snprintf(path, sizeof(path), "%s/.libs/%s", exe, SONAME);
			if (len > 0 && (size_t)len < sizeof(path) && exists(path)) {
				if (preload_entry(exe, buf, size) != 0)
					snprintf(buf, size, "%s", path);
				return;
			}
		}
	}
	if (preload_entry(VL_PKGLIBDIR, buf, size) == 0)
		return;
	snprintf(buf, size, "%s/%s", VL_LIBDIR, SONAME);
	if (!exists(buf))
		die("cannot find %s (set VOLATILE_LIBRARY to its path)", buf);
}

/*
 * Where execvp would find cmd: 0, or -ENOENT if nowhere, -EACCES if only
 * where it may not be run (a file without x bit, a directory, a directory
 * of PATH we may not search), where execvp goes on searching and then
 * fails with EACCES, which sh and env(1) report as 126.
 */
static int find_command(const char *cmd, char *buf, size_t size)
{
	const char *path = getenv("PATH"), *p, *end;
	int denied = 0;

	buf[0] = '\0';
	if (strchr(cmd, '/') != NULL) {
		snprintf(buf, size, "%s", cmd);
		return 0;
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
		if (access(buf, X_OK) == 0) {
			struct stat st;

			if (stat(buf, &st) == 0 && !S_ISDIR(st.st_mode))
				return 0;
			denied = 1; /* exec of a directory: EACCES, and execvp searches on */
		} else if (errno == EACCES) {
			denied = 1;
		}
	}
	buf[0] = '\0';
	return denied ? -EACCES : -ENOENT;
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

/* ---- sanitizer runtimes ---------------------------------------------------------- */

static int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

/* An AddressSanitizer runtime (GCC's, clang's -shared-libsan one) */
static int is_asan_runtime(const char *entry)
{
	const char *b = base_name(entry);

	return (starts_with(b, "libasan.so") || starts_with(b, "libclang_rt.asan")) &&
	       strstr(b, ".so") != NULL;
}

/* Any sanitizer's runtime */
static int is_sanitizer_runtime(const char *entry)
{
	static const char *const names[] = { "libasan.so", "libhwasan.so", "liblsan.so",
					     "libtsan.so", "libubsan.so", "libclang_rt." };
	const char *b = base_name(entry);
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (starts_with(b, names[i]) && strstr(b, ".so") != NULL)
			return 1;
	return 0;
}

/*
 * LD_PRELOAD for CMD: the ASan runtimes CMD needs (runtimes, unless
 * LD_PRELOAD begins with an ASan runtime already), the sanitizer runtimes
 * that begin LD_PRELOAD, lib, then the rest of LD_PRELOAD in its order,
 * without lib twice.
 */
static void compose_preload(const char *lib, const char *runtimes)
{
	const char *old = getenv("LD_PRELOAD");
	size_t size, n = 0, lead, i;
	char *list, *copy, **tok, *t, *save;
	int have_asan = 0;

	if (old == NULL)
		old = "";
	size = strlen(lib) + strlen(runtimes) + strlen(old) + 3;
	list = malloc(size);
	copy = strdup(old);
	tok = calloc(strlen(old) / 2 + 1, sizeof(*tok));
	if (list == NULL || copy == NULL || tok == NULL)
		die("out of memory");
	for (t = strtok_r(copy, " :", &save); t != NULL; t = strtok_r(NULL, " :", &save))
		tok[n++] = t;
	for (lead = 0; lead < n && is_sanitizer_runtime(tok[lead]); lead++)
		have_asan |= is_asan_runtime(tok[lead]);
	list[0] = '\0';
	if (!have_asan && runtimes[0] != '\0')
		strcpy(list, runtimes);
	for (i = 0; i < n; i++) {
		if (i == lead) {
			if (list[0] != '\0')
				strcat(list, ":");
			strcat(list, lib);
		}
		if (strcmp(tok[i], lib) == 0)
			continue;
		if (list[0] != '\0')
			strcat(list, ":");
		strcat(list, tok[i]);
	}
	if (lead == n) {
		if (list[0] != '\0')
			strcat(list, ":");
		strcat(list, lib);
	}
	if (setenv("LD_PRELOAD", list, 1) != 0)
		die("cannot set LD_PRELOAD: %s", strerror(errno));
	free(tok);
	free(copy);
	free(list);
}

/*
 * A file a shell would not run as a script when exec says ENOEXEC: an ELF
 * file exec refused, or a NUL before the end of its first line (80 bytes
 * looked at, as bash does). dash and bash then say 126.
 */
static int looks_binary(const char *cmd)
{
	unsigned char head[80];
	ssize_t n;
	int fd = open(cmd, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 1;
	n = read(fd, head, sizeof(head));
	close(fd);
	if (n >= 4 && memcmp(head, ELFMAG, SELFMAG) == 0)
		return 1;
	for (ssize_t i = 0; i < n && head[i] != '\n'; i++)
		if (head[i] == '\0')
			return 1;
	return 0;
}

/*
 * Exec cmd as a shell would (cmd is found already): a text file the kernel
 * does not know how to run (ENOEXEC: no #! line, an empty file) is run by
 * /bin/sh, as sh, bash and execvp do. If that fails: 127 if cmd is not
 * there, else 126, as env(1).
 */
static void __attribute__((noreturn)) exec_command(const char *cmd, char **args)
{
	int err;

	execv(cmd, args);
	err = errno;
	if (err == ENOEXEC && !looks_binary(cmd)) {
		size_t n = 0;
		char **sh;

		while (args[n] != NULL)
			n++;
		sh = calloc(n + 2, sizeof(*sh));
		if (sh != NULL) {
			sh[0] = (char *)"/bin/sh";
			sh[1] = (char *)cmd;
			memcpy(sh + 2, args + 1, n * sizeof(*sh)); /* args[1..n-1] and NULL */
			execv("/bin/sh", sh);
			free(sh);
		}
	}
	die_with(err == ENOENT || err == ENOTDIR ? EXIT_RUN_NOT_FOUND : EXIT_RUN_CANNOT_EXEC, "%s: %s",
		 cmd, strerror(err));
}

/*
 * CMD found (127 if not), executable by us (126 if not: a directory, no
 * x bit, a directory on its path we may not search), and no set-user-ID
 * or set-group-ID program (125: the dynamic linker would ignore LD_PRELOAD).
 */
static void check_command(const char *name, char *cmd, size_t size)
{
	struct stat st;

	if (find_command(name, cmd, size) == -EACCES)
		die_with(EXIT_RUN_CANNOT_EXEC, "%s: %s", name, strerror(EACCES));
	if (cmd[0] == '\0')
		die_with(EXIT_RUN_NOT_FOUND, "%s: command not found", name);
	if (stat(cmd, &st) != 0) {
		/* a path (found, not searched for): say what is wrong with it, as sh does */
		if (errno == ENOENT || errno == ENOTDIR)
			die_with(EXIT_RUN_NOT_FOUND, "%s: %s", name, strerror(errno));
		die_with(EXIT_RUN_CANNOT_EXEC, "%s: %s", cmd, strerror(errno));
	}
	if (S_ISDIR(st.st_mode))
		die_with(EXIT_RUN_CANNOT_EXEC, "%s: %s", cmd, strerror(EISDIR));
	if (access(cmd, X_OK) != 0)
		die_with(EXIT_RUN_CANNOT_EXEC, "%s: %s", cmd, strerror(errno));
	if (st.st_mode & (S_ISUID | S_ISGID))
		die("%s is set-user-ID or set-group-ID: the dynamic linker would ignore "
		    "LD_PRELOAD", cmd);
}

/*
 * Log, with --debug, why CMD runs without the filter. EBUSY: a filter with
 * a listener is in already, a `volatile run` outside this one (or a
 * sandbox's). That run serves CMD's programs when it serves this region,
 * and refuses them when not (EOPNOTSUPP, EPERM for an UNMARK): CMD runs with
 * the preload only all the same, as where seccomp is refused; the line says
 * which.
 */
static void say_refused(int err, const char *why, const char *region)
{
	const char *outer = err == -EBUSY ? getenv("VOLATILE_RUN_REGION") : NULL;

	if (!vl_log_enabled())
		return;
	if (outer != NULL && strcmp(outer, region) == 0)
		fprintf(stderr,
			"volatile run: seccomp refused (%s): the volatile run outside serves "
			"this region\n",
			why);
	else if (outer != NULL)
		fprintf(stderr,
			"volatile run: seccomp refused (%s): the volatile run outside serves "
			"another region (%s): programs the preload cannot reach get "
			"EOPNOTSUPP, EPERM for an UNMARK\n",
			why, outer[0] != '\0' ? outer : "the default one");
	else
		fprintf(stderr,
			"volatile run: seccomp refused (%s): programs the preload cannot "
			"reach get EOPNOTSUPP\n",
			why);
}

/*
 * The supervisor, started before CMD is exec'd in run's place (DESIGN 21):
 * a grandchild, so that CMD, which keeps run's pid, parent, session and
 * terminal, has no child it did not make (the middle process is reaped
 * here), and the supervisor goes to init or the nearest subreaper. All
 * signals stay blocked in it until it has a session of its own: a Ctrl-C
 * to the foreground group meanwhile must not kill it. sock is its end of
 * the pair, closed here once it has it (so that its death reads as the end
 * of other), other ours: 0 once it says it is ready (then it waits on sock
 * for the listener), else -1.
 */
static int start_supervisor(int sock, int other)
{
	sigset_t all, old;
	pid_t mid;
	int status, subreaper = 0;
	char ready;
	ssize_t n;

	/*
	 * A subreaper run (the flag stays through exec: a parent set it and
	 * exec'd run) would get the supervisor back when the middle process
	 * exits: CMD would have a child it did not make, alive as long as
	 * CMD's tree, and a CMD that waits for all its children would wait
	 * for ever. Off until the middle process is reaped, so the supervisor
	 * goes to the subreaper above or init; an orphan of run's own older
	 * children in that window goes there too.
	 */
	if (prctl(PR_GET_CHILD_SUBREAPER, &subreaper, 0, 0, 0) != 0)
		subreaper = 0;
	if (subreaper)
		(void)prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	mid = fork();
	if (mid == 0) {
		pid_t helper = (pid_t)VL_SYSCALL("sv_fork", vl_from_libc(fork()));

		if (helper == 0) {
			close(other);
			vl_sv_helper(sock);
		}
		_exit(helper < 0);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(sock);
	/* ECHILD: SIGCHLD ignored, as CMD may inherit it: reaped by the kernel */
	while (mid > 0 && waitpid(mid, &status, 0) < 0 && errno == EINTR)
		;
	if (subreaper)
		(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	if (mid < 0)
		return -1;
	do
		n = recv(other, &ready, 1, 0);
	while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : -1;
}

/*
 * Put the supervisor's filter on this process, and hand its listener to
 * a supervisor of its own, then exec CMD here: CMD is run, for its shell
 * and its terminal (DESIGN 8). Where the filter or the supervisor cannot
 * be had, CMD runs all the same, with the preload only (a line says why
 * with --debug).
 */
static void run_supervised(const char *cmd, char **args, int aliases)
{
	char why[160], region[PATH_MAX];
	int sv[2], listener;

	vl_sv_region_key(region, sizeof(region));
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		say_refused(-errno, "socketpair", region);
		return;
	}
	if (start_supervisor(sv[1], sv[0]) != 0) {
		close(sv[0]);
		snprintf(why, sizeof(why), "the supervisor did not start");
		say_refused(-ECHILD, why, region);
		return;
	}
	/* after the fork: the supervisor must not be under its own filter */
	listener = vl_sv_install(aliases, region, why, sizeof(why));
	if (listener < 0) {
		say_refused(listener, why, region);
	} else {
		vl_sv_hand(sv[0], listener);
		close(listener);
	}
	/* a supervisor given nothing goes once it reads the end of sv */
	close(sv[0]);
	exec_command(cmd, args);
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = { { "budget", required_argument, NULL, 'b' },
					      { "region", required_argument, NULL, 'r' },
					      { "2012-abi", no_argument, NULL, 'A' },
					      { "debug", no_argument, NULL, 'd' },
					      { "no-seccomp", no_argument, NULL, 'S' },
					      { "help", no_argument, NULL, 'h' },
					      { 0 } };
	char lib[PATH_MAX], cmd[PATH_MAX], runtimes[1024], bad[PATH_MAX + 128];
	const char *abi;
	int c, seccomp = 1;

	die_status = EXIT_RUN_FAILED;
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
		case 'S':
			seccomp = 0;
			break;
		}
	}
	if (optind >= argc)
		die("run needs a command (try 'volatile run --help')");
	/* what CMD's library would ignore, said now, in one line, rather than never */
	if (vl_env_refused(bad, sizeof(bad)))
		die("%s", bad);
	check_command(argv[optind], cmd, sizeof(cmd));
	library_path(lib, sizeof(lib));
	program_needed(cmd, is_asan_runtime, runtimes, sizeof(runtimes));
	compose_preload(lib, runtimes);
	/* the aliases as the shim takes them: VOLATILE_2012_ABI=1, from --2012-abi or not */
	abi = getenv("VOLATILE_2012_ABI");
	if (seccomp)
		run_supervised(cmd, argv + optind, abi != NULL && strcmp(abi, "1") == 0);
	exec_command(cmd, argv + optind);
}
