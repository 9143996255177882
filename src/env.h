/* SPDX-License-Identifier: MIT */
/*
 * env.h - the environment, read once per process (DESIGN 9).
 */
#ifndef VL_ENV_H
#define VL_ENV_H

#include "core/parse.h"

#include <limits.h>
#include <stdint.h>

struct vl_config {
	char region[PATH_MAX];   /* VOLATILE_REGION, or the per-user default */
	char region_why[128];    /* why there: "VOLATILE_REGION", or default_place.c's reason */
	int region_chosen;       /* not VOLATILE_REGION: chosen by default_place.c, and again later */
	uint64_t budget;         /* VOLATILE_BUDGET */
	int has_budget;
	int debug;               /* VOLATILE_DEBUG */
	uint32_t create_ranges;  /* VOLATILE_REGION_RANGES: capacity of a new region */
	uint32_t create_files;   /* VOLATILE_REGION_FILES */
	struct vl_threshold min_available;  /* VOLATILE_MIN_AVAILABLE (10%) */
	struct vl_threshold tmpfs_min_free; /* VOLATILE_TMPFS_MIN_FREE (10%) */
	uint32_t lock_wait_ms;   /* VOLATILE_LOCK_WAIT: the longest wait for a lock (1 s) */
	uint32_t run_filters;    /* VOLATILE_SECCOMP_FILTERS: this many seccomp filters are
				    volatile run's, which trap nothing but volatile calls (punch.c) */
};

/* The environment once read (NULL before: vl_config_load reads it, once). */
extern const struct vl_config *vl_config_ready;
const struct vl_config *vl_config_load(void);

/*
 * Every MARK asks, and every call's log: one load once it is read,
 * inline, not a call (and not a pthread_once call).
 */
static inline const struct vl_config *vl_config(void)
{
	const struct vl_config *c = __atomic_load_n(&vl_config_ready, __ATOMIC_ACQUIRE);

	return c != NULL ? c : vl_config_load();
}

/*
 * The first VOLATILE_* variable whose value the library would ignore (or,
 * VOLATILE_REGION, refuse): "NAME=VALUE why" in buf, and 1; 0 if none.
 * `volatile run` refuses to start a program with one (DESIGN 8).
 */
int vl_env_refused(char *buf, size_t size);

/*
 * A variable's value as a message may quote it: on one line, no byte a
 * terminal acts on (a control byte is shown as \ooo); cut to fit buf.
 */
const char *vl_env_shown(const char *v, char *buf, size_t size);

/* Read the environment again (after fork+setenv, and in tests). */
void vl_config_reload(void);

/*
 * A time the test suite's copy of the library (core/fault.h) may be told
 * shorter, in seconds, so that a test need not wait it out: the value of
 * the variable name if it is a decimal there, else otherwise. The
 * installed library never reads it, nor carries its name: a macro there
 * (tests/shell/fault-release.sh).
 */
#ifdef VL_FAULT_INJECTION
uint32_t vl_test_seconds(const char *name, uint32_t otherwise);
#else
#define vl_test_seconds(name, otherwise) (otherwise)
#endif

#endif
