#!/bin/sh
# SPDX-License-Identifier: MIT
# The region's locks (DESIGN 11): shared by
# processes, each word naming its holder's slot in the region's table of
# processes, repaired when that holder is gone.
#
#   a. a child made by clone(2), not fork, killed at each step inside a
#      MARK (locks held, the tree half changed): glibc registers no robust
#      list for such a child, so a robust mutex it held stayed locked for
#      good. A fresh process must get its answers at once, and THE
#      INVARIANT hold.
#   b. a holder that is gone, its slot freed: the next taker repairs and
#      goes on; its repair needs the region lock, and when that cannot be
#      had (the region lock is broken) the call fails with EUCLEAN and the
#      file's lock is broken too: a failed repair is never reported as
#      success.
#   c. random bytes over the lock words (a scribble): the library never
#      hands them to glibc, so no call crashes (glibc took them for a
#      priority-protect mutex and aborted in tpp.c); no call hangs; bytes
#      never marked are intact.
. "$(dirname "$0")/lib.sh"
need_cmd

need_fault_lib
need_plant

f=$WORK/cache
report=$WORK/report

# answers_at_once WHAT: a fresh process marks, unmarks and checks f (a hang:
# timeout; a wait for a lock ends in EAGAIN); bytes after 48K were never
# marked and are all A
answers_at_once() {
	run chk env LD_PRELOAD="$VOLATILE_LIBRARY" timeout "$VL_TIMEOUT" "$VT" open "$f" rw mark 56K 4K unmark 56K 4K expect 48K 16K A
	[ "$rc" -ne 124 ] || fail "$1: a fresh process hung on a lock whose holder is gone"
	[ "$rc" -eq 0 ] || { show chk; fail "$1: a fresh process failed"; }
	grep -qx 'unmark 56K 4K = 0' "$WORK/chk.out" || { show chk; fail "$1: no answer"; }
}

# ---- a. a clone(2) child killed inside the library -------------------------------
n=0
while :; do
	n=$((n + 1))
	[ "$n" -le 200 ] || fail "the child was still killed at step 200: the walk does not end"
	new_region
	mkfile "$f" 64K A
	: >"$report"
	run walk env LD_PRELOAD="$FAULT_LIB" VOLATILE_FAULT_KILL=$n VOLATILE_FAULT_REPORT="$report" \
		timeout "$VL_TIMEOUT" "$VT" open "$f" rw clone mark 0 8K mark 16K 8K mark 4K 8K \
		unmark 8K 2K mark 32K 8K end reap
	[ "$rc" -ne 124 ] || fail "step $n: the parent hung"
	if ! grep -q '^kill ' "$report"; then
		expect_line walk "reap = 0"
		break
	fi
	expect_line walk "reap = 137"
	answers_at_once "clone child killed at $(cat "$report")"
done
say "a clone(2) child killed at each of its $((n - 1)) steps: the next process answered at once"
[ "$n" -gt 5 ] || fail "only $((n - 1)) steps were walked"

# ---- b. a holder gone; a repair that cannot be done -------------------------------
new_region
mkfile "$f" 64K A
ok b-mark svt open "$f" rw mark 0 16K mark 32K 8K
ok b-dead "$PLANT" lockword "$f" dead
ok b-repaired env LD_PRELOAD="$VOLATILE_LIBRARY" timeout "$VL_TIMEOUT" "$VT" open "$f" rw unmark 0 4K unmark 32K 8K expect 0 64K A
# shellcheck disable=SC2016
expect_out b-repaired <<EOF
open $f rw = 3
unmark 0 4K = 0
unmark 32K 8K = 0
expect 0 64K A ok
EOF
ok b-dead2 "$PLANT" lockword "$f" dead
ok b-broken "$PLANT" lockword region broken
run b-fail env LD_PRELOAD="$VOLATILE_LIBRARY" timeout "$VL_TIMEOUT" "$VT" open "$f" rw unmark 4K 4K unmark 4K 4K
[ "$rc" -ne 124 ] || fail "a MARK hung on a lock that cannot be repaired"
expect_out b-fail <<EOF
open $f rw = 3
unmark 4K 4K = -1 EUCLEAN
unmark 4K 4K = -1 EUCLEAN
EOF
# the library never punched anything on the way
ok b-bytes vt open "$f" r expect 0 64K A

# ---- c. random bytes over the lock words -------------------------------------------
g=$WORK/other
for seed in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	new_region
	mkfile "$f" 64K A
	mkfile "$g" 64K G
	ok c-mark svt open "$f" rw mark 0 16K open "$g" rw mark 0 16K
	ok c-junk-region "$PLANT" lockword region "junk:$seed"
	ok c-junk-file "$PLANT" lockword "$f" "junk:$((seed + 100))"
	run c-use env LD_PRELOAD="$VOLATILE_LIBRARY" timeout "$VL_TIMEOUT" "$VT" open "$f" rw mark 16K 8K unmark 0 4K open "$g" rw unmark 0 4K
	[ "$rc" -ne 124 ] || fail "seed $seed: a MARK hung on scribbled lock words"
	[ "$rc" -lt 128 ] || { show c-use; fail "seed $seed: the program died of signal $((rc - 128)) on scribbled lock words"; }
	run c-purge timeout "$VL_TIMEOUT" "$VOLATILE_CMD" purge --all
	[ "$rc" -ne 124 ] && [ "$rc" -lt 128 ] || { show c-purge; fail "seed $seed: volatile purge: exit status $rc"; }
	run c-status timeout "$VL_TIMEOUT" "$VOLATILE_CMD" status
	[ "$rc" -ne 124 ] && [ "$rc" -lt 128 ] || { show c-status; fail "seed $seed: volatile status: exit status $rc"; }
	ok c-bytes vt open "$f" r expect 24K 40K A open "$g" r expect 16K 48K G
done
say "20 scribbles over the region lock and a file lock: no crash, no hang, nothing unmarked changed"
exit 0
