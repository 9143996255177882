#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile run` serves a call only in the region the calling program's own
# library would use (DESIGN 21): its VOLATILE_REGION as it was started
# with it (/proc/PID/environ), or the default one. Elsewhere it refuses:
# a MARK gets the kernel's EOPNOTSUPP (nothing marked), an UNMARK EPERM
# (a failed UNMARK means purged, DESIGN 5). A `volatile run` inside
# another, whose filter the kernel refuses (EBUSY: one listener in a
# chain), leaves the serving to the outer one when that one serves its
# region, and runs with the preload only when it does not, saying so in
# one line with --debug.
#
# 1. nested, another region: `volatile run --region A -- volatile run
#    --region B -- ...`: `volatile mark` marks 8K of a tmpfs file in B,
#    `volatile purge --all` (B) punches them, a static program UNMARKs
#    them with the system call;
# 2. the same with one run, whose CMD sets VOLATILE_REGION=B itself;
# 3. nested, the same region: the outer run serves the inner one's CMD;
# 4. a process served in A that execs itself with VOLATILE_REGION=B (the
#    same pid, the same thread): served no more;
# 5. the 2012 modes: `volatile run --2012-abi` serves them as MARK and
#    UNMARK only for a process whose environment has VOLATILE_2012_ABI=1,
#    as its library would take them; without it they go to the kernel;
# 6. --debug's line of the inner run, for each case.
#
# (Found by the adversarial pass: in 1 and 2 the UNMARK said 0, then
# 8,192 zero bytes were read, 4 of 4.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_seccomp
need_static

A=$WORK/a.region
B=$WORK/b.region
F=$WORK/f
unset VOLATILE_REGION

# check NAME: the static UNMARK did not say 0 over the purged bytes, and
# said EPERM
check() {
	if grep -qxF "unmark 0 8K = 0" "$WORK/$1.out"; then
		show "$1"
		fail "$1: UNMARK said 0 (intact) through run over bytes purged in the caller's region"
	fi
	expect_line "$1" "unmark 0 8K = -1 EPERM"
}

# ---- 1. nested, another region -----------------------------------------------------
rm -f "$F"
# shellcheck disable=SC2016 # for the inner sh
run nested vrun --region "$A" -- "$VOLATILE_CMD" run --region "$B" -- sh -c '
	"$1" open "$3" rwc fill 0 8K x >/dev/null &&
	"$2" mark "$3" 0 8K && "$2" purge --all &&
	exec "$4" open "$3" rw unmark 0 8K expect 0 8K x' \
	sh "$VT" "$VOLATILE_CMD" "$F" "$VT_STATIC"
check nested

# ---- 2. one run, CMD sets its own VOLATILE_REGION -------------------------------------
rm -f "$F"
# shellcheck disable=SC2016 # for the inner sh
run own vrun --region "$A" -- sh -c '
	VOLATILE_REGION=$5
	export VOLATILE_REGION
	"$1" open "$3" rwc fill 0 8K x >/dev/null &&
	"$2" mark "$3" 0 8K && "$2" purge --all &&
	exec "$4" open "$3" rw unmark 0 8K expect 0 8K x' \
	sh "$VT" "$VOLATILE_CMD" "$F" "$VT_STATIC" "$B"
check own
# a MARK is refused with the kernel's EOPNOTSUPP: nothing marked; --debug says why
run ownmark vrun --debug --region "$A" -- env VOLATILE_REGION="$B" "$VT_STATIC" open "$F" rw mark 0 4K
expect_line ownmark "mark 0 4K = -1 EOPNOTSUPP"
grep -q "^volatile run: not served: pid [0-9]*: mark fd 3: its region is not run's$" "$WORK/ownmark.err" ||
	{ show ownmark; fail "ownmark: --debug did not say why the MARK was not served"; }

# ---- 3. nested, the same region: served by the outer run -------------------------------
rm -f "$F"
# shellcheck disable=SC2016 # for the inner sh
run same vrun --region "$A" -- "$VOLATILE_CMD" run --region "$A" -- sh -c '
	"$1" open "$3" rwc fill 0 8K x mark 0 8K >/dev/null && "$2" purge --all >/dev/null &&
	exec "$4" open "$3" rw unmark 0 8K mark 0 4K unmark 0 4K' \
	sh "$VT" "$VOLATILE_CMD" "$F" "$VT_STATIC"
