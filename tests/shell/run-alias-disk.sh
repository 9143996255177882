#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile run --2012-abi`: a 2012 alias mode (0x04, 0x08) on a file that
# is not tmpfs is the kernel's call, as without run (DESIGN 21): a real
# FALLOC_FL_COLLAPSE_RANGE on a disk file collapses it, whatever the
# caller's region, dumpable or not, whenever run can see the file.
# Where run cannot see it (a non-dumpable caller of run's own user: no
# pidfd_getfd, no /proc/PID/fdinfo), the UNMARK's old answer stands:
# EPERM, the file untouched; run cannot tell a tmpfs file, whose range
# may be purged, from a disk file, and an UNMARK it cannot serve is never
# answered 0 nor the kernel's EOPNOTSUPP ("pinned", DESIGN 5).
#
# (Found once: a caller in another region got EPERM for the
# collapse of an ext4 file, which without run collapses.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_seccomp
need_static
need_disk
[ "$(fs_type "$DISK")" != tmpfs ] || skip "$DISK is a tmpfs"

A=$WORK/a.region
B=$WORK/b.region
unset VOLATILE_REGION

# collapse NAME FILE [WRAP...]: 64K of A with 4K of B at 4K, then 0x08 on
# [4K, 8K); the program makes itself non-dumpable first if $NODUMP is set
collapse() {
	_n=$1 _f=$2
	shift 2
	run "$_n" "$@" "$VT_STATIC" open "$_f" rwt fill 0 64K A fill 4K 4K B ${NODUMP:+nodump} \
		fa 0x8 4K 4K size expect 0 60K A
	[ "$rc" -eq 0 ] || { show "$_n"; fail "$_n: exit status $rc"; }
}

# like_plain NAME: NAME printed what the program printed without run (but its file's name)
like_plain() {
	sed 1d "$WORK/plain.out" >"$WORK/plain.rest"
	sed 1d "$WORK/$1.out" >"$WORK/$1.rest"
	diff -u "$WORK/plain.rest" "$WORK/$1.rest" >&2
}

# ---- without run: the kernel collapses the disk file --------------------------------------
collapse plain "$DISK/plain" env VOLATILE_2012_ABI=1
expect_line plain "fa 0x8 4K 4K = 0"
expect_line plain "size = 61440"

# ---- 1. a caller in another region than run's: its file is seen, on disk: collapsed -------
collapse other "$DISK/other" vrun --region "$A" --2012-abi -- env VOLATILE_REGION="$B"
like_plain other ||
	fail "a caller in another region: COLLAPSE_RANGE of a disk file differs from without run"
# its tmpfs file: still refused with EPERM (its range lives in B, run's region is A)
ok othertmp vrun --region "$A" --2012-abi -- env VOLATILE_REGION="$B" "$VT_STATIC" \
	memfd m 8K fa 0x08 0 4K
expect_line othertmp "fa 0x08 0 4K = -1 EPERM"

# ---- 2. a non-dumpable caller run may look into (run is root): collapsed --------------------
# (run by a user, a non-dumpable caller is part 3's case)
if [ "$(id -u)" -eq 0 ]; then
	NODUMP=1
	collapse rootnodump "$DISK/rootnodump" vrun --region "$A" --2012-abi --
	NODUMP=
	expect_line rootnodump "nodump = 0"
	expect_line rootnodump "fa 0x8 4K 4K = 0"
	expect_line rootnodump "size = 61440"
	expect_line rootnodump "expect 0 60K A ok"
fi

# ---- 3. a non-dumpable caller of run's own user: run cannot see the file: EPERM stands --------
# (as root, run and its caller are made another user's: uid 64990)
U=$DISK/u
if [ "$(id -u)" -ne 0 ]; then
	as=
elif ! command -v setpriv >/dev/null 2>&1; then
	say "no setpriv (util-linux): as root, no run of an unprivileged user (part 3)"
	exit 0
else
	share_build 64990
	as="setpriv --reuid=64990 --regid=64990 --clear-groups"
fi
{ mkdir "$U" && cp "$VT_STATIC" "$DISK/vts" && chmod 0755 "$DISK/vts"; } || fail "cannot make $U"
if [ -n "$as" ]; then
	{ chmod 0711 "$DISK" && chown 64990:64990 "$U"; } || fail "cannot give $U to uid 64990"
fi
# shellcheck disable=SC2086 # $as: words
run usernodump timeout "$VL_TIMEOUT" $as \
	env VOLATILE_REGION="$U/region" "$VOLATILE_CMD" run --2012-abi -- \
	"$DISK/vts" open "$U/f" rwt fill 0 64K A fill 4K 4K B nodump fa 0x8 4K 4K size \
	expect 4K 4K B
[ "$rc" -eq 0 ] || { show usernodump; fail "usernodump: exit status $rc"; }
expect_line usernodump "fa 0x8 4K 4K = -1 EPERM"
expect_line usernodump "size = 65536"
expect_line usernodump "expect 4K 4K B ok"
exit 0
