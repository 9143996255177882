#!/bin/sh
# SPDX-License-Identifier: MIT
# A file's identity across mounts (DESIGN 14): one file seen through two
# mounts of its tmpfs (a bind mount, a remount) is one file; two files of
# two tmpfs mounts with the same inode number are two. UNMARK never says
# 0 over purged bytes, and never 1 over another file's (THE INVARIANT),
# whichever the process looked at last (ident.c's per-thread last file
# and its cache, both keyed by the unique mount id).
. "$(dirname "$0")/lib.sh"

inside() {
	need_cmd
	a=$WORK/a b=$WORK/b c=$WORK/c
	mkdir -p "$a" "$b" "$c"
	trap 'umount "$c" "$b" "$a" 2>/dev/null' EXIT
	mount -t tmpfs -o size=4M,mode=0700 vla "$a" 2>"$WORK/why" || exit 78
	mount -t tmpfs -o size=4M,mode=0700 vlb "$b" || fail "second tmpfs"
	mount --bind "$a" "$c" || fail "bind mount"
	mkfile "$a/f" 64K A
	mkfile "$b/f" 64K B
	if [ "$(stat -c %i "$a/f")" != "$(stat -c %i "$b/f")" ]; then
		echo "the two tmpfs gave their first files different inode numbers" >"$WORK/why"
		exit 78
	fi

	# a purged range of a/f; b/f, same inode number, another device
	ok mark1 svt open "$a/f" rw mark 0 16K mark 32K 16K
	ok purge1 vol purge --bytes 1
	grep -q '^purged 1 range, 16384 bytes' "$WORK/purge1.out" || { show purge1; fail "first purge"; }

	# in one process: b/f first (its own, nothing), then a/f through the
	# bind mount (same file, another mount), then a/f itself
	ok one svt open "$b/f" rw unmark 0 16K expect 0 64K B \
		open "$c/f" rw unmark 0 16K \
		open "$a/f" rw unmark 32K 16K expect 16K 48K A \
		open "$b/f" rw unmark 32K 16K expect 0 64K B
	expect_out one <<EOF
open $b/f rw = 3
unmark 0 16K = 0
expect 0 64K B ok
open $c/f rw = 4
unmark 0 16K = 1
open $a/f rw = 5
unmark 32K 16K = 0
expect 16K 48K A ok
open $b/f rw = 6
unmark 32K 16K = 0
expect 0 64K B ok
EOF

	# marked through the bind mount, purged, then the file remounted
	# (same superblock, same mount): unmarked through the other path
	ok mark2 svt open "$c/f" rw mark 0 8K open "$b/f" rw mark 0 8K
	ok purge2 vol purge --all
	grep -q '^purged 2 ranges, 16384 bytes' "$WORK/purge2.out" || { show purge2; fail "second purge"; }
	mount -t tmpfs -o remount,size=8M vla "$a" || fail "remount"
	ok two svt open "$a/f" rw unmark 0 8K open "$b/f" rw unmark 0 8K open "$a/f" rw unmark 0 8K
	expect_out two <<EOF
open $a/f rw = 3
unmark 0 8K = 1
open $b/f rw = 4
unmark 0 8K = 1
open $a/f rw = 5
unmark 0 8K = 0
EOF

	exit 0
}

if [ "${1:-}" = --inside ]; then
	inside
fi
mount_ns || skip "cannot make a mount namespace ($MOUNT_NS): $(cat "$WORK/unshare.err")"
ns=$MOUNT_NS
rerun_inside "$ns"
[ "$rc" -eq 78 ] && skip "$(cat "$WORK/why")"
exit "$rc"
