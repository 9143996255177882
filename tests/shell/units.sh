#!/bin/sh
# SPDX-License-Identifier: MIT
# The systemd units the package installs pass `systemd-analyze verify`: the
# user's daemon (DESIGN 8) and the machine's (DESIGN 22), made from their
# templates as `make install` makes them, the command's path being the
# build's. Checked in system mode (a user manager needs a session this
# test may not have: the syntax and the ExecStart are what is checked).
# Any line it prints fails the test (an unknown key is only a warning).
. "$(dirname "$0")/lib.sh"
need_cmd

command -v systemd-analyze >/dev/null 2>&1 || skip "no systemd-analyze (package systemd) on this machine"

for unit in volatile-daemon volatile-system; do
	tmpl=$VL_TOP_SRCDIR/data/$unit.service.in
	[ -f "$tmpl" ] || fail "$unit: no template $tmpl"
	sed -e "s|@bindir@/volatile|$VOLATILE_CMD|" "$tmpl" >"$WORK/$unit.service"
	grep -q '@' "$WORK/$unit.service" && fail "$unit: a substitution is left: $(grep '@' "$WORK/$unit.service")"
	if ! systemd-analyze verify --man=no "$WORK/$unit.service" >"$WORK/$unit.out" 2>&1; then
		cat "$WORK/$unit.out" >&2
		fail "$unit.service: systemd-analyze verify fails"
	fi
	if [ -s "$WORK/$unit.out" ]; then
		cat "$WORK/$unit.out" >&2
		fail "$unit.service: systemd-analyze verify warns"
	fi
done
grep -qx 'ExecStart=@bindir@/volatile daemon --system --foreground' \
	"$VL_TOP_SRCDIR/data/volatile-system.service.in" || fail "the system unit does not run daemon --system"
grep -qx 'WantedBy=multi-user.target' "$VL_TOP_SRCDIR/data/volatile-system.service.in" ||
	fail "the system unit is not wanted by multi-user.target"
exit 0
