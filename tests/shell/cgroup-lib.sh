# SPDX-License-Identifier: MIT
# cgroup-lib.sh - sourced by the tests that make a memory cgroup with a
# limit (DESIGN 6, 22): v1 in the memory controller's hierarchy (under the
# test's own cgroup if it may, else at its root), v2 in the unified one.
# The caller sets LIMIT_MB, calls cg_remove at exit (its trap), and is
# root (the tests skip where cgroups cannot be made).
CG=
CG_VERSION=
cg_remove() {
	[ -n "$CG" ] && [ -d "$CG" ] || return 0
	for _p in $(cat "$CG/cgroup.procs" 2>/dev/null); do
		kill -KILL "$_p" 2>/dev/null
	done
	_i=0
	while ! rmdir "$CG" 2>/dev/null && [ "$_i" -lt 200 ]; do
		_i=$((_i + 1))
		sleep 0.05
	done
}

# cg_mkdir_v1 NAME: a new v1 memory cgroup vltest.PID.NAME, with no limit,
# in $CG (under the test's own cgroup if it may, else at the root); 1 if
# none can be made, why in $WORK/mkdir.err
cg_mkdir_v1() {
	CG=
	CG_VERSION=1
	_own=$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
	for _parent in "/sys/fs/cgroup/memory$_own" /sys/fs/cgroup/memory; do
		mkdir "$_parent/vltest.$$.$1" 2>"$WORK/mkdir.err" && CG=$_parent/vltest.$$.$1 && return 0
	done
	return 1
}

# cg_make: a fresh cgroup with a limit of LIMIT_MB and no swap, in $CG
cg_make() {
	cg_remove
	_name=vltest.$$.$1
	CG=
	if [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
		cg_mkdir_v1 "$1" || skip "cannot make a memory cgroup: $(cat "$WORK/mkdir.err")"
		echo 0 >"$CG/memory.swappiness" 2>/dev/null
		echo "${LIMIT_MB}M" >"$CG/memory.limit_in_bytes" || fail "cannot set the limit of $CG"
		if [ -f "$CG/memory.memsw.limit_in_bytes" ]; then
			echo "${LIMIT_MB}M" >"$CG/memory.memsw.limit_in_bytes" || fail "cannot limit swap in $CG"
		fi
	elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		CG_VERSION=2
		echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
		mkdir "/sys/fs/cgroup/$_name" 2>"$WORK/mkdir.err" ||
			skip "cannot make a memory cgroup: $(cat "$WORK/mkdir.err")"
		CG=/sys/fs/cgroup/$_name
		[ -f "$CG/memory.max" ] || skip "no memory controller in $CG"
		echo "${LIMIT_MB}M" >"$CG/memory.max" || fail "cannot set the limit of $CG"
		[ -f "$CG/memory.swap.max" ] && echo 0 >"$CG/memory.swap.max"
	else
		skip "no memory cgroup controller on this machine"
	fi
}

# OOM kills in the cgroup so far
cg_oom_kills() {
	if [ "$CG_VERSION" = 1 ]; then
		awk '$1 == "oom_kill" { print $2 }' "$CG/memory.oom_control"
	else
		awk '$1 == "oom_kill" { print $2 }' "$CG/memory.events"
	fi
}

# in_cg CMD...: run CMD inside the cgroup
in_cg() {
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$@"
}

# cgs_make N NAME: N v1 memory cgroups at the hierarchy's root, each with
# a limit of 256M, vltest.PID.NAME0 ... in CGS, in the order made (skips
# where there is no v1 memory controller, or MemTotal is not above 512M);
# the caller calls cgs_remove at exit
CGS=
cgs_make() {
	[ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ] ||
		skip "no cgroup v1 memory controller at /sys/fs/cgroup/memory: the test makes its cgroups there"
	_kb=$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)
	[ "$_kb" -gt $((512 * 1024)) ] || skip "MemTotal is $_kb kB: a 256M limit would not be below it"
	_k=0
	while [ "$_k" -lt "$1" ]; do
		_c=/sys/fs/cgroup/memory/vltest.$$.$2$_k
		mkdir "$_c" 2>"$WORK/mkdir.err" ||
			{ cgs_remove; skip "cannot make a memory cgroup: $(cat "$WORK/mkdir.err")"; }
		CGS="$CGS $_c"
		echo 256M >"$_c/memory.limit_in_bytes" || { cgs_remove; fail "cannot set the limit of $_c"; }
		_k=$((_k + 1))
	done
}
# cgs_remove: CGS's processes killed and the cgroups removed
cgs_remove() {
	for _c in $CGS; do
		for _p in $(cat "$_c/cgroup.procs" 2>/dev/null); do
			kill -KILL "$_p" 2>/dev/null
		done
		_i=0
		while [ -d "$_c" ] && ! rmdir "$_c" 2>/dev/null && [ "$_i" -lt 200 ]; do
			_i=$((_i + 1))
			sleep 0.05
		done
	done
	CGS=
}
