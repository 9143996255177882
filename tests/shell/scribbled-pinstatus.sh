#!/bin/sh
# SPDX-License-Identifier: MIT
# An unpinned range's end scribbled lower, its sum left wrong (DESIGN 18),
# and no repair: ASHMEM_GET_PIN_STATUS asks the tree for the first range
# ending after the asked bytes, and a descent that passes the scribbled
# range on its right takes it as ending before them. Over the unpinned
# bytes the answer must never be ASHMEM_IS_PINNED (DESIGN 7): 0, or
# EUCLEAN while the node fails its check (DESIGN 5), as MARK and UNMARK say
# (scribbled-descent.sh).
#   A legacy ashmem program maps a 1M region and unpins [8K, 12K), [64K,
#   68K) (the tree's root) and [128K, 132K); then the end of one range is
#   written below its start, or 0 (helpers/plant end, through the
#   program's fd in /proc), and the program asks the pin status of it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ashmem-lib.sh"
need_plant

# never_pinned NAME OFF LEN: NAME's GET_PIN_STATUS of OFF LEN, over unpinned
# bytes, said 0 (unpinned) or EUCLEAN; never 1 (pinned), nor anything else.
# (its last answer: the one after the scribble)
never_pinned() {
	case $(grep "^pinstatus $2 $3 = " "$WORK/$1.out" | tail -n 1) in
	"pinstatus $2 $3 = 0" | "pinstatus $2 $3 = -1 EUCLEAN") ;;
	*) show "$1" && fail "$1: GET_PIN_STATUS over unpinned bytes [$2, +$3) said pinned, or not 0" ;;
	esac
}

# the range at $2 (bytes) of three unpinned ones ended at $3, then its
# pin status asked as $4 $5
unpinned_then_end() {
	new_region
	bg "$1" leg open setsize 1M map 1M rw unpin 8K 4K unpin 64K 4K unpin 128K 4K \
		pinstatus "$4" "$5" pid touch "$WORK/$1.ready" wait "$WORK/$1.go" pinstatus "$4" "$5"
	wait_file "$WORK/$1.ready"
	_pid=$(sed -n 's/^pid = //p' "$WORK/$1.out")
	_fd=$(sed -n "s/^open [^ ]* = //p" "$WORK/$1.out")
	[ -n "$_pid" ] && [ -n "$_fd" ] || { show "$1"; fail "$1: no pid or fd from the program"; }
	ok "e-$1" "$PLANT" end "/proc/$_pid/fd/$_fd" "$2" "$3"
	touch "$WORK/$1.go"
	wait_bg "$1"
	[ "$rc" -eq 0 ] || { show "$1"; fail "$1: the legacy program failed ($rc)"; }
	# before the scribble: unpinned, as asked
	[ "$(grep "^pinstatus $4 $5 = " "$WORK/$1.out" | head -n 1)" = "pinstatus $4 $5 = 0" ] ||
		{ show "$1"; fail "$1: [$4, +$5) was not unpinned before the scribble"; }
}

unpinned_then_end leaf 8192 4096 8K 4K
soft never_pinned leaf 8K 4K

unpinned_then_end root 65536 4096 64K 4K
soft never_pinned root 64K 4K

unpinned_then_end last 131072 0 128K 4K
soft never_pinned last 128K 4K

# the whole region asked, the leaf's end scribbled: the others still answer
unpinned_then_end whole 8192 4096 0 0
soft never_pinned whole 0 0
exit $FAILED
