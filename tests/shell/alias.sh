#!/bin/sh
# SPDX-License-Identifier: MIT
# The 2012 ABI aliases (DESIGN 2), opt-in: with VOLATILE_2012_ABI=1
# (or `volatile run --2012-abi`), on a tmpfs file or a memfd, mode 0x04 is
# MARK and 0x08 is UNMARK (optionally with KEEP_SIZE), with their return
# values and errors. By default they are the kernel's NO_HIDE_STALE and
# COLLAPSE_RANGE on every file system, tmpfs included: tmpfs refuses
# them (EOPNOTSUPP) with the shim as without it, and nothing is marked.
# Without the shim tmpfs refuses them; on a disk file 0x08 is
# COLLAPSE_RANGE, shim or not, aliases on or off.
. "$(dirname "$0")/lib.sh"
need_cmd

# abi VALUE CMD...: CMD with the shim and VOLATILE_2012_ABI=VALUE
# ("unset" leaves it out); VALUE may hold blanks, unlike svte's
abi() {
	_v=$1
	shift
	if [ "$_v" = unset ]; then
		env -u VOLATILE_2012_ABI LD_PRELOAD="$VOLATILE_LIBRARY" timeout "$VL_TIMEOUT" "$@"
	else
		env VOLATILE_2012_ABI="$_v" LD_PRELOAD="$VOLATILE_LIBRARY" \
			timeout "$VL_TIMEOUT" "$@"
	fi
}

f=$WORK/file
mkfile "$f" 64K A

# ---- tmpfs, with the shim and the aliases on: MARK and UNMARK ------------------------
ok tmpfs abi 1 "$VT" open "$f" rw fa 0x4 0 8K fa 0x8 0 8K fa 0x5 8K 8K fa 0x9 8K 8K \
	fa 0x4 16K 4K fa64 0x5 32K 4K fa 0x4 -1 1 fa 0x8 0 0 fa 0x4 max 1 size
expect_out tmpfs <<EOF
open $f rw = 3
fa 0x4 0 8K = 0
fa 0x8 0 8K = 0
fa 0x5 8K 8K = 0
fa 0x9 8K 8K = 0
fa 0x4 16K 4K = 0
fa64 0x5 32K 4K = 0
fa 0x4 -1 1 = -1 EINVAL
fa 0x8 0 0 = -1 EINVAL
fa 0x4 max 1 = -1 EFBIG
size = 65536
EOF
# the two ranges marked through 0x04 are real volatile ranges
ok purge vol purge --all
grep -q '^purged 2 ranges, 8192 bytes' "$WORK/purge.out" || { show purge; fail "the ranges marked with 0x04 were not purged"; }
ok tmpfs2 abi 1 "$VT" open "$f" rw fa 0x8 16K 4K fa64 0x9 32K 4K fa 0x8 16K 4K \
	expect 0 16K A expect 16K 4K zero expect 20K 12K A expect 32K 4K zero expect 36K 28K A
expect_out tmpfs2 <<EOF
open $f rw = 3
fa 0x8 16K 4K = 1
fa64 0x9 32K 4K = 1
fa 0x8 16K 4K = 0
expect 0 16K A ok
expect 16K 4K zero ok
expect 20K 12K A ok
expect 32K 4K zero ok
expect 36K 28K A ok
EOF
# a read-only fd: MARK's answer (EBADF)
ok tmpfs3 abi 1 "$VT" open "$f" r fa 0x4 0 4K fa 0x8 0 4K
expect_out tmpfs3 <<EOF
open $f r = 3
fa 0x4 0 4K = -1 EBADF
fa 0x8 0 4K = -1 EBADF
EOF

# ---- a memfd, with the shim and a budget: marked, purged at once, reported ------------
ok memfd svte VOLATILE_2012_ABI=1 VOLATILE_BUDGET=4K -- memfd m 64K fill 0 64K M fa 0x5 0 8K fa 0x9 0 8K \
	expect 0 8K zero expect 8K 56K M seal write fa 0x4 0 4K fa 0x8 0 4K
expect_out memfd <<EOF
memfd m 64K = 3
fill 0 64K M = ok
fa 0x5 0 8K = 0
fa 0x9 0 8K = 1
expect 0 8K zero ok
expect 8K 56K M ok
seal write = 0
fa 0x4 0 4K = -1 EPERM
fa 0x8 0 4K = 0
EOF

# ---- tmpfs without the shim: refused, nothing changes -----------------------------------
ok noshim vt open "$f" rw fa 0x4 0 8K fa 0x8 0 8K fa 0x5 0 8K fa 0x9 0 8K fa64 0x4 0 8K \
	memfd m 64K fa 0x4 0 8K fa 0x8 0 8K
expect_out noshim <<EOF
open $f rw = 3
fa 0x4 0 8K = -1 EOPNOTSUPP
fa 0x8 0 8K = -1 EOPNOTSUPP
fa 0x5 0 8K = -1 EOPNOTSUPP
fa 0x9 0 8K = -1 EOPNOTSUPP
fa64 0x4 0 8K = -1 EOPNOTSUPP
memfd m 64K = 4
fa 0x4 0 8K = -1 EOPNOTSUPP
fa 0x8 0 8K = -1 EOPNOTSUPP
EOF


# ---- the aliases off (the default): the kernel's modes, on tmpfs too -------------------
# 0x08 is FALLOC_FL_COLLAPSE_RANGE and 0x04 FALLOC_FL_NO_HIDE_STALE; tmpfs
# refuses both, and programs rely on it (a collapse must not "succeed").
# Only "1" turns the aliases on; unset, empty or anything else leaves
# them off. Each answer, size and checksum must be those without the shim.
new_region
g=$WORK/plain
mkfile "$g" 64K P
off_script="open $g rw st fa 0x8 0 4K st fa 0x9 4K 4K fa64 0x8 8K 4K st fa 0x4 0 8K st
	fa 0x5 8K 8K fa64 0x4 16K 4K fa64 0x5 24K 4K st
	memfd m 64K fill 0 64K M fa 0x4 0 8K fa 0x8 0 8K fa 0x5 8K 8K fa 0x9 8K 8K st"
