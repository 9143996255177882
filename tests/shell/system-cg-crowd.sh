#!/bin/sh
# SPDX-License-Identifier: MIT
# A user whose worker lies in cgroup REPORTs cannot take the watch away
# from another user's cgroup (DESIGN 22, 18: a lie moves only the liar's
# own ranges in the order). Root makes 40 limited memory cgroups (256M,
# below MemTotal: more than the 32 the daemon watches); U1's holder, in
# the one the walk meets last (X), marks a range. U2 takes its worker's
# socket (as ptrace lets it: the test does it as root, with pidfd_getfd,
# then acts as U2) and answers every REPORT naming a cgroup at once with
# "unpurged bytes, an hour old", and every other ask with nothing. The
# daemon (VOLATILE_MIN_AVAILABLE=1%: no cgroup, nor the machine, under it)
# watches X at its first look, before the lie; it must not stop watching
# X over two looks of the liar's.
SYS_UIDS="62311 62312"
. "$(dirname "$0")/system-root-lib.sh"
sys_daemon_turn

NCG=40
. "$(dirname "$0")/cgroup-lib.sh"
cgs_make "$NCG" crowd
# the walk's order is the directory's (depth first, the root's own first)
X=/sys/fs/cgroup/memory/$(ls -f /sys/fs/cgroup/memory | grep "^vltest\.$$\.crowd" | tail -n 1)

f1=$WORK/u$U1/f
f2=$WORK/u$U2/f
bg h1 sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$X" setpriv --reuid=$U1 --regid=$U1 \
	--clear-groups -- env -u VOLATILE_REGION LD_PRELOAD="$VOLATILE_LIBRARY" timeout 120 "$VT" \
	open "$f1" rwc fill 0 64K A mark 0 4K touch "$CUE/u1-marked" wait "$CUE/end"
holder h2 $U2 open "$f2" rwc fill 0 64K B mark 8K 8K touch "$CUE/u2-marked" wait "$CUE/end"
wait_file "$CUE/u1-marked"
wait_file "$CUE/u2-marked"

bg d env VOLATILE_MIN_AVAILABLE=1% "$VOLATILE_CMD" daemon --system --foreground --uid $U1 --uid $U2
dpid=$BG_d
SYS_SHOW="liar"
w2=
crowd_cleanup() {
	[ -n "$w2" ] && kill -KILL "$w2" 2>/dev/null
	kill -TERM "$dpid" 2>/dev/null
	wait_bg d
	touch "$CUE/end"
	cgs_remove
	sys_cleanup
}
trap crowd_cleanup EXIT

watches_x() {
	grep -qF "volatile daemon: watching cgroup v1 $X (" "$WORK/d.err"
}
sys_until_within "the daemon watches X before the lie" 60 watches_x
sys_wait_worker $U2
w2=$w_found

bg liar "$PYTHON" "$VL_TOP_SRCDIR/tests/helpers/sysliar.py" "$w2" $U2 "$CUE/liar.count" \
	--cgroups-only
wait_file "$CUE/liar.count"
two_looks() {
	[ "$(sed -n 's/^report .* cgroup \([0-9]*\)$/\1/p' "$CUE/liar.count")" -ge $((2 * NCG)) ] 2>/dev/null
}
sys_until_within "two looks for the cgroups asked of the liar" 60 two_looks
if grep -qF "volatile daemon: no longer watching cgroup v1 $X:" "$WORK/d.err"; then
	show d
	fail "U2's lies took the watch of $X (U1's range held in it) away"
fi
say "X (U1's) still watched after U2 claimed all $NCG cgroups"
