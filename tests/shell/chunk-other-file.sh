#!/bin/sh
# SPDX-License-Identifier: MIT
# A chunk a process was giving back when it was killed is its file's
# (core/pool.c chunk_reclaim: its nodes PENDING of the file whose lock the
# freer held), left to that file's repair (DESIGN 10). The repair comes
# with the next taker of that file's lock: must the region's room wait for
# someone to touch that file again? Here no one does: another file wants
# the whole region.
#
# A region with room for 8 ranges (two chunks). P marks 8 ranges of f and
# unmarks them, and is killed as its last UNMARK gives a chunk back. Then
# fresh processes mark ranges of g only, never opening f: 8 must be made.
# (Then f is opened, its lock taken and the file repaired: 8 are made.)
. "$(dirname "$0")/lib.sh"
need_cmd

need_fault_lib

VOLATILE_REGION_RANGES=8
export VOLATILE_REGION_RANGES
f=$WORK/f
g=$WORK/g
marks=
unmarks=
for k in 0 1 2 3 4 5 6 7; do
	marks="$marks mark $((k * 8))K 4K"
	unmarks="$unmarks unmark $((k * 8))K 4K"
done

# eight_of FILE NAME: a fresh process marks 8 ranges of FILE, each must be made
eight_of() {
	# shellcheck disable=SC2086 # words: "mark OFF LEN" each
	run "$2" svt open "$1" rw $marks $unmarks
	_made=$(grep -c '^mark .* = 0$' "$WORK/$2.out")
	say "$2: $_made of 8 MARKs of $(basename "$1") made"
	[ "$_made" -eq 8 ] || { show "$2"; fail "$2: only $_made of 8 MARKs of $(basename "$1") made in a region with room for 8 ranges, f untouched since its freer was killed"; }
}

new_region
mkfile "$f" 64K A
mkfile "$g" 64K G
eight_of "$g" first

# P, killed as its UNMARK of f gives a chunk back
# shellcheck disable=SC2086
bg P env LD_PRELOAD="$FAULT_LIB" VT_STOP_AT="chunk_free: taken, not free" \
	timeout "$VL_TIMEOUT" "$VT" pid open "$f" rw $marks $unmarks
wait_match P out '^pid = '
p_pid=$(sed -n 's/^pid = //p' "$WORK/P.out")
[ -n "$p_pid" ] || { show P; fail "P said no pid"; }
wait_stopped P "$p_pid" "P never reached the step that gives a chunk back"
kill -KILL "$p_pid"
wait_bg P

soft eight_of "$g" after
soft eight_of "$g" again
# f touched (its lock taken, so its repair made): the chunk comes back then
ok touch svt open "$f" rw unmark 0 4K
eight_of "$g" repaired
exit $FAILED
