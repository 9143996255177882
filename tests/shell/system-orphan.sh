#!/bin/sh
# SPDX-License-Identifier: MIT
# The machine's daemon killed at any instruction (DESIGN 22): its workers
# go with it, even one its user has stopped, which would never read the
# end of its socket. A worker is set to get SIGKILL when the daemon dies
# (PR_SET_PDEATHSIG); that setting must outlive the drop to the user's
# ids, which clears it (prctl(2): a change of the effective uid or gid).
SYS_UIDS="61109 61110"
. "$(dirname "$0")/system-root-lib.sh"

sysfile=/run/libvolatile-system.daemon
[ -e "$sysfile" ] && ! flock -n "$sysfile" true 2>/dev/null &&
	skip "the machine's daemon already runs here (pid $(head -n 1 "$sysfile")): one a machine"

f1=$WORK/u$U1/f
holder h1 $U1 open "$f1" rwc fill 0 16K A mark 0 4K touch "$CUE/u1-marked" wait "$CUE/end"
wait_file "$CUE/u1-marked"

bg d env VOLATILE_MIN_AVAILABLE=100% "$VOLATILE_CMD" daemon --system --foreground --uid $U1 --uid $U2
dpid=$BG_d

# the daemon's worker of uid $1, once it runs (up to 30 s)
worker=
for _i in $(seq 600); do
	for _p in /proc/[0-9]*; do
		[ "$(sed 's/^.*) //' "$_p/stat" 2>/dev/null | cut -d' ' -f2)" = "$dpid" ] &&
			[ "$(awk '$1 == "Uid:" { print $2 }' "$_p/status" 2>/dev/null)" = "$U1" ] &&
			worker=${_p#/proc/}
	done
	[ -n "$worker" ] && break
	kill -0 "$dpid" 2>/dev/null || { show d; fail "the daemon exited"; }
	sleep 0.05
done
[ -n "$worker" ] || { show d; fail "no worker of uid $U1 within 30 s"; }

# its user stops it (theirs to signal), then the daemon is killed
kill -STOP "$worker"
kill -KILL "$dpid"
gone=
for _i in $(seq 200); do
	if ! kill -0 "$worker" 2>/dev/null || [ "$(sed 's/^.*) //' "/proc/$worker/stat" 2>/dev/null | cut -d' ' -f1)" = Z ]; then
		gone=1
		break
	fi
	sleep 0.05
done
state=$(grep '^State:' "/proc/$worker/status" 2>/dev/null)
kill -KILL "$worker" 2>/dev/null
touch "$CUE/end"
[ -n "$gone" ] || fail "the daemon killed, its stopped worker $worker of uid $U1 is still there after 10 s ($state)"
exit 0
