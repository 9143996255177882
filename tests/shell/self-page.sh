#!/bin/sh
# SPDX-License-Identifier: MIT
# This process's own mutexes (DESIGN 17, this_process.c) stay where they are taken.
# The self page that holds them is made at first use; when it cannot be
# (a sandbox that refuses madvise(MADV_WIPEONFORK), a process out of
# mappings), the static fallback serves. A page had later must not take
# over: a thread holding a mutex in the fallback would hold nothing there,
# and another thread would get in beside it. tests/helpers/selfpage: the
# main thread, its page refused (a seccomp filter of its own), holds the
# table of regions made here (a close of an ashmem region, stopped at the
# step "here: table taken"); a second thread, free to make the page, makes
# a region, which takes that table: it must wait for the close.
. "$(dirname "$0")/lib.sh"

SELFPAGE=$VL_TOP_BUILDDIR/tests/helpers/selfpage
need_fault_lib
[ -x "$SELFPAGE" ] || fail "$SELFPAGE is not built (make check builds it)"

new_region
run sp timeout "$VL_TIMEOUT" "$SELFPAGE" "$FAULT_LIB"
case $rc in
0) ;;
2) grep -q 'seccomp\|PR_SET_NO_NEW_PRIVS' "$WORK/sp.err" &&
	skip "no seccomp filter can be installed here: $(cat "$WORK/sp.err")"
   show sp; fail "selfpage could not run" ;;
*) show sp; fail "a second thread got into the table of regions made here while the first held it (status $rc)" ;;
esac
expect_out sp <<EOT
excluded
EOT
[ ! -s "$WORK/sp.err" ] || { show sp; fail "selfpage printed on stderr"; }
say "the second thread waited for the first to let go of the table"
exit 0
