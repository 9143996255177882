#!/bin/sh
# SPDX-License-Identifier: MIT
# A chunk of nodes lost by a process killed as it gave the chunk back
# (core/pool.c chunk_reclaim: every node taken, IDLE -> PENDING of no
# file, then written FREE and pushed) must be found again when the region
# looks full (vl_nodes_sweep, DESIGN 10): a killed process may lose
# nodes for a while, never the region's room for good.
#
# A region with room for 8 ranges (two chunks). 1. P marks 8 ranges of f
# (both chunks) and unmarks them; the last UNMARK gives a chunk back, and
# P is killed there. Then a fresh process must still be able to mark 8
# ranges. 2. f keeps 4 ranges (one chunk) and its other chunk unused; S's
# MARK of g finds the region full and sweeps, taking that chunk, and is
# killed before it pushes it (vl_nodes_sweep: the chunk's first node
# PENDING, the rest FREE). Then a fresh process must still be able to
# mark 4 ranges of g.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

need_fault_lib

VOLATILE_REGION_RANGES=8
export VOLATILE_REGION_RANGES
f=$WORK/f
marks=
unmarks=
for k in 0 1 2 3 4 5 6 7; do
	marks="$marks mark $((k * 8))K 4K"
	unmarks="$unmarks unmark $((k * 8))K 4K"
done

# eight_ranges NAME: a fresh process marks 8 ranges of f, each must be made
eight_ranges() {
	# shellcheck disable=SC2086 # words: "mark OFF LEN" each
	run "$1" svt open "$f" rw $marks $unmarks
	_made=$(grep -c '^mark .* = 0$' "$WORK/$1.out")
	say "$1: $_made of 8 MARKs made"
	[ "$_made" -eq 8 ] || { show "$1"; fail "$1: only $_made of 8 MARKs made in a region with room for 8 ranges"; }
}

new_region
mkfile "$f" 64K A
eight_ranges first
status_json st
expect_eq "capacity of the small region" "$(jq_py st 'd["capacity_ranges"]')" 8

# P, killed as its UNMARK gives a chunk back (all of it taken, none of it free yet)
# shellcheck disable=SC2086
bg P env LD_PRELOAD="$FAULT_LIB" VT_STOP_AT="chunk_free: taken, not free" \
	timeout "$VL_TIMEOUT" "$VT" pid open "$f" rw $marks $unmarks
wait_match P out '^pid = '
p_pid=$(sed -n 's/^pid = //p' "$WORK/P.out")
[ -n "$p_pid" ] || { show P; fail "P said no pid"; }
wait_stopped P "$p_pid" "P never reached the step that gives a chunk back"
kill -KILL "$p_pid"
wait_bg P

eight_ranges after
# and again: a loss found late is still a loss
eight_ranges again

# ---- 2. a sweeper killed with the chunks it took --------------------------------
new_region
mkfile "$f" 64K A
g=$WORK/g
mkfile "$g" 64K G
# shellcheck disable=SC2086
ok F svt open "$f" rw $marks unmark 0K 4K unmark 8K 4K unmark 16K 4K unmark 24K 4K
bg S env LD_PRELOAD="$FAULT_LIB" VT_STOP_AT="nodes_sweep: chained, not pushed" \
	timeout "$VL_TIMEOUT" "$VT" pid open "$g" rw mark 0 4K
wait_match S out '^pid = '
s_pid=$(sed -n 's/^pid = //p' "$WORK/S.out")
[ -n "$s_pid" ] || { show S; fail "S said no pid"; }
wait_stopped S "$s_pid" "S never reached the sweep's step between its taking and its push"
kill -KILL "$s_pid"
wait_bg S
run G svt open "$g" rw mark 0 4K mark 8K 4K mark 16K 4K mark 24K 4K \
	unmark 0 4K unmark 8K 4K unmark 16K 4K unmark 24K 4K
made=$(grep -c '^mark .* = 0$' "$WORK/G.out")
say "after the sweeper's death: $made of 4 MARKs of g made (f holds 4 ranges of 8)"
[ "$made" -eq 4 ] || { show G; fail "after a sweeper's death: only $made of the 4 ranges left made"; }
exit $FAILED
