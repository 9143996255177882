#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile run -- CMD`, its seccomp supervisor on (as by default), is to
# the process that started it CMD itself, as without run (the contract's
# sections 7 and 10; DESIGN 21): each check runs the same program
# directly and under run, and compares what the parent sees.
#
# 1. wait4's status for every exit code 0-255 and every signal 1-64, sent
#    by CMD to itself (kill(getpid()), which glibc's raise() is not for its
#    own 32 and 33), by the parent to the pid it forked, and by another
#    process to the pid CMD says it has (tests/helpers/waitstat.c, sweep);
# 2. abort() with no core size limit (ulimit -c unlimited) in a private
#    directory: the core flag, and a core file written;
# 3. stops (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU, sent as in 1): the parent's
#    wait4(WUNTRACED) sees the stop, then WCONTINUED after a SIGCONT to
#    the pid stopped, then the exit code (the sweep's lines for 19-22);
# 4. the process group the parent made for CMD (setpgid) holds CMD
#    alone, and a signal sent to it is caught once by CMD, 20 times in a
#    row (with another process in the group that forwards it, a second
#    delivery lands only when CMD took the first before it came: a race,
#    lost in 0 to 8 tries of 20 here);
# 5. the pid forked is CMD's getpid(), and CMD's getppid() is the parent;
# 6. wait4's rusage for a CMD touching 64 MiB: maxrss within 1 MiB of the
#    direct run's with the library preloaded as run preloads it (what is
#    left is run's: its peak before the exec; the library's own pages,
#    150-550 KiB here, 2 MiB built with ASan, are the preload's),
#    user+system time at most 50 ms above it (run's own start, ~3 ms
#    here; the rest is a loaded machine's noise, +-5 ms in 64 MiB here);
# 7. a child of CMD's (a static program: no preload) that outlives CMD is
#    served after CMD exited: MARK and UNMARK by the system call say 0;
# 8. $(volatile run -- sh -c 'sleep 30 >/dev/null &') returns at once,
#    while the sleep runs; a CMD that waits for children until ECHILD
#    returns, having reaped what it reaps without run (none);
# 9. while CMD runs, no process but CMD (and its children) and the
#    test's own readers holds CMD's stdin, stdout or stderr (fifos here).
#
# Each difference is one line "N. WHAT: direct: ...; run: ...". A check
# the machine forbids (core dumps, a static program) is said, and the test
# then exits 77 if nothing failed.
. "$(dirname "$0")/lib.sh"

need_cmd
WAITSTAT=$VL_RUN_TOP/tests/helpers/waitstat
VT_STATIC=$VL_RUN_TOP/tests/helpers/vt-static
[ -x "$WAITSTAT" ] || fail "$WAITSTAT is not built (make check builds it)"
supervised || skip "volatile run has no seccomp supervisor here: run would exec CMD itself, and nothing of the supervisor would be checked"

SKIPPED=
differ() {
	printf 'FAIL: %s: %s\n' "$TEST_NAME" "$*" >&2
	FAILED=1
}
not_here() {
	say "not checked: $*"
	SKIPPED="$SKIPPED
$*"
}
# ---- 1, 3. exit codes, signals, stops -------------------------------------------
# (one waitstat each, looping over all 448 cases; the timeout only stops a hang)
timeout 300 "$WAITSTAT" sweep "$VT" >"$WORK/sweep.direct" 2>"$WORK/sweep.direct.err" ||
	{ cat "$WORK/sweep.direct.err" >&2; fail "waitstat sweep (direct) failed"; }
# (`volatile run` itself the parent's child: no timeout in between, as in vol)
timeout 300 "$WAITSTAT" sweep "$VT" "$VOLATILE_CMD" run -- >"$WORK/sweep.run" 2>"$WORK/sweep.run.err" ||
	{ cat "$WORK/sweep.run.err" >&2; fail "waitstat sweep (under run) failed"; }
[ "$(wc -l <"$WORK/sweep.direct")" -eq 448 ] || { cat "$WORK/sweep.direct" >&2; fail "waitstat sweep (direct): not 448 lines"; }
[ "$(wc -l <"$WORK/sweep.run")" -eq 448 ] || { cat "$WORK/sweep.run" >&2; fail "waitstat sweep (under run): not 448 lines"; }
grep -qxF 'signal 32 self: killed by 32' "$WORK/sweep.direct" ||
	{ grep '^signal 32 ' "$WORK/sweep.direct" >&2; fail "signal 32, direct: not a death by 32: the test is wrong"; }
