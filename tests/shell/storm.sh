#!/bin/sh
# SPDX-License-Identifier: MIT
# THE INVARIANT under a storm (DESIGN 4, 11, 13, 15, 17): several processes
# with several threads each MARK, write, read and UNMARK their pages of two
# shared tmpfs files while purgers run, a small budget forces purges at
# MARKs and `volatile purge` collects gone files every second or so; an
# oracle checks every UNMARK's answer against what the page holds, and
# that bytes nobody marked never change. Every way an fd moves is in the
# storm's alphabet (tests/helpers/storm.c says how): a disk file X dup2()ed
# onto a marked fd number and back while others MARK/UNMARK through it;
# MARK/UNMARK through a sibling's fd taken with pidfd_getfd; a thread that
# unshare(CLONE_FILES)s and reuses fd numbers; and trips, in which a memfd
# with a marked page, purged or not, is held only in flight in SCM_RIGHTS,
# only in an io_uring fixed-file table (taken back with FIXED_FD_INSTALL),
# only by a process of another user, or only by a sibling that took it with
# pidfd_getfd from its maker, which then closed its fd (handoff), across
# purges and collections.
#
#   user   as root: the storm as a uid of its own (the first of 64990-64993
#          no process runs as), which has no kernel's word that a file is
#          gone (no CAP_DAC_READ_SEARCH) and sees only its own processes'
#          fds, as any user; its other-user holder is a lender of the next
#          such uid, forked before the storm drops to its own (not as root:
#          the storm as this user, "calm", with no other-user holder)
#   root   as root: the same as root, the other-user holder a child that
#          setuid()s to the lender's uid
#   kill   processes SIGKILLed at random moments and replaced: whoever
#          comes next repairs what they left, at once, and no answer lies
#          (trips held up to 100 ms: a worker lives about that long)
#
# An action this machine cannot do is left out, saying why (io_uring
# without liburing or Linux 6.8's FIXED_FD_INSTALL; X without a disk file
# system). Each run takes SECONDS (4, or 3 when there are three runs);
# VL_LONG=1: 60; VL_STORM_SECONDS=N: N.
. "$(dirname "$0")/lib.sh"
share_build 64990
need_cmd
STORM=$VL_RUN_TOP/tests/helpers/storm
[ -x "$STORM" ] || fail "$STORM is not built (make check builds it)"
STORM_COLLECT=$VOLATILE_CMD
export STORM_COLLECT

# as a user, when root: two uids no process runs as (not nobody's, which
# evict.sh and mark-bounded.sh use beside this test in make -j2 check, nor
# gc.sh's: our processes that end under their scans would leave those
# incomplete), the storm's and its lender's; can the storm's reach the
# programs (a build tree under /root cannot)?
as_user=
uids=
if [ "$(id -u)" -eq 0 ]; then
	for u in 64990 64991 64992 64993; do
		awk -v u="$u" '$1 == "Uid:" && ($2 == u || $3 == u) { found = 1 } END { exit !found }' \
			/proc/[0-9]*/status 2>/dev/null || uids="$uids $u"
	done
	# shellcheck disable=SC2086 # a list of words
	set -- $uids
	if [ "$#" -lt 2 ]; then
		say "processes run as three or four of the uids 64990-64993: no storm as a user"
	elif ! command -v setpriv >/dev/null 2>&1; then
		say "no setpriv (util-linux): no storm as a user"
	elif ! setpriv --reuid="$1" --regid="$1" --clear-groups \
		sh -c 'test -x "$1" && test -r "$2" && test -x "$3"' sh \
		"$STORM" "$VOLATILE_LIBRARY" "$VOLATILE_CMD" 2>/dev/null; then
		say "uid $1 cannot reach the build tree: no storm as a user"
	else
		as_user="STORM_AS_UID=$1 STORM_UID=$2"
	fi
fi
secs=4
[ -n "$as_user" ] && secs=3
[ -n "${VL_LONG:-}" ] && secs=60
[ -n "${VL_STORM_SECONDS:-}" ] && secs=$VL_STORM_SECONDS

# storm NAME KILL HOLD_MS [VAR=VALUE...]: the storm with every action,
# in directories STORM_AS_UID's user may write
storm() {
	new_region
	mkdir -p "$WORK/$1" || fail "mkdir"
	_x=-
	if [ -n "$DISK" ]; then
		mkdir -p "$DISK/$1" || fail "mkdir"
		_x=$DISK/$1/x
	fi
	if [ -n "${4:-}" ]; then
		chmod 777 "$WORK/$1" || fail "chmod"
		chmod o+x "$WORK" || fail "chmod"
		VOLATILE_REGION=$WORK/$1/region
		if [ -n "$DISK" ]; then
			chmod 777 "$DISK/$1" || fail "chmod"
			chmod o+x "$DISK" || fail "chmod"
		fi
	fi
	# shellcheck disable=SC2086 # VAR=VALUE words
	run "$1" env ${4:-} STORM_HOLD_MS="$3" VOLATILE_REGION="$VOLATILE_REGION" \
		VOLATILE_BUDGET=64K LD_PRELOAD="$VOLATILE_LIBRARY" \
		timeout $((secs + 60)) "$STORM" "$WORK/$1" "$secs" 4 4 2 "$2" all "$_x"
	say "$1:"
	cat "$WORK/$1.out"
	if [ "$rc" -ne 0 ]; then
		show "$1"
		failed="$failed $1 ($rc)"
	fi
}

# every storm runs, whatever an earlier one found
failed=
if [ -n "$as_user" ]; then
	storm user 0 5000 "$as_user"
	storm root 0 5000 "${as_user#* }"
	storm kill 1 100 "${as_user#* }"
else
	# as root without a uid of our own, the other user is nobody
	storm calm 0 5000
	storm kill 1 100
fi
[ -z "$failed" ] || fail "storms that failed (exit status):$failed"
exit 0
