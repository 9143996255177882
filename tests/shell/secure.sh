#!/bin/sh
# SPDX-License-Identifier: MIT
# DESIGN 9: in a secure execution (set-user-ID or set-group-ID: AT_SECURE)
# the library reads no VOLATILE_* variable.
#
# tests/helpers/secure, linked with -lvolatile, is installed set-user-ID
# to a test user, uid 4244 (in $WORK, or in $DISK where /dev/shm is mounted nosuid)
# and run by root: its effective user differs from its real
# one, so the kernel marks the execution secure. Its environment names a
# region (VOLATILE_REGION) in a directory that only that user may write, and asks
# for a log (VOLATILE_DEBUG=1) and the 2012 aliases (VOLATILE_2012_ABI=1).
# It must make its MARK in the default region of its effective user
# (/dev/shm/libvolatile.<euid>), never create the named file, print
# nothing on stderr, and see mode 0x08 refused as COLLAPSE_RANGE. A
# control run of the same program without the set-user-ID bit, as that user,
# must create the named region, log, and take 0x08 as UNMARK: the test
# would see it if the library read the variables.
#
# The default region is removed afterwards only if it did not exist before.
. "$(dirname "$0")/lib.sh"
# (its uid: below; the clone may lie where that user cannot read)
share_build 4244

[ "$(id -u)" -eq 0 ] || skip "not root: cannot install a program set-user-ID to another user"
HELPER=$VL_RUN_TOP/tests/helpers/secure
[ -x "$HELPER" ] || fail "$HELPER is not built (make check builds it)"
# a libtool wrapper script would set LD_LIBRARY_PATH, which a secure
# execution ignores: the program itself must be there (-no-install)
[ "$(head -c 4 "$HELPER" | od -An -c | tr -d ' ')" = 177ELF ] ||
	fail "$HELPER is not an executable (a libtool wrapper?): it cannot run set-user-ID"
# a directory where the set-user-ID bit counts: $WORK (/dev/shm), else
# $DISK (systemd mounts /dev/shm nosuid)
base=
for d in "$WORK" "$DISK"; do
	[ -n "$d" ] || continue
	case ,$(findmnt -n -o OPTIONS -T "$d" 2>/dev/null), in
	*,nosuid,*) continue ;;
	esac
	base=$d
	break
done
[ -n "$base" ] || skip "$WORK and ${DISK:-(no disk directory)} are on file systems mounted nosuid"
# a test user of its own (no account needed): gc.sh counts on user nobody
# running nothing else, and a set-user-ID process cannot be looked into
uid=4244
gid=4244

# a directory that user may write, reached through $base
chmod 0711 "$base" || fail "chmod $base"
dir=$base/secure
mkdir "$dir" && chown "$uid:$gid" "$dir" || fail "cannot make $dir for uid $uid"
cp "$HELPER" "$dir/plain" && cp "$HELPER" "$dir/setuid" || fail "cannot copy $HELPER"
chmod 0755 "$dir/plain" || fail "chmod $dir/plain"
# A secure execution finds libvolatile.so.0 only by the helper's run path
# (no LD_LIBRARY_PATH), read with that user's rights: where share_build
# copied the build (the tree is out of that user's reach), the set-user-ID
# program is the same source linked again with the copy's directory as its
# run path.
if [ "$VL_RUN_TOP" != "$VL_TOP_BUILDDIR" ]; then
	${VL_CC:-cc} ${VL_SANITIZE:+-fsanitize=$VL_SANITIZE} -include "$VL_TOP_BUILDDIR/config.h" \
		-I"$VL_TOP_SRCDIR/include" -o "$dir/setuid" "$VL_TOP_SRCDIR/tests/helpers/secure.c" \
		-L"$VL_RUN_TOP/src/.libs" -lvolatile -Wl,-rpath,"$VL_RUN_TOP/src/.libs" 2>"$WORK/cc.err" ||
		{ cat "$WORK/cc.err" >&2; fail "cannot link $dir/setuid against $VL_RUN_TOP/src/.libs"; }
fi
chown "$uid" "$dir/setuid" && chmod 04755 "$dir/setuid" || fail "cannot make $dir/setuid set-user-ID"

default=/dev/shm/libvolatile.$uid
existed=0
[ -e "$default" ] && existed=1
remove_default() {
	[ "$existed" -eq 0 ] && rm -f "$default" "$default.daemon"
}

# ---- the control: not secure, as that user: the variables are read --------------------
if command -v setpriv >/dev/null 2>&1; then
	# (libvolatile.so.0 from where that user can read it: the helper's
	# run path may lead into an unreadable tree)
	run plain env VOLATILE_REGION="$dir/control" VOLATILE_DEBUG=1 VOLATILE_2012_ABI=1 \
		LD_LIBRARY_PATH="$VL_RUN_TOP/src/.libs" \
		setpriv --reuid="$uid" --regid="$gid" --clear-groups \
		timeout "$VL_TIMEOUT" "$dir/plain"
	[ "$rc" -eq 0 ] || { show plain; fail "plain: exit status $rc"; }
	expect_line plain "secure = 0"
	expect_line plain "mark = 0"
	expect_line plain "collapse = 0"
	[ -f "$dir/control" ] || { show plain; fail "the control run did not make VOLATILE_REGION"; }
	[ -s "$WORK/plain.err" ] || fail "the control run logged nothing with VOLATILE_DEBUG=1"
else
	say "setpriv (util-linux) is not installed: no control run"
fi

# ---- set-user-ID to that user, run by root: secure ---------------------------------------------
run setuid env VOLATILE_REGION="$dir/region" VOLATILE_DEBUG=1 VOLATILE_2012_ABI=1 \
	timeout "$VL_TIMEOUT" "$dir/setuid"
remove_default
[ "$rc" -eq 0 ] || { show setuid; fail "setuid: exit status $rc"; }
grep -qxF "secure = 1" "$WORK/setuid.out" ||
	skip "the set-user-ID bit was not honoured here (no_new_privs?): $(head -n 1 "$WORK/setuid.out")"
expect_line setuid "euid = $uid"
# with a region of its own it must work; one left by someone else may not
[ "$existed" -eq 1 ] || expect_line setuid "mark = 0"
[ -e "$dir/region" ] && fail "a secure execution made VOLATILE_REGION ($dir/region)"
expect_line setuid "collapse = -1 EOPNOTSUPP"
if [ -s "$WORK/setuid.err" ]; then
	show setuid
	fail "a secure execution printed on stderr (VOLATILE_DEBUG was read)"
fi
exit 0
