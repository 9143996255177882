#!/bin/sh
# SPDX-License-Identifier: MIT
# The errors of MARK and UNMARK, DESIGN 5, row by row, in the
# kernel's order, each with its exact errno. (Append-only and immutable
# files, disk files and block devices have their own tests:
# errors-attr.sh, errors-disk.sh, errors-blockdev.sh; the region's own
# errors are in region.sh.) Last, the fallback the README promises:
# without the shim, both modes fail with EOPNOTSUPP.
. "$(dirname "$0")/lib.sh"

f=$WORK/file
mkfile "$f" 64K A

# ---- fd not open: EBADF, and it wins over EINVAL -----------------------------
ok badf svt fd 99 mark 0 4096 unmark 0 4096 mark -1 4096 unmark 0 0 mark 0 -5 \
	fa 'MARK|UNMARK' 0 4096 fa 'MARK|PUNCH_HOLE' 0 4096 fa64 MARK 0 4096 \
	open "$f" rw close mark 0 4096 unmark 0 4096 mark -1 5
expect_out badf <<EOF
fd 99
mark 0 4096 = -1 EBADF
unmark 0 4096 = -1 EBADF
mark -1 4096 = -1 EBADF
unmark 0 0 = -1 EBADF
mark 0 -5 = -1 EBADF
fa MARK|UNMARK 0 4096 = -1 EBADF
fa MARK|PUNCH_HOLE 0 4096 = -1 EBADF
fa64 MARK 0 4096 = -1 EBADF
open $f rw = 3
close = 0
mark 0 4096 = -1 EBADF
unmark 0 4096 = -1 EBADF
mark -1 5 = -1 EBADF
EOF

# ---- offset < 0 or len <= 0: EINVAL ------------------------------------------------
ok inval svt open "$f" rw mark -1 5 mark -4096 4096 mark 0 0 mark 0 -1 mark 4096 -4096 \
	unmark -1 5 unmark 0 0 unmark 0 -1 fa64 MARK -1 1 fa64 UNMARK 0 0
expect_out inval <<EOF
open $f rw = 3
mark -1 5 = -1 EINVAL
mark -4096 4096 = -1 EINVAL
mark 0 0 = -1 EINVAL
mark 0 -1 = -1 EINVAL
mark 4096 -4096 = -1 EINVAL
unmark -1 5 = -1 EINVAL
unmark 0 0 = -1 EINVAL
unmark 0 -1 = -1 EINVAL
fa64 MARK -1 1 = -1 EINVAL
fa64 UNMARK 0 0 = -1 EINVAL
EOF

# ---- MARK with UNMARK, or with any flag but KEEP_SIZE: EINVAL ------------------------
# (and this row comes before "not open for writing": a read-only fd too)
ok modes svt open "$f" rw \
	fa 'MARK|UNMARK' 0 4096 fa 'MARK|UNMARK|KEEP_SIZE' 0 4096 \
	fa 'MARK|PUNCH_HOLE' 0 4096 fa 'MARK|PUNCH_HOLE|KEEP_SIZE' 0 4096 \
	fa 'UNMARK|PUNCH_HOLE|KEEP_SIZE' 0 4096 fa 'MARK|ZERO_RANGE' 0 4096 \
	fa 'UNMARK|COLLAPSE_RANGE' 0 4096 fa 'MARK|INSERT_RANGE' 0 4096 \
	fa 'MARK|NO_HIDE_STALE' 0 4096 fa 'UNMARK|UNSHARE_RANGE' 0 4096 \
	fa 'MARK|WRITE_ZEROES' 0 4096 fa 'MARK|0x100' 0 4096 fa 'UNMARK|0x40000000' 0 4096 \
	fa64 'MARK|PUNCH_HOLE' 0 4096 \
	fa 'MARK|KEEP_SIZE' 0 4096 fa 'UNMARK|KEEP_SIZE' 0 4096 \
	fa64 'MARK|KEEP_SIZE' 8K 4096 fa64 'UNMARK|KEEP_SIZE' 8K 4096 \
	open "$f" r fa 'MARK|PUNCH_HOLE' 0 4096 fa 'MARK|UNMARK' 0 4096 mark -1 1
