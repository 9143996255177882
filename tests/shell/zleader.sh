#!/bin/sh
# SPDX-License-Identifier: MIT
# A file held only by a thread that /proc/PID/fd does not show must not be
# taken for gone (DESIGN 15; purge.c point 5):
#
#   a. its main thread exited (pthread_exit): the zombie leader's fd table
#      and maps read empty while a thread runs on, holding the memfd;
#   b. a thread took a copy of the fd table (unshare(CLONE_FILES)) and the
#      main thread closed the memfd in its own: only /proc/PID/task/TID/fd
#      shows it.
#
# A purger (the user's, unprivileged, so without the kernel's word by file
# handle) that found it in no process's table twice, more than 3 s apart,
# forgot its purged range: the thread's UNMARK said 0 over the zeros. (The
# purges that look for it twice are the test build of the command's, told
# a grace of VL_GRACE s rather than 3.)
. "$(dirname "$0")/lib.sh"
share_build 4248
need_cmd
VOLATILE_FAULT_GONE_GRACE=$VL_GRACE
export VOLATILE_FAULT_GONE_GRACE

U=4248
ZL=$VL_RUN_TOP/tests/helpers/zleader
[ -x "$ZL" ] || fail "$ZL is not built (make check builds it)"
if [ "$(id -u)" -eq 0 ]; then
	command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) is not installed"
	setpriv --reuid=$U --regid=$U --clear-groups -- test -x "$ZL" ||
		skip "the build tree is not readable by uid $U"
	chmod 0711 "$WORK" || fail "chmod $WORK"
	as_user() { setpriv --reuid=$U --regid=$U --clear-groups -- env VOLATILE_REGION="$ud/region" "$@"; }
else
	as_user() { env VOLATILE_REGION="$ud/region" "$@"; }
fi

for how in zombie unshare; do
	ud=$WORK/$how
	mkdir "$ud" || fail "mkdir"
	[ "$(id -u)" -ne 0 ] || chown $U:$U "$ud" || fail "chown"
	arg=
	[ "$how" = unshare ] && arg=unshare
	bg "z$how" as_user env LD_PRELOAD="$VOLATILE_LIBRARY" timeout 60 "$ZL" "$ud" $arg
	wait_file "$ud/r1"
	run "p$how" as_user timeout 20 "$VOLATILE_CMD" purge --all
	expect_line "p$how" "purged 1 range, 4096 bytes"
	touch "$ud/g1"
	wait_file "$ud/r2"
	sleep 0.2
	run "q$how" as_user timeout 20 "$VOLATILE_FAULT_CMD" purge --all
	past_grace
	run "r$how" as_user timeout 20 "$VOLATILE_FAULT_CMD" purge --all
	touch "$ud/g2"
	wait_bg "z$how"
	[ "$rc" -eq 0 ] || { show "z$how"; fail "$how: the holder: exit status $rc"; }
	expect_line "z$how" "unmark = 1, bytes zero"
done
exit 0
