#!/bin/sh
# SPDX-License-Identifier: MIT
# pthread_cancel inside the library (DESIGN 17): a thread with a
# cancellation pending makes the process's first MARK (the region is made
# and attached with open, pread and close: glibc cancellation points),
# then a MARK whose budget purges another file's range. Neither may be
# cancelled half way: a thread cancelled holding the attach lock left
# fork() and every later MARK of the process waiting for ever. Then the
# process forks and marks, in the parent and in the child.
. "$(dirname "$0")/lib.sh"

CANCEL=$VL_TOP_BUILDDIR/tests/helpers/cancel
[ -x "$CANCEL" ] || fail "$CANCEL is not built (make check builds it)"
run cancel env VOLATILE_BUDGET=4K timeout 30 "$CANCEL"
[ "$rc" -ne 142 ] || { show cancel; fail "a fork or a MARK hung after a thread was cancelled in the library"; }
[ "$rc" -eq 0 ] || { show cancel; fail "cancel: exit status $rc"; }
expect_out cancel <<EOF
thread: first mark 0, budget mark 0, canceled after
fork: child marked
parent: mark 0 unmark 0
EOF
[ ! -s "$WORK/cancel.err" ] || { show cancel; fail "the library wrote on stderr"; }
