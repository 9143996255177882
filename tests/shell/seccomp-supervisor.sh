#!/bin/sh
# SPDX-License-Identifier: MIT
# When the supervisor is gone, the programs it served keep running: their
# volatile calls fail with -1 ENOSYS (the kernel's answer once the
# listener is closed), never hang, and every other call is untouched
# (the contract's section 10): the supervisor, a process of its own
# (DESIGN 21), SIGKILLed while CMD runs. And it is not lost too early: a
# descendant that outlives CMD is served after CMD's exit, and the
# supervisor exits once the last process under its filter is gone.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_seccomp
need_static

# ---- the supervisor SIGKILLed -----------------------------------------------------------
new_region
bg killed env VL_RUN_TAG=killed-$$ timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run -- "$VT_STATIC" memfd m 64K fill 0 64K A mark 0 4K pid touch "$WORK/ready" \
	wait "$WORK/go" mark 8K 4K unmark 0 4K fa 'MARK|KEEP_SIZE' 16K 4K sysfa UNMARK 0 4K \
	fa KEEP_SIZE 0 128K fa 'PUNCH_HOLE|KEEP_SIZE' 60K 4K fa 0x4 0 4K size expect 0 60K A \
	expect 60K 4K zero spawn mark 0 4K end reap echo finished
wait_file "$WORK/ready"
pid=$(pid_of killed)
svpid=$(supervisor_of "killed-$$")
kill -KILL "$svpid" || fail "cannot kill the supervisor $svpid"
# it is gone (reaped by init or a subreaper: it may stay a zombie a while)
wait_until 30 "the supervisor $svpid does not die of SIGKILL" '! alive "$svpid"'
touch "$WORK/go"
wait_line killed finished
# and CMD exits by itself (not killed, nothing hangs)
wait_until 30 "CMD (pid $pid) still runs 30 s after its last command" '! alive "$pid"'
sed -i 's/^pid = .*/pid = N/' "$WORK/killed.out"
expect_out killed <<EOF
memfd m 64K = 3
fill 0 64K A = ok
mark 0 4K = 0
pid = N
touch $WORK/ready = 0
wait $WORK/go
mark 8K 4K = -1 ENOSYS
unmark 0 4K = -1 ENOSYS
fa MARK|KEEP_SIZE 16K 4K = -1 ENOSYS
sysfa UNMARK 0 4K = -1 ENOSYS
fa KEEP_SIZE 0 128K = 0
fa PUNCH_HOLE|KEEP_SIZE 60K 4K = 0
fa 0x4 0 4K = -1 EOPNOTSUPP
size = 65536
expect 0 60K A ok
expect 60K 4K zero ok
mark 0 4K = -1 ENOSYS
reap = 0
finished
EOF

# ---- a descendant that outlives CMD ------------------------------------------------------
# CMD forks a child and exits 0 at once (detach); run, which is CMD, exits 0
# with it; the child's volatile calls are still served, and the supervisor
# goes once the child has exited.
new_region
run late env VL_RUN_TAG=late-$$ timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run -- "$VT_STATIC" memfd m 64K fill 0 64K L mark 0 4K detach pid \
	touch "$WORK/detached" wait "$WORK/late.go" mark 8K 4K unmark 0 4K fa KEEP_SIZE 0 4K \
	expect 0 64K L echo late
[ "$rc" -eq 0 ] || { show late; fail "late: run's exit status $rc, CMD's was 0"; }
wait_file "$WORK/detached"
svpid=$(supervisor_of "late-$$")
touch "$WORK/late.go"
wait_line late late
wait_until 30 "the supervisor $svpid still runs 30 s after the last process it served" '! alive "$svpid"'
sed -i 's/^pid = .*/pid = N/' "$WORK/late.out"
expect_out late <<EOF
memfd m 64K = 3
fill 0 64K L = ok
mark 0 4K = 0
detach
pid = N
touch $WORK/detached = 0
wait $WORK/late.go
mark 8K 4K = 0
unmark 0 4K = 0
fa KEEP_SIZE 0 4K = 0
expect 0 64K L ok
late
EOF
exit 0
