#!/bin/sh
# SPDX-License-Identifier: MIT
# One door to the kernel (DESIGN 17): no file of the library, the shim or
# the command calls syscall() but src/sys.h, whose vl_raw_ layer is the
# only way in (fault-free, for a vfork child of the host and the host's
# own calls) and around which the library's own calls are fault points
# (src/core/fault.h). Nor does the library (src/ but the command, src/cli/)
# call libc's wrapper of a system call sys.h has: those would bypass the
# fault points and write errno (sys.h lists the two libc calls it keeps).
# Run over the source tree as it is.
. "$(dirname "$0")/lib.sh"
: "${VL_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
top=$VL_TOP_SRCDIR

[ -f "$top/src/sys.h" ] || fail "no src/sys.h under $top: is VL_TOP_SRCDIR right?"
# a call: syscall( after something that is not part of a name, outside a comment line
find "$top/src" -type d \( -name .libs -o -name .deps \) -prune -o -type f \
	\( -name '*.c' -o -name '*.h' \) ! -path "$top/src/sys.h" -print |
	xargs grep -nE '(^|[^A-Za-z0-9_])syscall[[:space:]]*\(' |
	grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)' >"$WORK/calls" || :
if [ -s "$WORK/calls" ]; then
	sed "s|^$top/|  |" "$WORK/calls" >&2
	fail "$(wc -l <"$WORK/calls") calls of syscall() outside src/sys.h (above): go through its vl_raw_ layer"
fi

# libc's wrappers the library must not call (the names the shim defines, open,
# close, mmap..., are checked by symbols.sh: a call to one binds to the hook)
wrappers='read|write|readlink|readlinkat|statfs|fstatfs|unlink|unlinkat|geteuid|getuid|getegid|pipe|pipe2|sched_yield|kill|ftruncate|fchmod|linkat|renameat|renameat2|madvise|mprotect|dup3|lseek|memfd_create|pread|pwrite|getdents64|socket|recvmsg|sendmsg|faccessat|fstatat|statx|name_to_handle_at|open_by_handle_at|pidfd_open|pidfd_getfd|close_range'
find "$top/src" -type d \( -name .libs -o -name .deps -o -name cli \) -prune -o -type f \
	\( -name '*.c' -o -name '*.h' \) ! -path "$top/src/sys.h" -print |
	xargs grep -nE "(^|[^A-Za-z0-9_.>])($wrappers)[[:space:]]*\(" |
	grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)' | grep -v ':VL_EXPORT ' >"$WORK/wrapped" || :
if [ -s "$WORK/wrapped" ]; then
	sed "s|^$top/|  |" "$WORK/wrapped" >&2
	fail "$(wc -l <"$WORK/wrapped") calls of libc's system-call wrappers in the library (above): go through src/sys.h's vl_raw_ layer"
fi
say "no call of syscall() outside src/sys.h, no libc system-call wrapper in the library"
