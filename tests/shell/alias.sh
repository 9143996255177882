#!/bin/sh
# The 2012 ABI aliases (SPEC 3): on a tmpfs file or a memfd, with the
# shim, mode 0x04 is MARK and 0x08 is UNMARK (optionally with KEEP_SIZE),
# with their return values and errors; without the shim tmpfs refuses
# them (EOPNOTSUPP); on a disk file 0x08 is COLLAPSE_RANGE, shim or not.
. "$(dirname "$0")/lib.sh"
need_cmd

f=$WORK/file
mkfile "$f" 64K A

# ---- tmpfs, with the shim: MARK and UNMARK ---------------------------------------
ok tmpfs svt open "$f" rw fa 0x4 0 8K fa 0x8 0 8K fa 0x5 8K 8K fa 0x9 8K 8K \
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
ok tmpfs2 svt open "$f" rw fa 0x8 16K 4K fa64 0x9 32K 4K fa 0x8 16K 4K \
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
ok tmpfs3 svt open "$f" r fa 0x4 0 4K fa 0x8 0 4K
expect_out tmpfs3 <<EOF
open $f r = 3
fa 0x4 0 4K = -1 EBADF
fa 0x8 0 4K = -1 EBADF
EOF

# ---- a memfd, with the shim and a budget: marked, purged at once, reported ------------
ok memfd svte VOLATILE_BUDGET=4K -- memfd m 64K fill 0 64K M fa 0x5 0 8K fa 0x9 0 8K \
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

# ---- a disk file: COLLAPSE_RANGE and the kernel's answers, shim or not --------------------
need_disk
d=$DISK/file
for how in vt svt; do
	ok "disk-$how" $how open "$d" rwt fill 0 64K A fill 4K 4K B fa 0x8 4K 4K size \
		expect 0 60K A fa 0x9 0 4K fa 0x4 0 4K fa 0x5 0 4K size
done
expect_out disk-svt <<EOF
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
exit 0
