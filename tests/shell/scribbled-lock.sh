#!/bin/sh
# SPDX-License-Identifier: MIT
# A scribbled lock word (DESIGN 18: a process of the user may scribble on the
# region by mistake; no call waits for ever: a lock not had within a bound
# fails the call with a documented errno, nothing changed; DESIGN 11).
# P marks [0, 16K) and [32K, 48K) of F, all 64K of F being 'F', and exits.
# H, under the fault-injecting library, stops in its MARK of G, holding
# G's lock ("mark: tree changed, not committed"): its token names a live
# slot of a stopped process. helpers/lockword writes into the region file.
#   a. the real thing first: an UNMARK of G fails with EAGAIN after
#      VOLATILE_LOCK_WAIT=300ms. Then H's token is written into F's lock
#      word: an UNMARK of F and a MARK of F by other processes each fail
#      with EAGAIN within 300-600 ms (a slow answer is timed again, three
#      times at most: a loaded machine may take that long to start a
#      process); F's record and its nodes (a digest of
#      all of them but the lock word) and the region's counts are what they
#      were; volatile status (within 1 s, with no lock) reads F, which no
#      one is changing, and lists G as not read, locked by H. The scribble
#      undone, status shows F's two ranges unpurged, and
#      UNMARKs of them say 0 with F's bytes intact.
#   b. junk in F's lock word, F marked again each time: a few chosen words
#      (H's token with the waiters bit: a live holder; H's slot with
#      another generation, slot 0, slot 65535: nobody's; the broken bit)
#      and random words from several seeds. The locker (an UNMARK of F)
#      either takes the lock over from a holder that is nobody alive,
#      repairs F and says 0; or fails: EAGAIN after the bound (a live
#      holder), EUCLEAN at once (a broken lock). Which one is said for each
#      word before it is tried (lock.c). It never takes 1 s (a repair
#      counts the region's totals again, and waits the bound for G's lock
#      there), never hangs, never crashes; a failure changes nothing (the
#      digest); F's and G's bytes are intact throughout, and once the word
#      is undone UNMARKs of F's ranges say 0.
# Then H is continued: its MARK of G says 0, and G's UNMARK 0.
#
# VL_SEEDS="S..." the seeds of the random words (8 of them, printed).
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

need_fault_lib
need_lockword

# every command here takes a second at most: one that hangs fails sooner
VL_TIMEOUT=10
WAIT_MS=300
BOUND_MAX_MS=600   # a failed wait: the bound, and what a process start costs
CALL_MAX_MS=1000   # any call here: the bound once (a repair's count waits for G's lock), and more
SEEDS=${VL_SEEDS:-$(awk -v s=$$ 'BEGIN { srand(s); for (i = 0; i < 8; i++) printf "%d ", int(rand() * 100000) }')}
say "seeds of the random words: $SEEDS"

F=$WORK/F
G=$WORK/G
new_region
mkfile "$F" 64K F
mkfile "$G" 64K G
ok p svt open "$F" rw mark 0 16K mark 32K 16K

bg h env LD_PRELOAD="$FAULT_LIB" VT_STOP_AT="mark: tree changed, not committed" \
	timeout 120 "$VT" pid open "$G" rw mark 0 16K echo over
wait_match h out '^pid = '
hpid=$(sed -n 's/^pid = //p' "$WORK/h.out")
wait_stopped h "$hpid" "H never stopped in its MARK of G"

lw() {
	"$LOCKWORD" "$@" >"$WORK/lw.out" 2>"$WORK/lw.err" || { cat "$WORK/lw.err" >&2; fail "lockword $*"; }
	sed 's/^.* = //' "$WORK/lw.out"
}
sf=$(lw slot "$F")
sg=$(lw slot "$G")
token=$(lw token "$hpid")
case $sf$sg$token in *none*) fail "F's slot $sf, G's slot $sg, H's token $token" ;; esac
expect_eq "what H holds" "$(lw held "$hpid")" "file $sg"

ms_now() {
	date +%s%N | sed 's/......$//'
}

