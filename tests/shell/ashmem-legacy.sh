#!/bin/sh
# SPDX-License-Identifier: MIT
# ashmem (DESIGN 7): an unmodified program that opens /dev/ashmem and drives
# it with the driver's ioctls, run under `volatile run` on a machine
# without the device: the device is there for stat and access, a region
# looks like it to fstat; name and size before the first mmap only; the
# prot mask only loses bits and mmap beyond it is refused; both ABI
# encodings; EINVAL, EFAULT and ENOTTY where the driver says them; unpinned
# pages are purged by `volatile purge` and by ASHMEM_PURGE_ALL_CACHES, pin
# says so and reads zeros, pinned pages are intact.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ashmem-lib.sh"

# ---- 1. the device, for programs that look before they open ------------------
ok s1 leg stat /dev/ashmem access /dev/ashmem r access /dev/ashmem w access /dev/ashmem x \
	access /dev/ashmem f open fstat stat /dev/ashmem stat /dev/ashmem6d5c2a64 \
	stat /dev/ashmem/x
expect_out s1 <<EOF
stat /dev/ashmem = chr 10:61
access /dev/ashmem r = 0
access /dev/ashmem w = 0
access /dev/ashmem x = -1 EACCES
access /dev/ashmem f = 0
open /dev/ashmem = 3
fstat = chr 10:61 mode 666
stat /dev/ashmem = chr 10:61 same as fd
stat /dev/ashmem6d5c2a64 = chr 10:61 same as fd
stat /dev/ashmem/x = -1 ENOENT
EOF
# a suffixed device, as recent libcutils opens it
ok s1b leg open /dev/ashmem6d5c2a64 fstat
expect_line s1b "open /dev/ashmem6d5c2a64 = 3"
expect_line s1b "fstat = chr 10:61 mode 666"
# ...and without the library there is no device at all
run s1c "$LEGACY" stat /dev/ashmem open
expect_line s1c "stat /dev/ashmem = -1 ENOENT"
expect_line s1c "open /dev/ashmem = -1 ENOENT"
# tools see it too (coreutils' stat calls statx)
ok s1d vol run -- stat -c '%F %t:%T %a' /dev/ashmem
expect_out s1d <<EOF
character special file a:3d 666
EOF

# ---- 2. name and size: before the first mmap only; the name in the maps ------
ok s2 leg open getname getsize getprot setname tiles getname longname 300 getname \
	setname tiles setsize 64K getsize setsize32 32K getsize setsize 64K pin 0 0 \
	map 64K rw maps fileid fileid32 setname other setsize 4K getname getsize
long=$(printf '%0255d' 0 | tr 0 x)
expect_out s2 <<EOF
open /dev/ashmem = 3
getname = dev/ashmem (10)
getsize = 0
getprot = 7
setname tiles = 0
getname = tiles (5)
longname 300 = 0
getname = $long (255)
setname tiles = 0
setsize 64K = 0
getsize = 65536
setsize32 32K = 0
getsize = 32768
setsize 64K = 0
pin 0 0 = -1 EINVAL
map 64K rw = ok
maps = /memfd:dev/ashmem/tiles (deleted)
fileid = ino
fileid32 = ino
setname other = -1 EINVAL
setsize 4K = -1 EINVAL
getname = tiles (5)
getsize = 65536
EOF
# no size, no mapping; longer than the size (page-rounded), no mapping
ok s2b leg open map 4K r setsize 5000 map 12K r map 8K r
expect_out s2b <<EOF
open /dev/ashmem = 3
map 4K r = -1 EINVAL
setsize 5000 = 0
map 12K r = -1 EINVAL
map 8K r = ok
EOF

# ---- 3. the prot mask: only loses bits (both encodings), enforced on mmap -----
ok s3 leg open setsize 8K setprot rw getprot setprot rwx setprot32 r getprot \
	map 8K rw map 8K r mapp 8K rw setprot none getprot map 4K r
expect_out s3 <<EOF
open /dev/ashmem = 3
setsize 8K = 0
setprot rw = 0
getprot = 3
setprot rwx = -1 EINVAL
setprot32 r = 0
getprot = 1
map 8K rw = -1 EPERM
map 8K r = ok
mapp 8K rw = -1 EPERM
setprot none = 0
getprot = 0
map 4K r = -1 EPERM
EOF

