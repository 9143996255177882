#!/bin/sh
# SPDX-License-Identifier: MIT
# Scribbled age order fields (DESIGN 10, 13): a file
# record's oldest, lru_head and lru_tail steer every purge, and none of
# them is covered by the record's sum. A purge checks them under the
# file's lock where it uses them; a record found inconsistent is repaired
# there (oldest from its head's age, the age order rebuilt from its nodes)
# and may be chosen once more by what it then publishes; found wrong again
# in the same pass, it is skipped: never chosen again and again.
# helpers/lockword writes the fields into the region file.
#   1. F marked and unmarked (its record stays, no range), its oldest set
#      from 0 to 1: the oldest of all, with nothing to purge. A MARK of G
#      with VOLATILE_BUDGET=4K purges G's older range at once (it spun for
#      about two minutes), F's oldest is 0 again; then oldest scribbled
#      once more, `volatile purge` and volatile_purge() each end at once.
#   2. F's lru_head names a range of G (a sound node of another file): a
#      purge never punches G's extent through F's way; F is repaired and
#      then purged by its own order (its range, the oldest), G untouched.
#   3. F's lru_tail out of the table (0x4000000, as a random flip left
#      one), then F marked again: purges end, F's age order is whole again,
#      and no UNMARK says 0 over zeros.
#   4. F with a range, marked after G's: F's oldest set to 1 makes F look the
#      oldest while its head is not. `volatile purge --all` purges both
#      files' ranges (before: 8.4 million visits chose F and chose again,
#      in 340 ms, and the pass ended with 0 ranges purged).
#   5. Three files' lock words scribbled to name a live process (L, asleep
#      after a MARK), VOLATILE_LOCK_WAIT=300ms: a purge waits the bound for
#      the first and skips the other two at once (they were three waits; 64
#      such words were 64 waits, a minute), and purges G's ranges.
# Every command has 20 s (VL_TIMEOUT); the failure was minutes.
. "$(dirname "$0")/lib.sh"
need_cmd

need_lockword

lw() {
	"$LOCKWORD" "$@" >"$WORK/lw.out" 2>"$WORK/lw.err" || { cat "$WORK/lw.err" >&2; fail "lockword $*"; }
	sed 's/^.* = //' "$WORK/lw.out"
}

# timed NAME CMD...: ok, and say how long it took
timed() {
	_t0=$(date +%s%N)
	ok "$@"
	_t1=$(date +%s%N)
	say "$1: $(((_t1 - _t0) / 1000000)) ms"
}

F=$WORK/F
G=$WORK/G

# ---- 1. oldest 0 -> 1 on a record with no range ------------------------------------
new_region
mkfile "$F" 64K F
mkfile "$G" 64K G
ok p svt open "$F" rw mark 0 4K unmark 0 4K
sf=$(lw slot "$F")
[ "$sf" != none ] || fail "F's record did not stay"
expect_eq "F's oldest" "$(lw field "$sf" oldest)" 0
lw setfield "$sf" oldest 1 >/dev/null

timed m1 svte VOLATILE_BUDGET=4K -- open "$G" rw mark 0 4K mark 8K 4K \
	expect 0 4K zero expect 4K 60K G
expect_out m1 <<EOF
open $G rw = 3
mark 0 4K = 0
mark 8K 4K = 0
expect 0 4K zero ok
expect 4K 60K G ok
EOF
expect_eq "F's oldest, repaired by the purge that found it" "$(lw field "$sf" oldest)" 0

lw setfield "$sf" oldest 1 >/dev/null
timed c1 vol purge
expect_line c1 "purged 1 range, 4096 bytes"
expect_eq "F's oldest after volatile purge" "$(lw field "$sf" oldest)" 0

ok m1b svt open "$G" rw mark 16K 4K
lw setfield "$sf" oldest 1 >/dev/null
if command -v python3 >/dev/null 2>&1; then
	timed a1 env LD_PRELOAD="$VOLATILE_LIBRARY" timeout "$VL_TIMEOUT" python3 -c '
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.volatile_purge.restype = ctypes.c_int64
print("volatile_purge =", lib.volatile_purge(ctypes.c_uint64(1 << 62)))' "$VOLATILE_LIBRARY"
	expect_out a1 <<EOF
volatile_purge = 4096
EOF
	expect_eq "F's oldest after volatile_purge()" "$(lw field "$sf" oldest)" 0
else
	say "no python3: volatile_purge() not called"
fi
ok u1 svt open "$F" rw expect 0 64K F open "$G" rw unmark 0 4K unmark 8K 4K unmark 16K 4K \
	expect 4K 4K G expect 12K 4K G expect 20K 44K G
expect_out u1 <<EOF
open $F rw = 3
expect 0 64K F ok
open $G rw = 4
unmark 0 4K = 1
unmark 8K 4K = 1
unmark 16K 4K = 1
expect 4K 4K G ok
expect 12K 4K G ok
expect 20K 44K G ok
EOF

