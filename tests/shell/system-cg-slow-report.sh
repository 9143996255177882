#!/bin/sh
# SPDX-License-Identifier: MIT
# A user whose worker answers each REPORT naming a memory cgroup slowly
# cannot hold up the machine's purge of the others (DESIGN 22, 18). Root
# makes 100 memory cgroups with a limit (256M: below MemTotal), as a
# machine with many services may have. At each look for the cgroups
# (every 10 s) the daemon sends every worker a REPORT naming each one, and
# each watched cgroup is asked again at each wake-up. U2 takes its
# worker's socket (as ptrace lets it: the test does it as root, with
# pidfd_getfd, then acts as U2) and answers each REPORT naming a cgroup
# after 80 ms (inside root's 100 ms) with "unpurged bytes, an hour old"
# (so each becomes watched), and every other ask at once with nothing. A
# REPORT's deadline is a pass's cost; a look is 100 passes: 8 s of the
# liar's, during which the daemon relieves nothing. root's daemon, under a
# threshold that always holds (VOLATILE_MIN_AVAILABLE=100%), must purge
# U1's range, marked once the liar is asked of a cgroup, within 4 s: a
# liar costs the others about 2 s a wake-up at most.
SYS_UIDS="62301 62302"
. "$(dirname "$0")/system-root-lib.sh"
sys_daemon_turn

NCG=100
. "$(dirname "$0")/cgroup-lib.sh"
cgs_make "$NCG" slow

f1=$WORK/u$U1/f
f2=$WORK/u$U2/f
holder h1 $U1 open "$f1" rwc fill 0 64K A mark 0 4K touch "$CUE/u1-marked" wait "$CUE/u1-go" \
	mark 8K 4K touch "$CUE/u1-again" wait "$CUE/end" unmark 8K 4K
holder h2 $U2 open "$f2" rwc fill 0 64K B mark 8K 8K touch "$CUE/u2-marked" wait "$CUE/end"
wait_file "$CUE/u1-marked"
wait_file "$CUE/u2-marked"

sys_daemon_start
SYS_SHOW="liar"
w2=
slow_cleanup() {
	[ -n "$w2" ] && kill -KILL "$w2" 2>/dev/null
	kill -TERM "$dpid" 2>/dev/null
	wait_bg d
	cgs_remove
	sys_cleanup
}
trap slow_cleanup EXIT

both_purged() {
	[ "$(purged_of s1 $U1)" = true ] && [ "$(purged_of s2 $U2)" = true ]
}
sys_until_within "U1's and U2's ranges purged" 60 both_purged
w2=$(sys_worker_of $U2)
[ -n "$w2" ] || fail "no worker for uid $U2"

bg liar "$PYTHON" "$VL_TOP_SRCDIR/tests/helpers/sysliar.py" "$w2" $U2 "$CUE/liar.count" \
	--cgroups-only --cg-report-delay 0.08
wait_file "$CUE/liar.count"
# the next look for the cgroups (within 10 s): the liar asked of one
in_look() {
	grep -q "cgroup [1-9]" "$CUE/liar.count"
}
sys_until_within "the liar asked of a cgroup" 60 in_look

touch "$CUE/u1-go"
wait_file "$CUE/u1-again"
t0=$(date +%s.%N)
u1_purged() {
	[ "$(purged_of s1 $U1)" = "true true" ]
}
sys_until_within "U1's range purged while U2 answers cgroup REPORTs slowly" 4 u1_purged
t1=$(date +%s.%N)
kill -TERM "$dpid"
wait_bg d
touch "$CUE/end"
wait_bg h1
[ "$rc" -eq 0 ] || { show h1; fail "U1's holder: exit status $rc"; }
expect_line h1 "unmark 8K 4K = 1"
say "U2's slow cgroup REPORTs cost U1 little: its range purged within $(echo "$t1 $t0" | awk '{ printf "%.1f", $1 - $2 }') s"
