#!/bin/sh
# SPDX-License-Identifier: MIT
# The machine's daemon relieves a memory cgroup at its limit with its own
# holders' ranges (DESIGN 22): tmpfs pages are charged to the cgroup that
# faulted them, so another cgroup's ranges, however old, free nothing in it.
#   U2's holder, outside A, marks 2 ranges of 4M - 4K (the machine's
#   oldest); then U1's holder, in a memory cgroup A (limit 64M, no swap),
#   fills a tmpfs file of 52M (charged to A) and marks 13 ranges of 4M - 4K
#   in it one by one (the 4K gaps keep them apart), leaving A's headroom
#   below 30% of its limit.
#   a. `purge --system --cgroup A --bytes 1` purges U1's oldest range
#      alone: U2's, older, stay.
#   b. `daemon --system` with VOLATILE_MIN_AVAILABLE=30% (of the machine's
#      memory: far below MemAvailable, the machine's rule stays quiet; of
#      A's limit: A is under it) watches A, says so, and purges U1's oldest
#      ranges until A's headroom is back over the threshold; U2's stay.
# Both fail as long as the worker answers for the whole region whatever
# cgroup an ask names (U2's older ranges go first).
SYS_UIDS="62101 62102"
. "$(dirname "$0")/system-root-lib.sh"

case ${VL_SANITIZE:-} in
thread) skip "a ThreadSanitizer build's programs take several times their memory: a 64M cgroup measures TSan, not the cache" ;;
esac

LIMIT_MB=64
CHUNKS=13 # U1's ranges of 4M in A
PCT=30
. "$(dirname "$0")/cgroup-lib.sh"
trap 'cg_remove; sys_cleanup' EXIT
cg_make a
[ "$CG_VERSION" = 1 ] ||
	skip "cgroup v2: this test is written for v1's hierarchy (the machine it was made on has no other); the v2 watch (memory.events, PSI) is not tried by it"

read -r total_kb avail_kb <<EOF
$(awk '$1 == "MemTotal:" { t = $2 } $1 == "MemAvailable:" { a = $2 } END { print t, a }' /proc/meminfo)
EOF
[ $((avail_kb * 100)) -gt $(((PCT + 10) * total_kb)) ] ||
	skip "MemAvailable is $avail_kb kB of $total_kb: under $((PCT + 10))%, the machine's own rule would purge too"

# A's headroom as the daemon counts it (DESIGN 6): limit - usage + inactive file cache
cg_headroom() {
	_lim=$(cat "$CG/memory.limit_in_bytes")
	_use=$(cat "$CG/memory.usage_in_bytes")
	_ina=$(awk '$1 == "total_inactive_file" { print $2 }' "$CG/memory.stat")
	echo $((_lim - _use + _ina))
}
threshold=$((LIMIT_MB * 1024 * 1024 * PCT / 100))

f1=$WORK/u$U1/f
f2=$WORK/u$U2/f
holder h2 $U2 open "$f2" rwc fill 0 8M B mark 0 4092K mark 4M 4092K apart touch "$CUE/u2-marked" \
	wait "$CUE/end" unmark 0 4092K unmark 4M 4092K expect 0 8M B
wait_file "$CUE/u2-marked"
marks=
k=0
while [ "$k" -lt "$CHUNKS" ]; do
	marks="$marks mark $((k * 4))M 4092K"
	k=$((k + 1))
done
# U1's holder in A: its file's pages are A's (no purge at its own MARKs)
# shellcheck disable=SC2086
bg h1 sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" setpriv --reuid=$U1 --regid=$U1 \
	--clear-groups -- env -u VOLATILE_REGION LD_PRELOAD="$VOLATILE_LIBRARY" VOLATILE_MIN_AVAILABLE=0 \
	timeout 120 "$VT" open "$f1" rwc fill 0 $((CHUNKS * 4))M A $marks touch "$CUE/u1-marked" \
	wait "$CUE/end"
wait_file "$CUE/u1-marked"
room=$(cg_headroom)
[ "$room" -lt "$threshold" ] ||
	fail "setup: A's headroom $room is not under $PCT% of its limit ($threshold): the test proves nothing"

# "true" for each of U1's first N ranges, "false" for the rest
u1_first_purged() {
	_k=0
	_s=
	while [ "$_k" -lt "$CHUNKS" ]; do
		if [ "$_k" -lt "$1" ]; then _s="$_s true"; else _s="$_s false"; fi
		_k=$((_k + 1))
	done
	echo "${_s# }"
}

# ---- a. purge --system --cgroup A: U1's oldest, not U2's older ones ------------------
sys_purge pa --cgroup "$CG" --bytes 1
expect_out pa <<EOF
uid $U1: purged 1 range, 4190208 bytes
uid $U2: purged 0 ranges, 0 bytes
purged 1 range, 4190208 bytes
EOF
expect_eq "U1's ranges after purge --cgroup (purged?)" "$(purged_of sa1 $U1)" "$(u1_first_purged 1)"
expect_eq "U2's ranges after purge --cgroup (purged?)" "$(purged_of sa2 $U2)" "false false"
room=$(cg_headroom)
[ "$room" -lt "$threshold" ] ||
	fail "setup: after a., A's headroom $room is not under $PCT% of its limit ($threshold)"

# ---- b. the daemon: A watched, relieved with U1's ranges; U2's older ones stay --------
sys_daemon_turn
bg d env VOLATILE_MIN_AVAILABLE=$PCT% "$VOLATILE_CMD" daemon --system --foreground --uid $U1 --uid $U2
dpid=$BG_d
watches_a() {
	grep -qxF "volatile daemon: watching cgroup v1 $CG (holders of 1 user)" "$WORK/d.err"
}
sys_until_within "the daemon says it watches A" 60 watches_a
a_relieved() {
	[ "$(cg_headroom)" -ge "$threshold" ]
}
sys_until_within "A's headroom back over $PCT% of its limit" 60 a_relieved
grep -qE "^volatile daemon: purged [0-9]+ bytes: cgroup v1 $CG: [0-9]+ bytes available < $threshold\$" \
	"$WORK/d.err" || { show d; fail "no purge line naming A"; }
if grep -q '^volatile daemon: purged [0-9]* bytes: memory ' "$WORK/d.err"; then
	show d
	fail "the machine's rule purged too (MemAvailable over $PCT% of MemTotal)"
fi
expect_eq "U2's ranges after the daemon (purged?)" "$(purged_of sb2 $U2)" "false false"
u1=$(purged_of sb1 $U1)
n=0
for p in $u1; do
	[ "$p" = true ] && n=$((n + 1))
done
[ "$n" -ge 2 ] || { show d; fail "the daemon purged none of U1's ranges in A: $u1"; }
expect_eq "U1's ranges after the daemon: the $n oldest purged" "$u1" "$(u1_first_purged $n)"
kill -TERM "$dpid"
wait_bg d
[ "$rc" -eq 0 ] || { show d; fail "daemon --system: exit status $rc on SIGTERM (want 0)"; }

touch "$CUE/end"
wait_bg h2
[ "$rc" -eq 0 ] || { show h2; fail "U2's holder: exit status $rc"; }
expect_line h2 "unmark 0 4092K = 0"
expect_line h2 "unmark 4M 4092K = 0"
wait_bg h1
[ "$rc" -eq 0 ] || { show h1; fail "U1's holder: exit status $rc"; }
say "A relieved by U1's $n oldest ranges, first by hand (1), then by the daemon; U2's older ones intact"
