#!/bin/sh
# SPDX-License-Identifier: MIT
# The man pages are valid roff with no warnings (groff -ww, and the man
# macros' style checks), every page is installed, and every ".so" page
# points at a page that exists.
. "$(dirname "$0")/lib.sh"
command -v groff >/dev/null 2>&1 || skip "groff is not installed: the pages cannot be checked"
: "${VL_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
mandir=$VL_TOP_SRCDIR/man
n=0
for page in "$mandir"/*.[1-8]; do
	n=$((n + 1))
	name=${page##*/}
	grep -qw "man/$name" "$VL_TOP_SRCDIR/Makefile.am" || fail "$name is not installed (Makefile.am)"
	first=$(head -n 1 "$page")
	case $first in
	.so\ *)
		target=${first#.so }
		[ -f "$mandir/${target##*/}" ] || fail "$name: .so to a page that does not exist: $target"
		continue
		;;
	esac
	groff -man -ww -z -rCHECKSTYLE=3 -Tutf8 "$page" >"$WORK/groff.out" 2>&1
	if [ -s "$WORK/groff.out" ]; then
		cat "$WORK/groff.out" >&2
		fail "$name: groff warnings"
	fi
done
[ "$n" -ge 10 ] || fail "only $n man pages found in $mandir"
say "$n pages, no warnings"
exit 0
