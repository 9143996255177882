#!/bin/sh
# SPDX-License-Identifier: MIT
# A full file table of records nobody can clear
# (doc/limits.md; DESIGN 15).
#
# A record with a purged range is kept until its file is certainly gone.
# Where that cannot be proven (a process of the user that cannot be looked
# into; no CAP_DAC_READ_SEARCH for the kernel's word), such records stayed
# for good and filled the table: every MARK of a new file got ENOMEM. Now
# a MARK that finds the table full evicts the records of files silent for
# a minute and unreachable, leaving a tombstone for those with purged
# ranges, so that no UNMARK of them says 0 again.
#
# Here a table of 8 is filled with such records: a non-dumpable process
# of the user runs throughout (so no file is ever proven gone by /proc),
# and every process of the test runs as an unprivileged user (as root,
# nobody through setpriv), with no CAP_DAC_READ_SEARCH.
#
#   a. memfds with a purged range: one held by a live non-dumpable
#      holder, seven whose holders exited. A MARK of a new file still gets
#      ENOMEM while they are younger than a minute (the installed library),
#      and succeeds when the test's copy of the library is told the minute
#      is over (VOLATILE_FAULT_EVICT_AGE=0). The live holder's UNMARKs then
#      say 1, never 0: over its purged bytes, over its other bytes (intact),
#      and over a range it marked again after the eviction.
#   b. ashmem regions: one live, non-dumpable, with an unpinned range that
#      was purged; seven whose programs exited (each leaves its record, no
#      range at all). After the eviction, the live one's PIN says
#      ASHMEM_WAS_PURGED.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

need_fault_lib
LEGACY=$VL_TOP_BUILDDIR/tests/helpers/ashmem-legacy
[ -x "$LEGACY" ] || fail "$LEGACY is not built (make check builds it)"

# ---- processes that cannot prove a file gone ------------------------------------------
# An unprivileged user (as root: nobody, through setpriv): it has no
# CAP_DAC_READ_SEARCH for the kernel's word, and its non-dumpable
# processes are closed to its others.
U=$WORK/u
mkdir "$U" || fail "mkdir $U"
if [ "$(id -u)" -eq 0 ]; then
	command -v setpriv >/dev/null 2>&1 ||
		skip "setpriv (util-linux) is missing: as root this test needs an unprivileged user"
	AS="setpriv --reuid=65534 --regid=65534 --clear-groups --"
	{ chmod 0711 "$WORK" && chown 65534:65534 "$U"; } || fail "cannot give $U to uid 65534"
else
	AS=
fi
chmod 0700 "$U"

# user_run NAME CMD...: run CMD as that user (lib.sh's run)
user_run() {
	_n=$1
	shift
	# word splitting of $AS is intended: setpriv and its options, or nothing
	# shellcheck disable=SC2086
	run "$_n" timeout "$VL_TIMEOUT" $AS "$@"
}

# as NAME CMD...: the same, ok-checked
as() {
	user_run "$@"
	if [ "$rc" -ne 0 ] || [ -s "$WORK/$1.err" ]; then
		show "$1"
		fail "$1: exit status $rc (want 0, and an empty stderr)"
	fi
}

# can the user run the programs and libraries of the build tree?
runs_as_user() {
	user_run probe env LD_PRELOAD="$EV_LIB" "$EV_VT" echo probe
	[ "$rc" -eq 0 ] && [ ! -s "$WORK/probe.err" ] || return 1
	user_run probe env LD_PRELOAD="$EV_FAULT" "$EV_LEGACY" echo probe
	[ "$rc" -eq 0 ] && [ ! -s "$WORK/probe.err" ] || return 1
	user_run probe "$EV_VOL" --help
	[ "$rc" -eq 0 ]
}
EV_VT=$VT EV_VOL=$VOLATILE_CMD EV_LIB=$VOLATILE_LIBRARY EV_FAULT=$FAULT_LIB EV_LEGACY=$LEGACY
if ! runs_as_user; then
	# copies, on a disk (a tmpfs may be mounted noexec), else in $WORK
	say "the user cannot run the build tree's programs: copies are used"
	copied=
	for d in ${DISK:+"$DISK"} "$WORK"; do
		{ chmod 0711 "$d" && mkdir -p "$d/bin" &&
			cp "$VT" "$VOLATILE_CMD" "$VOLATILE_LIBRARY" "$FAULT_LIB" "$LEGACY" "$d/bin/" &&
			chmod 0755 "$d/bin" "$d/bin/"*; } || continue
		EV_VT=$d/bin/vt EV_VOL=$d/bin/volatile EV_LEGACY=$d/bin/ashmem-legacy
		EV_LIB=$d/bin/$(basename "$VOLATILE_LIBRARY") EV_FAULT=$d/bin/$(basename "$FAULT_LIB")
		if runs_as_user; then
			copied=1
			break
		fi
	done
	[ -n "$copied" ] || skip "the user cannot run the test programs, even copied: $(cat "$WORK/probe.err" 2>/dev/null)"
