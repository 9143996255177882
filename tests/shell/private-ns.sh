#!/bin/sh
# SPDX-License-Identifier: MIT
# lib.sh's private_ns (tests only) never changes the host's mounts. In a
# chroot, the mount that holds the chroot's root is in no mountinfo there,
# and a new mount namespace keeps it as shared as the host made it (on a
# systemd host, / is shared): a test's mount on one of its directories
# (/run, where the chroot mounts none: squat.sh, seccomp-namespaces.sh
# mount there) would appear on the host too, and stay after the test.
# Here a "host" of the test's own (a private namespace) holds a chroot on
# a shared tmpfs; in it, private_ns makes the namespace a test mounts in;
# a tmpfs is mounted on the chroot's /run there; the host must not see it.
. "$(dirname "$0")/lib.sh"

if [ "${1:-}" = --inside ]; then
	# the host: a shared mount holding a chroot of the machine's programs
	host=$WORK/host
	root=$host/root
	mkdir -p "$host" && mount -t tmpfs -o size=1M vlhost "$host" 2>"$WORK/mount.err" &&
		mount --make-shared "$host" 2>>"$WORK/mount.err" || exit 78
	mkdir -p "$root/usr" "$root/etc" "$root/proc" "$root/dev/shm" "$root/run" &&
		touch "$root/dev/null" || fail "cannot make the chroot in $root"
	for d in bin sbin lib lib32 lib64 libx32; do
		if [ -L "/$d" ]; then
			ln -s "$(readlink "/$d")" "$root/$d"
		elif [ -d "/$d" ]; then
			mkdir "$root/$d" && mount --bind "/$d" "$root/$d"
		fi
	done
	{ mount --bind /usr "$root/usr" && mount --bind /etc "$root/etc" &&
		mount --bind /dev/null "$root/dev/null" && mount -t proc proc "$root/proc" &&
		mount -t tmpfs -o size=1M vlshm "$root/dev/shm"; } 2>"$WORK/mount.err" || exit 78
	sed -n '/^private_ns() {/,/^}/p' "$(dirname "$0")/lib.sh" >"$root/private_ns.sh"
	cat >"$root/test.sh" <<'INNER'
set -u
WORK=$(mktemp -d /dev/shm/vltest.XXXXXXXX) || exit 9
. /private_ns.sh
private_ns || { cat "$WORK/unshare.err"; exit 9; }
$PRIVATE_NS /bin/sh -c 'mount -t tmpfs -o size=1M vlrun /run || exit 9
grep -q " /run .* - tmpfs vlrun " /proc/self/mountinfo || exit 9'
INNER
	chroot "$root" /bin/sh /test.sh >"$WORK/chroot.out" 2>&1
	crc=$?
	[ "$crc" -eq 78 ] && { cat "$WORK/chroot.out" >"$WORK/mount.err"; exit 78; }
	# the host's view, the test's namespace gone
	if grep -q " $root/run .* - tmpfs vlrun " /proc/self/mountinfo; then
		grep " $host" /proc/self/mountinfo >&2
		fail "a mount made in private_ns's namespace, in a chroot, is on the host too"
	fi
	[ "$crc" -eq 0 ] || { cat "$WORK/chroot.out" >&2; fail "the chroot's test exited $crc"; }
	exit 0
fi

[ "$(id -u)" -eq 0 ] || skip "not root: cannot mount"
for c in unshare chroot perl; do
	command -v "$c" >/dev/null 2>&1 || skip "$c is not installed"
done
private_ns || skip "cannot make a mount namespace ($PRIVATE_NS): $(cat "$WORK/unshare.err")"
rerun_inside "$PRIVATE_NS"
[ "$rc" -eq 78 ] && skip "cannot mount: $(cat "$WORK/mount.err")"
exit "$rc"
