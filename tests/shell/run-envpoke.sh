#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile run` judges which region a caller's library would use from
# /proc/PID/environ (DESIGN 21), "the strings exec put on its stack, as
# they read now": memory the caller may write over after its exec (as
# setproctitle does), before its first volatile call. A static program
# started with VOLATILE_REGION=B, under `volatile run --region A`, writes
# A over B's value in place, then UNMARKs bytes marked and purged in B:
# run takes it for one of A's and serves the UNMARK in A, which never
# heard of them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_seccomp
need_static

A=$WORK/a.region
B=$WORK/b.region
F=$WORK/f
unset VOLATILE_REGION

# shellcheck disable=SC2016 # for the inner sh
run poke vrun --region "$A" -- sh -c '
	"$1" open "$3" rwc fill 0 8K x >/dev/null &&
	VOLATILE_REGION="$5" "$2" mark "$3" 0 8K &&
	VOLATILE_REGION="$5" "$2" purge --all &&
	VOLATILE_REGION="$5" exec "$4" open "$3" rw envpoke VOLATILE_REGION "$6" \
		unmark 0 8K expect 0 8K x' \
	sh "$VT" "$VOLATILE_CMD" "$F" "$VT_STATIC" "$B" "$A"
expect_line poke "envpoke VOLATILE_REGION = 1"
if grep -qxF "unmark 0 8K = 0" "$WORK/poke.out"; then
	show poke
	fail "UNMARK said 0 through run over bytes purged in the region the caller was started with"
fi
exit 0
