#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile daemon --system --foreground` (DESIGN 22): with a threshold
# that always holds (VOLATILE_MIN_AVAILABLE=100%), it purges every user's
# ranges through one worker per user; each worker runs as exactly its
# user (uids, gids, no supplementary group, no capability, no new
# privileges); SIGTERM: the daemon exits 0, and its workers are gone.
. "$(dirname "$0")/system-root-lib.sh"

f1=$WORK/u$U1/f
f2=$WORK/u$U2/f
holder h1 $U1 open "$f1" rwc fill 0 64K A mark 0 4K touch "$CUE/u1-marked" wait "$CUE/end" \
	unmark 0 4K expect 4K 60K A
holder h2 $U2 open "$f2" rwc fill 0 64K B mark 8K 8K touch "$CUE/u2-marked" wait "$CUE/end" \
	unmark 8K 8K expect 0 8K B expect 16K 48K B
wait_file "$CUE/u1-marked"
wait_file "$CUE/u2-marked"

bg d env VOLATILE_MIN_AVAILABLE=100% "$VOLATILE_CMD" daemon --system --foreground --uid $U1 --uid $U2
dpid=$BG_d

# until both users' status says purged (60 s at most)
i=0
while [ "$(purged_of s1 $U1) $(purged_of s2 $U2)" != "true true" ]; do
	i=$((i + 1))
	[ "$i" -le 1200 ] || { show d; fail "the daemon did not purge both users' ranges in 60 s"; }
	kill -0 "$dpid" 2>/dev/null || { show d; fail "the daemon exited"; }
	sleep 0.05
done

# its workers: its children, one per user, each exactly that user
workers=
for p in /proc/[0-9]*; do
	[ "$(sed 's/^.*) //' "$p/stat" 2>/dev/null | cut -d' ' -f2)" = "$dpid" ] || continue
	workers="$workers ${p#/proc/}"
done
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
expect_line h2 "unmark 8K 8K = 1"
say "both users' ranges purged by the daemon; it and its workers gone on SIGTERM"
