#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile run` execs CMD in its own place, its supervisor a process of
# its own (DESIGN 8, 21; the contract's section 10). To whoever started
# run, nothing changes: the pid it started is CMD's, which exits with its
# own status or dies of its own signal; signals sent to that pid (TERM,
# USR1, HUP) reach CMD; CMD's stdin, stdout, stderr, working directory and
# environment are its own.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_seccomp
need_python

# ---- CMD is run: its parent is whoever started run ----------------------------------
run tree vrun -- sh -c 'echo "$$ $PPID"; cat "/proc/$PPID/comm"'
[ "$rc" -eq 0 ] || { show tree; fail "tree: exit status $rc"; }
parent=$(sed -n 2p "$WORK/tree.out")
[ "$parent" = timeout ] || { show tree; fail "CMD's parent is '$parent', not timeout, which started run"; }

# ---- exit status, death by signal (as its parent sees it: waitpid) -------------------------
# status CMD...: how `volatile run -- CMD...` ended, as Python's
# subprocess says: N (exit N) or -SIG (killed by SIG)
status() {
	timeout "$VL_TIMEOUT" "$PYTHON" -c '
import subprocess, sys
print(subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode)' \
		"$VOLATILE_CMD" run -- "$@"
}
for want in 0 1 3 77 255; do
	got=$(status sh -c "exit $want")
	expect_eq "exit $want" "$got" "$want"
done
# Under a sanitizer build, CMD carries the sanitizer's runtime in with the
# preloaded library, whose handler turns a SIGSEGV into a report and exit 1
# before any signal reaches run: those two are CMD's then, not run's.
case ${VL_SANITIZE:-} in
address | thread) fatal_sigs= ;;
*) fatal_sigs="SEGV ABRT" ;;
esac
for sig in TERM KILL INT HUP USR1 $fatal_sigs; do
	num=$("$PYTHON" -c 'import signal, sys; print(int(getattr(signal, "SIG" + sys.argv[1])))' "$sig")
	got=$(status sh -c "kill -$sig \$\$" 2>/dev/null)
	expect_eq "CMD killed by SIG$sig" "$got" "-$num"
done
# as sh sees it: 128 + the signal
vrun -- sh -c 'kill -TERM $$'
rc=$?
expect_eq "sh's \$? for CMD killed by SIGTERM" "$rc" 143
# a static CMD too
need_static
got=$(status "$VT_STATIC" memfd m 4K mark 0 4K open /nonexistent r expect 0 1 x)
expect_eq "a static CMD that fails a check" "$got" 1

# ---- signals sent to the pid that was run's reach CMD ---------------------------------
bg sig timeout 120 "$VOLATILE_CMD" run -- sh -c '
	trap "echo USR1 >>\"$WORK/sigs\"" USR1
	trap "echo HUP >>\"$WORK/sigs\"" HUP
	trap "echo TERM >>\"$WORK/sigs\"; exit 7" TERM
	echo "$PPID $$" >"$WORK/runpid.tmp" && mv "$WORK/runpid.tmp" "$WORK/runpid"
	i=0; while [ $i -lt 5000 ]; do sleep 0.02; i=$((i + 1)); done'
wait_file "$WORK/runpid"
read -r parent runpid <"$WORK/runpid"
if [ "$parent" != "$BG_sig" ]; then
	kill -TERM "$runpid"
	fail "CMD's parent is $parent, not the timeout ($BG_sig) that started run: run is not CMD"
fi
kill -USR1 "$runpid"
wait_until 30 "SIGUSR1 sent to the run process did not reach CMD" 'grep -qx USR1 "$WORK/sigs" 2>/dev/null'
kill -HUP "$runpid"
wait_until 30 "SIGHUP sent to the run process did not reach CMD" 'grep -qx HUP "$WORK/sigs" 2>/dev/null'
kill -TERM "$runpid"
wait_bg sig
expect_eq "run's exit status after CMD caught SIGTERM and exited 7" "$rc" 7
expect_eq "the signals CMD caught" "$(tr '\n' ' ' <"$WORK/sigs")" "USR1 HUP TERM "

# ---- CMD's stdin, stdout, stderr, directory, environment, fds -------------------------
# the same as without run: no fd of run's (the listener) left open in CMD
mkdir "$WORK/dir" || fail "mkdir"
io='cat; pwd; echo "$FOO"; echo err >&2; echo $(ls /proc/self/fd | sort -n)'
for how in bare run; do
	(
		cd "$WORK/dir" && FOO=bar && export FOO
		if [ "$how" = bare ]; then
			echo in | timeout "$VL_TIMEOUT" sh -c "$io"
		else
			echo in | vrun -- sh -c "$io"
		fi
	) >"$WORK/io-$how.out" 2>"$WORK/io-$how.err"
	[ "$?" -eq 0 ] || { show "io-$how"; fail "io-$how: exit status not 0"; }
done
same io-bare io-run "CMD's stdin, stdout, directory, environment or fds differ under run"
expect_line io-run bar
cmp -s "$WORK/io-bare.err" "$WORK/io-run.err" || { show io-run; fail "CMD's stderr differs under run"; }
exit 0
