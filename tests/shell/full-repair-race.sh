#!/bin/sh
# SPDX-License-Identifier: MIT
# Several MARKs that find the region full at once, each repairing the
# files whose lock a dead process holds (ops.c reserve_when_full, lock.c
# vl_repair_dead_holders; DESIGN 10): one takes the dead holder's lock
# over (compare-and-swap), the others pass it by; none waits for another's
# file lock, and the chunk the dead freer held comes back once.
#
# A region with room for 8 ranges (two chunks). P marks 8 ranges of f,
# unmarks them and is killed as its last UNMARK gives a chunk back (the
# chunk PENDING of f, f's lock held by a dead process: chunk-other-file.sh).
# Then four processes at once, each on a file of its own, mark 8 ranges,
# hold them 200 ms and unmark them: the region has room for 8 of the 32, so most fail
# ENOMEM, but 8 at least must be made (the dead freer's chunk repaired
# back); every call must be answered (0 or ENOMEM, never EUCLEAN, never a
# hang), every UNMARK of a range made must say 0 (nothing is purged: no
# budget), f's lock must be free after, the region must count no range,
# and a fresh process must then make 8 of 8. Five rounds.
. "$(dirname "$0")/lib.sh"
need_cmd
. "$(dirname "$0")/chunk-lib.sh"
need_lockword

for round in 1 2 3 4 5; do
	new_region
	f=$WORK/f$round
	mkfile "$f" 64K A
	for k in 1 2 3 4; do
		mkfile "$WORK/g$round.$k" 64K G
	done

	freer P$round "$f"
	kill -KILL "$fpid"
	wait_bg P$round

	for k in 1 2 3 4; do
		# shellcheck disable=SC2086
		bg M${round}_$k svt open "$WORK/g$round.$k" rw wait "$WORK/go$round" $marks \
			sleep 200 $unmarks
	done
	: >"$WORK/go$round"
	made=0
	for k in 1 2 3 4; do
		n=M${round}_$k
		wait_bg "$n"
		[ "$rc" -eq 0 ] || { show "$n"; fail "$n: exit status $rc"; }
		if grep -v -e '^open ' -e '^wait ' -e '^sleep ' -e '^mark .* = 0$' -e '^mark .* = -1 ENOMEM$' -e '^unmark ' "$WORK/$n.out" |
			grep -q .; then
			show "$n"
			fail "$n: a MARK answered neither 0 nor ENOMEM in a full region"
		fi
		# an UNMARK of a range made says 0; of one refused, 0 too (nothing there)
		grep -q '^unmark .* = [^0]' "$WORK/$n.out" &&
			{ show "$n"; fail "$n: an UNMARK did not say 0, with nothing purged"; }
		made=$((made + $(grep -c '^mark .* = 0$' "$WORK/$n.out")))
	done
	ok lw$round "$LOCKWORD" slot "$f"
	slot=$(sed -n 's/^slot .* = //p' "$WORK/lw$round.out")
	ok lw${round}w "$LOCKWORD" word "$slot" counts
	say "round $round: $made MARKs made by the four; $(tr '\n' ' ' <"$WORK/lw${round}w.out")"
	# 8 at once at most; fewer: the dead freer's chunk never came back
	[ "$made" -ge 8 ] || fail "round $round: the four made $made MARKs in a region with room for 8"
	expect_line lw${round}w "word $slot = 0"
	expect_line lw${round}w "counts = ranges=0 bytes=0"
	marks_made "$WORK/g$round.1" after$round
	[ "$made" -eq 8 ] || { show after$round; fail "round $round: after the four, a fresh process made $made of 8"; }
done
exit $FAILED
