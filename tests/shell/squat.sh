#!/bin/sh
# SPDX-License-Identifier: MIT
# Where the region lives, and other users' names (DESIGN 9, 18).
#
#   1. With no private place (no /run/user/UID), the region is
#      /dev/shm/libvolatile.UID, where anyone can make names. A file
#      another user made there first: MARK gets EACCES, the program goes
#      on; the command's one line names the file and its owner. The
#      daemon's lock file next to it, made by another user, or a hard link
#      from it to the region: the daemon refuses it (one line, exit 2)
#      and writes nothing (the region is not truncated).
#   2. With the user's runtime directory (/run/user/UID: this user's,
#      nobody else may write in it, a tmpfs), the region is made there,
#      where no other user can make a name; one that others may write in
#      is not used. For root, /run when it is a tmpfs of root's.
#      `volatile status` says where the region is and why there. The
#      runtime directory coming (login) and going (logout) under a running
#      process: its records follow, a new process sees its purged range,
#      and the region left behind in /dev/shm keeps no one from the feature.
#
# As root: the test user is uid 4242 (setpriv), the squatter root; part 2
# runs in a private mount namespace with tmpfs mounted on /run/user and
# /run.
. "$(dirname "$0")/lib.sh"
share_build 4242
need_cmd
need_python

U=4242
as_user() {
	setpriv --reuid=$U --regid=$U --clear-groups -- env -u VOLATILE_REGION "$@"
}
# the same, with the library
svt_user() {
	as_user LD_PRELOAD="$VOLATILE_LIBRARY" timeout "$VL_TIMEOUT" "$VT" "$@"
}

# status_of NAME: `volatile status --json` as the user, and its region and reason
status_of() {
	run "$1" as_user timeout "$VL_TIMEOUT" "$VOLATILE_CMD" status --json
	[ "$rc" -eq 0 ] || { show "$1"; fail "$1: volatile status: exit status $rc"; }
	where=$(jq_py "$1" 'd["region"]')
	why=$(jq_py "$1" 'd["region_why"]')
}

inside() {
	# (no /run/user where no login manager made one, as in a chroot: a /run
	# of this namespace's own holds it)
	if [ ! -d /run/user ]; then
		{ mount -t tmpfs -o mode=0755 vlrun /run && mkdir /run/user; } 2>"$WORK/mount.err" || exit 78
	fi
	mount -t tmpfs -o mode=0755 vlrunuser /run/user 2>"$WORK/mount.err" || exit 78
	mkdir -m 0700 /run/user/$U && chown $U:$U /run/user/$U || fail "cannot make /run/user/$U"
	status_of p-private
	expect_eq "the region with a runtime directory" "$where" "/run/user/$U/libvolatile"
	expect_eq "why there" "$why" "the user's runtime directory"
	ok p-mark svt_user memfd m 4K mark 0 4K unmark 0 4K
	expect_line p-mark "unmark 0 4K = 0"
	expect_eq "the region made there" "$(stat -c '%a %u' "/run/user/$U/libvolatile")" "600 $U"
	[ ! -e /dev/shm/libvolatile.$U ] || fail "a region was made in /dev/shm too"

	# a runtime directory others may write in is no private place
	chmod 0777 /run/user/$U
	status_of p-open
	expect_eq "the region when the runtime directory is open to all" "$where" \
		"/dev/shm/libvolatile.$U"
	case $why in
	*"/run/user/$U is writable by others"*) ;;
	*) fail "why /dev/shm: '$why'" ;;
	esac
	chmod 0700 /run/user/$U

	# the default place changes under a running process: a runtime directory
	# comes (login), and goes (logout: unmounted, detached). Its records follow
	# it there and back; a new process finds them, and no one gets ESTALE for
	# good from the region left behind.
	rm -rf "/run/user/$U"
	rm -f "/dev/shm/libvolatile.$U"
	chmod 0711 "$WORK" || fail "chmod $WORK"
	ud=$WORK/flip
	mkdir "$ud" && chown $U:$U "$ud" || fail "cannot make $ud"
	f=$ud/f
	bg flipa svt_user open "$f" rwc fill 0 64K A mark 0 16K touch "$ud/r1" wait "$ud/g1" \
		sleep 1100 mark 16K 4K touch "$ud/r2" wait "$ud/g2" sleep 1100 mark 20K 4K unmark 16K 8K
	wait_file "$ud/r1"
	run flip-purge as_user timeout "$VL_TIMEOUT" "$VOLATILE_CMD" purge --all
	expect_line flip-purge "purged 1 range, 16384 bytes"
	mkdir -m 0700 "/run/user/$U" && chown $U:$U "/run/user/$U" &&
		mount -t tmpfs -o "mode=0700,uid=$U,gid=$U" vlflip "/run/user/$U" 2>"$WORK/mount.err" ||
		fail "cannot mount a runtime directory: $(cat "$WORK/mount.err")"
	# a process started now opens the new default region, which takes in the old
	# one (open by its name): the purged range is there
	ok flip-b svt_user open "$f" rw unmark 0 16K expect 0 16K zero
	expect_line flip-b "unmark 0 16K = 1"
	touch "$ud/g1"
	wait_file "$ud/r2"
	# as logind does at the last logout: detach the mount, remove the directory
	umount -l "/run/user/$U" && rmdir "/run/user/$U" || fail "cannot unmount /run/user/$U"
	touch "$ud/g2"
	wait_bg flipa
	[ "$rc" -eq 0 ] || { show flipa; fail "the process that followed the default place: exit status $rc"; }
	expect_line flipa "mark 16K 4K = 0"
	expect_line flipa "mark 20K 4K = 0"
	expect_line flipa "unmark 16K 8K = 0"
	ok flip-c svt_user memfd n 4K mark 0 4K unmark 0 4K
	expect_line flip-c "unmark 0 4K = 0"
	rm -f "/dev/shm/libvolatile.$U"

	# root: /run, when it is a tmpfs only root may write in
	mount -t tmpfs -o mode=0755 vlrun /run 2>"$WORK/mount.err" || exit 78
	run p-root env -u VOLATILE_REGION timeout "$VL_TIMEOUT" "$VOLATILE_CMD" status --json
	[ "$rc" -eq 0 ] || { show p-root; fail "volatile status as root: exit status $rc"; }
	expect_eq "root's region with /run a tmpfs" "$(jq_py p-root 'd["region"]')" /run/libvolatile.0
	expect_eq "why there" "$(jq_py p-root 'd["region_why"]')" "root's runtime directory"
	exit 0
}
if [ "${1:-}" = --inside ]; then
	inside
