#!/bin/sh
# SPDX-License-Identifier: MIT
# A process stopped at any instant delays only operations on the files it
# was changing (DESIGN 11, 18), under `volatile run` too. Its supervisor serves
# the calls of every process under it (static programs, raw system
# calls) one at a time, in one thread: a call on a file whose lock a
# stopped process keeps waits VOLATILE_LOCK_WAIT there, and every call
# behind it, on any file, of any process under run, waits with it (each
# call on the locked file queued before them adds its own wait).
#
# A (vt under the fault-injecting library) stops holding the lock of
# file F. Under run, a static vt MARKs F (it waits, then EAGAIN); while it
# waits, another static vt MARKs a memfd of its own: as through the
# preload, it must be answered at once: before the MARK of F, which
# waits until the test continues A then.
. "$(dirname "$0")/lib.sh"

need_cmd
: "${VL_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
CC=${VL_CC:-cc}
need_fault_lib
supervised || skip "volatile run has no supervisor here"
# shellcheck disable=SC2086 # CC may carry words
$CC -D_GNU_SOURCE -static -I"$VL_TOP_SRCDIR/include" -o "$WORK/vts" \
	"$VL_TOP_SRCDIR/tests/helpers/vt.c" 2>"$WORK/cc.err" ||
	skip "$CC cannot link a static program: $(head -n 2 "$WORK/cc.err")"

F=$WORK/f
mkfile "$F" 64K x
# the call on F waits until the holder goes on (the test continues it once
# the memfd's MARK is answered), 40 s at most
VOLATILE_LOCK_WAIT=40s
export VOLATILE_LOCK_WAIT
bg holder env LD_PRELOAD="$FAULT_LIB" VT_STOP_AT="mark: spare taken, file locked" \
	timeout 60 "$VT" pid open "$F" rw mark 0 4K echo over
wait_match holder out '^pid = '
hpid=$(sed -n 's/^pid = //p' "$WORK/holder.out")
wait_stopped holder "$hpid" "the holder never stopped holding F's lock"

# The memfd's MARK is answered while the call on F still waits: F's vt has
# not printed its MARK's answer yet. Not a time limit: a
# loaded machine may take seconds to start a process; a supervisor that
# served the memfd's MARK behind the call on F would keep it for the whole
# wait, and timeout 30 ends it (exit status 124).
# shellcheck disable=SC2016 # for the inner sh
bg served timeout 120 "$VOLATILE_CMD" run -- sh -c '
	"$1" open "$2" rw mark 8K 4K >"$3/onf.out" &
	sleep 0.5
	timeout 30 "$1" memfd g 4K mark 0 4K
	echo "memfd: exit status $?"
	grep "^mark" "$3/onf.out" && echo "the call on F was answered first"
	echo answered
	wait' sh "$WORK/vts" "$F" "$WORK"
wait_line served answered
kill -CONT "$hpid" 2>/dev/null
wait_bg served
[ "$rc" -eq 0 ] || { show served; fail "volatile run: exit status $rc"; }
wait_bg holder
expect_out served <<EOF
memfd g 4K = 3
mark 0 4K = 0
memfd: exit status 0
answered
EOF
# and the call on F, once the holder went on (its output: $WORK/onf.out)
expect_line onf "mark 8K 4K = 0"
exit 0
