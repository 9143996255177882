#!/bin/sh
# SPDX-License-Identifier: MIT
# A program that installs its own seccomp user-notification listener
# (SECCOMP_FILTER_FLAG_NEW_LISTENER: container runtimes, sandboxes, some
# test harnesses) gets EBUSY under `volatile run`: the kernel allows one
# listener in a filter chain, and run's filter, which has it, cannot be
# removed. Under `volatile run --no-seccomp`, and without run, it gets its
# listener. As `volatile run --help`, volatile(1), doc/command.md and the
# README say; this test holds them to it.
#
# vt's `listener`: no_new_privs, then an allow-all filter with a listener.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_seccomp
need_static

# ---- without run: the listener is had ------------------------------------------------------
ok plain "$VT" listener
expect_line plain "listener = 0"
ok plainstatic "$VT_STATIC" listener
expect_line plainstatic "listener = 0"

# ---- under run: EBUSY, dynamic or static; the volatile calls are still served -----------------
new_region
ok run vrun -- "$VT" memfd m 4K listener fill 0 4K D mark 0 4K unmark 0 4K expect 0 4K D
expect_out run <<EOF
memfd m 4K = 3
listener = -1 EBUSY
fill 0 4K D = ok
mark 0 4K = 0
unmark 0 4K = 0
expect 0 4K D ok
EOF
ok runstatic vrun -- "$VT_STATIC" memfd m 4K listener mark 0 4K unmark 0 4K
expect_out runstatic <<EOF
memfd m 4K = 3
listener = -1 EBUSY
mark 0 4K = 0
unmark 0 4K = 0
EOF

# ---- under run --no-seccomp: the listener is had; the preload serves dynamic programs --------
new_region
ok noseccomp vrun --no-seccomp -- "$VT" memfd m 4K listener fill 0 4K D mark 0 4K unmark 0 4K \
	expect 0 4K D
expect_out noseccomp <<EOF
memfd m 4K = 3
listener = 0
fill 0 4K D = ok
mark 0 4K = 0
unmark 0 4K = 0
expect 0 4K D ok
EOF
# a static program: nothing serves it, the kernel's answer, as without run
ok noseccompstatic vrun --no-seccomp -- "$VT_STATIC" memfd m 4K listener mark 0 4K
expect_out noseccompstatic <<EOF
memfd m 4K = 3
listener = 0
mark 0 4K = -1 EOPNOTSUPP
EOF

# ---- the documents say it: what fails, and --no-seccomp ---------------------------------------
: "${VL_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
ok help vol run --help
for doc in "$WORK/help.out" "$VL_TOP_SRCDIR/man/volatile.1" "$VL_TOP_SRCDIR/doc/command.md" \
	"$VL_TOP_SRCDIR/README.md"; do
	tr '\n' ' ' <"$doc" | sed 's/\\-/-/g; s/\.B[RI]* //g' >"$WORK/flat"
	for word in EBUSY listener --no-seccomp; do
		grep -q -- "$word" "$WORK/flat" || fail "${doc##*/} does not say $word"
	done
done
for doc in "$WORK/help.out" "$VL_TOP_SRCDIR/man/volatile.1" "$VL_TOP_SRCDIR/doc/command.md"; do
	grep -q SECCOMP_FILTER_FLAG_NEW_LISTENER "$doc" ||
		fail "${doc##*/} does not name SECCOMP_FILTER_FLAG_NEW_LISTENER (what fails)"
done
exit 0
