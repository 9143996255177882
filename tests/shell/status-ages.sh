#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile status` of files that change while it reads them: a range's
# age (milliseconds since its MARK, DESIGN 10) is never more than the time
# since the first MARK, and a range marked while status runs is among the
# newest, not listed as the oldest. Were status to read the clock once and
# then each file in turn, a range marked in between would have a later
# stamp than that reading, and age = now - stamp would wrap to some
# 4,294,967,295 (the range shown first, "oldest", the next to go).
#
# The window is made wide and sure: file a, read first, is held by a
# process stopped inside its lock (VT_STOP_AT), so that status waits for it
# (some 120 ms) before it reads file b; a marker marks a new range of b
# every 5 ms meanwhile.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

need_fault_lib

new_region
mkfile "$WORK/a" 64K A
mkfile "$WORK/b" 8M B
# a's record first: status reads it first
t0=$(date +%s%N)
ok marks svt open "$WORK/a" rw mark 0 4K open "$WORK/b" rw mark 0 4K

bg h env LD_PRELOAD="$FAULT_LIB" VT_STOP_AT="unmark: tree changed, not committed" \
	timeout 60 "$VT" pid open "$WORK/a" rw unmark 0 4K
wait_match h out '^pid = '
hpid=$(sed -n 's/^pid = //p' "$WORK/h.out")
wait_stopped h "$hpid" "the holder never stopped holding a's lock"

args=
i=1
while [ "$i" -le 800 ]; do
	args="$args mark $((i * 8192)) 4K sleep 5"
	i=$((i + 1))
done
# shellcheck disable=SC2086 # $args: words
bg m env LD_PRELOAD="$VOLATILE_LIBRARY" timeout 60 "$VT" open "$WORK/b" rw touch "$WORK/started" $args
wait_file "$WORK/started"

status_json js
ok text vol status
t1=$(date +%s%N)
kill "$BG_m" 2>/dev/null
kill -CONT "$hpid"
wait_bg h
[ "$rc" -eq 0 ] || { show h; fail "the holder: exit status $rc"; }

# no range is older than the first MARK: the milliseconds since, plus a
# tick of the coarse clock the stamps read (20 ms to spare)
most=$(( (t1 - t0) / 1000000 + 20 ))
ages=$(jq_py js "sorted(r['age'] for f in d['file_list'] for r in f['ranges'])[-3:]")
say "--json: the three largest ages: $ages (ms; at most $most)"
[ "$(jq_py js "max([r['age'] for f in d['file_list'] for r in f['ranges']] + [0])")" -le "$most" ] ||
	fail "status --json: a range older than the first MARK ($most ms): $ages"
# the text's oldest ranges of b (offset, length, state, age)
grep -A 7 '^file .*/b ' "$WORK/text.out" | awk '$3 == "volatile" || $3 == "purged" { print $4 }' >"$WORK/oldest"
[ -s "$WORK/oldest" ] || { show text; fail "status: no ranges listed for b"; }
awk -v most="$most" '$1 > most { bad = 1 } END { exit bad }' "$WORK/oldest" ||
	{ show text; fail "status: b's oldest ranges are older than the first MARK ($most ms)"; }
exit 0
