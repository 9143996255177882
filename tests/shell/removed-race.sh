#!/bin/sh
# SPDX-License-Identifier: MIT
# An old region's UNMARK against the new region's purge of the same bytes
# (DESIGN 16). The region is removed while an old user
# of it, that nobody else can open it through, has F marked; the new
# region serves once its young period is over, a new process marks F
# there, `volatile purge --all` punches it, and the old user UNMARKs F:
# from the old region, unless its last look at the name was more than a
# second before its change, then in the new one too. Never 0 over zeros.
#
#   a. stopped: the old user stops inside its UNMARK, before the change
#      (VT_STOP_AT "unmark: file locked", its look at the name a moment
#      old), through the young period, the new process's MARK and the
#      purge's punch; then goes on. Its answer must be 1: the bytes are
#      zeros. (With the clock read before the change, as it was, the
#      answer came from the old region: 0.)
#   b. raced: the old user wakes at a random moment, 0-1.5 s after the
#      new process's MARK, and purges start at another, and run until it
#      answered; ROUNDS rounds, three at once.
#   c. the other way: the old user's purge stalls between its look at the
#      name and its punch (its permit held); the new region must wait.
. "$(dirname "$0")/lib.sh"
share_build 4245
need_cmd

FAULT_LIB=${VOLATILE_FAULT_LIBRARY:-$VL_TOP_BUILDDIR/tests/fault/.libs/libvolatile-fault.so}
[ -e "$FAULT_LIB" ] || skip "no fault-injecting library ($FAULT_LIB): make check builds it"
U=4245
[ "$(id -u)" -eq 0 ] || skip "needs root to run as another user (who cannot open map_files)"
command -v setpriv >/dev/null 2>&1 || skip "no setpriv"
setpriv --reuid=$U --regid=$U --clear-groups -- test -x "$VT" ||
	skip "user $U cannot run $VT"
ud=$WORK/u
mkdir "$ud" && chmod 0711 "$WORK" && chown $U:$U "$ud" || fail "cannot make $ud"
ROUNDS=${VL_RACE_ROUNDS:-30}

# as REGION PRELOAD VT-ARGS...
as() {
	_reg=$1
	_lib=$2
	shift 2
	setpriv --reuid=$U --regid=$U --clear-groups -- env VOLATILE_REGION="$_reg" \
		LD_PRELOAD="$_lib" timeout 120 "$VT" "$@"
}
vol_as() {
	_reg=$1
	shift
	setpriv --reuid=$U --regid=$U --clear-groups -- env VOLATILE_REGION="$_reg" \
		timeout "$VL_TIMEOUT" "$VOLATILE_CMD" "$@"
}

# served NAME REGION FILE: mark FILE [0, 64K) in REGION as a new process,
# once the new region serves (30 s at most)
served() {
	_i=0
	while :; do
		run "$1" as "$2" "$VOLATILE_LIBRARY" open "$3" rw mark 0 64K
		grep -qx 'mark 0 64K = -1 ESTALE' "$WORK/$1.out" || break
		_i=$((_i + 1))
		[ "$_i" -le 300 ] || { show "$1"; fail "$1: the new region never served"; }
		sleep 0.1
	done
	expect_line "$1" "mark 0 64K = 0"
}

# judge NAME FILE: NAME's UNMARK said 0 only over intact bytes
judge() {
	if grep -qx 'unmark 0 64K = 0' "$WORK/$1.out"; then
		run "$1-bytes" vt open "$2" r expect 0 64K R
		[ "$rc" -eq 0 ] || { show "$1"; show "$1-bytes"; fail "$1: UNMARK said 0 over zeros"; }
		zeros=$((zeros + 1))
	else
		expect_line "$1" "unmark 0 64K = 1"
		ones=$((ones + 1))
	fi
}

# ---- a. stopped inside the UNMARK, before its change ------------------------------------
for n in 1 2 3; do
	reg=$ud/ra$n
	f=$ud/fa$n
	as "$reg" "$VOLATILE_LIBRARY" open "$f" rwt fill 0 64K R >/dev/null || fail "cannot write $f"
	bg "a$n" setpriv --reuid=$U --regid=$U --clear-groups -- env VOLATILE_REGION="$reg" \
		LD_PRELOAD="$FAULT_LIB" VT_STOP_AT="unmark: file locked" timeout 120 "$VT" \
		pid open "$f" rw mark 0 64K unmark 0 64K
	wait_match "a$n" out '^pid = '
	opid=$(sed -n 's/^pid = //p' "$WORK/a$n.out")
	wait_stopped "a$n" "$opid" "a$n: the old user never stopped inside its UNMARK"
	rm "$reg"
	served "a$n-new" "$reg" "$f"
	run "a$n-purge" vol_as "$reg" purge --all
	[ "$rc" -eq 0 ] || { show "a$n-purge"; fail "a$n: volatile purge: exit status $rc"; }
	ok "a$n-zeros" vt open "$f" r expect 0 64K zero
	kill -CONT "$opid"
	wait_bg "a$n"
	[ "$rc" -eq 0 ] || { show "a$n"; fail "a$n: the old user: exit status $rc"; }
	expect_line "a$n" "unmark 0 64K = 1"
