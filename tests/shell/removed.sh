#!/bin/sh
# SPDX-License-Identifier: MIT
# The region's name removed, renamed or replaced while programs use it
# (DESIGN 16): logind's RemoveIPC, tmpfiles cleaners and rm do
# it. No purge may punch through a region new processes no longer find,
# and no process may answer from a region that lacks what another still
# holds: the old region's records are moved into the one new processes
# find, and that one answers nothing (ESTALE) until they are.
#
#   a. removed, as root: the new region's maker reaches the old one through
#      /proc/PID/map_files and moves it in at once. The issue's case: P1
#      marks F; the region is removed; P2 unmarks F (0); P1's budget purge
#      must not punch F.
#   b. removed, as a user who cannot open /proc/PID/map_files: P2's UNMARK
#      fails with ESTALE until P1 (its next call, a second later) moves its
#      region in; then P2 gets an answer, and every 0 covers intact bytes.
#   c. renamed away, with a purged range: P2's UNMARK must say 1, not 0.
#   d. replaced by another region (renamed over it): the same (as a user,
#      who cannot reach the replaced region, after ESTALE, as in b).
#   e. as b, with the old region's user idle: the daemon (a user of the
#      old region too) moves it in within a second or two.
#   f. renamed away and back: the retired region back at its name is
#      taken away, not answered ESTALE for ever.
#   g, h. as b, with the old region's user out of sight: non-dumpable (its
#      maps closed to others), or in a pid namespace of its own. The new
#      region finds it in use in /proc/locks (an OFD lock on its tag byte),
#      and waits for it.
#   i. as g, with the region's name spelt otherwise by the old user.
. "$(dirname "$0")/lib.sh"
share_build 4243
need_cmd
need_python

# intact_or_purged NAME FILE FILL: NAME's "unmark 0 64K = R": 0 only over intact bytes
intact_or_purged() {
	if grep -qx 'unmark 0 64K = 0' "$WORK/$1.out"; then
		ok "$1-bytes" vt open "$2" r expect 0 64K "$3"
	else
		expect_line "$1" "unmark 0 64K = 1"
	fi
}

# ---- a. removed; the new region's maker moves the old one in (root) ------------------
if [ "$(id -u)" -eq 0 ]; then
	new_region
	f=$WORK/fa
	mkfile "$f" 64K A
	bg a1 svte VOLATILE_BUDGET=64K -- open "$f" rw mark 0 64K touch "$WORK/a-ready" \
		wait "$WORK/a-go" memfd m 128K fill 0 128K M mark 0 128K echo done
	wait_file "$WORK/a-ready"
	rm "$VOLATILE_REGION"
	ok a2 svt open "$f" rw unmark 0 64K
	expect_line a2 "unmark 0 64K = 0"
	touch "$WORK/a-go"
	wait_bg a1
	[ "$rc" -eq 0 ] || { show a1; fail "a: the first process: exit status $rc"; }
	expect_line a1 "mark 0 128K = 0"
	ok a-bytes vt open "$f" r expect 0 64K A
	# one region now, with the first process's records: its memfd's range, purged
	# by its budget; nothing of F, which the second process unmarked
	status_json a-st
	expect_eq "a: volatile bytes in the region new processes find" \
		"$(jq_py a-st 'd["volatile_bytes"]')" 0
	expect_eq "a: purged bytes in it" "$(jq_py a-st 'd["purged_bytes"]')" 131072
else
	say "not root: part a (map_files) is not run"
fi

