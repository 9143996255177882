#!/bin/sh
# SPDX-License-Identifier: MIT
# A punch never goes through a descriptor whose identity could change
# between its check and the punch (DESIGN 13 point 4, DESIGN 17; issue
# 24.2). A host thread loops dup2(X, S); dup2(F, S) while another marks
# through S (tests/helpers/fdswap). The library used to check S to be F,
# then punch through the number S, X's by then (X zeroed at 609 of 20,000
# checks); it now checks and punches in its punching thread's copy of the
# fd table, which no host thread changes:
#
#   merge    a MARK through S that joins F's purged range punches the
#            merged range (DESIGN 3): X, a file nobody marked, zeroed;
#   budget   the budget's purge of the caller's own file, through S.
#
# X on a disk file system (the library never marks it: MARK through S
# then fails) and on tmpfs (MARK through S then marks it; the helper
# unmarks it). An UNMARK that says 0 must find the bytes intact; X must
# never be zeroed. Then the same under `volatile run`, the MARK through S a
# raw system call that run serves through its own descriptor (DESIGN 21).
. "$(dirname "$0")/lib.sh"
need_cmd
FDSWAP=$VL_TOP_BUILDDIR/tests/helpers/fdswap
[ -x "$FDSWAP" ] || fail "$FDSWAP is not built (make check builds it)"
# each race runs 20,000 rounds or 8 s, whichever comes first
SECONDS_EACH=${FDSWAP_SECONDS:-8}
ROUNDS=${FDSWAP_ROUNDS:-20000}

race() { # NAME X [raw]: NAME is MODE-WHERE, MODE merge or budget
	new_region
	mkfile "$2" 8K x
	mkfile "$WORK/f" 8K f
	_budget=
	[ "$1" = "${1#budget}" ] || _budget=4K
	if [ "${3:-}" = raw ]; then
		# shellcheck disable=SC2086 # the budget option: none, or two words
		run "$1" timeout 120 "$VOLATILE_CMD" run ${_budget:+--budget $_budget} -- \
			"$FDSWAP" "${1%%-*}" "$2" "$WORK/f" "$SECONDS_EACH" "$ROUNDS" raw
	else
		run "$1" env ${_budget:+VOLATILE_BUDGET=$_budget} LD_PRELOAD="$VOLATILE_LIBRARY" \
			timeout 120 "$FDSWAP" "${1%%-*}" "$2" "$WORK/f" "$SECONDS_EACH" "$ROUNDS"
	fi
	say "$1: $(cat "$WORK/$1.out")"
	case $rc in
	0) ;;
	1) show "$1"; fail "$1: bytes outside any volatile range were zeroed" ;;
	3) show "$1"; fail "$1: no MARK went through the swapped fd: the race did not run" ;;
	*) show "$1"; fail "$1: exit status $rc" ;;
	esac
}

race merge-tmpfs "$WORK/x"
race budget-tmpfs "$WORK/x"
if [ -n "$DISK" ]; then
	race merge-disk "$DISK/x"
	race budget-disk "$DISK/x"
else
	say "no disk file system: X on tmpfs only"
fi
# the MARK through S a raw system call, served by `volatile run` through its own
# descriptor of S's open file (pidfd_getfd): no number of the caller's is punched
if supervised; then
	race merge-run "$WORK/x" raw
	race budget-run "$WORK/x" raw
else
	say "volatile run has no supervisor here: its part is not run"
fi
exit 0
