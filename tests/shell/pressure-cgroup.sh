#!/bin/sh
# SPDX-License-Identifier: MIT
# A memory cgroup with a limit (DESIGN 6): "available" is the cgroup's
# headroom when that is smaller than the machine's. tmpfs and memfd pages
# cannot be reclaimed without swap, so a full cache makes the OOM killer
# strike when another process of the cgroup allocates; volatile ranges
# let the cache give way instead.
#
#   A. a process fills a 48M cache in a memfd and marks it volatile, then
#      sleeps; a second process allocates 56M step by step; limit 96M.
#      With the daemon watching the cgroup (VOLATILE_MIN_AVAILABLE=24M),
#      the oldest ranges are purged and nobody is OOM-killed.
#   B. the same run without libvolatile: an OOM kill. (So A tests
#      something.)
#   C. no daemon: a process that keeps filling and marking its cache
#      beyond the limit purges its own oldest ranges on MARK.
#
# Makes a cgroup (v1: the memory controller's hierarchy, as here; v2: the
# unified one), so root only; skipped where cgroups cannot be made.
. "$(dirname "$0")/lib.sh"
need_cmd

case ${VL_SANITIZE:-} in
thread) skip "a ThreadSanitizer build's programs take several times their memory: a 96M cgroup measures TSan, not the cache" ;;
esac

LIMIT_MB=96
CACHE_CHUNKS=12 # of 4M each, the last 4K of each never marked
GRAB=56M

# ---- the cgroup -------------------------------------------------------------------

. "$(dirname "$0")/cgroup-lib.sh"
trap 'cg_remove; cleanup' EXIT

# ---- the cache ------------------------------------------------------------------------

# The marks of the cache: [k*4M, (k+1)*4M - 4K) for each chunk k, oldest
# first; the 4K gaps between never become volatile.
MARKS=
UNMARKS=
k=0
while [ "$k" -lt "$CACHE_CHUNKS" ]; do
	MARKS="$MARKS mark $((k * 4))M 4092K"
	UNMARKS="$UNMARKS unmark $((k * 4))M 4092K"
	k=$((k + 1))
done

# check_cache NAME PID FD: NAME's output has the cache's UNMARKs; the
# purged ranges must be the oldest ones, read as zeros, and everything
# else (the gaps above all) must hold its bytes. Reads the memfd through
# the still running cache process. Prints how many ranges were purged.
check_cache() {
	_results=$(sed -n 's/^unmark .* = \([01]\)$/\1/p' "$WORK/$1.out" | tr -d '\n')
	[ "${#_results}" -eq "$CACHE_CHUNKS" ] || { show "$1"; fail "$1: not $CACHE_CHUNKS UNMARKs"; }
	case $_results in
	*01*) show "$1"; fail "$1: a younger range was purged before an older one ($_results)" ;;
	esac
	_purged=${_results%%0*}
	_n=${#_purged}
	_args=
	_k=0
	while [ "$_k" -lt "$CACHE_CHUNKS" ]; do
		if [ "$_k" -lt "$_n" ]; then
			_args="$_args expect $((_k * 4))M 4092K zero"
		else
			_args="$_args expect $((_k * 4))M 4092K C"
		fi
		_args="$_args expect $((_k * 4 + 4))M-4K 4K C"
		_k=$((_k + 1))
	done
	# word splitting of $_args is intended
	# shellcheck disable=SC2086
	ok "$1.check" vt open "/proc/$2/fd/$3" r $_args
	echo "$_n"
}

# ---- A. the daemon watching the cgroup: the cache gives way, nobody is killed ------------
new_region
cg_make a
bg da env VOLATILE_MIN_AVAILABLE=24M "$VOLATILE_CMD" daemon --foreground --cgroup "$CG"
wait_match da err '^volatile daemon: watching region'
grep -q "^volatile daemon: cgroup v$CG_VERSION $CG" "$WORK/da.err" || { show da; fail "the daemon does not watch $CG"; }
# shellcheck disable=SC2086
bg cache env LD_PRELOAD="$VOLATILE_LIBRARY" VOLATILE_MIN_AVAILABLE=0 VL_TIMEOUT=60 \
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" timeout 60 "$VT" \
	pid memfd cache $((CACHE_CHUNKS * 4))M fill 0 $((CACHE_CHUNKS * 4))M C $MARKS \
	touch "$WORK/cached" wait "$WORK/go" $UNMARKS wait "$WORK/done"
