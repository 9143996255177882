#!/bin/sh
# SPDX-License-Identifier: MIT
# Mark, purge and unmark across processes on a tmpfs file (DESIGN 3, 4):
# volatility belongs to the inode, a purge from another process punches
# exactly the marked bytes (THE INVARIANT: every byte outside is checked),
# UNMARK reports it, and an UNMARK that returned 0 is a promise.
. "$(dirname "$0")/lib.sh"
need_cmd

f=$WORK/cache

# ---- 1. one process marks, another purges, the first unmarks -----------------
# [1000, 11000): partial pages at both edges; 64 KiB of 'A' around it.
mkfile "$f" 64K A
bg p1 svt open "$f" rw mark 1000 10000 touch "$WORK/marked" wait "$WORK/purged" \
	unmark 1000 10000 expect 0 1000 A expect 1000 10000 zero expect 11000 54536 A \
	size unmark 1000 10000
wait_file "$WORK/marked"
ok purge1 vol purge --all
grep -q '^purged 1 range, 10000 bytes' "$WORK/purge1.out" || {
	show purge1
	show p1
	fail "volatile purge --all: want 'purged 1 range, 10000 bytes...'"
}
touch "$WORK/purged"
wait_bg p1
[ "$rc" -eq 0 ] && [ ! -s "$WORK/p1.err" ] || { show p1; fail "p1 exit status $rc"; }
expect_out p1 <<EOF
open $f rw = 3
mark 1000 10000 = 0
touch $WORK/marked = 0
wait $WORK/purged
unmark 1000 10000 = 1
expect 0 1000 A ok
expect 1000 10000 zero ok
expect 11000 54536 A ok
size = 65536
unmark 1000 10000 = 0
EOF
# and a process that never touched the range sees the same bytes
ok look1 vt open "$f" r expect 0 1000 A expect 1000 10000 zero expect 11000 54536 A
# purging again finds nothing
ok purge1b vol purge --all
grep -q '^purged 0 ranges, 0 bytes' "$WORK/purge1b.out" || { show purge1b; fail "second purge purged something"; }

# ---- 2. UNMARK 0 is a promise: those bytes survive any later purge ------------
mkfile "$f" 64K A
ok mark2 svt open "$f" rw mark 0 64K
# another process, another fd: the range is the file's, not the fd's
ok unmark2 svt open "$f" rw unmark 16K 16K
expect_out unmark2 <<EOF
open $f rw = 3
unmark 16K 16K = 0
EOF
ok purge2 vol purge --all
grep -q '^purged 2 ranges, 49152 bytes' "$WORK/purge2.out" || {
	show purge2
	fail "want 'purged 2 ranges, 49152 bytes' (the two pieces left of [0, 64K))"
}
ok check2 svt open "$f" rw expect 0 16K zero expect 16K 16K A expect 32K 32K zero \
	unmark 0 64K unmark 0 64K size
expect_out check2 <<EOF
open $f rw = 3
expect 0 16K zero ok
expect 16K 16K A ok
expect 32K 32K zero ok
unmark 0 64K = 1
unmark 0 64K = 0
size = 65536
EOF

# ---- 3. mark, unmark (0), purge: nothing to purge, nothing changes -------------
mkfile "$f" 64K A
ok mu3 svt open "$f" rw unmark 0 4096 mark 4096 8192 unmark 0 64K
expect_out mu3 <<EOF
open $f rw = 3
unmark 0 4096 = 0
mark 4096 8192 = 0
unmark 0 64K = 0
EOF
ok purge3 vol purge --all
grep -q '^purged 0 ranges, 0 bytes' "$WORK/purge3.out" || { show purge3; fail "purged bytes that were unmarked"; }
ok check3 vt open "$f" r expect 0 64K A

# ---- 4. a purge that runs while the marker is gone reaches the file by name ----
mkfile "$f" 64K A
ok mark4 svt open "$f" rw mark 8K 8K mark 40K 4K
ok purge4 vol purge --all
grep -q '^purged 2 ranges, 12288 bytes' "$WORK/purge4.out" || { show purge4; fail "want 2 ranges, 12288 bytes purged"; }
ok check4 svt open "$f" rw expect 0 8K A expect 8K 8K zero expect 16K 24K A \
	expect 40K 4K zero expect 44K 20K A unmark 8K 8K unmark 40K 4K
expect_line check4 "unmark 8K 8K = 1"
expect_line check4 "unmark 40K 4K = 1"

# ---- 5. merging: overlapping and adjacent unpurged ranges make one ----------------
mkfile "$f" 64K A
ok mark5 svt open "$f" rw mark 0 4K mark 4K 4K mark 6K 4K
ok purge5 vol purge --bytes 1
grep -q '^purged 1 range, 10240 bytes' "$WORK/purge5.out" || {
	show purge5
	fail "[0,4K) [4K,8K) [6K,10K) should be one range of 10240 bytes, purged whole"
}
ok check5 svt open "$f" rw expect 0 10K zero expect 10K 54K A unmark 0 10K
expect_line check5 "unmark 0 10K = 1"

# ---- 6. marking over a purged range: the merged range is purged, all of it ------
# ("the purged flag never lies": the bytes joining a purged range are
# punched at once, so UNMARK's 1 is true for every byte of it). The
# purged range's own bytes are not punched again (DESIGN 3): the B written
# into it after its purge stay, under a flag that says purged.
mkfile "$f" 64K A
ok mark6 svt open "$f" rw mark 0 4K
ok purge6 vol purge --all
ok remark6 svt open "$f" rw fill 0 4K B mark 2K 4K expect 0 2K B expect 2K 4K zero \
	expect 6K 58K A unmark 0 6K
expect_out remark6 <<EOF
open $f rw = 3
fill 0 4K B = ok
mark 2K 4K = 0
expect 0 2K B ok
expect 2K 4K zero ok
expect 6K 58K A ok
unmark 0 6K = 1
EOF

# ---- 7. a partial UNMARK of a purged range reports it, and the rest stays ---------
mkfile "$f" 64K A
ok mark7 svt open "$f" rw mark 0 16K
ok purge7 vol purge --all
ok unmark7 svt open "$f" rw unmark 4K 4K unmark 4K 4K unmark 0 16K unmark 0 16K
expect_out unmark7 <<EOF
open $f rw = 3
unmark 4K 4K = 1
unmark 4K 4K = 0
unmark 0 16K = 1
unmark 0 16K = 0
EOF
ok check7 vt open "$f" r expect 0 16K zero expect 16K 48K A
exit 0
