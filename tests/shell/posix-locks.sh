#!/bin/sh
# Closing any fd on a file releases the POSIX record locks the closing
# process holds on it. So a purge never opens or duplicates a file on which
# its own process holds POSIX locks: that process skips the file (README,
# "Limits"), and another process may purge it, since its close releases
# nothing of the holder's.
. "$(dirname "$0")/lib.sh"
need_cmd
f1=$WORK/locked
f2=$WORK/other
mkfile "$f1" 16K A
mkfile "$f2" 16K B

# A process with an 8K budget locks f1, marks 8K of it, then marks two 4K
# ranges of f2: the budget wants f1's range (the oldest) purged, but this
# process would have to reopen f1 to punch it; it skips f1, purges what it
# can (f2's ranges, through the fd it marked them with), and its lock stands.
bg holder env VOLATILE_BUDGET=8K LD_PRELOAD="$VOLATILE_LIBRARY" timeout 30 "$VT" \
	open "$f1" rw lock mark 0 8K \
	open "$f2" rw mark 0 4K mark 8K 4K touch "$WORK/marked" wait "$WORK/go" \
	open "$f1" rw unmark 0 8K expect 0 8K zero
wait_file "$WORK/marked"
run check1 vt haslock "$f1"
grep -q "^haslock $f1 = pid " "$WORK/check1.out" || { show check1; fail "the holder's POSIX lock on $f1 was released"; }
run st1 vol status
grep -q '^ranges:   3 (2 purged)' "$WORK/st1.out" || { show st1; show holder; fail "the budget purge did not skip the locked file and take f2's ranges"; }
grep -A2 "locked \[pid" "$WORK/st1.out" | grep -q '^  0 *8192 *volatile' || { show st1; fail "f1's range was purged"; }

# Another process purges f1 through the holder's fd; the lock stays.
ok purge vol purge --all
expect_line purge "purged 1 range, 8192 bytes"
run check2 vt haslock "$f1"
grep -q "^haslock $f1 = pid " "$WORK/check2.out" || { show check2; fail "the lock was released by a purge in another process"; }

touch "$WORK/go"
wait_bg holder
[ "$rc" -eq 0 ] || { show holder; fail "holder: exit status $rc"; }
expect_line holder "unmark 0 8K = 1"
expect_line holder "expect 0 8K zero ok"
exit 0
