#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile status` and `volatile daemon --stop` look for the region's
# daemon without following any descriptor of the process its file names
# (DESIGN 8): that process may hold a file on a file system that stops
# answering, and a stat of that file would wait for ever. The pid in
# REGION.daemon is the user's to write; here it names a process holding a
# file of a FUSE server (tests/helpers/fusestall) that answers no GETATTR
# once the file is open. Both commands must answer at once that no daemon
# serves the region. Root and /dev/fuse are needed to mount (else skipped).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fuse-lib.sh"

need_cmd

# within_30s NAME CMD...: CMD must exit 0 within 30 s
within_30s() {
	_n=$1
	bg "$@"
	eval "_p=\$BG_$_n"
	wait_until 30 "$*: still running after 30 s (it waits on the stalled file system)" \
		'! kill -0 "$_p" 2>/dev/null'
	wait_bg "$_n"
	[ "$rc" -eq 0 ] || { show "$_n"; fail "$*: exit status $rc"; }
}

inside() {
	trap stop_fuse EXIT
	trap 'exit 1' HUP INT TERM
	new_region
	mkdir -p "$WORK/fuse" || fail "mkdir"
	bg fuse "$FUSESTALL" "$WORK/fuse" getattr
	wait_line fuse mounted
	bg holder sh -c 'echo ready; exec sleep 300' 9<"$WORK/fuse/f"
	wait_line fuse stalled
	wait_line holder ready
	eval "hpid=\$BG_holder"
	printf '%s\n%s\n' "$hpid" "$(date +%s)" >"$VOLATILE_REGION.daemon"
	chmod 600 "$VOLATILE_REGION.daemon"
	# A command that stats the FUSE file waits, unkillable, until the server
	# dies: each runs in the background and gets 30 s; past that the test
	# fails, and its exit kills the server, which frees the command.
	within_30s st "$VOLATILE_CMD" status
	grep -q '^daemon:   none ' "$WORK/st.out" || { show st; fail "status does not say 'daemon:   none'"; }
	within_30s stop "$VOLATILE_CMD" daemon --stop
	expect_line stop "no daemon serves region $VOLATILE_REGION"
	kill -0 "$hpid" 2>/dev/null || fail "--stop signalled pid $hpid, which is no daemon"
	exit 0
}
if [ "${1:-}" = --inside ]; then
	inside
fi

in_fuse_ns
