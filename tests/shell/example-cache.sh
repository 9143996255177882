#!/bin/sh
# SPDX-License-Identifier: MIT
# examples/cache.sh, the README's recipe for shell scripts (volatile mark,
# volatile unmark: exit 0 intact, 1 purged), run as the README shows it,
# from the source tree with the built command on PATH: a first run makes
# every value and marks each file; `volatile purge --bytes 1` purges the
# oldest range (the first key's file, now zeros); the next run regenerates
# that key, byte for byte as before, and finds the others intact; after
# `volatile purge --all` it regenerates every key.
. "$(dirname "$0")/lib.sh"
need_cmd
: "${VL_TOP_SRCDIR:?make check sets VL_TOP_SRCDIR}"

# every command run here is one the README shows, word for word
readme_shows() {
	grep -qF -- "$1" "$VL_TOP_SRCDIR/README.md" || fail "the README no longer shows '$1': the test runs what it shows"
}
for c in 'sh examples/cache.sh a b c d' 'volatile purge --bytes 1' 'volatile purge --all'; do
	readme_shows "$c"
done

PATH=$VL_TOP_BUILDDIR/src:$PATH
CACHE_DIR=$WORK/cache
export PATH CACHE_DIR
cd "$VL_TOP_SRCDIR" || fail "cannot cd to $VL_TOP_SRCDIR"
command -v volatile | grep -qx "$VL_TOP_BUILDDIR/src/volatile" || fail "volatile on PATH is $(command -v volatile), not the build's"

# recipe NAME: run the recipe over a b c d; its lines in $WORK/NAME.out
recipe() {
	run "$1" timeout "$VL_TIMEOUT" sh examples/cache.sh a b c d
	if [ "$rc" -ne 0 ] || [ -s "$WORK/$1.err" ]; then
		show "$1"
		fail "examples/cache.sh exited $rc (want 0, nothing on stderr)"
	fi
}
# states: the recipe's word for each key, in order
states() {
	awk '{ printf "%s%s=%s", sep, $1, $2; sep = " " } END { print "" }' "$WORK/$1.out"
}
expect_states() {
	[ "$(states "$1")" = "$2" ] || { show "$1"; fail "$3: got '$(states "$1")', want '$2'"; }
}
# zeros FILE: FILE is not empty and holds nothing but zeros
zeros() {
	[ -s "$1" ] && [ "$(tr -d '\000' <"$1" | wc -c)" -eq 0 ]
}

recipe first
expect_states first "a=made b=made c=made d=made" "the first run"
for k in a b c d; do
	cp "$CACHE_DIR/$k" "$WORK/$k.before"
done
vol status --json >"$WORK/status.json" || fail "volatile status --json failed"
[ "$(grep -o '"path": *"[^"]*/cache/[abcd]"' "$WORK/status.json" | wc -l)" -eq 4 ] ||
	{ cat "$WORK/status.json" >&2; fail "status does not list the 4 cache files as volatile"; }

run purge1 volatile purge --bytes 1
grep -q '^purged 1 range, [0-9]* bytes' "$WORK/purge1.out" || { show purge1; fail "volatile purge --bytes 1 did not purge one range"; }
zeros "$CACHE_DIR/a" || fail "the oldest file (a) was not purged: it does not read as zeros"
for k in b c d; do
	cmp -s "$CACHE_DIR/$k" "$WORK/$k.before" || fail "$k changed although only a was purged"
done

recipe second
expect_states second "a=regenerated b=intact c=intact d=intact" "after purging the oldest range"
for k in a b c d; do
	cmp -s "$CACHE_DIR/$k" "$WORK/$k.before" || fail "$k after the second run differs from its first value"
done

run purge2 volatile purge --all
grep -q '^purged 4 ranges' "$WORK/purge2.out" || { show purge2; fail "volatile purge --all did not purge the 4 files"; }
recipe third
expect_states third "a=regenerated b=regenerated c=regenerated d=regenerated" "after purging everything"
for k in a b c d; do
	cmp -s "$CACHE_DIR/$k" "$WORK/$k.before" || fail "$k regenerated differs from its first value"
done

recipe fourth
expect_states fourth "a=intact b=intact c=intact d=intact" "with nothing purged"
say "regenerated exactly what was purged: a after --bytes 1, all four after --all"
exit 0
