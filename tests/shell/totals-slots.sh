#!/bin/sh
# SPDX-License-Identifier: MIT
# The region's totals when a process that holds unfolded deltas dies
# (DESIGN 10: a commit counts its change into its own slot's deltas, folded
# into the shared totals past 1 MiB or 64 ranges; a dead process's stay in
# its slot, counted by every exact reader, until a recount counts them in).
# A marks 64K and is killed holding no lock, its MARK only in its slot:
# `volatile status` must still count it (not lost). Then a repair's recount
# (a process killed inside a MARK of another file, its lock taken over)
# counts a's 64K from the records: it must empty the dead slot as it does,
# or status shows 128K (counted twice). An UNMARK of a then brings the
# totals to 0.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

need_fault_lib

totals_are() { # WHAT VOLATILE_BYTES RANGES
	status_json st
	_vb=$(jq_py st 'd["volatile_bytes"]')
	_nr=$(jq_py st 'd["ranges"]')
	say "$1: volatile bytes $_vb, ranges $_nr"
	[ "$_vb" = "$2" ] && [ "$_nr" = "$3" ] ||
		soft fail "$1: the totals say $_vb bytes in $_nr ranges, not $2 in $3"
}

new_region
mkfile "$WORK/a" 64K A
mkfile "$WORK/b" 64K B

# A: marks 64K of a (into its own slot: less than 1 MiB), then waits with no lock held
bg A svt pid open "$WORK/a" rw mark 0 64K wait "$WORK/never"
wait_match A out '^mark 0 64K = 0'
apid=$(sed -n 's/^pid = //p' "$WORK/A.out")
[ -n "$apid" ] || { show A; fail "A said no pid"; }
kill -KILL "$apid"
wait_bg A
totals_are "A killed holding its deltas" 65536 1

# D: killed inside a MARK of b, holding b's lock; E takes it over: repair and recount
bg D env LD_PRELOAD="$FAULT_LIB" VT_STOP_AT="mark: tree changed, not committed" \
	timeout "$VL_TIMEOUT" "$VT" pid open "$WORK/b" rw mark 0 8K
wait_match D out '^pid = '
dpid=$(sed -n 's/^pid = //p' "$WORK/D.out")
wait_stopped D "$dpid" "D never stopped in its MARK"
kill -KILL "$dpid"
wait_bg D
ok E svt open "$WORK/b" rw unmark 0 64K
# b's 8K may or may not have been counted by D: E unmarked all of b
totals_are "after the repair's recount" 65536 1

ok F svt open "$WORK/a" rw unmark 0 64K
expect_line F "unmark 0 64K = 0"
totals_are "a unmarked" 0 0
exit $FAILED
