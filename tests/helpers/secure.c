/*
 * secure - a program linked with -lvolatile (not preloaded: the dynamic
 * linker ignores LD_PRELOAD in a secure execution, but not a library the
 * program needs), for tests/shell/secure.sh. Installed set-user-ID, it
 * runs in a secure execution, where the library must read no VOLATILE_*
 * variable (SPEC 9). It prints, one line each:
 *
 *   secure = N          getauxval(AT_SECURE)
 *   euid = N            whose default region the library uses
 *   mark = R            MARK of the first page of a memfd: 0, or -1 and
 *                       errno's message
 *   unmark = R          UNMARK of it: 0, 1, or -1 and errno's message
 *
 * Exit status 0, or 1 if no memfd could be made.
 */
#include <volatile.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

static void report(const char *what, int r)
{
	if (r < 0)
		printf("%s = -1 %s\n", what, strerror(errno));
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
		printf("memfd = -1 %s\n", strerror(errno));
		return 1;
	}
	report("mark", fallocate(fd, FALLOC_FL_MARK_VOLATILE, 0, 4096));
	report("unmark", fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, 0, 4096));
	return 0;
}