# ---- b. removed; the old region's user moves it in ------------------------------------
U=4243
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 &&
	setpriv --reuid=$U --regid=$U --clear-groups -- test -x "$VT"; then
	ud=$WORK/u
	mkdir "$ud" && chmod 0711 "$WORK" && chown $U:$U "$ud" || fail "cannot make $ud"
	as_user() {
		setpriv --reuid=$U --regid=$U --clear-groups -- env VOLATILE_REGION="$ud/region" \
			LD_PRELOAD="$VOLATILE_LIBRARY" timeout "$VL_TIMEOUT" "$VT" "$@"
	}
	f=$ud/fb
	as_user open "$f" rwt fill 0 64K B >/dev/null || fail "b: cannot write $f"
	bg b1 as_user open "$f" rw mark 0 64K touch "$ud/b-ready" wait "$ud/b-go" sleep 1100 \
		memfd m 64K mark 0 4K echo done
	wait_file "$ud/b-ready"
	rm "$ud/region"
	run b2 as_user open "$f" rw unmark 0 64K
	expect_line b2 "unmark 0 64K = -1 ESTALE"
	run b-st setpriv --reuid=$U --regid=$U --clear-groups -- env VOLATILE_REGION="$ud/region" \
		timeout "$VL_TIMEOUT" "$VOLATILE_CMD" status --json
	[ "$rc" -eq 0 ] || { show b-st; fail "b: volatile status: exit status $rc"; }
	expect_eq "b: the new region's state" "$(jq_py b-st 'd["state"]')" waiting
	touch "$ud/b-go"
	wait_bg b1
	[ "$rc" -eq 0 ] || { show b1; fail "b: the first process: exit status $rc"; }
	expect_line b1 "mark 0 4K = 0"
	ok b3 as_user open "$f" rw unmark 0 64K
	intact_or_purged b3 "$f" B
	expect_line b3 "unmark 0 64K = 0"

	# e. the same with the old region's user idle for good: the daemon,
	# which uses the old region too, moves it within a second or two
	f=$ud/fe
	as_user open "$f" rwt fill 0 64K E >/dev/null || fail "e: cannot write $f"
	bg e1 as_user open "$f" rw mark 0 64K touch "$ud/e-ready" wait "$ud/e-go"
	wait_file "$ud/e-ready"
	bg ed setpriv --reuid=$U --regid=$U --clear-groups -- env VOLATILE_REGION="$ud/region" \
		timeout 60 "$VOLATILE_CMD" daemon --foreground --interval 50
	wait_match ed err "daemon"
	rm "$ud/region"
	i=0
	while :; do
		run e2 as_user open "$f" rw unmark 0 64K
		grep -qx 'unmark 0 64K = -1 ESTALE' "$WORK/e2.out" || break
		i=$((i + 1))
		[ "$i" -le 300 ] || { show ed; fail "e: still ESTALE after 30 s: the daemon did not move the old region"; }
		sleep 0.1
	done
	expect_line e2 "unmark 0 64K = 0"
	ok e-bytes as_user open "$f" r expect 0 64K E
	grep -q 'its records are moved to' "$WORK/ed.err" || { show ed; fail "e: the daemon did not say it moved the region"; }
	touch "$ud/e-go"
	wait_bg e1
	eval "kill \$BG_ed"
	wait_bg ed

	# g. the old region's user cannot be looked into (non-dumpable): its maps are
	# closed to the new region's maker, which must still not answer without its
	# records (it finds the region in use in /proc/locks); h. the same with the
	# user in a pid namespace of its own (with its own /proc)
	# i. as g, with the old region's user spelling its name otherwise
	# ($ud//./region): one region, one tag (a tag hashed from the spelling
	# let the new region answer at once, 0 over purged bytes)
	for how in g h i; do
		f=$ud/f$how
		as_user open "$f" rwt fill 0 64K G >/dev/null || fail "$how: cannot write $f"
		if [ "$how" = g ]; then
			bg "${how}1" as_user open "$f" rw mark 0 64K nodump touch "$ud/$how-ready" \
				wait "$ud/$how-go" sleep 1100 memfd m 4K mark 0 4K
		elif [ "$how" = i ]; then
			rm -f "$ud/region"	# so that i1 makes the old region, by its spelling
			bg "${how}1" setpriv --reuid=$U --regid=$U --clear-groups -- \
				env VOLATILE_REGION="$ud//./region" LD_PRELOAD="$VOLATILE_LIBRARY" \
				timeout "$VL_TIMEOUT" "$VT" open "$f" rw mark 0 64K nodump touch "$ud/$how-ready" \
				wait "$ud/$how-go" sleep 1100 memfd m 4K mark 0 4K
		else
			bg "${how}1" own_proc setpriv --reuid=$U --regid=$U --clear-groups -- \
				env VOLATILE_REGION="$ud/region" LD_PRELOAD="$VOLATILE_LIBRARY" \
				timeout "$VL_TIMEOUT" "$VT" open "$f" rw mark 0 64K touch "$ud/$how-ready" \
				wait "$ud/$how-go" sleep 1100 memfd m 4K mark 0 4K
		fi
		wait_file "$ud/$how-ready"
		run "$how-purge" setpriv --reuid=$U --regid=$U --clear-groups -- env \
			VOLATILE_REGION="$ud/region" timeout "$VL_TIMEOUT" "$VOLATILE_CMD" purge --all
		grep -q '^purged 1 range, 65536 bytes' "$WORK/$how-purge.out" ||
			{ show "$how-purge"; fail "$how: the purge did not purge the range"; }
		rm "$ud/region"
		run "${how}2" as_user open "$f" rw unmark 0 64K
		expect_line "${how}2" "unmark 0 64K = -1 ESTALE"
		touch "$ud/$how-go"
		wait_bg "${how}1"
		[ "$rc" -eq 0 ] || { show "${how}1"; fail "$how: the first process: exit status $rc"; }
		ok "${how}3" as_user open "$f" rw unmark 0 64K expect 0 64K zero
		expect_line "${how}3" "unmark 0 64K = 1"
	done
