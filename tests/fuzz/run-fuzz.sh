#!/bin/sh
# SPDX-License-Identifier: MIT
# run-fuzz.sh NAME: run the libFuzzer target tests/fuzz/fuzz-NAME.
#
# First every input of the committed corpus tests/fuzz/corpus-NAME once
# (the seeds, and the regressions: inputs that once found a bug), then
# fuzzing from that corpus for a fixed budget:
#   make check:  FUZZ_RUNS inputs (default: 20000 for region, 4000 for
#                ranges, whose inputs are longer) with a fixed seed
#                (FUZZ_SEED, default 1), at most 60 seconds
#   make fuzz:   FUZZ_TIME seconds, a seed of libFuzzer's choosing; the
#                inputs found stay in tests/fuzz/work-NAME (FUZZ_KEEP=1)
# A crash, a leak or an input that runs longer than 10 seconds fails the
# run; libFuzzer writes it to tests/fuzz/found-NAME-crash-* (or timeout-,
# leak-) in the build tree: reproduce it with `tests/fuzz/fuzz-NAME FILE`, and
# once fixed, add it to the corpus as a regression.
#
# Exits 77 (skipped) when configure found no clang that links a fuzzer.
set -u

name=$1
top_src=${VL_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
top_build=${VL_TOP_BUILDDIR:-.}
bin=$top_build/tests/fuzz/fuzz-$name
corpus=$top_src/tests/fuzz/corpus-$name
case $name in
ranges) runs=4000 ;;
*) runs=20000 ;;
esac

if [ "${VL_FUZZ:-no}" != yes ] || [ ! -x "$bin" ]; then
	echo "clang with libFuzzer is not installed: fuzz-$name skipped"
	exit 77
fi

# libFuzzer's options; the same for the replay and the run
# (-error_exitcode: libFuzzer's default, 77, would read as "skipped" to make check)
opts="-timeout=10 -rss_limit_mb=2048 -error_exitcode=1 -artifact_prefix=$top_build/tests/fuzz/found-$name-"

log=$(mktemp "${TMPDIR:-/tmp}/fuzz-$name.log.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT

echo "== fuzz-$name: the $(ls "$corpus" | wc -l) inputs of $corpus"
# shellcheck disable=SC2086
if ! "$bin" $opts "$corpus"/* >"$log" 2>&1; then
	grep -v '^INFO\|^Running:\|^Executed' "$log" | head -n 200
	echo "fuzz-$name: an input of the corpus fails (run: $bin $corpus/*)"
	exit 1
fi
echo "$(grep -c '^Executed' "$log") inputs, none fails"

if [ "${FUZZ_KEEP:-0}" = 1 ]; then
	work=$top_build/tests/fuzz/work-$name
	mkdir -p "$work" || exit 1
	budget="-max_total_time=${FUZZ_TIME:-300}"
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-$name.XXXXXX") || exit 1
	trap 'rm -f "$log"; rm -rf "$work"' EXIT
	budget="-runs=${FUZZ_RUNS:-$runs} -seed=${FUZZ_SEED:-1} -max_total_time=60"
fi

echo "== fuzz-$name: $budget"
start=$(date +%s)
# shellcheck disable=SC2086
"$bin" $opts $budget -print_final_stats=1 "$work" "$corpus" >"$log" 2>&1
rc=$?
end=$(date +%s)
# the progress lines are many; the report of a failure and the stats are not
sed -e '/^###### Recommended dictionary/,/^###### End of recommended dictionary/d' "$log" |
	grep -v '^#[0-9].*\(NEW\|REDUCE\|pulse\)\|NEW_FUNC\|^INFO' | head -n 200
echo "== fuzz-$name: $((end - start)) s, exit $rc"
exit $rc
