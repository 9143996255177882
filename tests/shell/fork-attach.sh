#!/bin/sh
# SPDX-License-Identifier: MIT
# Forks while a process makes its first MARK, and that MARK waits, do not
# hang. The region is made under another name by a holder
# that then stops (SIGSTOP, at a step of the fault-injecting library)
# holding the region's lock, and is renamed to where the test process
# looks: its first attach finds a region put in the place of another and
# waits for that lock.
#   a. meanwhile another thread calls _Fork (no pthread_atfork handler
#      runs) and the child MARKs: the child took its parent's attach lock,
#      held by a thread it does not have, and waited for ever;
#   b. a SIGALRM handler that interrupted that first MARK calls fork():
#      fork's handler waited for the attach lock its own thread held.
# Both the parent and the child must go on once the holder goes on. The
# waits are bounded by a VOLATILE_LOCK_WAIT of 40 s, not 1 s: a loaded
# machine may take more than a second from the first MARK's wait to the
# holder's going on, and the calls then fail with EAGAIN (a hang is still
# one: behave gives a child 8 s once the holder goes on).
. "$(dirname "$0")/lib.sh"

BEHAVE=$VL_TOP_BUILDDIR/tests/helpers/behave
[ -x "$BEHAVE" ] || fail "$BEHAVE is not built (make check builds it)"
need_fault_lib

holder_done() {
	kill -CONT "$hpid" 2>/dev/null
	_rc=$rc
	wait_bg "h$1"
	[ "$rc" -eq 0 ] || { show "h$1"; fail "$1: the holder: exit status $rc"; }
	rc=$_rc
}

# ---- a. _Fork in another thread --------------------------------------------------
part_a() {
	region_held_stopped a
	run a env LD_PRELOAD="$VOLATILE_LIBRARY" VOLATILE_LOCK_WAIT=40s timeout 60 "$BEHAVE" attachfork "$hpid"
	holder_done a
	grep -q '^child: HUNG' "$WORK/a.out" &&
		{ show a; fail "a: the _Fork child's MARK hung while its parent's first attach waited"; }
	[ "$rc" -ne 124 ] || { show a; fail "a: hung"; }
	[ "$rc" -eq 0 ] || { show a; fail "a: exit status $rc"; }
	expect_out a <<EOT
child: mark = 0
thread: mark = 0
EOT
	[ ! -s "$WORK/a.err" ] || { show a; fail "a: the library wrote on stderr"; }
}

# ---- b. fork() in a signal handler that interrupted the attach ---------------------
part_b() {
	region_held_stopped b
	bg b env LD_PRELOAD="$VOLATILE_LIBRARY" VOLATILE_LOCK_WAIT=40s BEHAVE_ALARMED="$WORK/b.alarmed" \
		timeout 60 "$BEHAVE" attachsig
	# the holder goes on once the handler has forked in the wait, not after
	# a fixed second, which a loaded machine may not give the MARK to get there
	wait_file "$WORK/b.alarmed"
	kill -CONT "$hpid"
	wait_bg b
	holder_done b
	[ "$rc" -ne 124 ] ||
		{ show b; fail "b: fork() in a SIGALRM handler that interrupted the first attach hung"; }
	[ "$rc" -eq 0 ] || { show b; fail "b: exit status $rc"; }
	expect_line b "parent: mark = 0"
	grep -qE '^child: mark = (0|-1)$' "$WORK/b.out" ||
		{ show b; fail "b: the child forked in the handler did not go on"; }
	[ ! -s "$WORK/b.err" ] || { show b; fail "b: the library wrote on stderr"; }
}

# each part in a subshell of its own (soft): a failure of one does not hide the other's
soft part_a
soft part_b
exit "$FAILED"
