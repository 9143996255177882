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

sys_daemon_start
w2=
pdeath_cleanup() {
	[ -n "$w2" ] && kill -KILL "$w2" 2>/dev/null
	sys_cleanup
}
trap pdeath_cleanup EXIT

# gone, or dead and not yet reaped by whoever inherited it
gone() {
	_st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
	[ -z "$_st" ] || [ "$_st" = Z ] || [ "$_st" = X ]
}
sys_wait_worker $U2
w2=$w_found
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