done
say "a: 3 of 3 stopped UNMARKs said 1 over the new region's punch"

# ---- c. an old purge between its look and its punch --------------------------------------
# The old user's budget purge waits in its punching thread, its gate open
# (the permit held, the old region found at its name), before the punch
# (VT_PAUSE_AT: that thread alone stalls, as a preempted one may); the
# region is removed. The new region must not serve while that punch may
# still land: ESTALE past its young period (5 s here); once the old
# purge has punched, it serves, and a new process's UNMARK 0 covers bytes
# that stay intact. (Serving at 2 s, as the young period alone would
# allow, the old punch would land after the new UNMARK's 0.)
reg=$ud/rc
f=$ud/fc
as "$reg" "$VOLATILE_LIBRARY" open "$f" rwt fill 0 64K R >/dev/null || fail "cannot write $f"
bg c setpriv --reuid=$U --regid=$U --clear-groups -- env VOLATILE_REGION="$reg" \
	VOLATILE_BUDGET=64K LD_PRELOAD="$FAULT_LIB" VT_PAUSE_AT="purge: flagged purged, not punched" \
	VT_PAUSE="$ud/c-pause" timeout 120 "$VT" open "$f" rw mark 0 64K memfd m 64K fill 0 64K M \
	mark 0 64K echo over
wait_file "$ud/c-pause.in"
rm "$reg"
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt 5 ]; do
	run c-new as "$reg" "$VOLATILE_LIBRARY" open "$f" rw fill 0 64K N mark 0 64K unmark 0 64K \
		expect 0 64K N
	grep -qx 'mark 0 64K = -1 ESTALE' "$WORK/c-new.out" ||
		{ show c-new; fail "c: the new region served while an old purge was between its look and its punch"; }
	sleep 0.2
done
touch "$ud/c-pause.go"
wait_bg c
[ "$rc" -eq 0 ] || { show c; fail "c: the old user: exit status $rc"; }
expect_line c "over"
i=0
while :; do
	run c-new as "$reg" "$VOLATILE_LIBRARY" open "$f" rw fill 0 64K N mark 0 64K unmark 0 64K \
		expect 0 64K N
	grep -qx 'mark 0 64K = -1 ESTALE' "$WORK/c-new.out" || break
	i=$((i + 1))
	[ "$i" -le 300 ] || { show c-new; fail "c: the new region never served once the old purge was done"; }
	sleep 0.1
done
[ "$rc" -eq 0 ] || { show c-new; fail "c: the new process: exit status $rc"; }
# the old user exited unmoved, its purged range of F with it: the new
# region counts F as forgotten (removed-exit.sh), a false 1 over N
expect_line c-new "unmark 0 64K = 1"
ok c-bytes vt open "$f" r expect 0 64K N
say "c: the new region waited for the old purge's punch, then served"

# ---- b. raced ------------------------------------------------------------------------------
zeros=0
ones=0
# one round: round N (its region, file and names)
round() {
	reg=$ud/rb$1
	f=$ud/fb$1
	as "$reg" "$VOLATILE_LIBRARY" open "$f" rwt fill 0 64K R >/dev/null || fail "cannot write $f"
	# when the old user wakes, and when the purges start, after the new MARK
	set -- "$1" $(awk -v s="$1" 'BEGIN { srand(s * 7919 + '"$$"'); print int(rand() * 1500), rand() * 1.5 }')
	ms=$2
	pdelay=$3
	bg "b$1" as "$reg" "$VOLATILE_LIBRARY" open "$f" rw mark 0 64K touch "$ud/b$1-ready" \
		wait "$ud/b$1-go" sleep "$ms" unmark 0 64K
	wait_file "$ud/b$1-ready"
	rm "$reg"
	served "b$1-new" "$reg" "$f"
	touch "$ud/b$1-go"
	sleep "$pdelay"
	# purges until the old user answered
	k=0
	while kill -0 "$(eval echo \$BG_b$1)" 2>/dev/null && [ "$k" -lt 200 ]; do
		vol_as "$reg" purge --all >/dev/null 2>&1
		k=$((k + 1))
	done
	wait_bg "b$1"
	[ "$rc" -eq 0 ] || { show "b$1"; fail "b$1: the old user: exit status $rc"; }
	# nothing is volatile of F now: a late purge punches nothing
	vol_as "$reg" purge --all >/dev/null 2>&1
	judge "b$1" "$f"
}
n=1
while [ "$n" -le "$ROUNDS" ]; do
	# three at once, each in a subshell of its own (their counts are told by files)
	for j in 0 1 2; do
		m=$((n + j))
		[ "$m" -le "$ROUNDS" ] || continue
		( round "$m"; echo "$zeros $ones" >"$WORK/count.$m" ) &
	done
	wait
	for j in 0 1 2; do
		m=$((n + j))
		[ "$m" -le "$ROUNDS" ] || continue
		[ -s "$WORK/count.$m" ] || fail "b$m: the round failed"
	done
	n=$((n + 3))
done
z=0
o=0
for m in $(seq 1 "$ROUNDS"); do
	read -r a b <"$WORK/count.$m"
	z=$((z + a))
	o=$((o + b))
done
say "b: $ROUNDS rounds: $o UNMARKs said 1, $z said 0 over intact bytes"
exit 0
