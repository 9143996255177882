#!/bin/sh
# SPDX-License-Identifier: MIT
# A stray write into a link of a file's tree (DESIGN 18: links carry no
# sum). F is 64K of 'F'; [8K, 12K), [0, 4K) and [16K, 20K) are marked in
# that order, and the oldest, [8K, 12K), purged. Its tree is [8K, 12K) at
# the root, [0, 4K) left and [16K, 20K) right; the right link of [0, 4K)
# is then made to name [16K, 20K) (helpers/plant link), so that a walk
# in key order following the links goes from [0, 4K) to [16K, 20K), past
# the purged range (a, b); or the root's left link is cleared (c).
#   a. An UNMARK of [0, 20K) must say 1 (it covers the purged range), or
#      fail (EUCLEAN), never 0 over the punched bytes.
#   b. The region's records moved into a new one (DESIGN 16) by P, a user
#      of the region (it mapped it: a MARK of its own before), after its
#      name is removed: the move must carry every
#      purged range as purged, whatever the links say; then an UNMARK of
#      [8K, 12K) must say 1.
#   c. The root's left link cleared: [0, 4K) is cut off from the tree (it
#      stays in the age order). An UNMARK of [0, 4K) that says 0 must have
#      taken it out: 'X' written there must survive `volatile purge --all`.
#   d. Three purged ranges, [8K, 12K), [64K, 68K) (the root) and [128K,
#      132K); the root's left (or right) link cleared: an UNMARK of [8K,
#      12K) (or [128K, 132K)) must say 1, or fail (EUCLEAN), never 0.
# An expected failure (XFAIL_TESTS) in format 9, all four: no descent can
# tell a cut subtree from none, and a walk that checked each link by its
# reverse would catch a and b only.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

need_plant

# scribbled_file: F with its three ranges, the middle one purged, the link scribbled
scribbled_file() {
	new_region
	mkfile "$F" 64K F
	ok m svt open "$F" rw mark 8K 4K mark 0 4K mark 16K 4K
	ok p vol purge --bytes 4K
	expect_line p "purged 1 range, 4096 bytes"
	ok s "$PLANT" link "$F" "$@"
}

F=$WORK/F

# ---- a. an UNMARK across the purged range ----
scribbled_file 0 right 16384
run a svt open "$F" rw unmark 0 20K
if grep -qx "unmark 0 20K = 0" "$WORK/a.out"; then
	show a
	soft fail "a: UNMARK of [0, 20K) said 0 over the purged [8K, 12K)"
fi

# ---- b. the region moved ----
scribbled_file 0 right 16384
# P maps the region (its MARK of [40K, 44K)) before the name goes: the move is its
bg P svt open "$F" rw mark 40K 4K touch "$WORK/p-ready" wait "$WORK/p-go" mark 32K 4K
wait_file "$WORK/p-ready"
rm "$VOLATILE_REGION" || fail "rm $VOLATILE_REGION"
touch "$WORK/p-go"
wait_bg P
[ "$rc" -eq 0 ] || { show P; fail "b: P: exit status $rc"; }
expect_line P "mark 40K 4K = 0"
expect_line P "mark 32K 4K = 0"
ok u svt open "$F" rw unmark 8K 4K
if ! grep -qx "unmark 8K 4K = 1" "$WORK/u.out"; then
	show u
	soft fail "b: the move left the purged range [8K, 12K) behind: its UNMARK says 0 over punched bytes"
fi
ok z vt open "$F" r expect 8K 4K zero

# ---- c. a subtree cut off ----
scribbled_file 8192 left none
ok c svt open "$F" rw unmark 0 4K fill 0 4K X
if grep -qx "unmark 0 4K = 0" "$WORK/c.out"; then
	ok c-purge vol purge --all
	run c-bytes vt open "$F" r expect 0 4K X
	grep -qx "expect 0 4K X ok" "$WORK/c-bytes.out" || {
		show c-bytes
		soft fail "c: UNMARK of [0, 4K) said 0, and a purge then punched it"
	}
fi

# ---- d. a subtree of purged ranges cut off ----
for cut in left:8K right:128K; do
	link=${cut%%:*}
	at=${cut#*:}
	new_region
	mkfile "$F" 1M F
	ok d-m-$link svt open "$F" rw mark 8K 4K mark 64K 4K mark 128K 4K
	ok d-p-$link vol purge --all
	ok d-z-$link vt open "$F" r expect 8K 4K zero expect 64K 4K zero expect 128K 4K zero
	ok d-e-$link "$PLANT" link "$F" 65536 "$link" none
	run d-u-$link svt open "$F" rw unmark "$at" 4K
	soft never_zero d-u-$link "$at" 4K
done
exit $FAILED
