#!/bin/sh
# SPDX-License-Identifier: MIT
# DESIGN 5: a block device is not tmpfs: MARK and UNMARK give EOPNOTSUPP,
# while the kernel's own modes pass through with the kernel's answers,
# 0x04 and 0x08 included, even with the 2012 aliases turned on
# (VOLATILE_2012_ABI=1: they are for tmpfs files only).
# Skipped (77) where no loop device can be set up.
. "$(dirname "$0")/lib.sh"

# (in /usr/sbin, which a user's PATH lacks on Debian; package mount)
PATH=$PATH:/usr/sbin:/sbin
command -v losetup >/dev/null 2>&1 || skip "losetup (package mount) is not installed"
img=$WORK/disk.img
vt open "$img" rwt fill 0 1M L >/dev/null || fail "cannot write $img"
dev=$(losetup -f --show "$img" 2>"$WORK/losetup.err") ||
	skip "cannot set up a loop device here: $(cat "$WORK/losetup.err")"
LOOP_DEVS=$dev
[ -b "$dev" ] || skip "$dev is not a block device here"

# ---- the volatile modes ---------------------------------------------------------
ok blk svt open "$dev" rw mark 0 4096 unmark 0 4096 fa 'MARK|KEEP_SIZE' 0 4096 \
	fa64 UNMARK 0 4096 mark -1 4096 fa 'MARK|UNMARK' 0 4096 mark max 1 \
	open "$dev" r mark 0 4096 expect 0 1M L
expect_out blk <<EOF
open $dev rw = 3
mark 0 4096 = -1 EOPNOTSUPP
unmark 0 4096 = -1 EOPNOTSUPP
fa MARK|KEEP_SIZE 0 4096 = -1 EOPNOTSUPP
fa64 UNMARK 0 4096 = -1 EOPNOTSUPP
mark -1 4096 = -1 EINVAL
fa MARK|UNMARK 0 4096 = -1 EINVAL
mark max 1 = -1 EFBIG
open $dev r = 4
mark 0 4096 = -1 EBADF
expect 0 1M L ok
EOF

# ---- the kernel's modes: the same with and without the shim ------------------------
# A loop device's answers depend on its history (a failed discard turns
# discard off), so each run gets a fresh one. The aliases are on: the shim
# looks at the fd (a block device on devtmpfs, which reports TMPFS_MAGIC)
# and must still pass 0x04 and 0x08 on.
VOLATILE_2012_ABI=1
export VOLATILE_2012_ABI
for m in 0x4 0x5 0x8 0x9 0x0 0x1 'PUNCH_HOLE|KEEP_SIZE' 'ZERO_RANGE|KEEP_SIZE' 0x10 0x2; do
	set -- "$@" fa "$m" 8K 4K fa64 "$m" 8K 4K
done
for how in vt svt; do
	img2=$WORK/$how.img
	vt open "$img2" rwt fill 0 1M L >/dev/null || fail "cannot write $img2"
	dev2=$(losetup -f --show "$img2" 2>"$WORK/losetup.err") ||
		fail "a second loop device: $(cat "$WORK/losetup.err")"
	LOOP_DEVS="$LOOP_DEVS $dev2"
	ok "pass-$how" $how open "$dev2" rw "$@" expect 0 8K L expect 12K 1012K L
	sed -i "s|^open $dev2 |open LOOP |" "$WORK/pass-$how.out"
done
if ! diff -u "$WORK/pass-vt.out" "$WORK/pass-svt.out" >&2; then
	fail "the kernel's modes on a block device differ with the shim"
fi
exit 0
