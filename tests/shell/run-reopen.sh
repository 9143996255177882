#!/bin/sh
# SPDX-License-Identifier: MIT
# Where the kernel refuses the supervisor pidfd_getfd on a caller it may
# look into (Yama's ptrace_scope 1: the supervisor, a process of its own,
# is nobody's ancestor, DESIGN 21), it reopens the caller's regular file
# through /proc/TID/fd/N with the caller's access mode: every row of
# DESIGN 5 gives what the preload gives, a purged range's UNMARK says 1,
# and a file that is not regular is answered as a caller it cannot look
# into (EOPNOTSUPP, EPERM for an UNMARK).
#
# No kernel here has Yama, so the refusal is the fault point of the test
# suite's own build of the command (tests/fault/volatile-fault,
# VOLATILE_FAULT_SYSCALL=sv_getfd:EPERM: every pidfd_getfd fails so).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_seccomp
need_static

# reopening ARGS...: run's --debug with pidfd_getfd refused (its supervisor
# reopens), the static vt given ARGS
reopening() {
	VOLATILE_FAULT_SYSCALL=sv_getfd:EPERM timeout "$VL_TIMEOUT" "$FAULTY" run --debug -- \
		"$VT_STATIC" "$@"
}

D=$WORK/d
mkdir "$D" || fail "mkdir $D"
: >"$D/f"

# ---- 1. the route is the reopening one ---------------------------------------------
new_region
run route reopening memfd m 8K fill 0 8K x mark 0 8K unmark 0 8K expect 0 8K x
[ "$rc" -eq 0 ] || { show route; fail "route: exit status $rc"; }
soft expect_out route <<EOF
memfd m 8K = 3
fill 0 8K x = ok
mark 0 8K = 0
unmark 0 8K = 0
expect 0 8K x ok
EOF
grep -q '^volatile run: fd 3 reopened through /proc: pidfd_getfd refused$' "$WORK/route.err" ||
	{ show route; echo "FAIL: route: the supervisor did not say it reopened fd 3" >&2; FAILED=1; }

# ---- 2. DESIGN 5, row by row, regular files -------------------------------------------
like_preload --debug closed reopening close fa MARK 0 4K
like_preload --debug opath reopening open "$D/f" path fa MARK -1 4K fa MARK 0 4K
like_preload --debug negative reopening memfd m 8K fa MARK -1 4K
like_preload --debug zero reopening memfd m 8K fa UNMARK 0 0
like_preload --debug both reopening memfd m 8K fa 'MARK|UNMARK' 0 4K
like_preload --debug keep reopening memfd m 8K fa 'MARK|KEEP_SIZE' 0 4K fa 'UNMARK|KEEP_SIZE' 0 4K
like_preload --debug rdonly reopening open "$D/f" r fa MARK -1 4K fa MARK 0 4K
like_preload --debug wronly reopening open "$D/f" w fa MARK 0 4K fa UNMARK 0 4K
like_preload --debug efbig reopening memfd m 8K fa MARK max 1 fa UNMARK 1 max
like_preload --debug sealed reopening memfd m 8K seal write fa MARK 0 4K fa UNMARK 0 4K
like_preload --debug badfd reopening fd 100000 fa MARK 0 4K
like_preload --debug pair reopening memfd m 8K fill 0 8K x mark 0 8K unmark 0 4K mark 0 2K unmark 0 8K expect 0 8K x

# ---- 3. not regular: answered as a caller not looked into --------------------------
new_region
run pseudo reopening pipe fa MARK 0 4K fa UNMARK 0 4K socket fa MARK 0 4K fa UNMARK 0 4K \
	open "$D" dir fa UNMARK 0 4K
[ "$rc" -eq 0 ] || { show pseudo; fail "pseudo: exit status $rc"; }
sed 's/^pipe = .*/pipe/; s/^socket = .*/socket/; s/^open .* dir = .*/dir/' "$WORK/pseudo.out" >"$WORK/p.out"
cp "$WORK/p.out" "$WORK/pseudo.out"
soft expect_out pseudo <<EOF
pipe
fa MARK 0 4K = -1 EOPNOTSUPP
fa UNMARK 0 4K = -1 EPERM
socket
fa MARK 0 4K = -1 EOPNOTSUPP
fa UNMARK 0 4K = -1 EPERM
dir
fa UNMARK 0 4K = -1 EPERM
EOF

# ---- 4. purged, then unmarked: 1 --------------------------------------------------
new_region
P=$WORK/purge
mkdir "$P" || fail "mkdir $P"
bg purged reopening memfd m 8K fill 0 8K x mark 0 8K echo marked wait "$P/go" unmark 0 8K
wait_line purged marked
# run answers a MARK once its file is locked, before the range is in the
# region (ops.h): purges until one finds it
ok_until purge 'purged 1 range' vol purge --all
touch "$P/go"
wait_bg purged
[ "$rc" -eq 0 ] || { show purged; fail "purged: exit status $rc"; }
grep -qxF 'unmark 0 8K = 1' "$WORK/purged.out" ||
	{ show purged; show purge; echo "FAIL: purged: the UNMARK of a purged range did not say 1" >&2; FAILED=1; }

# ---- 5. a file its mode refuses to reopen (a user: root passes any mode) ----------------
if [ "$(id -u)" -eq 0 ]; then
	say "root: no file refused by its mode (part 5)"
else
	new_region
	: >"$D/g"
	bg mode reopening open "$D/g" rw fill 0 8K x mark 0 8K echo chmod0 wait "$D/g.chmod" \
		unmark 0 8K mark 0 4K
	wait_line mode chmod0
	chmod 000 "$D/g"
	touch "$D/g.chmod"
	wait_bg mode
	# the MARK before the chmod was served; after it the file refuses us: EPERM, EOPNOTSUPP
	grep -qxF 'unmark 0 8K = -1 EPERM' "$WORK/mode.out" && grep -qxF 'mark 0 4K = -1 EOPNOTSUPP' "$WORK/mode.out" ||
		{ show mode; echo "FAIL: mode: a file refused by its mode was not answered as one not looked into" >&2; FAILED=1; }
fi
exit "$FAILED"
