#!/bin/sh
# SPDX-License-Identifier: MIT
# ashmem (DESIGN 7): a program written against <cutils/ashmem.h>, linked with
# -lvolatile and run without LD_PRELOAD: create, size, its name in the
# maps, unpin, `volatile purge`, pin says WAS_PURGED and reads zeros,
# pinned pages intact, the prot mask, the NDK's ASharedMemory, a plain memfd.
. "$(dirname "$0")/lib.sh"
need_cmd
prog=$VL_TOP_BUILDDIR/tests/helpers/ashmem-cutils
[ -x "$prog" ] || fail "$prog is not built (make check builds it)"

run c1 timeout "$VL_TIMEOUT" "$prog" "$VOLATILE_CMD purge --all"
if [ "$rc" -ne 0 ] || [ -s "$WORK/c1.err" ] || grep -q '^FAIL' "$WORK/c1.out"; then
	show c1
	fail "the libcutils program failed ($rc)"
fi
n=$(grep -c '^ok' "$WORK/c1.out")
[ "$n" -ge 30 ] || { show c1; fail "only $n checks ran"; }
expect_line c1 "ok ashmem_pin_region after the purge = 1 (WAS_PURGED)"
expect_line c1 "ok purged pages read as zeros"
expect_line c1 "ok pinned pages survive the purge"
exit 0