# ---- 3b. a shared mapping made under a mask without PROT_WRITE cannot gain it --
# (mprotect: EACCES, as the driver, which took the bit out of the mapping's
# allowed ones); one made while the mask had it can; private mappings are not
# followed (see doc/ashmem.md)
ok s3b leg open setsize 8K map 8K r protect rw setprot r map 8K r protect rw protect r \
	protect none
expect_out s3b <<EOF
open /dev/ashmem = 3
setsize 8K = 0
map 8K r = ok
protect rw = 0
setprot r = 0
map 8K r = ok
protect rw = -1 EACCES
protect r = 0
protect none = 0
EOF

# ---- 4. errors: EFAULT (never a crash), ENOTTY, the pin rules ------------------
ok s4 leg open bad setname bad getname setsize 8K map 8K rw bad pin bad unpin \
	bad pinstatus bad fileid ioctl 0x770c 0 ioctl 0x7700 0 pin 1 4K pin 0 12K \
	pin 8K 0 unpin 4K 4097 pinstatus 12K 0 pin 12K 0 open /dev/null ioctl 0x7704 0 \
	bad open bad stat bad access
expect_out s4 <<EOF
open /dev/ashmem = 3
bad setname = -1 EFAULT
bad getname = -1 EFAULT
setsize 8K = 0
map 8K rw = ok
bad pin = -1 EFAULT
bad unpin = -1 EFAULT
bad pinstatus = -1 EFAULT
bad fileid = -1 EFAULT
ioctl 0x770c 0 = -1 ENOTTY
ioctl 0x7700 0 = -1 ENOTTY
pin 1 4K = -1 EINVAL
pin 0 12K = -1 EINVAL
pin 8K 0 = 0
unpin 4K 4097 = -1 EINVAL
pinstatus 12K 0 = -1 EINVAL
pin 12K 0 = -1 EINVAL
open /dev/null = 4
ioctl 0x7704 0 = -1 ENOTTY
bad open = -1 EFAULT
bad stat = -1 EFAULT
bad access = -1 EFAULT
EOF

# ---- 5. unpin, `volatile purge`, pin: WAS_PURGED and zeros; pinned pages intact --
bg p5 leg open setname cache setsize 64K map 64K rw fill 0 64K A unpin 16K 16K \
	unpin 48K 0 pinstatus 0 16K pinstatus 0 32K pinstatus 48K 4K \
	touch "$WORK/unpinned" wait "$WORK/purged" \
	expect 0 16K A expect 32K 16K A pin 16K 16K expect 16K 16K zero \
	pinstatus 16K 16K pin 48K 16K expect 48K 16K zero pin 48K 16K
wait_file "$WORK/unpinned"
ok purge5 vol purge --all
grep -q '^purged 2 ranges, 32768 bytes' "$WORK/purge5.out" || {
	show purge5
	show p5
	fail "volatile purge did not purge the unpinned pages"
}
touch "$WORK/purged"
wait_bg p5
[ "$rc" -eq 0 ] || { show p5; fail "the legacy program failed ($rc)"; }
expect_out p5 <<EOF
open /dev/ashmem = 3
setname cache = 0
setsize 64K = 0
map 64K rw = ok
fill 0 64K A = ok
unpin 16K 16K = 0
unpin 48K 0 = 0
pinstatus 0 16K = 1
pinstatus 0 32K = 0
pinstatus 48K 4K = 0
touch $WORK/unpinned = 0
wait $WORK/purged
expect 0 16K A ok
expect 32K 16K A ok
pin 16K 16K = 1
expect 16K 16K zero ok
pinstatus 16K 16K = 1
pin 48K 16K = 1
expect 48K 16K zero ok
pin 48K 16K = 0
EOF

# ---- 6. ASHMEM_PURGE_ALL_CACHES: pages purged; then nothing left -------------
ok s6 leg open setsize 32K map 32K rw fill 0 32K B unpin 0 8K purgeall expect 8K 24K B \
	pin 0 8K expect 0 8K zero purgeall pin 0 0
expect_out s6 <<EOF
open /dev/ashmem = 3
setsize 32K = 0
map 32K rw = ok
fill 0 32K B = ok
unpin 0 8K = 0
purgeall = 2
expect 8K 24K B ok
pin 0 8K = 1
expect 0 8K zero ok
purgeall = 0
pin 0 0 = 0
EOF

