#!/bin/sh
# SPDX-License-Identifier: MIT
# A file whose record is flagged (VL_FF_TOMB: a repair lost a purged range
# of it, DESIGN 11; or made for an identity the tombstones hold, DESIGN 15)
# answers every UNMARK with 1. `volatile status` must say so, ranges or
# none: a user asking why an UNMARK over bytes they never saw purged says
# 1 finds the answer there, and in --json ("unmark_says_purged").
. "$(dirname "$0")/lib.sh"
need_cmd
need_python
need_plant

F=$WORK/F
new_region
flag_by_repair "$F"

# the flagged record holds no range now: shown all the same
ok st vol status
grep -F "$F" "$WORK/st.out" | grep -qF "(every UNMARK says 1: a repair or a tombstone)" ||
	{ show st; fail "status does not show $F's record as flagged"; }
status_json js
got=$(jq_py js "[f.get('unmark_says_purged') for f in d['file_list'] if f.get('path') == '$F']")
expect_eq "status --json: $F's unmark_says_purged" "$got" "[true]"

# with a range again: still flagged, and an unflagged file is not
mkfile "$WORK/G" 64K G
ok m svt open "$F" rw mark 0 4K open "$WORK/G" rw mark 0 4K
ok st2 vol status
grep -F "$F" "$WORK/st2.out" | grep -qF "(every UNMARK says 1" ||
	{ show st2; fail "status does not show $F's record as flagged once it has a range"; }
if grep -F "$WORK/G" "$WORK/st2.out" | grep -qF "(every UNMARK says 1"; then
	show st2
	fail "status shows $WORK/G as flagged"
fi
exit $FAILED
