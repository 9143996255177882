/* SPDX-License-Identifier: MIT */
/* log.h - VOLATILE_DEBUG=1 logs each decision to stderr; nothing otherwise. */
#ifndef VL_LOG_H
#define VL_LOG_H

#include "env.h"

void vl_log_write(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* inline: every MARK and UNMARK asks it once, for its line */
static inline int vl_log_enabled(void)
{
	return vl_config()->debug;
}

#define vl_log(...)                          \
	do {                                 \
		if (vl_log_enabled())        \
			vl_log_write(__VA_ARGS__); \
	} while (0)

#endif
