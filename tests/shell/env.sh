#!/bin/sh
# SPDX-License-Identifier: MIT
# The environment (doc/environment.md): a value that does not parse is
# ignored; with VOLATILE_DEBUG=1 the log says so, and otherwise nothing is
# printed (`volatile run` refuses them: command.sh). Either way the program goes on (the environment is read inside
# a pthread_once: a log written from there must not wait on it).
. "$(dirname "$0")/lib.sh"
need_cmd

n=0
for bad in VOLATILE_BUDGET=junk VOLATILE_REGION_RANGES=junk VOLATILE_REGION_FILES=0 \
	VOLATILE_MIN_AVAILABLE=junk VOLATILE_TMPFS_MIN_FREE=50x VOLATILE_LOCK_WAIT=2h \
	VOLATILE_2012_ABI=yes VOLATILE_SECCOMP_FILTERS=abc; do
	n=$((n + 1))
	new_region
	name=${bad%%=*}
	ok "quiet-$n" svte "$bad" -- memfd m 64K mark 0 4K
	expect_line "quiet-$n" "mark 0 4K = 0"
	run "debug-$n" svte "$bad" VOLATILE_DEBUG=1 -- memfd m 64K mark 0 4K
	[ "$rc" -eq 0 ] || { show "debug-$n"; fail "$bad with VOLATILE_DEBUG=1: exit status $rc"; }
	expect_line "debug-$n" "mark 0 4K = 0"
	grep -q "$bad is " "$WORK/debug-$n.err" ||
		{ show "debug-$n"; fail "$bad with VOLATILE_DEBUG=1: the log does not name $name"; }
	# the command reads the same environment
	ok "cmd-$n" env "$bad" "$VOLATILE_CMD" status
done
exit 0
