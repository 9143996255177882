#!/bin/sh
# SPDX-License-Identifier: MIT
# THE INVARIANT under a storm (DESIGN 4) with half the workers static
# programs served by `volatile run`'s supervisor: storm.sh's storm (4
# dynamic workers of 2 threads with the library preloaded, 2 purgers, a
# budget) and, at the same time in the same region, a static storm
# (tests/helpers/storm-static: 4 workers of 2 threads, no purgers) under
# `volatile run`, whose pages the first storm's purgers and budget purge.
# Each storm's oracle checks every UNMARK's answer; both must see no
# violation, no hang, and (each) some UNMARK that said 1. Then the same
# with SIGKILLs: each storm kills and replaces its own workers at random
# (the static ones in the middle of calls the supervisor serves). Both
# storms with every action of storm.sh (tests/helpers/storm.c: dup2 of a
# disk file onto a marked number, pidfd_getfd, unshare(CLONE_FILES), fds in
# flight in SCM_RIGHTS or with another user, and io_uring fixed files in
# the dynamic one): the supervisor takes a caller's fd from the calling
# thread's table, whatever moved there.
# 3 s each, and on until each action has run once (30 s more at most:
# tests/helpers/storm.c); VL_LONG=1: 30 s each.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
STORM=$VL_TOP_BUILDDIR/tests/helpers/storm
[ -x "$STORM" ] || fail "$STORM is not built (make check builds it)"
need_seccomp
need_prog "$STORM_STATIC" "$CC_NAME cannot link -static programs here (configure: no libc.a?)"
secs=3
[ -n "${VL_LONG:-}" ] && secs=30

# storms KILL: both at once
storms() {
	new_region
	mkdir -p "$WORK/dyn$1" "$WORK/static$1" || fail "mkdir"
	_xd=-
	_xs=-
	if [ -n "$DISK" ]; then
		_xd=$DISK/xdyn$1
		_xs=$DISK/xstatic$1
	fi
	# with kills a worker lives about 100 ms: trips no longer
	_hold=5000
	[ "$1" -eq 0 ] || _hold=100
	bg "dyn$1" env STORM_HOLD_MS=$_hold VOLATILE_BUDGET=64K LD_PRELOAD="$VOLATILE_LIBRARY" \
		timeout $((secs + 60)) "$STORM" "$WORK/dyn$1" "$secs" 4 2 2 "$1" all "$_xd"
	bg "static$1" env STORM_HOLD_MS=$_hold timeout $((secs + 60)) "$VOLATILE_CMD" run -- \
		"$STORM_STATIC" "$WORK/static$1" "$secs" 4 2 0 "$1" all "$_xs"
	wait_bg "static$1"
	src=$rc
	wait_bg "dyn$1"
	drc=$rc
	cat "$WORK/dyn$1.out" "$WORK/static$1.out"
	[ "$drc" -eq 0 ] || { show "dyn$1"; fail "the dynamic storm (kill=$1): exit status $drc"; }
	[ "$src" -eq 0 ] || { show "static$1"; fail "the static storm under volatile run (kill=$1): exit status $src"; }
	# without kills, every call of the static storm is served
	[ "$1" -eq 1 ] || grep -q ' 0 errors, 0 violations$' "$WORK/static$1.out" ||
		{ show "static$1"; fail "the static storm (kill=$1): some calls failed"; }
}
storms 0
storms 1
exit 0
