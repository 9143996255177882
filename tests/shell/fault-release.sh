#!/bin/sh
# SPDX-License-Identifier: MIT
# The fault points and the test build's shorter times (core/fault.h:
# VOLATILE_FAULT_*) are the test suite's copies alone: the installed
# library and command neither read them nor carry their names. A workload
# (MARK, purge, UNMARK, status, run) with each of them set gives the
# release build exactly what it gives without, and writes no report.
. "$(dirname "$0")/lib.sh"
# the library and the command as installed, not the test suite's debug builds (lib.sh)
VOLATILE_LIBRARY=$VOLATILE_RELEASE_LIBRARY
VOLATILE_CMD=$VOLATILE_RELEASE_CMD
need_cmd

# not one VOLATILE_FAULT_ name in what is installed
for bin in "$VOLATILE_LIBRARY" "$VOLATILE_CMD"; do
	LC_ALL=C grep -a -o 'VOLATILE_FAULT_[A-Z_]*' "$bin" | LC_ALL=C sort -u >"$WORK/names"
	[ ! -s "$WORK/names" ] ||
		fail "$bin carries the test build's settings: $(tr '\n' ' ' <"$WORK/names")"
done

# workload NAME [VAR=VALUE...]: a fresh region, a file with two ranges and a
# memfd with one, a purge of all of it, the UNMARKs, status and run
workload() {
	_w=$1
	shift
	new_region
	mkfile "$WORK/f.$_w" 64K A
	{
		env "$@" LD_PRELOAD="$VOLATILE_LIBRARY" timeout "$VL_TIMEOUT" "$VT" open "$WORK/f.$_w" rw \
			mark 0 8K mark 16K 8K memfd m 16K fill 0 16K M mark 0 4K
		env "$@" timeout "$VL_TIMEOUT" "$VOLATILE_CMD" purge --all
		echo "purge: $?"
		env "$@" LD_PRELOAD="$VOLATILE_LIBRARY" timeout "$VL_TIMEOUT" "$VT" open "$WORK/f.$_w" rw \
			unmark 0 8K unmark 16K 8K expect 8K 8K A expect 24K 40K A
		env "$@" timeout "$VL_TIMEOUT" "$VOLATILE_CMD" status --json >"$WORK/st.$_w.json"
		echo "status: $?"
		env "$@" timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run -- "$VT" open "$WORK/f.$_w" rw mark 0 4K
		echo "run: $?"
	} 2>&1 | sed "s|$WORK/f.$_w|F|g" >"$WORK/$_w.out"
}

workload plain
expect_line plain "unmark 0 8K = 1"
expect_line plain "purge: 0"
for setting in VOLATILE_FAULT_SYSCALL=1:EIO VOLATILE_FAULT_SYSCALL=statx:ENOMEM \
	VOLATILE_FAULT_KILL=1 VOLATILE_FAULT_GONE_GRACE=0 VOLATILE_FAULT_EVICT_AGE=0 \
	VOLATILE_FAULT_TRACE=1 VOLATILE_FAULT_AGE_SHIFT=3600000; do
	workload faulted "$setting" VOLATILE_FAULT_REPORT="$WORK/report"
	diff -u "$WORK/plain.out" "$WORK/faulted.out" >&2 ||
		fail "$setting changed what the release build does"
	[ ! -e "$WORK/report" ] || fail "$setting: the release build wrote a fault report"
done
exit 0