fi

[ "$(id -u)" -eq 0 ] || skip "not root: another user's files cannot be made"
command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) is not installed"
as_user test -x "$VT" || skip "the build tree is not readable by uid $U: $VT"
[ ! -e /run/user/$U ] || skip "/run/user/$U exists on this machine: uid $U is not a test user here"

# ---- 1. /dev/shm: names made first by another user ------------------------------------
reg=/dev/shm/libvolatile.$U
cleanup_squat() {
	rm -f "$reg" "$reg.daemon"
	cleanup
}
trap cleanup_squat EXIT
rm -f "$reg" "$reg.daemon"
status_of s-where
expect_eq "the region with no runtime directory" "$where" "$reg"
case $why in
"no private place: /run/user/$U is missing"*) ;;
*) fail "why /dev/shm: '$why'" ;;
esac

# a file of root's at the name
touch "$reg" && chmod 0644 "$reg"
ok s-mark svt_user memfd m 64K fill 0 64K M mark 0 4K unmark 0 4K \
	fa 0 0 4K expect 0 64K M
expect_out s-mark <<EOF
memfd m 64K = 3
fill 0 64K M = ok
mark 0 4K = -1 EACCES
unmark 0 4K = -1 EACCES
fa 0 0 4K = 0
expect 0 64K M ok
EOF
run s-purge as_user timeout "$VL_TIMEOUT" "$VOLATILE_CMD" purge --all
[ "$rc" -eq 2 ] || { show s-purge; fail "volatile purge with a squatted region: exit status $rc, want 2"; }
expect_eq "volatile purge's one line" "$(cat "$WORK/s-purge.err")" \
	"volatile: region $reg refused: it belongs to uid 0 (root), not to this user (Permission denied)"
rm -f "$reg"

# the daemon's lock file: made by root, then a hard link to the user's region
ok s-region svt_user memfd m 4K mark 0 4K
touch "$reg.daemon"
run s-daemon as_user timeout "$VL_TIMEOUT" "$VOLATILE_CMD" daemon --foreground
[ "$rc" -eq 2 ] || { show s-daemon; fail "daemon with a squatted lock file: exit status $rc, want 2"; }
expect_eq "the daemon's one line" "$(cat "$WORK/s-daemon.err")" \
	"volatile: daemon: $reg.daemon refused: it belongs to uid 0 (root), not to this user"
rm -f "$reg.daemon"
sum=$(cksum <"$reg")
ln "$reg" "$reg.daemon" || fail "cannot make the hard link"
run s-link as_user timeout "$VL_TIMEOUT" "$VOLATILE_CMD" daemon --foreground
[ "$rc" -eq 2 ] || { show s-link; fail "daemon with its lock file linked to the region: exit status $rc, want 2"; }
expect_eq "the daemon's one line" "$(cat "$WORK/s-link.err")" \
	"volatile: daemon: $reg.daemon refused: it has 2 names (a hard link was made to it)"
expect_eq "the region after the daemon refused" "$(cksum <"$reg")" "$sum"
ok s-still svt_user memfd m 4K mark 0 4K unmark 0 4K
expect_line s-still "unmark 0 4K = 0"
rm -f "$reg" "$reg.daemon"

# ---- 2. a private runtime directory ----------------------------------------------------
command -v unshare >/dev/null 2>&1 || skip "unshare (util-linux) is not installed"
private_ns || skip "cannot make a mount namespace ($PRIVATE_NS): $(cat "$WORK/unshare.err")"
rerun_inside "$PRIVATE_NS"
[ "$rc" -eq 78 ] && skip "cannot mount a tmpfs on /run/user: $(cat "$WORK/mount.err")"
exit "$rc"
