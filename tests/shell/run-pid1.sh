#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile run` as PID 1 of a PID namespace (`unshare -pf volatile run --
# CMD`, a container's entry point): the kernel gives every orphan of the
# namespace to its init, which is run, then CMD, so the double fork cannot
# keep the supervisor from being CMD's child (DESIGN 21). A CMD that waits
# for every child until ECHILD, as an init does, then waits for a
# supervisor that waits for the last process under the filter: CMD. An
# expected failure (XFAIL_TESTS) until run does something else as PID 1;
# without run the same CMD returns at once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_seccomp
need_static
command -v unshare >/dev/null 2>&1 || skip "no unshare(1)"

# --kill-child: unshare killed by the timeout takes the namespace's init with it
NS="unshare --kill-child -pf --mount-proc"
[ "$(id -u)" -eq 0 ] || NS="unshare --kill-child -Urpf --mount-proc"
# shellcheck disable=SC2086 # NS is words
$NS true 2>"$WORK/ns.err" || skip "no PID namespace here: $(head -n 1 "$WORK/ns.err")"

# shellcheck disable=SC2086
run alone timeout -s KILL 10 $NS "$VT_STATIC" pid waitall
[ "$rc" -eq 0 ] && grep -qxF 'waitall = 0 children' "$WORK/alone.out" ||
	{ show alone; fail "without run: exit status $rc"; }
new_region
# shellcheck disable=SC2086
run pid1 timeout -s KILL 10 $NS "$VOLATILE_CMD" run -- "$VT_STATIC" pid memfd m 8K sysfa MARK 0 4K waitall
if [ "$rc" -ne 0 ]; then
	show pid1
	fail "run as PID 1: exit status $rc (137: CMD's wait() for every child did not end in 10 s)"
fi
expect_out pid1 <<EOF
pid = 1
memfd m 8K = 3
sysfa MARK 0 4K = 0
waitall = 0 children
EOF
