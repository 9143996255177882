#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile daemon --system --foreground` (DESIGN 22): with a threshold
# that always holds (VOLATILE_MIN_AVAILABLE=100%), it purges every user's
# ranges through one worker per user; each worker runs as exactly its
# user (uids, gids, no supplementary group, no capability, no new
# privileges); each user's status names it. A user who stops their own
# worker (SIGSTOP: it is theirs to signal) holds up no one else: U1's next
# range is purged all the same, and U2's worker, busy for 10 s, is killed
# and spawned again. SIGTERM: the daemon exits 0, its workers gone.
SYS_UIDS="61107 61108"
. "$(dirname "$0")/system-root-lib.sh"
sys_daemon_turn

f1=$WORK/u$U1/f
f2=$WORK/u$U2/f
holder h1 $U1 open "$f1" rwc fill 0 64K A mark 0 4K touch "$CUE/u1-marked" wait "$CUE/u1-more" \
	mark 16K 4K touch "$CUE/u1-more-marked" wait "$CUE/end" \
	unmark 0 4K unmark 16K 4K expect 4K 12K A expect 20K 44K A
holder h2 $U2 open "$f2" rwc fill 0 64K B mark 8K 8K touch "$CUE/u2-marked" wait "$CUE/end" \
	unmark 8K 8K expect 0 8K B expect 16K 48K B
wait_file "$CUE/u1-marked"
wait_file "$CUE/u2-marked"

sys_daemon_start

purged_both() {
	[ "$(purged_of s1 $U1) $(purged_of s2 $U2)" = "true true" ]
}
sys_until_within "both users' ranges purged" 60 purged_both
# each user's status names it: its file root's, its lock in /proc/locks (daemons.c)
expect_eq "the daemons U1's status lists" "$(jq_py s1 '[[x["kind"], x["pid"]] for x in d["daemons"]]')" \
	"[[\"machine\", $dpid]]"

# its workers: one per user, each exactly that user
workers=$(sys_children)
uids=
for w in $workers; do
	st=/proc/$w/status
	u=$(awk '$1 == "Uid:" { print $2 }' "$st")
	uids="$uids $u"
	expect_eq "worker $w's uids" "$(awk '$1 == "Uid:" { print $2, $3, $4, $5 }' "$st")" "$u $u $u $u"
	expect_eq "worker $w's gids" "$(awk '$1 == "Gid:" { print $2, $3, $4, $5 }' "$st")" "$u $u $u $u"
	expect_eq "worker $w's groups" "$(awk '$1 == "Groups:" { print $2 }' "$st")" ""
	expect_eq "worker $w's capabilities" "$(awk '$1 == "CapEff:" { print $2 }' "$st")" 0000000000000000
	expect_eq "worker $w's capabilities (permitted)" "$(awk '$1 == "CapPrm:" { print $2 }' "$st")" 0000000000000000
	expect_eq "worker $w's no_new_privs" "$(awk '$1 == "NoNewPrivs:" { print $2 }' "$st")" 1
done
expect_eq "the workers' uids" "$(echo $uids | tr ' ' '\n' | sort -n | tr '\n' ' ')" "$U1 $U2 "

# ---- U2 stops its own worker ----------------------------------------------------------
w2=$(sys_worker_of $U2)
ok stop2 as_user $U2 kill -STOP "$w2"
touch "$CUE/u1-more"
wait_file "$CUE/u1-more-marked"
u1_next_purged() {
	[ "$(purged_of s3 $U1)" = "true true" ]
}
sys_until_within "U1's next range purged while U2's worker is stopped" 60 u1_next_purged
w2_gone() {
	[ ! -e "/proc/$w2" ]
}
sys_until_within "U2's stopped worker killed and reaped" 60 w2_gone
w2_again() {
	_n=$(sys_worker_of $U2)
	[ -n "$_n" ] && [ "$_n" != "$w2" ]
}
sys_until_within "a worker spawned again for U2" 60 w2_again
grep -q "^volatile daemon: uid $U2: its worker (pid $w2) is busy for 10 s: killed$" "$WORK/d.err" ||
	{ show d; fail "no line saying U2's worker was killed"; }

# ---- SIGTERM ------------------------------------------------------------------------
workers=$(sys_children)
kill -TERM "$dpid"
wait_bg d
[ "$rc" -eq 0 ] || { show d; fail "daemon --system: exit status $rc on SIGTERM (want 0)"; }
for w in $workers; do
	[ ! -e "/proc/$w" ] || { show d; fail "worker $w is still there after the daemon exited"; }
done
grep -q '^volatile daemon: purged ' "$WORK/d.err" || { show d; fail "the daemon logged no purge"; }

touch "$CUE/end"
wait_bg h1
[ "$rc" -eq 0 ] || { show h1; fail "U1's holder: exit status $rc"; }
wait_bg h2
[ "$rc" -eq 0 ] || { show h2; fail "U2's holder: exit status $rc"; }
expect_line h1 "unmark 0 4K = 1"
expect_line h1 "unmark 16K 4K = 1"
expect_line h2 "unmark 8K 8K = 1"
say "both users purged; a stopped worker held up no one, was killed and spawned again"
