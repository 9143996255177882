#!/bin/sh
# SPDX-License-Identifier: MIT
# Crash safety and failing system calls, walked point by point (DESIGN 4, 11),
# with the test suite's fault-injecting copy of the library
# (tests/fault/libvolatile-fault.so, see src/core/fault.h):
#
#   kill:    a workload of MARKs, UNMARKs and budget purges is SIGKILLed at
#            its 1st, 2nd, ... step inside a critical section (locks held,
#            shared state half changed), until it runs to its end.
#   repair:  a process dies in the middle of a MARK; the next one, which
#            repairs the file, is killed at each step of its repair;
#   restamp: a process whose age clock is 41 days on restamps a file's
#            ranges near the wrap (DESIGN 10), killed at each step;
#   syscall: the same workload's 1st, 2nd, ... system call fails with
#            EINTR, ENOMEM, EAGAIN, until none is left to fail.
#
# Each walk takes every point in turn for its first $VL_FAULT_BUDGET
# seconds (see "the budget" below), then one point in three, and always
# the points it must reach: every point is walked by one of three seeds.
#
# After each, a fresh process (the ordinary library) must get its answers
# at once (a lock whose holder died is repaired, never waited on forever),
# and THE INVARIANT must hold: bytes never marked are intact, and an
# UNMARK that says 0 covers only intact bytes. Then the region must work
# as new. The workload itself must never crash, hang or print, and its
# failed calls must say an errno.
. "$(dirname "$0")/lib.sh"
need_cmd

need_fault_lib

f=$WORK/cache
report=$WORK/report

# The workload: marks that merge, an UNMARK that splits, a budget of 12K
# that purges oldest first, all inside [0, 48K) of a 64K file.
workload() {
	env VOLATILE_BUDGET=12K LD_PRELOAD="$FAULT_LIB" VOLATILE_FAULT_REPORT="$report" "$@" \
		timeout "$VL_TIMEOUT" "$VT" open "$f" rw mark 0 8K mark 16K 8K mark 4K 8K \
		unmark 8K 2K mark 32K 8K unmark 0 4K mark 40K 4K unmark 16K 8K
}

# check_file_after WHAT FILE MARKED FILL: FILE (FILL all through) was
# marked only inside [0, MARKED): a fresh process gets its answers at
# once, the bytes after MARKED are intact, and an UNMARK of [0, MARKED)
# that says 0 covers intact bytes.
check_file_after() {
	_what=$1 _file=$2 _marked=$3 _fill=$4
	run chk timeout "$VL_TIMEOUT" "$VT" open "$_file" rw expect "$_marked" $((64 - ${_marked%K}))K "$_fill" \
		unmark 0 "$_marked"
	[ "$rc" -ne 124 ] || fail "$_what: a fresh process hung (a lock never repaired)"
	[ "$rc" -eq 0 ] || { show chk; fail "$_what: bytes of $_file never marked were changed"; }
	if grep -qx "unmark 0 $_marked = 0" "$WORK/chk.out"; then
		run chk0 vt open "$_file" r expect 0 "$_marked" "$_fill"
		[ "$rc" -eq 0 ] || { show chk0; fail "$_what: UNMARK of $_file said 0 over bytes that are not intact"; }
	else
		grep -qx "unmark 0 $_marked = 1" "$WORK/chk.out" || { show chk; fail "$_what: UNMARK gave no answer"; }
	fi
}

# After the workload, whatever became of it: answers at once, the
# invariant, and a region that works.
check_after() {
	check_file_after "$1" "$f" 48K A
	run again timeout "$VL_TIMEOUT" "$VT" open "$f" rw mark 0 4K unmark 0 4K
	grep -qx 'unmark 0 4K = 0' "$WORK/again.out" || { show again; fail "$1: the region does not work as new"; }
	run st timeout "$VL_TIMEOUT" "$VOLATILE_CMD" status --json
	[ "$rc" -eq 0 ] || { show st; fail "$1: volatile status failed"; }
}

# ---- the budget -------------------------------------------------------------------
# The walks grow with every fault point, and make check must not. So each
# walk takes its points one by one for its first $VL_FAULT_BUDGET seconds
# (20 unless set; 0: no limit, every point), then only one point in
# $stride: those whose number is $offset modulo $stride, $offset being the
# seed ($VL_FAULT_SEED, else the date's seconds; printed) modulo $stride,
# and the points the walk must reach, found by name in a traced run
# (VOLATILE_FAULT_TRACE, src/core/fault.h). Three runs with seeds 0, 1 and
# 2 walk every point; a failure is walked again with the seed it printed.
budget=${VL_FAULT_BUDGET:-20}
stride=3
seed=${VL_FAULT_SEED:-$(date +%s)}
offset=$((seed % stride))
if [ "$budget" -gt 0 ]; then
	say "each walk: every point for ${budget}s, then one in $stride from $offset (VL_FAULT_SEED=$seed)"
