#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile purge --system --all` purges every user's ranges, whatever
# any user's worker says it purged (DESIGN 22). U2 marks, first (so its
# region is the oldest), two ranges of 2^63 - 4096 bytes over the holes of
# two files and one of 4K: its worker's honest answer is 2^64 - 4096 bytes
# purged. U1 marks a 4K range in each of three files after: all three must
# be purged, none of U1's asks cut short by what U2's worker said; and the
# total saturates, as each user's sum does.
SYS_UIDS="62007 62008"
. "$(dirname "$0")/system-root-lib.sh"

f1=$WORK/u$U1/f
big=9223372036854771712
holder h2 $U2 open "$WORK/u$U2/a" rwc mark 0 $big open "$WORK/u$U2/b" rwc mark 0 $big \
	open "$WORK/u$U2/c" rwc mark 0 4K \
	touch "$CUE/u2-marked" wait "$CUE/end"
wait_file "$CUE/u2-marked"
holder h1 $U1 open "$f1.1" rwc fill 0 4K A mark 0 4K open "$f1.2" rwc fill 0 4K A mark 0 4K \
	open "$f1.3" rwc fill 0 4K A mark 0 4K touch "$CUE/u1-marked" wait "$CUE/end" unmark 0 4K
wait_file "$CUE/u1-marked"

sys_purge all --all
touch "$CUE/end"
wait_bg h1
wait_bg h2
expect_line all "uid $U1: purged 3 ranges, 12288 bytes"
expect_line all "uid $U2: purged 3 ranges, 18446744073709547520 bytes"
expect_line all "purged 6 ranges, 18446744073709551615 bytes"
say "--all purged every range, whatever another user's worker said"
