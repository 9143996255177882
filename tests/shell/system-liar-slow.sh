#!/bin/sh
# SPDX-License-Identifier: MIT
# A user whose worker answers slowly and lies cannot hold up the machine's
# purge of the others (DESIGN 22, 18). U2 takes its worker's socket (as
# ptrace lets it: the test does it as root, with pidfd_getfd, then acts as
# U2), stops the worker, and answers root's asks with answers that pass
# every check root can make: its oldest age an hour back (so it is always
# picked first), and each PURGE, after 990 ms (just inside root's 1 s),
# "4096 bytes, 1 range", though nothing was purged. A worker that keeps
# saying it purged stays usable; asked up to 16 times a pass, it would
# make the others wait 16 s a pass. root's daemon, under a threshold that
# always holds (VOLATILE_MIN_AVAILABLE=100%), must purge U1's range,
# marked after the lie began, within 8 s: a PURGE whose memory rise is
# less than the worker said sets that region aside for the wake-up.
SYS_UIDS="62201 62202"
. "$(dirname "$0")/system-root-lib.sh"
sys_daemon_turn

f1=$WORK/u$U1/f
f2=$WORK/u$U2/f
holder h1 $U1 open "$f1" rwc fill 0 64K A mark 0 4K touch "$CUE/u1-marked" wait "$CUE/u1-go" \
	mark 8K 4K touch "$CUE/u1-again" wait "$CUE/end" unmark 8K 4K
holder h2 $U2 open "$f2" rwc fill 0 64K B mark 8K 8K touch "$CUE/u2-marked" wait "$CUE/end"
wait_file "$CUE/u1-marked"
wait_file "$CUE/u2-marked"

sys_daemon_start
SYS_SHOW="liar u1"
w2=
liar_cleanup() {
	[ -n "$w2" ] && kill -KILL "$w2" 2>/dev/null
	sys_cleanup
}
trap liar_cleanup EXIT

both_purged() {
	[ "$(purged_of s1 $U1)" = true ] && [ "$(purged_of s2 $U2)" = true ]
}
# both workers up and answering: each one's range purged honestly
sys_until_within "U1's and U2's ranges purged" 60 both_purged
w2=$(sys_worker_of $U2)
[ -n "$w2" ] || fail "no worker for uid $U2"

# U2 takes the socket, stops the worker, and lies slowly
bg liar "$PYTHON" "$VL_TOP_SRCDIR/tests/helpers/sysliar.py" "$w2" $U2 "$CUE/liar.count" \
	--purged 4096 --purge-delay 0.99
wait_file "$CUE/liar.count"
liar_asked() {
	grep -q "purge [1-9]" "$CUE/liar.count"
}
sys_until_within "the lying worker asked to purge" 60 liar_asked

# U1 marks after the lie began: its worker is up, its region known
touch "$CUE/u1-go"
wait_file "$CUE/u1-again"
t0=$(date +%s)
u1_purged() {
	[ "$(purged_of s1 $U1)" = "true true" ]
}
# when, on the liar's clock (CLOCK_BOOTTIME, /proc/uptime's)
echo "$(awk 'NR == 1 { print $1 }' /proc/uptime) U1 marked" >"$WORK/u1.out"
sys_until_within "U1's range purged while U2 lies slowly" 8 u1_purged
t1=$(date +%s)
n_lies=$(cat "$CUE/liar.count")
kill -TERM "$dpid"
wait_bg d
touch "$CUE/end"
wait_bg h1
[ "$rc" -eq 0 ] || { show h1; fail "U1's holder: exit status $rc"; }
expect_line h1 "unmark 8K 4K = 1"
say "U2's slow lies ($n_lies) cost U1 little: its range purged within $((t1 - t0)) s"
