#!/bin/sh
# SPDX-License-Identifier: MIT
# Every other fallocate mode goes to the real fallocate untouched (DESIGN 2,
# 5): for each standard mode, valid or not, on a tmpfs file and on a disk
# file (and on read-only fds, O_PATH fds, directories, FIFOs, pipes,
# sockets, fds not open, /dev/null), the same vt script runs with and
# without the shim, through fallocate() and through fallocate64(), and
# the four outputs (return value, errno, errno kept on success, size,
# st_blocks but on the disk, checksum of the content after each call) are
# identical.
# The 2012 aliases 0x04 and 0x08 are off by default (VOLATILE_2012_ABI
# unset): they are compared here like any mode, on tmpfs files and memfds
# too (DESIGN 2); alias.sh tests them turned on.
. "$(dirname "$0")/lib.sh"

modes="0 KEEP_SIZE PUNCH_HOLE|KEEP_SIZE PUNCH_HOLE ZERO_RANGE ZERO_RANGE|KEEP_SIZE
	INSERT_RANGE INSERT_RANGE|KEEP_SIZE UNSHARE_RANGE UNSHARE_RANGE|KEEP_SIZE
	COLLAPSE_RANGE|KEEP_SIZE|PUNCH_HOLE COLLAPSE_RANGE|ZERO_RANGE PUNCH_HOLE|ZERO_RANGE
	NO_HIDE_STALE|PUNCH_HOLE|KEEP_SIZE NO_HIDE_STALE|PUNCH_HOLE NO_HIDE_STALE|COLLAPSE_RANGE
	WRITE_ZEROES WRITE_ZEROES|KEEP_SIZE 0x100 0x101 0x200 0x1000 0x8000 0x40000000
	0x80000000 0xff 0x7f"
# the 2012 aliases, the kernel's modes unless VOLATILE_2012_ABI=1
alias_modes="NO_HIDE_STALE NO_HIDE_STALE|KEEP_SIZE COLLAPSE_RANGE COLLAPSE_RANGE|KEEP_SIZE"
ranges="4096:8192 0:4096 1000:3000 60K:8K 64K:4K 128K:4K 0:0 -1:4096 4096:-1 max:1 1:max"

# script FN MODE FILE DIR FIFO [EXTRA...]: the vt commands for one mode
script() {
	_fn=$1 _m=$2 _file=$3 _dir=$4 _fifo=$5
	shift 5
	echo "open $_file rwt fill 0 64K A fill 16K 16K B st"
	for _r in $ranges; do
		echo "$_fn $_m ${_r%%:*} ${_r#*:} st"
	done
	# other fds: no effect on the file, but the same answers
	echo "open $_file r $_fn $_m 0 4096 $_fn $_m -1 1 $_fn $_m max 1"
	echo "open $_file path $_fn $_m 0 4096"
	echo "open $_dir dir $_fn $_m 0 4096 $_fn $_m 0 0"
	echo "open $_fifo rw $_fn $_m 0 4096 $_fn $_m -1 1"
	echo "pipe $_fn $_m 0 4096 $_fn $_m -1 1"
	echo "socket $_fn $_m 0 4096 $_fn $_m 0 0"
	echo "fd 99 $_fn $_m 0 4096 $_fn $_m -1 0"
	for _x in "$@"; do
		echo "$_x"
	done
	echo "open $_file r st"
}

# compare WHERE MODES FILE DIR FIFO [EXTRA...]
#
# On the disk file system st_blocks is left out: there it is not a function
# of the calls alone. ext4 reserves blocks for the delayed allocation of
# the fill, and what a ZERO_RANGE beyond the end allocates depends on
# whether writeback has run (CI saw 152 blocks without the shim and 144
# with it, the same calls). Answers, sizes and content still must match.
compare() {
	_where=$1 _modes=$2
	_drop='s/^$//'
	[ "$_where" = disk ] && _drop='s/ blocks=[0-9]*//'
	shift 2
	n=0
	for m in $_modes; do
		n=$((n + 1))
		for fn in fa fa64; do
			# shellcheck disable=SC2046
			for how in vt svt; do
				ok "$_where-$n-$fn-$how" $how $(script "$fn" "$m" "$@")
				sed "s/^fa64 /fa /; s/^pipe = .*/pipe/; s/^socket = .*/socket/; $_drop" \
					"$WORK/$_where-$n-$fn-$how.out" >"$WORK/$_where-$n-$fn-$how.norm"
			done
		done
		base=$WORK/$_where-$n-fa-vt.norm
		for other in fa-svt fa64-vt fa64-svt; do
			if ! diff -u "$base" "$WORK/$_where-$n-$other.norm" >"$WORK/diff" 2>&1; then
				cat "$WORK/diff" >&2
				fail "$_where, mode $m: fa without the shim and $other differ"
			fi
		done
	done
	say "$_where: $n modes compared"
}

# ---- tmpfs -----------------------------------------------------------------------
mkfifo "$WORK/fifo" || fail "mkfifo"
compare tmpfs "$modes $alias_modes" "$WORK/file" "$WORK" "$WORK/fifo" \
	"open /dev/null rw fa 0 0 1 fa 0x3 0 1"

# and a memfd
set --
for m in $modes $alias_modes; do
	for r in $ranges; do
		set -- "$@" fa "$m" "${r%%:*}" "${r#*:}" st
	done
done
ok memfd-vt vt memfd m 64K fill 0 64K A "$@"
ok memfd-svt svt memfd m 64K fill 0 64K A "$@"
diff -u "$WORK/memfd-vt.out" "$WORK/memfd-svt.out" >&2 || fail "on a memfd, the modes differ with the shim"

# ---- a disk file system ------------------------------------------------------------------
need_disk
mkfifo "$DISK/fifo" || fail "mkfifo on $DISK"
compare disk "$modes $alias_modes" "$DISK/file" "$DISK" "$DISK/fifo"

# the two symbols really are what was called: with the shim, MARK through
# either works on tmpfs
ok both svt memfd m 64K fa MARK 0 4096 fa64 MARK 8K 4096 fa64 UNMARK 0 4096 fa UNMARK 8K 4096
expect_out both <<EOF
memfd m 64K = 3
fa MARK 0 4096 = 0
fa64 MARK 8K 4096 = 0
fa64 UNMARK 0 4096 = 0
fa UNMARK 8K 4096 = 0
EOF
exit 0
