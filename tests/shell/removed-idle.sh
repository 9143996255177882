#!/bin/sh
# SPDX-License-Identifier: MIT
# The region removed (rm) while one old user of it idles for good: it
# marked once, sleeps, never calls the library again, and is not stopped
# (DESIGN 16). As a user who cannot open
# /proc/PID/map_files, nobody else can open the old region: new processes
# used to get ESTALE for as long as that user lived (5 of 5 MARKs over
# 10 s). Now the new region serves within a few seconds (its young
# period, 2 s), and what it does not hold whole, an UNMARK says 1 of:
#
#   1. a new process's MARK of a memfd is served within 10 s of the rm;
#   2. its UNMARK of G, which the old user marked and `volatile purge`
#      punched before the rm (only the old region knows), says 1, not 0
#      over zeros;
#   3. its MARK then UNMARK of F: F's record, made while the region
#      serves blind, says 1 (the old region might have purged bytes of F
#      that MARK would join unseen: blind-remark.sh), and F is intact;
#   4. the old user wakes and UNMARKs F: it follows to the new region
#      (its look at the name is more than a second old) and answers from
#      both: 0 only over intact bytes;
#   5. the old region moved in, the new one settles: UNMARK of an unmarked
#      file says 0 again, and status shows no older region left.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/removed-lib.sh"
need_cmd
need_python

removed_user 4244
f=$ud/f
g=$ud/g
as_user open "$f" rwt fill 0 64K F >/dev/null || fail "cannot write $f"
as_user open "$g" rwt fill 0 64K G >/dev/null || fail "cannot write $g"

# the old user: marks G (purged below), then F, then idles until told
old_user open "$g" rw mark 0 64K touch "$ud/g-marked" wait "$ud/g-purged" \
	open "$f" rw mark 0 64K touch "$ud/ready" wait "$ud/go" unmark 0 64K
wait_file "$ud/g-marked"
run purge vol_user purge --all
[ "$rc" -eq 0 ] || { show purge; fail "volatile purge: exit status $rc"; }
ok g-zeros vt open "$g" r expect 0 64K zero
touch "$ud/g-purged"
wait_file "$ud/ready"
rm "$REG"
t0=$(date +%s)

# 1. served within 10 s (the young period is 2 s)
served "1: " ", the old user idle"
say "1: served $(($(date +%s) - t0)) s after the rm"

# 2. what only the old region knows: purged G
ok new2 as_user open "$g" rw unmark 0 64K
expect_line new2 "unmark 0 64K = 1"

# 3. a record made while blind: a false 1, never a 0 over what the old region punched
ok new3 as_user open "$f" rw mark 0 64K unmark 0 64K
expect_line new3 "unmark 0 64K = 1"
ok f-bytes vt open "$f" r expect 0 64K F

# 4. the old user wakes
touch "$ud/go"
wait_bg old
[ "$rc" -eq 0 ] || { show old; fail "4: the old user: exit status $rc"; }
if grep -qx 'unmark 0 64K = 0' "$WORK/old.out"; then
	ok old-bytes vt open "$f" r expect 0 64K F
else
	expect_line old "unmark 0 64K = 1"
fi

# 5. the old region moved in by its user: the new one settles (a look
# every 10 s at most while older ones are left)
i=0
while :; do
	run st vol_user status --json
	"$PYTHON" -m json.tool "$WORK/st.out" >/dev/null 2>&1 || { show st; fail "5: status --json"; }
	[ "$(jq_py st 'd["older_left"]')" = false ] && break
	as_user memfd m 4K mark 0 4K >/dev/null
	i=$((i + 1))
	[ "$i" -le 300 ] || { show st; fail "5: the new region still says older regions are left 30 s after the old user moved its own"; }
	sleep 0.1
done
expect_eq "5: state" "$(jq_py st 'd["state"]')" "in use"
ok new5 as_user open "$ud/h" rwc fill 0 4K H unmark 0 4K
expect_line new5 "unmark 0 4K = 0"
exit 0
