/* SPDX-License-Identifier: MIT */
/*
 * pkgconfig.c - built by `make installcheck` (and so by distcheck) against
 * the installed library with `cc $(pkg-config --cflags --libs libvolatile)`:
 * the installed headers and library are all a user needs.
 */
#include <cutils/ashmem.h>
#include <fcntl.h>
#include <stdio.h>
#include <volatile.h>

int main(void)
{
	struct volatile_stats st;

	if (FALLOC_FL_MARK_VOLATILE == 0 || FALLOC_FL_UNMARK_VOLATILE == 0)
		return 1;
	if (volatile_stats(&st, sizeof(st)) != 0) {
		perror("volatile_stats");
		return 1;
	}
	printf("installed libvolatile: %llu ranges of capacity; ashmem_valid(0) = %d\n",
	       (unsigned long long)st.capacity_ranges, ashmem_valid(0));
	return 0;
}
