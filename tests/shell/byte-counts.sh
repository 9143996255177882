#!/bin/sh
# SPDX-License-Identifier: MIT
# The region's byte counts are exact past 2^64 (DESIGN 6, 10): one file's
# ranges lie in [0, LLONG_MAX), but three memfds marked [0, LLONG_MAX)
# hold 3 * (2^63 - 1) = 27670116110564327421 volatile bytes, more than 64
# bits count. `volatile status` shows the exact total; a budget is not
# taken for met by a count that wrapped: a MARK under VOLATILE_BUDGET=1G
# purges the three, oldest first, and keeps its own small range; and once
# everything is unmarked the counts are 0 again. (memfds of LLONG_MAX
# bytes are sparse: marking takes no memory, purging punches holes.)
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

huge=9223372036854775807 # LLONG_MAX, vt's "max"
total=27670116110564327421

# ---- 1. three memfds, each marked [0, LLONG_MAX), held by one process --------------
new_region
bg a svt memfd a max mark 0 max memfd b max mark 0 max memfd c max mark 0 max \
	touch "$WORK/a-marked" wait "$WORK/a-go" \
	fd 3 unmark 0 max fd 4 unmark 0 max fd 5 unmark 0 max
wait_file "$WORK/a-marked"
status_json st1
soft expect_eq "volatile bytes of three [0, LLONG_MAX)" "$(jq_py st1 'd["volatile_bytes"]')" $total
soft expect_eq "ranges" "$(jq_py st1 'd["ranges"]')" 3
soft expect_eq "purged bytes" "$(jq_py st1 'd["purged_bytes"]')" 0
ok st1t vol status
soft expect_line st1t "volatile: $total bytes (24.0E) not purged"

# ---- 2. a MARK under a budget of 1G: the three go, oldest first, the new one stays --
# A count kept in 64 bits wraps to 2^63 - 3; it is over 1G, so the first
# huge range is purged, and the count wraps again, to 4094: "within the
# budget", and two huge ranges stay.
bg b svte VOLATILE_BUDGET=1G -- memfd d 64K fill 0 64K D mark 0 4K \
	touch "$WORK/b-marked" wait "$WORK/b-go" expect 0 64K D unmark 0 4K
wait_file "$WORK/b-marked"
status_json st2
soft expect_eq "volatile bytes after the budget's MARK" "$(jq_py st2 'd["volatile_bytes"]')" 4096
soft expect_eq "purged bytes after the budget's MARK" "$(jq_py st2 'd["purged_bytes"]')" $total
soft expect_eq "ranges purged" "$(jq_py st2 'd["ranges_purged"]')" 3
soft expect_eq "purges" "$(jq_py st2 'd["purges"]')" 3
soft expect_eq "bytes purged so far" "$(jq_py st2 'd["purged_total"]')" $total
soft expect_eq "the huge ranges, purged" \
	"$(jq_py st2 'sorted((r["length"], r["purged"]) for f in d["file_list"] for r in f["ranges"])')" \
	"[[4096, false], [$huge, true], [$huge, true], [$huge, true]]"

# ---- 3. everything unmarked: the counts are 0 again ---------------------------------
touch "$WORK/b-go"
wait_bg b
[ "$rc" -eq 0 ] || { show b; fail "the budget's process failed ($rc)"; }
touch "$WORK/a-go"
wait_bg a
[ "$rc" -eq 0 ] || { show a; fail "the marking process failed ($rc)"; }
soft expect_out a <<EOF
memfd a max = 3
mark 0 max = 0
memfd b max = 4
mark 0 max = 0
memfd c max = 5
mark 0 max = 0
touch $WORK/a-marked = 0
wait $WORK/a-go
fd 3
unmark 0 max = 1
fd 4
unmark 0 max = 1
fd 5
unmark 0 max = 1
EOF
soft expect_line b "unmark 0 4K = 0"
status_json st3
soft expect_eq "volatile bytes at the end" "$(jq_py st3 'd["volatile_bytes"]')" 0
soft expect_eq "purged bytes at the end" "$(jq_py st3 'd["purged_bytes"]')" 0
soft expect_eq "ranges at the end" "$(jq_py st3 'd["ranges"]')" 0
soft expect_eq "bytes purged so far, at the end" "$(jq_py st3 'd["purged_total"]')" $total
exit $FAILED
