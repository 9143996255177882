#!/bin/sh
# SPDX-License-Identifier: MIT
# A worker has no controlling terminal (DESIGN 22: exactly its user's
# rights): root's `volatile daemon --system --foreground`, run from a
# terminal, must not leave its workers in root's session with root's
# terminal as theirs. A user's worker is the user's to ptrace: one in
# root's session could open /dev/tty (any process may open its own
# controlling terminal, whoever owns it) and read what root types, or
# write to root's screen.
SYS_UIDS="62003 62004"
. "$(dirname "$0")/system-root-lib.sh"
sys_daemon_turn

f2=$WORK/u$U2/f
holder h2 $U2 open "$f2" rwc fill 0 64K B mark 8K 8K touch "$CUE/u2-marked" wait "$CUE/end"
wait_file "$CUE/u2-marked"

# the daemon on a pseudo-terminal of its own (its session's controlling
# terminal), its output drained until it exits
bg d "$PYTHON" -c '
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:-1])
open(sys.argv[-1] + ".pid", "w").write(str(pid))
while True:
    try:
        b = os.read(fd, 4096)
    except OSError:
        break
    if not b:
        break
    sys.stdout.buffer.write(b)
    sys.stdout.flush()
_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st))
' env VOLATILE_MIN_AVAILABLE=100% "$VOLATILE_CMD" daemon --system --foreground --uid $U1 --uid $U2 \
	"$WORK/daemon"
wait_file "$WORK/daemon.pid"
dpid=$(cat "$WORK/daemon.pid")
# pty.fork's child execs env, which execs the daemon: the same pid
stat_field() {
	sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f"$2"
}
sys_wait_worker $U2
w2=$w_found
dtty=$(stat_field "$dpid" 5)
dsid=$(stat_field "$dpid" 4)
[ "$dtty" != 0 ] || fail "the daemon has no controlling terminal: the test proves nothing"
wtty=$(stat_field "$w2" 5)
wsid=$(stat_field "$w2" 4)
kill -TERM "$dpid"
wait_bg d
touch "$CUE/end"
wait_bg h2
expect_eq "uid $U2's worker's controlling terminal (tty_nr; the daemon's: $dtty)" "$wtty" 0
[ "$wsid" != "$dsid" ] || fail "uid $U2's worker is in the daemon's session ($dsid)"
say "the workers of a daemon run from a terminal have none"
