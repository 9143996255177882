/* SPDX-License-Identifier: MIT */
/*
 * env.c - environment variables (see env.h and the README).
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
#include "where.h"

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

static uint32_t capacity_from(const char *name, uint32_t dflt)
{
	const char *v = secure_getenv(name);
	uint64_t n;

	if (v == NULL || *v == '\0')
		return dflt;
	if (vl_parse_size(v, &n) != 0 || n == 0 || n > UINT32_MAX) {
		load_log("%s=%s is not a count; using %u", name, v, dflt);
		return dflt;
	}
	return (uint32_t)n;
}

/* SIZE or N%; 0 switches the rule off. */
static void threshold_from(const char *name, struct vl_threshold *t)
{
	const char *v = secure_getenv(name);

	t->is_percent = 1;
	t->percent = 10;
	t->bytes = 0;
	if (v != NULL && *v != '\0' && vl_parse_threshold(v, t) != 0) {
		load_log("%s=%s is neither a size nor a percentage; using 10%%", name, v);
		t->is_percent = 1;
		t->percent = 10;
		t->bytes = 0;
	}
}

#define LOCK_WAIT_MS 1000
#define LOCK_WAIT_MAX_MS 3600000

/* A duration: N (milliseconds), Nms or Ns; at most an hour. */
static uint32_t wait_from(const char *name, uint32_t dflt)
{
	const char *v = secure_getenv(name);
	uint64_t ms;

	if (v == NULL || *v == '\0')
		return dflt;
	if (vl_parse_ms(v, LOCK_WAIT_MAX_MS, &ms) == 0)
		return (uint32_t)ms;
	load_log("%s=%s is not a duration (N, Nms, Ns, an hour at most); using %u ms", name, v,
		 dflt);
	return dflt;
}

static void load(void)
{
	const char *v;

	memset(&config, 0, sizeof(config));
	v = secure_getenv("VOLATILE_DEBUG");
	config.debug = v != NULL && *v != '\0' && strcmp(v, "0") != 0;

	v = secure_getenv("VOLATILE_REGION");
	if (v != NULL && *v != '\0') {
		/*
		 * One too long for us is refused (vl_region_open: ENAMETOOLONG),
		 * never replaced by the default: that would split the processes
		 * given it from those given a shorter name of the same file.
		 */
		snprintf(config.region, sizeof(config.region), "%s", v);
		if (strlen(v) >= sizeof(config.region))
			config.region[sizeof(config.region) - 2] = '\0'; /* still too long */
		vl_path_normalize(config.region);
		snprintf(config.region_why, sizeof(config.region_why), "VOLATILE_REGION");
	} else {
		vl_region_default(config.region, sizeof(config.region), config.region_why,
				  sizeof(config.region_why));
		config.region_chosen = 1;
	}

	v = secure_getenv("VOLATILE_BUDGET");
	if (v != NULL && *v != '\0') {
		/* 0, like every threshold of DESIGN 6, switches it off */
		if (vl_parse_size(v, &config.budget) == 0)
			config.has_budget = config.budget > 0;
		else
			load_log("VOLATILE_BUDGET=%s is not a size; no budget", v);
	}
	config.create_ranges = capacity_from("VOLATILE_REGION_RANGES", VL_DEFAULT_RANGES);
	config.create_files = capacity_from("VOLATILE_REGION_FILES", VL_DEFAULT_FILES);
	threshold_from("VOLATILE_MIN_AVAILABLE", &config.min_available);
	threshold_from("VOLATILE_TMPFS_MIN_FREE", &config.tmpfs_min_free);
	config.lock_wait_ms = wait_from("VOLATILE_LOCK_WAIT", LOCK_WAIT_MS);
	/* volatile run's to set (supervise.c); anything but a small count is none */
	v = secure_getenv("VOLATILE_SECCOMP_FILTERS");
	if (v != NULL && v[0] >= '1' && v[0] <= '9' &&
	    (v[1] == '\0' || (v[1] >= '0' && v[1] <= '9' && v[2] == '\0')))
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