# ---- 2. F's lru_head names G's range --------------------------------------------
new_region
mkfile "$F" 64K F
mkfile "$G" 64K G
ok p2 svt open "$F" rw mark 0 4K open "$G" rw mark 8K 4K
sf=$(lw slot "$F")
sg=$(lw slot "$G")
nf=$(lw node "$sf" 0)
ng=$(lw node "$sg" 0)
expect_eq "F's head" "$(lw field "$sf" lru_head)" "$(printf '%#x' "$nf")"
lw setfield "$sf" lru_head "$(printf '%x' "$ng")" >/dev/null
# F's range is the oldest: the pass finds F's head is not F's, repairs F's
# order, and chooses F again by it: F's own range goes, G's stays
timed c2 vol purge --bytes 4K
expect_line c2 "purged 1 range, 4096 bytes"
expect_eq "F's head after the purge" "$(lw field "$sf" lru_head)" 0
# F's bytes past its range were never punched with G's extent, nor G's
ok e2 svt open "$F" rw expect 0 4K zero expect 4K 60K F open "$G" rw expect 0 64K G
timed c2b vol purge --all
ok u2 svt open "$F" rw unmark 0 4K expect 0 4K zero expect 4K 60K F \
	open "$G" rw unmark 8K 4K expect 8K 4K zero expect 0 8K G expect 12K 52K G
expect_out u2 <<EOF
open $F rw = 3
unmark 0 4K = 1
expect 0 4K zero ok
expect 4K 60K F ok
open $G rw = 4
unmark 8K 4K = 1
expect 8K 4K zero ok
expect 0 8K G ok
expect 12K 52K G ok
EOF

# ---- 3. F's lru_tail out of the table ---------------------------------------------
new_region
mkfile "$F" 64K F
mkfile "$G" 64K G
ok p3 svt open "$F" rw mark 0 4K open "$G" rw mark 8K 4K
sf=$(lw slot "$F")
lw setfield "$sf" lru_tail 4000000 >/dev/null
timed m3 svte VOLATILE_BUDGET=4K -- open "$F" rw mark 16K 4K mark 32K 4K
timed c3 vol purge --all
# whatever was purged, an UNMARK saying 0 finds its bytes intact
ok u3 svt open "$F" rw unmark 0 4K unmark 16K 4K unmark 32K 4K open "$G" rw unmark 8K 4K
for r in "0 4K 0 $F F" "16K 4K 0 $F F" "32K 4K 0 $F F" "8K 4K 1 $G G"; do
	# shellcheck disable=SC2086
	set -- $r
	if grep -qxF "unmark $1 $2 = 0" "$WORK/u3.out"; then
		ok x3 vt open "$4" r expect "$1" "$2" "$5"
	fi
done
ok e3 vt open "$F" r expect 4K 12K F expect 20K 12K F expect 36K 28K F
expect_eq "F's tail after the purges" "$(lw field "$sf" lru_tail)" 0

# ---- 4. oldest of a file with a range, older than its head ---------------------------
new_region
mkfile "$F" 64K F
mkfile "$G" 64K G
ok p4 svt open "$G" rw mark 0 4K open "$F" rw mark 8K 4K
sf=$(lw slot "$F")
lw setfield "$sf" oldest 1 >/dev/null
timed c4 vol purge --all
expect_line c4 "purged 2 ranges, 8192 bytes"
expect_eq "F's oldest after the purge" "$(lw field "$sf" oldest)" 0
ok u4 svt open "$F" rw unmark 8K 4K expect 0 8K F expect 12K 52K F open "$G" rw unmark 0 4K \
	expect 4K 60K G
expect_out u4 <<EOF
open $F rw = 3
unmark 8K 4K = 1
expect 0 8K F ok
expect 12K 52K F ok
open $G rw = 4
unmark 0 4K = 1
expect 4K 60K G ok
EOF

# ---- 5. lock words naming a live process: one wait a pass ---------------------------
new_region
for i in 1 2 3; do
	mkfile "$WORK/F$i" 64K F
	ok p5-$i svt open "$WORK/F$i" rw mark 0 4K
done
mkfile "$G" 64K G
bg l5 env LD_PRELOAD="$VOLATILE_LIBRARY" timeout 120 "$VT" pid open "$G" rw mark 0 4K echo ready \
	sleep 100000
wait_match l5 out '^ready$'
lpid=$(sed -n 's/^pid = //p' "$WORK/l5.out")
token=$(lw token "$lpid")
[ "$token" != none ] || fail "L ($lpid) has no token in the region"
slots=
for i in 1 2 3; do
	s5=$(lw slot "$WORK/F$i")
	lw set "$s5" "${token#0x}" >/dev/null
	slots="$slots $s5"
done
run c5 env VOLATILE_DEBUG=1 VOLATILE_LOCK_WAIT=300ms timeout "$VL_TIMEOUT" "$VOLATILE_CMD" purge --all
[ "$rc" -eq 0 ] || { show c5; fail "c5: exit status $rc"; }
grep -q "^purged 1 range, 4096 bytes" "$WORK/c5.out" || { show c5; fail "c5: not G's one range purged"; }
waits=$(grep -c 'not locked (Resource temporarily unavailable)' "$WORK/c5.err")
tries=$(grep -c 'not locked (Device or resource busy)' "$WORK/c5.err")
[ "$waits" = 1 ] && [ "$tries" = 2 ] ||
	{ show c5; fail "c5: $waits waits of the bound and $tries skips at once (want 1 and 2)"; }
for s5 in $slots; do
	lw set "$s5" 0 >/dev/null
done
ok u5 svt open "$WORK/F1" rw unmark 0 4K open "$WORK/F2" rw unmark 0 4K \
	open "$WORK/F3" rw unmark 0 4K expect 0 64K F open "$G" rw expect 0 4K zero
expect_out u5 <<EOF
open $WORK/F1 rw = 3
unmark 0 4K = 0
open $WORK/F2 rw = 4
unmark 0 4K = 0
open $WORK/F3 rw = 5
unmark 0 4K = 0
expect 0 64K F ok
open $G rw = 6
expect 0 4K zero ok
EOF
exit 0
