#!/bin/sh
# SPDX-License-Identifier: MIT
# A MARK that finds the region full repairs the files whose lock a dead
# process holds and that hold PENDING nodes, at most 32 of them a call
# (lock.c vl_repair_dead_holders, core/pool.c vl_pending_owners; DESIGN
# 10). Are the 32 always the ones a repair helps? Here 32 other files hold
# PENDING nodes first (lower slots) whose holders are alive: each stopped
# in the step where its UNMARK gives a chunk back (chunk-other-file.sh's
# step, full-repair-alive.sh's holder, 32 times). After them D, killed in
# that same step, left its chunk PENDING of d; no one opens d again.
#
# Each of the 33 files marked 8 ranges (two chunks) and unmarked them: its
# own chunk is left with 4 IDLE nodes (anyone's when the region is full:
# vl_spare_steal), the other is the one given back. Only the 32 stopped
# holders' PENDING chunks are theirs while they are alive
# (full-repair-alive.sh): a fresh process marking g must make every other
# range of the region, D's chunk repaired among them.
. "$(dirname "$0")/lib.sh"
need_cmd
. "$(dirname "$0")/chunk-lib.sh"
need_lockword

# 33 files of two chunks each, g's own chunk and one chunk more
LIVE=32
VOLATILE_REGION_RANGES=$((((LIVE + 1) * 2 + 2) * 4))
export VOLATILE_REGION_RANGES
WANT=$((VOLATILE_REGION_RANGES - LIVE * 4))
gmarks=
k=0
while [ "$k" -lt $((WANT + 8)) ]; do
	gmarks="$gmarks mark $((k * 8))K 4K"
	k=$((k + 1))
done

new_region
d=$WORK/d
g=$WORK/g
mkfile "$d" 64K D
mkfile "$g" $(((WANT + 8) * 8))K G
# g's record first, and the region made, before the others
ok g0 svt open "$g" rw mark 0 4K unmark 0 4K

i=1
while [ "$i" -le "$LIVE" ]; do
	mkfile "$WORK/s$i" 64K S
	freer "S$i" "$WORK/s$i"
	STOPPED="$STOPPED $fpid"
	i=$((i + 1))
done
say "$LIVE holders alive, stopped, each with a chunk PENDING of its file"

freer D "$d"
kill -KILL "$fpid"
wait_bg D
ok lw "$LOCKWORD" slot "$d"
dslot=$(sed -n 's/^slot .* = //p' "$WORK/lw.out")
ok lw1 "$LOCKWORD" word "$dslot"
say "D killed: d is record $dslot, its lock word $(sed -n 's/^word .* = //p' "$WORK/lw1.out")"

# shellcheck disable=SC2086
run G svt open "$g" rw $gmarks
[ "$rc" -eq 0 ] || { show G; stop_all; fail "G: exit status $rc"; }
made=$(grep -c '^mark .* = 0$' "$WORK/G.out")
ok lw2 "$LOCKWORD" word "$dslot"
after=$(sed -n 's/^word .* = //p' "$WORK/lw2.out")
say "G: $made MARKs of g made (want $WANT); d's lock word after: $after"
[ "$made" -ge "$WANT" ] || {
	grep -m1 '^mark .* = -' "$WORK/G.out" >&2
	stop_all
	fail "G made $made MARKs of g, not $WANT: the region full, d's chunk (its freer D killed) not repaired (d's lock word still $after), $LIVE files held by live holders with PENDING nodes in lower slots"
}
# and no MARK before those was refused: the first that finds the region
# full repairs d, however many live holders' files its first look meets
first=$(grep '^mark ' "$WORK/G.out" | grep -n ' = -' | sed -n '1s/:.*//p')
[ -z "$first" ] || [ "$first" -gt "$WANT" ] || {
	grep -m1 '^mark .* = -' "$WORK/G.out" >&2
	stop_all
	fail "G's MARK $first of g was refused while d's chunk was there to repair: the full region's look met the $LIVE live holders' files first and repaired nothing"
}
stop_all
exit $FAILED
