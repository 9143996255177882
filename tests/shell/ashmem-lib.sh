# SPDX-License-Identifier: MIT
# ashmem-lib.sh - sourced by the ashmem shell tests, after lib.sh.
#
# leg ARGS...   tests/helpers/ashmem-legacy (a program that knows only
#               /dev/ashmem and the driver's ioctls) under `volatile run`

LEGACY=$VL_TOP_BUILDDIR/tests/helpers/ashmem-legacy
[ -x "$LEGACY" ] || fail "$LEGACY is not built (make check builds it)"
need_cmd
[ -e /dev/ashmem ] && skip "this machine has a real /dev/ashmem: the emulation stands aside for it"

leg() {
	timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run -- "$LEGACY" "$@"
}
