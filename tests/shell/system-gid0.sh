#!/bin/sh
# SPDX-License-Identifier: MIT
# A uid with no passwd entry gets, in its worker, no supplementary group
# and the region file's group as its own (DESIGN 22): a group its owner
# was in when it made the file, or chgrp'ed it. But root's `chown UID
# FILE` (a region made for a user by an admin, or restored) leaves the
# group root's: the worker must not run with gid 0, root's group, which
# its user never had. It gets the overflow group (65534, "nogroup") and
# still purges its user's range.
SYS_UIDS="61151 61152"
. "$(dirname "$0")/system-root-lib.sh"
if getent passwd $U1 >/dev/null 2>&1; then
	skip "uid $U1 has a passwd entry here: its worker takes that entry's groups"
fi
sys_daemon_turn

f1=$WORK/u$U1/f
holder h1 $U1 open "$f1" rwc fill 0 64K A mark 0 4K touch "$CUE/u1-marked" wait "$CUE/end"
wait_file "$CUE/u1-marked"
ok grp chgrp 0 "/dev/shm/libvolatile.$U1"

sys_daemon_start
u1_purged() {
	[ "$(purged_of s1 $U1)" = true ]
}
sys_until_within "U1's range purged" 60 u1_purged
sys_wait_worker $U1
st=/proc/$w_found/status
expect_eq "worker $w_found's uids" "$(awk '$1 == "Uid:" { print $2, $3, $4, $5 }' "$st")" "$U1 $U1 $U1 $U1"
expect_eq "worker $w_found's gids (region file's group 0)" \
	"$(awk '$1 == "Gid:" { print $2, $3, $4, $5 }' "$st")" "65534 65534 65534 65534"
expect_eq "worker $w_found's groups" "$(awk '$1 == "Groups:" { print $2 }' "$st")" ""
touch "$CUE/end"
wait_bg h1
exit $FAILED
