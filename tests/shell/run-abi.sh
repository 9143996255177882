#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile run` and programs it must not break: those built with
# AddressSanitizer, and those of another ABI.
#
# ASan aborts a program whose first library is not its runtime ("ASan
# runtime does not come first in initial library list"). So run puts the
# ASan runtime the program needs (its DT_NEEDED) ahead of the library in
# LD_PRELOAD, and keeps the sanitizer runtimes that begin LD_PRELOAD ahead
# of it. tests/helpers/abi-prog.c, built here with -fsanitize=address, must
# run under `volatile run` (with the default library and with
# VOLATILE_LIBRARY, and with LD_PRELOAD=its runtime as ASan's manual says),
# print nothing on stderr and get the library's answers: MARK 0, UNMARK 0,
# where it alone gets EOPNOTSUPP. ASan's link order check is on, as in a
# user's environment (make check under the sanitizers turns it off).
#
# A program of another ABI must run under `volatile run` as it runs without
# it: same exit status, nothing on stderr (ld.so said "wrong ELF class:
# ELFCLASS64"), the same output but for its volatile calls, which run's
# supervisor serves (and with --no-seccomp, the same output). Here a
# 32-bit x86 program: abi-prog.c built
# with -m32 where a 32-bit libc can be linked, else tests/helpers/
# abi-prog32.S, which needs none. It runs directly and through a 64-bit
# sh; the C one also execs a 64-bit program, which must get the library.
# The library is the default one here (VOLATILE_LIBRARY unset): what run
# names through ld.so's $LIB, the release build (lib.sh).
#
# Each part skips only when this machine cannot make or run its program,
# and says why; the test skips if no part could run.
. "$(dirname "$0")/lib.sh"

need_cmd
: "${VL_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
HELPERS=$VL_TOP_SRCDIR/tests/helpers
CC=${VL_CC:-cc}
THE_LIBRARY=$VOLATILE_RELEASE_LIBRARY
VOLATILE_CMD=$VOLATILE_RELEASE_CMD
unset VOLATILE_LIBRARY
parts=0
skipped=

# shellcheck disable=SC2317 # called through run
volrun() {
	timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run -- "$@"
}

# expect NAME STATUS WANT: NAME (see run) exited STATUS, printed exactly
# the file WANT, and nothing on stderr.
expect() {
	if [ "$rc" -ne "$2" ] || [ -s "$WORK/$1.err" ] || ! cmp -s "$3" "$WORK/$1.out"; then
		echo "---- $1: expected output" >&2
		cat "$3" >&2
		show "$1"
		fail "$1: exit status $rc (want $2), stderr and output above (want the expected output and an empty stderr)"
	fi
}

printf 'mark = -1 EOPNOTSUPP\nunmark = -1 EOPNOTSUPP\n' >"$WORK/without.want"
printf 'mark = 0\nunmark = 0\n' >"$WORK/with.want"

# ---- AddressSanitizer ---------------------------------------------------------
asan_part() {
	# shellcheck disable=SC2086 # CC may carry words
	if ! $CC -fsanitize=address -I"$VL_TOP_SRCDIR/include" -o "$WORK/asan-prog" \
			"$HELPERS/abi-prog.c" 2>"$WORK/asan-cc.err"; then
		skipped="$skipped; $CC cannot build with -fsanitize=address: $(head -n 3 "$WORK/asan-cc.err")"
		return
	fi
	run asan-alone "$WORK/asan-prog"
	if [ "$rc" -ne 3 ]; then
		skipped="$skipped; an ASan program cannot run here: status $rc, $(head -n 3 "$WORK/asan-alone.err")"
		return
	fi
	expect asan-alone 3 "$WORK/without.want"
	parts=$((parts + 1))

	run asan-run volrun "$WORK/asan-prog"
	expect asan-run 3 "$WORK/with.want"
	run asan-run-lib env VOLATILE_LIBRARY="$THE_LIBRARY" \
		timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run -- "$WORK/asan-prog"
	expect asan-run-lib 3 "$WORK/with.want"

	# the runtime where ld.so finds it for this program
	rt=$(LD_TRACE_LOADED_OBJECTS=1 "$WORK/asan-prog" 2>/dev/null |
		sed -n 's/^[[:space:]]*[^ ]*asan[^ ]* => \(\/[^ ]*\) .*/\1/p' | head -n 1)
	if [ -z "$rt" ]; then
		say "the ASan runtime is linked into the program here (not a shared library): no LD_PRELOAD=runtime case"
		return
	fi
	run asan-preloaded env LD_PRELOAD="$rt" \
		timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run -- "$WORK/asan-prog"
	expect asan-preloaded 3 "$WORK/with.want"
	# kept first, the library next, the rest after (libc: any other library)
	libc=$(LD_TRACE_LOADED_OBJECTS=1 "$WORK/asan-prog" 2>/dev/null |
		sed -n 's/^[[:space:]]*libc\.so[^ ]* => \(\/[^ ]*\) .*/\1/p' | head -n 1)
	[ -n "$libc" ] || fail "cannot tell where the program's libc is"
	# shellcheck disable=SC2016 # for the inner sh
	run asan-list env LD_PRELOAD="$rt $libc" \
		timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run -- "$WORK/asan-prog" exec /bin/sh -c \
		'printf "%s\n" "$LD_PRELOAD"'
	case $(tail -n 1 "$WORK/asan-list.out") in
	"$rt:"*libvolatile*":$libc") ;;
	*)
		show asan-list
		fail "asan-list: LD_PRELOAD=$(tail -n 1 "$WORK/asan-list.out"), want $rt first, the library, then $libc"
		;;
	esac
}

