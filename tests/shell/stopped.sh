#!/bin/sh
# SPDX-License-Identifier: MIT
# A process stopped at any instant delays only operations on the files it
# was changing (DESIGN 11, 12, 18). A marker, A (helpers/
# marker loop, under the fault-injecting library), marks and unmarks ranges
# of its own files round and round, and now and then makes a new file, whose
# first MARK makes its record under the region's lock: so it is sometimes
# inside the region-wide sections too. The test SIGSTOPs A at 200 random
# instants, a few ms apart, and each time, while A is stopped:
#   - B (helpers/marker probe: one process all along, so that its attach is
#     not counted) MARKs and UNMARKs 16K of its own file, whose record it
#     made at its start, and times the two calls: each time under 100 ms,
#     both returning 0 (a slow answer is asked again, three times at most:
#     a loaded machine may leave B without a CPU for that long). B makes no record while A is stopped: making one
#     takes the region's lock (the table of files and its index), which A
#     may hold, stopped, in the middle of making its own; B would then wait
#     VOLATILE_LOCK_WAIT and fail with EAGAIN, as the contract allows (the
#     table is what A was changing), not finish at once;
#   - at every 20th instant, `volatile status` (text and --json in turn),
#     timed by B: under 1 s, exit status 0, its output whole (valid JSON),
#     and a file A holds the lock of (or the region's lock) listed as not
#     read, with A's pid (lockword says what A holds at each instant).
# Then A is continued. Random instants rarely find A inside a lock (it
# spends most of its time in system calls around them), so four more
# instants are A stopping itself at named steps (VL_STEP): twice inside the
# region's lock while it makes a record ("file_create: in the table"), twice
# inside its file's lock ("unmark: tree changed, not committed"); each with
# B's MARK and UNMARK and a status.
# At the end A checks its own: every MARK said 0, every UNMARK 0 (nothing
# purges here) and every file's bytes are intact (THE INVARIANT); B checks
# its file's bytes. The log, $WORK/instants.log, has a line per instant:
# what A held, B's time in us, status's.
#
# VL_STOPS=N (200) instants, VL_SEED=S the seed of their spacing (printed).
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

need_fault_lib
MARKER=$VL_TOP_BUILDDIR/tests/helpers/marker
LOCKWORD=$VL_TOP_BUILDDIR/tests/helpers/lockword
[ -x "$MARKER" ] && [ -x "$LOCKWORD" ] || fail "tests/helpers/marker, lockword are not built (make check builds them)"

STOPS=${VL_STOPS:-200}
SEED=${VL_SEED:-$(($$ % 100000))}
OP_MAX_US=100000     # B's MARK + UNMARK
STATUS_MAX_US=1000000 # volatile status, its process start included
STATUS_EVERY=20
# A makes a new file every EVERY of its iterations (some 100,000 to 200,000
# a second here): a few records a second, some 30 in the whole run
EVERY=20000
STEP_REGION="file_create: in the table"
STEP_FILE="unmark: tree changed, not committed"
say "$STOPS instants, seed $SEED"

new_region
mkdir "$WORK/a" && mkfifo "$WORK/b.in" "$WORK/b.pipe" || fail "cannot make $WORK/a, fifos"

# B first: its record is made before anything is stopped
MARKER_VOLATILE=$VOLATILE_CMD LD_PRELOAD=$VOLATILE_LIBRARY timeout 300 "$MARKER" probe "$WORK/bfile" \
	<"$WORK/b.in" >"$WORK/b.pipe" 2>"$WORK/b.err" &
BG_PIDS="$BG_PIDS $!"
exec 3>"$WORK/b.in" 4<"$WORK/b.pipe"
read -r line <&4
[ "$line" = ready ] || { cat "$WORK/b.err" >&2; fail "B: '$line', not ready"; }

bg a env LD_PRELOAD="$FAULT_LIB" MARKER_STOP_REGION="$STEP_REGION" MARKER_STOP_FILE="$STEP_FILE" \
	timeout 300 "$MARKER" loop "$WORK/a" "$EVERY"
wait_line a ready
apid=$(sed -n 's/^pid = //p' "$WORK/a.out")

