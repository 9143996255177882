#!/bin/sh
# SPDX-License-Identifier: MIT
# A region's tombstones move with its records (DESIGN 15,
# 16): a file whose purged record was evicted from a full table
# (evict.c) must go on answering 1 after the region's name is removed and
# its records are moved into a new region (move.c); it said 0 over its
# zeroed bytes when only the records moved.
#
# As root, for uid 4246 (an eviction needs files no process can prove
# gone: a non-dumpable process of the user runs throughout); the test
# build of the library stands for the minute of silence an eviction waits
# (VOLATILE_FAULT_EVICT_AGE=0).
. "$(dirname "$0")/lib.sh"
share_build 4246
need_cmd

U=4246
[ "$(id -u)" -eq 0 ] || skip "not root: cannot run as another user"
command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) is not installed"
setpriv --reuid=$U --regid=$U --clear-groups -- test -x "$VT" ||
	skip "the build tree is not readable by uid $U: $VT"
need_fault_lib

chmod 0711 "$WORK" || fail "chmod $WORK"
ud=$WORK/u
mkdir -p "$ud/d1" "$ud/d2" && chown -R $U:$U "$ud" || fail "cannot make $ud"
as_user() {
	setpriv --reuid=$U --regid=$U --clear-groups -- env VOLATILE_REGION="$ud/region" \
		VOLATILE_REGION_FILES=8 timeout 30 "$@"
}
usvt() {
	as_user env LD_PRELOAD="$VOLATILE_LIBRARY" "$VT" "$@"
}

# a non-dumpable process of the user: /proc proves nothing gone
bg blind as_user "$VT" nodump touch "$ud/blind" wait "$ud/end"
wait_file "$ud/blind"
f=$ud/d1/f
ok mark usvt open "$f" rwc fill 0 64K F mark 0 4K
ok purge as_user "$VOLATILE_CMD" purge --all
expect_line purge "purged 1 range, 4096 bytes"
mv "$f" "$ud/d2/f" || fail "mv"
f=$ud/d2/f # its recorded path leads nowhere now: unreachable
# C: a user of the region, idle, that moves it after its name is removed
bg c usvt memfd c 4K mark 0 4K touch "$ud/c-ready" wait "$ud/go" memfd x 4K mark 0 4K
wait_file "$ud/c-ready"
for i in 1 2 3 4 5 6; do
	ok "fill$i" usvt memfd "m$i" 4K mark 0 4K
done
run evict as_user env LD_PRELOAD="$FAULT_LIB" VOLATILE_FAULT_EVICT_AGE=0 "$VT" memfd e 4K mark 0 4K
expect_line evict "mark 0 4K = 0"
ok before usvt open "$f" rw unmark 0 4K
expect_line before "unmark 0 4K = 1"
rm "$ud/region"
touch "$ud/go"
wait_bg c
[ "$rc" -eq 0 ] || { show c; fail "the region's user: exit status $rc"; }
expect_line c "mark 0 4K = 0"
# no record of it in the new region: the moved tombstones answer; and a
# record made for it again there is marked as the tombstones' too
ok after usvt open "$f" rw unmark 0 4K expect 0 4K zero mark 0 4K unmark 0 4K
expect_out after <<EOF
open $f rw = 3
unmark 0 4K = 1
expect 0 4K zero ok
mark 0 4K = 0
unmark 0 4K = 1
EOF
touch "$ud/end"
wait_bg blind
exit 0