# ---- 7. never purged: pin says NOT_PURGED and the data is intact ------------------
# (and the state outlives the ranges: pinned all over, the name and the mask stay)
ok s7 leg open setname seven setsize 16K map 16K rw fill 0 16K C unpin 0 0 pinstatus 4K 4K \
	pin 0 0 expect 0 16K C pinstatus 0 0 setprot r unpin 0 4K pin 0 4K getname getprot \
	map 4K rw
expect_out s7 <<EOF
open /dev/ashmem = 3
setname seven = 0
setsize 16K = 0
map 16K rw = ok
fill 0 16K C = ok
unpin 0 0 = 0
pinstatus 4K 4K = 0
pin 0 0 = 0
expect 0 16K C ok
pinstatus 0 0 = 1
setprot r = 0
unpin 0 4K = 0
pin 0 4K = 0
getname = seven (5)
getprot = 1
map 4K rw = -1 EPERM
EOF

# ---- 8. SET_NAME loses nothing (DESIGN 4): data written before the first mmap, -
# the file offset and the status flags stay; a fresh region still gets its name
# in the maps, its flags kept
ok s8 leg open setsize 4K write precious offset nonblock setname second offset getfl \
	pread 8 getname map 4K rw expect 0 1 p
expect_out s8 <<EOF
open /dev/ashmem = 3
setsize 4K = 0
write precious = 8
offset = 8
nonblock = 0
setname second = 0
offset = 8
getfl = nonblock
pread 8 = precious
getname = second (6)
map 4K rw = ok
expect 0 1 p ok
EOF
ok s8b leg open setsize 4K nonblock setname renamed getfl offset map 4K rw maps
expect_out s8b <<EOF
open /dev/ashmem = 3
setsize 4K = 0
nonblock = 0
setname renamed = 0
getfl = nonblock
offset = 0
map 4K rw = ok
maps = /memfd:dev/ashmem/renamed (deleted)
EOF

# ---- 9. a region fd this process never saw made: inherited across exec, ------
# or above the fd bitmap. It is still the device to fstat, its size is there
# (no SIGBUS), its prot mask holds, and pin and unpin work after the mmap.
ok s9 leg openx setsize 8K setprot r exec fstat map 8K rw map 8K r expect 0 8K zero \
	unpin 0 4K pinstatus 0 4K pin 0 4K getsize
expect_out s9 <<EOF
openx = 3
setsize 8K = 0
setprot r = 0
exec
usefd 3
fstat = chr 10:61 mode 666
map 8K rw = -1 EPERM
map 8K r = ok
expect 0 8K zero ok
unpin 0 4K = 0
pinstatus 0 4K = 0
pin 0 4K = 0
getsize = 8192
EOF
run s9b leg nofile 65700 open setsize 8K setprot r dupto 65600 fstat map 8K rw map 8K r \
	expect 0 8K zero unpin 0 4K pin 0 4K
if grep -q '^nofile 65700 = -1' "$WORK/s9b.out"; then
	say "RLIMIT_NOFILE may not be raised to 65700 here: fds above 65535 not tried"
else
	[ "$rc" -eq 0 ] || { show s9b; fail "the legacy program failed ($rc)"; }
	expect_out s9b <<EOF
nofile 65700 = 0
open /dev/ashmem = 3
setsize 8K = 0
setprot r = 0
dupto 65600 = 1
fstat = chr 10:61 mode 666
map 8K rw = -1 EPERM
map 8K r = ok
expect 0 8K zero ok
unpin 0 4K = 0
pin 0 4K = 0
EOF
fi

# ---- 10. a bad pointer before the first mmap: EFAULT, as the driver (its -------
# copy_from_user comes before its "no backing file yet" EINVAL)
ok s10 leg open bad pin bad unpin bad pinstatus setsize 4K bad pin pin 0 0
expect_out s10 <<EOF
open /dev/ashmem = 3
bad pin = -1 EFAULT
bad unpin = -1 EFAULT
bad pinstatus = -1 EFAULT
setsize 4K = 0
bad pin = -1 EFAULT
pin 0 0 = -1 EINVAL
EOF
exit 0
