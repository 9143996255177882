#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile status --watch`: the region's totals, memory against
# the threshold, the files with the most volatile bytes and the last purges
# with their reason, redrawn once a second; plain frames when the output is
# not a terminal. The last purges come from the region's log of purges
# (format 6), which `volatile status` and --json show too: who purged, when,
# how much, and why (budget, memory, tmpfs, command, api, ashmem).
. "$(dirname "$0")/lib.sh"

need_cmd
need_python
new_region
f=$WORK/cache
ok mk svt open "$f" rwc truncate 1M mark 0 4K mark 8K 4K mark 16K 4K mark 24K 4K
ok p1 vol purge --bytes 4K

# ---- the log, in the text and the JSON --------------------------------------------
ok st vol status
grep -q '^  *[0-9.]* s ago  command  4.0K in 1 range, by pid [0-9]*$' "$WORK/st.out" ||
	{ show st; fail "status does not show the command's purge"; }
status_json js
expect_eq "the last purge's reason" "$(jq_py js 'd["last_purges"][0]["reason"]')" command
expect_eq "its bytes" "$(jq_py js 'd["last_purges"][0]["bytes"]')" 4096

# a budget purge at a MARK, by the marking process
VOLATILE_BUDGET=8K
export VOLATILE_BUDGET
ok bud svt pid open "$f" rw mark 32K 4K
unset VOLATILE_BUDGET
pid=$(sed -n 's/^pid = //p' "$WORK/bud.out")
status_json js2
expect_eq "a budget's purge" "$(jq_py js2 'd["last_purges"][0]["reason"]')" budget
expect_eq "by the marking process" "$(jq_py js2 'd["last_purges"][0]["pid"]')" "$pid"
expect_eq "the command's before it" "$(jq_py js2 'd["last_purges"][1]["reason"]')" command

# ---- --watch, not on a terminal: frames one after the other -------------------------
# (the tests switch the memory rule off: here it is on, far from its threshold)
ok w env VOLATILE_MIN_AVAILABLE=1% timeout "$VL_TIMEOUT" "$VOLATILE_CMD" status --watch --count 2
[ "$(grep -c '^---- [0-9][0-9]:[0-9][0-9]:[0-9][0-9]$' "$WORK/w.out")" -eq 2 ] ||
	{ show w; fail "--watch --count 2: want two frames, each after a line with the time"; }
expect_line w "files with the most volatile bytes:"
grep -q "  budget   " "$WORK/w.out" || { show w; fail "--watch does not show the budget's purge"; }
grep -q "^memory: .* available, threshold .*: ok$" "$WORK/w.out" ||
	{ show w; fail "--watch does not show memory against the threshold"; }
grep -qF "$f" "$WORK/w.out" || { show w; fail "--watch does not list the file"; }
run bad vol status --watch --json
[ "$rc" -eq 2 ] || fail "--watch --json: exit status $rc, want 2"
# bad --count: exit status 2 and one line, never a watch that does not end
for args in "--watch --count 0" "--watch --count x" "--count 2" "--watch --ranges"; do
	# shellcheck disable=SC2086
	run badc vol status $args
	[ "$rc" -eq 2 ] || { show badc; fail "status $args: exit status $rc, want 2"; }
	[ "$(wc -l <"$WORK/badc.err")" -eq 1 ] || { show badc; fail "status $args: not one line"; }
done
# a reader that goes away (SIGPIPE): --watch ends at its next frame
# (at its second frame, a second after the first: 15 s at most, for a
# loaded machine's process start; one that never ends is ended by timeout)
s0=$(date +%s)
{
	timeout "$VL_TIMEOUT" "$VOLATILE_CMD" status --watch
	echo "$?" >"$WORK/watch.rc"
} | head -n 3 >/dev/null
s1=$(date +%s)
[ "$(cat "$WORK/watch.rc")" != 124 ] || fail "--watch | head -3 did not end"
[ $((s1 - s0)) -le 15 ] || fail "--watch | head -3 did not end within 15 s"

# ---- on a terminal, as a person sees it (tmux) -------------------------------------
command -v tmux >/dev/null 2>&1 || { say "no tmux: the terminal part is not run"; exit 0; }
sess=vltest$$
tmux -L "$sess" new-session -d -s "$sess" -x 120 -y 40 \
	"env VOLATILE_REGION='$VOLATILE_REGION' '$VOLATILE_CMD' status --watch" ||
	fail "tmux cannot start a session here"
trap 'tmux -L "$sess" kill-server 2>/dev/null' EXIT
sleep 1.5
ok p2 vol purge --all
# the frame after the purge shows it, drawn over the last one (frames come
# once a second; 30 s at most, for a loaded machine)
i=0
while [ "$i" -lt 150 ]; do
	tmux -L "$sess" capture-pane -p -t "$sess" >"$WORK/pane.out"
	grep -q '  command  8.0K in 2 ranges' "$WORK/pane.out" && break
	sleep 0.2
	i=$((i + 1))
done
grep -q '  command  8.0K in 2 ranges' "$WORK/pane.out" ||
	{ cat "$WORK/pane.out" >&2; fail "the terminal does not show the purge within 30 s"; }
[ "$(grep -c '^volatile status --watch' "$WORK/pane.out")" -eq 1 ] ||
	{ cat "$WORK/pane.out" >&2; fail "the terminal shows more than one frame: not drawn over"; }
head -n 1 "$WORK/pane.out" | grep -q '^volatile status --watch' ||
	{ cat "$WORK/pane.out" >&2; fail "the frame does not start at the top of the terminal"; }
tmux -L "$sess" send-keys -t "$sess" C-c
# the session ends with --watch: 20 s at most (not a fixed half second,
# which a loaded machine may not give tmux and --watch to get there)
i=0
while tmux -L "$sess" has-session -t "$sess" 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -le 200 ] || fail "Ctrl-C did not end --watch"
	sleep 0.1
done
exit 0
