#!/bin/sh
# SPDX-License-Identifier: MIT
# A program linked with -lvolatile: the C API of volatile.h; THE INVARIANT
# while MARK/UNMARK race purges from another process; and MARK from a
# signal handler that interrupted its own thread inside the library
# (EINTR, never a hang); a fork while another thread attaches the region
# (the child must not hang). See tests/helpers/stress.c.
. "$(dirname "$0")/lib.sh"
STRESS=$VL_TOP_BUILDDIR/tests/helpers/stress
[ -x "$STRESS" ] || fail "$STRESS is not built (make check builds it)"

run api timeout 20 "$STRESS" api
cat "$WORK/api.out"
[ "$rc" -eq 0 ] || { show api; fail "the C API: exit status $rc"; }

new_region
run race timeout 60 "$STRESS" race 3
cat "$WORK/race.out"
[ "$rc" -eq 0 ] || { show race; fail "purge/unmark race: exit status $rc"; }

new_region
run signal timeout 60 "$STRESS" signal 2
cat "$WORK/signal.out"
[ "$rc" -eq 0 ] || { show signal; fail "MARK from signal handlers: exit status $rc"; }
if [ "${VL_SANITIZE:-}" = thread ]; then
	skip "the fork part is not run in a ThreadSanitizer build (TSan does not support fork in a multithreaded process: it hangs); api, race and signal passed"
fi
new_region
run fork timeout 120 "$STRESS" fork 200
cat "$WORK/fork.out"
[ "$rc" -eq 0 ] || { show fork; fail "fork during attach: exit status $rc"; }
exit 0
