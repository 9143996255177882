# SPDX-License-Identifier: MIT
# removed-lib.sh - sourced by the tests of a region removed while an old
# user of it idles (removed-idle.sh, removed-exit.sh, blind-remark.sh),
# after lib.sh. The old user runs as another user, who cannot open the
# removed region through /proc/PID/map_files (DESIGN 16).
#   removed_user U   skip unless root may run $VT as uid U; then
#                    $ud (U's directory in $WORK), $REG (U's region there)
#   as_user ARGS...  $VT ARGS as U, preloaded, in $REG
#   vol_user ARGS... `volatile ARGS` as U, in $REG
#   old_user ARGS... $VT ARGS as U, preloaded, in $REG, in the background
#                    as `old` (lib.sh's bg), for 120 s at most
#   purged_then_removed  the old user writes $g ($ud/g, 64K of G), marks it
#                    whole and idles until $ud/go; a purge as U zeroes it;
#                    then $REG is removed
#   served [PREFIX [SUFFIX]]  wait until a new process's MARK (run name
#                    new1) is no longer ESTALE, 10 s at most, else fail
#                    "PREFIXa new process still gets ESTALE 10 s after
#                    the rmSUFFIX"; then it must say 0

removed_user() {
	U=$1
	[ "$(id -u)" -eq 0 ] || skip "needs root to run as another user (who cannot open map_files)"
	command -v setpriv >/dev/null 2>&1 || skip "no setpriv"
	share_build "$U"
	setpriv --reuid="$U" --regid="$U" --clear-groups -- test -x "$VT" ||
		skip "user $U cannot run $VT"
	ud=$WORK/u
	mkdir "$ud" && chmod 0711 "$WORK" && chown "$U:$U" "$ud" || fail "cannot make $ud"
	REG=$ud/region
}

as_user() {
	setpriv --reuid="$U" --regid="$U" --clear-groups -- env VOLATILE_REGION="$REG" \
		LD_PRELOAD="$VOLATILE_LIBRARY" timeout "$VL_TIMEOUT" "$VT" "$@"
}

vol_user() {
	setpriv --reuid="$U" --regid="$U" --clear-groups -- env VOLATILE_REGION="$REG" \
		timeout "$VL_TIMEOUT" "$VOLATILE_CMD" "$@"
}

old_user() {
	bg old setpriv --reuid="$U" --regid="$U" --clear-groups -- env VOLATILE_REGION="$REG" \
		LD_PRELOAD="$VOLATILE_LIBRARY" timeout 120 "$VT" "$@"
}

# shellcheck disable=SC2154 # rc: set by lib.sh's run
purged_then_removed() {
	g=$ud/g
	as_user open "$g" rwt fill 0 64K G >/dev/null || fail "cannot write $g"
	old_user open "$g" rw mark 0 64K touch "$ud/g-marked" wait "$ud/go"
	wait_file "$ud/g-marked"
	run purge vol_user purge --all
	[ "$rc" -eq 0 ] || { show purge; fail "volatile purge: exit status $rc"; }
	ok g-zeros vt open "$g" r expect 0 64K zero
	rm "$REG"
}

served() {
	_i=0
	while :; do
		run new1 as_user memfd m 64K mark 0 4K
		grep -qx 'mark 0 4K = -1 ESTALE' "$WORK/new1.out" || break
		_i=$((_i + 1))
		[ "$_i" -le 100 ] || { show new1; fail "$1a new process still gets ESTALE 10 s after the rm$2"; }
		sleep 0.1
	done
	expect_line new1 "mark 0 4K = 0"
}
