#!/bin/sh
# SPDX-License-Identifier: MIT
# When the kernel or a sandbox refuses seccomp, `volatile run` goes on with
# the preload only, silently; with --debug it says so in exactly one line
# "volatile run: seccomp..." (the contract's section 10). The sandbox is
# tests/helpers/noseccomp: a filter that makes seccomp(2) and
# prctl(PR_SET_SECCOMP) fail with EPERM, as a container's profile may.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_seccomp
need_static

# the sandbox works: inside it, no filter can be installed
run probe "$NOSECCOMP" "$NOSECCOMP" --probe
[ "$rc" -eq 1 ] || { show probe; fail "inside noseccomp, a filter could still be installed (exit status $rc)"; }

# ---- silently: a static program gets the kernel's answer, a dynamic one the library ----
new_region
ok static "$NOSECCOMP" timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run -- "$VT_STATIC" \
	memfd m 4K mark 0 4K unmark 0 4K fa KEEP_SIZE 0 4K
expect_out static <<EOF
memfd m 4K = 3
mark 0 4K = -1 EOPNOTSUPP
unmark 0 4K = -1 EOPNOTSUPP
fa KEEP_SIZE 0 4K = 0
EOF
ok dynamic "$NOSECCOMP" timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run -- "$VT" \
	memfd m 4K fill 0 4K D mark 0 4K unmark 0 4K expect 0 4K D
expect_out dynamic <<EOF
memfd m 4K = 3
fill 0 4K D = ok
mark 0 4K = 0
unmark 0 4K = 0
expect 0 4K D ok
EOF

# ---- --debug: one line says why -------------------------------------------------------------
new_region
run debug "$NOSECCOMP" timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run --debug -- "$VT_STATIC" \
	memfd m 4K mark 0 4K
[ "$rc" -eq 0 ] || { show debug; fail "debug: exit status $rc"; }
expect_out debug <<EOF
memfd m 4K = 3
mark 0 4K = -1 EOPNOTSUPP
EOF
n=$(grep -c '^volatile run: seccomp' "$WORK/debug.err")
[ "$n" -eq 1 ] || { show debug; fail "--debug with seccomp refused: $n lines 'volatile run: seccomp...' (want 1)"; }
[ "$(served debug)" -eq 0 ] || { show debug; fail "a call was served with seccomp refused"; }
# and without the sandbox: no such line, the call is served
new_region
run debug2 vrun --debug -- "$VT_STATIC" memfd m 4K mark 0 4K
n=$(grep -c '^volatile run: seccomp' "$WORK/debug2.err")
[ "$n" -eq 0 ] || { show debug2; fail "--debug without a sandbox warned about seccomp"; }
expect_line debug2 "mark 0 4K = 0"

# ---- no supervisor: a fork refused ----------------------------------------------------------
# run starts its supervisor (a process of its own) before the filter: without
# one, no filter, CMD runs with the preload only, one line says why.
# no_supervisor NAME RUN...: RUN (a `volatile run --debug --`, under whatever
# refuses the fork) given the static vt's MARK and UNMARK, so checked
no_supervisor() {
	_n=$1
	shift
	new_region
	run "$_n" "$@" "$VT_STATIC" memfd m 4K mark 0 4K unmark 0 4K
	[ "$rc" -eq 0 ] || { show "$_n"; fail "$_n: exit status $rc"; }
	expect_out "$_n" <<EOF
memfd m 4K = 3
mark 0 4K = -1 EOPNOTSUPP
unmark 0 4K = -1 EOPNOTSUPP
EOF
	_lines=$(grep -c '^volatile run: seccomp refused (the supervisor did not start)' "$WORK/$_n.err")
	[ "$_lines" -eq 1 ] || { show "$_n"; fail "$_n: $_lines lines saying the supervisor did not start (want 1)"; }
}
# The supervisor's own fork, in the middle process, refused (the test
# suite's build of the command, its fault point): run must not wait for it.
no_supervisor nohelper env VOLATILE_FAULT_SYSCALL=sv_fork:EAGAIN timeout "$VL_TIMEOUT" \
	"$FAULTY" run --debug --
# run's own first fork refused (RLIMIT_NPROC, which binds users, not root)
if [ "$(id -u)" -eq 0 ]; then
	say "root: RLIMIT_NPROC does not bind root (no-supervisor part)"
elif ! command -v prlimit >/dev/null 2>&1; then
	say "no prlimit (util-linux): no-supervisor part skipped"
else
	no_supervisor nofork timeout "$VL_TIMEOUT" prlimit --nproc=1 -- "$VOLATILE_CMD" run --debug --
fi
exit 0
