#!/bin/sh
# SPDX-License-Identifier: MIT
# A caller's file system cannot stall `volatile run` for everyone (issue
# 24.6, DESIGN 21), nor the preload its host (DESIGN 13).
#
# A FUSE server (tests/helpers/fusestall) answers until its file is open,
# then answers nothing but LOOKUP and OPEN: every other request that reaches
# it (a stat, a statfs, the flush of every close) waits until it is killed,
# and a thread in such a wait cannot be killed (the kernel waits
# uninterruptibly for an answer to a request the server has read). Every
# program that opens the file waits so at its exit: none is waited for.
#
#   1. Through the preload: MARK and UNMARK of the file get EOPNOTSUPP (not
#      tmpfs), without waiting. The check used fstatfs, which the server
#      never answered.
#   2. Under run, 70 static programs MARK and UNMARK the file: each gets
#      EOPNOTSUPP without waiting; meanwhile another program's MARK of a
#      memfd is answered; and run (CMD) exits. run's serving threads took
#      the file (pidfd_getfd) and asked fstatfs: 70 such callers held all 64
#      threads, the memfd's MARK waited, and run, then CMD's parent, waited
#      for ever for the served calls at CMD's exit.
#
# Root and /dev/fuse are needed to mount (else skipped). The mount is made
# in a private mount namespace, and the server is killed at the end, pass or
# fail: nothing waits on it afterwards.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fuse-lib.sh"

need_cmd
: "${VL_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
CALLERS=70

# n_lines PATTERN FILE...: how many of the files have a line PATTERN
n_lines() {
	_pat=$1
	shift
	grep -lxF -- "$_pat" "$@" 2>/dev/null | wc -l
}

inside() {
	trap stop_fuse EXIT
	trap 'exit 1' HUP INT TERM
	mkdir -p "$WORK/fuse" || fail "mkdir"
	bg fuse "$FUSESTALL" "$WORK/fuse" all
	wait_line fuse mounted

	# 1. the preload: answered at once, 60 s at most (wait_line); its OPEN is
	# the last the server answers but LOOKUP and OPEN
	bg shimmark svt open "$WORK/fuse/f" rw mark 0 4K unmark 0 4K echo answered
	wait_line fuse stalled
	wait_line shimmark answered
	expect_line shimmark "mark 0 4K = -1 EOPNOTSUPP"
	expect_line shimmark "unmark 0 4K = -1 EOPNOTSUPP"

	# 2. under run
	supervised || { say "volatile run has no supervisor here: part 2 is not run"; exit 0; }
	# shellcheck disable=SC2086 # CC may carry words
	${VL_CC:-cc} -D_GNU_SOURCE -static -I"$VL_TOP_SRCDIR/include" -o "$WORK/vts" \
		"$VL_TOP_SRCDIR/tests/helpers/vt.c" 2>"$WORK/cc.err" ||
		{ say "cannot link a static program: part 2 is not run: $(head -n 2 "$WORK/cc.err")"; exit 0; }
	# The callers are not waited for: each, its calls answered, waits at its
	# exit for the server (the kernel flushes the file there). The memfd's MARK
	# gets 30 s; a run that served it behind the callers held it for ever.
	# shellcheck disable=SC2016 # for the inner sh
	bg served timeout 300 "$VOLATILE_CMD" run -- sh -c '
		i=0
		while [ "$i" -lt "$3" ]; do
			"$1" open "$2/fuse/f" rw echo asking mark 0 4K unmark 0 4K echo answered >"$2/c.$i.out" 2>&1 &
			i=$((i + 1))
		done
		i=0
		while [ "$(cat "$2"/c.*.out 2>/dev/null | grep -cx asking)" -lt "$3" ] &&
			[ "$i" -lt 3000 ]; do
			sleep 0.01
			i=$((i + 1))
		done
		timeout 30 "$1" memfd g 4K mark 0 4K
		echo "memfd: exit status $?"
		echo cmd-done' sh "$WORK/vts" "$WORK" "$CALLERS"
	wait_line served cmd-done
	expect_out served <<EOF
memfd g 4K = 3
mark 0 4K = 0
memfd: exit status 0
cmd-done
EOF
	# run, which is CMD, exits: 30 s at most (a loaded machine)
	i=0
	eval "_p=\$BG_served"
	while kill -0 "$_p" 2>/dev/null && [ "$i" -lt 3000 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	kill -0 "$_p" 2>/dev/null && fail "volatile run did not exit within 30 s after CMD"
	wait_bg served
	[ "$rc" -eq 0 ] || { show served; fail "volatile run: exit status $rc"; }
	# every caller answered: EOPNOTSUPP, as without run (60 s at most)
	i=0
	while [ "$(n_lines answered "$WORK"/c.*.out)" -lt "$CALLERS" ] && [ "$i" -lt 6000 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	n=$(n_lines answered "$WORK"/c.*.out)
	[ "$n" -eq "$CALLERS" ] || fail "$n of $CALLERS callers on the FUSE file were answered"
	n=$(n_lines "mark 0 4K = -1 EOPNOTSUPP" "$WORK"/c.*.out)
	[ "$n" -eq "$CALLERS" ] || { cat "$WORK/c.0.out" >&2; fail "$n of $CALLERS MARKs got EOPNOTSUPP"; }
	n=$(n_lines "unmark 0 4K = -1 EOPNOTSUPP" "$WORK"/c.*.out)
	[ "$n" -eq "$CALLERS" ] || { cat "$WORK/c.0.out" >&2; fail "$n of $CALLERS UNMARKs got EOPNOTSUPP"; }
	exit 0
}
if [ "${1:-}" = --inside ]; then
	inside
fi

in_fuse_ns
