#!/bin/sh
# SPDX-License-Identifier: MIT
# Root's daemon killed (SIGKILL: no close of its workers) takes its
# workers with it (DESIGN 22, system.c become_worker: PR_SET_PDEATHSIG),
# even one its user stopped, which would never see its socket close. The
# parent-death signal is cleared by the kernel when a process's uids or
# gids change, so it must be asked for after the drop to the user.
SYS_UIDS="62001 62002"
. "$(dirname "$0")/system-root-lib.sh"
sys_daemon_turn

f2=$WORK/u$U2/f
holder h2 $U2 open "$f2" rwc fill 0 64K B mark 8K 8K touch "$CUE/u2-marked" wait "$CUE/end"
wait_file "$CUE/u2-marked"

bg d env VOLATILE_MIN_AVAILABLE=100% "$VOLATILE_CMD" daemon --system --foreground --uid $U1 --uid $U2
dpid=$BG_d
w2=
pdeath_cleanup() {
	[ -n "$w2" ] && kill -KILL "$w2" 2>/dev/null
	sys_cleanup
}
trap pdeath_cleanup EXIT

# the daemon's worker of uid $1
worker_of() {
	for _p in /proc/[0-9]*; do
		[ "$(sed 's/^.*) //' "$_p/stat" 2>/dev/null | cut -d' ' -f2)" = "$dpid" ] || continue
		[ "$(awk '$1 == "Uid:" { print $2 }' "$_p/status" 2>/dev/null)" = "$1" ] && echo "${_p#/proc/}"
	done
}
# gone, or dead and not yet reaped by whoever inherited it
gone() {
	_st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
	[ -z "$_st" ] || [ "$_st" = Z ] || [ "$_st" = X ]
}
_end=$(($(date +%s) + 60))
until w2=$(worker_of $U2) && [ -n "$w2" ]; do
	[ "$(date +%s)" -le "$_end" ] || { show d; fail "no worker for uid $U2 within 60 s"; }
	kill -0 "$dpid" 2>/dev/null || { show d; fail "the daemon exited"; }
	sleep 0.05
done
ok stop2 as_user $U2 kill -STOP "$w2"
kill -KILL "$dpid"
wait_bg d
_end=$(($(date +%s) + 10))
until gone "$w2"; do
	if [ "$(date +%s)" -gt "$_end" ]; then
		grep -E '^(State|Uid|PPid):' "/proc/$w2/status" >&2
		fail "uid $U2's worker (pid $w2) outlived the daemon's SIGKILL by 10 s"
	fi
	sleep 0.05
done
touch "$CUE/end"
wait_bg h2
say "the daemon's SIGKILL took its stopped worker with it"
