#!/bin/sh
# SPDX-License-Identifier: MIT
# A signal handler that interrupted the library gets the library's answers
# about a region, never the kernel's about its memfd. A
# process's UNPIN of a /dev/ashmem region (prot mask PROT_READ), or its
# MARK of a memfd, waits for the region's lock, held by another process
# stopped (SIGSTOP, at a step of the fault-injecting library) until the
# test continues it, once the handler has run. A SIGALRM handler runs in that wait
# and asks the region:
#   GET_SIZE             its size, or -1 EINTR; never ENOTTY (a memfd's answer)
#   mmap rw, MAP_SHARED  fails (EPERM, or EAGAIN); never a writable mapping
#   fstat                the character device, or -1 EINTR; never a regular file
# and the interrupted call then succeeds (its wait for the lock is bounded
# by VOLATILE_LOCK_WAIT, made longer here than the holder's stop).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ashmem-lib.sh"

BEHAVE=$VL_TOP_BUILDDIR/tests/helpers/behave
[ -x "$BEHAVE" ] || fail "$BEHAVE is not built (make check builds it)"
need_fault_lib

# inside WHAT: the handler interrupts an UNPIN (unpin) or a MARK (mark)
inside() {
	what=$1
	# (not new_region: each part runs in a subshell, and counts from the same number)
	VOLATILE_REGION=$WORK/region.$what
	export VOLATILE_REGION
	go=$WORK/go.$what
	bg "p$what" env LD_PRELOAD="$VOLATILE_LIBRARY" VOLATILE_LOCK_WAIT=40s \
		BEHAVE_ALARMED="$go.alarmed" timeout 60 "$BEHAVE" siginlib "$what" "$go"
	wait_line "p$what" ready
	holder_stopped "$what"
	touch "$go"
	# the holder goes on once the handler has run in the wait (behave makes
	# $go.alarmed then), not after a fixed second: on a loaded machine the
	# call may not have reached its wait by then
	wait_file "$go.alarmed"
	kill -CONT "$hpid"
	wait_bg "p$what"
	prc=$rc
	wait_bg "h$what"
	[ "$rc" -eq 0 ] || { show "h$what"; fail "$what: the holder: exit status $rc"; }
	[ "$prc" -ne 124 ] || { show "p$what"; fail "$what: hung"; }
	[ "$prc" -eq 0 ] || { show "p$what"; fail "$what: exit status $prc"; }
	out=$WORK/p$what.out
	bad=
	grep -qxE 'handler: getsize = (65536|-1 EINTR)' "$out" ||
		bad="$bad; GET_SIZE: $(sed -n 's/^handler: getsize = //p' "$out")"
	grep -qxE 'handler: map rw = -1 (EPERM|EAGAIN)' "$out" ||
		bad="$bad; mmap rw under a PROT_READ mask: $(sed -n 's/^handler: map rw = //p' "$out")"
	grep -qxE 'handler: fstat = (chr|-1 EINTR)' "$out" ||
		bad="$bad; fstat of a /dev/ashmem region: $(sed -n 's/^handler: fstat = //p' "$out")"
	[ -z "$bad" ] || { show "p$what"; fail "$what: in a handler that interrupted the library$bad"; }
	expect_line "p$what" "$what = 0"
	[ ! -s "$WORK/p$what.err" ] || { show "p$what"; fail "$what: the library wrote on stderr"; }
}

soft inside unpin
soft inside mark
exit "$FAILED"
