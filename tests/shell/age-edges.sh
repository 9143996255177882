#!/bin/sh
# SPDX-License-Identifier: MIT
# The wrap's edges (DESIGN 10), by the test build's VOLATILE_FAULT_AGE_SHIFT
# (seconds on the age clock): a marked at day 0, z at day 10, and nothing
# else in the region until one `volatile purge --bytes 4K` at day D:
#   D = 39.9 (a under the restamp limit) and 47.9 (over it: the purge pass
#   restamps a first): a is taken, the older;
#   D = 48.1 and 49.7 + 1 s (a region nobody touched for the 8 days after
#   40, which DESIGN 10 says a range reaches the wrap by): a reads as new,
#   z is taken: the order lost as said, and only it (one range of 4K
#   purged, the other intact).
# And a stamp ahead of the reader by more than the 1.7 days short of the
# wrap (b marked with the clock 10 days on) reads as 39.7 days old, not
# as now: it is taken before a range a day old.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

need_fault_lib
[ -x "$VOLATILE_FAULT_CMD" ] || fail "$VOLATILE_FAULT_CMD is not built (make check builds it)"

a=$WORK/a
b=$WORK/b
z=$WORK/z
mkfile "$a" 64K A
mkfile "$b" 64K B
mkfile "$z" 64K Z

purge_at() {
	ok "$1" env VOLATILE_FAULT_AGE_SHIFT="$2" timeout "$VL_TIMEOUT" \
		"$VOLATILE_FAULT_CMD" purge --bytes 4K
}

# edge NAME SECONDS WANT
edge() {
	new_region
	shifted "$1.a" 0 open "$a" rw mark 0 4K
	shifted "$1.z" 864000 open "$z" rw mark 0 4K
	purge_at "$1.p" "$2"
	got=$(purged_set "$1.s")
	[ "$got" = "$3" ] || fail "$1: a marked at day 0, z at day 10, purge at $2 s: purged $got (want $3)"
	n=$(jq_py "$1.s" 'sum(1 for f in d["file_list"] for r in f["ranges"] if r["purged"])')
	[ "$n" = 1 ] || fail "$1: $n ranges purged by --bytes 4K (want 1)"
	say "$1 ($2 s): purged $got"
}

edge d39.9 3447360 a
edge d47.9 4138560 a
edge d48.1 4155840 z
edge wrap 4294968 z

new_region
shifted ahead 864000 open "$b" rw mark 0 4K
ok yday svt open "$a" rw mark 0 4K
purge_at ahead.p 86400
got=$(purged_set ahead.s)
[ "$got" = b ] || fail "b stamped 10 days ahead, a now, purge a day on: purged $got (want b)"
say "a stamp 10 days ahead reads as 39.7 days old: taken first"
exit 0
