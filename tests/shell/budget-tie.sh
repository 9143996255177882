#!/bin/sh
# SPDX-License-Identifier: MIT
# A MARK over its budget purges the oldest range, and of ranges whose ages
# tie (marked within one tick of the age clock, DESIGN 6 and 10: the order
# across files is not known there) another file's before its own: the
# range it has just marked is not the first to go. B's record is made
# first (the lower file slot, which a tie would otherwise favour); then A
# is marked, and B right after it, within the same tick: B's MARK, over
# the budget of 64K, purges A; B's UNMARK says 0, A's 1.
. "$(dirname "$0")/lib.sh"
need_cmd

A=$WORK/a
B=$WORK/b
new_region
mkfile "$A" 64K A
mkfile "$B" 64K B
run tie env VOLATILE_BUDGET=64K LD_PRELOAD="$VOLATILE_LIBRARY" "$VT" \
	open "$B" rw mark 0 64K unmark 0 64K \
	open "$A" rw mark 0 64K \
	open "$B" rw mark 0 64K unmark 0 64K \
	open "$A" rw unmark 0 64K
[ "$rc" -eq 0 ] || { show tie; fail "exit status $rc"; }
got=$(grep -c '^unmark 0 64K = ' "$WORK/tie.out")
[ "$got" -eq 3 ] || { show tie; fail "three UNMARKs wanted"; }
b=$(grep '^unmark 0 64K = ' "$WORK/tie.out" | sed -n 2p)
a=$(grep '^unmark 0 64K = ' "$WORK/tie.out" | sed -n 3p)
[ "$b" = "unmark 0 64K = 0" ] ||
	{ show tie; fail "B's MARK over its budget purged B, just marked, not A (ages tied or not): $b"; }
[ "$a" = "unmark 0 64K = 1" ] || { show tie; fail "A not purged: $a"; }
ok bytes vt open "$B" r expect 0 64K B
say "B's MARK over its budget purged A, not its own range"
exit 0
