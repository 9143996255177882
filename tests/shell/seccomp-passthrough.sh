#!/bin/sh
# SPDX-License-Identifier: MIT
# Under `volatile run`, every fallocate mode without a volatile bit stays
# the kernel's (DESIGN 2, 5): a static program's calls (vt-static, whose
# fallocate is the system call) and the dynamic vt's raw system call give
# byte for byte what they give without run: the same return values,
# errno, sizes, st_blocks (but on the disk, see passthrough.sh) and
# content after each call, on a tmpfs file, a memfd and a disk file, for
# every mode of passthrough.sh, the 2012 aliases 0x04 and 0x08 included
# (without --2012-abi they are the kernel's NO_HIDE_STALE and
# COLLAPSE_RANGE, refused by tmpfs). Each run under `volatile run` ends
# with a MARK and an UNMARK of a memfd, which must be served: the
# comparison is of a program the filter really was installed in.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_seccomp
need_static

modes="0 KEEP_SIZE PUNCH_HOLE|KEEP_SIZE PUNCH_HOLE ZERO_RANGE ZERO_RANGE|KEEP_SIZE
	INSERT_RANGE INSERT_RANGE|KEEP_SIZE UNSHARE_RANGE UNSHARE_RANGE|KEEP_SIZE
	COLLAPSE_RANGE|KEEP_SIZE|PUNCH_HOLE COLLAPSE_RANGE|ZERO_RANGE PUNCH_HOLE|ZERO_RANGE
	NO_HIDE_STALE|PUNCH_HOLE|KEEP_SIZE NO_HIDE_STALE|PUNCH_HOLE NO_HIDE_STALE|COLLAPSE_RANGE
	WRITE_ZEROES WRITE_ZEROES|KEEP_SIZE 0x100 0x101 0x200 0x1000 0x8000 0x40000000
	0x80000000 0xff 0x7f 0xc0000000 0x4000000
	NO_HIDE_STALE NO_HIDE_STALE|KEEP_SIZE COLLAPSE_RANGE COLLAPSE_RANGE|KEEP_SIZE"
ranges="4096:8192 0:4096 1000:3000 60K:8K 64K:4K 128K:4K 0:0 -1:4096 4096:-1 max:1 1:max"

# script FN FILE DIR FIFO: every mode, each on the file made afresh
script() {
	_fn=$1 _file=$2 _dir=$3 _fifo=$4
	for _m in $modes; do
		echo "open $_file rwt fill 0 64K A fill 16K 16K B st"
		for _r in $ranges; do
			echo "$_fn $_m ${_r%%:*} ${_r#*:} st"
		done
		echo "open $_file r $_fn $_m 0 4096 $_fn $_m -1 1 $_fn $_m max 1 close"
		echo "open $_file path $_fn $_m 0 4096 close"
		echo "open $_dir dir $_fn $_m 0 4096 $_fn $_m 0 0 close"
		echo "open $_fifo rw $_fn $_m 0 4096 $_fn $_m -1 1 close"
		echo "socket $_fn $_m 0 4096 $_fn $_m 0 0"
		echo "fd 99 $_fn $_m 0 4096 $_fn $_m -1 0"
		echo "memfd m$_fn 64K fill 0 64K M $_fn $_m 0 4096 st $_fn $_m 60K 8K st close"
	done
}

# compare NAME PROG FN FILE DIR FIFO [DROP]: PROG without and with run;
# DROP, a sed expression, takes out what may differ (disk blocks)
compare() {
	_c=$1 _prog=$2 _fn=$3 _drop=${7:-s/^$//}
	# word splitting of the script is intended: one vt word per word
	# shellcheck disable=SC2046
	set -- $(script "$_fn" "$4" "$5" "$6")
	new_region
	run "$_c-bare" timeout "$VL_TIMEOUT" "$_prog" "$@"
	new_region
	# the dynamic vt's MARK would go to the library: its raw system call then
	_mk=mark _um=unmark
	[ "$_fn" = sysfa ] && _mk="sysfa MARK" _um="sysfa UNMARK"
	# shellcheck disable=SC2086
	run "$_c-run" vrun -- "$_prog" "$@" memfd served 4K $_mk 0 4K $_um 0 4K
	[ -s "$WORK/$_c-run.err" ] && { show "$_c-run"; fail "$_c: something on stderr under run"; }
	tail -n 3 "$WORK/$_c-run.out" >"$WORK/$_c-served.out"
	sed -i '$d' "$WORK/$_c-run.out"
	sed -i '$d' "$WORK/$_c-run.out"
	sed -i '$d' "$WORK/$_c-run.out"
	for _k in bare run; do
		sed -i "s/^socket = .*/socket = S S/; $_drop" "$WORK/$_c-$_k.out"
	done
	same "$_c-bare" "$_c-run" "$_c: ${_prog##*/}'s $_fn without and with volatile run differ"
	sed -i 's/^memfd served 4K = .*/memfd served 4K = FD/' "$WORK/$_c-served.out"
	expect_out "$_c-served" <<EOF
memfd served 4K = FD
$_mk 0 4K = 0
$_um 0 4K = 0
EOF
	say "$_c: $(wc -l <"$WORK/$_c-run.out") lines identical"
}

mkfifo "$WORK/fifo" || fail "mkfifo"
compare tmpfs "$VT_STATIC" fa "$WORK/file" "$WORK" "$WORK/fifo"
compare tmpfs-sys "$VT" sysfa "$WORK/file" "$WORK" "$WORK/fifo"
if [ -x "$VT_MUSL" ]; then
	compare tmpfs-musl "$VT_MUSL" fa64 "$WORK/file" "$WORK" "$WORK/fifo"
fi

need_disk
mkfifo "$DISK/fifo" || fail "mkfifo on $DISK"
compare disk "$VT_STATIC" fa "$DISK/file" "$DISK" "$DISK/fifo" 's/ blocks=[0-9]*//'
compare disk-sys "$VT" sysfa "$DISK/file" "$DISK" "$DISK/fifo" 's/ blocks=[0-9]*//'
exit 0
