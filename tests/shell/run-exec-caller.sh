#!/bin/sh
# SPDX-License-Identifier: MIT
# A thread's call served by `volatile run`, cut short by another thread's
# exec while it waits in the supervisor for its file's lock (DESIGN 21
# step 6). The kernel kills the calling thread (and only it) before the
# exec goes on: the process lives on, under a new image, and may write
# the very bytes the dead thread's MARK named. As with a caller killed
# (run-killed-caller.sh), the call changes nothing: made after the exec,
# a MARK would mark the new image's bytes, never marked by it, for a purge
# to throw away; an UNMARK would take away a range purged since, whose
# next UNMARK would say 0 over zeros.
#
# Each part: F is 64K of 'F'. H, under the fault-injecting library, stops
# in its MARK of [32K, 48K) holding F's lock. C (execcall) under `volatile
# run`: a thread calls on [0, 16K) of F and the supervisor waits for F's
# lock (the lock word's waiters bit); then C's main thread execs the
# static vt, which (part a) fills [0, 16K) with 'G' and exits. Then H is
# continued; the supervisor takes F's lock and finds the calling thread
# gone. Once the supervisor has exited:
#   a. the MARK: F's only range is H's, and after `volatile purge --all`
#      [0, 16K) of F is still 'G' (and H's range zeros);
#   b. the UNMARK of [0, 16K), marked and purged before: the range is
#      still there, purged, and the next UNMARK of it says 1.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_served_static

EXECCALL=$VL_TOP_BUILDDIR/tests/helpers/execcall
[ -x "$EXECCALL" ] || fail "$EXECCALL is not built (make check builds it)"

F=$WORK/F

# exec_cut PART mark|unmark: H holds F's lock, a thread of C calls on
# [0, 16K) of F and waits for it, C's main thread execs the static vt,
# which (after a MARK) writes 'G' over [0, 16K); H goes on; returns once
# the supervisor is gone
exec_cut() {
	_p=$1
	_call=$2
	_fill=
	[ "$_call" = mark ] && _fill="fill 0 16K G"
	hold_file "h$_p" "$F"

	# the supervisor waits for F's lock as long as this test may take
	# shellcheck disable=SC2086 # $_fill: words
	bg "c$_p" env VL_RUN_TAG="exec$_p" VOLATILE_LOCK_WAIT=100s VOLATILE_DEBUG=1 \
		timeout 120 "$VOLATILE_CMD" run -- "$EXECCALL" "$F" "$_call" 0 16384 "$WORK/go$_p" \
		"$VT_STATIC" open "$F" rw $_fill echo done
	wait_match "c$_p" out '^calling$'
	spid=$(supervisor_of "exec$_p")
	wait_until -s "c$_p" 60 "$_p: the supervisor never waited for F's lock ($_call)" lock_waited
	touch "$WORK/go$_p"
	wait_bg "c$_p"
	[ "$rc" -eq 0 ] || { show "c$_p"; fail "$_p: C: exit status $rc after its exec"; }
	expect_line "c$_p" done
	# the exec came while the call waited: it never returned to the thread
	grep -q '^called = ' "$WORK/c$_p.out" && { show "c$_p"; fail "$_p: C's $_call returned before the exec"; }
	say "$_p: C's thread ($_call 0 16K) cut short by its exec while the supervisor waited for F's lock"

	let_go "h$_p"
	# the supervisor serves what it took, then leaves: nobody is under its filter
	wait_until -s "c$_p" 60 "$_p: the supervisor did not exit once C was gone" '! alive "$spid"'
}

gone_caller_parts exec_cut "a thread gone with its exec" G
exit 0
