#!/bin/sh
# SPDX-License-Identifier: MIT
# A file record's identity scribbled (its sum left wrong: DESIGN 18), then
# the region lock's holder dead (DESIGN 11): the rebuild of the file table
# leaves a record it cannot read out of the table, neither found nor
# reused. UNMARK over the file's punched bytes must still not say 0
# (DESIGN 4): 1, or EUCLEAN.
#   F is 1M of 'F'. [8K, 12K) is marked and purged; F's record's identity
#   is overwritten with O's without its sum (helpers/plant scribble); with
#   no repair, F's calls give EUCLEAN (the table still leads to the
#   record). Then the region's lock word is made a dead holder's, and F's
#   UNMARK of [8K, 12K), then a MARK and an UNMARK of it.
# An expected failure (XFAIL_TESTS): the rebuild forgets a record it
# cannot read with no tombstone that would cover its file.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

need_plant

F=$WORK/F
O=$WORK/O
new_region
mkfile "$F" 1M F
mkfile "$O" 1M O
ok m1 svt open "$F" rw mark 8K 4K
ok p vol purge --all
ok z vt open "$F" r expect 8K 4K zero
ok e "$PLANT" scribble "$F" "$O"
run u0 svt open "$F" rw unmark 8K 4K
expect_line u0 "unmark 8K 4K = -1 EUCLEAN"
ok l "$PLANT" lockword region dead
run u1 svt open "$F" rw unmark 8K 4K
soft never_zero u1 8K 4K
run u2 svt open "$F" rw mark 8K 4K unmark 8K 4K
soft never_zero u2 8K 4K
exit $FAILED
