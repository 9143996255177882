#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile run` keeps what it opened for a calling thread (a pidfd of the
# thread, its /proc/TID/ns, its fdinfo file) for as long as the thread
# lives, however many threads call, and lets it go when the thread goes
# (DESIGN 21 step 2). 200 threads of one program (tests/helpers/callers),
# all alive at once, make 5 MARK+UNMARK pairs each through the supervisor:
# each thread is looked up once, at its first call (--debug says "caller
# TID looked up" at each lookup), and the supervisor holds descriptors for
# them meanwhile. Once they have exited, with no more calls made, the
# supervisor's open descriptors are back to their count before the threads
# called. (With 64 slots by thread id modulo 64, the threads that shared a
# slot were looked up again at every call, and the last 64 callers' fds
# stayed open.)
# Part 2: with fewer descriptors allowed than the threads would hold (a
# hard RLIMIT_NOFILE of 600: 29 threads kept), every call is still served,
# the threads past that looked up at each call as before, and the
# supervisor's descriptors stay under the limit.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
CALLERS=$VL_TOP_BUILDDIR/tests/helpers/callers
[ -x "$CALLERS" ] || fail "$CALLERS is not built (make check builds it)"
need_cmd
need_seccomp
N=200
K=5

fds_of() {
	find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l
}

# wait_fds PID COUNT: until PID has COUNT fds open (60 s at most)
wait_fds() {
	_i=0
	while [ "$(fds_of "$1")" -ne "$2" ]; do
		_i=$((_i + 1))
		[ "$_i" -le "$VL_WAIT_TICKS" ] ||
			{ show many; fail "the supervisor holds $(fds_of "$1") fds once the threads exited, $2 before they called"; }
		sleep 0.01
	done
}

new_region
bg many timeout 180 "$VOLATILE_CMD" run --debug -- "$CALLERS" "$N" "$K" "$WORK"
wait_line many ready
wait_match many err '^volatile run: serving, pid [0-9]+$'
sv=$(sed -n 's/^volatile run: serving, pid //p' "$WORK/many.err" | head -n 1)
# the main thread's pair is served: what the supervisor holds with one caller
base=$(fds_of "$sv")
[ "$base" -gt 0 ] || { show many; fail "cannot read /proc/$sv/fd"; }
touch "$WORK/go"
wait_line many called
# every thread looked up once: N threads and the main one
grep '^volatile run: caller [0-9]* looked up' "$WORK/many.err" |
	sed 's/^volatile run: caller \([0-9]*\) .*/\1/' | sort | uniq -c |
	awk '$1 > 1' >"$WORK/again"
lookups=$(grep -c '^volatile run: caller [0-9]* looked up' "$WORK/many.err")
[ -s "$WORK/again" ] &&
	fail "$(wc -l <"$WORK/again") of $N threads looked up again at a later call ($lookups lookups for $((N + 1)) threads, $((N * K * 2 + 2)) calls); times, thread: $(head -n 3 "$WORK/again" | tr '\n' ' ')"
expect_eq "lookups" "$lookups" $((N + 1))
expect_eq "calls served" "$(served many)" $((N * K * 2 + 2))

during=$(fds_of "$sv")
say "supervisor $sv: $base fds before the threads called, $during while they live"
[ "$during" -ge $((base + N)) ] ||
	{ show many; fail "$during fds while $N callers live, $base before: their descriptors were not kept"; }

touch "$WORK/end"
wait_line many joined
wait_fds "$sv" "$base"
say "their descriptors went with them: $base fds again"
touch "$WORK/quit"
wait_bg many
[ "$rc" -eq 0 ] || { show many; fail "callers: exit status $rc"; }

# part 2: 600 descriptors at most, for run and everything under it
rm -f "$WORK/go" "$WORK/end" "$WORK/quit"
new_region
bg few sh -c 'ulimit -n 600 && exec "$@"' sh \
	timeout 180 "$VOLATILE_CMD" run --debug -- "$CALLERS" "$N" "$K" "$WORK"
wait_line few ready
wait_match few err '^volatile run: serving, pid [0-9]+$'
sv=$(sed -n 's/^volatile run: serving, pid //p' "$WORK/few.err" | head -n 1)
touch "$WORK/go"
wait_line few called
during=$(fds_of "$sv")
say "600 fds allowed: the supervisor holds $during while $N callers live"
[ "$during" -lt 600 ] || { show few; fail "$during fds open in the supervisor, 600 allowed"; }
expect_eq "calls served, 600 fds allowed" "$(served few)" $((N * K * 2 + 2))
lookups=$(grep -c '^volatile run: caller [0-9]* looked up' "$WORK/few.err")
[ "$lookups" -gt $((N + 1)) ] ||
	fail "$lookups lookups with 600 fds allowed: more threads kept than the descriptors allow?"
touch "$WORK/end"
wait_line few joined
touch "$WORK/quit"
wait_bg few
[ "$rc" -eq 0 ] || { show few; fail "callers, 600 fds allowed: exit status $rc"; }
exit 0
