/* SPDX-License-Identifier: MIT */
/*
 * waitstat - a parent that says what it sees of a child: every report
 * wait4(WUNTRACED | WCONTINUED) gives (exit code, death by a signal and
 * the core flag, stops, continues), the child's rusage, and whether the
 * process it forked is the one the program runs in. run-transparent.sh
 * runs the same program directly and under `volatile run --` and compares
 * what this parent saw.
 *
 *   waitstat sweep VT [WRAPPER...]
 *	One line per case, each a child running WRAPPER... VT ... (vt, with
 *	its stdout on /dev/null and no core limit but 0, so that no core
 *	file is left in the directory):
 *	  "exit N: REPORTS"              VT exit N, N = 0 to 255
 *	  "signal S BY: REPORTS"         S = 1 to 64, sent BY
 *	      self    VT itself: kill(getpid(), S)
 *	      parent  this parent, to the pid it forked
 *	      other   this process, to the pid VT says it has (getpid())
 *	  VT runs "report 3 [kill S] hold 3 exit 42": it says its pid on fd 3
 *	  (a socket), then waits for end of file there before it exits 42.
 *   waitstat once [--core] [--report] [--pgrp] [--group SIG] [--signal SIG] -- CMD...
 *	One child running CMD, fd 3 a socket to this parent, its stdout ours:
 *	  --core        no limit on the size of a core (`ulimit -c unlimited`;
 *	                the hard limit where it cannot be raised: exit status
 *	                3 when that is 0, a core is then impossible)
 *	  --report      wait for CMD's "pid P ppid Q" on fd 3 (vt's report)
 *	                and print "pid: ..." and "ppid: ..." lines
 *	  --pgrp        the child in a process group of its own; with
 *	                --report, print "group: ..." (who else is in it)
 *	  --group SIG   then send SIG to that process group
 *	  --signal SIG  then send SIG to the pid forked
 *	then close fd 3's other end, wait for the end (a stop is continued),
 *	and print "status: REPORTS", "maxrss = N KiB", "cpu = N us" (user
 *	and system time, from wait4's rusage).
 *
 * A child starts with no signal blocked and every signal's default action,
 * whatever this process inherited.
 *
 * REPORTS: what wait4 said, in order, joined by ", ": "exited N",
 * "killed by S", "killed by S (core dumped)", "stopped by S", "continued";
 * or what did not come: "CMD stopped, parent not told" (VT's own pid was
 * stopped for half a second while wait4 said nothing: it is then
 * continued), "nothing within 3 s" (no report came where the default
 * action of the signal makes one: a death or a stop).
 *
 * What this parent waits for follows the signal's default action, as the
 * kernel takes it for a program that changed none (signal(7)): it waits
 * for a death after a terminating one, for a stop and then a continue
 * after a stopping one (continued by SIGCONT to the pid the stop was sent
 * to), and for nothing after one ignored; then it closes the socket and
 * waits for the exit. The bounds (3 s, half a second) only end waits for
 * what the kernel reports at once, in a case already answered wrong.
 *
 * Exit status: 0, 2 on bad usage or a failing system call, 3 (--core) when
 * no core may be written.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BOUND_MS 3000
#define UNSEEN_STOP_MS 500
#define SLICE_MS 10

struct child {
	pid_t pid;	 /* the pid forked */
	pid_t cmd;	 /* the pid the program says it has, or 0 */
	pid_t cmd_ppid;	 /* and its parent's */
	int sock;	 /* our end of its fd 3, or -1 */
	char seen[512];	 /* REPORTS */
	int ended;	 /* it exited or was killed */
	struct rusage ru; /* wait4's, at the end */
};

