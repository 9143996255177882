#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile run`'s supervisor serves a caller in run's own region (DESIGN
# 21). A caller whose preloaded programs keep their ranges in another
# region must not be served there: the ranges its dynamic programs mark
# live in its region, and an UNMARK run makes in its own finds nothing,
# says 0, and leaves them volatile where the next purge punches them (THE
# INVARIANT). run tells another user apart (its effective user); these are
# callers of run's user whose region is another all the same:
#
# 1. a caller in a mount namespace of its own, with a tmpfs of its own
#    where VOLATILE_REGION points (the same path, another file; the
#    library itself then refuses one of the two with ESTALE: held);
# 2. a caller in a user namespace of its own (as root: unshare -U
#    --map-user), whose effective user, as its library sees it, names
#    another default region, though the kernel's user is run's;
# 3. a caller that enters such a user namespace itself, after run served
#    it (unshare(2) by a process of one thread): run keeps what it learnt
#    of a thread between its calls, but not which namespace it is in.
#
# In each, a dynamic vt has run serve a MARK and an UNMARK first (run's
# region is made and settled before the caller's exists: no process maps
# the caller's yet, so run does not move its records in), then marks 8K
# of a tmpfs file through the preload, in the caller's region, unmarks
# them by the raw system call (served by run, or not), has a purge run in
# the caller's region, and reads them again. An
# UNMARK that said 0 must find them intact; one that failed (the kernel's
# EOPNOTSUPP, not served) tells the program they may be lost.
#
# (Found by the adversarial pass: both said 0, then read 8192 zero bytes.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"

# check NAME: UNMARK said 0 => the bytes are intact
check() {
	if grep -qxF 'sysfa UNMARK 0 8K = 0' "$WORK/$1.out" && grep -q MISMATCH "$WORK/$1.out"; then
		show "$1"
		echo "FAIL: $1: UNMARK said 0 (intact) through run, and a purge then zeroed its bytes" >&2
		FAILED=1
	fi
}

if [ "${1:-}" != --inside ]; then
	need_seccomp
	need_static
	in_private_tmpfs "/run and /dev/shm" " (the default region names of part 2 must be private)"
fi

# ---- inside a private mount namespace: /run and /dev/shm of our own, $WORK kept ----
{
	mount -t tmpfs -o mode=0755 vltest /run &&
		mkdir /run/work && mount --bind "$WORK" /run/work &&
		mount -t tmpfs -o mode=1777 vltest /dev/shm && mkdir -p "$WORK" &&
		mount --bind /run/work "$WORK"
} 2>"$WORK/mount.err" || exit 78
FAILED=0
F=$WORK/d/f
mkdir "$WORK/d" "$WORK/w" || fail "mkdir"
chmod 755 "$WORK" "$WORK/d"

# ---- 1. another mount namespace, VOLATILE_REGION the same path, another file ----------
VOLATILE_REGION=$WORK/w/region
export VOLATILE_REGION
private_ns || skip "cannot make a nested mount namespace ($PRIVATE_NS): $(cat "$WORK/unshare.err")"
# shellcheck disable=SC2016,SC2086 # for the inner sh; PRIVATE_NS: words
run mntns vrun -- $PRIVATE_NS sh -c '
	mount -t tmpfs vltest "$1" || { echo "mount failed"; exit 9; }
	LD_PRELOAD=$2 exec "$3" open "$4" rwc fill 0 8K x sysfa MARK 0 4K sysfa UNMARK 0 4K mark 0 8K sysfa UNMARK 0 8K \
		spawn exec "$5" purge --all end reap expect 0 8K x' \
	sh "$WORK/w" "$VOLATILE_LIBRARY" "$VT" "$F" "$VOLATILE_CMD"
grep -qx 'mount failed' "$WORK/mntns.out" && skip "cannot mount a tmpfs in a nested mount namespace"
check mntns

# ---- 2. another user namespace: the library's euid names another default region -------
if ! unshare -U --map-user=64989 --map-group=64989 true 2>"$WORK/userns.err"; then
	say "no user namespace with --map-user here (part 2): $(cat "$WORK/userns.err")"
else
	unset VOLATILE_REGION
	rm -f "$F"
	# shellcheck disable=SC2016 # for the inner sh
	run userns vrun -- unshare -U --map-user=64989 --map-group=64989 sh -c '
		LD_PRELOAD=$1 exec "$2" open "$3" rwc fill 0 8K x sysfa MARK 0 4K sysfa UNMARK 0 4K mark 0 8K sysfa UNMARK 0 8K \
			spawn exec "$4" purge --all end reap expect 0 8K x' \
		sh "$VOLATILE_LIBRARY" "$VT" "$F" "$VOLATILE_CMD"
	check userns

	# ---- 3. the same, entered by the caller after a served call ---------------------------
	rm -f "$F"
	run later vrun -- "$VT" open "$F" rwc fill 0 8K x sysfa MARK 0 4K sysfa UNMARK 0 4K \
		userns 64989 mark 0 8K sysfa UNMARK 0 8K spawn exec "$VOLATILE_CMD" purge --all end reap \
		expect 0 8K x
	grep -qx 'userns 64989 = 0' "$WORK/later.out" || { show later; fail "later: unshare(CLONE_NEWUSER) failed"; }
	grep -qx 'sysfa MARK 0 4K = 0' "$WORK/later.out" || { show later; fail "later: the first MARK was not served"; }
	check later
fi
exit "$FAILED"
