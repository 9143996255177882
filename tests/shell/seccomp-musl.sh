#!/bin/sh
# SPDX-License-Identifier: MIT
# A static musl program (tests/helpers/vt-musl: vt.c built with musl-gcc
# -static) under `volatile run` is served like a dynamic glibc program by
# the library (seccomp.sh says how); as a forked child and as a program
# exec'd by a static glibc one too. Skipped where musl-gcc is missing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_prog "$VT_MUSL" "musl-gcc is not installed (configure found none)"
need_seccomp
need_static

served_cases musl "$VT_MUSL" mark unmark

new_region
ok family vrun -- "$VT_MUSL" memfd m 64K fill 0 64K F spawn fa64 MARK 0 4K fa64 UNMARK 0 4K end \
	reap spawn exec "$VT_STATIC" fd 3 mark 8K 4K exec "$VT_MUSL" fd 3 unmark 8K 4K end reap \
	expect 0 64K F
expect_out family <<EOF
memfd m 64K = 3
fill 0 64K F = ok
fa64 MARK 0 4K = 0
fa64 UNMARK 0 4K = 0
reap = 0
exec $VT_STATIC
fd 3
mark 8K 4K = 0
exec $VT_MUSL
fd 3
unmark 8K 4K = 0
reap = 0
expect 0 64K F ok
EOF
ok none vol status --json
[ "$(jq_py none "d['ranges']")" -eq 0 ] || { cat "$WORK/none.out" >&2; fail "ranges left after the family unmarked them all"; }
exit 0
