#!/bin/sh
# SPDX-License-Identifier: MIT
# DESIGN 5: MARK and UNMARK on an append-only or immutable tmpfs file fail
# with EPERM, as the kernel's fallocate does (whatever fd is used: one
# opened before the attribute was set, or O_APPEND), and change nothing.
# Skipped (77) where chattr is missing or not permitted on tmpfs.
. "$(dirname "$0")/lib.sh"

command -v chattr >/dev/null 2>&1 || skip "chattr (e2fsprogs) is not installed"

a=$WORK/append
i=$WORK/immutable
mkfile "$a" 64K A
mkfile "$i" 64K I
chattr +a "$a" 2>"$WORK/chattr.err" ||
	skip "chattr +a on tmpfs is not permitted here: $(cat "$WORK/chattr.err")"
chattr -a "$a" || fail "chattr -a"

# ---- append-only -----------------------------------------------------------------
exec 5<>"$a"
chattr +a "$a" || fail "chattr +a"
ok append svt fd 5 mark 0 4096 unmark 0 4096 fa 'MARK|KEEP_SIZE' 0 4096 fa64 MARK 0 4096 \
	fa KEEP_SIZE 0 4096 fa 'PUNCH_HOLE|KEEP_SIZE' 0 4096 \
	open "$a" a mark 0 4096 unmark 0 4096 fill 0 1 x \
	open "$a" r expect 0 64K A expect 64K 1 x
expect_out append <<EOF
fd 5
mark 0 4096 = -1 EPERM
unmark 0 4096 = -1 EPERM
fa MARK|KEEP_SIZE 0 4096 = -1 EPERM
fa64 MARK 0 4096 = -1 EPERM
fa KEEP_SIZE 0 4096 = 0
fa PUNCH_HOLE|KEEP_SIZE 0 4096 = -1 EPERM
open $a a = 3
mark 0 4096 = -1 EPERM
unmark 0 4096 = -1 EPERM
fill 0 1 x = ok
open $a r = 4
expect 0 64K A ok
expect 64K 1 x ok
EOF
# the rows before it still come first: EINVAL, then EBADF
ok append2 svt fd 5 mark -1 1 open "$a" r mark 0 4096
expect_out append2 <<EOF
fd 5
mark -1 1 = -1 EINVAL
open $a r = 3
mark 0 4096 = -1 EBADF
EOF
exec 5>&-
chattr -a "$a"

# ---- immutable ----------------------------------------------------------------------
exec 6<>"$i"
chattr +i "$i" || fail "chattr +i"
ok immutable svt fd 6 mark 0 4096 unmark 0 4096 fa 'UNMARK|KEEP_SIZE' 0 4096 fa64 MARK 0 4096 \
	fa KEEP_SIZE 0 4096 open "$i" r expect 0 64K I
expect_out immutable <<EOF
fd 6
mark 0 4096 = -1 EPERM
unmark 0 4096 = -1 EPERM
fa UNMARK|KEEP_SIZE 0 4096 = -1 EPERM
fa64 MARK 0 4096 = -1 EPERM
fa KEEP_SIZE 0 4096 = -1 EPERM
open $i r = 3
expect 0 64K I ok
EOF
exec 6>&-
chattr -i "$i"

# ---- a range marked before the file became append-only --------------------------------
# A purge cannot punch it now; whatever it does, not a byte changes.
need_cmd
mkfile "$a" 64K A
ok pre svt open "$a" rw mark 0 8K
chattr +a "$a" || fail "chattr +a"
run purge vol purge --all
ok after vt open "$a" r expect 0 64K A
chattr -a "$a"
exit 0
