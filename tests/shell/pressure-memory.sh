#!/bin/sh
# SPDX-License-Identifier: MIT
# Low memory seen on MARK (DESIGN 6): when available memory is below
# VOLATILE_MIN_AVAILABLE (a SIZE or a percentage), a MARK purges the
# region's oldest ranges until it is not; 0 switches the check off. The
# machine's real memory cannot be made low on demand here, so the
# threshold is put above it (1T, 100%) or far below it (1M, 1%).
# (A memory cgroup with a real limit: pressure-cgroup.sh.)
. "$(dirname "$0")/lib.sh"
need_cmd

f=$WORK/cache
g=$WORK/other

# Process A (checks off) marks [0,4K) and [8K,12K) of f; then process B,
# with VOLATILE_MIN_AVAILABLE=$1, marks [16K,20K) of g. Prints what the
# three UNMARKs say.
three_marks() {
	new_region
	mkfile "$f" 64K A
	mkfile "$g" 64K G
	ok pa svt open "$f" rw mark 0 4K mark 8K 4K
	ok pb svte VOLATILE_MIN_AVAILABLE="$1" -- open "$g" rw mark 16K 4K
	ok pc svt open "$f" rw unmark 0 4K unmark 8K 4K open "$g" rw unmark 16K 4K
}

# ---- 1. a threshold above the machine's memory: MARK purges everything --------
# (purging the oldest first cannot bring memory above 1T: all three go,
# the new range last)
for thr in 1T 100%; do
	three_marks "$thr"
	expect_out pc <<EOF
open $f rw = 3
unmark 0 4K = 1
unmark 8K 4K = 1
open $g rw = 4
unmark 16K 4K = 1
EOF
	# whole ranges, and nothing else
	ok pd vt open "$f" r expect 0 4K zero expect 4K 4K A expect 8K 4K zero expect 12K 52K A \
		open "$g" r expect 0 16K G expect 16K 4K zero expect 20K 44K G
done

# ---- 2. far below: nothing is purged ------------------------------------------------
for thr in 1M 1% 0; do
	three_marks "$thr"
	expect_out pc <<EOF
open $f rw = 3
unmark 0 4K = 0
unmark 8K 4K = 0
open $g rw = 4
unmark 16K 4K = 0
EOF
	ok pd vt open "$f" r expect 0 64K A open "$g" r expect 0 64K G
done

# ---- 3. the default, 10%, on a machine that has more than that available ---------------
avail=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
total=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
if [ -n "$avail" ] && [ -n "$total" ] && [ "$avail" -gt $((total / 4)) ]; then
	unset VOLATILE_MIN_AVAILABLE
	three_marks 10%
	expect_line pc "unmark 16K 4K = 0"
	new_region
	mkfile "$f" 64K A
	ok pe svt open "$f" rw mark 0 4K unmark 0 4K
	expect_line pe "unmark 0 4K = 0"
	VOLATILE_MIN_AVAILABLE=0
	export VOLATILE_MIN_AVAILABLE
else
	say "part 3 (the default of 10%) not run: this machine has only $avail of $total KiB available"
fi

# ---- 4. the check runs again a quarter second later in the same process ---------------
# (at most every 250 ms per process: the first MARK looks, the one after
# the pause looks again; whether MARKs in between look depends on the
# clock, so none is asserted)
new_region
mkfile "$f" 64K A
ok p4 svte VOLATILE_MIN_AVAILABLE=1T -- open "$f" rw mark 0 4K expect 0 4K zero sleep 300 \
	mark 8K 4K expect 8K 4K zero expect 4K 4K A expect 12K 52K A
ok p4b svt open "$f" rw unmark 0 4K unmark 8K 4K
expect_out p4b <<EOF
open $f rw = 3
unmark 0 4K = 1
unmark 8K 4K = 1
EOF

# ---- 5. status shows the state and the thresholds in force ------------------------------
new_region
run st1 env VOLATILE_MIN_AVAILABLE=1T VOLATILE_TMPFS_MIN_FREE=5% "$VOLATILE_CMD" status
[ "$rc" -eq 0 ] || { show st1; fail "volatile status: exit status $rc"; }
expect_line st1 "pressure: LOW; purging below 1099511627776 bytes available (1.0T)"
expect_line st1 "tmpfs:    purging a tmpfs's own ranges below 5% of it free"
run st2 env VOLATILE_MIN_AVAILABLE=1M "$VOLATILE_CMD" status
expect_line st2 "pressure: ok; purging below 1048576 bytes available (1.0M)"
expect_line st2 "tmpfs:    off (VOLATILE_TMPFS_MIN_FREE=0)"
run st3 "$VOLATILE_CMD" status
expect_line st3 "pressure: off (VOLATILE_MIN_AVAILABLE=0)"
need_python
VOLATILE_MIN_AVAILABLE=1T
status_json sj1
expect_eq "status --json: pressure state at 1T" "$(jq_py sj1 "d['pressure']['state']")" low
expect_eq "status --json: threshold" "$(jq_py sj1 "d['pressure']['min_available_bytes']")" 1099511627776
VOLATILE_MIN_AVAILABLE=1M
status_json sj2
expect_eq "status --json: pressure state at 1M" "$(jq_py sj2 "d['pressure']['state']")" ok
expect_eq "status --json: memory available" \
	"$(jq_py sj2 "d['memory']['available'] > 0 and d['memory']['available'] <= d['memory']['total']")" true
VOLATILE_MIN_AVAILABLE=0
status_json sj3
expect_eq "status --json: pressure state when off" "$(jq_py sj3 "d['pressure']['state']")" off
exit 0
