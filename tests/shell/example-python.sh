#!/bin/sh
# SPDX-License-Identifier: MIT
# examples/memfd_cache.py, the README's Python recipe (ctypes: fallocate
# with the modes of <volatile.h>, on a memfd), run as the README shows it,
# from the source tree with the built command on PATH: under `volatile
# run`, `volatile purge --bytes 512K` purges the two oldest chunks (256K
# each, a page apart, marked in order), the recipe's UNMARK says 1 for
# exactly those, finds them zeros, regenerates them, and every chunk then
# matches its first rendering; `volatile purge --all` makes it regenerate
# all 8. Without the library the recipe keeps every chunk pinned.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python
: "${VL_TOP_SRCDIR:?make check sets VL_TOP_SRCDIR}"

readme_shows() {
	grep -qF -- "$1" "$VL_TOP_SRCDIR/README.md" || fail "the README no longer shows '$1': the test runs what it shows"
}
PY='volatile run -- python3 examples/memfd_cache.py'
readme_shows "$PY volatile purge --bytes 512K"

PATH=$VL_TOP_BUILDDIR/src:$PATH
export PATH
cd "$VL_TOP_SRCDIR" || fail "cannot cd to $VL_TOP_SRCDIR"
command -v python3 >/dev/null || skip "python3 is needed and is missing"

# recipe NAME ARGS...: the recipe's output in $WORK/NAME.out, exit 0 wanted
recipe() {
	_n=$1
	shift
	run "$_n" timeout "$VL_TIMEOUT" "$@"
	if [ "$rc" -ne 0 ] || [ -s "$WORK/$_n.err" ]; then
		show "$_n"
		fail "'$*' exited $rc (want 0, nothing on stderr)"
	fi
}
# chunks NAME WORD: the numbers of the chunks whose line says WORD
chunks() {
	sed -n "s/^chunk \([0-9]*\) $2.*/\1/p" "$WORK/$1.out" | tr '\n' ' ' | sed 's/ $//'
}
expect() {
	grep -qx -- "$2" "$WORK/$1.out" || { show "$1"; fail "no line '$2'"; }
}
# the purge's line; a record of an earlier run's memfd, gone, may be forgotten too
expect_purged() {
	grep -q "^$2\(;.*\)\{0,1\}\$" "$WORK/$1.out" || { show "$1"; fail "no line '$2'"; }
}

# shellcheck disable=SC2086
recipe some $PY volatile purge --bytes 512K
expect_purged some 'purged 2 ranges, 524288 bytes'
[ "$(chunks some purged)" = "0 1" ] || { show some; fail "chunks purged: '$(chunks some purged)', want the two oldest, '0 1'"; }
[ "$(chunks some intact)" = "2 3 4 5 6 7" ] || { show some; fail "chunks intact: '$(chunks some intact)', want '2 3 4 5 6 7'"; }
expect some 'regenerated: 0 1'
expect some 'verified: 8 chunks'

# shellcheck disable=SC2086
recipe all $PY volatile purge --all
expect_purged all 'purged 8 ranges, 2097152 bytes'
[ "$(chunks all purged)" = "0 1 2 3 4 5 6 7" ] || { show all; fail "after --all, chunks purged: '$(chunks all purged)'"; }
expect all 'regenerated: 0 1 2 3 4 5 6 7'
expect all 'verified: 8 chunks'

# without the library: EOPNOTSUPP, every chunk pinned and intact
recipe none python3 examples/memfd_cache.py volatile purge --all
expect none 'volatile ranges are not available: every chunk stays pinned'
expect none 'regenerated: none'
expect none 'verified: 8 chunks'
say "regenerated exactly the purged chunks (0 1 of 8; then all 8); without the library none"
exit 0
