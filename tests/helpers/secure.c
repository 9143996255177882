/* SPDX-License-Identifier: MIT */
/*
 * secure - a program linked with -lvolatile (not preloaded: the dynamic
 * linker ignores LD_PRELOAD in a secure execution, but not a library the
 * program needs), for tests/shell/secure.sh. Installed set-user-ID, it
 * runs in a secure execution, where the library must read no VOLATILE_*
 * variable (DESIGN 9). It prints, one line each:
 *
 *   secure = N          getauxval(AT_SECURE)
 *   euid = N            whose default region the library uses
 *   mark = R            MARK of the first page of a memfd: 0 or -1 ENAME
 *   unmark = R          UNMARK of it: 0, 1 or -1 ENAME
 *   collapse = R        mode 0x08 on it: UNMARK (0) with the 2012 aliases on,
 *                       else the kernel's COLLAPSE_RANGE, refused on a memfd
 *
 * Exit status 0, or 1 if no memfd could be made.
 */
#include <volatile.h>

#include <errno.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * Under AddressSanitizer (--enable-sanitizers), LeakSanitizer cannot stop
 * the threads of a set-user-ID process to scan them (it is not dumpable)
 * and fails the exit; ASAN_OPTIONS may not reach it there to say
 * detect_leaks=0, so the program says it.
 */
#if defined(__SANITIZE_ADDRESS__)
int __lsan_is_turned_off(void);
__attribute__((visibility("default"))) int __lsan_is_turned_off(void)
{
	return 1;
}
#endif

static const char *errname(int e)
{
	static char buf[16];

	switch (e) {
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EINVAL: return "EINVAL";
	case EACCES: return "EACCES";
	case EPROTO: return "EPROTO";
	case EUCLEAN: return "EUCLEAN";
	case ENOMEM: return "ENOMEM";
	}
	snprintf(buf, sizeof(buf), "errno %d", e);
	return buf;
}

static void report(const char *what, int r)
{
	if (r < 0)
		printf("%s = -1 %s\n", what, errname(errno));
	else
		printf("%s = %d\n", what, r);
}

int main(void)
{
	int fd;

	printf("secure = %lu\n", getauxval(AT_SECURE));
	printf("euid = %u\n", (unsigned)geteuid());
	fd = memfd_create("secure", 0);
	if (fd < 0 || ftruncate(fd, 4096) != 0) {
		printf("memfd = -1 %s\n", errname(errno));
		return 1;
	}
	report("mark", fallocate(fd, FALLOC_FL_MARK_VOLATILE, 0, 4096));
	report("unmark", fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, 0, 4096));
	report("collapse", fallocate(fd, 0x08, 0, 4096));
	return 0;
}
