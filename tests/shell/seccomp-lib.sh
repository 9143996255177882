# SPDX-License-Identifier: MIT
# seccomp-lib.sh - sourced by tests/shell/seccomp*.sh and run-*.sh, after lib.sh.
#
# `volatile run` serves the programs LD_PRELOAD cannot reach (static, musl,
# Go, raw system calls) through a seccomp filter and a supervisor, a process
# of its own, run itself becoming CMD (DESIGN 1, 8, 21; the contract's
# section 10). What these tests get:
#   $VT_STATIC $VT_MUSL $GOFA $STORM_STATIC $NOSECCOMP   the programs
#   need_seccomp     skip unless this machine lets a process install a
#                    seccomp filter with a user-notification listener
#   need_prog PATH WHAT   skip unless PATH was built (WHAT says what is missing)
#   need_static, need_served_static   skip unless a static vt was built (and
#                    run's supervisor serves it here)
#   vrun ARGS...     `volatile run ARGS...` (under timeout)
#   pid_of NAME      the "pid = N" NAME printed
#   ppid_of PID      its parent's pid;  comm_of PID: its name
#   alive PID        it runs (not gone, not a zombie)
#   served NAME      how many "volatile run: served" lines NAME's stderr has
#   like_preload [--debug] NAME RUNNER VT-ARGS...
#                    vt's VT-ARGS through RUNNER (run's supervisor) end as
#                    they do through the preload
#   $FAULTY          the test suite's build of the command, its fault points
#                    live (VOLATILE_FAULT_SYSCALL=WHERE:ERRNO, core/fault.h)
#   hold_file, lock_waited, let_go, file_ranges, gone_caller_parts
#                    a served call held waiting for a file's lock, and the
#                    caller gone meanwhile (below, at their definitions)

need_cmd
VT_STATIC=$VL_TOP_BUILDDIR/tests/helpers/vt-static
VT_MUSL=$VL_TOP_BUILDDIR/tests/helpers/vt-musl
GOFA=$VL_TOP_BUILDDIR/tests/helpers/gofa
STORM_STATIC=$VL_TOP_BUILDDIR/tests/helpers/storm-static
NOSECCOMP=$VL_TOP_BUILDDIR/tests/helpers/noseccomp
[ -x "$NOSECCOMP" ] || fail "$NOSECCOMP is not built (make check builds it)"
FAULTY=$VL_TOP_BUILDDIR/tests/fault/volatile-fault
[ -x "$FAULTY" ] || fail "$FAULTY is not built (make check builds it)"

need_seccomp() {
	grep -q '^Seccomp:' /proc/self/status ||
		skip "this kernel has no seccomp (no Seccomp: line in /proc/self/status)"
	"$NOSECCOMP" --probe >"$WORK/probe.out" 2>&1 ||
		skip "a seccomp filter with a listener cannot be installed here: $(cat "$WORK/probe.out")"
}

need_prog() {
	[ -x "$1" ] || skip "$2: $1 was not built"
}

need_static() {
	need_prog "$VT_STATIC" "$CC_NAME cannot link -static programs here (configure: no libc.a?)"
}

# need_served_static: a static program's calls served by run's supervisor here
need_served_static() {
	need_seccomp
	need_static
	supervised || skip "volatile run has no supervisor here (run --debug says why)"
}
CC_NAME=${VL_CC:-cc}

vrun() {
	timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run "$@"
}

pid_of() {
	_p=$(sed -n 's/^pid = //p' "$WORK/$1.out" | head -n 1)
	case $_p in
	'' | *[!0-9]*) show "$1"; fail "$1 printed no pid" ;;
	esac
	echo "$_p"
}

ppid_of() {
	# the fourth field of /proc/PID/stat, after the parenthesized name
	sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $2 }'
}

# alive PID: PID runs (not gone, not a zombie)
alive() {
	[ -d "/proc/$1" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $1 }')" != Z ]
}

comm_of() {
	cat "/proc/$1/comm" 2>/dev/null
}

served() {
	grep -c '^volatile run: served' "$WORK/$1.err"
}

# normalize NAME: NAME.out without what differs from run to run
# (pipe and socket fd pairs, pids), into NAME.norm
normalize() {
	sed 's/^pipe = .*/pipe = R W/; s/^socket = .*/socket = S S/; s/^pid = .*/pid = N/' \
		"$WORK/$1.out" >"$WORK/$1.norm"
}

# same A B WHY: normalized outputs of A and B are identical
same() {
	normalize "$1"
	normalize "$2"
	if ! diff -u "$WORK/$1.norm" "$WORK/$2.norm" >"$WORK/$1-$2.diff"; then
		echo "---- $1 (-) against $2 (+)" >&2
		cat "$WORK/$1-$2.diff" >&2
		show "$2"
		fail "$3"
	fi
}