fi

# shellcheck disable=SC2086,SC2016
caps=$($AS awk '$1 == "CapEff:" { print $2 }' /proc/self/status)
case $caps in
'' | *[!0-9a-f]*) fail "cannot read the capabilities of the user's processes: '$caps'" ;;
esac
# bit 2: CAP_DAC_READ_SEARCH, which lets the kernel say a file is gone (src/inode_gone.c)
[ $(((0x$caps >> 2) & 1)) -eq 0 ] ||
	skip "processes of this user have CAP_DAC_READ_SEARCH, which proves files gone here"

# A non-dumpable process of the user, for the whole test: no purge can
# look into it, so no file is ever certainly gone by /proc.
# shellcheck disable=SC2086
bg blind $AS "$EV_VT" pid nodump touch "$U/blind-ready" sleep 120000
wait_file "$U/blind-ready"
blind=$(sed -n '1s/^pid = //p' "$WORK/blind.out")
[ -n "$blind" ] || { show blind; fail "the non-dumpable process printed no pid"; }
# shellcheck disable=SC2086
if $AS cat "/proc/$blind/maps" >/dev/null 2>&1; then
	skip "a non-dumpable process of the user can be looked into here: files could be proven gone"
fi

# new_region: in the user's directory
REGION_DIR=$U

VOLATILE_REGION_FILES=8
export VOLATILE_REGION_FILES

# records_json NAME: status as JSON into NAME.out
records_json() {
	as "$1" "$EV_VOL" status --json
}

# full NAME: the table holds 8 records, none gone, each unreachable
expect_full_of_unreachable() {
	records_json "$1"
	expect_eq "records in the table ($1)" "$(jq_py "$1" 'd["records"]')" 8
	expect_eq "records that no purge could reach ($1)" \
		"$(jq_py "$1" 'len([x for x in d["file_list"] if x["unreachable"] and not x["gone"]])')" 8
}

# ino_of NAME PID: the inode of the record PID holds, in status NAME
ino_of() {
	jq_py "$1" "[x['ino'] for x in d['file_list'] if any(h['pid'] == $2 for h in x['holders'])]"
}

# make_room NAME: a MARK of a new file, the minute of silence over
make_room() {
	as "$1" env VOLATILE_FAULT_EVICT_AGE=0 LD_PRELOAD="$EV_FAULT" "$EV_VT" memfd "$1" 64K \
		fill 0 64K N mark 0 8K unmark 0 8K expect 0 8K N
	expect_out "$1" <<EOF
memfd $1 64K = 3
fill 0 64K N = ok
mark 0 8K = 0
unmark 0 8K = 0
expect 0 8K N ok
EOF
}

# ---- a. memfds with purged ranges ---------------------------------------------------------
new_region
# the live one: [0,8K) purged by its own budget, [16K,24K) volatile; then not dumpable
# shellcheck disable=SC2086
bg hold $AS env VOLATILE_BUDGET=8K LD_PRELOAD="$EV_LIB" "$EV_VT" pid memfd h 64K \
	fill 0 64K H mark 0 8K mark 16K 8K nodump touch "$U/h-ready" wait "$U/h-go" \
	unmark 0 8K expect 0 8K zero unmark 16K 8K expect 16K 8K H expect 8K 8K H \
	expect 24K 40K H mark 32K 8K unmark 32K 8K
