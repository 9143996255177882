#!/bin/sh
# SPDX-License-Identifier: MIT
# A program that never marks, never opens /dev/ashmem and never calls the
# ashmem API neither creates nor maps the region, whatever
# memfds it handles:
#   1. a memfd received over a Unix socket (SCM_RIGHTS), named "wl_shm" by
#      its sender, as a Wayland client's buffers are, by recvmsg and by
#      recvmmsg, then mapped, written, fstat'd, duplicated and closed;
#   2. a memfd of its own: mmap, dup, dup2, dup3, F_DUPFD, fstat, close;
#   3. the same at fd 70000 (fds above 65535 are looked at by the library
#      on every mmap), where RLIMIT_NOFILE may be raised so far.
# Afterwards the region file does not exist, the program's own
# /proc/self/maps (read before it exits) shows no region, and nothing was
# written on stderr.
. "$(dirname "$0")/lib.sh"

BEHAVE=$VL_TOP_BUILDDIR/tests/helpers/behave
[ -x "$BEHAVE" ] || fail "$BEHAVE is not built (make check builds it)"

# no_region NAME: NAME's run left no region behind, and mapped none
no_region() {
	if [ -e "$VOLATILE_REGION" ] || [ -L "$VOLATILE_REGION" ]; then
		show "$1"
		fail "$1: the region $VOLATILE_REGION was created"
	fi
	expect_line "$1" "region: not mapped"
}

# ---- 1. received over a socket ------------------------------------------------------
for how in msg mmsg; do
	new_region
	ok "recv$how" shim "$BEHAVE" recv "$how"
	soft expect_out "recv$how" <<EOF
recv$how: received and mapped
fstat = reg
region: not mapped
EOF
	soft no_region "recv$how"
done

# ---- 2. a memfd of its own --------------------------------------------------------------
new_region
ok own shim "$BEHAVE" ownmemfd
soft expect_out own <<EOF
fstat = reg
region: not mapped
EOF
soft no_region own

# ---- 3. at a high fd ------------------------------------------------------------------
new_region
run high shim "$BEHAVE" ownmemfd high
if [ "$rc" -eq 77 ]; then
	say "$(cat "$WORK/high.out"): part 3 is not run"
else
	if [ "$rc" -ne 0 ] || [ -s "$WORK/high.err" ]; then
		show high
		fail "high: exit status $rc (want 0, and an empty stderr)"
	fi
	soft expect_out high <<EOF
fstat = reg
region: not mapped
EOF
	soft no_region high
fi
exit "$FAILED"
