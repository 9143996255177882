#!/bin/sh
# SPDX-License-Identifier: MIT
# The 2012 aliases 0x04/0x08, when turned on (VOLATILE_2012_ABI=1), are
# MARK/UNMARK for tmpfs *files* and memfds only (DESIGN 2); everything else
# passes to the real fallocate with the kernel's answer (DESIGN 5, "every
# other fallocate mode"), aliases on or off. That includes fds that are
# not regular files but live on a tmpfs-typed file system: /dev/null and
# the loop devices (devtmpfs reports TMPFS_MAGIC), a FIFO or a directory
# in /dev/shm, an O_PATH fd, and fds that are not open. Those must answer
# as without the shim (EOPNOTSUPP for 0x04, the kernel's own errors for
# 0x08).
. "$(dirname "$0")/lib.sh"

mkfifo "$WORK/fifo" || fail "mkfifo"
mkfile "$WORK/file" 4K A
set --
for m in 0x4 0x5 0x8 0x9; do
	set -- "$@" fa "$m" 0 4096 fa64 "$m" 0 4096 fa "$m" -1 1
done
one="$*"
# shellcheck disable=SC2086
script="open /dev/null rw $one open /dev/zero rw $one open $WORK/fifo rw $one
	open $WORK dir $one open $WORK/file path $one socket $one fd 99 $one"
# shellcheck disable=SC2086
ok noshim vt $script
# shellcheck disable=SC2086
ok shim svt $script
# shellcheck disable=SC2086
ok shim-abi svte VOLATILE_2012_ABI=1 -- $script
sed -i 's/^socket = .*/socket/' "$WORK/noshim.out" "$WORK/shim.out" "$WORK/shim-abi.out"
diff -u "$WORK/noshim.out" "$WORK/shim.out" >&2 ||
	fail "0x04/0x08 on fds that are not tmpfs files differ with the shim"
diff -u "$WORK/noshim.out" "$WORK/shim-abi.out" >&2 ||
	fail "0x04/0x08 on fds that are not tmpfs files differ with the shim and the aliases on"
exit 0
