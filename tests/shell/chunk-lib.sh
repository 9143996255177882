# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# chunk-lib.sh - sourced, after lib.sh, by the tests of the region's
# chunks of nodes and their repair (DESIGN 10): chunk-lost.sh,
# chunk-other-file.sh, chunk-sweep-first.sh, full-repair-*.sh.
#
# What a test gets:
#   FAULT_LIB             need_fault_lib's, checked
#   VOLATILE_REGION_RANGES=8 (two chunks of 4), exported; a test wanting
#                         another size sets it after
#   $marks, $unmarks      vt's words for 8 ranges of 4K at 8K steps (0K,
#                         8K ... 56K): "mark 0K 4K mark 8K 4K ...", split
#                         on purpose where used
#   marks_made FILE NAME  a fresh process marks the 8 and unmarks them
#   stopped_at NAME STEP WHY VT-ARGS...  a process stopped at a step of
#                         the fault library, its pid $fpid
#   STOPPED, stop_all     the stopped ones a test keeps, killed
#   freer NAME FILE       one stopped as its UNMARK gives a chunk back

need_fault_lib

VOLATILE_REGION_RANGES=8
export VOLATILE_REGION_RANGES
marks=
unmarks=
for _k in 0 1 2 3 4 5 6 7; do
	marks="$marks mark $((_k * 8))K 4K"
	unmarks="$unmarks unmark $((_k * 8))K 4K"
done

# marks_made FILE NAME: a fresh process (svt, output $WORK/NAME.out, exit
# status $rc) marks the 8 ranges of FILE and unmarks them; $made is how
# many MARKs were made, and is said. The caller says how many it wants.
marks_made() {
	# shellcheck disable=SC2086 # words: "mark OFF LEN" each
	run "$2" svt open "$1" rw $marks $unmarks
	made=$(grep -c '^mark .* = 0$' "$WORK/$2.out")
	say "$2: $made of 8 MARKs of $(basename "$1") made"
}

# The pids of the stopped processes a test keeps (it adds them), for
# stop_all
STOPPED=

# stop_all: kill every process in $STOPPED (a stopped process would wait
# for a SIGCONT before it acts on the exit's SIGTERM)
stop_all() {
	for _p in $STOPPED; do
		kill -KILL "$_p" 2>/dev/null
	done
	STOPPED=
}

# stopped_at NAME STEP WHY VT-ARGS...: bg NAME, vt VT-ARGS under the fault
# library, told to stop at STEP (VT_STOP_AT); once it is stopped there its
# pid is $fpid. If it says no pid, NAME is shown, stop_all, and the test
# fails ("NAME said no pid"); if it never stops there (60 s), NAME is
# shown and the test fails with WHY.
stopped_at() {
	_sa=$1 # (not _name: bg sets that)
	_step=$2
	_why=$3
	shift 3
	bg "$_sa" env LD_PRELOAD="$FAULT_LIB" VT_STOP_AT="$_step" \
		timeout "$VL_TIMEOUT" "$VT" pid "$@"
	wait_match "$_sa" out '^pid = '
	fpid=$(sed -n 's/^pid = //p' "$WORK/$_sa.out")
	[ -n "$fpid" ] || { show "$_sa"; stop_all; fail "$_sa said no pid"; }
	wait_stopped "$_sa" "$fpid" "$_why"
}

# freer NAME FILE: stopped_at, for a process that marks the 8 ranges of
# FILE, unmarks them and stops as its last UNMARK gives a chunk back
# (core/pool.c chunk_reclaim: the chunk's nodes all taken, none free yet,
# PENDING of FILE, whose lock it holds)
freer() {
	# shellcheck disable=SC2086 # words: "mark OFF LEN" each
	stopped_at "$1" "chunk_free: taken, not free" \
		"$1 never reached the step that gives a chunk back" \
		open "$2" rw $marks $unmarks
}
