#!/bin/sh
# SPDX-License-Identifier: MIT
# THE INVARIANT (DESIGN 4) under a storm while the machine's daemon's
# worker purges by memory cgroup (DESIGN 22): the storm (tests/helpers/
# storm: MARK, write, read, UNMARK by several processes and threads, its
# oracle checking every UNMARK's answer and that unmarked bytes never
# change) runs with its collecting kid replaced by sysask, root's side of
# the protocol, driving a `volatile system-worker` on the storm's region:
# PURGEs of 16K restricted to the storm's own memory cgroup (its holders
# are in it), to "/", and to one no process is in, and a REPORT, every
# 0.5-2 s; calm, then with kills. The worker's held_by choice (policy.c vl_goal_excludes) reads
# /proc/PID/cgroup of pids the region records, while holders come and go.
. "$(dirname "$0")/lib.sh"
need_cmd
STORM=$VL_RUN_TOP/tests/helpers/storm
SYSASK=$VL_TOP_BUILDDIR/tests/helpers/sysask
[ -x "$STORM" ] || fail "$STORM is not built (make check builds it)"
[ -x "$SYSASK" ] || fail "$SYSASK is not built (make check builds it)"

cg=$(awk -F: '
	{ n = split($2, c, ","); for (i = 1; i <= n; i++) if (c[i] == "memory") v1 = $3 }
	$1 == "0" && $2 == "" { v2 = $3 }
	END { if (v1 != "") print 1, v1; else if (v2 != "") print 2, v2 }' /proc/self/cgroup)
[ -n "$cg" ] || skip "no memory cgroup line in /proc/self/cgroup: nothing to restrict to"
cgv=${cg%% *}
cgp=${cg#* }
# the storm's collector: `PATH purge --bytes 16K` becomes asks naming cgroups
cat >"$WORK/collect" <<EOF
#!/bin/sh
exec env VOLATILE_CMD="$VOLATILE_CMD" "$SYSASK" cgroup $cgv "$cgp" purge 0 16K report \\
	cgroup $cgv / purge 0 16K cgroup $cgv /no/such purge 0 all >>"$WORK/asks.out" 2>&1
EOF
chmod +x "$WORK/collect"
secs=4
[ -n "${VL_LONG:-}" ] && secs=60
# calm, then with processes SIGKILLed at random moments (whoever comes next repairs)
for kill in 0 1; do
	new_region
	mkdir -p "$WORK/s$kill" || fail "mkdir"
	run s$kill env STORM_HOLD_MS=2000 STORM_COLLECT="$WORK/collect" \
		VOLATILE_REGION="$VOLATILE_REGION" VOLATILE_BUDGET=64K LD_PRELOAD="$VOLATILE_LIBRARY" \
		timeout $((secs + 60)) "$STORM" "$WORK/s$kill" "$secs" 4 4 2 $kill all -
	cat "$WORK/s$kill.out"
	[ "$rc" -eq 0 ] ||
		{ show s$kill; fail "the storm (kills $kill) failed (exit status $rc) under cgroup-restricted PURGEs"; }
done
n=$(grep -c '^err=0 ' "$WORK/asks.out" 2>/dev/null || echo 0)
[ "$n" -ge 4 ] || { show asks; fail "the worker answered $n asks: the storm ran without them"; }
if grep -q 'bad answer\|timeout' "$WORK/asks.out"; then
	show asks
	fail "a worker's answer failed root's checks, or none came"
fi
purged=$(awk '$1 == "err=0" { split($4, p, "="); s += p[2] } END { print s + 0 }' "$WORK/asks.out")
say "storm held under $n cgroup-restricted asks ($purged bytes purged by them)"