# timed NAME ARGS...: ok NAME svte VOLATILE_LOCK_WAIT=300ms -- ARGS, timed ($ms)
timed() {
	_t=$(ms_now)
	_tn=$1
	shift
	ok "$_tn" svte VOLATILE_LOCK_WAIT=${WAIT_MS}ms -- "$@"
	ms=$(($(ms_now) - _t))
}

# timed_again NAME LINE ARGS...: timed, and while NAME said LINE (a call
# that changes nothing) but took BOUND_MAX_MS or more, once more, three
# times at most: a loaded machine (make -j6 check beside busy loops, under
# ASan) may take that long to start a process. A call that waits longer
# than the bound is slow every time, and waited fails it.
timed_again() {
	_ta=1
	_tan=$1 _tal=$2
	shift 2
	timed "$_tan" "$@"
	while [ "$_ta" -lt 3 ] && [ "$ms" -ge "$BOUND_MAX_MS" ] &&
		grep -qxF -- "$_tal" "$WORK/$_tan.out"; do
		say "$_tan: '$_tal' in $ms ms (try $_ta): once more"
		_ta=$((_ta + 1))
		timed "$_tan" "$@"
	done
}

# waited WHAT: the last call failed with EAGAIN after the bound, not more
waited() {
	[ "$ms" -ge "$WAIT_MS" ] && [ "$ms" -lt "$BOUND_MAX_MS" ] ||
		fail "$1: EAGAIN after $ms ms (want $WAIT_MS to $BOUND_MAX_MS)"
}

# intact: F is 'F' and G 'G' throughout
intact() {
	ok "$1.f" vt open "$F" r expect 0 64K F
	ok "$1.g" vt open "$G" r expect 0 64K G
}

# ---- a. a live holder's token ------------------------------------------------------
timed_again ag "unmark 0 16K = -1 EAGAIN" open "$G" rw unmark 0 16K
expect_line ag "unmark 0 16K = -1 EAGAIN"
waited "a, G held by H"
say "a: UNMARK of G, held by H (stopped): EAGAIN in $ms ms"

before=$(lw digest "$sf" counts | tr '\n' ' ')
lw set "$sf" "$token" >/dev/null
timed_again au "unmark 0 16K = -1 EAGAIN" open "$F" rw unmark 0 16K
expect_line au "unmark 0 16K = -1 EAGAIN"
waited "a, UNMARK of F"
say "a: UNMARK of F, H's token scribbled in its lock: EAGAIN in $ms ms"
timed_again am "mark 8K 16K = -1 EAGAIN" open "$F" rw mark 8K 16K
expect_line am "mark 8K 16K = -1 EAGAIN"
waited "a, MARK of F"
say "a: MARK of F, H's token scribbled in its lock: EAGAIN in $ms ms"
expect_eq "a: F's record and nodes, and the counts, after the failed calls" \
	"$(lw digest "$sf" counts | tr '\n' ' ')" "$before"
# status reads and changes nothing: a slow one (a loaded machine) is run
# again, three times at most
_try=0
while :; do
	_try=$((_try + 1))
	_t=$(ms_now)
	ok ast vol status --json
	ms=$(($(ms_now) - _t))
	[ "$ms" -ge "$CALL_MAX_MS" ] && [ "$_try" -lt 3 ] || break
	say "a: volatile status in $ms ms (try $_try): once more"
done
[ "$ms" -lt "$CALL_MAX_MS" ] || fail "a: volatile status took $ms ms"
"$PYTHON" -m json.tool "$WORK/ast.out" >/dev/null || fail "a: volatile status --json is not valid JSON"
# status reads with no lock: F, whose lock word lies but which nobody is
# changing, is read; G, which H was changing when it stopped, is not
expect_eq "a: status's files not read, and by whom" \
	"$(jq_py ast "sorted((f['unread'], f.get('locked_by')) for f in d['file_list'])")" \
	"[[false, null], [true, $hpid]]"
say "a: volatile status in $ms ms: F read, G not read, locked by H"
expect_eq "a: the word left in F's lock" "$(($(lw set "$sf" 0) & 0x3fffffff))" "$((token))"
status_json ast2
expect_eq "a: F's ranges, the scribble undone" \
	"$(jq_py ast2 "[[(r['offset'], r['length'], r['purged']) for r in f['ranges']] for f in d['file_list'] if f['path'] == '$F']")" \
	"[[[0, 16384, false], [32768, 16384, false]]]"
