#!/bin/sh
# SPDX-License-Identifier: MIT
# Closing any fd on a file releases the POSIX record locks the closing
# process holds on it (DESIGN 13, 17). So a purge in a program never
# opens, duplicates or closes a file in the program's own fd table: what
# it opens to punch, a child with a copy of the table opens and closes
# (src/punch.c). The program's locks stand whenever they were taken.
#
#   1. a process holding a lock on F purges F's range itself (its budget);
#   2. a lock taken by the purging thread in the middle of the purge, after
#      anything the purge could have looked at and before its punch and
#      its closes (tests/helpers/lockrace, at a step of the fault-injecting
#      library): a look at /proc/locks once per pass let this one go;
#   3. another process purges: nothing of the holder's is released;
#   4. a host thread that reaps any child (waitpid(-1, __WALL), as init
#      systems do) never gets the library's helper: it is a thread of ours
#      (a child process before: 3 runs in 20 reaped a pid the host never made);
#   5. a host under a seccomp filter trapping system calls is not killed.
. "$(dirname "$0")/lib.sh"
need_cmd
f1=$WORK/locked
f2=$WORK/other
mkfile "$f1" 16K A
mkfile "$f2" 16K B

# ---- 1. the holder's own budget purges its locked file --------------------------------
# An 8K budget: f1's 8K range, then f2's 4K: f1's range, the oldest, goes.
bg holder env VOLATILE_BUDGET=8K LD_PRELOAD="$VOLATILE_LIBRARY" timeout 30 "$VT" \
	open "$f1" rw lock mark 0 8K \
	open "$f2" rw mark 0 4K mark 8K 4K touch "$WORK/marked" wait "$WORK/go" \
	open "$f1" rw unmark 0 8K expect 0 8K zero expect 8K 8K A
wait_file "$WORK/marked"
run check1 vt haslock "$f1"
grep -q "^haslock $f1 = pid " "$WORK/check1.out" || { show check1; show holder; fail "the holder's POSIX lock on $f1 was released by its own purge"; }
run st1 vol status
grep -q '^ranges:   3 (1 purged)' "$WORK/st1.out" || { show st1; show holder; fail "the budget purge did not take the oldest range, the locked file's"; }

# ---- 3. another process purges the rest; the lock stays ------------------------------
ok purge vol purge --all
expect_line purge "purged 2 ranges, 8192 bytes"
run check2 vt haslock "$f1"
grep -q "^haslock $f1 = pid " "$WORK/check2.out" || { show check2; fail "the lock was released by a purge in another process"; }

touch "$WORK/go"
wait_bg holder
[ "$rc" -eq 0 ] || { show holder; fail "holder: exit status $rc"; }
expect_line holder "unmark 0 8K = 1"
expect_line holder "expect 0 8K zero ok"
expect_line holder "expect 8K 8K A ok"

# ---- 2. a lock taken while the purge is under way ------------------------------------
need_fault_lib
LOCKRACE=$VL_TOP_BUILDDIR/tests/helpers/lockrace
[ -x "$LOCKRACE" ] || fail "$LOCKRACE is not built (make check builds it)"
new_region
mkfile "$f1" 16K A
mkfile "$f2" 16K B
run race env VOLATILE_BUDGET=4K LD_PRELOAD="$FAULT_LIB" timeout 30 "$LOCKRACE" "$f1" "$f2"
expect_out race <<EOF
hook: ran
lock: held by us
unmark A = 1
EOF
[ "$rc" -eq 0 ] || { show race; fail "lockrace: exit status $rc"; }
ok race-bytes vt open "$f1" r expect 0 4K zero expect 4K 12K A open "$f2" r expect 0 16K B
# ---- 4. the helper that punches is no child the host can reap --------------------------
REAPER=$VL_TOP_BUILDDIR/tests/helpers/reaper
[ -x "$REAPER" ] || fail "$REAPER is not built (make check builds it)"
new_region
mkfile "$f1" 16K A
run reaper env VOLATILE_BUDGET=4K LD_PRELOAD="$VOLATILE_LIBRARY" timeout 60 "$REAPER" "$f1" 200
expect_out reaper <<EOF
reaped: none
purged: 200 of 200
EOF
[ "$rc" -eq 0 ] || { show reaper; fail "reaper: exit status $rc"; }

# ---- 5. a host under a seccomp filter that traps system calls --------------------------
# (SIGSYS answered by its handler, as browser sandboxes do): a purge that would
# need the punching thread (all signals blocked: a forced SIGSYS there kills the
# process) leaves the file to other processes; the host runs to its end
SANDBOXED=$VL_TOP_BUILDDIR/tests/helpers/sandboxed
[ -x "$SANDBOXED" ] || fail "$SANDBOXED is not built (make check builds it)"
new_region
run sandboxed env VOLATILE_BUDGET=64K LD_PRELOAD="$VOLATILE_LIBRARY" timeout 60 "$SANDBOXED"
[ "$rc" -eq 77 ] && { say "no seccomp filters here: part 5 is not run"; exit 0; }
[ "$rc" -eq 0 ] || { show sandboxed; fail "a sandboxed host died (exit status $rc) in a purge"; }
expect_out sandboxed <<EOF
mark a = 0
mark b = 0
unmark a = 0
the end
EOF
exit 0