# like_preload [--debug] NAME RUNNER VT-ARGS...: the dynamic vt given VT-ARGS
# with the preload (svt), then RUNNER given VT-ARGS (a command that runs a
# static vt under run's supervisor), each in a new region: the same exit
# status and the same output, or both printed and the test failed. RUNNER
# says nothing on stderr (run prints only with --debug) unless --debug says
# it runs run --debug, whose lines are then not compared.
like_preload() {
	_quiet=yes
	[ "$1" = --debug ] && { _quiet=; shift; }
	_n=$1 _runner=$2
	shift 2
	new_region
	run "$_n.pre" svt "$@"
	_pre=$rc
	new_region
	run "$_n.run" "$_runner" "$@"
	if [ "$rc" -ne "$_pre" ] || ! cmp -s "$WORK/$_n.pre.out" "$WORK/$_n.run.out" ||
		{ [ -n "$_quiet" ] && [ -s "$WORK/$_n.run.err" ]; }; then
		echo "---- $_n: through the preload (exit status $_pre)" >&2
		cat "$WORK/$_n.pre.out" "$WORK/$_n.pre.err" >&2
		echo "---- $_n: through run's supervisor ($_runner, exit status $rc)" >&2
		cat "$WORK/$_n.run.out" "$WORK/$_n.run.err" >&2
		FAILED=1
	fi
}

# served_cases NAME PROG MARK UNMARK: PROG under `volatile run`, its MARK
# and UNMARK written MARK and UNMARK ("mark", or "sysfa MARK" for the
# dynamic vt's raw system call; vt's and gofa's command language):
# 1. a memfd only PROG holds, marked; `volatile status` names PROG's pid
#    and ITS fd as the holder (not the supervisor's copy, closed after the
#    call); `volatile purge --all` from here reaches and frees it; UNMARK
#    says 1, the bytes read as zeros, no block is left;
# 2. an UNMARK of bytes never marked says 0; fill, MARK, UNMARK without a
#    purge says 0 and the bytes are intact.
served_cases() {
	_n=$1 _prog=$2 _mk=$3 _um=$4
	need_python
	new_region
	# word splitting of $_mk and $_um is intended: "sysfa MARK"
	# shellcheck disable=SC2086
	bg "${_n}_purged" vrun -- "$_prog" memfd m 64K fill 0 64K A $_mk 0 64K pid \
		touch "$WORK/$_n.marked" wait "$WORK/$_n.go" $_um 0 64K expect 0 64K zero blocks \
		$_um 0 64K
	wait_file "$WORK/$_n.marked"
	_vpid=$(pid_of "${_n}_purged")
	status_json "$_n-status"
	_holders=$(jq_py "$_n-status" "[[h['pid'], h['fd']] for f in d['file_list'] for h in f['holders']]")
	run "$_n-purge" vol purge --all
	touch "$WORK/$_n.go"
	wait_bg "${_n}_purged"
	expect_eq "$_n: the holders of the memfd PROG marked (pid, fd), in volatile status" \
		"$_holders" "[[$_vpid, 3]]"
	[ "$rc" -eq 0 ] || { show "${_n}_purged"; fail "$_n: exit status $rc"; }
	expect_out "$_n-purge" <<_EOF
purged 1 range, 65536 bytes
_EOF
	sed -i 's/^pid = .*/pid = N/' "$WORK/${_n}_purged.out"
	expect_out "${_n}_purged" <<_EOF
memfd m 64K = 3
fill 0 64K A = ok
$_mk 0 64K = 0
pid = N
touch $WORK/$_n.marked = 0
wait $WORK/$_n.go
$_um 0 64K = 1
expect 0 64K zero ok
blocks = 0
$_um 0 64K = 0
_EOF
	[ -s "$WORK/${_n}_purged.err" ] && { show "${_n}_purged"; fail "$_n: run printed on stderr without --debug"; }

	# shellcheck disable=SC2086
	ok "$_n-intact" vrun -- "$_prog" memfd m 64K $_um 0 4K fill 0 64K B $_mk 0 64K \
		$_um 0 64K expect 0 64K B $_mk 4K 8K $_um 0 64K expect 0 64K B
	expect_out "$_n-intact" <<_EOF
memfd m 64K = 3
$_um 0 4K = 0
fill 0 64K B = ok
$_mk 0 64K = 0
$_um 0 64K = 0
expect 0 64K B ok
$_mk 4K 8K = 0
$_um 0 64K = 0
expect 0 64K B ok
_EOF
	say "$_n: served: purged (1), intact (0), never marked (0)"
}

