/* SPDX-License-Identifier: MIT */
/*
 * env.c - environment variables (see env.h and doc/environment.md).
 *
 * Bad values are ignored (a preloaded library cannot complain on the
 * program's stderr); with VOLATILE_DEBUG set they are reported.
 *
 * Every variable is read with secure_getenv: in a secure execution (a
 * set-user-ID or set-group-ID program linked with the library) none is
 * read (DESIGN 9), since whoever ran it chose them: a region file to
 * create or write with the program's rights, a log on its stderr.
 */
#include "env.h"

#include "core/layout.h"
#include "core/parse.h"
#include "log.h"
#include "default_place.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct vl_config config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

/*
 * The log of load(), which runs inside pthread_once: vl_log would ask
 * vl_config() whether to log, that is pthread_once again from its own
 * init routine, which waits for itself for ever. config.debug is read
 * first, so it can be asked directly.
 */
#define load_log(...)                              \
	do {                                       \
		if (config.debug)                  \
			vl_log_write(__VA_ARGS__); \
	} while (0)

/*
 * Why a value is refused, or NULL: each variable's rule, shared by load()
 * (which ignores a refused value, and says so with VOLATILE_DEBUG) and by
 * `volatile run` (vl_env_refused: it refuses to start CMD with one).
 */
static const char *why_not_count(const char *v)
{
	uint64_t n;

	if (vl_parse_size(v, &n) != 0 || n == 0 || n > UINT32_MAX)
		return "is not a count (1 to 4294967295, K, M, G or T allowed)";
	return NULL;
}

static const char *why_not_size(const char *v)
{
	uint64_t n;

	return vl_parse_size(v, &n) != 0 ? "is not a size (bytes, or a number with K, M, G or T)"
					 : NULL;
}

static const char *why_not_threshold(const char *v)
{
	struct vl_threshold t;

	return vl_parse_threshold(v, &t) != 0 ? "is neither a size nor a percentage (0-100%)" : NULL;
}

#define LOCK_WAIT_MS 1000
#define LOCK_WAIT_MAX_MS 3600000

static const char *why_not_duration(const char *v)
{
	uint64_t ms;

	return vl_parse_ms(v, LOCK_WAIT_MAX_MS, &ms) != 0
		       ? "is not a duration (N or Nms milliseconds, Ns seconds; an hour at most)"
		       : NULL;
}

/* a region keeps the name it was made with (fate.path), resolved: it must fit whole */
#define REGION_NAME_MAX (sizeof(((struct vl_fate *)0)->path) - 1)

static const char *why_not_region(const char *v)
{
	char name[PATH_MAX];

	if (v[0] != '/')
		return "is not an absolute path";
	if (strlen(v) >= sizeof(name))
		return "is too long a path";
	/* counted as vl_region_open counts it: once "." and ".." are resolved */
	snprintf(name, sizeof(name), "%s", v);
	vl_path_normalize(name);
	if (strlen(name) > REGION_NAME_MAX)
		return "is too long a name for a region (255 bytes at most)";
	return NULL;
}

/* the shim's aliases (shim/fallocate.c) take "1"; "0" is the same as unset */
static const char *why_not_flag(const char *v)
{
	return strcmp(v, "0") != 0 && strcmp(v, "1") != 0 ? "is neither 0 nor 1" : NULL;
}

/* volatile run's to set (supervise.c): a count of 1 to 99 */
static const char *why_not_filters(const char *v)
{
	if (v[0] >= '1' && v[0] <= '9' && (v[1] == '\0' || (v[1] >= '0' && v[1] <= '9' && v[2] == '\0')))
		return NULL;
	return "is not a count of 1 to 99";
}

static const struct {
	const char *name;
	const char *(*why_not)(const char *v);
} rules[] = {
	{ "VOLATILE_REGION", why_not_region },
	{ "VOLATILE_BUDGET", why_not_size },
	{ "VOLATILE_REGION_RANGES", why_not_count },
	{ "VOLATILE_REGION_FILES", why_not_count },
	{ "VOLATILE_MIN_AVAILABLE", why_not_threshold },
	{ "VOLATILE_TMPFS_MIN_FREE", why_not_threshold },
	{ "VOLATILE_LOCK_WAIT", why_not_duration },
	{ "VOLATILE_2012_ABI", why_not_flag },
	{ "VOLATILE_SECCOMP_FILTERS", why_not_filters },
};

/* The value of name, or NULL if it is unset or empty (both mean: the default). */
static const char *value_of(const char *name)
{
	const char *v = secure_getenv(name);

	return v != NULL && *v != '\0' ? v : NULL;
}

/* Why name's value is refused (NULL: unset, empty, or taken). */
static const char *refusal_of(const char *name, const char *v)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (strcmp(rules[i].name, name) == 0)
			return v != NULL ? rules[i].why_not(v) : NULL;
	return NULL;
}

const char *vl_env_shown(const char *v, char *buf, size_t size)
{
	size_t n = 0;

	for (; *v != '\0' && n + 5 <= size; v++) {
		unsigned char c = (unsigned char)*v;

		if (c < 0x20 || c == 0x7f)
			n += (size_t)snprintf(buf + n, size - n, "\\%03o", c);
		else
			buf[n++] = (char)c;
	}
	if (size > 0)
		buf[n < size ? n : size - 1] = '\0';
	return buf;
}

