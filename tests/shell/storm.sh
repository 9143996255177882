#!/bin/sh
# SPDX-License-Identifier: MIT
# THE INVARIANT under a storm (DESIGN 4, 11): several processes with several
# threads each MARK, write, read and UNMARK their pages of two shared tmpfs
# files while purgers run and a small budget forces purges at MARKs; an
# oracle checks every UNMARK's answer against what the page holds. Then
# the same while processes are SIGKILLed at random moments and replaced:
# whoever comes next repairs what they left, at once, and no answer lies.
# tests/helpers/storm.c says how. VL_LONG=1 storms for a minute each.
. "$(dirname "$0")/lib.sh"
STORM=$VL_TOP_BUILDDIR/tests/helpers/storm
[ -x "$STORM" ] || fail "$STORM is not built (make check builds it)"
secs=4
[ -n "${VL_LONG:-}" ] && secs=60

new_region
run calm env VOLATILE_BUDGET=64K LD_PRELOAD="$VOLATILE_LIBRARY" \
	timeout $((secs + 60)) "$STORM" "$WORK" "$secs" 4 4 2 0
cat "$WORK/calm.out"
[ "$rc" -eq 0 ] || { show calm; fail "the storm without kills: exit status $rc"; }

new_region
run kill env VOLATILE_BUDGET=64K LD_PRELOAD="$VOLATILE_LIBRARY" \
	timeout $((secs + 60)) "$STORM" "$WORK" "$secs" 4 4 2 1
cat "$WORK/kill.out"
[ "$rc" -eq 0 ] || { show kill; fail "the SIGKILL storm: exit status $rc"; }
exit 0
