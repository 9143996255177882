#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile daemon` (DESIGN 6, 8): purges the caches of idle programs (they
# marked, then only sleep) when memory is low, logs each purge in one
# line, exits 0 on SIGTERM, runs once per region, detaches unless told
# --foreground, and leaves caches alone while memory is plentiful.
. "$(dirname "$0")/lib.sh"
need_cmd

f=$WORK/cache

# An idle program: marks [0,4K) and [8K,12K) of a tmpfs file and [0,8K)
# of a memfd that only it holds, says so, sleeps until $WORK/go.$1
# exists, then unmarks and checks the bytes.
idle() {
	mkfile "$f" 64K A
	bg "idle$1" svt open "$f" rw mark 0 4K mark 8K 4K memfd cache 64K fill 0 64K M mark 0 8K \
		touch "$WORK/marked.$1" wait "$WORK/go.$1" \
		unmark 0 8K expect 8K 56K M open "$f" rw unmark 0 4K unmark 8K 4K expect 4K 4K A \
		expect 12K 52K A
	wait_file "$WORK/marked.$1"
}

# ---- 1. low memory: the daemon purges an idle program's cache -------------------------
new_region
idle 1
bg d1 env VOLATILE_MIN_AVAILABLE=1T "$VOLATILE_CMD" daemon --foreground
wait_match d1 err '^volatile daemon: purged '
# the oldest first, all of them: memory cannot get above 1T
wait_match d1 err '^volatile daemon: purged 3 ranges, 16384 bytes: (memory|cgroup) [0-9]+ bytes available < 1099511627776$'
grep -qxF "volatile daemon: watching region $VOLATILE_REGION: purging when available memory < 1099511627776 bytes, tmpfs free < 0 (off)" \
	"$WORK/d1.err" || { show d1; fail "no 'watching region' line"; }
touch "$WORK/go.1"
wait_bg idle1
[ "$rc" -eq 0 ] || { show idle1; fail "the idle program: exit status $rc"; }
expect_line idle1 "unmark 0 8K = 1"
expect_line idle1 "unmark 0 4K = 1"
expect_line idle1 "unmark 8K 4K = 1"

# ---- 2. one daemon per region ------------------------------------------------------------
run d2 vol daemon --foreground
[ "$rc" -eq 2 ] || { show d2; fail "a second daemon: exit status $rc, want 2"; }
[ "$(wc -l <"$WORK/d2.err")" -eq 1 ] || { show d2; fail "a second daemon: want one line on stderr"; }
grep -qxF "volatile: daemon: already running for region $VOLATILE_REGION" "$WORK/d2.err" ||
	{ show d2; fail "a second daemon: not the expected message"; }

# ---- 3. SIGTERM: a clean exit, status 0 ----------------------------------------------------
eval "d1pid=\$BG_d1"
kill -TERM "$d1pid"
wait_bg d1
[ "$rc" -eq 0 ] || { show d1; fail "daemon on SIGTERM: exit status $rc, want 0"; }
[ "$(tail -n 1 "$WORK/d1.err")" = "volatile daemon: exiting on a signal" ] || { show d1; fail "no last line 'exiting on a signal'"; }
[ ! -s "$WORK/d1.out" ] || { show d1; fail "the daemon wrote to stdout"; }
# every line it logged is one of its kinds
if grep -vE '^volatile daemon: (purged [0-9]+ ranges?, [0-9]+ bytes: .*|watching region .*|cgroup v[12] .*|PSI trigger .*|no PSI.*|exiting on a signal|forgot the records of .*|VOLATILE_[A-Z0-9_]+=.*: ignored)$' \
	"$WORK/d1.err" >"$WORK/d1.other"; then
	cat "$WORK/d1.other" >&2
	fail "the daemon logged lines of no known kind"
fi