[ "$rc" -eq 0 ] || { show same; fail "same: exit status $rc"; }
expect_out same <<EOF
open $F rw = 3
unmark 0 8K = 1
mark 0 4K = 0
unmark 0 4K = 0
EOF

# ---- 4. served, then exec with another VOLATILE_REGION: the same thread, refused -------
# exec_case NAME PROG: PROG (a static vt) served, then refused after its exec
exec_case() {
	rm -f "$F"
	run "$1" vrun --region "$A" -- "$2" open "$F" rwc fill 0 8K x mark 0 4K unmark 0 4K pid \
		exec /usr/bin/env VOLATILE_REGION="$B" "$2" fd 3 pid mark 0 4K unmark 0 4K
	[ "$(sed -n 's/^pid = //p' "$WORK/$1.out" | sort -u | wc -l)" -eq 1 ] || { show "$1"; fail "$1: not one process"; }
	sed -i 's/^pid = .*/pid = N/' "$WORK/$1.out"
	expect_out "$1" <<EOF
open $F rwc = 3
fill 0 8K x = ok
mark 0 4K = 0
unmark 0 4K = 0
pid = N
exec /usr/bin/env
fd 3
pid = N
mark 0 4K = -1 EOPNOTSUPP
unmark 0 4K = -1 EPERM
EOF
}
exec_case exec "$VT_STATIC"
# a 32-bit program, whose auxiliary vector is of 32-bit pairs
: "${VL_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
CC=${VL_CC:-cc}
# shellcheck disable=SC2086 # CC may carry words
if [ "$(uname -m)" = x86_64 ] && $CC -m32 -static -D_GNU_SOURCE -I"$VL_TOP_SRCDIR/include" \
	-o "$WORK/vt32" "$VL_TOP_SRCDIR/tests/helpers/vt.c" 2>"$WORK/cc32.err"; then
	exec_case exec32 "$WORK/vt32"
else
	say "no 32-bit static program here (part 4): $(head -n 1 "$WORK/cc32.err")"
fi

# ---- 5. the 2012 modes as the caller's library takes them -------------------------------
# run --2012-abi, a process started without VOLATILE_2012_ABI=1: its library
# passes 0x04 and 0x08 to the kernel (NO_HIDE_STALE, COLLAPSE_RANGE), and
# so does run; with it, they are MARK and UNMARK
run abioff vrun --region "$A" --2012-abi -- env -u VOLATILE_2012_ABI "$VT_STATIC" memfd m 8K fa 0x04 0 4K fa 0x08 0 4K
expect_out abioff <<EOF
memfd m 8K = 3
fa 0x04 0 4K = -1 EOPNOTSUPP
fa 0x08 0 4K = -1 EOPNOTSUPP
EOF
run abion vrun --region "$A" --2012-abi -- "$VT_STATIC" memfd m 8K fa 0x04 0 4K fa 0x08 0 4K
expect_out abion <<EOF
memfd m 8K = 3
fa 0x04 0 4K = 0
fa 0x08 0 4K = 0
EOF

# ---- 6. the inner run's line, with --debug -------------------------------------------
run dsame vrun --region "$A" -- "$VOLATILE_CMD" run --debug --region "$A" -- true
n=$(grep -c '^volatile run:' "$WORK/dsame.err")
[ "$n" -eq 1 ] || { show dsame; fail "dsame: $n lines 'volatile run: ...' (want 1)"; }
grep -q '^volatile run: .*the volatile run outside serves this region' "$WORK/dsame.err" ||
	{ show dsame; fail "dsame: no line saying the outer run serves"; }
run dother vrun --region "$A" -- "$VOLATILE_CMD" run --debug --region "$B" -- true
n=$(grep -c '^volatile run:' "$WORK/dother.err")
[ "$n" -eq 1 ] || { show dother; fail "dother: $n lines 'volatile run: ...' (want 1)"; }
grep -q '^volatile run: .*the volatile run outside serves another region' "$WORK/dother.err" ||
	{ show dother; fail "dother: no line saying the outer run serves another region"; }
# without --debug: nothing
ok quiet vrun --region "$A" -- "$VOLATILE_CMD" run --region "$B" -- true
exit 0
