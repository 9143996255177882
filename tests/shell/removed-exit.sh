#!/bin/sh
# SPDX-License-Identifier: MIT
# The region removed (rm) while an old user of it idles; that user then
# exits without calling the library again, so nobody ever moves its
# region into the new one, and its records (a purged range of G) go with
# it. The new region stops being blind once no older region is left
# (DESIGN 16) and then answers an UNMARK of G from its own records and
# tombstones only: neither heard of G. DESIGN 18 counts "removal of the
# region's name while it is in use" as defended; THE INVARIANT says no
# UNMARK says 0 over purged bytes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/removed-lib.sh"
need_cmd
need_python

removed_user 4252
# the old user (removed-lib.sh): marks G, is purged, idles until told, exits without a call
purged_then_removed

served
ok new2 as_user open "$g" rw unmark 0 4K
expect_line new2 "unmark 0 4K = 1"

# the old user exits, its region unmoved
touch "$ud/go"
wait_bg old
[ "$rc" -eq 0 ] || { show old; fail "the old user: exit status $rc"; }

# the new region looks again (every 10 s while blind) and finds nothing left
i=0
while :; do
	run st vol_user status --json
	"$PYTHON" -m json.tool "$WORK/st.out" >/dev/null 2>&1 || { show st; fail "status --json"; }
	[ "$(jq_py st 'd["older_left"]')" = false ] && break
	as_user memfd m 4K mark 0 4K >/dev/null
	i=$((i + 1))
	[ "$i" -le 300 ] || break # still blind 30 s on: it says 1, as it should
	sleep 0.1
done
say "older_left: $(jq_py st 'd["older_left"]') after $i looks"
ok g-still-zeros vt open "$g" r expect 4K 60K zero
ok new3 as_user open "$g" rw unmark 4K 60K
expect_line new3 "unmark 4K 60K = 1"

# part b: the old user exits while the new region still waits (its young
# period, 2 s): the new region never serves blind, and its settle that
# finds nothing left must not forget what it saw left before
REG=$ud/region-b
h=$ud/h
as_user open "$h" rwt fill 0 64K H >/dev/null || fail "cannot write $h"
rm -f "$ud/go"
bg oldb setpriv --reuid=$U --regid=$U --clear-groups -- env VOLATILE_REGION="$REG" \
	LD_PRELOAD="$VOLATILE_LIBRARY" timeout 120 "$VT" \
	open "$h" rw mark 0 64K touch "$ud/h-marked" wait "$ud/go"
wait_file "$ud/h-marked"
run purgeb vol_user purge --all
[ "$rc" -eq 0 ] || { show purgeb; fail "b: volatile purge: exit status $rc"; }
ok h-zeros vt open "$h" r expect 0 64K zero
rm "$REG"
run b1 as_user memfd m 64K mark 0 4K
expect_line b1 "mark 0 4K = -1 ESTALE"
touch "$ud/go"
wait_bg oldb
served "b: "
run stb vol_user status --json
say "b: older_left: $(jq_py stb 'd["older_left"]')"
ok hb-zeros vt open "$h" r expect 0 64K zero
ok b3 as_user open "$h" rw unmark 0 64K
expect_line b3 "unmark 0 64K = 1"
exit 0
