#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile run` exec'd by a process that made itself a child subreaper
# (PR_SET_CHILD_SUBREAPER stays through exec: run has it, and CMD after
# it). The supervisor is double-forked so that CMD has no child it did not
# make (DESIGN 21); orphaned by the middle process, it must not come back
# to run, that is to CMD: a CMD that waits for every child until ECHILD
# (an init, a job runner) would wait for a supervisor that waits for CMD.
# CMD keeps the flag (an orphan of its tree still comes to it), and its
# tree is served.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_seccomp
need_static
need_python

# "$PYTHON" -c "$AS_SUBREAPER" CMD...: exec CMD from a process that is a
# child subreaper
AS_SUBREAPER='import ctypes, os, sys
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:
    sys.exit("PR_SET_CHILD_SUBREAPER: " + os.strerror(ctypes.get_errno()))
os.execvp(sys.argv[1], sys.argv[1:])'

# CMD: a child makes a served call, then forks a grandchild and exits, the
# grandchild an orphan for the subreaper; CMD reaps the child, makes a
# served call, then waits for children until ECHILD: the orphan only.
# (The grandchild's "sleep 300" comes before or after CMD's lines: sorted.)
tree() {
	timeout "$VL_TIMEOUT" "$PYTHON" -c "$AS_SUBREAPER" "$@" "$VT_STATIC" memfd m 8K fill 0 8K x \
		spawn sysfa UNMARK 0 4K detach sleep 300 end reap sysfa MARK 0 4K waitall
}

new_region
run alone tree
[ "$rc" -eq 0 ] || { show alone; fail "without run: exit status $rc"; }
new_region
run subreaper tree "$VOLATILE_CMD" run --
if [ "$rc" -ne 0 ]; then
	show subreaper
	fail "run exec'd by a subreaper: exit status $rc (124: CMD's wait() for all its children never ended)"
fi
sort "$WORK/subreaper.out" >"$WORK/subreaper.sorted"
mv "$WORK/subreaper.sorted" "$WORK/subreaper.out"
# served: 0 where the kernel (and the run without a filter) says EOPNOTSUPP
expect_out subreaper <<EOF
detach
fill 0 8K x = ok
memfd m 8K = 3
reap = 0
sleep 300
sysfa MARK 0 4K = 0
sysfa UNMARK 0 4K = 0
waitall = 1 children
EOF
expect_line alone "waitall = 1 children"
exit "$FAILED"
