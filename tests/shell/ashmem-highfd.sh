#!/bin/sh
# SPDX-License-Identifier: MIT
# A region made here and closed here is forgotten at its last close, at any
# fd number: ashmem_create_region, and
#   low:  closed at its own fd (the control);
#   dupl: dup2'd to fd 50, the original closed, then fd 50;
#   dup:  the same at fd 5000;
#   made: made at an fd above 5000 (every lower one in use), then closed.
# Afterwards `volatile status --json` counts no record. (Only regions at
# fds below 4096, closed at the very fd they were made as, were forgotten.)
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

BEHAVE=$VL_TOP_BUILDDIR/tests/helpers/behave
[ -x "$BEHAVE" ] || fail "$BEHAVE is not built (make check builds it)"

forgotten() {
	run "$1" shim "$BEHAVE" closehigh "$1"
	if [ "$rc" -eq 77 ]; then
		say "$(cat "$WORK/$1.out"): $1 is not run"
		return 0
	fi
	if [ "$rc" -ne 0 ] || [ -s "$WORK/$1.err" ]; then
		show "$1"
		fail "$1: exit status $rc (want 0, and an empty stderr)"
	fi
	status_json "st$1"
	expect_eq "$1: records left after the region's last close" "$(jq_py "st$1" 'd["records"]')" 0
}

for how in low dupl dup made; do
	new_region
	soft forgotten "$how"
done
exit "$FAILED"
