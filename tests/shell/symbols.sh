#!/bin/sh
# libvolatile.so exports the names it interposes and its documented API,
# nothing else (everything else is -fvisibility=hidden): a helper that
# leaked would be a symbol every program it is preloaded into could bind
# to by accident. The list, src/libvolatile.map (the version script the
# library is linked with), is the contract; README lists it too.
. "$(dirname "$0")/lib.sh"
command -v nm >/dev/null 2>&1 || skip "nm (binutils) is not installed"

# the list is the version script the library is linked with; vfork is x86_64's only
map=${VL_TOP_SRCDIR:-$VL_TOP_BUILDDIR/..}/src/libvolatile.map
[ -r "$map" ] || fail "$map is not there"
sed -n 's/^	\([A-Za-z_][A-Za-z0-9_]*\);$/\1/p' "$map" >"$WORK/want"
[ "$(uname -m)" = x86_64 ] || sed -i '/^vfork$/d' "$WORK/want"
[ "$(wc -l <"$WORK/want")" -ge 60 ] || fail "$map lists only $(wc -l <"$WORK/want") names"
LC_ALL=C sort -o "$WORK/want" "$WORK/want"
nm -D --defined-only "$VOLATILE_LIBRARY" | awk 'NF == 3 && $2 != "A" { print $3 }' |
	LC_ALL=C sort -u >"$WORK/got" || fail "nm failed on $VOLATILE_LIBRARY"
if ! diff -u "$WORK/want" "$WORK/got" >"$WORK/diff"; then
	cat "$WORK/diff" >&2
	fail "the exported symbols differ from the contract (-: missing, +: leaked)"
fi
# ...and calls none of them itself: a name the library defines that is also
# one of its own relocations (a call through the PLT) would send the
# library's own call into its own hook (sys.h: the vl_raw_ layer).
command -v objdump >/dev/null 2>&1 || skip "objdump (binutils) is not installed"
objdump -R "$VOLATILE_LIBRARY" |
	awk '$2 ~ /JUMP_SLOT|GLOB_DAT/ { sub(/@.*/, "", $3); print $3 }' |
	LC_ALL=C sort -u >"$WORK/calls" || fail "objdump failed on $VOLATILE_LIBRARY"
LC_ALL=C comm -12 "$WORK/got" "$WORK/calls" >"$WORK/both"
[ ! -s "$WORK/both" ] ||
	fail "the library calls names it defines, through its own hooks: $(tr '\n' ' ' <"$WORK/both")"
say "$(wc -l <"$WORK/got") symbols exported, as documented, none called through the PLT"
exit 0