else
	say "each walk: every point (VL_FAULT_BUDGET=0)"
fi

# walk_start KIND MUST WORKLOAD PREPARE: a walk of KIND (step or call)
# begins; its points whose name matches the ERE MUST are always walked.
walk_start() {
	_kind=$1 _must=$2 _trace_workload=$3 _trace_prepare=$4
	n=0
	tried=0
	sampled=0
	_since=$(date +%s)
	rm -f "$WORK/must"
}

# The numbers of the points to walk whatever the budget, from a traced run
# of the walk's workload, made when the sampling begins (at once, the
# walk's region as its later runs find it).
must_points() {
	: >"$WORK/must"
	[ -n "$_must" ] || return 0
	rm -f "$report"
	$_trace_prepare
	run trace "$_trace_workload" VOLATILE_FAULT_TRACE=1
	grep -E "^$_kind [0-9]+ ($_must)" "$report" | cut -d' ' -f2 >"$WORK/must"
	[ -s "$WORK/must" ] || { show trace; fail "the workload never passes a point named $_must"; }
	rm -f "$report"
}

# Sets n to the next point to walk.
next_point() {
	n=$((n + 1))
	tried=$((tried + 1))
	[ "$budget" -gt 0 ] && [ $(($(date +%s) - _since)) -ge "$budget" ] || return 0
	[ -f "$WORK/must" ] || must_points
	while [ $((n % stride)) -ne "$offset" ] && ! grep -qx "$n" "$WORK/must"; do
		n=$((n + 1))
		sampled=$((sampled + 1))
	done
}

# How much of its points a walk took (its last run passed the last point)
walked() {
	if [ "$sampled" -eq 0 ]; then
		echo "each of $((n - 1))"
	else
		echo "$((tried - 1)) of the (at most) $((n - 1)), the rest left to other seeds,"
	fi
}

# kill_walk LABEL WORKLOAD PREPARE CHECK [MUST]: WORKLOAD killed at its
# 1st, 2nd, ... step inside a critical section (as the budget allows, and
# at every step named by the ERE MUST), until it runs to its end; PREPARE
# before each run, CHECK after each kill. Sets killed; the names of the
# steps killed at go to $WORK/steps.
kill_walk() {
	_label=$1 _workload=$2 _prepare=$3 _check=$4
	walk_start step "${5:-}" "$_workload" "$_prepare"
	killed=0
	: >"$WORK/steps"
	while :; do
		next_point
		[ "$n" -le 2000 ] || fail "$_label: more than 2000 steps: the walk does not end"
		rm -f "$report"
		$_prepare
		run w "$_workload" VOLATILE_FAULT_KILL=$n
		if [ "$rc" -eq 137 ]; then
			killed=$((killed + 1))
			grep -q "^kill $n " "$report" || { show w; fail "$_label, step $n: killed, but not by the injection"; }
			cut -d' ' -f3- "$report" >>"$WORK/steps"
		elif [ "$rc" -eq 0 ] && [ ! -s "$report" ]; then
			break # past the last step
		else
			show w
			fail "$_label, step $n: the workload ended with status $rc"
		fi
		$_check "$_label, killed at step $n ($(cut -d' ' -f3- "$report"))"
	done
}

# The ordinary library for everything but the workload
LD_PRELOAD=$VOLATILE_LIBRARY
export LD_PRELOAD

# ---- kill at every step ---------------------------------------------------------
new_region
prepare() {
	mkfile "$f" 64K A
}
kill_walk "kill walk" workload prepare check_after
[ "$killed" -ge 20 ] || fail "only $killed steps: the injection points are not reached"
say "killed at $(walked) steps; every time, the next process got its answers and the invariant held"
# the workload's own result when nothing kills it, for reference
check_after "the workload undisturbed"

# ---- kill at every step, in a full region ----------------------------------------------
# Room for 8 ranges (the least a region has): f takes all 8 nodes, then
# unmarks two ranges, whose nodes f keeps as its spares; g's MARK finds no
# free node, sweeps for lost ones (vl_nodes_sweep) and must take one of
# f's spares (vl_spare_steal); then both give nodes back. Files f and g
# are checked as above.
g=$WORK/other

