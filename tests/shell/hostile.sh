#!/bin/sh
# SPDX-License-Identifier: MIT
# What other processes of the user may do to a purge (DESIGN 18;
# doc/limits.md):
#
#   a. scribble on the region by mistake: a file record that claims to be
#      another file, without its sum rewritten. A purge must trust neither
#      its identity nor its ranges: it punches neither the file the record
#      names now nor the one it was made for, and the file it names keeps
#      working normally.
#   b. hold POSIX locks on a file whose fd number a purge finds recorded for
#      another file: the purge must see that the number names another file
#      before it duplicates or closes anything (closing any fd on a file
#      releases the POSIX locks the closing process holds on it).
. "$(dirname "$0")/lib.sh"
need_cmd

# ---- a. a scribbled file record -------------------------------------------------------
need_plant
new_region
a=$WORK/a
b=$WORK/b
mkfile "$a" 64K A
mkfile "$b" 64K B
ok a-mark svt open "$a" rw mark 0 16K
ok a-scribble "$PLANT" scribble "$a" "$b"
# a process holds both files open, so that a purge trusting the record
# could reach B (through this process) and punch it
bg a_hold vt open "$a" r open "$b" r touch "$WORK/a-ready" wait "$WORK/a-go" \
	expect 0 64K B fd 3 expect 0 64K A
wait_file "$WORK/a-ready"
run a-purge vol purge --all
[ "$rc" -eq 0 ] || { show a-purge; fail "volatile purge --all with a scribbled record: exit status $rc"; }
grep -q '^purged 0 ranges, 0 bytes' "$WORK/a-purge.out" || { show a-purge; fail "a purge punched through a scribbled record"; }
touch "$WORK/a-go"
wait_bg a_hold
[ "$rc" -eq 0 ] || { show a_hold; fail "the files changed under a purge through a scribbled record"; }
ok a-check-b vt open "$b" r expect 0 64K B
ok a-check-a vt open "$a" r expect 0 64K A
run a-status vol status
[ "$rc" -eq 0 ] || { show a-status; fail "volatile status with a scribbled record: exit status $rc"; }

# B works as any file: its own ranges, purged through its own record
ok a-b1 svt open "$b" rw mark 0 8K unmark 0 8K mark 16K 8K
expect_out a-b1 <<EOF
open $b rw = 3
mark 0 8K = 0
unmark 0 8K = 0
mark 16K 8K = 0
EOF
ok a-purge2 vol purge --all
expect_line a-purge2 "purged 1 range, 8192 bytes"
ok a-b2 svt open "$b" rw expect 16K 8K zero unmark 16K 8K unmark 0 16K expect 0 16K B \
	expect 24K 40K B
expect_out a-b2 <<EOF
open $b rw = 3
expect 16K 8K zero ok
unmark 16K 8K = 1
unmark 0 16K = 0
expect 0 16K B ok
expect 24K 40K B ok
EOF
ok a-check-a2 vt open "$a" r expect 0 64K A

# ---- b. POSIX locks on the file an fd number now names ---------------------------------
# memfd x is marked through fd 3 and closed; the "db" file gets fd 3 and is
# locked; marking memfd y makes the 4K budget purge the oldest range, x's,
# whose recorded holder is (this process, fd 3): that is the db now.
new_region
db=$WORK/db
mkfile "$db" 16K D
bg b_hold svte VOLATILE_BUDGET=4K -- pid memfd x 64K fill 0 64K X mark 0 4K close \
	open "$db" rw lock memfd y 64K fill 0 64K Y mark 0 8K \
	touch "$WORK/b-ready" wait "$WORK/b-go" unmark 0 8K expect 0 8K zero expect 8K 56K Y
wait_file "$WORK/b-ready"
holder=$(sed -n 's/^pid = //p' "$WORK/b_hold.out")
[ -n "$holder" ] || { show b_hold; fail "no pid from the holder"; }
run b-lock vt haslock "$db"
expect_out b-lock <<EOF
haslock $db = pid $holder
EOF
touch "$WORK/b-go"
wait_bg b_hold
[ "$rc" -eq 0 ] || { show b_hold; fail "the lock holder: exit status $rc"; }
expect_out b_hold <<EOF
pid = $holder
memfd x 64K = 3
fill 0 64K X = ok
mark 0 4K = 0
close = 0
open $db rw = 3
lock = 0
memfd y 64K = 4
fill 0 64K Y = ok
mark 0 8K = 0
touch $WORK/b-ready = 0
wait $WORK/b-go
unmark 0 8K = 1
expect 0 8K zero ok
expect 8K 56K Y ok
EOF
[ ! -s "$WORK/b_hold.err" ] || { show b_hold; fail "the lock holder wrote on stderr"; }
ok b-db vt open "$db" r expect 0 16K D
exit 0
