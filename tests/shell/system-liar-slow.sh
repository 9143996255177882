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
bg liar "$PYTHON" -c '
import ctypes, os, signal, socket, struct, sys, time
w, uid, count = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
libc = ctypes.CDLL(None, use_errno=True)
pidfd = os.pidfd_open(w)
fd = libc.syscall(438, pidfd, 3, 0)  # pidfd_getfd: what ptrace gives its user
if fd < 0:
    sys.exit("pidfd_getfd: " + os.strerror(ctypes.get_errno()))
os.setgroups([])
os.setresgid(uid, uid, uid)
os.setresuid(uid, uid, uid)
os.kill(w, signal.SIGSTOP)
s = socket.socket(fileno=fd)
asks = {1: 0, 2: 0}
open(count, "w").write("ready\n")
while True:
    # an ask: its fixed part (struct vl_sys_ask up to cgroup[]), then cg_len bytes of path
    q = s.recv(8192)
    if len(q) < 32:
        break
    magic, op, seq, until, nbytes, cg_version, cg_len = struct.unpack("=IIIIQII", q[:32])
    asks[op] = asks.get(op, 0) + 1
    if op == 2:
        time.sleep(0.99)
    # CLOCK_MONOTONIC_COARSE (6): the age clock, in the host time namespace
    now = int(time.clock_gettime(6) * 1000)
    oldest = (now - 3600 * 1000) & 0xffffffff or 1
    purged, ranges = (4096, 1) if op == 2 else (0, 0)
    s.send(struct.pack("=IIiIQQII", magic, seq, 0, oldest, 1 << 40, purged, ranges, 0))
    open(count, "w").write("report %d purge %d\n" % (asks[1], asks[2]))
    # CLOCK_BOOTTIME (7): the clock of /proc/uptime, which the test reads too
    print("%.3f %s answered" % (time.clock_gettime(7), "PURGE" if op == 2 else "REPORT"), flush=True)
' "$w2" $U2 "$CUE/liar.count"
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