# ---- a program of another ABI: 32-bit x86 -------------------------------------
abi_part() {
	case $(uname -m) in
	x86_64) ;;
	*)
		skipped="$skipped; no 32-bit program to try on $(uname -m)"
		return
		;;
	esac
	# shellcheck disable=SC2086 # CC may carry words
	if $CC -m32 -I"$VL_TOP_SRCDIR/include" -o "$WORK/prog32" "$HELPERS/abi-prog.c" \
			2>"$WORK/cc32.err"; then
		kind=c
	elif $CC -m32 -nostdlib -pie -Wl,-dynamic-linker,/lib/ld-linux.so.2 -o "$WORK/prog32" \
			"$HELPERS/abi-prog32.S" 2>"$WORK/as32.err"; then
		kind=asm
	else
		skipped="$skipped; $CC cannot make a 32-bit program: $(head -n 2 "$WORK/as32.err")"
		return
	fi
	run alone32 "$WORK/prog32"
	if [ "$rc" -ne 3 ]; then
		skipped="$skipped; a 32-bit program cannot run here (is /lib/ld-linux.so.2, libc6-i386, installed?): status $rc, $(head -n 2 "$WORK/alone32.err")"
		return
	fi
	[ -s "$WORK/alone32.err" ] && { show alone32; fail "alone32: the 32-bit program alone printed on stderr"; }
	cp "$WORK/alone32.out" "$WORK/alone32.want"
	parts=$((parts + 1))
	say "a 32-bit program ($kind)"

	# the preload is not for it; the supervisor serves its system calls (DESIGN 21)
	if supervised; then
		sed 's/= -1 EOPNOTSUPP$/= 0/' "$WORK/alone32.want" >"$WORK/run32.want"
	else
		say "volatile run has no supervisor here: the 32-bit program runs as without it"
		cp "$WORK/alone32.want" "$WORK/run32.want"
	fi
	run run32 volrun "$WORK/prog32"
	expect run32 3 "$WORK/run32.want"
	# shellcheck disable=SC2016 # for the inner sh
	run run32-sh volrun sh -c '"$@"' sh "$WORK/prog32"
	expect run32-sh 3 "$WORK/run32.want"
	run run32-noseccomp timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run --no-seccomp -- "$WORK/prog32"
	expect run32-noseccomp 3 "$WORK/alone32.want"
	[ "$kind" = c ] || return
	# a 64-bit program started by the 32-bit one gets the library
	run run32-exec volrun "$WORK/prog32" exec "$VT" memfd m 4K mark 0 4K
	{
		cat "$WORK/run32.want"
		printf 'memfd m 4K = 3\nmark 0 4K = 0\n'
	} >"$WORK/run32-exec.want"
	expect run32-exec 0 "$WORK/run32-exec.want"
}

had_asan_options=${ASAN_OPTIONS+y}
old_asan_options=${ASAN_OPTIONS:-}
ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=1
export ASAN_OPTIONS
asan_part
if [ "$had_asan_options" = y ]; then
	ASAN_OPTIONS=$old_asan_options
else
	unset ASAN_OPTIONS
fi
abi_part

[ -n "$skipped" ] && say "not tried${skipped}"
[ "$parts" -gt 0 ] || skip "nothing could be tried here${skipped}"
exit 0
