# SPDX-License-Identifier: MIT
# system-root-lib.sh - sourced by the tests of root's side of the machine's
# daemon (DESIGN 22): `volatile purge --system` and `volatile daemon
# --system`. Two test users, U1 and U2, with regions in their default
# places (DESIGN 9: /dev/shm/libvolatile.UID, since /run/user/UID does not
# exist for them), each marking ranges of a tmpfs file in a directory only
# that uid can reach, through a long-running holder (vt, scripted to mark
# and unmark on cue: `wait PATH`). Root only; the regions are removed at
# exit. Every --system run names its uids (--uid): the machine's other
# regions are never touched. SYS_UIDS="U1 U2": the test's two uids.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "not root: --system runs as root, and the test needs two other users"
command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) is not installed: cannot run as the test users"
# each test its own two uids (SYS_UIDS, set before this is sourced): make
# check runs tests side by side, and the regions are the uids' own
U1=${SYS_UIDS% *}
U2=${SYS_UIDS#* }
share_build $U1
share_build $U2
need_cmd
need_python
for _u in $U1 $U2; do
	[ -e "/run/user/$_u" ] && skip "/run/user/$_u exists: uid $_u's default place is not /dev/shm here"
done

# the test users' regions (and what the library makes beside them)
sys_cleanup_regions() {
	for _u in $U1 $U2; do
		rm -rf "/dev/shm/libvolatile.$_u" "/dev/shm/libvolatile.$_u".*
	done
}
sys_cleanup() {
	sys_cleanup_regions
	cleanup
}
trap sys_cleanup EXIT
sys_cleanup_regions

# others pass through $WORK to their own directories in it, and to $CUE,
# where the holders and the test tell each other what is done
chmod 0711 "$WORK"
CUE=$WORK/cue
mkdir -m 1777 "$CUE"
for _u in $U1 $U2; do
	mkdir -m 0700 "$WORK/u$_u"
	chown "$_u:$_u" "$WORK/u$_u"
done

# as_user UID CMD...: CMD as that uid, its group, no other group, and its
# default region (no VOLATILE_REGION)
as_user() {
	_uid=$1
	shift
	setpriv --reuid="$_uid" --regid="$_uid" --clear-groups -- env -u VOLATILE_REGION \
		timeout "$VL_TIMEOUT" "$@"
}

# holder NAME UID VT-ARGS...: in the background (bg NAME), vt with the
# library as UID, in its default region
holder() {
	_hn=$1
	_hu=$2
	shift 2
	bg "$_hn" setpriv --reuid="$_hu" --regid="$_hu" --clear-groups -- env -u VOLATILE_REGION \
		LD_PRELOAD="$VOLATILE_LIBRARY" timeout 120 "$VT" "$@"
}

# purged_of NAME UID: "PURGED..." of UID's ranges in its default region,
# as its status says, in order of offset (true/false each)
purged_of() {
	run "$1" as_user "$2" "$VOLATILE_CMD" status --json
	[ "$rc" -eq 0 ] || { show "$1"; fail "$1: status as uid $2: exit status $rc"; }
	jq_py "$1" '" ".join(str(r["purged"]).lower() for f in d["file_list"]
		for r in sorted(f["ranges"], key=lambda r: r["offset"]))'
}

# sys_purge NAME ARGS...: root's `volatile purge --system ARGS...` for U1 and U2
sys_purge() {
	_sn=$1
	shift
	run "$_sn" timeout 30 "$VOLATILE_CMD" purge --system --uid $U1 --uid $U2 "$@"
	[ "$rc" -eq 0 ] || { show "$_sn"; fail "$_sn: purge --system: exit status $rc"; }
}

# sys_daemon_turn: wait for this test's turn to run `daemon --system` (one
# per machine: a second exits "already running"), and hold it until exit:
# make check runs the tests that start one side by side
sys_daemon_turn() {
	command -v flock >/dev/null 2>&1 || skip "flock (util-linux) is not installed: cannot take turns at the machine's daemon"
	exec 9>>/run/libvolatile-system-test.turn
	flock -w 600 9 || fail "no turn at the machine's daemon within 600 s"
	# and one another tree's tests started (they take no turns) gone; one
	# that stays is the machine's own (the package's service): one a machine
	_i=0
	while [ -e /run/libvolatile-system.daemon ] &&
		! flock -n /run/libvolatile-system.daemon true 2>/dev/null; do
		_i=$((_i + 1))
		[ "$_i" -le 600 ] ||
			skip "the machine's daemon runs here (pid $(head -n 1 /run/libvolatile-system.daemon)), for 60 s: a second cannot start"
		sleep 0.1
	done
}

# ---- the machine's daemon of a test (after sys_daemon_turn) ----------------------------

# sys_daemon_start: `daemon --system --foreground` for U1 and U2 in the
# background (bg d), under a threshold that always holds; dpid its pid
sys_daemon_start() {
	bg d env VOLATILE_MIN_AVAILABLE=100% "$VOLATILE_CMD" daemon --system --foreground --uid $U1 --uid $U2
	dpid=$BG_d
}

# sys_children: the daemon's ($dpid) children, its workers
sys_children() {
	for _p in /proc/[0-9]*; do
		[ "$(sed 's/^.*) //' "$_p/stat" 2>/dev/null | cut -d' ' -f2)" = "$dpid" ] && echo "${_p#/proc/}"
	done
}

# sys_worker_of UID: the daemon's worker of uid UID (none: nothing)
sys_worker_of() {
	for _w in $(sys_children); do
		[ "$(awk '$1 == "Uid:" { print $2 }' "/proc/$_w/status" 2>/dev/null)" = "$1" ] && echo "$_w"
	done
}

# sys_until_within NAME SECONDS CONDITION...: until CONDITION holds, or
# fail, showing d and the outputs named in SYS_SHOW; fail too if the
# daemon exits
sys_until_within() {
	_un=$1
	_secs=$2
	_end=$(($(date +%s) + _secs))
	shift 2
	until "$@"; do
		if [ "$(date +%s)" -gt "$_end" ]; then
			for _s in d ${SYS_SHOW:-}; do show "$_s"; done
			fail "$_un: not within $_secs s"
		fi
		kill -0 "$dpid" 2>/dev/null || { show d; fail "$_un: the daemon exited"; }
		sleep 0.05
	done
}

# sys_wait_worker UID: the daemon's worker of uid UID, once it runs (60 s), in w_found
sys_has_worker() {
	w_found=$(sys_worker_of "$1")
	[ -n "$w_found" ]
}
sys_wait_worker() {
	sys_until_within "a worker for uid $1" 60 sys_has_worker "$1"
}

