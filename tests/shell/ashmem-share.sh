#!/bin/sh
# SPDX-License-Identifier: MIT
# ashmem (DESIGN 7): a region's state lives in the shared region, so a forked
# child and a process that received the fd over a Unix socket (SCM_RIGHTS)
# see the same name, size, prot mask and pins, and what one does the
# other sees: a mask lowered by one refuses the other's mmap, a purge
# asked by one shows in the other's pin.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ashmem-lib.sh"

# ---- 1. fork --------------------------------------------------------------------
ok f1 leg open setname shared setsize 64K map 64K rw fill 0 64K S setprot rw unpin 0 16K \
	spawn getname getsize getprot pinstatus 0 16K pinstatus 16K 16K fstat setprot r \
	purgeall unpin 32K 4K end \
	reap getprot pinstatus 32K 4K pin 0 16K expect 0 16K zero expect 16K 48K S \
	map 4K rw map 4K r
expect_out f1 <<EOF
open /dev/ashmem = 3
setname shared = 0
setsize 64K = 0
map 64K rw = ok
fill 0 64K S = ok
setprot rw = 0
unpin 0 16K = 0
getname = shared (6)
getsize = 65536
getprot = 3
pinstatus 0 16K = 0
pinstatus 16K 16K = 1
fstat = chr 10:61 mode 666
setprot r = 0
purgeall = 4
unpin 32K 4K = 0
reap = 0
getprot = 1
pinstatus 32K 4K = 0
pin 0 16K = 1
expect 0 16K zero ok
expect 16K 48K S ok
map 4K rw = -1 EPERM
map 4K r = ok
EOF

# ---- 2. SCM_RIGHTS: another program, started on its own, receives the fd ---------
sock=$WORK/sock
bg a2 leg open setname sent setsize 64K map 64K rw fill 0 64K Z setprot rw unpin 32K 16K \
	serve "$sock" wait "$WORK/b-done" getprot pinstatus 0 4K pin 32K 16K \
	expect 32K 16K zero pin 0 4K expect 0 4K zero expect 4K 28K Z expect 48K 16K Z
ok b2 leg recv "$sock" fstat getname getsize getprot pinstatus 32K 16K pinstatus 0 32K \
	setname other setsize 4K map 64K rwx map 64K rw expect 0 32K Z unpin 0 4K setprot r \
	map 4K rw purgeall fileid touch "$WORK/b-done"
expect_out b2 <<EOF
recv $sock = ok
fstat = chr 10:61 mode 666
getname = sent (4)
getsize = 65536
getprot = 3
pinstatus 32K 16K = 0
pinstatus 0 32K = 1
setname other = -1 EINVAL
setsize 4K = -1 EINVAL
map 64K rwx = -1 EPERM
map 64K rw = ok
expect 0 32K Z ok
unpin 0 4K = 0
setprot r = 0
map 4K rw = -1 EPERM
purgeall = 5
fileid = ino
touch $WORK/b-done = 0
EOF
wait_bg a2
[ "$rc" -eq 0 ] || { show a2; fail "the sender failed ($rc)"; }
expect_out a2 <<EOF
open /dev/ashmem = 3
setname sent = 0
setsize 64K = 0
map 64K rw = ok
fill 0 64K Z = ok
setprot rw = 0
unpin 32K 16K = 0
serve $sock = 1
wait $WORK/b-done
getprot = 1
pinstatus 0 4K = 0
pin 32K 16K = 1
expect 32K 16K zero ok
pin 0 4K = 1
expect 0 4K zero ok
expect 4K 28K Z ok
expect 48K 16K Z ok
EOF
exit 0
