#!/bin/sh
# SPDX-License-Identifier: MIT
# A stray write that makes a loop of a file's tree (DESIGN 18: links carry
# no sum): the walks in key order of a move (DESIGN 16) and of `volatile
# status` are bounded, and one that reaches its bound must say so, not end
# as if the file had no more ranges. F is 64K of 'F'; [8K, 12K), [0, 4K)
# and [16K, 20K) are marked in that order, and the oldest, [8K, 12K),
# purged. Its tree is [8K, 12K) at the root, [0, 4K) left and [16K, 20K)
# right; the right link of [0, 4K) is made to name the root (helpers/plant
# link), whose leftmost range is [0, 4K) again: a walk in key order goes
# from [0, 4K) to [0, 4K), for ever but for its bound.
#   a. (root) The region's name removed while P maps it: the next process
#      makes a new region and moves P's in (DESIGN 16). The move cannot
#      read F's ranges to their end, so all of F counts as purged (as for a
#      file whose lock is broken): UNMARKs of [8K, 12K), the purged range,
#      and of [16K, 20K), past the loop, must say 1 in the new region,
#      never 0.
#   b. `volatile status --json`: the file is listed with its index unsound
#      ("unsound": true, no ranges), or with exactly its three ranges;
#      never with what the loop repeats as if that were all.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

need_plant

F=$WORK/F

# looped_file: F with its three ranges, the first one purged, the loop scribbled
looped_file() {
	new_region
	mkfile "$F" 64K F
	ok m svt open "$F" rw mark 8K 4K mark 0 4K mark 16K 4K
	ok p vol purge --bytes 4K
	expect_line p "purged 1 range, 4096 bytes"
	ok s "$PLANT" link "$F" 0 right 8192
}

# ---- a. the region moved ----
# P maps the region (its MARK of a memfd) and idles while the region's name
# is removed; the next process makes a new region there, and as its maker
# moves P's in at once, through /proc/P/map_files (DESIGN 16): root only.
if [ "$(id -u)" -eq 0 ]; then
	looped_file
	bg P svt memfd m 4K mark 0 4K touch "$WORK/p-ready" wait "$WORK/p-go"
	wait_file "$WORK/p-ready"
	rm "$VOLATILE_REGION" || fail "rm $VOLATILE_REGION"
	run u svt open "$F" rw unmark 8K 4K unmark 16K 4K
	touch "$WORK/p-go"
	wait_bg P
	[ "$rc" -eq 0 ] || { show P; fail "a: P: exit status $rc"; }
	# P's memfd, marked in the old region only: there if the move was made
	ok st-a vol status
	grep -q "(memfd or unlinked)" "$WORK/st-a.out" ||
		{ show st-a; fail "a: P's region was not moved into the new one"; }
	grep -qx "unmark 8K 4K = 1" "$WORK/u.out" || {
		show u
		soft fail "a: the move's walk ended at its bound as if the file had no more ranges: the purged [8K, 12K) was left behind, its UNMARK says 0 over punched bytes"
	}
	grep -qx "unmark 16K 4K = 1" "$WORK/u.out" ||
		soft fail "a: a file whose walk did not end within its bound is not counted purged as a whole in the new region"
	ok z vt open "$F" r expect 8K 4K zero
else
	say "a: not root: the new region's maker cannot open P's removed one through map_files"
fi

# ---- b. the listing ----
looped_file
status_json st
listed=$(jq_py st "[(f.get('unsound'), [[x['offset'], x['length']] for x in f['ranges']]) for f in d['file_list'] if f['path'] and f['path'].endswith('/F')]")
case $listed in
'[[true, []]]' | '[[false, [[0, 4096], [8192, 4096], [16384, 4096]]]]') ;;
*)
	soft fail "b: volatile status lists F's looped index as $listed: neither unsound nor its three ranges"
	;;
esac
exit $FAILED
