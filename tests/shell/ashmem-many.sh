#!/bin/sh
# SPDX-License-Identifier: MIT
# A process that holds many regions at once still forgets each at its
# last close (attack on 28b53f4): doc/ashmem.md's "forgotten at once when close
# drops the fd it was made as". At 28b53f4 the table of regions made here
# holds 256 entries; the 257th region wipes it, and every region made
# before is then "maybe held elsewhere" for good: after 300 regions open
# at once and closed, 256 records stayed in the region (768 after 1,000),
# until some purge; a program that keeps that many regions fills its
# user's file table (ENOMEM for every process of the user). Before that
# commit, regions at fds below 4096 were all forgotten.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ashmem-lib.sh"
need_python

TWINS=$VL_TOP_BUILDDIR/tests/helpers/twins
[ -x "$TWINS" ] || fail "$TWINS is not built (make check builds it)"

for n in 250 300 1000; do
	new_region
	run "m$n" shim "$TWINS" many "$n"
	[ "$rc" -eq 77 ] && skip "$(cat "$WORK/m$n.out")"
	if [ "$rc" -ne 0 ] || [ -s "$WORK/m$n.err" ]; then show "m$n"; fail "$n: exit status $rc"; fi
	status_json "s$n"
	left=$(jq_py "s$n" 'len(d["file_list"])')
	soft expect_eq "$n regions opened at once, then closed: records left" "$left" 0
done
exit "$FAILED"