# ---- 4. plenty of memory: the daemon leaves the cache alone ----------------------------------
new_region
idle 4
bg d4 env VOLATILE_MIN_AVAILABLE=1M "$VOLATILE_CMD" daemon --foreground --interval 10
wait_match d4 err '^volatile daemon: watching region '
# 1.5 s: a poll or two (memory is far above 1M; daemon-sleeps.sh counts them)
sleep 1.5
touch "$WORK/go.4"
wait_bg idle4
[ "$rc" -eq 0 ] || { show idle4; fail "the idle program: exit status $rc"; }
expect_line idle4 "unmark 0 8K = 0"
expect_line idle4 "unmark 0 4K = 0"
expect_line idle4 "unmark 8K 4K = 0"
grep -q '^volatile daemon: purged' "$WORK/d4.err" && { show d4; fail "the daemon purged with plenty of memory"; }
eval "kill -TERM \$BG_d4"
wait_bg d4
[ "$rc" -eq 0 ] || { show d4; fail "daemon on SIGTERM: exit status $rc"; }

# ---- 5. detached (the default): it returns at once, keeps working, logs nothing here --------------
new_region
idle 5
run d5 env VOLATILE_MIN_AVAILABLE=1T "$VOLATILE_CMD" daemon
[ "$rc" -eq 0 ] || { show d5; fail "volatile daemon (detached): exit status $rc"; }
[ ! -s "$WORK/d5.out" ] && [ ! -s "$WORK/d5.err" ] || { show d5; fail "the detached daemon printed"; }
# its lock file holds its pid (first line), written before the command returned
lock=$VOLATILE_REGION.daemon
dpid=$(head -n 1 "$lock")
case $dpid in
'' | *[!0-9]*) fail "$lock does not hold a pid: '$dpid'" ;;
esac
BG_PIDS="$BG_PIDS $dpid"
[ "$(readlink "/proc/$dpid/exe")" = "$(readlink -f "$VOLATILE_CMD")" ] ||
	[ "$(readlink "/proc/$dpid/exe")" = "$(readlink -f "$VL_TOP_BUILDDIR/src/.libs/volatile")" ] ||
	fail "pid $dpid from $lock is not a volatile daemon ($(readlink "/proc/$dpid/exe"))"
run d5b vol daemon
[ "$rc" -eq 2 ] || { show d5b; fail "a second detached daemon: exit status $rc, want 2"; }
# it purges the idle program's cache
wait_until -s st5 30 "the detached daemon did not purge" \
	'run st5 vol status; grep -q "^ranges:   3 (3 purged)\$" "$WORK/st5.out"'
touch "$WORK/go.5"
wait_bg idle5
expect_line idle5 "unmark 0 8K = 1"
kill -TERM "$dpid"
wait_until 30 "the detached daemon did not exit on SIGTERM" '! kill -0 "$dpid" 2>/dev/null'

# ---- 6. bad usage: one line, exit status 2 ------------------------------------------------------
for args in "--interval 0" "--interval 99999999" "--cgroup $WORK" "--cgroup $WORK/none" "now" "--bogus"; do
	# word splitting of $args is intended
	# shellcheck disable=SC2086
	run bad vol daemon --foreground $args
	[ "$rc" -eq 2 ] || { show bad; fail "volatile daemon $args: exit status $rc, want 2"; }
	[ "$(wc -l <"$WORK/bad.err")" -eq 1 ] && grep -q '^volatile: ' "$WORK/bad.err" ||
		{ show bad; fail "volatile daemon $args: want one line 'volatile: ...'"; }
done

# ---- 7. a value of a variable it reads that the library ignores (a typo in the unit's
# Environment= drop-in): the daemon says so in its log, before the thresholds it uses ----
new_region
bg d7 env VOLATILE_MIN_AVAILABLE=200% "$VOLATILE_CMD" daemon --foreground
wait_match d7 err '^volatile daemon: watching region '
grep -qxF "volatile daemon: VOLATILE_MIN_AVAILABLE=200% is neither a size nor a percentage (0-100%): ignored" \
	"$WORK/d7.err" || { show d7; fail "a bad VOLATILE_MIN_AVAILABLE: not named in the daemon's log"; }
grep -qF "purging when available memory < 10%," "$WORK/d7.err" || { show d7; fail "a bad VOLATILE_MIN_AVAILABLE: not the default 10%"; }
eval "kill -TERM \$BG_d7"
wait_bg d7
[ "$rc" -eq 0 ] || { show d7; fail "daemon on SIGTERM: exit status $rc"; }
exit 0
