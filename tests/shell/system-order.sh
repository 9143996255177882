#!/bin/sh
# SPDX-License-Identifier: MIT
# One machine, one age order (DESIGN 22): root's `volatile purge --system`
# purges the machine's oldest volatile bytes first, across users' regions,
# each through a worker running as that user.
#   U1 marks 4K (old), then U2 8K (middle), then U1 12K (new), each after
#   the age clock moved past the order's bound (vt apart). Then:
#   --bytes 4K purges U1's old range only (U2's and U1's new intact, as
#   their status says); --bytes 8K then U2's; --bytes 12K then U1's new.
#   Each purge prints what it purged per uid and a total. Checked at the
#   end by UNMARK as each user: every range purged.
SYS_UIDS="61101 61102"
. "$(dirname "$0")/system-root-lib.sh"

f1=$WORK/u$U1/f
f2=$WORK/u$U2/f
holder h1 $U1 open "$f1" rwc fill 0 64K A mark 0 4K apart touch "$CUE/u1-old" \
	wait "$CUE/u1-go" mark 16K 12K apart touch "$CUE/u1-new" \
	wait "$CUE/u1-end" unmark 0 4K unmark 16K 12K expect 4K 12K A expect 28K 36K A
wait_file "$CUE/u1-old"
holder h2 $U2 open "$f2" rwc fill 0 64K B mark 0 8K apart touch "$CUE/u2-mid" \
	wait "$CUE/u2-end" unmark 0 8K expect 8K 56K B
wait_file "$CUE/u2-mid"
touch "$CUE/u1-go"
wait_file "$CUE/u1-new"

# ---- 1: U1's old range, the machine's oldest --------------------------------------
sys_purge p1 --bytes 4K
expect_out p1 <<EOF
uid $U1: purged 1 range, 4096 bytes
uid $U2: purged 0 ranges, 0 bytes
purged 1 range, 4096 bytes
EOF
expect_eq "U1's ranges after the first purge (purged?)" "$(purged_of s1a $U1)" "true false"
expect_eq "U2's range after the first purge (purged?)" "$(purged_of s1b $U2)" "false"

# ---- 2: then U2's --------------------------------------------------------------------
sys_purge p2 --bytes 8K
expect_out p2 <<EOF
uid $U1: purged 0 ranges, 0 bytes
uid $U2: purged 1 range, 8192 bytes
purged 1 range, 8192 bytes
EOF
expect_eq "U1's ranges after the second purge (purged?)" "$(purged_of s2a $U1)" "true false"
expect_eq "U2's range after the second purge (purged?)" "$(purged_of s2b $U2)" "true"

# ---- 3: then U1's new ----------------------------------------------------------------
sys_purge p3 --bytes 12K
expect_out p3 <<EOF
uid $U1: purged 1 range, 12288 bytes
uid $U2: purged 0 ranges, 0 bytes
purged 1 range, 12288 bytes
EOF

# ---- UNMARK as each user: all purged, nothing else changed -----------------------
touch "$CUE/u1-end" "$CUE/u2-end"
wait_bg h1
[ "$rc" -eq 0 ] || { show h1; fail "U1's holder: exit status $rc"; }
wait_bg h2
[ "$rc" -eq 0 ] || { show h2; fail "U2's holder: exit status $rc"; }
expect_line h1 "unmark 0 4K = 1"
expect_line h1 "unmark 16K 12K = 1"
expect_line h2 "unmark 0 8K = 1"
say "U1 old, U2, U1 new: purged in the machine's age order"
