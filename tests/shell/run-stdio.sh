#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile run` started with fds 0, 1 and 2 closed (a daemon's child, a
# cron job, `exec 2>&-`) writes nothing through a descriptor it did not
# open for that purpose (DESIGN 8, 17):
#
# 1. CMD starts with its 0, 1 and 2 closed, as without run;
# 2. run's supervisor (a process of its own, DESIGN 21) holds them on
#    /dev/null while it serves, so no descriptor it opens or takes from a
#    caller (pidfd_getfd) gets one of those numbers: its log (--debug, the
#    library's VOLATILE_DEBUG lines) goes to /dev/null, never into a
#    caller's file;
# 3. a stress: --debug, static callers killed in the middle of their calls
#    (each one freed the pidfd and /proc/TID/ns descriptors run kept for
#    its thread: numbers the next descriptor taken from a caller got) and
#    witnesses, each serving its MARK and UNMARK through a tmpfs file open
#    O_APPEND: a line written through it would grow the file past its 8K,
#    bytes no range ever covered.
#
# (Found by the adversarial pass: the line "libvolatile[N]: unmark fd 2
# [4096, +4096) -> 0" written into a never-marked page of a memfd, 2 runs
# of 4, 20 s each; run's fds 0, 1, 2 were its signalfd, the listener and
# the first caller's pidfd.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_seccomp
need_static
need_prog "$STORM_STATIC" "${VL_CC:-cc} cannot link -static programs here"

# closed CMD...: CMD with fds 0, 1 and 2 closed, fd 9 on $WORK/closed.out
closed() {
	(exec 0<&- 1>&- 2>&- && exec "$@") 9>"$WORK/closed.out"
	rc=$?
}

# ---- 1. CMD's 0, 1, 2: closed as without run --------------------------------------
# (the shell's own descriptors: no redirection of its own is made before)
# shellcheck disable=SC2016 # for the inner sh
LIST='for f in 0 1 2; do if [ -e /proc/$$/fd/$f ]; then echo "fd $f open" >&9; else echo "fd $f closed" >&9; fi; done'
closed sh -c "$LIST"
cp "$WORK/closed.out" "$WORK/bare.out"
expect_out bare <<EOF
fd 0 closed
fd 1 closed
fd 2 closed
EOF
for opt in --debug --no-seccomp; do
	new_region
	closed timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run "$opt" -- sh -c "$LIST"
	[ "$rc" -eq 0 ] || fail "run $opt with 0, 1, 2 closed: exit status $rc"
	cp "$WORK/closed.out" "$WORK/cmd$opt.out"
	expect_out "cmd$opt" <"$WORK/bare.out"
done

# ---- 2. the supervisor's 0, 1, 2: /dev/null while it serves ----------------------
# a served MARK first, so the supervisor holds a caller's pidfd; CMD waits
# for $WORK/go meanwhile
new_region
rm -f "$WORK/go"
TAG=stdio-$$
# shellcheck disable=SC2016 # for the inner sh
(closed env VL_RUN_TAG=$TAG timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run --debug -- sh -c '
	"$1" memfd m 4K mark 0 4K unmark 0 4K >&9
	while [ ! -e "$2" ]; do sleep 0.01; done' sh "$VT_STATIC" "$WORK/go"
	echo "$rc" >"$WORK/closed.rc") &
SV=$(supervisor_of "$TAG")
wait_match closed out '^unmark'
for f in 0 1 2; do echo "supervisor fd $f: $(readlink "/proc/$SV/fd/$f")"; done >"$WORK/svfds.out"
touch "$WORK/go"
wait
rc=$(cat "$WORK/closed.rc")
[ "$rc" -eq 0 ] || fail "run --debug with 0, 1, 2 closed: exit status $rc"
soft expect_out closed <<EOF
memfd m 4K = 0
mark 0 4K = 0
unmark 0 4K = 0
EOF
soft expect_out svfds <<EOF
supervisor fd 0: /dev/null
supervisor fd 1: /dev/null
supervisor fd 2: /dev/null
EOF

# ---- 3. stress: killed callers, witnesses ------------------------------------------
W=$WORK/w
mkdir "$W" || fail "mkdir $W"
SECONDS_=${VL_STDIO_SECONDS:-10}
WITNESSES=4
i=0
args=
while [ "$i" -lt 200 ]; do
	args="$args mark 0 4K unmark 0 4K"
	i=$((i + 1))
done
i=0
while [ "$i" -lt "$WITNESSES" ]; do
	printf '%8192s' '' | tr ' ' w >"$W/$i"
	i=$((i + 1))
done
new_region
# Inside run: witnesses (O_APPEND tmpfs files, 8K of 'w') loop MARK and
# UNMARK of their first page until the time is up, beside a static storm
# whose parent SIGKILLs one of its workers (4 threads each) every few
# milliseconds: the storm checks every UNMARK's 0 against its pages.
# shellcheck disable=SC2016 # for the inner sh
closed timeout $((SECONDS_ * 3 + 60)) "$VOLATILE_CMD" run --debug -- sh -c '
	vt=$1 w=$2 secs=$3 n=$4 args=$5 storm=$6
	end=$(($(date +%s) + secs))
	i=0
	while [ "$i" -lt "$n" ]; do
		(while [ "$(date +%s)" -lt "$end" ]; do
			# word splitting of $args: the commands
			"$vt" open "$w/$i" ra $args >/dev/null 2>&1 || { echo "witness $i failed" >&9; exit 1; }
		done) &
		i=$((i + 1))
	done
	mkdir "$w/storm" && "$storm" "$w/storm" "$secs" 4 4 0 1 </dev/null >&9 2>&9
	wait' sh "$VT_STATIC" "$W" "$SECONDS_" "$WITNESSES" "$args" "$STORM_STATIC"
cp "$WORK/closed.out" "$WORK/stress.out"
[ "$rc" -eq 0 ] || { show stress; fail "stress: exit status $rc"; }
grep -q '^witness' "$WORK/stress.out" && { show stress; fail "stress: a witness failed"; }
# (its exit status wants an UNMARK that said 1: no purger here)
grep -q '^storm: .* kills: .* 0 violations$' "$WORK/stress.out" ||
	{ cat "$WORK/stress.out" >&2; echo "FAIL: stress: the storm's callers were killed, and saw a violation or a hang" >&2; FAILED=1; }
i=0
while [ "$i" -lt "$WITNESSES" ]; do
	size=$(stat -c %s "$W/$i")
	if [ "$size" -ne 8192 ] || [ -n "$(tr -d w <"$W/$i")" ]; then
		echo "---- witness $i: $size bytes; past its 8K:" >&2
		tail -c +8193 "$W/$i" | head -c 600 >&2
		echo >&2
		echo "FAIL: stress: run wrote into witness $i's file ($size bytes, not 8192 bytes of 'w')" >&2
		FAILED=1
	fi
	i=$((i + 1))
done
say "$(tr '\n' ' ' <"$WORK/stress.out")witnesses checked"
exit "$FAILED"
