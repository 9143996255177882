#!/bin/sh
# SPDX-License-Identifier: MIT
# A dup2 or dup3 onto a region fd that fails leaves that fd as it was: the
# library still follows it. On a region (opened as /dev/ashmem,
# or made by ashmem_create_region) with the prot mask PROT_READ, after each
# of dup2(-1, R) and dup2(a closed fd, R) (EBADF), dup3(another region, R,
# bad flags) and dup3(R, R, 0) (EINVAL), an mmap of R with PROT_WRITE still
# fails with EPERM, and fstat of a /dev/ashmem region still shows the
# device. (The library forgot R before the call and did not take it back
# when the call failed: R was a plain, writable memfd from then on.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ashmem-lib.sh"

BEHAVE=$VL_TOP_BUILDDIR/tests/helpers/behave
[ -x "$BEHAVE" ] || fail "$BEHAVE is not built (make check builds it)"

ok dev shim "$BEHAVE" dupfail dev
soft expect_out dev <<EOF
  map rw = -1 EPERM
  fstat = chr 10:61
dup2(-1, R) = -1 EBADF
  map rw = -1 EPERM
  fstat = chr 10:61
dup2(closed, R) = -1 EBADF
  map rw = -1 EPERM
  fstat = chr 10:61
dup3(other, R, bad flags) = -1 EINVAL
  map rw = -1 EPERM
  fstat = chr 10:61
dup3(R, R, 0) = -1 EINVAL
  map rw = -1 EPERM
  fstat = chr 10:61
EOF

new_region
ok api shim "$BEHAVE" dupfail api
soft expect_out api <<EOF
  map rw = -1 EPERM
dup2(-1, R) = -1 EBADF
  map rw = -1 EPERM
dup2(closed, R) = -1 EBADF
  map rw = -1 EPERM
dup3(other, R, bad flags) = -1 EINVAL
  map rw = -1 EPERM
dup3(R, R, 0) = -1 EINVAL
  map rw = -1 EPERM
EOF
exit "$FAILED"
