#!/bin/sh
# SPDX-License-Identifier: MIT
# errno is never clobbered by the shim's own work on success (DESIGN 5).
# vt sets errno to a sentinel before every fallocate and reports
# "ERRNO-CHANGED" (and exits 1) if a call that succeeded changed it.
# Here the calls that make the shim work hardest: the first MARK of a
# process (it creates or attaches the region), MARKs that look for a
# file's name, MARKs whose budget purges files that are gone or held by
# a process that exited, UNMARKs of files never marked, UNMARKs that
# report a purge, the 2012 aliases turned on (VOLATILE_2012_ABI=1: an
# fstatfs), ordinary modes after the region turned out unusable.
. "$(dirname "$0")/lib.sh"

f=$WORK/file
g=$WORK/gone
mkfile "$f" 64K A
mkfile "$g" 64K G

# the first call of a process creates the region...
ok first svt memfd m 64K mark 0 4K unmark 0 4K
expect_out first <<EOF
memfd m 64K = 3
mark 0 4K = 0
unmark 0 4K = 0
EOF
[ -f "$VOLATILE_REGION" ] || fail "no region was made"
# ...or attaches it: an UNMARK first, of a file never marked
ok attach svte VOLATILE_2012_ABI=1 -- open "$f" rw unmark 0 4K unmark 8K 1 mark 0 4K \
	mark 0 4K unmark 0 4K fa 0x4 8K 4K fa 0x8 8K 4K fa 0 0 64K fa 'PUNCH_HOLE|KEEP_SIZE' 60K 4K
expect_out attach <<EOF
open $f rw = 3
unmark 0 4K = 0
unmark 8K 1 = 0
mark 0 4K = 0
mark 0 4K = 0
unmark 0 4K = 0
fa 0x4 8K 4K = 0
fa 0x8 8K 4K = 0
fa 0 0 64K = 0
fa PUNCH_HOLE|KEEP_SIZE 60K 4K = 0
EOF

# files the budget's purge must look for: a memfd whose only holder
# exited, and a named file that was then unlinked. A purge inside a MARK
# forgets them only on the kernel's word (root: CAP_DAC_READ_SEARCH), else
# skips them (DESIGN 13); either way the MARK purges its own range too, and
# the 2K left of the gone files and the next MARK stay within the budget:
# the same answers as root and as an ordinary user.
ok gone1 svt memfd x 64K mark 0 1K
ok gone2 svt open "$g" rw mark 0 1K
rm -f "$g"
ok budget svte VOLATILE_BUDGET=6K -- open "$f" rw mark 16K 8K unmark 16K 8K mark 32K 2K \
	unmark 32K 2K expect 16K 8K zero
expect_out budget <<EOF
open $f rw = 3
mark 16K 8K = 0
unmark 16K 8K = 1
mark 32K 2K = 0
unmark 32K 2K = 0
expect 16K 8K zero ok
EOF

# a disk file: the alias test finds it is not tmpfs, the call succeeds
if [ -n "$DISK" ]; then
	ok disk svte VOLATILE_2012_ABI=1 -- open "$DISK/file" rwt fill 0 64K D fa 0x8 0 4K \
		fa 0 0 4K fa 0x1 64K 4K
	expect_out disk <<EOF
open $DISK/file rwt = 3
fill 0 64K D = ok
fa 0x8 0 4K = 0
fa 0 0 4K = 0
fa 0x1 64K 4K = 0
EOF
fi

# an unusable region: MARK fails (errno set); what succeeds keeps errno
new_region
printf 'garbage' >"$VOLATILE_REGION"
chmod 0600 "$VOLATILE_REGION"
ok unusable svte VOLATILE_2012_ABI=1 -- open "$f" rw mark 0 4K fa 0 0 4K unmark 0 4K \
	fa KEEP_SIZE 0 4K fa 0x4 0 4K
expect_out unusable <<EOF
open $f rw = 3
mark 0 4K = -1 EUCLEAN
fa 0 0 4K = 0
unmark 0 4K = -1 EUCLEAN
fa KEEP_SIZE 0 4K = 0
fa 0x4 0 4K = -1 EUCLEAN
EOF
exit 0
