#!/bin/sh
# SPDX-License-Identifier: MIT
# A file record's count of ranges scribbled to 0 (no sum covers the
# counts, DESIGN 10), then the table full (DESIGN 15: records with no
# range are the first to go). The record is freed as empty: no
# tombstone, its tree not cleared. DESIGN 4 and 18: UNMARK must never
# say 0 over bytes that were punched, and nothing may punch a byte
# outside a range that was marked in that file.
#   F is 1M of 'F', G 1M of 'G', in a region of 8 records. F's [8K, 12K)
#   is marked and purged, then [128K, 132K) marked; F's record's nranges
#   is written 0 (helpers/plant record). Seven memfds fill the table and
#   G's MARK of [0, 4K) frees F's record as empty and takes its slot.
#   G's lock word is then made a dead holder's: the repair rebuilds G from
#   the nodes that name its slot, F's among them, and a purge follows.
#   - G's bytes [4K, 1M), never marked in G, must still be 'G';
#   - F's UNMARK of [8K, 12K), zeros, must say 1 (or EUCLEAN).
# An expected failure (XFAIL_TESTS) until a record is freed as empty on
# more than its count's word, and F's nodes no longer outlive it.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

need_plant

F=$WORK/F
G=$WORK/G
new_region
export VOLATILE_REGION_FILES=8
mkfile "$F" 1M F
mkfile "$G" 1M G
ok m1 svt open "$F" rw mark 8K 4K
ok p1 vol purge --all
ok m2 svt open "$F" rw mark 128K 4K
ok e "$PLANT" record "$F" nranges 0
args=
i=0
while [ "$i" -lt 7 ]; do
	args="$args memfd m$i 4K mark 0 4K"
	i=$((i + 1))
done
# shellcheck disable=SC2086 # one word per argument, on purpose
ok fill svt $args
ok g1 svt open "$G" rw mark 0 4K
ok l "$PLANT" lockword "$G" dead
ok g2 svt open "$G" rw mark 0 4K
ok p2 vol purge --all
run x vt open "$G" r expect 4K 1020K G
grep -qx 'expect 4K 1020K G ok' "$WORK/x.out" ||
	{ show x; soft fail "G's bytes that nobody marked in G were punched (F's range)"; }
run u svt open "$F" rw unmark 8K 4K
grep -qx 'unmark 8K 4K = 1' "$WORK/u.out" || grep -qx 'unmark 8K 4K = -1 EUCLEAN' "$WORK/u.out" ||
	{ show u; soft fail "F's UNMARK over its punched bytes [8K, 12K) said 0"; }
exit $FAILED
