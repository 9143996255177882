#!/bin/sh
# SPDX-License-Identifier: MIT
# DESIGN 5: a regular file on a disk file system (not tmpfs) gives
# EOPNOTSUPP, after the rows before it in the kernel's order (EINVAL,
# EBADF, EFBIG on overflow). The maximum-size row is in errors-edge.sh.
. "$(dirname "$0")/lib.sh"
need_disk

f=$DISK/file
vt open "$f" rwt fill 0 64K D >/dev/null || fail "cannot write $f"

ok disk svt open "$f" rw mark 0 4096 unmark 0 4096 fa 'MARK|KEEP_SIZE' 0 4096 \
	fa64 UNMARK 0 4096 mark -1 4096 fa 'MARK|PUNCH_HOLE' 0 4096 \
	open "$f" r mark 0 4096 open "$f" rw mark max 1 expect 0 64K D size
expect_out disk <<EOF
open $f rw = 3
mark 0 4096 = -1 EOPNOTSUPP
unmark 0 4096 = -1 EOPNOTSUPP
fa MARK|KEEP_SIZE 0 4096 = -1 EOPNOTSUPP
fa64 UNMARK 0 4096 = -1 EOPNOTSUPP
mark -1 4096 = -1 EINVAL
fa MARK|PUNCH_HOLE 0 4096 = -1 EINVAL
open $f r = 4
mark 0 4096 = -1 EBADF
open $f rw = 5
mark max 1 = -1 EFBIG
expect 0 64K D ok
size = 65536
EOF

exit 0
