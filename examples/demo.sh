#!/bin/sh
# SPDX-License-Identifier: MIT
# demo.sh - volatile ranges at work, with examples/tilecache.
#
# tilecache renders a cache of tiles into a memfd, keeps a few on screen
# and marks the others volatile. This script plays the system running short
# of memory: it purges some of those tiles behind tilecache's back, and
# tilecache finds out when it scrolls back to them (UNMARK says "purged")
# and renders them again. A second run lets a budget do the purging.
#
# Usage: examples/demo.sh [VOLATILE [TILECACHE]]
#
# Run it from the build directory after `make` and `make examples/tilecache`
# (or `make check`). VOLATILE is the `volatile` command and TILECACHE the
# example program; they default to $VOLATILE and $TILECACHE, else to
# ./src/volatile and ./examples/tilecache.
#
# Exit status: 0 if tilecache succeeded both times and tiles were really
# purged and regenerated; 1 if not; 2 on bad usage; 77 (skip) if there is
# no /dev/shm to put a region in.

VOLATILE=${1:-${VOLATILE:-./src/volatile}}
TILECACHE=${2:-${TILECACHE:-./examples/tilecache}}
TILES=12
VIEW=4

say() { printf '%s\n' "$*"; }
step() { printf '\n==> %s\n' "$*"; }
fail() { printf 'demo: FAILED: %s\n' "$*" >&2; exit 1; }
indent() { sed 's/^/    /'; }

# The value of KEY=N on tilecache's summary line in FILE (empty if none).
summary_value() {
	sed -n "s/^summary:.* $1=\([0-9a-z]*\).*/\1/p" "$2"
}

# Every command gets a time limit where timeout(1) exists, so that a stuck
# lock makes the demo fail instead of hang.
if command -v timeout >/dev/null 2>&1; then
	LIMIT="timeout 120"
else
	LIMIT=
fi

# Run a command of the demo, showing it and its output; fail if it fails.
shown() {
	say "\$ $*"
	{ $LIMIT "$@" 2>&1; echo $? >"$WORK/rc"; } | indent
	rc=$(cat "$WORK/rc")
	[ "$rc" -eq 0 ] || fail "$* exited with status $rc"
}

if [ $# -gt 2 ] || [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
	say "Usage: $0 [VOLATILE [TILECACHE]]   (defaults: ./src/volatile ./examples/tilecache)" >&2
	exit 2
fi
[ -x "$VOLATILE" ] || { say "demo: $VOLATILE: no such program (run 'make' first, from the build directory)" >&2; exit 2; }
[ -x "$TILECACHE" ] || { say "demo: $TILECACHE: no such program (build it with 'make examples/tilecache' or 'make check')" >&2; exit 2; }
if ! [ -d /dev/shm ] || ! [ -w /dev/shm ]; then
	say "demo: no writable /dev/shm for the region; skipped" >&2
	exit 77
fi

# A private region, so that the demo neither sees nor purges anyone else's
# volatile ranges; removed at the end. No policy from the caller's
# environment: the purges below are the ones the demo asks for.
REGION=/dev/shm/volatile-demo.$$
REGION_BUDGET=/dev/shm/volatile-demo-budget.$$
WORK=$(mktemp -d "${TMPDIR:-/tmp}/volatile-demo.XXXXXX") || exit 1
PAUSE=$WORK/paused
LOG1=$WORK/run1.log
LOG2=$WORK/run2.log
pid=
unset VOLATILE_BUDGET VOLATILE_DEBUG
VOLATILE_REGION=$REGION
export VOLATILE_REGION

# shellcheck disable=SC2317 # called by the trap
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	rm -rf "$WORK"
	rm -f "$REGION" "$REGION_BUDGET"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

say "libvolatile demo: a tile cache that lets the system take back what is off screen"
say "(region $REGION, removed at the end)"

# ---- part 1: tiles marked volatile, purged by `volatile purge`, regenerated --

step "tilecache renders $TILES tiles of 64 KiB, shows $VIEW, marks the other $((TILES - VIEW)) volatile, then waits"
say "\$ $VOLATILE run -- $TILECACHE --tiles $TILES --view $VIEW --pause-after-mark $PAUSE &"
$LIMIT "$VOLATILE" run -- "$TILECACHE" --tiles "$TILES" --view "$VIEW" \
	--pause-after-mark "$PAUSE" >"$LOG1" 2>&1 &
pid=$!

# Wait (30 s at most) for tilecache to say that it has marked its tiles.
tries=0
while [ ! -e "$PAUSE" ]; do
	if ! kill -0 "$pid" 2>/dev/null; then
		indent <"$LOG1"
		fail "tilecache ended before it paused"
	fi
	tries=$((tries + 1))
	[ "$tries" -le 300 ] || { indent <"$LOG1"; fail "tilecache did not pause within 30 s"; }
	sleep 0.1 2>/dev/null || sleep 1
done
shown_lines=$(wc -l <"$LOG1")
indent <"$LOG1"

step "the region now records those tiles as volatile ranges of tilecache's memfd"
shown "$VOLATILE" status

step "memory is short: purge 128K of volatile data (whole ranges, least recently marked first)"
shown "$VOLATILE" purge --bytes 128K
shown "$VOLATILE" status

step "tilecache scrolls on: tiles coming back into view are unmarked, checked or regenerated"
rm -f "$PAUSE"
wait "$pid"
rc1=$?
pid=
tail -n +"$((shown_lines + 1))" "$LOG1" | indent
say "The purge took the least recently marked ranges: the tiles farthest from the view,"
say "which tilecache marked first. Only those had to be rendered again."

# ---- part 2: a budget does the purging ---------------------------------------

step "the same run under a budget: at each MARK, volatile tiles beyond 256K are purged, oldest first"
VOLATILE_REGION=$REGION_BUDGET
say "\$ $VOLATILE run --budget 256K -- $TILECACHE --tiles $TILES --view $VIEW"
$LIMIT "$VOLATILE" run --budget 256K -- "$TILECACHE" --tiles "$TILES" --view "$VIEW" >"$LOG2" 2>&1
rc2=$?
indent <"$LOG2"
say "The budget kept the most recently marked 256K (4 tiles) and purged the older ones"
say "as tilecache marked more; those were rendered again when they came back."

# ---- did it prove something? ----------------------------------------------------

step "what happened"
status=0
for run in 1 2; do
	if [ "$run" = 1 ]; then log=$LOG1 rc=$rc1 what="volatile purge"; else log=$LOG2 rc=$rc2 what="the budget"; fi
	line=$(grep '^summary:' "$log")
	say "run $run ($what): ${line:-no summary line}"
	purged=$(summary_value purged "$log")
	regenerated=$(summary_value regenerated "$log")
	if [ "$rc" -ne 0 ]; then
		say "demo: FAILED: run $run: tilecache exited with status $rc" >&2
		status=1
	elif [ "$(summary_value volatile "$log")" != yes ]; then
		say "demo: FAILED: run $run: volatile ranges were unavailable (was libvolatile.so preloaded?)" >&2
		status=1
	elif [ "${purged:-0}" -eq 0 ] || [ "${regenerated:-0}" -eq 0 ]; then
		say "demo: FAILED: run $run: nothing was purged and regenerated" >&2
		status=1
	fi
done
if [ "$status" -eq 0 ]; then
	say "tiles were marked volatile, purged while off screen, and regenerated when they came back;"
	say "every tile that UNMARK reported intact matched its checksum."
fi
exit "$status"
