#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile daemon` sleeps while there is nothing to fear (DESIGN 6, 8): with
# unpurged ranges in the region and memory far above VOLATILE_MIN_AVAILABLE,
# it polls in proportion to the gap (the time for available memory to fall
# to the threshold at 4 GiB/s, 20 ms to 1 s), not 50 times a second; the
# same for a tmpfs's free space against VOLATILE_TMPFS_MIN_FREE. Near the
# threshold it polls fast again.
#
# A wake-up is a sleep of the daemon's that ended: its voluntary context
# switches (/proc/PID/task/*/status), which a poll() that sleeps adds one
# to. (Preemptions, the nonvoluntary ones, are not wake-ups.)
. "$(dirname "$0")/lib.sh"
need_cmd
need_python
# the idle programs live through a part each (6 s here; more on a loaded machine)
VL_TIMEOUT=60

f=$WORK/cache
pid=

# An idle program: marks [0,4K) of a tmpfs file, says so, sleeps until
# $WORK/go.$1 exists.
idle() {
	mkfile "$f.$1" 64K A
	bg "idle$1" svt open "$f.$1" rw mark 0 4K touch "$WORK/marked.$1" wait "$WORK/go.$1"
	wait_file "$WORK/marked.$1"
}

wakeups() {
	cat "/proc/$1"/task/*/status 2>/dev/null |
		awk '/^voluntary_ctxt_switches:/ { s += $2 } END { print s + 0 }'
}

# count NAME PID SECONDS: the daemon's wake-ups in that many seconds, in $n
count() {
	_a=$(wakeups "$2")
	sleep "$3"
	_b=$(wakeups "$2")
	kill -0 "$2" 2>/dev/null || { show "$1"; fail "$1: the daemon died"; }
	n=$((_b - _a))
}

# quiet NAME PID SECONDS MAX: count, up to three windows, until one has at
# most MAX wake-ups (in $n: the last window's). A window may be disturbed:
# tests beside this one in make -jN check press on memory in cgroups below
# the daemon's, and the kernel's pressure events reach it (a wake each, as
# they should). A daemon that polls fast is over MAX in every window.
quiet() {
	for _w in 1 2 3; do
		count "$1" "$2" "$3"
		[ "$n" -le "$4" ] && return 0
		say "$1: $n wake-ups in $3 s (window $_w), over $4: once more"
	done
}

# most SECONDS GAP_BYTES: the wake-ups the rule allows in SECONDS with a gap
# of GAP_BYTES to the threshold (one poll every GAP / 4 GiB/s, 20 ms to 1 s),
# plus two: where the window falls, and one wake the kernel may signal
most() {
	_ms=$(($2 / 4294967)) # bytes at 4 GiB/s, in ms
	[ "$_ms" -lt 20 ] && _ms=20
	[ "$_ms" -gt 1000 ] && _ms=1000
	echo $(($1 * 1000 / _ms + 2))
}

stop_daemon() {
	eval "kill -TERM \$BG_$1"
	wait_bg "$1"
	[ "$rc" -eq 0 ] || { show "$1"; fail "$1: daemon on SIGTERM: exit status $rc"; }
	grep -q '^volatile daemon: purged' "$WORK/$1.err" && { show "$1"; fail "$1: the daemon purged"; }
}

# release N: the idle program N, its part done, ends
release() {
	touch "$WORK/go.$1"
	wait_bg "idle$1"
	[ "$rc" -eq 0 ] || { show "idle$1"; fail "the idle program $1: exit status $rc"; }
}

# ---- 1. memory far above the threshold (1M): a few wake-ups in 5 s ---------------------------
new_region
idle 1
status_json st1
avail=$(jq_py st1 "d['memory']['available']")
bg d1 env VOLATILE_MIN_AVAILABLE=1M "$VOLATILE_CMD" daemon --foreground
wait_match d1 err '^volatile daemon: watching region '
eval "pid=\$BG_d1"
sleep 0.2
max=$(most 5 $((avail - 1048576)))
quiet d1 "$pid" 5 "$max"
say "memory: $n wake-ups in 5 s ($avail bytes available, threshold 1M; at most $max)"
[ "$n" -le "$max" ] || { show d1; fail "memory far above the threshold: $n wake-ups in 5 s, three times, want <= $max"; }
stop_daemon d1
release 1

# ---- 2. the same for a tmpfs far from full (the default, 10% of it free) ---------------------
new_region
idle 2
# free and size of $WORK's tmpfs, in bytes
bfree=$(stat -f -c %a "$WORK")
blocks=$(stat -f -c %b "$WORK")
bsize=$(stat -f -c %S "$WORK")
gap=$((bfree * bsize - blocks * bsize / 10))
bg d2 env VOLATILE_MIN_AVAILABLE=0 VOLATILE_TMPFS_MIN_FREE=10% "$VOLATILE_CMD" daemon --foreground
wait_match d2 err '^volatile daemon: watching region '
eval "pid=\$BG_d2"
sleep 0.2
max=$(most 3 "$gap")
quiet d2 "$pid" 3 "$max"
say "tmpfs: $n wake-ups in 3 s ($gap bytes above 10% free; at most $max)"
[ "$n" -le "$max" ] || { show d2; fail "a tmpfs far from full: $n wake-ups in 3 s, three times, want <= $max"; }
stop_daemon d2
release 2

# ---- 3. near the threshold (32M below what is available): fast polls -------------------------
new_region
idle 3
status_json st3
avail=$(jq_py st3 "d['memory']['available']")
bg d3 env VOLATILE_MIN_AVAILABLE=$(((avail - 33554432) / 1024))K "$VOLATILE_CMD" daemon --foreground
wait_match d3 err '^volatile daemon: watching region '
eval "pid=\$BG_d3"
sleep 0.2
count d3 "$pid" 1
say "near the threshold: $n wake-ups in 1 s"
if grep -q '^volatile daemon: purged' "$WORK/d3.err"; then
	# something else took 32M meanwhile: the range is gone, nothing to poll for
	say "part 3 not judged: memory fell below the threshold meanwhile"
else
	[ "$n" -ge 10 ] || { show d3; fail "32M above the threshold: $n wake-ups in 1 s, want >= 10 (20 ms polls)"; }
fi
eval "kill -TERM \$BG_d3"
wait_bg d3
release 3
exit 0
