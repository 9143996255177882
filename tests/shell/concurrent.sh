#!/bin/sh
# SPDX-License-Identifier: MIT
# Every process of the user maps the region at once (DESIGN 1, 11): while
# one process has it attached (it marked a range and is still running),
# others can MARK, UNMARK, read the status and purge without waiting for
# it to exit. (A region lock held for as long as a process keeps the
# region mapped would serialise every process of the user.)
. "$(dirname "$0")/lib.sh"
need_cmd

f=$WORK/file
mkfile "$f" 64K A
bg p1 svt open "$f" rw mark 0 4K touch "$WORK/ready" wait "$WORK/go" unmark 0 4K unmark 8K 4K
wait_file "$WORK/ready"

VL_TIMEOUT=5
run p2 svt open "$f" rw mark 8K 4K unmark 0 4K memfd m 64K mark 0 4K unmark 0 4K
rc2=$rc
run st vol status
rc3=$rc
run pg vol purge --all
rc4=$rc
touch "$WORK/go"
wait_bg p1
[ "$rc2" -eq 0 ] || { show p2; fail "a second process could not MARK while another had the region (exit status $rc2)"; }
[ "$rc3" -eq 0 ] || { show st; fail "volatile status waited for another process to exit (exit status $rc3)"; }
[ "$rc4" -eq 0 ] || { show pg; fail "volatile purge waited for another process to exit (exit status $rc4)"; }
expect_out p2 <<EOF
open $f rw = 3
mark 8K 4K = 0
unmark 0 4K = 0
memfd m 64K = 4
mark 0 4K = 0
unmark 0 4K = 0
EOF
expect_out p1 <<EOF
open $f rw = 3
mark 0 4K = 0
touch $WORK/ready = 0
wait $WORK/go
unmark 0 4K = 0
unmark 8K 4K = 1
EOF
exit 0
