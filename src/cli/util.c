/* SPDX-License-Identifier: MIT */
/*
 * util.c - what the subcommands share.
 */
#include "cli.h"

#include "env.h"
#include "core/parse.h"
#include "region.h"
#include "sys.h"

#include <errno.h>
#include <pwd.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int die_status = EXIT_USAGE;

static void say_error(const char *fmt, va_list ap)
{
	fflush(stdout);
	fputs("volatile: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say_error(fmt, ap);
	va_end(ap);
	exit(die_status);
}

void die_with(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say_error(fmt, ap);
	va_end(ap);
	exit(status);
}

uint64_t size_arg(const char *what, const char *s)
{
	uint64_t v;
	int err = vl_parse_size(s, &v);

	if (err == -ERANGE)
		die("%s '%s' is too large", what, s);
	if (err)
		die("%s '%s' is not a size (bytes, or a number with K, M, G or T)", what, s);
	return v;
}

int next_opt(int argc, char **argv, const char *shortopts, const struct option *longopts,
	     const char *help)
{
	int c;

	opterr = 0; /* our own one-line message instead of getopt's */
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (c == 'h') {
		fputs(help, stdout);
		exit(0);
	}
	if (c == '?' || c == ':') {
		const char *bad = argv[optind - 1 < argc ? optind - 1 : argc - 1];

		if (c == ':' || (optopt && strchr(shortopts, optopt)))
			die("%s: option '%s' needs a value (try 'volatile %s --help')", argv[0], bad,
			    argv[0]);
		die("%s: unknown option '%s' (try 'volatile %s --help')", argv[0], bad, argv[0]);
	}
	return c;
}

const char *threshold_text(const struct vl_threshold *t, char *buf, size_t size)
{
	if (!vl_threshold_on(t))
		snprintf(buf, size, "0 (off)");
	else if (t->is_percent)
		snprintf(buf, size, "%u%%", t->percent);
	else
		snprintf(buf, size, "%llu bytes", (unsigned long long)t->bytes);
	return buf;
}

const char *not_private_file(const struct stat *st, char *buf, size_t size)
{
	struct passwd *pw;

	if (S_ISLNK(st->st_mode))
		return "it is a symlink";
	if (!S_ISREG(st->st_mode))
		return "it is not a regular file";
	if (st->st_uid != geteuid()) {
		pw = getpwuid(st->st_uid);
		snprintf(buf, size, "it belongs to uid %u (%s), not to this user",
			 (unsigned)st->st_uid, pw != NULL ? pw->pw_name : "no such user");
		return buf;
	}
	if (st->st_mode & 077) {
		snprintf(buf, size, "its mode %04o lets others in", (unsigned)(st->st_mode & 07777));
		return buf;
	}
	if (st->st_nlink != 1) {
		snprintf(buf, size, "it has %u names (a hard link was made to it)",
			 (unsigned)st->st_nlink);
		return buf;
	}
	return NULL;
}

/* Why the region at path was refused with EACCES, as far as a look tells. */
static const char *refusal(const char *path, char *buf, size_t size)
{
	struct stat st;
	const char *why;

	if (lstat(path, &st) != 0)
		return "a symlink on its path";
	why = not_private_file(&st, buf, size);
	return why != NULL ? why : "not a private file of this user";
}

/*
 * The library refuses a relative region (EINVAL, see vl_region_open);
 * the command says why, before it makes any file beside it.
 */
const char *region_path(void)
{
	const char *path = vl_config()->region;
	char shown[PATH_MAX];

	if (path[0] != '/')
		die("VOLATILE_REGION=%s is not an absolute path",
		    vl_env_shown(path, shown, sizeof(shown)));
	return path;
}

/* The region at path, made if create; once open, one made anew looks for older ones (move.c). */
static int open_at(const char *path, struct vl_region *r, int create)
{
	const struct vl_config *cfg = vl_config();
	int err = vl_region_open(path,
				 create ? VL_OPEN_CREATE | (cfg->region_chosen ? VL_OPEN_CHOSEN : 0) : 0,
				 cfg->create_ranges, cfg->create_files, r);

	if (err == 0)
		vl_region_settle(r);
	return err;
}

int try_open_region(struct vl_region *r)
{
	/* a relative name: vl_region_open's EINVAL */
	return open_at(vl_config()->region, r, 0);
}

int open_region(struct vl_region *r, int create)
{
	const struct vl_config *cfg = vl_config();
	int err = open_at(region_path(), r, create);
	char why[160];

	if (err == -ENOENT && !create)
		return err;
	if (err == -EACCES)
		die("region %s refused: %s (%s)", cfg->region, refusal(cfg->region, why, sizeof(why)),
		    strerror(EACCES));
	if (err == -EUCLEAN)
		die("region %s is corrupt (%s)", cfg->region, strerror(EUCLEAN));
	if (err == -EPROTO)
		/* an upgrade's case (README): what is in it is another version's to answer for */
		die("region %s was made by an incompatible version (%s): remove it once no program "
		    "of that version uses it, or reboot",
		    cfg->region, strerror(EPROTO));
	if (err)
		die("region %s: %s", cfg->region, strerror(-err));
	return 0;
}

struct status_field {
	const char *key;
	size_t len;
	int nth;
	long value;
};

static int on_status_field(void *arg, char *line)
{
	struct status_field *sf = arg;
	char *p = line + sf->len, *end;

	if (strncmp(line, sf->key, sf->len) != 0)
		return 0;
	for (int i = 0; i <= sf->nth; i++, p = end) {
		long v = strtol(p, &end, 10);

		if (end == p)
			return 1; /* fewer numbers than asked for: -1 */
		if (i == sf->nth)
			sf->value = v;
	}
	return 1;
}

long proc_status_number(const char *path, const char *key, int nth)
{
	struct status_field sf = { key, strlen(key), nth, -1 };

	vl_each_line(path, on_status_field, &sf);
	return sf.value;
}

int proc_ns_link(int nsdir, pid_t tid, const char *name, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	if (nsdir >= 0) {
		n = readlinkat(nsdir, name, buf, size - 1);
	} else {
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)tid, name);
		n = readlink(path, buf, size - 1);
	}
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	return (int)n;
}
