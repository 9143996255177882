#!/bin/sh
# SPDX-License-Identifier: MIT
# A thread cancelled with a lock of the library held, though the library
# calls no cancellation point (DESIGN 17): at a step of a MARK with the
# file's lock held (tests/helpers/cancelsig, at a step of the
# fault-injecting library),
#   signal: a cancellation is pending, and a signal handler calls write()
#           (async-signal-safe, and a cancellation point: the self-pipe
#           trick);
#   async:  the thread runs with asynchronous cancellation, and is
#           cancelled.
# Either would unwind the thread out of the library with the file's lock
# held by a live process: every later MARK of the file, in any process,
# would fail with EAGAIN. The library keeps cancellation disabled inside.
#   close:  the same signal while the close() of an ashmem region made
#           here holds the mutex of the table of such regions (before the
#           hook enters the library): the next close of a region would
#           wait for ever.
. "$(dirname "$0")/lib.sh"

need_fault_lib
CANCELSIG=$VL_TOP_BUILDDIR/tests/helpers/cancelsig
[ -x "$CANCELSIG" ] || fail "$CANCELSIG is not built (make check builds it)"
f=$WORK/file
mkfile "$f" 16K A

new_region
run sig env VOLATILE_LOCK_WAIT=200ms LD_PRELOAD="$FAULT_LIB" timeout 30 "$CANCELSIG" signal "$f"
expect_out sig <<EOF
hook: ran
thread: mark 0, canceled after
main: mark 0 unmark 0
child: marked
EOF
[ "$rc" -eq 0 ] || { show sig; fail "cancelsig signal: exit status $rc"; }

new_region
run async env VOLATILE_LOCK_WAIT=200ms LD_PRELOAD="$FAULT_LIB" timeout 30 "$CANCELSIG" async "$f"
expect_out async <<EOF
hook: ran
main: mark 0 unmark 0
child: marked
EOF
[ "$rc" -eq 0 ] || { show async; fail "cancelsig async: exit status $rc"; }
ok bytes vt open "$f" r expect 0 16K A

# the close hook's table of regions made here
new_region
run close env LD_PRELOAD="$FAULT_LIB" timeout 30 "$CANCELSIG" close
[ "$rc" -ne 124 ] && [ "$rc" -ne 142 ] ||
	{ show close; fail "a close of a region waited for ever: a cancelled close left the table's mutex locked"; }
expect_out close <<EOF
hook: ran
thread: canceled
main: close 0
EOF
[ "$rc" -eq 0 ] || { show close; fail "cancelsig close: exit status $rc"; }
