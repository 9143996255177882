#!/bin/sh
# SPDX-License-Identifier: MIT
# A budget over deltas that sit in processes' slots (DESIGN 6, 10): the
# first MARK with a budget makes the totals shared and counts the slots in
# by a recount, which is made only when every file lock is free at that
# instant, else owed. While it is owed, a budget must still see the
# bytes that other processes' slots hold: the contract keeps the whole
# region within the budget at each of its MARKs.
#
# A (no budget) marks 900K of a: its slot's deltas only (below 1 MiB).
# D stops inside a MARK of b, holding b's lock, so no recount can be made.
# B, with a budget of 1M, marks 200K of c: the region holds 1100K, over
# the budget, and B's MARK must purge a's range (the oldest), leaving
# 200K. Then the same with the slots' deltas negative: what a budget
# reads must not be more than what there is either (a purge of a range
# that the budget did not need gone).
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

need_fault_lib

volatile_bytes() { # NAME: the region's unpurged volatile bytes, as status counts them
	status_json "$1"
	jq_py "$1" 'd["volatile_bytes"]'
}

# d_holds_b: D stopped inside a MARK of b, holding b's lock (sets dpid)
d_holds_b() {
	bg D env LD_PRELOAD="$FAULT_LIB" VT_STOP_AT="mark: tree changed, not committed" \
		timeout "$VL_TIMEOUT" "$VT" pid open "$WORK/b" rw mark 0 8K
	wait_match D out '^pid = '
	dpid=$(sed -n 's/^pid = //p' "$WORK/D.out")
	[ -n "$dpid" ] || { show D; fail "D said no pid"; }
	wait_stopped D "$dpid" "D never stopped in its MARK"
}

d_gone() {
	kill -KILL "$dpid" 2>/dev/null
	wait_bg D
}

# ---- 1. deltas of 900K in a dead process's slot, a recount owed -----------------
new_region
mkfile "$WORK/a" 1M A
mkfile "$WORK/b" 64K B
mkfile "$WORK/c" 1M C
ok A svt open "$WORK/a" rw mark 0 900K
v=$(volatile_bytes st1)
[ "$v" = 921600 ] || fail "after A's MARK: status says $v volatile bytes, not 921600"
d_holds_b
ok B svte VOLATILE_BUDGET=1M -- open "$WORK/c" rw mark 0 200K
v=$(volatile_bytes st2)
say "after B's MARK with a budget of 1M: $v volatile bytes"
if [ "$v" -gt 1048576 ]; then
	d_gone
	fail "a MARK with a budget of 1M (1048576) left the region at $v unpurged volatile bytes:" \
		"the 900K in A's slot were not counted while the recount was owed"
fi
ok A2 svt open "$WORK/a" rw unmark 0 900K
expect_line A2 "unmark 0 900K = 1"
d_gone

# ---- 2. deltas of -700K: a budget that counts too much purges what it need not -----
# A marks 1200K of a (folded into the shared totals at 1 MiB), then
# unmarks 700K: its slot holds about -700K, the region 500K. With D
# holding b, B (budget 1M) marks 200K of c: 700K in all, within the
# budget, so nothing may be purged.
new_region
mkfile "$WORK/a" 2M A
mkfile "$WORK/b" 64K B
mkfile "$WORK/c" 1M C
ok A svt open "$WORK/a" rw mark 0 1200K unmark 500K 700K
expect_line A "unmark 500K 700K = 0"
v=$(volatile_bytes st3)
[ "$v" = 512000 ] || fail "after A's UNMARK: status says $v volatile bytes, not 512000"
d_holds_b
ok B svte VOLATILE_BUDGET=1M -- open "$WORK/c" rw mark 0 200K
ok A3 svt open "$WORK/a" rw unmark 0 500K
d_gone
grep -qx "unmark 0 500K = 0" "$WORK/A3.out" ||
	{ show A3; fail "a's 500K were purged by a MARK with a budget of 1M while the region held 700K"; }
exit $FAILED
