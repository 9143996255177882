#!/bin/sh
# SPDX-License-Identifier: MIT
# A file's record is kept while the file has no range (made
# once per file, not at every MARK), and records with no range are the
# first to go when the table is full: nothing is lost. In a region with
# room for 8 files, one process marks and unmarks 40 memfds in turn, each
# closed after; another keeps a range of its own file throughout. Every
# MARK must succeed (before the empty records were freed first, the
# ninth would wait for the minute of silence eviction asks, ENOMEM), and
# the range kept must still be there, unpurged.
. "$(dirname "$0")/lib.sh"
need_cmd

new_region
export VOLATILE_REGION_FILES=8
mkfile "$WORK/kept" 64K K
ok keep svt open "$WORK/kept" rw mark 0 16K
args=
i=0
while [ "$i" -lt 40 ]; do
	args="$args memfd m$i 4K mark 0 4K unmark 0 4K close"
	i=$((i + 1))
done
# shellcheck disable=SC2086 # one word per argument, on purpose
ok cycle svt $args
n=$(grep -c '^mark 0 4K = 0$' "$WORK/cycle.out")
[ "$n" -eq 40 ] || { show cycle; fail "only $n of 40 MARKs of new files succeeded in a table of 8"; }
grep -c '^unmark 0 4K = 0$' "$WORK/cycle.out" | grep -qx 40 || { show cycle; fail "an UNMARK said other than 0"; }
ok back svt open "$WORK/kept" rw unmark 0 16K expect 0 64K K
expect_line back "unmark 0 16K = 0"
say "40 files marked in turn in a table of 8; the range kept stayed"
