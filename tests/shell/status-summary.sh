#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile status` of a file with many ranges: a summary per
# file and its few oldest ranges by default, every range with --ranges,
# every range in --json. Before, the text listed every range: 1,000,014
# lines for a file of a million.
. "$(dirname "$0")/lib.sh"

need_cmd
need_python
new_region
f=$WORK/many
args=
i=0
while [ "$i" -lt 1000 ]; do
	args="$args mark $((i * 8192)) 4096"
	i=$((i + 1))
done
# shellcheck disable=SC2086 # $args: words
ok marks svt open "$f" rwc truncate 8M $args
ok purge1 vol purge --bytes 4K

ok text vol status
lines=$(wc -l <"$WORK/text.out")
[ "$lines" -le 40 ] || { head -n 30 "$WORK/text.out" >&2; fail "status of 1,000 ranges printed $lines lines, want a summary (<= 40)"; }
expect_line text "  1000 ranges (1 purged): 4091904 bytes volatile, 4096 bytes purged"
expect_line text "  ... and 995 more, newer (volatile status --ranges lists them all)"
# the oldest first: the purged one, then the next to go (ages in ms, which
# 1,000 MARKs in one process mostly share: ties are listed in offset order)
grep -A 3 '^  offset ' "$WORK/text.out" | sed -n 2,3p >"$WORK/oldest"
awk '{ print $1, $2, $3 }' "$WORK/oldest" >"$WORK/oldest.out"
expect_out oldest <<EOF2
0 4096 purged
8192 4096 volatile
EOF2
awk 'NR == 1 { a = $4 } NR == 2 && $4 > a { exit 1 }' "$WORK/oldest" ||
	{ cat "$WORK/oldest" >&2; fail "status: the second oldest has a larger age than the first"; }

ok all vol status --ranges
n=$(grep -c '^  [0-9][0-9]* *4096 *\(volatile\|purged\)' "$WORK/all.out")
[ "$n" -eq 1000 ] || fail "status --ranges listed $n ranges, want 1000"
# in offset order
grep '^  [0-9][0-9]* *4096 ' "$WORK/all.out" | awk '{print $1}' >"$WORK/offsets"
sort -n "$WORK/offsets" | cmp -s - "$WORK/offsets" || fail "status --ranges: not in offset order"

status_json js
expect_eq "ranges in --json" "$(jq_py js 'len(d["file_list"][0]["ranges"])')" 1000

# a file of fewer ranges than are shown: all of them, oldest first too
new_region
# MARKs further apart than the age order's bound (apart: DESIGN 10)
ok few svt open "$WORK/few" rwc truncate 1M mark 0 4K apart mark 64K 4K apart mark 16K 4K
ok ftext vol status
grep -A 3 '^  offset ' "$WORK/ftext.out" | sed -n 2,4p >"$WORK/few.rows"
awk '{print $1}' "$WORK/few.rows" >"$WORK/fewages.out"
expect_out fewages <<EOF2
0
65536
16384
EOF2
awk 'NR > 1 && $4 >= a { exit 1 } { a = $4 }' "$WORK/few.rows" ||
	{ cat "$WORK/few.rows" >&2; fail "status: ages not falling from the oldest to the newest"; }
grep -q 'more, newer' "$WORK/ftext.out" && fail "a file of 3 ranges says there are more"
exit 0
