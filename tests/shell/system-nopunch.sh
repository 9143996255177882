#!/bin/sh
# SPDX-License-Identifier: MIT
# Root never punches a user's file (DESIGN 22): `volatile purge --system`
# punches only through a worker that runs as the user, so it can do no
# more than the user's own `volatile purge` could.
#   U1's holder (not dumpable: no other process of U1's may take its fd)
#   marks f and then g; f is then made 0400 (the holder keeps its fd).
#   The worker, as U1, cannot open f for writing; root could (shown by
#   opening it). purge --system --all punches g only: f's bytes stay as
#   they were. (The library flags f's range purged all the same, as a
#   user's own purge does when it cannot punch, DESIGN 13: UNMARK then
#   says 1 over intact bytes, which DESIGN 4 allows; never 0 over punched
#   ones.)
SYS_UIDS="61103 61104"
. "$(dirname "$0")/system-root-lib.sh"

f=$WORK/u$U1/f
g=$WORK/u$U1/g
holder h1 $U1 nodump open "$f" rwc fill 0 64K F mark 0 4K apart open "$g" rwc fill 0 64K G mark 0 4K \
	touch "$CUE/marked" wait "$CUE/go" unmark 0 4K expect 0 4K zero expect 4K 60K G \
	fd 3 unmark 0 4K expect 0 64K F
wait_file "$CUE/marked"
chmod 0400 "$f"
# root, with its capabilities, could open f for writing (and so punch it)
ok rootcan vt open "$f" rw
expect_no_line rootcan "open $f rw = -1 EACCES"
# ...the user cannot
run usercannot as_user $U1 "$VT" open "$f" rw
expect_line usercannot "open $f rw = -1 EACCES"

sys_purge p --all
expect_out p <<EOF
uid $U1: purged 2 ranges, 8192 bytes
purged 2 ranges, 8192 bytes
EOF
touch "$CUE/go"
wait_bg h1
[ "$rc" -eq 0 ] || { show h1; fail "U1's holder: exit status $rc (f's or g's bytes not as they should be)"; }
expect_line h1 "expect 0 4K zero ok"
expect_line h1 "expect 0 64K F ok"
say "f, which U1 cannot write, left unpunched; g punched"
