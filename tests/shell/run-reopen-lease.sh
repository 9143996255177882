#!/bin/sh
# SPDX-License-Identifier: MIT
# Where the supervisor reopens a caller's file through /proc/TID/fd/N
# (pidfd_getfd refused: Yama's ptrace_scope 1, DESIGN 21 step 4), the open
# must not break a lease on the file. A write lease is had only by the
# file's one opener, so it is the caller's own, on the very fd of its
# call; an open for writing by anyone else starts its break (O_NONBLOCK
# only spares the opener the wait): the kernel sends the holder SIGIO,
# whose default action kills, and takes the lease away. Through the
# preload, and through pidfd_getfd, the lease is left alone.
#
# The refusal is the fault point of the test suite's build of the command
# (tests/fault/volatile-fault, VOLATILE_FAULT_SYSCALL=sv_getfd:EPERM).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_seccomp
need_static

D=$WORK/d
mkdir "$D" || fail "mkdir $D"
: >"$D/f"
LEASED="open $D/f rw truncate 8K lease mark 0 4K leased unmark 0 4K leased"

# the preload: the lease stays, no SIGIO
new_region
# shellcheck disable=SC2086 # LEASED is words
run pre svt $LEASED
grep -qxF 'lease = 0' "$WORK/pre.out" || skip "no write lease on $D/f here: $(grep '^lease' "$WORK/pre.out")"
[ "$rc" -eq 0 ] || { show pre; fail "through the preload: exit status $rc"; }
[ "$(grep -cxF 'leased = wr sigio = 0' "$WORK/pre.out")" -eq 2 ] ||
	{ show pre; fail "through the preload the lease was broken"; }

# the supervisor, reopening
new_region
# shellcheck disable=SC2086 # LEASED is words
run reopen env VOLATILE_FAULT_SYSCALL=sv_getfd:EPERM timeout "$VL_TIMEOUT" "$FAULTY" run -- \
	"$VT_STATIC" $LEASED
[ "$rc" -eq 0 ] || { show reopen; fail "reopening: exit status $rc"; }
if [ "$(grep -cxF 'leased = wr sigio = 0' "$WORK/reopen.out")" -ne 2 ]; then
	show reopen
	fail "reopening: the supervisor's open broke the caller's own write lease"
fi
exit 0
