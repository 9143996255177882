#!/bin/sh
# SPDX-License-Identifier: MIT
# Ages are the host's clock (DESIGN 10): comparable across regions, in
# order across files to within the bound the README states, a stamp ahead
# of the reader read as now, and no age let reach the wrap.
#   1. Two regions: a range of region 1 marked before a range of region 2
#      (further apart than the bound) is the older in `volatile status`,
#      each age in milliseconds since its MARK.
#   2. The bound: files a and b marked by two processes further apart than
#      one clock tick + 1 ms (vt apart), in either order, 20 times: one
#      `volatile purge --bytes 4K` purges the one marked first, every time.
#   3. A stamp ahead of the reader: b marked by a process whose age clock is
#      an hour ahead (the test build's VOLATILE_FAULT_AGE_SHIFT), then a:
#      the purge takes a (b's stamp reads as now), not b (49.7 days less
#      an hour old, were it read as a distance back).
#   4. The wrap: a marked at day 0, z at day 41 (a, 41 days old, restamped
#      to 40 days old) and again at day 44 (a again): at day 51 a purge
#      takes a, which the wrap (49.7 days) would have made 1.3 days old,
#      younger than z's 10.
#   5. A time namespace whose monotonic clock is an hour behind the host's
#      (unshare --time --monotonic -3600): b marked there after a, and the
#      purge takes a (b's stamp, the host's clock, is the later; without
#      the offset subtracted b would look an hour old). Skipped, saying
#      why, where no time namespace can be made or the host is up < 1 h.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

need_fault_lib
[ -x "$VOLATILE_FAULT_CMD" ] || fail "$VOLATILE_FAULT_CMD is not built (make check builds it)"
DAY=86400

a=$WORK/a
b=$WORK/b
z=$WORK/z
mkfile "$a" 64K A
mkfile "$b" 64K B
mkfile "$z" 64K Z

# ---- 1. two regions, one order -----------------------------------------------------
new_region
r1=$VOLATILE_REGION
ok r1 svt open "$a" rw mark 0 4K apart
new_region
r2=$VOLATILE_REGION
ok r2 svt open "$b" rw mark 0 4K
# b's age read first: a's, read after, is larger if a is the older, whatever the time between
VOLATILE_REGION=$r2 status_json s2
VOLATILE_REGION=$r1 status_json s1
age1=$(jq_py s1 'd["file_list"][0]["ranges"][0]["age"]')
age2=$(jq_py s2 'd["file_list"][0]["ranges"][0]["age"]')
say "a's age in region 1: $age1 ms; b's in region 2: $age2 ms"
[ "$age1" -gt "$age2" ] ||
	fail "a, marked first in region 1, is not older than b of region 2: $age1 <= $age2 (ms)"

# ---- 2. the bound: marked further apart than it, purged oldest first ---------------
new_region
i=1
while [ "$i" -le 20 ]; do
	if [ $((i % 2)) -eq 1 ]; then
		first=$a second=$b
	else
		first=$b second=$a
	fi
	ok "m$i.1" svt open "$first" rw mark 0 4K apart
	ok "m$i.2" svt open "$second" rw mark 0 4K
	ok "p$i" vol purge --bytes 4K
	got=$(purged_set "s$i")
	[ "$got" = "${first##*/}" ] ||
		fail "round $i: ${first##*/} marked before ${second##*/}, purged: $got (want ${first##*/})"
	ok "u$i" svt open "$a" rw unmark 0 4K open "$b" rw unmark 0 4K
	i=$((i + 1))
done
say "20 rounds, the first marked purged first in each"

# ---- 3. a stamp ahead of the reader reads as now -----------------------------------
new_region
shifted ahead 3600 open "$b" rw mark 0 4K apart
# apart after a's MARK too: a purge in its very tick would read a as now as well (a tie)
ok now svt open "$a" rw mark 0 4K apart
ok p vol purge --bytes 4K
got=$(purged_set ahead.s)
[ "$got" = a ] || fail "b's stamp an hour ahead: purged $got (want a: b reads as now)"

# ---- 4. the wrap: ages near it brought up -----------------------------------------
new_region
shifted d0 0 open "$a" rw mark 0 4K
shifted d41 $((41 * DAY)) open "$z" rw mark 0 4K
shifted d44 $((44 * DAY)) open "$z" rw mark 8K 4K
ok d51 env VOLATILE_FAULT_AGE_SHIFT=$((51 * DAY)) timeout "$VL_TIMEOUT" \
	"$VOLATILE_FAULT_CMD" purge --bytes 4K
got=$(purged_set wrap.s)
[ "$got" = a ] || fail "a marked 51 days before the purge, z 10 and 7: purged $got (want a)"

# ---- 5. a time namespace's offset subtracted ---------------------------------------
up=$(cut -d. -f1 /proc/uptime)
if [ "$up" -le 3700 ]; then
	say "time namespace: skipped (up ${up}s: a clock an hour behind would be below 0)"
	exit 0
fi
if unshare --time --fork --monotonic -3600 true 2>/dev/null; then
	timens="unshare --time --fork --monotonic -3600"
elif unshare -Ur --time --fork --monotonic -3600 true 2>/dev/null; then
	timens="unshare -Ur --time --fork --monotonic -3600"
else
	say "time namespace: skipped (unshare --time refused: no time namespaces here)"
	exit 0
fi
new_region
ok host svt open "$a" rw mark 0 4K apart
# shellcheck disable=SC2086 # $timens: words
ok behind env LD_PRELOAD="$VOLATILE_LIBRARY" $timens timeout "$VL_TIMEOUT" "$VT" \
	open "$b" rw mark 0 4K
status_json timens.before
ok p vol purge --bytes 4K
got=$(purged_set timens.s)
[ "$got" = a ] || fail "b marked after a in a time namespace an hour behind: purged $got (want a;" \
	"ages before the purge, ms: $(jq_py timens.before '[(f["path"].rsplit("/", 1)[1], f["ranges"][0]["age"]) for f in d["file_list"]]'))"
say "time namespace ($timens): its MARK is the younger"
exit 0
