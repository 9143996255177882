#!/bin/sh
# SPDX-License-Identifier: MIT
# A tmpfs inode reborn within one clock tick is another file (DESIGN
# 14). Mount a tmpfs, mark 4K of its first file, remove it,
# unmount, mount a tmpfs at the same place and make its first file at
# once: same anonymous device number, same inode number, and mostly the
# same birth time (tmpfs takes it from the coarse clock). The library
# tells them apart by the inode's generation (its file handle): a purge
# of everything must never change a byte of the new file, and its UNMARK
# must say 0. tests/helpers/reborn does 1,000 tries in a private mount
# namespace (unshare -m as root, unshare -Urm otherwise).
. "$(dirname "$0")/lib.sh"

REBORN=$VL_TOP_BUILDDIR/tests/helpers/reborn
[ -x "$REBORN" ] || fail "$REBORN is not built (make check builds it)"
command -v unshare >/dev/null 2>&1 || skip "unshare (util-linux) is not installed"
mount_ns || skip "cannot make a mount namespace ($MOUNT_NS): $(cat "$WORK/unshare.err")"
ns=$MOUNT_NS
mkdir "$WORK/mnt"

# The 1,000 tries take some 20 s under ASan, and over 120 s beside other
# work on a loaded machine (make -j6 check beside busy loops): the bound
# only stops a hang.
# shellcheck disable=SC2086
run reborn timeout 900 $ns "$REBORN" "$WORK/mnt" 1000
case $rc in
0) ;;
2) grep -q 'mount' "$WORK/reborn.err" && skip "cannot mount a tmpfs here: $(cat "$WORK/reborn.err")"
   show reborn; fail "reborn could not run" ;;
124) show reborn; fail "reborn did not finish its 1000 tries in 900 s" ;;
*) show reborn; fail "a never-marked file reborn with a marked file's numbers was changed" ;;
esac
same=$(sed -n 's/^tries 1000 same \([0-9]*\)$/\1/p' "$WORK/reborn.out")
[ -n "$same" ] || { show reborn; fail "reborn said no count"; }
say "1000 tries: $same with the old file's device, inode number and birth time; no byte changed"
# the test proves something only if the numbers really came back
[ "$same" -ge 100 ] || fail "only $same of 1000 new files had the old file's numbers: the test shows nothing here"
