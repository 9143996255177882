#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile run`'s supervisor (seccomp user notification, supervise.c):
# a static program's volatile fallocate calls, under_run by run, give what
# the same calls give through the preload: every row of DESIGN 5, and the
# region's own errors. A static vt (tests/helpers/vt.c built with
# -static: its fallocate() is the system call) against vt with the shim.
#
# ENOMEM: a MARK is answered 0 early, once its file is locked (ops.h); it
# was answered before the node it needs was had, so a full region's MARK
# said 0 through run (nothing marked) where the preload says ENOMEM.
. "$(dirname "$0")/lib.sh"
share_build 64991
. "$(dirname "$0")/seccomp-lib.sh"
: "${VL_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
CC=${VL_CC:-cc}
supervised || skip "volatile run has no supervisor here"
# shellcheck disable=SC2086 # CC may carry words
$CC -D_GNU_SOURCE -static -I"$VL_TOP_SRCDIR/include" -o "$WORK/vts" \
	"$VL_TOP_SRCDIR/tests/helpers/vt.c" 2>"$WORK/cc.err" ||
	skip "$CC cannot link a static program: $(head -n 2 "$WORK/cc.err")"

D=$WORK/d
mkdir "$D" || fail "mkdir $D"
: >"$D/f"
[ -n "$DISK" ] && : >"$DISK/f"

# under_run VT-ARGS...: the static vt given VT-ARGS under run's supervisor
under_run() {
	timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run -- "$WORK/vts" "$@"
}

# ---- 1. DESIGN 5, row by row ------------------------------------------------------
like_preload closed under_run close fa MARK 0 4K
like_preload opath under_run open "$D/f" path fa MARK -1 4K
like_preload negative under_run memfd m 8K fa MARK -1 4K
like_preload zero under_run memfd m 8K fa UNMARK 0 0
like_preload both under_run memfd m 8K fa 'MARK|UNMARK' 0 4K
like_preload flags under_run memfd m 8K fa 'MARK|PUNCH_HOLE' 0 4K fa 'MARK|0x100' 0 4K fa 'UNMARK|0x40000000' 0 4K
like_preload keep under_run memfd m 8K fa 'MARK|KEEP_SIZE' 0 4K fa 'UNMARK|KEEP_SIZE' 0 4K
like_preload rdonly under_run open "$D/f" r fa MARK 0 4K fa MARK -1 4K
like_preload pipe under_run pipe fa MARK 0 4K
like_preload socket under_run socket fa MARK 0 4K
like_preload chardev under_run open /dev/null rw fa MARK 0 4K
like_preload dir under_run open "$D" dir fa UNMARK 0 4K
like_preload efbig under_run memfd m 8K fa MARK max 1 fa UNMARK 1 max
like_preload sealed under_run memfd m 8K seal write fa MARK 0 4K fa UNMARK 0 4K
like_preload badfd under_run fd 100000 fa MARK 0 4K
[ -n "$DISK" ] && like_preload disk under_run open "$DISK/f" rw fa MARK 0 4K fa UNMARK 0 4K
like_preload pair under_run memfd m 8K fill 0 8K x mark 0 8K unmark 0 4K mark 0 2K unmark 0 8K expect 0 8K x

# ---- 2. a full region: ENOMEM, nothing marked -------------------------------------
args="memfd m 1M"
i=0
while [ "$i" -lt 12 ]; do
	args="$args mark $((i * 8))K 4K"
	i=$((i + 1))
done
VOLATILE_REGION_RANGES=8
export VOLATILE_REGION_RANGES
# shellcheck disable=SC2086 # $args: words
like_preload enomem under_run $args
unset VOLATILE_REGION_RANGES

# ---- 3. a caller of another user ----------------------------------------------------
if [ "$(id -u)" -ne 0 ]; then
	say "not root: no caller of another user (part 3)"
elif ! command -v setpriv >/dev/null 2>&1; then
	say "no setpriv (util-linux): no caller of another user (part 3)"
else
	new_region
	N=$WORK/nobody
	chmod 755 "$WORK" "$WORK/vts"
	# (a uid of its own, not nobody: gc.sh, beside this in make -j2 check, finds
	# a file gone only when it can look into every process of nobody's, and
	# processes that come and go under its scan make that fail)
	{ mkdir "$N" && chown 64991:64991 "$N"; } || fail "cannot make $N for uid 64991"
	# nobody's own program (the preload, from run's LD_PRELOAD) marks its
	# file in nobody's region; nobody's static program, under root's run,
	# unmarks it and marks part of it again
	# shellcheck disable=SC2016 # for the inner sh
	run other timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run -- \
		setpriv --reuid=64991 --regid=64991 --clear-groups env VOLATILE_REGION="$N/region" \
		sh -c '"$1" open "$3/f" rwc fill 0 8K x mark 0 8K >"$3/dyn.out" &&
			exec "$2" open "$3/f" rw unmark 0 8K mark 0 4K' \
		sh "$VT" "$WORK/vts" "$N"
	[ "$rc" -eq 0 ] || { show other; fail "other: exit status $rc"; }
	grep -qxF 'mark 0 8K = 0' "$N/dyn.out" || { cat "$N/dyn.out" >&2; fail "other: nobody's own MARK failed"; }
	soft expect_out other <<EOF
open $N/f rw = 3
unmark 0 8K = -1 EOPNOTSUPP
mark 0 4K = -1 EOPNOTSUPP
EOF
	# root's region: nothing of nobody's (made or not)
	if [ -e "$VOLATILE_REGION" ]; then
		run other-status vol status
		grep -q '^files: *0 with volatile ranges' "$WORK/other-status.out" ||
			{ show other-status; echo "FAIL: root's region has a range of nobody's file" >&2; FAILED=1; }
	fi

	# ---- 4. a caller that can no longer be looked into --------------------------
	# run as another user; its static program marks, then makes itself non-dumpable:
	# run cannot take its fd (no ptrace rights), so its range stays volatile.
	# The UNMARK fails with EPERM, which a program takes for purged (DESIGN 5),
	# not the kernel's EOPNOTSUPP ("no volatile ranges: my bytes are pinned");
	# a MARK gets the kernel's EOPNOTSUPP, nothing marked.
	# (a uid of its own, not nobody: a process of nobody's that cannot be
	# looked into would keep gc.sh, running beside this, from ever finding
	# nobody's files gone)
	D=$WORK/nodump
	{ mkdir "$D" && chown 64990:64990 "$D"; } || fail "cannot make $D for uid 64990"
	run nodump timeout "$VL_TIMEOUT" setpriv --reuid=64990 --regid=64990 --clear-groups \
		env VOLATILE_REGION="$D/region" "$VOLATILE_CMD" run -- \
		"$WORK/vts" memfd m 8K mark 0 8K nodump unmark 0 8K mark 0 4K
	[ "$rc" -eq 0 ] || { show nodump; fail "nodump: exit status $rc"; }
	soft expect_out nodump <<EOF
memfd m 8K = 3
mark 0 8K = 0
nodump = 0
unmark 0 8K = -1 EPERM
mark 0 4K = -1 EOPNOTSUPP
EOF
fi
exit "$FAILED"