workload_full() {
	env VOLATILE_REGION_RANGES=8 LD_PRELOAD="$FAULT_LIB" VOLATILE_FAULT_REPORT="$report" "$@" \
		timeout "$VL_TIMEOUT" "$VT" open "$f" rw mark 0 4K mark 8K 4K mark 16K 4K \
		mark 24K 4K mark 32K 4K mark 40K 4K mark 48K 4K mark 56K 4K \
		unmark 48K 4K unmark 56K 4K \
		open "$g" rw mark 0 4K unmark 0 4K open "$f" rw unmark 8K 4K
}

check_after_full() {
	check_file_after "$1" "$f" 60K A
	check_file_after "$1" "$g" 8K G
	run again timeout "$VL_TIMEOUT" "$VT" open "$f" rw mark 0 4K mark 8K 4K unmark 0 12K
	grep -qx 'unmark 0 12K = 0' "$WORK/again.out" || { show again; fail "$1: the region does not work as new"; }
}

new_region
# whichever process attaches first makes the region: make it this small
VOLATILE_REGION_RANGES=8 mkfile "$f" 64K A
VOLATILE_REGION_RANGES=8 run mk "$VT" open "$f" rw mark 0 4K unmark 0 4K
status_json full
expect_eq "capacity of the small region" "$(jq_py full 'd["capacity_ranges"]')" 8
# each run in a region made anew (by the workload, as small), so that the
# walk goes through the same steps as the undisturbed run: nodes a killed
# run lost, found again by a later run's sweep, would spare it the steal
prepare_full() {
	rm -f "$VOLATILE_REGION"
	mkfile "$f" 64K A
	mkfile "$g" 64K G
}
kill_walk "full region" workload_full prepare_full check_after_full "spare_steal: taken, not given"
grep -c " = 0$" "$WORK/w.out" | grep -qx 13 ||
	{ show w; fail "full region: the undisturbed workload did not succeed throughout"; }
grep -q "^spare_steal: taken, not given" "$WORK/steps" ||
	fail "full region: the walk never killed the workload inside the steal of a spare"
say "full region: killed at $(walked) steps; every time, the next process got its answers and the invariant held"

# ---- kill at every step, across a fold of the totals ----------------------------------
# Two MARKs of 600K: the second takes this process's slot's deltas past
# 1 MiB and folds them into the region's shared totals (DESIGN 10). A kill
# anywhere, above all between the fold's taking of the deltas and its adds
# (under the file lock: the next taker repairs and counts the totals
# again), must leave the totals exact: once the next process has unmarked
# everything, `volatile status` says 0 bytes in 0 ranges.
fold_file=$WORK/fold

workload_fold() {
	env LD_PRELOAD="$FAULT_LIB" VOLATILE_FAULT_REPORT="$report" "$@" \
		timeout "$VL_TIMEOUT" "$VT" open "$fold_file" rw mark 0 600K mark 1000K 600K \
		unmark 0 300K
}

prepare_fold() {
	mkfile "$fold_file" 2M F
}

check_after_fold() {
	run chk timeout "$VL_TIMEOUT" "$VT" open "$fold_file" rw expect 1600K 448K F unmark 0 1600K
	[ "$rc" -ne 124 ] || fail "$1: a fresh process hung (a lock never repaired)"
	[ "$rc" -eq 0 ] || { show chk; fail "$1: bytes of $fold_file never marked were changed"; }
	if grep -qx "unmark 0 1600K = 0" "$WORK/chk.out"; then
		run chk0 vt open "$fold_file" r expect 0 1600K F
		[ "$rc" -eq 0 ] || { show chk0; fail "$1: UNMARK said 0 over bytes that are not intact"; }
	else
		grep -qx "unmark 0 1600K = 1" "$WORK/chk.out" || { show chk; fail "$1: UNMARK gave no answer"; }
	fi
	status_json st
	_vb=$(jq_py st 'd["volatile_bytes"]')
	_nr=$(jq_py st 'd["ranges"]')
	[ "$_vb" = 0 ] && [ "$_nr" = 0 ] ||
		fail "$1: nothing is marked, and the totals say $_vb bytes in $_nr ranges"
}

new_region
kill_walk "fold" workload_fold prepare_fold check_after_fold "totals: a slot's deltas taken, not folded"
grep -q "^totals: a slot's deltas taken, not folded" "$WORK/steps" ||
	fail "fold: the walk never killed the workload inside a fold of the totals"