# A served call held waiting in the supervisor for a file's lock (DESIGN
# 21 step 6; run-killed-caller.sh, run-exec-caller.sh,
# run-signalled-caller.sh): hold_file NAME FILE starts H (vt under the
# fault-injecting library), which stops in its MARK of [32K, 48K) of FILE
# holding FILE's lock, and sets $hpid and $sf (FILE's record, for
# helpers/lockword); lock_waited holds once someone waits for that lock
# (the word's VL_LOCK_WAITERS bit, core/layout.h); let_go NAME continues
# H and checks its MARK said 0. file_ranges NAME FILE: FILE's ranges in
# `volatile status --json` as [offset, length, purged].
HOLD_FAULT_LIB=${VOLATILE_FAULT_LIBRARY:-$VL_TOP_BUILDDIR/tests/fault/.libs/libvolatile-fault.so}
LOCKWORD=$VL_TOP_BUILDDIR/tests/helpers/lockword
hold_file() {
	[ -r "$HOLD_FAULT_LIB" ] || fail "$HOLD_FAULT_LIB is not built (make check builds it)"
	[ -x "$LOCKWORD" ] || fail "$LOCKWORD is not built (make check builds it)"
	bg "$1" env LD_PRELOAD="$HOLD_FAULT_LIB" VT_STOP_AT="mark: tree changed, not committed" \
		timeout 120 "$VT" pid open "$2" rw mark 32K 16K echo over
	wait_match "$1" out '^pid = '
	hpid=$(pid_of "$1")
	wait_stopped "$1" "$hpid" "$1: H never stopped in its MARK of $2"
	sf=$("$LOCKWORD" slot "$2" | sed 's/^.* = //')
	case $sf in '' | none) fail "$1: $2 has no record: '$sf'" ;; esac
	lock_waited && fail "$1: the lock word of $2 has its waiters bit before anyone waits"
	return 0
}

lock_waited() {
	_w=$("$LOCKWORD" word "$sf" | sed 's/^.* = //')
	[ $((_w & 0x80000000)) -ne 0 ]
}

let_go() {
	kill -CONT "$hpid"
	wait_bg "$1"
	[ "$rc" -eq 0 ] || { show "$1"; fail "$1: H: exit status $rc"; }
	expect_line "$1" "mark 32K 16K = 0"
}

file_ranges() {
	status_json "$1"
	jq_py "$1" '[[r["offset"], r["length"], r["purged"]] for f in d["file_list"] if f["path"] == "'"$2"'" for r in f["ranges"]]'
}

# gone_caller_parts CUT WHO BYTE: run-killed-caller.sh's and
# run-exec-caller.sh's two parts. CUT PART mark|unmark (a function) has a
# served call on [0, 16K) of $F cut short while the supervisor waits for
# F's lock (hold_file), and returns once the supervisor is gone; WHO says
# whose call it was; BYTE is what [0, 16K) of F holds after part a's cut.
#   a. the MARK: F's only range is H's, and after `volatile purge --all`
#      [0, 16K) still holds BYTE (and H's range zeros);
#   b. the UNMARK of [0, 16K), marked and purged before: the range is still
#      there, purged, and the next UNMARK of it says 1.
gone_caller_parts() {
	_cut=$1 _who=$2 _byte=$3
	new_region
	mkfile "$F" 64K F
	"$_cut" a mark
	expect_eq "a: F's ranges after the supervisor served a MARK of $_who" \
		"$(file_ranges sta "$F")" "[[32768, 16384, false]]"
	ok apurge vol purge --all
	ok acheck vt open "$F" r expect 0 16K "$_byte" expect 16K 16K F expect 32K 16K zero \
		expect 48K 16K F
	say "a: the MARK of $_who changed nothing: [0, 16K) of F intact after a purge"

	new_region
	mkfile "$F" 64K F
	ok bmark svt open "$F" rw mark 0 16K
	ok bpurge vol purge --all
	expect_eq "b: F's ranges before" "$(file_ranges stb0 "$F")" "[[0, 16384, true]]"
	"$_cut" b unmark
	expect_eq "b: F's ranges after the supervisor served an UNMARK of $_who" \
		"$(file_ranges stb "$F")" "[[0, 16384, true], [32768, 16384, false]]"
	ok bunmark svt open "$F" rw unmark 0 16K expect 0 16K zero
	expect_line bunmark "unmark 0 16K = 1"
	say "b: the UNMARK of $_who changed nothing: the next UNMARK of the purged range says 1"
}