wait_file "$U/h-ready"
hold=$(sed -n '1s/^pid = //p' "$WORK/hold.out")
for i in 1 2 3 4 5 6 7; do
	as "a-m$i" env VOLATILE_BUDGET=4K LD_PRELOAD="$EV_LIB" "$EV_VT" memfd "m$i" 64K \
		fill 0 64K A mark 0 8K expect 0 8K zero
	expect_line "a-m$i" "mark 0 8K = 0"
done
as a-purge "$EV_VOL" purge --all
expect_full_of_unreachable a-st0
expect_eq "records with a purged range" \
	"$(jq_py a-st0 'len([x for x in d["file_list"] if any(r["purged"] for r in x["ranges"])])')" 8
hold_ino=$(ino_of a-st0 "$hold")
[ "$hold_ino" != "[]" ] || { show a-st0; fail "no record names the live holder (pid $hold)"; }

# records silent for less than a minute are not evicted: the table is full
as a-young env LD_PRELOAD="$EV_LIB" "$EV_VT" memfd young 64K mark 0 8K
expect_line a-young "mark 0 8K = -1 ENOMEM"

# a minute later (as the test's copy of the library is told): room is made
make_room a-room
records_json a-st1
[ "$(jq_py a-st1 'd["evicted"]')" -ge 1 ] || { show a-st1; fail "no record was evicted"; }
expect_eq "the live holder's record after the eviction" "$(ino_of a-st1 "$hold")" "[]"

# the live holder, evicted: no UNMARK of it says 0 again; its bytes are as they were
touch "$U/h-go"
wait_bg hold
[ "$rc" -eq 0 ] || { show hold; fail "the live holder: exit status $rc"; }
expect_out hold <<EOF
pid = $hold
memfd h 64K = 3
fill 0 64K H = ok
mark 0 8K = 0
mark 16K 8K = 0
nodump = 0
touch $U/h-ready = 0
wait $U/h-go
unmark 0 8K = 1
expect 0 8K zero ok
unmark 16K 8K = 1
expect 16K 8K H ok
expect 8K 8K H ok
expect 24K 40K H ok
mark 32K 8K = 0
unmark 32K 8K = 1
EOF

# ---- b. ashmem regions ------------------------------------------------------------------------
[ -e /dev/ashmem ] && { say "a real /dev/ashmem: part b (ashmem) not run"; exit 0; }
new_region
# the live one: [0,8K) unpinned and purged (PURGE_ALL_CACHES), then not dumpable
# shellcheck disable=SC2086
bg ash $AS env LD_PRELOAD="$EV_LIB" "$EV_LEGACY" open setname live setsize 16K \
	map 16K rw fill 0 16K L unpin 0 8K purgeall nodump touch "$U/ash-ready" \
	wait "$U/ash-go" pin 0 8K expect 0 8K zero expect 8K 8K L
wait_file "$U/ash-ready"
for i in 1 2 3 4 5 6 7; do
	as "b-r$i" env LD_PRELOAD="$EV_LIB" "$EV_LEGACY" open setname "gone$i" setsize 8K \
		map 8K rw
done
as b-purge "$EV_VOL" purge --all
expect_full_of_unreachable b-st0
expect_eq "ashmem records" "$(jq_py b-st0 'len([x for x in d["file_list"] if x["ashmem"]])')" 8
as b-young env LD_PRELOAD="$EV_LIB" "$EV_VT" memfd young 64K mark 0 8K
expect_line b-young "mark 0 8K = -1 ENOMEM"
make_room b-room
records_json b-st1
[ "$(jq_py b-st1 'd["evicted"]')" -ge 1 ] || { show b-st1; fail "no ashmem record was evicted"; }
touch "$U/ash-go"
wait_bg ash
[ "$rc" -eq 0 ] || { show ash; fail "the live ashmem program: exit status $rc"; }
expect_line ash "pin 0 8K = 1"
expect_line ash "expect 0 8K zero ok"
expect_line ash "expect 8K 8K L ok"
exit 0
