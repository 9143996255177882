#!/bin/sh
# SPDX-License-Identifier: MIT
# A purged range's end scribbled lower, its sum left wrong (DESIGN 18), and
# no repair: the descents of MARK and UNMARK steer by the ends of the
# ranges they pass, and one that passes this range on its right must not
# take it as ending before the call's bytes. UNMARK over its punched bytes
# must never say 0 (DESIGN 4): 1, or EUCLEAN while the node fails its
# check; nor may a MARK over them make a range that looks intact.
#   F is 1M of 'F'; [8K, 12K), [64K, 68K) (the tree's root) and [128K,
#   132K) are marked and purged (`volatile purge`); then one range's end is
#   written below its start, or 0, without its sum (helpers/plant end), and
#   that range is UNMARKed, or MARKed again and then UNMARKed.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

need_plant

F=$WORK/F
# three purged ranges of F, then the end of the one at $2 (bytes) made $3
purged_then_end() {
	new_region
	mkfile "$F" 1M F
	ok m1-$1 svt open "$F" rw mark 8K 4K mark 64K 4K mark 128K 4K
	ok p-$1 vol purge --all
	ok z-$1 vt open "$F" r expect 8K 4K zero expect 64K 4K zero expect 128K 4K zero
	ok e-$1 "$PLANT" end "$F" "$2" "$3"
}

purged_then_end leaf 8192 4096
run u-leaf svt open "$F" rw unmark 8K 4K
soft never_zero u-leaf 8K 4K

purged_then_end root 65536 4096
run u-root svt open "$F" rw unmark 64K 4K
soft never_zero u-root 64K 4K

purged_then_end last 131072 0
run u-last svt open "$F" rw unmark 128K 4K
soft never_zero u-last 128K 4K

# a MARK over the punched bytes: what it makes must still say purged
purged_then_end remark 8192 4096
run r-remark svt open "$F" rw mark 8K 4K
run u-remark svt open "$F" rw unmark 8K 4K
soft never_zero u-remark 8K 4K
exit $FAILED