static sigset_t chld;

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("waitstat: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void note(struct child *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct child *c, const char *fmt, ...)
{
	size_t used = strlen(c->seen);
	va_list ap;

	if (used > 0 && used < sizeof(c->seen) - 2) {
		strcpy(c->seen + used, ", ");
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(c->seen + used, sizeof(c->seen) - used, fmt, ap);
	va_end(ap);
}

/*
 * Every signal's default action, through the kernel's own sigaction:
 * glibc's refuses its signals 32 and 33, and an ignored one stays ignored
 * across exec (make check's shell was started with 32 and 33 ignored here).
 */
static void default_actions(void)
{
	struct {
		void (*handler)(int);
		unsigned long flags;
		void (*restorer)(void);
		uint64_t mask;
	} dfl = { SIG_DFL, 0, NULL, 0 };

	for (int sig = 1; sig <= 64; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(dfl.mask));
}

/* Fork and exec argv: fd 3 a socket to us (with_sock), stdout on /dev/null (quiet). */
static void start(struct child *c, char **argv, int with_sock, int pgrp, int quiet)
{
	int sv[2] = { -1, -1 };

	memset(c, 0, sizeof(*c));
	c->sock = -1;
	if (with_sock && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		die("socketpair: %s", strerror(errno));
	fflush(stdout);
	c->pid = fork();
	if (c->pid < 0)
		die("fork: %s", strerror(errno));
	if (c->pid == 0) {
		sigset_t none;

		default_actions();
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (pgrp)
			setpgid(0, 0);
		if (with_sock && dup2(sv[1], 3) != 3)
			_exit(126);
		if (quiet) {
			int null = open("/dev/null", O_WRONLY);

			if (null < 0 || dup2(null, 1) != 1)
				_exit(126);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "waitstat: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	/* (both sides: whichever runs first; EACCES once it has exec'd) */
	if (pgrp)
		setpgid(c->pid, c->pid);
	if (with_sock) {
		close(sv[1]);
		c->sock = sv[0];
	}
}

/* CMD's "pid P ppid Q" on the socket: 0, or -1 (it ended, or said nothing in 3 s) */
static int read_report(struct child *c)
{
	struct pollfd p = { c->sock, POLLIN, 0 };
	char line[64];
	size_t got = 0;
	int pid, ppid;

	while (got < sizeof(line) - 1 && (got == 0 || line[got - 1] != '\n')) {
		ssize_t n;

		if (poll(&p, 1, BOUND_MS) <= 0)
			return -1;
		n = read(c->sock, line + got, sizeof(line) - 1 - got);
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	line[got] = '\0';
	if (sscanf(line, "pid %d ppid %d", &pid, &ppid) != 2)
		return -1;
	c->cmd = pid;
	c->cmd_ppid = ppid;
	return 0;
}

/* the state letter of /proc/PID/stat (after the parenthesized name), or 0 */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *close_paren;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	close_paren = strrchr(buf, ')');
	return close_paren != NULL && close_paren[1] == ' ' ? close_paren[2] : 0;
}

enum got { NOTHING, REPORT, UNSEEN_STOP };

/*
 * The child's next wait4 report, noted in its REPORTS, within ms. With
 * watch_stop, CMD's own pid found stopped for UNSEEN_STOP_MS while wait4
 * says nothing ends the wait too.
 */
static enum got next_report(struct child *c, int ms, int watch_stop, int *status)
{
	struct timespec slice = { 0, SLICE_MS * 1000 * 1000 };
	int waited = 0, stopped_for = 0;

	for (;;) {
		pid_t r = wait4(c->pid, status, WNOHANG | WUNTRACED | WCONTINUED, &c->ru);

		if (r < 0 && errno != EINTR)
			die("wait4: %s", strerror(errno));
		if (r == c->pid)
			break;
		if (watch_stop && c->cmd > 0) {
			char st = proc_state(c->cmd);

			stopped_for = st == 'T' ? stopped_for + SLICE_MS : 0;
			if (stopped_for >= UNSEEN_STOP_MS) {
				note(c, "CMD stopped, parent not told");
				return UNSEEN_STOP;
			}
		}
		if (waited >= ms)
			return NOTHING;
		sigtimedwait(&chld, NULL, &slice);
		waited += SLICE_MS;
	}
	if (WIFEXITED(*status)) {
		note(c, "exited %d", WEXITSTATUS(*status));
		c->ended = 1;
	} else if (WIFSIGNALED(*status)) {
		note(c, "killed by %d%s", WTERMSIG(*status),
		     WCOREDUMP(*status) ? " (core dumped)" : "");
		c->ended = 1;
	} else if (WIFSTOPPED(*status)) {
		note(c, "stopped by %d", WSTOPSIG(*status));
	} else if (WIFCONTINUED(*status)) {
		note(c, "continued");
	}
	return REPORT;
}

/* a stop reported: SIGCONT to cont_pid, and the continue reported */
static void continue_it(struct child *c, pid_t cont_pid)
{
	int status;

	kill(cont_pid, SIGCONT);
	if (next_report(c, BOUND_MS, 0, &status) == NOTHING)
		note(c, "nothing within 3 s");
}

/* What a stop, a death or nothing the signal's default action makes. */
enum action { TERMINATE, STOP, IGNORE };

static enum action default_action(int sig)
{
	switch (sig) {
	case SIGSTOP:
	case SIGTSTP:
	case SIGTTIN:
	case SIGTTOU:
		return STOP;
	case SIGCHLD:
	case SIGCONT:
	case SIGURG:
	case SIGWINCH:
		return IGNORE;
	default:
		return TERMINATE;
	}
}

/* After a signal whose default action is act, sent to sent_to: its reports. */
static void after_signal(struct child *c, enum action act, pid_t sent_to)
{
	int status;
	enum got g;

	if (act == IGNORE)
		return;
	g = next_report(c, BOUND_MS, act == STOP, &status);
	if (g == NOTHING)
		note(c, "nothing within 3 s");
	else if (g == UNSEEN_STOP)
		kill(c->cmd, SIGCONT);
	else if (!c->ended && WIFSTOPPED(status))
		continue_it(c, sent_to);
}

/* Close our end of fd 3 and wait for the end; stops are continued, at most 8. */
static void finish(struct child *c)
{
	int status, stops = 0;

	if (c->sock >= 0) {
		close(c->sock);
		c->sock = -1;
	}
	while (!c->ended) {
		if (next_report(c, BOUND_MS, 0, &status) == NOTHING || stops > 8) {
			note(c, "no exit within 3 s");
			kill(c->pid, SIGKILL);
			if (c->cmd > 0 && c->cmd != c->pid)
				kill(c->cmd, SIGKILL);
			wait4(c->pid, &status, 0, &c->ru);
			c->ended = 1;
		} else if (!c->ended && WIFSTOPPED(status)) {
			stops++;
			kill(c->pid, SIGCONT);
		}
	}
	/* a CMD that outlived the pid we forked (a parent of its own): let it end */
	if (c->cmd > 0 && c->cmd != c->pid && proc_state(c->cmd) == 'T')
		kill(c->cmd, SIGCONT);
}

/* argv: the wrapper's words, then the words given */
static char **command(char **wrapper, int n_wrapper, const char *const *words)
{
	static char *argv[64];
	int k = 0;

	for (int i = 0; i < n_wrapper && k < 60; i++)
		argv[k++] = wrapper[i];
	for (int i = 0; words[i] != NULL && k < 63; i++)
		argv[k++] = (char *)words[i];
	argv[k] = NULL;
	return argv;
}

static void sweep_exit(const char *vt, char **wrapper, int n_wrapper, int code)
{
	char n[16];
	const char *const words[] = { vt, "exit", n, NULL };
	struct child c;

	snprintf(n, sizeof(n), "%d", code);
	start(&c, command(wrapper, n_wrapper, words), 0, 0, 1);
	finish(&c);
	printf("exit %d: %s\n", code, c.seen);
}

static void sweep_signal(const char *vt, char **wrapper, int n_wrapper, int sig, const char *by)
{
	char s[16];
	const char *const own[] = { vt, "report", "3", "kill", s, "hold", "3", "exit", "42", NULL };
	const char *const held[] = { vt, "report", "3", "hold", "3", "exit", "42", NULL };
	int self = strcmp(by, "self") == 0;
	struct child c;
	pid_t to;

	snprintf(s, sizeof(s), "%d", sig);
	start(&c, command(wrapper, n_wrapper, self ? own : held), 1, 0, 1);
	if (read_report(&c) != 0) {
		note(&c, "no report on fd 3");
	} else {
		to = strcmp(by, "parent") == 0 ? c.pid : c.cmd;
		if (!self)
			kill(to, sig);
		after_signal(&c, default_action(sig), to);
	}
	finish(&c);
	printf("signal %d %s: %s\n", sig, by, c.seen);
}

static int sweep(int argc, char **argv)
{
	static const char *const by[] = { "self", "parent", "other" };
	struct rlimit no_core = { 0, 0 };

	if (argc < 3)
		die("usage: waitstat sweep VT [WRAPPER...]");
	getrlimit(RLIMIT_CORE, &no_core);
	no_core.rlim_cur = 0;
	if (setrlimit(RLIMIT_CORE, &no_core) != 0)
		die("setrlimit(RLIMIT_CORE, 0): %s", strerror(errno));
	for (int code = 0; code <= 255; code++)
		sweep_exit(argv[2], argv + 3, argc - 3, code);
	for (int sig = 1; sig <= 64; sig++)
		for (size_t i = 0; i < sizeof(by) / sizeof(by[0]); i++)
			sweep_signal(argv[2], argv + 3, argc - 3, sig, by[i]);
	return 0;
}

static int signal_number(const char *arg)
{
	static const struct {
		const char *name;
		int sig;
	} sigs[] = { { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "TERM", SIGTERM },
		     { "INT", SIGINT },	  { "HUP", SIGHUP },   { "CONT", SIGCONT } };
	char *end;
	long n;

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (strcmp(arg, sigs[i].name) == 0)
			return sigs[i].sig;
	n = strtol(arg, &end, 10);
	if (*end != '\0' || n < 1 || n > 64)
		die("'%s' is not a signal", arg);
	return (int)n;
}

static void print_identity(const struct child *c)
{
	if (c->cmd == c->pid)
		printf("pid: CMD's getpid() is the pid forked\n");
	else
		printf("pid: CMD's getpid() is %d, not the pid forked (%d)\n", (int)c->cmd,
		       (int)c->pid);
	if (c->cmd_ppid == getpid())
		printf("ppid: CMD's getppid() is its parent, waitstat\n");
	else
		printf("ppid: CMD's getppid() is %d, not waitstat (%d)\n", (int)c->cmd_ppid,
		       (int)getpid());
}

/* no core size limit: infinity if the hard limit may be raised, else the hard limit */
static void unlimited_core(void)
{
	struct rlimit r = { RLIM_INFINITY, RLIM_INFINITY };

	if (setrlimit(RLIMIT_CORE, &r) == 0)
		return;
	if (getrlimit(RLIMIT_CORE, &r) != 0)
		die("getrlimit(RLIMIT_CORE): %s", strerror(errno));
	if (r.rlim_max == 0) {
		fprintf(stderr, "waitstat: the hard limit of a core's size is 0 here\n");
		exit(3);
	}
	r.rlim_cur = r.rlim_max;
	if (setrlimit(RLIMIT_CORE, &r) != 0)
		die("setrlimit(RLIMIT_CORE): %s", strerror(errno));
}

/*
 * "group: CMD alone", or "group: CMD and pid N (NAME)..." for each other
 * process in the group the child was put in (its pgid, the pid forked).
 */
static void print_group(const struct child *c)
{
	DIR *proc = opendir("/proc");
	struct dirent *e;
	int others = 0;

	if (proc == NULL)
		die("/proc: %s", strerror(errno));
	printf("group: CMD");
	while ((e = readdir(proc)) != NULL) {
		char path[300], buf[512], name[64] = "?", *paren;
		int pid = atoi(e->d_name), ppid, pgrp, fd;
		ssize_t n;

		if (pid <= 0 || pid == c->cmd)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		paren = strrchr(buf, ')');
		if (paren == NULL || sscanf(paren + 1, " %*c %d %d", &ppid, &pgrp) != 2 ||
		    pgrp != c->pid)
			continue;
		if (strchr(buf, '(') != NULL)
			sscanf(strchr(buf, '(') + 1, "%63[^)]", name);
		printf("%s pid %d (%s)", others++ ? "," : " and", pid, name);
	}
	closedir(proc);
	printf("%s\n", others ? "" : " alone");
}

static int once(int argc, char **argv)
{
	int report = 0, pgrp = 0, group_sig = 0, sig = 0, i;
	struct child c;

	for (i = 2; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--core") == 0)
			unlimited_core();
		else if (strcmp(argv[i], "--report") == 0)
			report = 1;
		else if (strcmp(argv[i], "--pgrp") == 0)
			pgrp = 1;
		else if (strcmp(argv[i], "--group") == 0 && i + 1 < argc)
			group_sig = signal_number(argv[++i]);
		else if (strcmp(argv[i], "--signal") == 0 && i + 1 < argc)
			sig = signal_number(argv[++i]);
		else
			die("unknown option '%s'", argv[i]);
	}
	if (i + 1 >= argc)
		die("usage: waitstat once [OPTIONS] -- CMD...");
	if (group_sig && !pgrp)
		die("--group needs --pgrp");
	start(&c, argv + i + 1, 1, pgrp, 0);
	if (report) {
		if (read_report(&c) != 0)
			die("CMD said no \"pid P ppid Q\" on fd 3");
		print_identity(&c);
		if (pgrp)
			print_group(&c);
	}
	if (group_sig && kill(-c.pid, group_sig) != 0)
		die("kill(-%d, %d): %s", (int)c.pid, group_sig, strerror(errno));
	if (sig && kill(c.pid, sig) != 0)
		die("kill(%d, %d): %s", (int)c.pid, sig, strerror(errno));
	finish(&c);
	printf("status: %s\n", c.seen);
	printf("maxrss = %ld KiB\n", c.ru.ru_maxrss);
	printf("cpu = %lld us\n",
	       (long long)(c.ru.ru_utime.tv_sec + c.ru.ru_stime.tv_sec) * 1000000 +
		       c.ru.ru_utime.tv_usec + c.ru.ru_stime.tv_usec);
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* SIGCHLD taken by sigtimedwait: blocked, and not ignored (that would reap) */
	sigaction(SIGCHLD, &dfl, NULL);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	if (argc >= 2 && strcmp(argv[1], "sweep") == 0)
		return sweep(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "once") == 0)
		return once(argc, argv);
	die("usage: waitstat sweep VT [WRAPPER...] | waitstat once [OPTIONS] -- CMD...");
}