# ask B: one line, one answer
ask() {
	echo "$1" >&3
	answer=
	read -r answer <&4 || answer="(B is gone: $(cat "$WORK/b.err"))"
}

# slow MAX ANSWER...: ANSWER ("op US 0 0", "status US 0") says the call
# succeeded but took MAX us or more
slow() {
	_max=$1
	shift
	case $1 in
	op) [ "$#" -eq 4 ] && [ "$3" = 0 ] && [ "$4" = 0 ] && [ "$2" -ge "$_max" ] ;;
	status) [ "$#" -eq 3 ] && [ "$3" = 0 ] && [ "$2" -ge "$_max" ] ;;
	*) false ;;
	esac
}

# ask_timed MAX QUESTION: ask B; an answer that is right but slow (a
# loaded machine gave B no CPU for a while: under make -j6 check beside
# busy loops a MARK and UNMARK took over 100 ms) is asked again, A still
# stopped, three times at most: a call that waits for what A holds is
# slow every time (or fails), and the last answer is the one judged
ask_timed() {
	_try=1
	ask "$2"
	# shellcheck disable=SC2086 # the answer's words
	while [ "$_try" -lt 3 ] && slow "$1" $answer; do
		say "instant $_i: '$answer' over $1 us (try $_try): once more"
		_try=$((_try + 1))
		ask "$2"
	done
}

# one instant, A stopped: B's MARK and UNMARK, and maybe a status
# (instant I, status MODE text|json|none). A line in instants.log:
#   I MODE OP-US MARK UNMARK STATUS-US STATUS-EXIT held=WHAT A HELD
# (- for what was not asked, or not answered).
instant() {
	_i=$1 _mode=$2
	ask_timed "$OP_MAX_US" "op $apid"
	_op=$answer
	_held=$("$LOCKWORD" held "$apid" | sed 's/^held [0-9]* = //')
	_st=
	case $_mode in
	text) ask_timed "$STATUS_MAX_US" "status $apid $WORK/st.$_i" && _st=$answer ;;
	json) ask_timed "$STATUS_MAX_US" "status $apid $WORK/st.$_i --json" && _st=$answer ;;
	esac
	kill -CONT "$apid"
	# shellcheck disable=SC2086 # the answers' words
	set -- $_op - - - -
	[ "$1" = op ] && _o="$2 $3 $4" || _o="- - -"
	# shellcheck disable=SC2086
	set -- $_st - - -
	[ "$1" = status ] && _s="$2 $3" || _s="- -"
	echo "$_i $_mode $_o $_s held=$_held" >>"$WORK/instants.log"
	# shellcheck disable=SC2086
	set -- $_o $_s
	[ "$2" = 0 ] && [ "$3" = 0 ] ||
		fail "instant $_i: A stopped holding [$_held]: B's MARK and UNMARK: '$_op' (want 'op US 0 0')"
	[ "$1" -lt "$OP_MAX_US" ] ||
		fail "instant $_i: A stopped holding [$_held]: B's MARK and UNMARK took $1 us"
	[ "$_mode" = none ] && return
	[ "$5" = 0 ] ||
		fail "instant $_i: A stopped holding [$_held]: volatile status: '$_st' (want 'status US 0')"
	[ "$4" -lt "$STATUS_MAX_US" ] ||
		fail "instant $_i: A stopped holding [$_held]: volatile status took $4 us"
}

awk -v seed="$SEED" -v n="$STOPS" 'BEGIN {
	srand(seed)
	for (i = 1; i <= n; i++) printf "%d %.4f\n", i, 0.001 + rand() * 0.004
}' >"$WORK/instants"
: >"$WORK/instants.log"
mode=json
while read -r i pause; do
	sleep "$pause"
	kill -STOP "$apid" || fail "A (pid $apid) is gone: $(cat "$WORK/a.err")"
	m=none
	if [ $((i % STATUS_EVERY)) -eq 0 ]; then
		[ "$mode" = text ] && mode=json || mode=text
		m=$mode
	fi
	instant "$i" "$m"
done <"$WORK/instants"

