#!/bin/sh
# SPDX-License-Identifier: MIT
# The order of a purge (DESIGN 6, 13), fixed: oldest range first across
# every file, whole ranges, a visit to a file taking its next ranges in
# age while they are older than every other file's oldest, and a pass
# ending once the goal is met. Twelve ranges over four files, marked in an
# interleaved order; six `volatile purge --bytes`, a budget at a MARK,
# `volatile purge --all`: after each, the set of purged ranges must be
# exactly the oldest ones, as many as the goal asks.
. "$(dirname "$0")/lib.sh"
need_cmd

a=$WORK/a
b=$WORK/b
c=$WORK/c
d=$WORK/d

# purged NAME: the purged ranges, as file@KiB in file then offset order,
# from `volatile status --json` (NAME.out)
purged() {
	status_json "$1"
	jq_py "$1" '" ".join("%s@%d" % (f["path"].rsplit("/", 1)[1], r["offset"] // 1024)
		for f in sorted(d["file_list"], key=lambda f: f["path"])
		for r in f["ranges"] if r["purged"]) or "none"'
}

# step NAME SIZE 'RANGES...' 'PURGED...': purge SIZE (or --all), then the
# command's own summary and the purged set must be those
step() {
	if [ "$2" = all ]; then
		ok "$1" vol purge --all
	else
		ok "$1" vol purge --bytes "$2"
	fi
	grep -q "^purged $3" "$WORK/$1.out" || {
		show "$1"
		fail "$1: want 'purged $3'"
	}
	_got=$(purged "$1.status")
	[ "$_got" = "$4" ] || fail "$1: purged after it: $_got (want: $4)"
}

new_region
for x in "$a" "$b" "$c" "$d"; do
	mkfile "$x" 64K X
done
# ages 1..12, each MARK further from the last than the age order's bound
# (apart: DESIGN 10); 4 KiB apart, so no two ranges touch (none merges)
ok marks svt open "$a" rw mark 0 4K apart mark 8K 4K apart open "$b" rw mark 0 4K apart \
	open "$c" rw mark 0 4K apart open "$a" rw mark 16K 4K apart open "$d" rw mark 0 4K apart \
	open "$b" rw mark 8K 4K apart mark 16K 4K apart open "$c" rw mark 8K 4K apart \
	open "$d" rw mark 8K 4K apart open "$a" rw mark 24K 4K apart open "$c" rw mark 16K 4K apart
[ "$(purged none)" = none ] || fail "purged before any purge: $(purged none2)"

# the oldest, a@0
step p1 4K "1 range, 4096 bytes" "a@0"
# a@8: a's next (a@16, age 5) is younger than b's oldest (b@0, 3): then b@0
step p2 6K "2 ranges, 8192 bytes" "a@0 a@8 b@0"
# a byte is a whole range: c@0
step p3 1 "1 range, 4096 bytes" "a@0 a@8 b@0 c@0"
# a@16 (5), d@0 (6), b@8 (7)
step p4 12K "3 ranges, 12288 bytes" "a@0 a@8 a@16 b@0 b@8 c@0 d@0"
# b@16 (8) and c@8 (9)
step p5 8K "2 ranges, 8192 bytes" "a@0 a@8 a@16 b@0 b@8 b@16 c@0 c@8 d@0"
# d@8 (10)
step p6 4K "1 range, 4096 bytes" "a@0 a@8 a@16 b@0 b@8 b@16 c@0 c@8 d@0 d@8"

# a budget of 4K at a MARK of d@16 (13): a@24 (11) and c@16 (12) go, d@16 stays
ok budget svte VOLATILE_BUDGET=4K -- open "$d" rw mark 16K 4K
_got=$(purged budget.status)
_want="a@0 a@8 a@16 a@24 b@0 b@8 b@16 c@0 c@8 c@16 d@0 d@8"
[ "$_got" = "$_want" ] || fail "budget: purged after it: $_got (want: $_want)"

step all all "1 range, 4096 bytes" "a@0 a@8 a@16 a@24 b@0 b@8 b@16 c@0 c@8 c@16 d@0 d@8 d@16"

# and the bytes: every range punched, nothing else
for x in "$a" "$b" "$c" "$d"; do
	ok "check.${x##*/}" vt open "$x" r expect 4K 4K X expect 12K 4K X expect 20K 4K X \
		expect 28K 36K X
done
exit 0
