#!/bin/sh
# SPDX-License-Identifier: MIT
# A caller of `volatile run` killed while its call waits in the supervisor
# for its file's lock (DESIGN 21 step 6): a call changes the region only
# while its caller lives, so one whose caller died first changes nothing,
# as a call cut short by a fatal signal while it waits for a lock in the
# kernel. Made after the death anyway (as they were), a MARK marks bytes
# that whoever takes the dead process's place has written since and never
# marked, which a purge then throws away (seccomp-storm.sh's oracle saw it
# once under load: "UNMARK said 1, and a page never marked is not
# intact"), and an UNMARK takes away a range purged since, whose next
# UNMARK says 0 over zeros.
#
# Each part: F is 64K of 'F'. H, under the fault-injecting library, stops
# in its MARK of [32K, 48K) holding F's lock. C, a static program under
# `volatile run`, calls on [0, 16K) of F: the supervisor takes the call and
# waits for F's lock (the lock word's waiters bit says so). C is killed and
# reaped, then H continued; the supervisor takes F's lock and finds nobody
# waiting. Once the supervisor has exited:
#   a. C's MARK: F's only range is H's, and after `volatile purge --all`
#      [0, 16K) of F is still 'F' (and H's range zeros);
#   b. C's UNMARK of [0, 16K), marked and purged before: the range is still
#      there, purged, and the next UNMARK of it says 1.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_served_static

F=$WORK/F

# dead_caller PART mark|unmark: H holds F's lock, C (the call on [0, 16K)
# of F under run) waits for it and is killed, H goes on; returns once the
# supervisor is gone
dead_caller() {
	_p=$1
	_call=$2
	hold_file "h$_p" "$F"

	# the supervisor waits for F's lock as long as this test may take
	bg "c$_p" env VL_RUN_TAG="killed$_p" VOLATILE_LOCK_WAIT=100s VOLATILE_DEBUG=1 \
		timeout 120 "$VOLATILE_CMD" run -- "$VT_STATIC" pid open "$F" rw "$_call" 0 16K
	wait_match "c$_p" out '^pid = '
	cpid=$(pid_of "c$_p")
	spid=$(supervisor_of "killed$_p")
	wait_until -s "c$_p" 60 "$_p: the supervisor never waited for F's lock ($_call)" lock_waited
	kill -KILL "$cpid"
	wait_bg "c$_p"
	# timeout, C's parent, reaped it and says how it ended
	[ "$rc" -eq 137 ] || { show "c$_p"; fail "$_p: C: exit status $rc, not 137 (killed)"; }
	alive "$cpid" && fail "$_p: C (pid $cpid) is still there"
	say "$_p: C ($_call 0 16K) killed while the supervisor waited for F's lock"

	let_go "h$_p"
	# the supervisor serves what it took, then leaves: nobody is under its filter
	wait_until -s "c$_p" 60 "$_p: the supervisor did not exit once C was gone" '! alive "$spid"'
}

gone_caller_parts dead_caller "a dead caller" F
exit 0
