/* SPDX-License-Identifier: MIT */
/*
 * log.c - debug log. One write(2) per line, formatted on the stack: no
 * stdio buffer of the host program is touched, nothing is allocated.
 */
#include "log.h"

#include "env.h"
#include "sys.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

void vl_log_write(const char *fmt, ...)
{
	char buf[512];
	int saved = errno, n, k;
	va_list ap;

	n = snprintf(buf, sizeof(buf), "libvolatile[%d]: ", (int)getpid());
	va_start(ap, fmt);
	k = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	n += k < 0 ? 0 : k;
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (vl_raw_write(STDERR_FILENO, buf, (size_t)n) < 0) {
		/* nothing to do: the log is best effort */
	}
	errno = saved;
}
