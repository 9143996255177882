/*
 * say.h - what the test programs share: errno by name, a setup step that
 * failed, a sleep that signals do not cut short. Header-only: each
 * program is one file and builds alone (some without the library).
 */
#ifndef VL_TEST_SAY_H
#define VL_TEST_SAY_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* "EPERM", or "E<n>" for a number glibc has no name for */
static inline const char *ename(int e)
{
	static char buf[32];
	const char *n = strerrorname_np(e);

	if (n != NULL)
		return n;
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

/* A step of the test's own setup failed: say which, exit 2 (not a finding). */
static inline void die(const char *what)
{
	printf("setup: %s: %s\n", what, ename(errno));
	exit(2);
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

#endif
