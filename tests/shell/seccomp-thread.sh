#!/bin/sh
# SPDX-License-Identifier: MIT
# A host whose seccomp filter is one thread's: a thread that installs a
# filter without TSYNC has it alone, and so does the punch thread the
# library clones from it. Whether a punch thread may be made is asked of
# the calling thread's status (/proc/thread-self), not of the main
# thread's (/proc/self): there it said "Seccomp: 0" (or only volatile
# run's filters), the punch thread was made under the host's trapping
# filter, and the SIGSYS the kernel forced on it (every signal blocked)
# killed the host ("Bad system call") in a budget's purge. And a MARK that
# joins a purged range there leaves it flagged purged, unpunched (a false 1).
. "$(dirname "$0")/lib.sh"

need_cmd
SANDBOXED=$VL_TOP_BUILDDIR/tests/helpers/sandboxed
[ -x "$SANDBOXED" ] || fail "$SANDBOXED is not built (make check builds it)"

# the filter in the main thread, as posix-locks.sh part 5, then in a thread
for how in main thread; do
	new_region
	arg=
	[ "$how" = thread ] && arg=thread
	# shellcheck disable=SC2086 # $arg: none or one word
	run "$how" env VOLATILE_BUDGET=64K LD_PRELOAD="$VOLATILE_LIBRARY" timeout 60 "$SANDBOXED" $arg
	[ "$rc" -eq 77 ] && skip "no seccomp filters here"
	[ "$rc" -eq 0 ] || { show "$how"; fail "$how: a sandboxed host died (exit status $rc) in a purge"; }
	expect_out "$how" <<EOF
mark a = 0
mark b = 0
unmark a = 0
the end
EOF
done

# a MARK that joins a purged range in the sandboxed host: its punch would need
# the punching thread (DESIGN 13 point 4: never through the host's fd number),
# so the merged range stays flagged purged, the new page intact, UNMARK says 1
new_region
run merge env LD_PRELOAD="$VOLATILE_LIBRARY" timeout 60 "$SANDBOXED" merge
[ "$rc" -eq 0 ] || { show merge; fail "merge: exit status $rc"; }
expect_out merge <<EOF
mark a = 0
purged = 4096
mark a = 0
page 0: zeros
page 1: intact
unmark a = 1
the end
EOF

# under volatile run: run's filter in every thread (VOLATILE_SECCOMP_FILTERS
# says it is run's), the host's in one thread only
if supervised; then
	new_region
	run run-thread timeout 60 "$VOLATILE_CMD" run --budget 64K -- "$SANDBOXED" thread
	[ "$rc" -eq 0 ] || { show run-thread; fail "run-thread: a sandboxed host died (exit status $rc) in a purge"; }
	expect_out run-thread <<EOF
mark a = 0
mark b = 0
unmark a = 0
the end
EOF
else
	say "volatile run has no supervisor here: its part is not run"
fi
exit 0
