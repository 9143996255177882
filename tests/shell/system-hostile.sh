#!/bin/sh
# SPDX-License-Identifier: MIT
# A hostile user cannot stop the purge of another (DESIGN 22, 18): U1
# marks three ranges, each older than the next; U2's region, in turn:
#   scribbled: its magic zeroed (the worker says EUCLEAN: set aside);
#   a FIFO at its name (refused by the finding: no worker opens it);
#   a symlink at its name to U1's region (refused: never followed).
# Each time `volatile purge --system --bytes 4K` ends within a bound
# (timeout 30 s), purges U1's oldest unpurged range and nothing else of
# U1's (status as U1 after each), and U1's UNMARKs say so at the end.
SYS_UIDS="61105 61106"
. "$(dirname "$0")/system-root-lib.sh"

f1=$WORK/u$U1/f
f2=$WORK/u$U2/f
r2=/dev/shm/libvolatile.$U2
holder h1 $U1 open "$f1" rwc fill 0 64K A mark 0 4K apart mark 16K 4K apart mark 32K 4K apart \
	touch "$CUE/u1-marked" wait "$CUE/u1-end" unmark 0 4K unmark 16K 4K unmark 32K 4K \
	expect 4K 12K A expect 20K 12K A expect 36K 28K A
holder h2 $U2 open "$f2" rwc fill 0 64K B mark 0 4K touch "$CUE/u2-marked" wait "$CUE/u2-end"
wait_file "$CUE/u1-marked"
wait_file "$CUE/u2-marked"

# ---- scribbled -------------------------------------------------------------------------
dd if=/dev/zero of="$r2" bs=8 count=1 seek=$((VL_REGION_OFFSET / 8)) conv=notrunc 2>/dev/null ||
	fail "cannot scribble U2's region"
sys_purge scribbled --bytes 4K
expect_line scribbled "uid $U1: purged 1 range, 4096 bytes"
grep -q "^uid $U2: not purged (" "$WORK/scribbled.out" ||
	{ show scribbled; fail "scribbled: no line saying U2's region was not purged"; }
expect_line scribbled "purged 1 range, 4096 bytes"
expect_eq "U1's ranges after U2's region was scribbled (purged?)" "$(purged_of s1 $U1)" "true false false"

# ---- a FIFO at U2's name -------------------------------------------------------------
touch "$CUE/u2-end"
wait_bg h2
rm -f "$r2"
mkfifo -m 0600 "$r2" && chown $U2:$U2 "$r2" || fail "cannot make a FIFO at $r2"
sys_purge fifo --bytes 4K
expect_out fifo <<EOF
uid $U1: purged 1 range, 4096 bytes
purged 1 range, 4096 bytes
EOF
grep -qF "$r2" "$WORK/fifo.err" || { show fifo; fail "fifo: $r2 refused without a word"; }
expect_eq "U1's ranges after a FIFO at U2's name (purged?)" "$(purged_of s2 $U1)" "true true false"

# ---- a symlink at U2's name to U1's region ---------------------------------------------
rm -f "$r2"
ln -s "/dev/shm/libvolatile.$U1" "$r2" && chown -h $U2:$U2 "$r2" || fail "cannot make a symlink at $r2"
sys_purge symlink --bytes 4K
expect_out symlink <<EOF
uid $U1: purged 1 range, 4096 bytes
purged 1 range, 4096 bytes
EOF
grep -qF "$r2" "$WORK/symlink.err" || { show symlink; fail "symlink: $r2 refused without a word"; }
expect_eq "U1's ranges after a symlink at U2's name (purged?)" "$(purged_of s3 $U1)" "true true true"

touch "$CUE/u1-end"
wait_bg h1
[ "$rc" -eq 0 ] || { show h1; fail "U1's holder: exit status $rc"; }
expect_line h1 "unmark 0 4K = 1"
expect_line h1 "unmark 16K 4K = 1"
expect_line h1 "unmark 32K 4K = 1"
say "U1's purge went on, in order, whatever U2's region was"
