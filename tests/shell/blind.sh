#!/bin/sh
# SPDX-License-Identifier: MIT
# A purger that cannot see every process of the user must not take a file
# for gone (DESIGN 15; purge.c point 5). Its /proc
# may show only part of them: from a pid namespace of its own (a
# container sharing /dev/shm), or through a /proc mounted hidepid=2 (which
# hides a non-dumpable process even from its own user). A memfd with a
# purged range, held by a live process it cannot see, must keep its
# records: the holder's UNMARK of the purged range must say 1, never 0.
#
# As root: the user is uid 4245, without CAP_DAC_READ_SEARCH (so the
# kernel's word by file handle, inode_gone.c, is not asked), in a private mount
# namespace.
. "$(dirname "$0")/lib.sh"
share_build 4245
# the blind purges: the test build of the command, told a grace of VL_GRACE s
VOLATILE_FAULT_GONE_GRACE=$VL_GRACE
export VOLATILE_FAULT_GONE_GRACE
need_cmd

U=4245
as_user() {
	setpriv --reuid=$U --regid=$U --clear-groups -- env VOLATILE_REGION="$ud/region" \
		timeout 60 "$@"
}

# blind_case MODE: the holder marks [0,4K) and [8K,4K) of a memfd; a purger
# that sees it purges [0,4K); then a purger that cannot see it purges twice,
# the grace apart (a gone file is forgotten at its second sighting)
blind_case() {
	mode=$1
	ud=$WORK/$mode
	mkdir "$ud" && chown $U:$U "$ud" || fail "cannot make $ud"
	nd=
	[ "$mode" = hidepid ] && nd=nodump
	bg "h$mode" as_user env LD_PRELOAD="$VOLATILE_LIBRARY" "$VT" memfd m 64K fill 0 64K A \
		mark 0 4K touch "$ud/r1" wait "$ud/g1" mark 8K 4K $nd touch "$ud/r2" wait "$ud/g2" \
		unmark 0 4K expect 0 4K zero
	wait_file "$ud/r1"
	run "p$mode" as_user "$VOLATILE_CMD" purge --bytes 4K
	expect_line "p$mode" "purged 1 range, 4096 bytes"
	touch "$ud/g1"
	wait_file "$ud/r2"
	for i in 1 2; do
		if [ "$mode" = pidns ]; then
			run "b$mode$i" own_proc setpriv --reuid=$U --regid=$U \
				--clear-groups -- env VOLATILE_REGION="$ud/region" timeout 60 \
				"$VOLATILE_FAULT_CMD" purge --all
		else
			run "b$mode$i" as_user "$VOLATILE_FAULT_CMD" purge --all
		fi
		[ "$rc" -eq 0 ] || { show "b$mode$i"; fail "$mode: the blind purge: exit status $rc"; }
		[ "$i" -eq 2 ] || past_grace
	done
	touch "$ud/g2"
	wait_bg "h$mode"
	[ "$rc" -eq 0 ] || { show "h$mode"; fail "$mode: the holder: exit status $rc"; }
	expect_line "h$mode" "unmark 0 4K = 1"
}

if [ "${1:-}" = --inside ]; then
	blind_case pidns
	mount -t proc -o hidepid=2 proc /proc 2>"$WORK/mount.err" || exit 78
	blind_case hidepid
	exit 0
fi
[ "$(id -u)" -eq 0 ] || skip "not root: the purger's blind spots need pid namespaces and a /proc mount"
command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) is not installed"
setpriv --reuid=$U --regid=$U --clear-groups -- test -x "$VT" ||
	skip "the build tree is not readable by uid $U: $VT"
own_proc true 2>/dev/null || skip "no pid namespaces here (unshare -pf --mount-proc)"
chmod 0711 "$WORK" || fail "chmod $WORK"
private_ns || skip "cannot make a mount namespace ($PRIVATE_NS): $(cat "$WORK/unshare.err")"
rerun_inside "$PRIVATE_NS"
[ "$rc" -eq 78 ] && skip "cannot mount /proc with hidepid=2: $(cat "$WORK/mount.err")"
exit "$rc"
