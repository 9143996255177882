#!/bin/sh
# SPDX-License-Identifier: MIT
# A caller of `volatile run` sent a signal it handles (SA_RESTART) while
# its UNMARK waits in the supervisor: the call is not cut short (DESIGN
# 21: the filter is loaded with SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, so
# once the supervisor has received a call only a fatal signal interrupts
# it; src/cli/filter.c). Cut short, the call would be restarted after the
# handler and served a second time: an UNMARK made and then interrupted
# before its answer lands would find its range gone the second time and
# say 0 over purged bytes. The lock wait is the window this test can hold
# open; the flag holds for the whole of the call.
#
# F is 64K of 'F', [0, 16K) marked and purged. H, under the
# fault-injecting library, stops in its MARK of [32K, 48K) holding F's
# lock. C, the static vt under `volatile run`, catches SIGUSR1 and
# UNMARKs [0, 16K): the supervisor takes the call and waits for F's lock
# (the lock word's waiters bit). C is sent SIGUSR1: woken by it, the call
# sleeps again, killable (C's state D), the signal pending (C's /proc
# status). Then H goes on: the supervisor serves the call once, its caller
# still there; C's UNMARK says 1 and its handler runs once, after.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_served_static

F=$WORK/F
# C sleeps killable (TASK_KILLABLE shows as D): a call the supervisor has
# received, woken by a signal that is not fatal, sleeps so under a filter
# with WAIT_KILLABLE_RECV (and is cut short without it)
killable() {
	[ "$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$cpid/status" 2>/dev/null)" = D ]
}
# SIGUSR1 (10) pending for C's process, in its /proc status
usr1_pending() {
	_m=$(sed -n 's/^ShdPnd:[[:space:]]*//p' "/proc/$cpid/status" 2>/dev/null)
	[ -n "$_m" ] && [ $((0x$_m & 0x200)) -ne 0 ]
}

new_region
mkfile "$F" 64K F
ok mark svt open "$F" rw mark 0 16K
ok purge vol purge --all

hold_file h "$F"

# the supervisor waits for F's lock as long as this test may take
bg c env VL_RUN_TAG=signalled VOLATILE_LOCK_WAIT=100s VOLATILE_DEBUG=1 \
	timeout 120 "$VOLATILE_CMD" run -- "$VT_STATIC" count USR1 pid open "$F" rw \
	unmark 0 16K counted USR1
wait_match c out '^pid = '
cpid=$(pid_of c)
spid=$(supervisor_of signalled)
wait_until -s c 60 "the supervisor never waited for F's lock" lock_waited
kill -USR1 "$cpid"
# woken by it, the call goes back to sleep, killable this time
wait_until -s c 60 "C never slept killable in its UNMARK once sent SIGUSR1 (the filter without WAIT_KILLABLE_RECV?)" killable
usr1_pending || { show c; fail "SIGUSR1 is not pending for C (pid $cpid) while its UNMARK is served: $(grep -E '^(State|SigPnd|ShdPnd|SigBlk|SigCgt)' "/proc/$cpid/status" | tr '\n' ' ')"; }
say "SIGUSR1 pending for C while the supervisor waits for F's lock"

let_go h
wait_bg c
[ "$rc" -eq 0 ] || { show c; fail "C: exit status $rc"; }
expect_line c "unmark 0 16K = 1"
expect_line c "counted USR1 = 1"
wait_until -s c 60 "the supervisor did not exit once C was gone" '! alive "$spid"'
# served once, to a caller still there
expect_eq "the supervisor's lines for C's UNMARK" \
	"$(grep -c '^volatile run: served .*: unmark fd' "$WORK/c.err")" 1
grep -q 'its caller gone' "$WORK/c.err" && { show c; fail "the supervisor found C gone: its UNMARK was cut short"; }
say "C's UNMARK served once, not cut short by the handled signal: said 1 over its purged range"
exit 0