paste -d '\n' "$WORK/sweep.direct" "$WORK/sweep.run" | awk '
	NR % 2 == 1 { d = $0; next }
	d != $0 {
		split(d, w, ": ")
		n = split(w[1], f, " ")
		what = w[1]
		check = 1
		if (f[1] == "signal") {
			who = f[3] == "self" ? "by CMD to itself" : f[3] == "parent" ? "by the parent to the pid forked" : "by another process to CMD'"'"'s pid"
			what = "signal " f[2] " sent " who
			if (f[2] >= 19 && f[2] <= 22)
				check = 3
		}
		r = $0
		sub(/^[^:]*: /, "", r)
		x = d
		sub(/^[^:]*: /, "", x)
		print check ". " what ": direct: " x "; run: " r
	}' >"$WORK/sweep.diff"
if [ -s "$WORK/sweep.diff" ]; then
	while IFS= read -r line; do
		differ "$line"
	done <"$WORK/sweep.diff"
fi

# ---- 2. core dumps ------------------------------------------------------------------
# once_in DIR NAME ARGS...: waitstat once --core ARGS in DIR (no core size
# limit); NAME.out; rc 3 if the hard limit is 0
once_in() {
	_dir=$1 _n=$2
	shift 2
	(cd "$_dir" && exec timeout "$VL_TIMEOUT" "$WAITSTAT" once --core -- "$@") \
		>"$WORK/$_n.out" 2>"$WORK/$_n.err"
	rc=$?
}
status_of() {
	sed -n 's/^status: //p' "$WORK/$1.out"
}
# the files DIR holds, by name
files_in() {
	(cd "$1" && ls -A)
}
pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null)
case $pattern in
'') not_here "2. core dumps: /proc/sys/kernel/core_pattern cannot be read" ;;
'|'*) not_here "2. core dumps: core_pattern is a pipe ($pattern): the kernel writes no core file" ;;
*/*) not_here "2. core dumps: core_pattern ($pattern) is not a plain name in the working directory" ;;
*)
	mkdir "$WORK/core.direct" "$WORK/core.run" || fail "mkdir"
	once_in "$WORK/core.direct" core.direct "$VT" abort
	direct_status=$(status_of core.direct)
	direct_files=$(files_in "$WORK/core.direct")
	if [ "$rc" -eq 3 ]; then
		not_here "2. core dumps: $(cat "$WORK/core.direct.err")"
	elif [ "$rc" -ne 0 ]; then
		show core.direct
		fail "waitstat once (core, direct): exit status $rc"
	elif [ "$direct_status" != "killed by 6 (core dumped)" ] || [ -z "$direct_files" ]; then
		not_here "2. core dumps: none here even without run (abort(): $direct_status; files: ${direct_files:-none}; core_pattern $pattern)"
	else
		once_in "$WORK/core.run" core.run "$VOLATILE_CMD" run -- "$VT" abort
		[ "$rc" -eq 0 ] || { show core.run; fail "waitstat once (core, run): exit status $rc"; }
		run_status=$(status_of core.run)
		run_files=$(files_in "$WORK/core.run")
		if [ "$run_status" != "$direct_status" ] || [ -z "$run_files" ]; then
			differ "2. abort() with no core limit: direct: $direct_status, files: $direct_files; run: $run_status, files: ${run_files:-none}"
		fi
	fi
	rm -rf "$WORK/core.direct" "$WORK/core.run"
	;;
esac

# ---- 4. a signal to CMD's process group: caught once ---------------------------------
# once NAME ARGS...: waitstat once ARGS, NAME.out
once() {
	_n=$1
	shift
	timeout "$VL_TIMEOUT" "$WAITSTAT" once "$@" >"$WORK/$_n.out" 2>"$WORK/$_n.err"
	rc=$?
	[ "$rc" -eq 0 ] || { show "$_n"; fail "waitstat once ($_n): exit status $rc"; }
}
GROUP="--report --pgrp --group USR1 --signal USR2 --"
COUNT="count USR1 count USR2 report 3 await USR2 counted USR1"
# shellcheck disable=SC2086 # words
once group.direct $GROUP "$VT" $COUNT
expect_line group.direct 'counted USR1 = 1'
expect_line group.direct 'group: CMD alone'
i=1
while [ "$i" -le 20 ]; do
	# shellcheck disable=SC2086 # words
	once group.run $GROUP "$VOLATILE_CMD" run -- "$VT" $COUNT
	if [ "$i" -eq 1 ] && ! grep -qxF 'group: CMD alone' "$WORK/group.run.out"; then
		differ "4. the process group the parent made for CMD: direct: CMD alone; run: $(sed -n 's/^group: //p' "$WORK/group.run.out")"
	fi
	if ! grep -qxF 'counted USR1 = 1' "$WORK/group.run.out"; then
		differ "4. SIGUSR1 sent to CMD's process group (then SIGUSR2 to the pid forked): direct: caught once; run: $(grep -E '^counted|^status' "$WORK/group.run.out" | tr '\n' ' ')(try $i of 20)"
		break
	fi
	i=$((i + 1))
done

# ---- 5. the pid ---------------------------------------------------------------------
once pid.direct --report -- "$VT" report 3 hold 3
once pid.run --report -- "$VOLATILE_CMD" run -- "$VT" report 3 hold 3
for what in pid ppid; do
	d=$(sed -n "s/^$what: //p" "$WORK/pid.direct.out")
	r=$(sed -n "s/^$what: //p" "$WORK/pid.run.out")
	[ "$d" = "$r" ] || differ "5. $what: direct: $d; run: $r"
done

# ---- 6. rusage ----------------------------------------------------------------------
once rusage.direct -- env LD_PRELOAD="$VOLATILE_LIBRARY" "$VT" grab 64M 64M 0
once rusage.run -- "$VOLATILE_CMD" run -- "$VT" grab 64M 64M 0
rss_d=$(sed -n 's/^maxrss = \([0-9]*\) KiB$/\1/p' "$WORK/rusage.direct.out")
rss_r=$(sed -n 's/^maxrss = \([0-9]*\) KiB$/\1/p' "$WORK/rusage.run.out")
cpu_d=$(sed -n 's/^cpu = \([0-9]*\) us$/\1/p' "$WORK/rusage.direct.out")
cpu_r=$(sed -n 's/^cpu = \([0-9]*\) us$/\1/p' "$WORK/rusage.run.out")
if [ -z "$rss_d" ] || [ -z "$rss_r" ] || [ -z "$cpu_d" ] || [ -z "$cpu_r" ]; then
	show rusage.direct
	show rusage.run
	fail "no rusage read"
fi
[ "$rss_d" -ge 65536 ] || { show rusage.direct; fail "64 MiB touched, maxrss $rss_d KiB: the test is wrong"; }
apart=$((rss_r - rss_d))
[ "$apart" -lt 0 ] && apart=$((-apart))
[ "$apart" -le 1024 ] ||
	differ "6. maxrss of a CMD touching 64 MiB: direct, preloaded: $rss_d KiB; run: $rss_r KiB (more than 1 MiB apart)"
[ "$cpu_r" -le $((cpu_d + 50000)) ] ||
	differ "6. user+system time of a CMD touching 64 MiB: direct: $cpu_d us; run: $cpu_r us (more than 50 ms above)"
say "6. maxrss $rss_d KiB direct (preloaded), $rss_r KiB under run; cpu $cpu_d us direct, $cpu_r us under run"

# ---- 7. served after CMD's exit -----------------------------------------------------
if [ ! -x "$VT_STATIC" ]; then
	not_here "7. served after CMD's exit: $VT_STATIC was not built (${VL_CC:-cc} cannot link -static programs here)"
else
	new_region
	run served vol run -- "$VT_STATIC" spawn wait "$WORK/go7" memfd m 4K mark 0 4K unmark 0 4K end
	[ "$rc" -eq 0 ] || { show served; fail "served: volatile run -- vt-static spawn ...: exit status $rc"; }
	touch "$WORK/go7"
	wait_match served out '^unmark 0 4K = '
	m=$(sed -n 's/^mark 0 4K = //p' "$WORK/served.out")
	u=$(sed -n 's/^unmark 0 4K = //p' "$WORK/served.out")
	if [ "$m" != 0 ] || [ "$u" != 0 ]; then
		differ "7. a static child of CMD's that outlived CMD, after CMD's exit: MARK by the system call: want 0, run: $m; UNMARK: want 0, run: $u"
	fi
fi

# ---- 8. nothing waits for the supervisor ----------------------------------------------
t0=$(date +%s%N)
# shellcheck disable=SC2016 # for the inner sh
sleeper=$(timeout 60 "$VOLATILE_CMD" run -- sh -c 'sleep 30 >/dev/null & echo $!')
t1=$(date +%s%N)
case $sleeper in
'' | *[!0-9]*) fail "8. volatile run -- sh -c 'sleep 30 >/dev/null & echo \$!' printed '$sleeper', not a pid" ;;
esac
BG_PIDS="$BG_PIDS $sleeper"
ms=$(((t1 - t0) / 1000000))
if [ "$(cat "/proc/$sleeper/comm" 2>/dev/null)" != sleep ]; then
	differ "8. \$(volatile run -- sh -c 'sleep 30 >/dev/null &'): direct: returns at once; run: returned after the background sleep ended ($ms ms)"
elif [ "$ms" -gt 2000 ]; then
	differ "8. \$(volatile run -- sh -c 'sleep 30 >/dev/null &'): direct: returns at once; run: returned after $ms ms (want within 2 s)"
fi
kill "$sleeper" 2>/dev/null
say "8. \$(volatile run -- sh -c 'sleep 30 >/dev/null &') returned after $ms ms"

ok waitall.direct timeout 10 "$VT" waitall
run waitall.run timeout 10 "$VOLATILE_CMD" run -- "$VT" waitall
if [ "$rc" -eq 124 ]; then
	differ "8. a CMD that calls wait() until ECHILD: direct: $(cat "$WORK/waitall.direct.out"); run: still waiting after 10 s"
elif ! cmp -s "$WORK/waitall.direct.out" "$WORK/waitall.run.out" || [ "$rc" -ne 0 ]; then
	differ "8. a CMD that calls wait() until ECHILD: direct: $(cat "$WORK/waitall.direct.out"); run: $(cat "$WORK/waitall.run.out" "$WORK/waitall.run.err") (exit status $rc)"
fi

# ---- 9. who holds CMD's stdin, stdout and stderr -----------------------------------------
mkfifo "$WORK/in9" "$WORK/out9" "$WORK/err9" || fail "mkfifo"
cat "$WORK/out9" >"$WORK/t9.out" &
reader1=$!
cat "$WORK/err9" >"$WORK/t9.err" &
reader2=$!
BG_PIDS="$BG_PIDS $reader1 $reader2"
# a writer, so that CMD's stdin opens; closed once CMD holds it
exec 7<>"$WORK/in9"
"$VOLATILE_CMD" run -- "$VT" pid wait "$WORK/go9" <"$WORK/in9" >"$WORK/out9" 2>"$WORK/err9" 7>&- &
runpid=$!
BG_PIDS="$BG_PIDS $runpid"
wait_match t9 out '^pid = '
exec 7>&-
cmd=$(sed -n 's/^pid = //p' "$WORK/t9.out")
find /proc/[0-9]*/fd -maxdepth 1 \( -lname "$WORK/in9" -o -lname "$WORK/out9" -o -lname "$WORK/err9" \) \
	2>/dev/null >"$WORK/holders9"
grep -q "^/proc/$cmd/fd/1\$" "$WORK/holders9" ||
	{ cat "$WORK/holders9" >&2; fail "9. CMD ($cmd) is not seen holding its stdout: the test is wrong"; }
while IFS= read -r fd; do
	p=${fd#/proc/}
	p=${p%%/*}
	case $p in
	"$cmd" | "$reader1" | "$reader2") continue ;;
	esac
	differ "9. while CMD runs, direct: only CMD and the test's readers hold its stdin/stdout/stderr; run: pid $p ($(cat "/proc/$p/comm" 2>/dev/null || echo gone)) holds ${fd#/proc/"$p"/}, $(readlink "$fd" 2>/dev/null || echo gone)"
done <"$WORK/holders9"
touch "$WORK/go9"
wait "$runpid"
rc=$?
[ "$rc" -eq 0 ] || { show t9; fail "9. volatile run -- vt pid wait: exit status $rc"; }
wait "$reader1" "$reader2"

if [ "$FAILED" -eq 0 ] && [ -n "$SKIPPED" ]; then
	skip "everything else as without run; not checked here:$SKIPPED"
fi
exit "$FAILED"
