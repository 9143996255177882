#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile daemon --cgroup DIR` (DESIGN 6, 8) whose cgroup v2 goes away
# while it runs (a service stopped: systemd removes its cgroup). The
# cgroup's memory.pressure trigger, like every file of a removed cgroup,
# then polls as POLLERR|POLLPRI for good: the daemon must stop watching
# it, not wake at once again and again (a busy loop: 100% of a CPU, some
# 250,000 read() calls a second here). It keeps polling as before, and
# SIGTERM still stops it.
#
# A real v2 cgroup is made (root, a cgroup2 mount) for its memory.pressure
# only; the cgroup the daemon is given is a directory of ours that looks
# like one (memory.current, memory.max, memory.events.local) with that
# memory.pressure linked in, so no memory controller is needed.
. "$(dirname "$0")/lib.sh"
need_cmd

[ "$(id -u)" -eq 0 ] || skip "not root: cannot make a cgroup"
mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$mnt" ] || skip "no cgroup2 file system mounted"
real=$mnt/vltest.$$
mkdir "$real" 2>"$WORK/mkdir.err" || skip "cannot make a cgroup in $mnt: $(cat "$WORK/mkdir.err")"
trap 'rmdir "$real" 2>/dev/null; cleanup' EXIT
[ -e "$real/memory.pressure" ] || skip "$real has no memory.pressure (no PSI in this kernel)"

cg=$WORK/cg
mkdir "$cg" || fail "cannot make $cg"
echo 0 >"$cg/memory.current"
echo max >"$cg/memory.max"
: >"$cg/memory.events.local"
ln -s "$real/memory.pressure" "$cg/memory.pressure" || fail "cannot link memory.pressure"

# read() calls made by process $1 so far
reads() {
	awk '/^syscr:/ { print $2 }' "/proc/$1/io"
}

new_region
vt open "$WORK/f" rwc truncate 64K >/dev/null || fail "cannot make $WORK/f"
ok mark svt open "$WORK/f" rw mark 0 4K
bg d env VOLATILE_MIN_AVAILABLE=1M "$VOLATILE_CMD" daemon --foreground --cgroup "$cg"
wait_match d err '^volatile daemon: watching region '
grep -q '^volatile daemon: PSI trigger on ' "$WORK/d.err" ||
	{ kill "$BG_d"; skip "no PSI trigger on $real/memory.pressure: $(cat "$WORK/d.err")"; }
pid=$BG_d

a=$(reads "$pid")
sleep 1
b=$(reads "$pid")
say "the cgroup there: $((b - a)) reads in 1 s"

rmdir "$real" || fail "cannot remove $real"
sleep 0.2
a=$(reads "$pid")
sleep 1
b=$(reads "$pid")
kill -0 "$pid" 2>/dev/null || { show d; fail "the daemon died"; }
say "the cgroup gone: $((b - a)) reads in 1 s"
# a look reads /proc/meminfo and the cgroup's few files: a few a second far
# from the threshold; a busy loop, hundreds of thousands
[ "$((b - a))" -le 500 ] || { show d; fail "its cgroup removed, the daemon spins: $((b - a)) reads in 1 s, want <= 500"; }

kill -TERM "$pid"
wait_bg d
[ "$rc" -eq 0 ] || { show d; fail "daemon on SIGTERM: exit status $rc"; }
exit 0