# A stops itself inside the region's lock (making a record), inside its file's lock
n=$STOPS
for sig in USR1 USR1 USR2 USR2; do
	n=$((n + 1))
	kill -"$sig" "$apid"
	[ "$mode" = text ] && mode=json || mode=text
	instant "$n" "$mode"
	case $sig in
	USR1) want='region' ;;
	USR2) want='file ' ;;
	esac
	tail -1 "$WORK/instants.log" | grep -q "held=$want" ||
		fail "instant $n: A stopped at a named step should hold the $want lock: $(tail -1 "$WORK/instants.log")"
done

ask check
[ "$answer" = "check ok" ] || fail "B: '$answer' (its file's bytes changed)"
exec 3>&- 4<&-
kill -TERM "$apid"
wait_bg a
[ "$rc" -eq 0 ] || { show a; fail "A: exit status $rc"; }
grep -q '^loop .* selfstops=4 errors=0$' "$WORK/a.out" || { show a; fail "A: $(tail -1 "$WORK/a.out")"; }

# what status printed, with what A held at that instant
awk '$2 != "none"' "$WORK/instants.log" | while read -r i mode _ _ _ _ _ held; do
	held=${held#held=}
	out=$WORK/st.$i
	if [ "$mode" = text ]; then
		head -1 "$out" | grep -q '^region: ' && grep -q '^files: ' "$out" ||
			{ cat "$out" >&2; fail "instant $i: volatile status printed no region, no files"; }
		unread=$(grep -c "^file not read: its lock is held by pid $apid," "$out")
		others=$(grep -c '^file not read' "$out")
	else
		"$PYTHON" -m json.tool "$out" >/dev/null 2>&1 ||
			{ cat "$out" >&2; fail "instant $i: volatile status --json is not valid JSON"; }
		# shellcheck disable=SC2046
		set -- $("$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
u = [f for f in d["file_list"] if f["unread"]]
print(len([f for f in u if f["locked_by"] == int(sys.argv[2])]), len(u))
' "$out" "$apid") || fail "instant $i: cannot read $out"
		unread=$1 others=$2
	fi
	# status reads with no lock: only a file whose lock A keeps is not read
	# (a record A is making or freeing, "unlisted N", is not LIVE: status
	# lists no such record, read or not; one whose vers A had not yet made
	# odd, or had made even again, "settled N", is whole: status reads it)
	case $held in
	*file*)
		[ "$unread" -ge 1 ] && [ "$unread" -eq "$others" ] ||
			{ cat "$out" >&2; fail "instant $i: A held [$held]: status does not name pid $apid, alone"; } ;;
	*)
		[ "$others" -eq 0 ] ||
			{ cat "$out" >&2; fail "instant $i: A held [$held], no file lock, yet status read not every file"; } ;;
	esac
done || exit 1

# the numbers: B's times by what A held, and status's
awk -v stops="$STOPS" '{
	h = $0; sub(/^.* held=/, "", h); gsub(/file [0-9]+/, "file", h); gsub(/unlisted [0-9]+/, "unlisted", h)
	n++; t[n] = $3; if ($3 > max) max = $3
	cnt[h]++; if ($3 > hmax[h]) hmax[h] = $3; if ($1 > stops) named[h]++
	if ($2 != "none") { sn++; if ($6 > smax) smax = $6; st = st " " int($6 / 1000) }
} END {
	for (i = 2; i <= n; i++) { v = t[i]; for (j = i - 1; j >= 1 && t[j] > v; j--) t[j + 1] = t[j]; t[j + 1] = v }
	printf "B MARK+UNMARK, %d instants: median %d us, 90%% %d us, 99%% %d us, max %d us\n",
		n, t[int(n * 0.5 + 0.5)], t[int(n * 0.9 + 0.5)], t[int(n * 0.99 + 0.5)], max
	for (h in cnt)
		printf "  A holding %s: %d instants (%d at a named step), B max %d us\n",
			h, cnt[h], named[h], hmax[h]
	printf "volatile status, %d runs: max %d ms; each (ms):%s\n", sn, smax / 1000, st
}' "$WORK/instants.log" | while read -r l; do say "$l"; done
say "A: $(tail -1 "$WORK/a.out")"
exit 0
