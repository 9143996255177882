# SPDX-License-Identifier: MIT
# shellcheck disable=SC2154 # rc: set by rerun_inside (lib.sh)
# Sourced after lib.sh by the tests that mount tests/helpers/fusestall (a
# FUSE server that stops answering once its file is open): the server's
# path, its stop at exit, and the way into a private mount namespace where
# it is mounted (root and /dev/fuse needed, else the test is skipped).

FUSESTALL=$VL_TOP_BUILDDIR/tests/helpers/fusestall

# stop_fuse: the server killed (the kernel then aborts its connection, and
# whatever waited on it is answered ENOTCONN), its mount gone, the test's
# background jobs ended; the EXIT trap of the test's --inside part
stop_fuse() {
	eval "_p=\${BG_fuse:-}"
	if [ -n "$_p" ]; then
		kill -KILL "$_p" 2>/dev/null
		wait "$_p" 2>/dev/null
	fi
	umount -l "$WORK/fuse" 2>/dev/null
	for _p in $BG_PIDS; do
		kill "$_p" 2>/dev/null
	done
}

# in_fuse_ns: run this test again as `$0 --inside` in a private mount
# namespace, and exit as it did
in_fuse_ns() {
	[ "$(id -u)" -eq 0 ] || skip "not root: cannot mount a FUSE file system"
	[ -c /dev/fuse ] || skip "no /dev/fuse"
	[ -x "$FUSESTALL" ] || fail "$FUSESTALL is not built (make check builds it)"
	command -v unshare >/dev/null 2>&1 || skip "unshare (util-linux) is not installed"
	private_ns || skip "cannot make a mount namespace: $(cat "$WORK/unshare.err")"
	rerun_inside "$PRIVATE_NS"
	exit "$rc"
}
