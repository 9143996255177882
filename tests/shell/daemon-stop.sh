#!/bin/sh
# SPDX-License-Identifier: MIT
# Which daemons serve the region (DESIGN 8): `volatile status` lists each
# (pid, since, last wake-up; "none" otherwise), never from a pid taken on
# trust: a dead pid, or a live process that does not hold the daemon's
# lock, is no daemon. `volatile daemon --stop` stops the region's daemon
# and returns once it is gone (exit 0), and exits 0 too when none ran, as
# `systemctl stop` does.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

new_region
lock=$VOLATILE_REGION.daemon

no_daemon() {
	status_json "$1-json"
	[ "$(jq_py "$1-json" 'd["daemons"]')" = "[]" ] || { show "$1-json"; fail "$2: status --json lists a daemon"; }
	ok "$1" vol status
	grep -q '^daemon:   none ' "$WORK/$1.out" || { show "$1"; fail "$2: status does not say 'daemon:   none'"; }
}

# ---- 1. none: status says so, --stop has nothing to do (exit 0) ----------------------------
no_daemon st1 "no daemon ever"
ok stop1 vol daemon --stop
expect_line stop1 "no daemon serves region $VOLATILE_REGION"

# ---- 2. a detached daemon: listed with its pid, since when, its last wake-up -----------------
before=$(date +%s)
ok d2 vol daemon
dpid=$(head -n 1 "$lock")
BG_PIDS="$BG_PIDS $dpid"
status_json st2-json
[ "$(jq_py st2-json 'len(d["daemons"])')" = 1 ] || { show st2-json; fail "status --json: not one daemon"; }
[ "$(jq_py st2-json 'd["daemons"][0]["pid"]')" = "$dpid" ] || { show st2-json; fail "status --json: not pid $dpid"; }
[ "$(jq_py st2-json 'd["daemons"][0]["kind"]')" = user ] || { show st2-json; fail "status --json: not the user's"; }
since=$(jq_py st2-json 'd["daemons"][0]["since"]')
[ "$since" -ge "$before" ] && [ "$since" -le "$(date +%s)" ] ||
	{ show st2-json; fail "status --json: since $since, not between $before and now"; }
# it wakes once a second at most idle: its last wake-up is recent, and moves
woke1=$(jq_py st2-json 'd["daemons"][0]["woke_ago_ms"]')
[ "$woke1" -lt 10000 ] || { show st2-json; fail "status --json: last wake-up $woke1 ms ago"; }
mtime1=$(stat -c %Y.%y "$lock")
wait_until 10 "the daemon's last wake-up did not move in 10 s" \
	'[ "$(stat -c %Y.%y "$lock")" != "$mtime1" ]'
ok st2 vol status
grep -qE "^daemon:   pid $dpid \(the user's\), since [0-9-]+ [0-9:]+ \(up [0-9.]+ (s|min)\), last woke [0-9.]+ s ago$" \
	"$WORK/st2.out" || { show st2; fail "status: no daemon line for pid $dpid"; }

# ---- 3. --stop: it is gone when the command returns; exit 0 ---------------------------------
ok stop3 vol daemon --stop
expect_line stop3 "stopped the daemon of region $VOLATILE_REGION (pid $dpid)"
# gone: no such process, or a zombie its reaper (init, here maybe none) has not taken yet
state=$(sed 's/.*) //' "/proc/$dpid/stat" 2>/dev/null | cut -d' ' -f1)
[ -z "$state" ] || [ "$state" = Z ] || fail "daemon pid $dpid still there (state $state) after --stop returned"
no_daemon st3 "after --stop"

# ---- 4. never a pid on trust: dead, or alive without the lock ---------------------------------
# the file stays, naming the dead daemon
[ "$(head -n 1 "$lock")" = "$dpid" ] || fail "$lock no longer names $dpid"
no_daemon st4a "a dead pid in $lock"
# a live process of ours that holds the file open, without its lock
bg holder sh -c 'echo ready; exec sleep 300' 9<"$lock"
wait_match holder out ready
eval "hpid=\$BG_holder"
printf '%s\n%s\n' "$hpid" "$(date +%s)" >"$lock"
no_daemon st4b "a live pid holding $lock without its lock"
ok stop4 vol daemon --stop
expect_line stop4 "no daemon serves region $VOLATILE_REGION"
kill -0 "$hpid" 2>/dev/null || fail "--stop signalled pid $hpid, which is no daemon"
kill "$hpid"

# ---- 5. a foreground daemon: --stop ends it as SIGTERM does, exit 0 -----------------------------
bg d5 vol daemon --foreground
wait_match d5 err '^volatile daemon: watching region '
ok stop5 vol daemon --stop
wait_bg d5
[ "$rc" -eq 0 ] || { show d5; fail "the daemon stopped by --stop: exit status $rc"; }
[ "$(tail -n 1 "$WORK/d5.err")" = "volatile daemon: exiting on a signal" ] || { show d5; fail "no last line 'exiting on a signal'"; }

# ---- 7. its file removed (a cleaner of /dev/shm, an rm): made again at the next wake-up, ----
# so a second daemon cannot start beside it, status lists it and --stop stops it
bg d7 vol daemon --foreground
wait_match d7 err '^volatile daemon: watching region '
d7pid=$(head -n 1 "$lock")
rm -f "$lock"
wait_until -s d7 10 "the daemon did not make its removed $lock again in 10 s" \
	'[ "$(head -n 1 "$lock" 2>/dev/null)" = "$d7pid" ]'
run d7b vol daemon --foreground
[ "$rc" -eq 2 ] && grep -q "already running for region" "$WORK/d7b.err" ||
	{ show d7b; fail "a second daemon started beside one whose file was removed: exit status $rc"; }
ok stop7 vol daemon --stop
expect_line stop7 "stopped the daemon of region $VOLATILE_REGION (pid $d7pid)"
wait_bg d7
no_daemon st7 "after --stop of a daemon whose file was removed"

# ---- 6. --stop takes no other option -----------------------------------------------------------
run bad vol daemon --stop --foreground
[ "$rc" -eq 2 ] && [ "$(wc -l <"$WORK/bad.err")" -eq 1 ] || { show bad; fail "daemon --stop --foreground: exit status $rc, want 2 and one line"; }
exit 0
