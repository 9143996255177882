#!/bin/sh
# SPDX-License-Identifier: MIT
# A user who lies through their own worker cannot stop the machine's
# purge of the others (DESIGN 22, 18). U2 takes its worker's socket (as
# ptrace lets it: the test does it as root, with pidfd_getfd, then acts
# as U2) and stops the worker; from then on U2 answers root's asks with
# answers that pass every check root can make: its oldest age an hour
# back (so it is always picked first), and every PURGE "done", 2^62 bytes
# of one range, though nothing was purged. root's daemon, under a
# threshold that always holds (VOLATILE_MIN_AVAILABLE=100%), must still
# purge U1's range, marked after the lie began, within 60 s: no
# purged byte the daemon cannot see in the machine's memory ends its pass.
SYS_UIDS="62005 62006"
. "$(dirname "$0")/system-root-lib.sh"
sys_daemon_turn

f1=$WORK/u$U1/f
f2=$WORK/u$U2/f
holder h2 $U2 open "$f2" rwc fill 0 64K B mark 8K 8K touch "$CUE/u2-marked" wait "$CUE/end"
wait_file "$CUE/u2-marked"

sys_daemon_start
SYS_SHOW=liar
w2=
liar_cleanup() {
	[ -n "$w2" ] && kill -KILL "$w2" 2>/dev/null
	sys_cleanup
}
trap liar_cleanup EXIT

u2_purged() {
	[ "$(purged_of s2 $U2)" = true ]
}
# U2's worker up and answering: its range purged honestly
sys_until_within "U2's range purged" 60 u2_purged
w2=$(sys_worker_of $U2)
[ -n "$w2" ] || fail "no worker for uid $U2"

# U2 takes the socket, stops the worker, and lies
bg liar "$PYTHON" "$VL_TOP_SRCDIR/tests/helpers/sysliar.py" "$w2" $U2 "$CUE/liar.count" \
	--purged $((1 << 62))
wait_file "$CUE/liar.count"
liar_asked() {
	grep -q "purge [1-9]" "$CUE/liar.count"
}

# U1 marks after the lie began: root finds U1 at its next look for users
holder h1 $U1 open "$f1" rwc fill 0 64K A mark 0 4K touch "$CUE/u1-marked" wait "$CUE/end" \
	unmark 0 4K expect 4K 60K A
wait_file "$CUE/u1-marked"
sys_until_within "the lying worker asked to purge" 60 liar_asked
u1_purged() {
	[ "$(purged_of s1 $U1)" = true ]
}
sys_until_within "U1's range purged while U2 lies ($(cat "$CUE/liar.count"))" 60 u1_purged

# nor flood root's log: the daemon, woken every 20 ms while memory stays
# under its threshold, says what it purged at most once a second
liar_purges() {
	sed -n 's/^report [0-9]* purge \([0-9]*\) .*/\1/p' "$CUE/liar.count"
}
p0=$(liar_purges)
l0=$(wc -l <"$WORK/d.err")
t0=$(date +%s%N)
liar_asked_100_more() {
	[ "$(liar_purges)" -ge $((p0 + 100)) ]
}
sys_until_within "the liar asked 100 more PURGEs" 120 liar_asked_100_more
lines=$(($(wc -l <"$WORK/d.err") - l0))
ms=$((($(date +%s%N) - t0) / 1000000))
# a second's say: the machine's rule's rounds (8 at most) and a line a user (2)
[ "$lines" -le $(((ms / 1000 + 1) * 10)) ] ||
	{ show d; fail "the daemon logged $lines lines in $ms ms while U2 lied (at most 10 a second)"; }
kill -TERM "$dpid"
wait_bg d
touch "$CUE/end"
wait_bg h1
[ "$rc" -eq 0 ] || { show h1; fail "U1's holder: exit status $rc"; }
expect_line h1 "unmark 0 4K = 1"
say "U2's lies cost U1 nothing: its range purged all the same"
