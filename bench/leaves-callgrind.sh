#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/leaves-callgrind.sh BENCH [PAIRS [RANGES]]: instructions and last-level
# misses a MARK+UNMARK pair, core only, each layout of both formats
# (bench/leaves.c), as callgrind's cache simulation counts them. Only the
# loop of pairs is counted, after as many pairs to warm the caches.
bench=$1
pairs=${2:-20000}
ranges=${3:-1000000}
command -v valgrind >/dev/null 2>&1 || { echo "valgrind is not installed: skipped"; exit 0; }
out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT
printf '%-9s %10s %10s %8s\n' layout Ir/pair LLmiss/pair B/range
for f in f9 lv; do
	for l in one hot rand apart touch; do
		valgrind -q --tool=callgrind --cache-sim=yes --instr-atstart=no \
			--collect-atstart=no --callgrind-out-file="$out/$f-$l" \
			"$bench" --callgrind --only "$f-$l" --pairs "$pairs" --ranges "$ranges" \
			>"$out/$f-$l.txt" 2>"$out/$f-$l.err" || { cat "$out/$f-$l.err"; exit 1; }
		bpr=$(sed -n 's/.* \([0-9.]*\) bytes a range/\1/p' "$out/$f-$l.txt")
		awk -v name="$f-$l" -v p="$pairs" -v bpr="$bpr" '
			/^events:/ { for (i = 2; i <= NF; i++) ev[i - 1] = $i }
			/^(summary|totals):/ {
				for (i = 2; i <= NF; i++) v[ev[i - 1]] = $i
				ll = v["ILmr"] + v["DLmr"] + v["DLmw"]
				printf "%-9s %10.0f %10.2f %8s\n", name, v["Ir"] / p, ll / p, bpr
				exit
			}' "$out/$f-$l"
	done
done
