#!/bin/sh
# SPDX-License-Identifier: MIT
# A sweeper killed with an unused chunk's first node taken and not its
# others (core/pool.c sweep_take_idle: the first IDLE -> FREE stamped with
# the tag the sweep began at, on no list; its others still IDLE of their
# file): the next sweep takes the chunk by its first node, and its taker
# passes the IDLE nodes over, which stay their file's (DESIGN 10).
#
# A region with room for 8 ranges (two chunks). f keeps 4 ranges and its
# other chunk unused; S's MARK of g finds the region full, sweeps, and is
# killed at "nodes_sweep: a chunk's first taken, not its others". Then a
# fresh process must make 4 ranges of g, and f must mark again a range it
# lets go: the region's 8 in use, none given twice.
. "$(dirname "$0")/lib.sh"
need_cmd
. "$(dirname "$0")/chunk-lib.sh"

f=$WORK/f
g=$WORK/g

new_region
mkfile "$f" 64K A
mkfile "$g" 64K G
# shellcheck disable=SC2086 # words: "mark OFF LEN" each
ok F svt open "$f" rw $marks unmark 0K 4K unmark 8K 4K unmark 16K 4K unmark 24K 4K
stopped_at S "nodes_sweep: a chunk's first taken, not its others" \
	"S never reached the sweep's step between a chunk's first node and its others" \
	open "$g" rw mark 0 4K
kill -KILL "$fpid"
wait_bg S
run G svt open "$g" rw mark 0 4K mark 8K 4K mark 16K 4K mark 24K 4K
made=$(grep -c '^mark .* = 0$' "$WORK/G.out")
say "after the sweeper's death at a chunk's first node: $made of 4 MARKs of g made"
[ "$made" -eq 4 ] || { show G; fail "after a sweeper's death at a chunk's first node: only $made of the 4 ranges left made"; }
run F2 svt open "$f" rw unmark 32K 4K mark 32K 4K mark 0K 4K
say "f, with g's 4 ranges made: $(tr '\n' ';' <"$WORK/F2.out")"
grep -q '^unmark 32K 4K = 0$' "$WORK/F2.out" || { show F2; fail "f's range 32K was not intact"; }
grep -q '^mark 32K 4K = 0$' "$WORK/F2.out" || { show F2; fail "f could not mark again the range it let go"; }
# the region's 8 in use: a ninth must not be made
grep -q '^mark 0K 4K = -1 ENOMEM$' "$WORK/F2.out" || { show F2; fail "a ninth range made in a region with room for 8: a node given twice?"; }
exit $FAILED
