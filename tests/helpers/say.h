/* SPDX-License-Identifier: MIT */
/*
 * say.h - what the test programs share: errno by name, a setup step that
 * failed, a sleep that signals do not cut short, a wait for a thread to
 * sleep in a futex. Header-only: each program is one file and builds
 * alone (some without the library).
 */
#ifndef VL_TEST_SAY_H
#define VL_TEST_SAY_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

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
static inline __attribute__((noreturn)) void die(const char *what)
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

/*
 * Wait (15 s at most: a loaded machine may take seconds to get the thread
 * there) until thread tid of this process sleeps in a futex:
 * inside the library that is a wait for a lock of the region (its own
 * locks never sleep there otherwise). 1 seen; 0 not seen, or
 * /proc/self/task/TID/syscall cannot be read here: then half a second has
 * passed, and that must do.
 */
static inline int in_futex(pid_t tid)
{
	char path[64], buf[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	for (int i = 0; i < 1500; i++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

		if (fd >= 0)
			close(fd);
		if (n <= 0) {
			sleep_ms(500);
			return 0;
		}
		buf[n] = '\0';
		if (atol(buf) == SYS_futex && buf[0] >= '0' && buf[0] <= '9')
			return 1;
		sleep_ms(10);
	}
	return 0;
}

/* ---- memfd seals, by name: "seal", "shrink", "grow", "write", "future-write" ---- */

#ifdef F_ADD_SEALS
#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

/* The k-th seal's name and bit (k < 5), in the kernel's order; NULL past the last. */
static inline const char *seal_name(size_t k, int *bit)
{
	static const char *const names[] = { "seal", "shrink", "grow", "write", "future-write" };
	static const int bits[] = { F_SEAL_SEAL, F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_WRITE,
				    F_SEAL_FUTURE_WRITE };

	if (k >= sizeof(names) / sizeof(names[0]))
		return NULL;
	*bit = bits[k];
	return names[k];
}

/* "write,future-write" -> the bits; -1 for a word it does not know */
static inline int seals_of(const char *s)
{
	int bits = 0, bit;

	while (*s != '\0') {
		size_t n = strcspn(s, ","), k;
		const char *name;

		for (k = 0; (name = seal_name(k, &bit)) != NULL; k++)
			if (strlen(name) == n && strncmp(s, name, n) == 0)
				break;
		if (name == NULL)
			return -1;
		bits |= bit;
		s += n + (s[n] == ',');
	}
	return bits;
}

/* the bits -> "seal,future-write", "none" for 0 */
static inline const char *seals_str(int bits)
{
	static char buf[128];
	const char *name;
	int bit;

	buf[0] = '\0';
	for (size_t k = 0; (name = seal_name(k, &bit)) != NULL; k++) {
		if (!(bits & bit))
			continue;
		if (buf[0] != '\0')
			strcat(buf, ",");
		strcat(buf, name);
		bits &= ~bit;
	}
	if (bits != 0)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s0x%x",
			 buf[0] != '\0' ? "," : "", (unsigned)bits);
	return buf[0] != '\0' ? buf : "none";
}
#endif

/* A size or number argument: decimal, 0x hex or octal, with K, M or G (powers of 1024). */
static inline uint64_t say_num(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'K': v <<= 10; break;
	case 'M': v <<= 20; break;
	case 'G': v <<= 30; break;
	default: break;
	}
	return v;
}

/* A protection argument: "none", a number, or letters of "rwx". */
static inline int say_prot(const char *s)
{
	int p = 0;

	if (strcmp(s, "none") == 0)
		return 0;
	if (s[0] >= '0' && s[0] <= '9')
		return (int)say_num(s);
	for (; *s; s++)
		p |= *s == 'r' ? PROT_READ : *s == 'w' ? PROT_WRITE : *s == 'x' ? PROT_EXEC : 0;
	return p;
}

#endif
