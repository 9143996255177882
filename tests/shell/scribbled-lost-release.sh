#!/bin/sh
# SPDX-License-Identifier: MIT
# A repair that drops a purged range it cannot read flags the file
# (VL_FF_TOMB: every UNMARK of it says 1, rebuild.c lost_range). The flag
# lives in the record only: when the record goes (its last range gone,
# the table full: evict.c free_empty; or an eviction, a drop) it must leave
# the file's identity in the tombstones, or the next record made for the
# file is not flagged and an UNMARK of the punched bytes says 0 (DESIGN 4,
# 18: a stray write costs false 1s, never a 0 over punched bytes).
#   F's [8K, 12K) is marked and purged; its node's end then written below
#   its start without its sum (helpers/plant), and F's lock word made a
#   dead holder's, so the next call repairs F and drops that range. That
#   call is an UNMARK of [32K, 36K), which F never marked: 1 (the flag),
#   and F's record holds no range. 40 memfds made and closed in a table of
#   8 files then free the empty records, F's too. The UNMARK of [8K, 12K),
#   whose bytes were punched and no UNMARK since said so, must say 1.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

need_plant

F=$WORK/F
new_region
export VOLATILE_REGION_FILES=8
flag_by_repair "$F"
args=
i=0
while [ "$i" -lt 40 ]; do
	args="$args memfd m$i 4K mark 0 4K unmark 0 4K close"
	i=$((i + 1))
done
# shellcheck disable=SC2086 # one word per argument, on purpose
ok cycle svt $args
ok u2 svt open "$F" rw unmark 8K 4K
if ! grep -qx "unmark 8K 4K = 1" "$WORK/u2.out"; then
	show u2
	fail "UNMARK of [8K, 12K), punched, said 0 once the flagged record was freed"
fi
exit $FAILED