expect_out modes <<EOF
open $f rw = 3
fa MARK|UNMARK 0 4096 = -1 EINVAL
fa MARK|UNMARK|KEEP_SIZE 0 4096 = -1 EINVAL
fa MARK|PUNCH_HOLE 0 4096 = -1 EINVAL
fa MARK|PUNCH_HOLE|KEEP_SIZE 0 4096 = -1 EINVAL
fa UNMARK|PUNCH_HOLE|KEEP_SIZE 0 4096 = -1 EINVAL
fa MARK|ZERO_RANGE 0 4096 = -1 EINVAL
fa UNMARK|COLLAPSE_RANGE 0 4096 = -1 EINVAL
fa MARK|INSERT_RANGE 0 4096 = -1 EINVAL
fa MARK|NO_HIDE_STALE 0 4096 = -1 EINVAL
fa UNMARK|UNSHARE_RANGE 0 4096 = -1 EINVAL
fa MARK|WRITE_ZEROES 0 4096 = -1 EINVAL
fa MARK|0x100 0 4096 = -1 EINVAL
fa UNMARK|0x40000000 0 4096 = -1 EINVAL
fa64 MARK|PUNCH_HOLE 0 4096 = -1 EINVAL
fa MARK|KEEP_SIZE 0 4096 = 0
fa UNMARK|KEEP_SIZE 0 4096 = 0
fa64 MARK|KEEP_SIZE 8K 4096 = 0
fa64 UNMARK|KEEP_SIZE 8K 4096 = 0
open $f r = 4
fa MARK|PUNCH_HOLE 0 4096 = -1 EINVAL
fa MARK|UNMARK 0 4096 = -1 EINVAL
mark -1 1 = -1 EINVAL
EOF
ok modes-check vt open "$f" r expect 0 64K A size

# ---- fd not open for writing: EBADF ---------------------------------------------------
ok rdonly svt open "$f" r mark 0 4096 unmark 0 4096 fa 'MARK|KEEP_SIZE' 0 4096 \
	fa64 UNMARK 0 4096 open "$f" path mark 0 4096 unmark 0 4096
expect_out rdonly <<EOF
open $f r = 3
mark 0 4096 = -1 EBADF
unmark 0 4096 = -1 EBADF
fa MARK|KEEP_SIZE 0 4096 = -1 EBADF
fa64 UNMARK 0 4096 = -1 EBADF
open $f path = 4
mark 0 4096 = -1 EBADF
unmark 0 4096 = -1 EBADF
EOF
# and a write-only fd is enough
ok wronly svt open "$f" w mark 0 4096 unmark 0 4096
expect_out wronly <<EOF
open $f w = 3
mark 0 4096 = 0
unmark 0 4096 = 0
EOF

# ---- pipe or FIFO: ESPIPE (the read end of a pipe is not writable: EBADF) --------------
mkfifo "$WORK/fifo" || fail "mkfifo"
ok pipe svt pipe mark 0 4096 unmark 0 4096 fa64 MARK 0 1 open "$WORK/fifo" rw mark 0 4096 unmark 0 1
sed -i 's/^pipe = .*/pipe = R W/' "$WORK/pipe.out"
expect_out pipe <<EOF
pipe = R W
mark 0 4096 = -1 ESPIPE
unmark 0 4096 = -1 ESPIPE
fa64 MARK 0 1 = -1 ESPIPE
open $WORK/fifo rw = 5
mark 0 4096 = -1 ESPIPE
unmark 0 1 = -1 ESPIPE
EOF
ok piperead svt pipe fd 3 mark 0 4096
expect_line piperead "mark 0 4096 = -1 EBADF"

# ---- directory: opened read-only, so EBADF, as the real fallocate says ----------------
ok dir svt open "$WORK" dir fa KEEP_SIZE 0 4096 mark 0 4096 unmark 0 4096
expect_out dir <<EOF
open $WORK dir = 3
fa KEEP_SIZE 0 4096 = -1 EBADF
mark 0 4096 = -1 EBADF
unmark 0 4096 = -1 EBADF
EOF

# ---- socket, character device: ENODEV ---------------------------------------------------
ok nodev svt socket mark 0 4096 unmark 0 4096 open /dev/null rw fa 0 0 4096 mark 0 4096 \
	unmark 0 4096 open /dev/zero rw mark 0 4096 fa64 UNMARK 0 1