say "fold: killed at $(walked) steps; every time, the invariant held and the totals came out exact"

# ---- kill the repairer at every step of its repair --------------------------------
# A process dies in the middle of a MARK of f (stopped at the step where
# f's tree is changed and nothing is committed yet, then killed); the
# walk's process, whose first lock of f takes it over, repairs f (its
# tree, age order, spares, counts; the totals counted again with every
# lock tried) and is killed at each step of that in turn. The process
# after it repairs again: a repair cut anywhere is repaired once more.
dead_marker() {
	mkfile "$f" 64K A
	bg dm env LD_PRELOAD="$FAULT_LIB" VT_STOP_AT="mark: tree changed, not committed" \
		timeout "$VL_TIMEOUT" "$VT" pid open "$f" rw mark 0 8K mark 16K 8K mark 4K 8K
	wait_match dm out '^pid = '
	dpid=$(sed -n 's/^pid = //p' "$WORK/dm.out")
	[ -n "$dpid" ] || { show dm; fail "repairer walk: the marker said no pid"; }
	wait_stopped dm "$dpid" "repairer walk: the marker never stopped in its change"
	kill -KILL "$dpid"
	wait_bg dm
}

repairer() {
	env LD_PRELOAD="$FAULT_LIB" VOLATILE_FAULT_REPORT="$report" "$@" \
		timeout "$VL_TIMEOUT" "$VT" open "$f" rw unmark 16K 8K mark 32K 8K unmark 32K 8K
}

new_region
kill_walk "repairer" repairer dead_marker check_after \
	"repair_file: a node taken back|recount: counted, files locked"
grep -q "^repair_file: a node taken back" "$WORK/steps" ||
	fail "repairer: the walk never killed the repairer inside its repair"
grep -q "^recount: counted, files locked" "$WORK/steps" ||
	fail "repairer: the walk never killed the repairer inside its recount"
say "repairer: killed at $(walked) steps of a repair and what follows it; the invariant held"

# ---- kill the restamper at every step ------------------------------------------------
# f's three ranges marked now; a process whose age clock is 41 days on
# (the test build's VOLATILE_FAULT_AGE_SHIFT) finds them older than 40
# days on its way to the region and restamps them under f's lock, killed
# at each step of that and of its MARK after. Each run in a region made
# anew: the look is made at most once an hour in a region.
DAY=86400
marked_long_ago() {
	rm -f "$VOLATILE_REGION"
	mkfile "$f" 64K A
	run old timeout "$VL_TIMEOUT" "$VT" open "$f" rw mark 0 8K mark 16K 8K mark 32K 4K
	[ "$rc" -eq 0 ] || { show old; fail "restamper walk: the first MARKs failed"; }
}

restamper() {
	env LD_PRELOAD="$FAULT_LIB" VOLATILE_FAULT_AGE_SHIFT=$((41 * DAY)) \
		VOLATILE_FAULT_REPORT="$report" "$@" \
		timeout "$VL_TIMEOUT" "$VT" open "$f" rw mark 40K 4K unmark 16K 8K
}

new_region
kill_walk "restamper" restamper marked_long_ago check_after "restamp: an age written, not sealed"
grep -q "^restamp: an age written, not sealed" "$WORK/steps" ||
	fail "restamper: the walk never killed the restamper inside a restamp"
say "restamper: killed at $(walked) steps of a restamp and what follows it; the invariant held"

# ---- fail every system call ---------------------------------------------------------
for err in EINTR ENOMEM EAGAIN; do
	new_region
	walk_start call "" workload prepare
	while :; do
		next_point
		[ "$n" -le 2000 ] || fail "more than 2000 system calls: the walk does not end"
		rm -f "$report"
		prepare
		run w workload VOLATILE_FAULT_SYSCALL=$n:$err
		[ "$rc" -eq 0 ] && [ ! -s "$WORK/w.err" ] || { show w; fail "syscall $n failing with $err: the workload ended with status $rc"; }
		# every call answered: 0, 1, or -1 and an errno
		if grep -E '^(mark|unmark) ' "$WORK/w.out" | grep -vE ' = (0|1|-1 E[A-Z]+)$' >"$WORK/bad"; then
			cat "$WORK/bad" >&2
			fail "syscall $n failing with $err: an answer that is not 0, 1 or an errno"
		fi
		check_after "syscall $n failing with $err ($(cut -d' ' -f3- "$report" 2>/dev/null))"
		[ -s "$report" ] || break
	done
	say "$err: $(walked) system calls failed in turn; no crash, no hang, the invariant held"
done
exit 0