intact a

# ---- b. junk ---------------------------------------------------------------------------
# the word: EAGAIN (H's, live), EUCLEAN (broken) or 0 (anything else: nobody alive)
predict() {
	if [ $(($1 & 0x40000000)) -ne 0 ]; then
		echo EUCLEAN
	elif [ $(($1 & 0x3fffffff)) -eq $((token)) ]; then
		echo EAGAIN
	else
		echo 0
	fi
}

words="$(printf '%#x' $((token | 0x80000000))) \
$(printf '%#x' $(((token & 0xffff) | (((token >> 16) + 1) & 0x3fff) << 16))) 0x10000 0xffff 0x40000000"
for s in $SEEDS; do
	words="$words $(awk -v s="$s" 'BEGIN { srand(s); printf "%#x", int(rand() * 65536) * 65536 + int(rand() * 65536) }')"
done
n=0
for w in $words; do
	n=$((n + 1))
	want=$(predict "$w")
	case $want in
	0) right="unmark 0 16K = 0" slow_ms=$CALL_MAX_MS ;;
	EAGAIN) right="unmark 0 16K = -1 EAGAIN" slow_ms=$BOUND_MAX_MS ;;
	*) right="unmark 0 16K = -1 $want" slow_ms=$CALL_MAX_MS ;;
	esac
	# the UNMARK says what it should but slowly (over the bound it is
	# judged by below: a loaded machine may take that long to start a
	# process): the word is undone, and F marked and the word set again,
	# three times at most. A locker that waits too long is slow every time.
	try=0
	while :; do
		try=$((try + 1))
		ok "b$n.p" svt open "$F" rw mark 0 16K mark 32K 16K
		before=$(lw digest "$sf" counts | tr '\n' ' ')
		lw set "$sf" "${w#0x}" >/dev/null
		_t=$(ms_now)
		run "b$n" svte VOLATILE_LOCK_WAIT=${WAIT_MS}ms -- open "$F" rw unmark 0 16K
		ms=$(($(ms_now) - _t))
		[ "$rc" -eq 0 ] || { show "b$n"; fail "b, word $w: the locker's exit status $rc (a crash, or a hang)"; }
		[ "$try" -lt 3 ] && [ "$ms" -ge "$slow_ms" ] && grep -qxF -- "$right" "$WORK/b$n.out" || break
		say "b: word $w: '$right' in $ms ms (try $try): once more"
		[ "$want" = 0 ] || lw set "$sf" 0 >/dev/null
	done
	[ "$ms" -lt "$CALL_MAX_MS" ] || fail "b, word $w: the UNMARK took $ms ms"
	case $want in
	0)
		expect_line "b$n" "unmark 0 16K = 0"
		expect_eq "b, word $w: F's lock after the repair" "$(lw word "$sf")" 0
		;;
	*)
		expect_line "b$n" "unmark 0 16K = -1 $want"
		[ "$want" = EAGAIN ] && waited "b, word $w"
		expect_eq "b, word $w: F's record and nodes, and the counts, after the failed UNMARK" \
			"$(lw digest "$sf" counts | tr '\n' ' ')" "$before"
		lw set "$sf" 0 >/dev/null
		;;
	esac
	say "b: word $w: $(sed -n 's/^unmark 0 16K = //p' "$WORK/b$n.out") in $ms ms"
	intact "b$n"
	ok "b$n.u" svt open "$F" rw unmark 0 16K unmark 32K 16K
	expect_out "b$n.u" <<EOF
open $F rw = 3
unmark 0 16K = 0
unmark 32K 16K = 0
EOF
done

# ---- H goes on ---------------------------------------------------------------------------
kill -CONT "$hpid"
wait_bg h
[ "$rc" -eq 0 ] || { show h; fail "H: exit status $rc"; }
expect_line h "mark 0 16K = 0"
expect_line h over
ok g svt open "$G" rw unmark 0 16K
expect_line g "unmark 0 16K = 0"
intact end
exit 0