wait_file "$WORK/cached"
# (timeout runs vt as its child: vt's own pid, and the memfd's number)
cache_pid=$(sed -n 's/^pid = //p' "$WORK/cache.out")
cache_fd=$(sed -n 's/^memfd cache .* = //p' "$WORK/cache.out")
run grab in_cg timeout 60 "$VT" grab "$GRAB" 4M 50
[ "$rc" -eq 0 ] || { show grab; show da; fail "with libvolatile: the allocating process: exit status $rc"; }
expect_line grab "grab $GRAB 4M 50 = ok"
expect_eq "OOM kills in the cgroup with libvolatile" "$(cg_oom_kills)" 0
touch "$WORK/go"
wait_match cache out "^unmark $(((CACHE_CHUNKS - 1) * 4))M 4092K = [01]\$"
n=$(check_cache cache "$cache_pid" "$cache_fd") || exit 1
[ "$n" -ge 1 ] || { show da; fail "with libvolatile: nothing was purged"; }
say "A: the daemon purged the $n oldest of $CACHE_CHUNKS ranges; no OOM kill"
grep -qE '^volatile daemon: purged [0-9]+ ranges?, [0-9]+ bytes: cgroup [0-9]+ bytes available < 25165824$' \
	"$WORK/da.err" || { show da; fail "no purge line naming the cgroup"; }
touch "$WORK/done"
wait_bg cache
[ "$rc" -eq 0 ] || { show cache; fail "the cache process: exit status $rc"; }

# ---- B. the same without libvolatile: the OOM killer strikes --------------------------------
rm -f "$WORK/cached" "$WORK/go" "$WORK/done"
cg_make b
bg cache2 sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" timeout 60 "$VT" \
	memfd cache $((CACHE_CHUNKS * 4))M fill 0 $((CACHE_CHUNKS * 4))M C \
	touch "$WORK/cached" wait "$WORK/done"
wait_file "$WORK/cached"
run grab2 in_cg timeout 60 "$VT" grab "$GRAB" 4M 50
kills=$(cg_oom_kills)
[ "$kills" -ge 1 ] || { show grab2; fail "without libvolatile: no OOM kill (the test proves nothing)"; }
say "B: without libvolatile: $kills OOM kill(s); the allocating process exited with status $rc"
touch "$WORK/done"
eval "kill -TERM \$BG_da"
wait_bg da
[ "$rc" -eq 0 ] || { show da; fail "daemon on SIGTERM: exit status $rc"; }

# ---- C. no daemon: MARKs in the cgroup purge the caller's oldest ranges ---------------------
# 24 chunks of 4M (96M, the limit) written and marked one by one, each
# MARK a little over the 250 ms apart at which a process looks at memory
new_region
cg_make c
args=
k=0
while [ "$k" -lt 24 ]; do
	args="$args fill $((k * 4))M 4M C mark $((k * 4))M 4092K sleep 260"
	k=$((k + 1))
done
# shellcheck disable=SC2086
run fillmark in_cg env LD_PRELOAD="$VOLATILE_LIBRARY" VOLATILE_MIN_AVAILABLE=24M \
	timeout 60 "$VT" memfd cache 96M $args unmark 0 4092K unmark 92M 4092K expect 92M 4M C
[ "$rc" -eq 0 ] || { show fillmark; fail "filling and marking in the cgroup: exit status $rc"; }
expect_line fillmark "unmark 0 4092K = 1"
expect_line fillmark "unmark 92M 4092K = 0"
expect_eq "OOM kills in the cgroup when MARK purges" "$(cg_oom_kills)" 0
exit 0
