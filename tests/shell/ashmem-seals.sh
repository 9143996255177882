#!/bin/sh
# SPDX-License-Identifier: MIT
# ashmem (DESIGN 7): regions as modern Android probes them. A
# region made by ashmem_create_region is a memfd that takes seals, as
# libcutils' memfd backend makes it: a program may add F_SEAL_FUTURE_WRITE
# (or F_SEAL_WRITE) itself; GET_PROT_MASK then lacks PROT_WRITE and
# SET_PROT_MASK cannot add it back (EINVAL). A write-sealed memfd can never
# be punched, so its pins can never purge: UNPIN says 0 and marks nothing,
# ranges unpinned before the seal are pinned again by it, PIN says
# NOT_PURGED and the bytes are intact after `volatile purge --all`.
# ashmem_set_prot_region adds no seal: a read-only region still purges.
# A region opened as /dev/ashmem takes no seal (EPERM), as the driver's
# file took none; a plain memfd answers GET_PROT_MASK from its seals too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ashmem-lib.sh"
CUTILS=$VL_TOP_BUILDDIR/tests/helpers/ashmem-cutils
[ -x "$CUTILS" ] || fail "$CUTILS is not built (make check builds it)"
PURGE="$VOLATILE_CMD purge --all >/dev/null"

cut() {
	timeout "$VL_TIMEOUT" "$CUTILS" --do "$@"
}

# ---- 1. a region takes F_SEAL_FUTURE_WRITE; the mask says so; nothing purges ---
ok s1 cut create sealed 16K getseals getprot map 16K rw fill 0 16K S \
	addseal future-write getseals getprot ioprot rwx ioprot rw setprot rw \
	unpin 0 0 pinstatus 0 0 sh "$PURGE" pin 0 0 expect 0 16K S ioprot r getprot \
	ioprot rw
expect_out s1 <<EOF
create sealed 16K = 3
getseals = none
getprot = 7
map 16K rw = 0
fill 0 16K S
addseal future-write = 0
getseals = future-write
getprot = 5
ioprot rwx = -1 EINVAL
ioprot rw = -1 EINVAL
setprot rw = -1 EINVAL
unpin 0 0 = 0
pinstatus 0 0 = 1
sh = 0
pin 0 0 = 0
expect 0 16K S ok
ioprot r = 0
getprot = 1
ioprot rw = -1 EINVAL
EOF

# ---- 2. unpinned before the seal: the seal pins it again, nothing is purged -----
ok s2 cut create late 16K map 16K rw fill 0 16K L unpin 4K 8K pinstatus 0 0 \
	addseal future-write pinstatus 0 0 sh "$PURGE" pin 4K 8K expect 0 16K L \
	unpin 0 0 sh "$PURGE" pin 0 0 expect 0 16K L
expect_out s2 <<EOF
create late 16K = 3
map 16K rw = 0
fill 0 16K L
unpin 4K 8K = 0
pinstatus 0 0 = 0
addseal future-write = 0
pinstatus 0 0 = 1
sh = 0
pin 4K 8K = 0
expect 0 16K L ok
unpin 0 0 = 0
sh = 0
pin 0 0 = 0
expect 0 16K L ok
EOF

# ---- 3. F_SEAL_WRITE: the same. No shared mapping may be writable then (the
# kernel says EBUSY), so the writable one goes first; and the read-only one
# after is made with the mask read-only, through a read-only fd (DESIGN 7),
# which kernels before 6.7 require of a memfd sealed so.
ok s3 cut create written 8K map 8K rw fill 0 8K W unpin 0 4K addseal write unmap \
	addseal write getseals getprot unpin 0 0 sh "$PURGE" pin 0 0 setprot r map 8K r \
	expect 0 8K W
expect_out s3 <<EOF
create written 8K = 3
map 8K rw = 0
fill 0 8K W
unpin 0 4K = 0
addseal write = -1 EBUSY
unmap = 0
addseal write = 0
getseals = write
getprot = 5
unpin 0 0 = 0
sh = 0
pin 0 0 = 0
setprot r = 0
map 8K r = 0
expect 0 8K W ok
EOF

# ---- 4. the size seals: SET_SIZE before the first mmap says EPERM ---------------
ok s4 cut create sized 8K addseal grow,shrink setsize 16K setsize 4K setsize 8K getsize \
	addseal seal addseal future-write getseals
expect_out s4 <<EOF
create sized 8K = 3
addseal grow,shrink = 0
setsize 16K = -1 EPERM
setsize 4K = -1 EPERM
setsize 8K = 0
getsize = 8192
addseal seal = 0
addseal future-write = -1 EPERM
getseals = seal,shrink,grow
EOF

# ---- 5. ashmem_set_prot_region adds no seal: a read-only region still purges ----
ok s5 cut create ro 8K map 8K rw fill 0 8K R setprot r getseals getprot unpin 0 0 \
	sh "$PURGE" pin 0 0
expect_out s5 <<EOF
create ro 8K = 3
map 8K rw = 0
fill 0 8K R
setprot r = 0
getseals = none
getprot = 1
unpin 0 0 = 0
sh = 0
pin 0 0 = 1
EOF

# ---- 6. /dev/ashmem takes no seal; a plain memfd answers from its seals ----------
ok s6 leg open setsize 8K getseals addseal future-write getprot \
	memfd plain 8K getprot map 8K r addseal future-write getseals getprot setprot rw \
	setprot r getprot unpin 0 0 pin 0 0
expect_out s6 <<EOF
open /dev/ashmem = 3
setsize 8K = 0
getseals = seal
addseal future-write = -1 EPERM
getprot = 7
memfd plain 8K = 4
getprot = 7
map 8K r = ok
addseal future-write = 0
getseals = future-write
getprot = 5
setprot rw = -1 EINVAL
setprot r = 0
getprot = 1
unpin 0 0 = 0
pin 0 0 = 0
EOF
exit 0