sed -i 's/^socket = .*/socket = S S/' "$WORK/nodev.out"
expect_out nodev <<EOF
socket = S S
mark 0 4096 = -1 ENODEV
unmark 0 4096 = -1 ENODEV
open /dev/null rw = 5
fa 0 0 4096 = -1 ENODEV
mark 0 4096 = -1 ENODEV
unmark 0 4096 = -1 ENODEV
open /dev/zero rw = 6
mark 0 4096 = -1 ENODEV
fa64 UNMARK 0 1 = -1 ENODEV
EOF

# ---- offset + len overflows: EFBIG; up to the maximum size is fine ---------------------
ok fbig svt open "$f" rw fa KEEP_SIZE max 1 mark max 1 mark max-10 100 mark 1 max unmark max 1 \
	fa64 MARK max-4095 4096 mark max-4096 4096 unmark max-4096 4096 memfd m 4096 mark max 1 \
	size
expect_out fbig <<EOF
open $f rw = 3
fa KEEP_SIZE max 1 = -1 EFBIG
mark max 1 = -1 EFBIG
mark max-10 100 = -1 EFBIG
mark 1 max = -1 EFBIG
unmark max 1 = -1 EFBIG
fa64 MARK max-4095 4096 = -1 EFBIG
mark max-4096 4096 = 0
unmark max-4096 4096 = 0
memfd m 4096 = 4
mark max 1 = -1 EFBIG
size = 4096
EOF

# ---- MARK on a memfd sealed against writing: EPERM; UNMARK still works ---------------------
ok sealed svt memfd s 64K fill 0 64K S mark 0 4K seal write mark 8K 4K fa 'MARK|KEEP_SIZE' 8K 4K \
	unmark 8K 4K unmark 0 4K unmark 0 4K expect 0 64K S \
	memfd fw 64K seal future-write mark 0 4K unmark 0 4K \
	memfd gs 64K seal grow,shrink mark 0 4K unmark 0 4K \
	memfd ss 64K seal seal mark 0 4K mark 8K 4K unmark 0 4K unmark 8K 4K \
	memfd ws 64K seal write,seal mark 0 4K mark 0 4K unmark 0 4K
expect_out sealed <<EOF
memfd s 64K = 3
fill 0 64K S = ok
mark 0 4K = 0
seal write = 0
mark 8K 4K = -1 EPERM
fa MARK|KEEP_SIZE 8K 4K = -1 EPERM
unmark 8K 4K = 0
unmark 0 4K = 0
unmark 0 4K = 0
expect 0 64K S ok
memfd fw 64K = 4
seal future-write = 0
mark 0 4K = -1 EPERM
unmark 0 4K = 0
memfd gs 64K = 5
seal grow,shrink = 0
mark 0 4K = 0
unmark 0 4K = 0
memfd ss 64K = 6
seal seal = 0
mark 0 4K = 0
mark 8K 4K = 0
unmark 0 4K = 0
unmark 8K 4K = 0
memfd ws 64K = 7
seal write,seal = 0
mark 0 4K = -1 EPERM
mark 0 4K = -1 EPERM
unmark 0 4K = 0
EOF

# ---- the checks changed nothing --------------------------------------------------------------
ok final vt open "$f" r expect 0 64K A size
expect_line final "size = 65536"

# ---- without the shim: EOPNOTSUPP, so a program can fall back ------------------------------
ok noshim vt open "$f" rw mark 0 4096 unmark 0 4096 fa 'MARK|KEEP_SIZE' 0 4096 \
	fa64 MARK 0 4096 fa64 UNMARK 0 4096 memfd m 64K mark 0 4096 unmark 0 4096
expect_out noshim <<EOF
open $f rw = 3
mark 0 4096 = -1 EOPNOTSUPP
unmark 0 4096 = -1 EOPNOTSUPP
fa MARK|KEEP_SIZE 0 4096 = -1 EOPNOTSUPP
fa64 MARK 0 4096 = -1 EOPNOTSUPP
fa64 UNMARK 0 4096 = -1 EOPNOTSUPP
memfd m 64K = 4
mark 0 4096 = -1 EOPNOTSUPP
unmark 0 4096 = -1 EOPNOTSUPP
EOF
exit 0
