#!/bin/sh
# SPDX-License-Identifier: MIT
# A Go program (tests/helpers/gofa: syscall.Fallocate, the system call
# itself; the Go runtime never calls libc) under `volatile run` is served
# like a dynamic glibc program by the library (seccomp.sh says how), from
# any of its threads, and as a program exec'd by a static one. Skipped
# where go is missing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_prog "$GOFA" "go is not installed (configure found none)"
need_seccomp

# without run: the kernel's answer, as the README says
new_region
ok bare timeout "$VL_TIMEOUT" "$GOFA" memfd m 64K mark 0 4K unmark 0 4K fa KEEP_SIZE 0 4K
expect_out bare <<EOF
memfd m 64K = 3
mark 0 4K = -1 EOPNOTSUPP
unmark 0 4K = -1 EOPNOTSUPP
fa KEEP_SIZE 0 4K = 0
EOF

served_cases go "$GOFA" mark unmark

# 16 goroutines, each locked to its own OS thread, at once
new_region
ok threads vrun -- "$GOFA" memfd m 64K par 16 par 16 fa KEEP_SIZE 0 128K size
expect_out threads <<EOF
memfd m 64K = 3
par 16 = ok
par 16 = ok
fa KEEP_SIZE 0 128K = 0
size = 65536
EOF

# exec'd by a forked child of a static program
need_static
new_region
ok family vrun -- "$VT_STATIC" spawn exec "$GOFA" memfd g 64K fill 0 64K G mark 0 64K \
	unmark 0 64K expect 0 64K G end reap
expect_out family <<EOF
exec $GOFA
memfd g 64K = 3
fill 0 64K G = ok
mark 0 64K = 0
unmark 0 64K = 0
expect 0 64K G ok
reap = 0
EOF
exit 0