# shellcheck disable=SC2086
ok off-vt vt $off_script
n=0
for v in unset '' 0 2 yes true 01 ' 1' '1 '; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	ok "off-$n" abi "$v" "$VT" $off_script
	if ! diff -u "$WORK/off-vt.out" "$WORK/off-$n.out" >&2; then
		fail "VOLATILE_2012_ABI='$v': 0x04/0x08 on tmpfs differ with the shim"
	fi
done
for l in "fa 0x8 0 4K = -1 EOPNOTSUPP" "fa 0x9 4K 4K = -1 EOPNOTSUPP" \
	"fa64 0x8 8K 4K = -1 EOPNOTSUPP" "fa 0x4 0 8K = -1 EOPNOTSUPP" \
	"fa 0x5 8K 8K = -1 EOPNOTSUPP" "fa64 0x4 16K 4K = -1 EOPNOTSUPP"; do
	expect_line off-1 "$l"
done
# nothing was marked: no region was even made, a purge finds nothing,
# and every byte is as written
[ -e "$VOLATILE_REGION" ] && fail "0x04/0x08 with the aliases off made the region"
ok off-purge vol purge --all
expect_line off-purge "purged 0 ranges, 0 bytes"
ok off-after vt open "$g" r expect 0 64K P size
expect_out off-after <<EOF
open $g r = 3
expect 0 64K P ok
size = 65536
EOF

# util-linux's fallocate --collapse-range on tmpfs: the same failure (exit
# status and message) under LD_PRELOAD and `volatile run` as without the
# library, and the file unchanged
if command -v fallocate >/dev/null 2>&1; then
	for how in plain shim run; do
		case $how in
		plain) set -- timeout "$VL_TIMEOUT" ;;
		shim) set -- shim ;;
		run) set -- vol run -- ;;
		esac
		run "collapse-$how" "$@" fallocate -c -o 0 -l 4096 "$g"
		echo "exit $rc" >>"$WORK/collapse-$how.err"
	done
	if grep -q '^exit 0$' "$WORK/collapse-plain.err"; then
		show collapse-plain
		fail "fallocate -c on tmpfs succeeded without the library: the test needs a refusal"
	fi
	for how in shim run; do
		if ! diff -u "$WORK/collapse-plain.err" "$WORK/collapse-$how.err" >&2; then
			fail "fallocate -c on tmpfs under $how differs from without the library"
		fi
	done
	ok collapse-after vt open "$g" r expect 0 64K P size
	expect_line collapse-after "size = 65536"
	[ -e "$VOLATILE_REGION" ] && fail "fallocate -c with the aliases off made the region"
else
	say "util-linux fallocate is not installed: fallocate -c not tried"
fi

# ---- volatile run --2012-abi turns them on, for the child -------------------------------
ok run-on env VOLATILE_2012_ABI=0 "$VOLATILE_CMD" run --2012-abi -- "$VT" open "$g" rw \
	fa 0x4 0 4K fa 0x8 0 4K fa 0x5 4K 4K
expect_out run-on <<EOF
open $g rw = 3
fa 0x4 0 4K = 0
fa 0x8 0 4K = 0
fa 0x5 4K 4K = 0
EOF
ok run-purge vol purge --all
expect_line run-purge "purged 1 range, 4096 bytes"
ok run-off vol run -- "$VT" open "$g" rw fa 0x4 8K 4K fa 0x8 4K 4K
expect_out run-off <<EOF
open $g rw = 3
fa 0x4 8K 4K = -1 EOPNOTSUPP
fa 0x8 4K 4K = -1 EOPNOTSUPP
EOF
ok run-env env VOLATILE_2012_ABI=0 "$VOLATILE_CMD" run --2012-abi -- env
expect_line run-env "VOLATILE_2012_ABI=1"
ok run-env2 env -u VOLATILE_2012_ABI "$VOLATILE_CMD" run -- env
if grep -q '^VOLATILE_2012_ABI=' "$WORK/run-env2.out"; then
	fail "volatile run without --2012-abi set VOLATILE_2012_ABI"
fi

# ---- a disk file: COLLAPSE_RANGE and the kernel's answers, shim or not, aliases or not --
need_disk
d=$DISK/file
set -- open "$d" rwt fill 0 64K A fill 4K 4K B fa 0x8 4K 4K size \
	expect 0 60K A fa 0x9 0 4K fa 0x4 0 4K fa 0x5 0 4K size
ok disk-vt vt "$@"
ok disk-svt svt "$@"
ok disk-abi abi 1 "$VT" "$@"
expect_out disk-abi <<EOF
open $d rwt = 3
fill 0 64K A = ok
fill 4K 4K B = ok
fa 0x8 4K 4K = 0
size = 61440
expect 0 60K A ok
$(sed -n 's/^\(fa 0x9 0 4K = .*\)/\1/p' "$WORK/disk-vt.out")
fa 0x4 0 4K = -1 EOPNOTSUPP
fa 0x5 0 4K = -1 EOPNOTSUPP
size = 61440
EOF
diff -u "$WORK/disk-vt.out" "$WORK/disk-svt.out" >&2 || fail "on a disk file, 0x04/0x08 differ with the shim"
diff -u "$WORK/disk-vt.out" "$WORK/disk-abi.out" >&2 ||
	fail "on a disk file, 0x04/0x08 differ with the shim and VOLATILE_2012_ABI=1"
exit 0
