#!/bin/sh
# SPDX-License-Identifier: MIT
# When the supervisor is gone, the programs it served keep running: their
# volatile calls fail with -1 ENOSYS (the kernel's answer once the
# listener is closed), never hang, and every other call is untouched
# (the contract's section 10). Two ways to lose it: the `volatile run`
# process (CMD's parent, the supervisor) SIGKILLed while CMD runs, and a
# descendant that outlives CMD, after run has exited with CMD's status.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_seccomp
need_static

# ---- the supervisor SIGKILLed -----------------------------------------------------------
new_region
bg killed vrun -- "$VT_STATIC" memfd m 64K fill 0 64K A mark 0 4K pid touch "$WORK/ready" \
	wait "$WORK/go" mark 8K 4K unmark 0 4K fa 'MARK|KEEP_SIZE' 16K 4K sysfa UNMARK 0 4K \
	fa KEEP_SIZE 0 128K fa 'PUNCH_HOLE|KEEP_SIZE' 60K 4K fa 0x4 0 4K size expect 0 60K A \
	expect 60K 4K zero spawn mark 0 4K end reap echo finished
wait_file "$WORK/ready"
pid=$(pid_of killed)
runpid=$(ppid_of "$pid")
comm=$(comm_of "$runpid")
if [ "$comm" != volatile ]; then
	touch "$WORK/go"
	fail "the parent of CMD (pid $runpid) is '$comm', not the volatile run process that supervises it"
fi
kill -KILL "$runpid" || fail "cannot kill the volatile run process $runpid"
# it is gone, reaped by timeout (the bg job's command)
i=0
while alive "$runpid"; do
	i=$((i + 1))
	[ "$i" -le 3000 ] || fail "the volatile run process $runpid does not die of SIGKILL"
	sleep 0.01
done
touch "$WORK/go"
wait_line killed finished
# and CMD exits by itself (not killed, nothing hangs)
i=0
while alive "$pid"; do
	i=$((i + 1))
	[ "$i" -le 3000 ] || fail "CMD (pid $pid) still runs 30 s after its last command"
	sleep 0.01
done
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
# CMD forks a child and exits 0 at once (detach); run exits 0 with it,
# without waiting for the child; then the child's volatile calls say
# ENOSYS, its others work.
new_region
run late vrun -- "$VT_STATIC" memfd m 64K fill 0 64K L mark 0 4K detach pid \
	touch "$WORK/detached" wait "$WORK/late.go" mark 8K 4K unmark 0 4K fa KEEP_SIZE 0 4K \
	expect 0 64K L echo late
[ "$rc" -eq 0 ] || { show late; fail "late: run's exit status $rc, CMD's was 0"; }
wait_file "$WORK/detached"
touch "$WORK/late.go"
wait_line late late
sed -i 's/^pid = .*/pid = N/' "$WORK/late.out"
expect_out late <<EOF
memfd m 64K = 3
fill 0 64K L = ok
mark 0 4K = 0
detach
pid = N
touch $WORK/detached = 0
wait $WORK/late.go
mark 8K 4K = -1 ENOSYS
unmark 0 4K = -1 ENOSYS
fa KEEP_SIZE 0 4K = 0
expect 0 64K L ok
late
EOF
exit 0
