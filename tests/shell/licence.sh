#!/bin/sh
# SPDX-License-Identifier: MIT
# The licence: COPYING holds the MIT licence, and every source
# file, header, script and man page of the tree names it in an SPDX line
# among its first three lines; debian/copyright, where the tree has it,
# names it in Debian's machine-readable format (Expat). Run over the
# source tree as it is (a clone, or the tarball under distcheck).
. "$(dirname "$0")/lib.sh"
: "${VL_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
top=$VL_TOP_SRCDIR

[ -f "$top/COPYING" ] || fail "no COPYING in $top"
head -n 1 "$top/COPYING" | grep -qx 'MIT License' || fail "COPYING is not the MIT licence: $(head -n 1 "$top/COPYING")"
grep -q 'SPDX-License-Identifier\|MIT' "$top/README.md" || fail "the README does not name the licence"

# the files of the kinds that carry the line, outside build trees
find "$top/src" "$top/include" "$top/tests" "$top/bench" "$top/examples" "$top/man" "$top/data" \
	-type d \( -name 'build*' -o -name autom4te.cache -o -name go-build -o -name corpus-\* \
		-o -name .libs -o -name .deps \) -prune -o -type f \
	\( -name '*.c' -o -name '*.h' -o -name '*.S' -o -name '*.map' -o -name '*.go' \
		-o -name '*.sh' -o -name '*.py' -o -name '*.[137]' -o -name '*.service.in' \) \
	-print >"$WORK/files"
for f in Makefile.am configure.ac libvolatile.pc.in .ci/run debian/rules; do
	[ -f "$top/$f" ] && echo "$top/$f" >>"$WORK/files"
done
n=$(wc -l <"$WORK/files")
[ "$n" -ge 100 ] || fail "found only $n source files under $top: is VL_TOP_SRCDIR right?"
# a man page that is only a link (.so on its first line, as man-db wants
# it) has no text of its own to license
while read -r f; do
	case $(head -n 1 "$f") in .so\ *) continue ;; esac
	head -n 3 "$f" | grep -q 'SPDX-License-Identifier: MIT' || echo "${f#"$top"/}"
done <"$WORK/files" >"$WORK/missing"
if [ -s "$WORK/missing" ]; then
	sed 's/^/  /' "$WORK/missing" >&2
	fail "$(wc -l <"$WORK/missing") of $n files lack 'SPDX-License-Identifier: MIT' in their first three lines (above)"
fi
say "$n files carry the SPDX line"

if [ -f "$top/debian/copyright" ]; then
	c=$top/debian/copyright
	head -n 1 "$c" | grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' ||
		fail "debian/copyright is not in the machine-readable format"
	grep -q '^License: Expat$' "$c" || fail "debian/copyright does not name the Expat (MIT) licence"
	grep -q 'not-stated' "$c" && fail "debian/copyright still says the licence is not stated"
fi
exit 0
