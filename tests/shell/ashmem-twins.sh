#!/bin/sh
# SPDX-License-Identifier: MIT
# A region made here keeps its record while a second fd on its memfd is
# open in this process, however that fd was made (attack on 28b53f4, the
# table of regions made here): the region is opened as /dev/ashmem, named
# "twin", sized, given the prot mask PROT_READ; a second fd is opened on
# its memfd through /proc (or taken with pidfd_getfd) and answers an ioctl;
# then the first fd is closed. The second must still be the region. At
# 28b53f4 the close saw no other fd in its table (which follows only dup,
# dup2, dup3, F_DUPFD and absolute /proc/... or /dev/fd/ paths given to
# open) and forgot the record: the second fd was a plain memfd, writable,
# named "dev/ashmem/twin". Before that commit a scan of /proc/self/fd found
# the second fd whichever way it came. "abs" is the control.
# rename: SET_NAME with such a second fd open gave the first fd a new
# memfd: what was written through the second was not read through the
# first ("read = " at 28b53f4, "read = hello" before it).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ashmem-lib.sh"

TWINS=$VL_TOP_BUILDDIR/tests/helpers/twins
[ -x "$TWINS" ] || fail "$TWINS is not built (make check builds it)"

one() {
	new_region
	run "$1" shim "$TWINS" reopen "$1"
	[ "$rc" -eq 77 ] && { say "$1: skipped: $(cat "$WORK/$1.out")"; return 0; }
	if [ "$rc" -ne 0 ] || [ -s "$WORK/$1.err" ]; then
		show "$1"
		fail "$1: exit status $rc (want 0, and an empty stderr)"
	fi
	expect_out "$1" <<EOT
twin: getprot = 1
twin: getsize = 65536
twin: getname = twin
twin: map rw = -1 EPERM
EOT
}

# rename HOW: "hello" written through the second fd is read through the first
two() {
	new_region
	run "r$1" shim "$TWINS" rename "$1"
	[ "$rc" -eq 77 ] && { say "rename $1: skipped: $(cat "$WORK/r$1.out")"; return 0; }
	if [ "$rc" -ne 0 ] || [ -s "$WORK/r$1.err" ]; then
		show "r$1"
		fail "rename $1: exit status $rc (want 0, and an empty stderr)"
	fi
	expect_line "r$1" "read = hello"
}

for how in abs fopen openat stdin dslash symlink pidfd; do
	soft one "$how"
	soft two "$how"
done
exit "$FAILED"
