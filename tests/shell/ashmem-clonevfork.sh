#!/bin/sh
# SPDX-License-Identifier: MIT
# A vfork child of a child made by clone() (no CLONE_VM) changes nothing
# of the clone child's ashmem state (ashmem-vfork.sh one
# generation down): the clone child's self page is wiped (MADV_WIPEONFORK)
# and nothing stores its pid there before it vforks, so vl_borrowed() in
# the vfork child finds pid 0 and says "not borrowed"; the vfork child's
# close then clears the clone child's bits: its mmap PROT_WRITE of a
# PROT_READ region succeeded and its fstat showed a memfd.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ashmem-lib.sh"

TWINS=$VL_TOP_BUILDDIR/tests/helpers/twins
[ -x "$TWINS" ] || fail "$TWINS is not built (make check builds it)"

run cv shim "$TWINS" clonevfork
[ "$rc" -eq 77 ] && skip "$(cat "$WORK/cv.out")"
if [ "$rc" -ne 0 ] || [ -s "$WORK/cv.err" ]; then show cv; fail "exit status $rc"; fi
expect_out cv <<EOT
clone child: map rw = -1 EPERM
clone child: fstat = chr
clone child: status 0
EOT
