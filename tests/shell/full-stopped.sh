#!/bin/sh
# SPDX-License-Identifier: MIT
# A full region whose lock a stopped process keeps (DESIGN 5, 10, 11,
# 12). Room for 8 ranges, two chunks of four nodes: g has four ranges
# (its chunk full), f two and two unused nodes in its chunk, Q (a memfd)
# takes one of those (the region full: a steal) and then stops holding
# the region's lock. A MARK of g that needs a node finds none in its chunk
# and no free chunk, and would sweep or take f's last unused node under
# the region lock: the lock is not had within the bound, so the call must
# fail with EAGAIN (a lock not obtained: try again), not ENOMEM (no room
# for another range: there is room, f's unused node). Once Q goes on, the
# same MARK succeeds.
. "$(dirname "$0")/lib.sh"
need_cmd

need_fault_lib

new_region
VOLATILE_REGION_RANGES=8
export VOLATILE_REGION_RANGES
mkfile "$WORK/f" 64K F
mkfile "$WORK/g" 64K G
ok g1 svt open "$WORK/g" rw mark 0 4K mark 8K 4K mark 16K 4K mark 24K 4K
ok f1 svt open "$WORK/f" rw mark 0 4K mark 8K 4K mark 16K 4K mark 24K 4K unmark 16K 4K \
	unmark 24K 4K
holder_stopped q
ok st vol status
grep -q "^file " "$WORK/st.out" || { show st; fail "status lists no file"; }

run P svte VOLATILE_LOCK_WAIT=200 -- open "$WORK/g" rw mark 40K 4K
kill -CONT "$hpid"
wait_bg hq
soft expect_line P "mark 40K 4K = -1 EAGAIN"
ok P2 svt open "$WORK/g" rw mark 40K 4K
expect_line P2 "mark 40K 4K = 0"
exit $FAILED
