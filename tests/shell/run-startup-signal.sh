#!/bin/sh
# SPDX-License-Identifier: MIT
# A signal to CMD's process group while `volatile run` starts must not
# kill the supervisor (DESIGN 21): it is forked with every signal blocked
# and unblocks them once it leads a session of its own, so what the group
# got meanwhile must not be delivered to it then. Where run itself lives
# on (the signal blocked in the mask run inherited: CMD gets it later, as
# without run), a supervisor killed so leaves run without its filter, and
# the static CMD's MARK says EOPNOTSUPP instead of 0.
#
# A parent blocks SIGINT, starts run in a process group of its own and
# sends SIGINT to the group a random 0-4 ms later, RUNS times (stopping at
# the first miss): CMD's MARK must be served every time.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_seccomp
need_static
need_python
RUNS=400

new_region
run group timeout 600 "$PYTHON" -c '
import os, random, signal, sys, time
cmd, vt, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
args = [cmd, "run", "--", vt, "memfd", "m", "8K", "sleep", "50", "sysfa", "MARK", "0", "4K"]
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # the children are born with it blocked
for i in range(runs):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)
        os.dup2(w, 1)
        os.execv(cmd, args)
    os.close(w)
    try:
        os.setpgid(pid, pid)  # so that the group exists when the signal is sent
    except OSError:
        pass
    time.sleep(random.random() * 0.004)
    os.killpg(pid, signal.SIGINT)
    out = b""
    while True:
        b = os.read(r, 4096)
        if not b:
            break
        out += b
    os.close(r)
    os.waitpid(pid, 0)
    if b"sysfa MARK 0 4K = 0\n" not in out:
        print("run %d of %d, SIGINT to the group while run started:" % (i + 1, runs))
        sys.stdout.write(out.decode())
        sys.exit(1)
print("%d runs served" % runs)
' "$VOLATILE_CMD" "$VT_STATIC" "$RUNS"
[ "$rc" -eq 0 ] || { show group; fail "a signal to the group during run's start killed the supervisor"; }
exit 0