int vl_env_refused(char *buf, size_t size)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		const char *v = value_of(rules[i].name), *why = v ? rules[i].why_not(v) : NULL;
		char shown[PATH_MAX];

		if (why != NULL) {
			snprintf(buf, size, "%s=%s %s", rules[i].name,
				 vl_env_shown(v, shown, sizeof(shown)), why);
			return 1;
		}
	}
	return 0;
}

/* name's value if it is taken, else NULL, logging why it is ignored and what is used instead */
static const char *taken(const char *name, const char *instead)
{
	const char *v = value_of(name), *why = refusal_of(name, v);
	char shown[PATH_MAX];

	if (why == NULL)
		return v;
	load_log("%s=%s %s: ignored, using %s", name, vl_env_shown(v, shown, sizeof(shown)), why,
		 instead);
	return NULL;
}

static uint32_t capacity_from(const char *name, uint32_t dflt)
{
	char instead[32];
	const char *v;
	uint64_t n;

	snprintf(instead, sizeof(instead), "%u", dflt);
	v = taken(name, instead);
	if (v == NULL || vl_parse_size(v, &n) != 0)
		return dflt;
	return (uint32_t)n;
}

/* SIZE or N%; 0 switches the rule off. */
static void threshold_from(const char *name, struct vl_threshold *t)
{
	const char *v = taken(name, "10%");

	t->is_percent = 1;
	t->percent = 10;
	t->bytes = 0;
	if (v != NULL)
		vl_parse_threshold(v, t);
}

/* A duration: N (milliseconds), Nms or Ns; at most an hour. */
static uint32_t wait_from(const char *name, uint32_t dflt)
{
	char instead[32];
	const char *v;
	uint64_t ms;

	snprintf(instead, sizeof(instead), "%u ms", dflt);
	v = taken(name, instead);
	if (v == NULL || vl_parse_ms(v, LOCK_WAIT_MAX_MS, &ms) != 0)
		return dflt;
	return (uint32_t)ms;
}

static void region_from(void)
{
	const char *v = value_of("VOLATILE_REGION");

	if (v != NULL) {
		/*
		 * A relative one is refused (vl_region_open: EINVAL, and its
		 * log says so), and one too long for us too (ENAMETOOLONG),
		 * never replaced by the default: that would split the
		 * processes given it from those given a shorter name of the
		 * same file.
		 */
		snprintf(config.region, sizeof(config.region), "%s", v);
		/*
		 * One cut at PATH_MAX is kept as it is, still too long: resolved,
		 * the cut prefix could name another, shorter, region.
		 */
		if (strlen(v) < sizeof(config.region))
			vl_path_normalize(config.region);
		snprintf(config.region_why, sizeof(config.region_why), "VOLATILE_REGION");
	} else {
		vl_region_default(config.region, sizeof(config.region), config.region_why,
				  sizeof(config.region_why));
		config.region_chosen = 1;
	}
}

static void load(void)
{
	const char *v;

	memset(&config, 0, sizeof(config));
	v = secure_getenv("VOLATILE_DEBUG");
	config.debug = v != NULL && *v != '\0' && strcmp(v, "0") != 0;

	region_from();
	v = taken("VOLATILE_BUDGET", "no budget");
	/* 0, like every threshold of DESIGN 6, switches it off */
	if (v != NULL && vl_parse_size(v, &config.budget) == 0)
		config.has_budget = config.budget > 0;
	config.create_ranges = capacity_from("VOLATILE_REGION_RANGES", VL_DEFAULT_RANGES);
	config.create_files = capacity_from("VOLATILE_REGION_FILES", VL_DEFAULT_FILES);
	threshold_from("VOLATILE_MIN_AVAILABLE", &config.min_available);
	threshold_from("VOLATILE_TMPFS_MIN_FREE", &config.tmpfs_min_free);
	config.lock_wait_ms = wait_from("VOLATILE_LOCK_WAIT", LOCK_WAIT_MS);
	/* the shim reads it itself (shim/fallocate.c): only the log is ours */
	taken("VOLATILE_2012_ABI", "0 (the 2012 modes are the kernel's)");
	/* volatile run's to set (supervise.c); anything but a small count is none */
	v = taken("VOLATILE_SECCOMP_FILTERS", "none");
	if (v != NULL)
		config.run_filters = (uint32_t)strtoul(v, NULL, 10);
}

const struct vl_config *vl_config_ready;

const struct vl_config *vl_config_load(void)
{
	pthread_once(&config_once, load);
	__atomic_store_n(&vl_config_ready, &config, __ATOMIC_RELEASE);
	return &config;
}

void vl_config_reload(void)
{
	vl_config();
	load();
}

#ifdef VL_FAULT_INJECTION
uint32_t vl_test_seconds(const char *name, uint32_t otherwise)
{
	const char *v = secure_getenv(name);
	uint64_t s;

	if (v != NULL && vl_parse_decimal(&v, &s) == 0 && s <= UINT32_MAX)
		return (uint32_t)s;
	return otherwise;
}
#endif
