#!/bin/sh
# SPDX-License-Identifier: MIT
# "Not a tmpfs" is an answer about one fd at one moment, never remembered
# for the mount (ident.c): another thread's dup2 onto the fd's number
# between the library's statx and its F_GET_SEALS makes F_GET_SEALS
# answer for another file (EINVAL: not shmem). That MARK may be refused;
# the next ones, of that file and of others on the same tmpfs, are not.
# The fault library makes the first F_GET_SEALS fail with EINVAL (22)
# instead, as the other file's would (core/fault.h).
. "$(dirname "$0")/lib.sh"
need_cmd
[ -r "$VOLATILE_FAULT_LIBRARY" ] || skip "no fault library: $VOLATILE_FAULT_LIBRARY"
mkfile "$WORK/f" 64K A
mkfile "$WORK/g" 64K G
report=$WORK/report

# which system call is the first F_GET_SEALS
new_region
ok trace env LD_PRELOAD="$VOLATILE_FAULT_LIBRARY" VOLATILE_FAULT_REPORT="$report" \
	VOLATILE_FAULT_TRACE=1 timeout "$VL_TIMEOUT" "$VT" open "$WORK/f" rw mark 0 4K
n=$(sed -n 's/^call \([0-9]*\) get seals$/\1/p' "$report" | head -n 1)
[ -n "$n" ] || { cat "$report" >&2; fail "no F_GET_SEALS in the traced MARK"; }

new_region
ok once env LD_PRELOAD="$VOLATILE_FAULT_LIBRARY" VOLATILE_FAULT_SYSCALL="$n:22" \
	timeout "$VL_TIMEOUT" "$VT" open "$WORK/f" rw mark 0 4K mark 8K 4K unmark 8K 4K \
	open "$WORK/g" rw mark 0 4K unmark 0 4K expect 0 64K G
# the first MARK may say either; what follows is every file's usual answer
sed 1,2d "$WORK/once.out" >"$WORK/rest.out"
mv "$WORK/rest.out" "$WORK/once.out"
expect_out once <<EOF
mark 8K 4K = 0
unmark 8K 4K = 0
open $WORK/g rw = 4
mark 0 4K = 0
unmark 0 4K = 0
expect 0 64K G ok
EOF
exit 0
