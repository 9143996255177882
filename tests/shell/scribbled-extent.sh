#!/bin/sh
# SPDX-License-Identifier: MIT
# A node's extent scribbled, then the file repaired (DESIGN 18: a process
# of the user may scribble on the region by mistake; never a punch outside
# a range that was marked in that file). The repair cannot tell a
# scribbled node from one a killed writer tore, and keeps it as purged
# with the extent it reads (DESIGN 11): UNMARK then says 1 over it, the
# safe way. A later MARK that overlaps it joins it; what that MARK punches
# must still lie inside bytes that were marked: the MARK's own and the
# unpurged ranges it joined, whose nodes checked, never the purged range's
# extent, which nothing checks any more.
#   F is 1M of 'F'. [8K, 12K) is marked and purged (`volatile purge`),
#   its node's end then written as 512K without its sum (helpers/plant),
#   and F's lock word made a dead holder's, so that the next call repairs
#   F. A MARK of [4K, 10K) then joins the purged range; bytes [12K, 512K),
#   which nobody marked, must still be 'F'.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

need_plant

F=$WORK/F
new_region
mkfile "$F" 1M F
ok m1 svt open "$F" rw mark 8K 4K
ok p vol purge --all
ok e "$PLANT" end "$F" 8192 524288
ok l "$PLANT" lockword "$F" dead
run m2 svt open "$F" rw mark 4K 6K expect 12K 500K F
expect_line m2 "mark 4K 6K = 0"
if ! grep -qx "expect 12K 500K F ok" "$WORK/m2.out"; then
	show m2
	fail "a MARK that joined the repaired range punched bytes [12K, 512K) that nobody marked"
fi
# the range's bytes: [8K, 12K) was purged, the rest stays flagged purged (a false 1 at most)
ok u svt open "$F" rw unmark 0 1M
expect_line u "unmark 0 1M = 1"
ok r vt open "$F" r expect 12K 500K F
exit $FAILED
