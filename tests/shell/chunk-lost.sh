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
. "$(dirname "$0")/chunk-lib.sh"

f=$WORK/f

# eight_ranges NAME: a fresh process marks 8 ranges of f, each must be made
eight_ranges() {
	marks_made "$f" "$1"
	[ "$made" -eq 8 ] || { show "$1"; fail "$1: only $made of 8 MARKs made in a region with room for 8 ranges"; }
}

new_region
mkfile "$f" 64K A
eight_ranges first
status_json st
expect_eq "capacity of the small region" "$(jq_py st 'd["capacity_ranges"]')" 8

# P, killed as its UNMARK gives a chunk back (all of it taken, none of it free yet)
freer P "$f"
kill -KILL "$fpid"
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
stopped_at S "nodes_sweep: chained, not pushed" \
	"S never reached the sweep's step between its taking and its push" \
	open "$g" rw mark 0 4K
kill -KILL "$fpid"
wait_bg S
run G svt open "$g" rw mark 0 4K mark 8K 4K mark 16K 4K mark 24K 4K \
	unmark 0 4K unmark 8K 4K unmark 16K 4K unmark 24K 4K
made=$(grep -c '^mark .* = 0$' "$WORK/G.out")
say "after the sweeper's death: $made of 4 MARKs of g made (f holds 4 ranges of 8)"
[ "$made" -eq 4 ] || { show G; fail "after a sweeper's death: only $made of the 4 ranges left made"; }
exit $FAILED
