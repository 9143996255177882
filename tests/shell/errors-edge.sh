#!/bin/sh
# SPDX-License-Identifier: MIT
# Corner cases of DESIGN 5's order ("the order of the kernel's
# vfs_fallocate"), where the answer is the one the kernel gives:
# - an O_PATH fd is not open as far as fallocate is concerned: EBADF,
#   and it wins over EINVAL, as for a closed fd;
# - offset + len beyond the maximum file size of a disk file system (ext4:
#   16 TiB), without overflow: the kernel says EFBIG for its own modes. For
#   MARK/UNMARK on such a file libvolatile says EOPNOTSUPP instead, a
#   documented deviation (doc/decisions.md): another file system's
#   maximum size cannot be learnt from userspace without a side effect on
#   the file (every probe either allocates, punches, converts inline data,
#   or opens and closes the file, which drops the caller's POSIX locks).
#   The row asserts that documented answer, and that nothing is touched.
. "$(dirname "$0")/lib.sh"

f=$WORK/file
mkfile "$f" 64K A

# ---- O_PATH -----------------------------------------------------------------------
ok kernel-path vt open "$f" path fa 0 -1 1 fa KEEP_SIZE 0 0 fa 'PUNCH_HOLE|KEEP_SIZE' 0 -5
expect_out kernel-path <<EOF
open $f path = 3
fa 0 -1 1 = -1 EBADF
fa KEEP_SIZE 0 0 = -1 EBADF
fa PUNCH_HOLE|KEEP_SIZE 0 -5 = -1 EBADF
EOF
ok opath svt open "$f" path mark 0 4096 unmark 0 4096 mark -1 1 mark 0 0 unmark 0 -5 \
	fa 'MARK|UNMARK' 0 4096 fa 'MARK|PUNCH_HOLE' 0 4096
soft expect_out opath <<EOF
open $f path = 3
mark 0 4096 = -1 EBADF
unmark 0 4096 = -1 EBADF
mark -1 1 = -1 EBADF
mark 0 0 = -1 EBADF
unmark 0 -5 = -1 EBADF
fa MARK|UNMARK 0 4096 = -1 EBADF
fa MARK|PUNCH_HOLE 0 4096 = -1 EBADF
EOF

# ---- beyond the disk file system's maximum size -----------------------------------------
[ -n "$DISK" ] || { say "no disk file system: maximum size row not run"; exit "$FAILED"; }
case $(fs_type "$DISK") in
ext2/ext3) ;;
*)
	say "the disk file system is $(fs_type "$DISK"), not ext4: maximum size row not run"
	exit "$FAILED"
	;;
esac
d=$DISK/file
vt open "$d" rwt fill 0 64K D >/dev/null || fail "cannot write $d"
# the kernel's answer there (nothing is allocated: it is refused)
ok kernel-max vt open "$d" rw fa KEEP_SIZE 1P 4096 fa 'PUNCH_HOLE|KEEP_SIZE' 1P 4096
expect_out kernel-max <<EOF
open $d rw = 3
fa KEEP_SIZE 1P 4096 = -1 EFBIG
fa PUNCH_HOLE|KEEP_SIZE 1P 4096 = -1 EFBIG
EOF
ok maxsize svt open "$d" rw mark 1P 4096 unmark 1P 4096 fa 'MARK|KEEP_SIZE' 17T 4K size \
	expect 0 64K D
soft expect_out maxsize <<EOF
open $d rw = 3
mark 1P 4096 = -1 EOPNOTSUPP
unmark 1P 4096 = -1 EOPNOTSUPP
fa MARK|KEEP_SIZE 17T 4K = -1 EOPNOTSUPP
size = 65536
expect 0 64K D ok
EOF
exit "$FAILED"
