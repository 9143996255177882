#!/bin/sh
# SPDX-License-Identifier: MIT
# A lock's holder that is alive is never taken for dead (DESIGN 11): a waiter judges a holder by its slot in the region's
# table of processes, through /proc. A holder stopped (SIGSTOP) while it
# holds a file lock, after a budget purge flagged the file's range purged
# and before it punched, must be waited for: an UNMARK of that range from
# another process may not return while it is stopped (it would say 1, the
# program would write the bytes, now not volatile, and the purge, continued,
# punch them).
#
#   a. the holder took memory after it registered (a start time misread as
#      the memory size called such a holder dead after 10 ms);
#   b. (root) in a pid namespace that shows the parent's /proc (unshare -pf
#      without --mount-proc): the holder's own pid is not the one under /proc;
#   c. (root, as uid 4247) /proc mounted hidepid=2 and the holder not
#      dumpable: hidden from the waiter, which read ENOENT as "gone".
. "$(dirname "$0")/lib.sh"
share_build 4247
need_cmd

need_fault_lib

# stopped_holder WHAT [USER-PREFIX...]: a holder stops in its purge; a second
# process's UNMARK must still be waiting 1 s later; once the holder goes on,
# the UNMARK says 1 and the bytes are zeros (the purge punched them). With a
# prefix (a setpriv command), both run as that user, the holder not dumpable.
stopped_holder() {
	what=$1
	shift
	f=$WORK/f.$what
	new_region
	mkfile "$f" 64K A
	nd=
	if [ "$#" -gt 0 ]; then
		chown "$U:$U" "$f" && nd=nodump
	fi
	bg "a$what" "$@" env VOLATILE_REGION="$VOLATILE_REGION" VOLATILE_BUDGET=64K \
		LD_PRELOAD="$FAULT_LIB" VT_STOP_AT="purge: flagged purged, file locked" \
		timeout 60 "$VT" pid procpid $nd open "$f" rw mark 0 64K grab 16M 16M 0 \
		memfd m 4K mark 0 4K echo done
	set -- "$what" "$@"
	wait_match "a$1" out '^procpid = '
	# the holder under /proc, and as this shell's kill names it (in a pid
	# namespace with the parent's /proc, two numbers)
	apid=$(sed -n 's/^procpid = //p' "$WORK/a$1.out")
	kpid=$(sed -n 's/^pid = //p' "$WORK/a$1.out")
	wait_stopped "a$1" "$apid" "$1: the holder never stopped in its purge"
	b1=$1
	shift
	bg "b$b1" "$@" env VOLATILE_REGION="$VOLATILE_REGION" LD_PRELOAD="$VOLATILE_LIBRARY" \
		VOLATILE_LOCK_WAIT=20s \
		timeout 30 "$VT" open "$f" rw unmark 0 64K fill 0 64K B expect 0 64K B
	set -- "$b1"
	sleep 1
	[ ! -s "$WORK/b$1.out" ] || grep -q '^unmark' "$WORK/b$1.out" &&
		{ show "b$1"; fail "$1: a live, stopped holder's lock was taken from it"; }
	kill -CONT "$kpid"
	wait_bg "a$1"
	[ "$rc" -eq 0 ] || { show "a$1"; fail "$1: the holder: exit status $rc"; }
	wait_bg "b$1"
	[ "$rc" -eq 0 ] || { show "b$1"; fail "$1: the UNMARK: exit status $rc"; }
	expect_line "b$1" "unmark 0 64K = 1"
	ok "c$1" vt open "$f" r expect 0 64K B
}

U=4247
# the parts run again inside (--inside, --hidepid) make regions of their own
[ "${1:-}" = --inside ] && REGION_N=100
[ "${1:-}" = --hidepid ] && REGION_N=200
if [ "${1:-}" = --inside ]; then
	stopped_holder pidns
	exit 0
fi
if [ "${1:-}" = --hidepid ]; then
	# c. a /proc that hides what its user may not trace (hidepid=2): a holder
	# that is not dumpable is hidden from the waiter, of the same user: ENOENT
	# there says nothing about it being gone
	mount -t proc -o hidepid=2 proc /proc 2>"$WORK/mount.err" || exit 78
	stopped_holder hidepid setpriv --reuid=$U --regid=$U --clear-groups --
	exit 0
fi
stopped_holder plain
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null 2>&1 && unshare -pf true 2>/dev/null; then
	# a pid namespace of its own, and the parent's /proc
	VL_TEST_INNER=1
	export VL_TEST_INNER
	unshare -pf /bin/sh "$0" --inside
	rc=$?
	[ "$rc" -eq 0 ] || exit "$rc"
else
	say "not root, or no pid namespaces: part b is not run"
fi
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 &&
	setpriv --reuid=$U --regid=$U --clear-groups -- test -x "$VT"; then
	chmod 0711 "$WORK" && chown "$U:$U" "$WORK" 2>/dev/null
	chmod 0777 "$WORK" || fail "chmod $WORK"
	VL_TEST_INNER=1
	export VL_TEST_INNER
	if private_ns; then
		$PRIVATE_NS /bin/sh "$0" --hidepid
		rc=$?
	else
		say "cannot make a mount namespace ($PRIVATE_NS): $(cat "$WORK/unshare.err"): part c is not run"
		rc=0
	fi
	[ "$rc" -eq 78 ] && { say "cannot mount /proc hidepid=2: part c is not run"; rc=0; }
	[ "$rc" -eq 0 ] || exit "$rc"
else
	say "not root, or uid $U cannot run the build tree: part c is not run"
fi
exit 0
