#!/bin/sh
# SPDX-License-Identifier: MIT
# A child's purge never releases the child's POSIX locks (DESIGN 13).
# The process attaches first (its pid and token known), then makes a child
# by fork, by _Fork (glibc 2.34: no pthread_atfork handler runs) and by
# clone without CLONE_VM (glibc's wrapper, a stack of its own). The child
# takes an F_SETLK write lock on tmpfs file A, marks A, then B: its budget
# purges A's range, in the child. The parent, another process, asks
# F_GETLK: the lock is still the child's. (A child that took its parent's
# cached pid for its own recorded the parent as A's holder, and its purge
# duplicated and closed an fd of its own on A: its lock was gone.)
. "$(dirname "$0")/lib.sh"

BEHAVE=$VL_TOP_BUILDDIR/tests/helpers/behave
[ -x "$BEHAVE" ] || fail "$BEHAVE is not built (make check builds it)"

for kind in fork _Fork clone; do
	new_region
	mkfile "$WORK/A" 16K A
	mkfile "$WORK/B" 16K B
	run "lock$kind" env VOLATILE_BUDGET=4K LD_PRELOAD="$VOLATILE_LIBRARY" \
		timeout 30 "$BEHAVE" forklock "$kind" "$WORK/A" "$WORK/B"
	if [ "$rc" -eq 77 ]; then
		say "$(cat "$WORK/lock$kind.out"): the $kind part is not run"
		continue
	fi
	[ "$rc" -ne 124 ] || { show "lock$kind"; fail "$kind: hung"; }
	[ "$rc" -eq 0 ] || { show "lock$kind"; fail "$kind: exit status $rc"; }
	expect_out "lock$kind" <<EOT
$kind: lock held by the child
$kind: unmark A = 1
EOT
	[ ! -s "$WORK/lock$kind.err" ] || { show "lock$kind"; fail "$kind: the library wrote on stderr"; }
	ok "bytes$kind" vt open "$WORK/A" r expect 0 4K zero expect 4K 12K A
done
exit 0
