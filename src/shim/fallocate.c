/* SPDX-License-Identifier: MIT */
/*
 * fallocate.c - the interposed fallocate(2) and fallocate64.
 *
 * A call without a volatile mode goes to the next fallocate (libc's, or
 * another interposer's) with one test and one indirect call, untouched.
 * glibc exports both names at one address; programs call either.
 *
 * The 2012 ABI aliases (0x04 MARK, 0x08 UNMARK) are opt-in: by default
 * they are the kernel's FALLOC_FL_NO_HIDE_STALE and COLLAPSE_RANGE, which
 * tmpfs refuses, and programs rely on that refusal (DESIGN 2).
 */
#include "export.h"
#include "ident.h"
#include "next.h"
#include "sys.h"
#include "ops.h"
#include "volatile.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int (*fallocate_fn)(int, int, off_t, off_t);

static fallocate_fn next_fallocate, next_fallocate64;

/*
 * VOLATILE_2012_ABI=1 (`volatile run --2012-abi`) turns the aliases on.
 * resolve() sets it before it publishes a slot, so a caller that finds
 * the slot set finds the flag set too, even one that runs before our
 * constructor (another library's). A flag of its own, not in struct
 * vl_config: the pass-through reads it and must not call vl_config().
 */
static int aliases_on;

/* No next symbol (a static libc?): go to the kernel. */
static int raw_fallocate(int fd, int mode, off_t off, off_t len)
{
	return (int)vl_as_libc(vl_raw_fallocate(fd, mode, off, len));
}

/* Only "1" turns them on; nothing is read in a secure execution (DESIGN 9). */
static void read_aliases_on(void)
{
	const char *v = secure_getenv("VOLATILE_2012_ABI");

	__atomic_store_n(&aliases_on, v != NULL && strcmp(v, "1") == 0, __ATOMIC_RELAXED);
}

/*
 * VL_NEXT's resolution (next.h), with the aliases flag read first: the
 * slots are the pass-through's own (it loads one, and calls), not
 * VL_NEXT's hidden ones. Two threads resolving at once store the same.
 */
static fallocate_fn resolve(fallocate_fn *slot, const char *name)
{
	fallocate_fn f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (f == NULL) {
		read_aliases_on();
		f = (fallocate_fn)vl_next((void **)slot, name, (void *)raw_fallocate);
	}
	return f;
}

__attribute__((constructor)) static void resolve_early(void)
{
	int saved = errno;

	resolve(&next_fallocate, "fallocate");
	resolve(&next_fallocate64, "fallocate64");
	errno = saved;
}

/* Only after an acquire load of a non-NULL slot (see aliases_on). */
static inline int taken_as_alias(int mode)
{
	return __atomic_load_n(&aliases_on, __ATOMIC_RELAXED) && vl_is_alias(mode);
}

/* The volatile path: returns what fallocate returns, errno set on -1. */
static int volatile_call(int fd, int mode, int64_t off, int64_t len)
{
	int saved = errno, r;

	r = vl_volatile_fallocate(fd, mode, off, len);
	if (r < 0) {
		errno = -r;
		return -1;
	}
	errno = saved;
	return r;
}

/* Everything but a resolved pass-through: kept out of line, so that the pass-through saves no register. */
static __attribute__((noinline)) int dispatch_slow(fallocate_fn *slot, const char *name, int fd,
						   int mode, int64_t off, int64_t len)
{
	if (!(mode & (FALLOC_FL_MARK_VOLATILE | FALLOC_FL_UNMARK_VOLATILE))) {
		fallocate_fn next = resolve(slot, name);

		if (!taken_as_alias(mode))
			return next(fd, mode, off, len);
		/* 0x04/0x08: the 2012 ABI on tmpfs files, the kernel's own modes elsewhere */
		int saved = errno;

		if (vl_is_tmpfs_file(fd) != 1) {
			errno = saved;
			return next(fd, mode, off, len);
		}
		errno = saved;
		mode = vl_alias_as_volatile(mode);
	}
	return volatile_call(fd, mode, off, len);
}

static inline __attribute__((always_inline)) int dispatch(fallocate_fn *slot, const char *name,
							  int fd, int mode, int64_t off,
							  int64_t len)
{
	fallocate_fn next = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (__builtin_expect(next != NULL &&
				     !(mode & (FALLOC_FL_MARK_VOLATILE | FALLOC_FL_UNMARK_VOLATILE)) &&
				     !taken_as_alias(mode),
			     1))
		return next(fd, mode, off, len);
	return dispatch_slow(slot, name, fd, mode, off, len);
}

VL_EXPORT int fallocate(int fd, int mode, off_t off, off_t len)
{
	return dispatch(&next_fallocate, "fallocate", fd, mode, off, len);
}

VL_EXPORT int fallocate64(int fd, int mode, off64_t off, off64_t len)
{
	return dispatch(&next_fallocate64, "fallocate64", fd, mode, off, len);
}
