#!/bin/sh
# SPDX-License-Identifier: MIT
# A new region serving blind (DESIGN 16) after `rm` of the old one, while
# an idle old user keeps it: a new process MARKs bytes the old region had
# flagged purged and punched, then UNMARKs them. In one region that MARK
# joins the purged range (DESIGN 3: "the merged range is purged if any
# part of it was") and its UNMARK says 1. The new region never heard of
# the old purge: its record is made with an unpurged range, which it then
# "holds whole", so the blind test lets the UNMARK say 0 over 64 KiB of
# zeros. Also the same through a second
# MARK of a part of the range, and through a memfd both processes share.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/removed-lib.sh"
need_cmd

removed_user 4251
# the old user (removed-lib.sh): marks G, is purged, then idles until told
purged_then_removed

# a new process is served (blind) within 10 s
served

# G's bytes are zeros, purged while volatile: MARK then UNMARK must say 1
ok new2 as_user open "$g" rw expect 0 64K zero mark 0 64K unmark 0 64K
expect_line new2 "unmark 0 64K = 1"
ok new3 as_user open "$g" rw mark 0 4K unmark 0 4K
expect_line new3 "unmark 0 4K = 1"
touch "$ud/go"
wait_bg old
exit 0
