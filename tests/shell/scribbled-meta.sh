#!/bin/sh
# SPDX-License-Identifier: MIT
# A purged range's node with its meta word scribbled (owner, state and
# purged bit, under the node's sum: DESIGN 18, a stray write into a node
# leaves its sum wrong). UNMARK over the punched bytes must never say 0
# (DESIGN 4): 1, or EUCLEAN while the node fails its check.
#   F is 1M of 'F'. [8K, 12K) is marked and purged (`volatile purge`), its
#   node's meta then overwritten without its sum (helpers/plant node):
#   - then F's lock word made a dead holder's, so that the next call
#     repairs F (DESIGN 11), with the word zeros (as a memset leaves),
#     IDLE of F, or LIVE of a slot nobody has: the repair rebuilds F from
#     the nodes that name it, and drops the node;
#   - IDLE of F: a MARK of [200K, 204K) takes the node as a spare (IDLE in
#     F's chunk) and empties it; UNMARK of [8K, 12K) (EUCLEAN since the
#     descents check the range they pass: its end is 0 now), then again
#     after a repair.
# Either way an UNMARK over [8K, 12K), zeros, must not say 0.
# An expected failure (XFAIL_TESTS) until the repair and the spare's take
# tell a scribbled range from an unused node.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

need_plant

F=$WORK/F
# a purged range [8K, 12K) of F, its meta scribbled to $1 (F is the region's first record)
purged_then_meta() {
	new_region
	mkfile "$F" 1M F
	ok m1-$1 svt open "$F" rw mark 8K 4K
	ok p-$1 vol purge --all
	ok z-$1 vt open "$F" r expect 8K 4K zero expect 12K 500K F
	ok e-$1 "$PLANT" node "$F" 8192 meta "$2"
}

for meta in zero:0 idle:0x3000001 other:0x2000002; do
	purged_then_meta "${meta%%:*}" "${meta#*:}"
	ok l-${meta%%:*} "$PLANT" lockword "$F" dead
	run u-${meta%%:*} svt open "$F" rw unmark 0 1M
	soft never_zero u-${meta%%:*} 0 1M
done

purged_then_meta spare 0x3000001
run m-spare svt open "$F" rw mark 200K 4K
run u-spare svt open "$F" rw unmark 8K 4K
soft never_zero u-spare 8K 4K
ok l-spare "$PLANT" lockword "$F" dead
run r-spare svt open "$F" rw unmark 8K 4K
soft never_zero r-spare 8K 4K
exit $FAILED