else
	say "not root, or uid $U cannot run the build tree: parts b and e are not run"
fi

# ---- c. renamed away, a purged range in it ---------------------------------------------
new_region
f=$WORK/fc
mkfile "$f" 64K C
bg c1 svt open "$f" rw mark 0 64K touch "$WORK/c-ready" wait "$WORK/c-go"
wait_file "$WORK/c-ready"
ok c-purge vol purge --all
expect_line c-purge "purged 1 range, 65536 bytes"
mv "$VOLATILE_REGION" "$VOLATILE_REGION.old"
ok c2 svt open "$f" rw unmark 0 64K
expect_line c2 "unmark 0 64K = 1"
touch "$WORK/c-go"
wait_bg c1
[ "$rc" -eq 0 ] || { show c1; fail "c: the first process: exit status $rc"; }

# ---- d. replaced by another region, renamed over it -------------------------------------
new_region
f=$WORK/fd
mkfile "$f" 64K D
bg d1 svt open "$f" rw mark 0 64K touch "$WORK/d-ready" wait "$WORK/d-go" sleep 1100 \
	memfd m 4K mark 0 4K
wait_file "$WORK/d-ready"
ok d-purge vol purge --all
expect_line d-purge "purged 1 range, 65536 bytes"
ok d-other svte VOLATILE_REGION="$WORK/other-region" -- memfd x 4K mark 0 4K
mv "$WORK/other-region" "$VOLATILE_REGION"
run d2 svt open "$f" rw unmark 0 64K
if [ "$(id -u)" -eq 0 ]; then
	expect_line d2 "unmark 0 64K = 1"
else
	# the replaced region has no name left: only /proc/PID/map_files, root's,
	# reaches it; as in b, nothing is answered until its user moves it in
	# at its next call
	expect_line d2 "unmark 0 64K = -1 ESTALE"
fi
touch "$WORK/d-go"
wait_bg d1
[ "$rc" -eq 0 ] || { show d1; fail "d: the first process: exit status $rc"; }
if [ "$(id -u)" -ne 0 ]; then
	ok d3 svt open "$f" rw unmark 0 64K
	expect_line d3 "unmark 0 64K = 1"
fi
# ---- f. renamed away and back: the retired region back at its name ---------------------
# The first rename has the user move the region into a new one, which retires
# it; the second puts the retired region back at the name. It answers
# nothing, for ever: it must not keep anyone from the feature.
new_region
bg f1 svt memfd m 64K mark 0 4K touch "$WORK/f-1" wait "$WORK/f-go1" sleep 1100 mark 4K 4K \
	touch "$WORK/f-2" wait "$WORK/f-go2" sleep 1100 mark 8K 4K unmark 0 12K
wait_file "$WORK/f-1"
mv "$VOLATILE_REGION" "$VOLATILE_REGION.old"
touch "$WORK/f-go1"
wait_file "$WORK/f-2"
mv "$VOLATILE_REGION.old" "$VOLATILE_REGION"
touch "$WORK/f-go2"
wait_bg f1
[ "$rc" -eq 0 ] || { show f1; fail "f: exit status $rc"; }
expect_line f1 "mark 4K 4K = 0"
expect_line f1 "mark 8K 4K = 0"
expect_line f1 "unmark 0 12K = 0"
ok f2 svt memfd n 4K mark 0 4K unmark 0 4K
expect_line f2 "unmark 0 4K = 0"
exit 0
