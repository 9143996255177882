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
. "$(dirname "$0")/chunk-lib.sh"

f=$WORK/f
g=$WORK/g

# eight_of FILE NAME: a fresh process marks 8 ranges of FILE, each must be made
eight_of() {
	marks_made "$1" "$2"
	[ "$made" -eq 8 ] || { show "$2"; fail "$2: only $made of 8 MARKs of $(basename "$1") made in a region with room for 8 ranges, f untouched since its freer was killed"; }
}

new_region
mkfile "$f" 64K A
mkfile "$g" 64K G
eight_of "$g" first

# P, killed as its UNMARK of f gives a chunk back
freer P "$f"
kill -KILL "$fpid"
wait_bg P

soft eight_of "$g" after
soft eight_of "$g" again
# f touched (its lock taken, so its repair made): the chunk comes back then
ok touch svt open "$f" rw unmark 0 4K
eight_of "$g" repaired
exit $FAILED
