#!/bin/sh
# SPDX-License-Identifier: MIT
# A file record's root scribbled to an index past the node array (a stray
# write; no sum covers the root), and no repair: the descents of MARK and
# UNMARK start there, and one that stops at an index it can see is no node
# must say EUCLEAN (DESIGN 18: indices clamped, garbage is EUCLEAN), not
# take the tree for empty. UNMARK over punched bytes must never say 0
# (DESIGN 4): 1, or EUCLEAN. (Found by fuzz-region's oracle: corpus entry
# regress-root-scribbled. A root written to name no node, or another range
# of the file, is the links' kind: DESIGN 18, not defended.)
#   F is 1M of 'F'; [8K, 12K) and [64K, 68K) are marked and purged
#   (`volatile purge`); then F's record's root is written (helpers/plant
#   record), and [8K, 12K) is UNMARKed, or MARKed again and then UNMARKed.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

need_plant

F=$WORK/F
# two purged ranges of F, then its record's root made $2
purged_then_root() {
	new_region
	mkfile "$F" 1M F
	ok m1-$1 svt open "$F" rw mark 8K 4K mark 64K 4K
	ok p-$1 vol purge --all
	ok z-$1 vt open "$F" r expect 8K 4K zero expect 64K 4K zero
	ok r-$1 "$PLANT" record "$F" root "$2"
}

purged_then_root far 0xffffffff
run u-far svt open "$F" rw unmark 8K 4K
soft never_zero u-far 8K 4K

purged_then_root past 0x7fffff00
run u-past svt open "$F" rw unmark 64K 4K
soft never_zero u-past 64K 4K

# a MARK over the punched bytes: the UNMARK after it must still say purged
purged_then_root remark 0xffffffff
run r-remark svt open "$F" rw mark 8K 4K
run u-remark svt open "$F" rw unmark 8K 4K
soft never_zero u-remark 8K 4K
exit $FAILED
