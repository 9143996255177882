#!/bin/sh
# SPDX-License-Identifier: MIT
# Forgetting the records of files that are gone (DESIGN 15; doc/limits.md).
#
# A purge that cannot reach a file forgets its purged ranges only when the
# file looks gone: no process of the user holds or maps it, every process
# of the user could be looked into, for a named file a search of its tmpfs
# finds no name for it, and it was found so twice, at least a grace apart
# (3 s; the test build of the command, which purges here, is told
# VL_GRACE, 2 s, and the test waits for the purge that forgets).
# Until then UNMARK of a purged range says 1 from the record; after, from
# the tombstone the forgetting left (part e: a holder /proc did not see).
#
# As root, PID 1 of some sandboxes cannot be looked into even by root, and
# then nothing is ever certainly gone; so everything here runs as an
# unprivileged user (nobody, through setpriv, or another uid no process
# runs as), whose every process can be looked into, with a region of its own.
#
#   a. a memfd whose holder exited: kept by a first purge and by a second
#      one within the grace, forgotten by one the grace after the first;
#   b. a memfd whose holder is alive but not dumpable: kept by purges the
#      grace apart (by every purge); the holder's UNMARK of the purged range says 1;
#   c. a memfd the purging process itself holds, by an fd number other than
#      the one it marked with: its own budget purge finds it and keeps it;
#   d. a named tmpfs file: unlinked, forgotten like a memfd; renamed, found
#      again by its new name, its purged range kept. (On a private tmpfs, so
#      that nothing else on it hides a name from the search.)
#   e. a memfd whose only holder /proc cannot see: in flight in a Unix socket
#      (SCM_RIGHTS) through two purges the grace apart, so that its record is
#      forgotten; received back, its UNMARK of the purged range says 1, from
#      the tombstone its forgetting left;
#   f. the same, the memfd held only in an io_uring's fixed-file table;
#   g. the same, the memfd lent to a process of another user (as root).
. "$(dirname "$0")/lib.sh"

# ---- running things as the user -----------------------------------------------------
# GC_AS (a command prefix), GC_VT, GC_VOL, GC_LIB: set by the outer run,
# inherited by the part run in a mount namespace.

as_user() {
	# word splitting of $GC_AS is intended: setpriv and its options, or nothing
	# shellcheck disable=SC2086
	timeout "$VL_TIMEOUT" $GC_AS "$@"
}

uvt() {
	as_user "$GC_VT" "$@"
}

# usvt [VAR=VALUE...] -- ARGS: vt with the library, as the user (the
# library is preloaded into vt only: env runs as the user already)
usvt() {
	_env=
	while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
		_env="$_env $1"
		shift
	done
	[ "$#" -gt 0 ] && shift
	# shellcheck disable=SC2086
	as_user env $_env LD_PRELOAD="$GC_LIB" "$GC_VT" "$@"
}

uvol() {
	as_user "$GC_VOL" "$@"
}

# Holders still running when the test ends (it failed) are the user's
# processes, that another run of this test would have to look into: they
# are ended, by their pids, at exit.
GC_LIVE=
gc_cleanup() {
	for p in $GC_LIVE; do
		kill -9 "$p" 2>/dev/null
	done
	cleanup
}

# the pid a holder printed first: its own, to be ended at exit
holder_pid() {
	_p=$(sed -n '1s/^pid = //p' "$WORK/$1.out")
	[ -n "$_p" ] || { show "$1"; fail "$1 printed no pid"; }
	GC_LIVE="$GC_LIVE $_p"
}

# ustatus NAME: `volatile status --json`, as the user, into NAME.out
ustatus() {
	ok "$1" uvol status --json
	"$PYTHON" -m json.tool "$WORK/$1.out" >/dev/null 2>"$WORK/$1.jsonerr" || {
		cat "$WORK/$1.out" "$WORK/$1.jsonerr" >&2
		fail "$1: volatile status --json is not valid JSON"
	}
}

# ranges NAME: the ranges of every file in status NAME, [[off, len, purged]...] a file
ranges() {
	jq_py "$1" "[[[r['offset'], r['length'], r['purged']] for r in x['ranges']] for x in d['file_list']]"
}

# upurge NAME: `volatile purge --all` as the user, which must succeed
upurge() {
	ok "$1" uvol purge --all
}

# ---- d. named files, in a private mount namespace --------------------------------
part_d() {
	mnt=$U/mnt
	mkdir -p "$mnt" || fail "mkdir $mnt"
	mount -t tmpfs -o "size=4M,mode=0755,uid=$GC_UID,gid=$GC_UID" vlgc "$mnt" 2>"$WORK/mount.err" ||
		exit 78
	[ "$(fs_type "$mnt")" = tmpfs ] || fail "$mnt is not a tmpfs after mounting one"
	new_region
	f1=$mnt/unlinked
	f2=$mnt/renamed
	f3=$mnt/renamed.new

	# each file: [0,8K) purged, [16K,24K) volatile (the MARKs further apart
	# than the age order's bound, DESIGN 10); the marker exits, then f1 is
	# unlinked and f2 renamed
	ok d-mark usvt -- open "$f1" rwc fill 0 64K A mark 0 8K apart open "$f2" rwc fill 0 64K B \
		mark 0 8K apart fd 3 mark 16K 8K apart fd 4 mark 16K 8K
	expect_out d-mark <<EOF
open $f1 rwc = 3
fill 0 64K A = ok
mark 0 8K = 0
apart
open $f2 rwc = 4
fill 0 64K B = ok
mark 0 8K = 0
apart
fd 3
mark 16K 8K = 0
apart
fd 4
mark 16K 8K = 0
EOF
	ok d-purge0 uvol purge --bytes 16K
	expect_line d-purge0 "purged 2 ranges, 16384 bytes"
	ok d-unlink uvt unlink "$f1"
	mv "$f2" "$f3" || fail "mv $f2 $f3"
	ustatus d-st0
	expect_eq "records before any purge" "$(jq_py d-st0 "sorted([x['path'] for x in d['file_list']])")" \
		"[\"$f2\", \"$f1\"]"
	expect_eq "their ranges before any purge" "$(ranges d-st0)" \
		"[[[0, 8192, true], [16384, 8192, false]], [[0, 8192, true], [16384, 8192, false]]]"

	# the first purge: the unlinked file is found gone (once), the renamed
	# one found again by its new name
	upurge d-purge1
	grep -q 'unreachable' "$WORK/d-purge1.out" || { show d-purge1; fail "the unlinked file was not reported unreachable"; }
	grep -q 'forgotten' "$WORK/d-purge1.out" && { show d-purge1; fail "a first purge forgot a file"; }
	ustatus d-st1
	expect_eq "files after a first purge" "$(jq_py d-st1 'd["files"]')" 2
	expect_eq "the unlinked file's purged range after a first purge" \
		"$(jq_py d-st1 "[[r['offset'], r['length'], r['purged']] for x in d['file_list'] if x['path'] == '$f1' for r in x['ranges'] if r['purged']]")" \
		"[[0, 8192, true]]"
	# (soft: when the search fails, what the renamed file's UNMARK says at
	# the end is worth seeing too)
	soft expect_eq "the renamed file's path after a first purge (found by the search)" \
		"$(jq_py d-st1 "sorted([x['path'] for x in d['file_list'] if x['path'] != '$f1'])")" "[\"$f3\"]"
	# (found by the purge's own search, so purged by it too: --all)
	soft expect_eq "the renamed file's purged ranges after a first purge" \
		"$(jq_py d-st1 "[[r['offset'], r['length'], r['purged']] for x in d['file_list'] if x['path'] != '$f1' for r in x['ranges'] if r['purged']]")" \
		"[[0, 8192, true], [16384, 8192, true]]"

	# the grace later: the unlinked file is forgotten; the renamed one is kept
	ok_until d-purge2 forgotten uvol purge --all
	grep -q 'forgotten' "$WORK/d-purge2.out" || { show d-purge2; fail "the unlinked file was not forgotten the grace later"; }
	grep -q '; 1 file gone, forgotten' "$WORK/d-purge2.out" || {
		show d-purge2
		echo "FAIL: $TEST_NAME: not one file forgotten the grace later" >&2
		FAILED=1
	}
	ustatus d-st2
	expect_eq "the unlinked file's records the grace later" \
		"$(jq_py d-st2 "[x['ranges'] for x in d['file_list'] if x['path'] == '$f1']")" "[]"
	soft expect_eq "the file kept the grace later" "$(jq_py d-st2 "[x['path'] for x in d['file_list']]")" "[\"$f3\"]"
	soft expect_eq "its ranges" "$(ranges d-st2)" "[[[0, 8192, true], [16384, 8192, true]]]"
	soft expect_eq "purged bytes the grace later" "$(jq_py d-st2 'd["purged_bytes"]')" 16384

	ok d-unmark usvt -- open "$f3" rw unmark 0 8K expect 0 8K zero expect 8K 8K B \
		unmark 16K 8K expect 16K 8K zero expect 24K 40K B
	expect_out d-unmark <<EOF
open $f3 rw = 3
unmark 0 8K = 1
expect 0 8K zero ok
expect 8K 8K B ok
unmark 16K 8K = 1
expect 16K 8K zero ok
expect 24K 40K B ok
EOF
	ustatus d-st3
	expect_eq "files at the end" "$(jq_py d-st3 'd["files"]')" 0
	exit "$FAILED"
}

if [ "${1:-}" = --inside ]; then
	part_d
fi

# ---- the user, and binaries it may run -------------------------------------------------
need_cmd
need_python
trap gc_cleanup EXIT
if [ "$(id -u)" -eq 0 ]; then
	command -v setpriv >/dev/null 2>&1 ||
		skip "setpriv (util-linux) is missing: as root these checks need an unprivileged user"
	# a user no process runs as: every process of the user must be ours.
	# Not nobody first: other tests that run beside this one in make -j2
	# check start and end processes of nobody's (evict.sh, mark-bounded.sh),
	# and a process that ends under the scan leaves it incomplete (nothing is
	# then certainly gone); these uids are this test's alone.
	GC_UID=
	for u in 64997 64998 64999 65534; do
		if ! awk -v u="$u" '$1 == "Uid:" && ($2 == u || $3 == u) { found = 1 } END { exit !found }' \
			/proc/[0-9]*/status 2>/dev/null; then
			GC_UID=$u
			break
		fi
	done
	[ -n "$GC_UID" ] || skip "processes run as each of the uids this test would use"
	say "uid $GC_UID is used"
	GC_AS="setpriv --reuid=$GC_UID --regid=$GC_UID --clear-groups --"
	# nobody must be able to reach its directory inside $WORK
	chmod 0711 "$WORK" || fail "chmod $WORK"
	GC_SHARED_UID=
else
	GC_UID=$(id -u)
	GC_AS=
	GC_SHARED_UID=1 # other tests' processes run as this uid too
fi
export GC_UID GC_AS GC_SHARED_UID
U=$WORK/u
mkdir "$U" || fail "mkdir $U"
[ -z "$GC_AS" ] || chown "$GC_UID:$GC_UID" "$U" || fail "chown $U"
chmod 0700 "$U"
# new_region: in the user's directory (the --inside run's too)
REGION_DIR=$U
export U REGION_DIR

# can the user run $GC_VT with $GC_LIB, and $GC_VOL?
runs_as_user() {
	run probe usvt -- echo probe && [ "$rc" -eq 0 ] && [ ! -s "$WORK/probe.err" ] &&
		grep -qx probe "$WORK/probe.out" && run probe2 uvol --help && [ "$rc" -eq 0 ]
}
GC_VT=$VT
GC_VOL=$VOLATILE_FAULT_CMD
GC_LIB=$VOLATILE_LIBRARY
VOLATILE_FAULT_GONE_GRACE=$VL_GRACE
export VOLATILE_FAULT_GONE_GRACE
if ! runs_as_user; then
	# the build tree is out of the user's reach: copies, on a disk (a
	# tmpfs may be mounted noexec), else in $WORK
	say "user $GC_UID cannot run the build tree's programs: copies are used"
	copied=
	for d in ${DISK:+"$DISK"} "$WORK"; do
		if ! { chmod 0711 "$d" && mkdir -p "$d/bin" &&
			cp "$VT" "$VOLATILE_FAULT_CMD" "$VOLATILE_LIBRARY" "$d/bin/" &&
			chmod 0755 "$d/bin" "$d/bin/"*; }; then
			continue
		fi
		GC_VT=$d/bin/vt
		GC_VOL=$d/bin/volatile-fault
		GC_LIB=$d/bin/$(basename "$VOLATILE_LIBRARY")
		if runs_as_user; then
			copied=$d/bin
			break
		fi
	done
	[ -n "$copied" ] || skip "user $GC_UID cannot run the test programs, even copied: $(cat "$WORK/probe.err" 2>/dev/null)"
fi
export GC_VT GC_VOL GC_LIB

# ---- a. a memfd whose holder exited ---------------------------------------------------
new_region
ok a-mark usvt VOLATILE_BUDGET=8K -- memfd a 64K fill 0 64K A mark 0 8K mark 16K 8K \
	expect 0 8K zero expect 8K 56K A
expect_out a-mark <<EOF
memfd a 64K = 3
fill 0 64K A = ok
mark 0 8K = 0
mark 16K 8K = 0
expect 0 8K zero ok
expect 8K 56K A ok
EOF
ustatus a-st0
expect_eq "ranges of the memfd whose holder exited" "$(ranges a-st0)" \
	"[[[0, 8192, true], [16384, 8192, false]]]"

t0=$(date +%s)
upurge a-purge1
grep -q '1 file unreachable' "$WORK/a-purge1.out" || { show a-purge1; fail "a first purge did not report the memfd unreachable"; }
ustatus a-st1
expect_eq "files after a first purge" "$(jq_py a-st1 'd["files"]')" 1
expect_eq "the purged range after a first purge" \
	"$(jq_py a-st1 "[[r['offset'], r['length']] for x in d['file_list'] for r in x['ranges'] if r['purged']]")" \
	"[[0, 8192]]"
expect_eq "purged bytes after a first purge" "$(jq_py a-st1 'd["purged_bytes"]')" 8192
upurge a-purge2
t1=$(date +%s)
ustatus a-st2
if [ "$t1" -eq "$t0" ]; then # less than a second apart: within the grace
	grep -q 'forgotten' "$WORK/a-purge2.out" && { show a-purge2; fail "a second purge within the grace after the first forgot the memfd"; }
	expect_eq "the purged range after a second purge" \
		"$(jq_py a-st2 "[[r['offset'], r['length']] for x in d['file_list'] for r in x['ranges'] if r['purged']]")" \
		"[[0, 8192]]"
else
	say "the two purges were $((t1 - t0)) s apart: 'kept by the second one' not checked"
fi
if ! grep -q 'forgotten' "$WORK/a-purge2.out"; then # (else the slow second purge did it)
	ok_until a-purge3 '1 file gone, forgotten' uvol purge --all
	# Run as the user itself (not root: GC_AS is empty), other tests of
	# the same uid run beside this one under make -j2, and one of their
	# processes that cannot be looked into (a non-dumpable holder) keeps
	# every file of the uid from looking gone (DESIGN 15): the purge is
	# right to keep it then. Purges go on, 60 s at most, until it is gone.
	i=0
	while ! grep -q '1 file gone, forgotten' "$WORK/a-purge3.out" && [ -n "$GC_SHARED_UID" ] &&
		[ "$i" -lt 120 ]; do
		sleep 0.5
		i=$((i + 1))
		upurge a-purge3
	done
	grep -q '1 file gone, forgotten' "$WORK/a-purge3.out" || { show a-purge3; fail "the memfd was not forgotten by a purge the grace after the first"; }
fi
ustatus a-st3
expect_eq "files after the grace period" "$(jq_py a-st3 'd["files"]')" 0
expect_eq "ranges after the grace period" "$(jq_py a-st3 'd["ranges"]')" 0
expect_eq "purged bytes after the grace period" "$(jq_py a-st3 'd["purged_bytes"]')" 0
expect_eq "volatile bytes after the grace period" "$(jq_py a-st3 'd["volatile_bytes"]')" 0

# ---- b. a live holder that cannot be looked into ---------------------------------------
new_region
bg b_hold usvt VOLATILE_BUDGET=8K -- pid memfd b 64K fill 0 64K B mark 0 8K mark 16K 8K nodump \
	touch "$U/b-ready" wait "$U/b-go" \
	unmark 0 8K expect 0 8K zero expect 8K 8K B unmark 16K 8K expect 16K 48K B
wait_file "$U/b-ready"
holder_pid b_hold
ustatus b-st0
expect_eq "ranges of the non-dumpable holder's memfd" "$(ranges b-st0)" \
	"[[[0, 8192, true], [16384, 8192, false]]]"
for i in 1 2; do
	upurge b-purge$i
	grep -q 'forgotten' "$WORK/b-purge$i.out" && { show b-purge$i; fail "purge $i forgot the memfd of a live process"; }
	ustatus b-st$i
	expect_eq "files after purge $i" "$(jq_py b-st$i 'd["files"]')" 1
	expect_eq "the purged range after purge $i" \
		"$(jq_py b-st$i "[[r['offset'], r['length']] for x in d['file_list'] for r in x['ranges'] if r['purged']]")" \
		"[[0, 8192]]"
	[ "$i" -eq 2 ] || past_grace
done
touch "$U/b-go"
wait_bg b_hold
GC_LIVE=
[ "$rc" -eq 0 ] || { show b_hold; fail "the non-dumpable holder: exit status $rc"; }
expect_out b_hold <<EOF
pid = $(sed -n '1s/^pid = //p' "$WORK/b_hold.out")
memfd b 64K = 3
fill 0 64K B = ok
mark 0 8K = 0
mark 16K 8K = 0
nodump = 0
touch $U/b-ready = 0
wait $U/b-go
unmark 0 8K = 1
expect 0 8K zero ok
expect 8K 8K B ok
unmark 16K 8K = 0
expect 16K 48K B ok
EOF

# ---- c. the purging process holds the memfd itself, by another fd number ---------------
# memfd a: [0,8K) purged by the budget, [16K,24K) volatile; moved to fd 50
# (fd 3, the number it was marked with, closed; memfd b takes it). b's MARK
# makes the budget purge a's [16K,24K): the process must find a at fd 50.
new_region
bg c_hold usvt VOLATILE_BUDGET=8K -- pid memfd a 64K fill 0 64K A mark 0 8K mark 16K 8K dup 50 \
	memfd b 64K fill 0 64K B mark 0 8K touch "$U/c-ready" wait "$U/c-go" \
	fd 50 unmark 0 8K expect 0 8K zero unmark 16K 8K expect 16K 8K zero \
	expect 8K 8K A expect 24K 40K A
wait_file "$U/c-ready"
holder_pid c_hold
ustatus c-st
expect_eq "ranges of the two memfds after the budget purge" "$(ranges c-st)" \
	"[[[0, 8192, true], [16384, 8192, true]], [[0, 8192, false]]]"
touch "$U/c-go"
wait_bg c_hold
GC_LIVE=
[ "$rc" -eq 0 ] || { show c_hold; fail "the process holding its memfd at fd 50: exit status $rc"; }
expect_out c_hold <<EOF
pid = $(sed -n '1s/^pid = //p' "$WORK/c_hold.out")
memfd a 64K = 3
fill 0 64K A = ok
mark 0 8K = 0
mark 16K 8K = 0
dup 50 = 50
memfd b 64K = 3
fill 0 64K B = ok
mark 0 8K = 0
touch $U/c-ready = 0
wait $U/c-go
fd 50
unmark 0 8K = 1
expect 0 8K zero ok
unmark 16K 8K = 1
expect 16K 8K zero ok
expect 8K 8K A ok
expect 24K 40K A ok
EOF

# ---- e. the only holder in flight: forgotten, with a tombstone ---------------------------
# /proc sees no process holding the memfd while it is in a socket, so it
# is "gone" twice the grace apart and its record forgotten; what makes the
# UNMARK say 1 after that is the tombstone (DESIGN 15), whatever /proc saw.
new_region
bg e_hold usvt -- pid memfd e 1M fill 0 1M E mark 0 1M touch "$U/e-marked" wait "$U/e-purged" \
	socket sendfd 3 touch "$U/e-flight" wait "$U/e-back" \
	fd 5 recvfd unmark 0 1M expect 0 1M zero
wait_file "$U/e-marked"
holder_pid e_hold
upurge e-purge0
expect_line e-purge0 "purged 1 range, 1048576 bytes"
touch "$U/e-purged"
wait_file "$U/e-flight"
upurge e-purge1
ok_until e-purge2 forgotten uvol purge --all
ustatus e-st
# (the point is the UNMARK below; that the record was forgotten is what
# makes it test the tombstone, so it is said, not required)
if [ "$(jq_py e-st 'd["files"]')" -eq 0 ]; then
	expect_eq "tombstones after the in-flight memfd was forgotten" "$(jq_py e-st 'd["tombstones"]')" 1
	ok e-text uvol status
	expect_line e-text "tombs:    1 file forgotten with purged ranges: their UNMARKs say 1"
else
	say "e: the in-flight memfd's record was not forgotten: the tombstone is not what is tested"
fi
touch "$U/e-back"
wait_bg e_hold
GC_LIVE=
[ "$rc" -eq 0 ] || { show e_hold; fail "the holder of the memfd in flight: exit status $rc"; }
expect_out e_hold <<EOF
pid = $(sed -n '1s/^pid = //p' "$WORK/e_hold.out")
memfd e 1M = 3
fill 0 1M E = ok
mark 0 1M = 0
touch $U/e-marked = 0
wait $U/e-purged
socket = 4 5
sendfd 3 = 0
touch $U/e-flight = 0
wait $U/e-back
fd 5
recvfd = 3
unmark 0 1M = 1
expect 0 1M zero ok
EOF

# ---- f. the only holder an io_uring's fixed-file table ----------------------------------
# The same, the memfd held by a ring alone (IORING_REGISTER_FILES, then
# closed), taken back with IORING_OP_FIXED_FD_INSTALL: /proc lists no fd
# of it. Not run where the kernel or a sandbox refuses io_uring.
run f-probe usvt -- memfd p 4K uring unring
if [ "$rc" -eq 0 ] && grep -qx 'uring = 0' "$WORK/f-probe.out" &&
	grep -q '^unring = [0-9]' "$WORK/f-probe.out"; then
	new_region
	bg f_hold usvt -- pid memfd f 1M fill 0 1M F mark 0 1M touch "$U/f-marked" \
		wait "$U/f-purged" uring touch "$U/f-ring" wait "$U/f-back" \
		unring unmark 0 1M expect 0 1M zero
	wait_file "$U/f-marked"
	holder_pid f_hold
	upurge f-purge0
	expect_line f-purge0 "purged 1 range, 1048576 bytes"
	touch "$U/f-purged"
	wait_file "$U/f-ring"
	upurge f-purge1
	ok_until f-purge2 forgotten uvol purge --all
	ustatus f-st
	[ "$(jq_py f-st 'd["files"]')" -eq 0 ] ||
		say "f: the ring's memfd's record was not forgotten: the tombstone is not what is tested"
	touch "$U/f-back"
	wait_bg f_hold
	GC_LIVE=
	[ "$rc" -eq 0 ] || { show f_hold; fail "the holder of the memfd in a ring: exit status $rc"; }
	expect_out f_hold <<EOF
pid = $(sed -n '1s/^pid = //p' "$WORK/f_hold.out")
memfd f 1M = 3
fill 0 1M F = ok
mark 0 1M = 0
touch $U/f-marked = 0
wait $U/f-purged
uring = 0
touch $U/f-ring = 0
wait $U/f-back
unring = 3
unmark 0 1M = 1
expect 0 1M zero ok
EOF
else
	say "io_uring with IORING_OP_FIXED_FD_INSTALL is not available here: part f not run ($(cat "$WORK/f-probe.out" "$WORK/f-probe.err" 2>/dev/null | tr '\n' ' '))"
fi

# ---- g. the only holder a process of another user ---------------------------------------
# The memfd lent, over a socket, to a process of another user (root: the
# one that made the socket and started the user's process under setpriv),
# whose fds the user's purges cannot look into and do not count. Only as
# root (there is no other user to lend to otherwise).
if [ -n "$GC_AS" ]; then
	new_region
	bg g_lend "$VT" socket spawn exec "$(command -v setpriv)" --reuid="$GC_UID" --regid="$GC_UID" \
		--clear-groups -- "$(command -v env)" LD_PRELOAD="$GC_LIB" VOLATILE_REGION="$VOLATILE_REGION" \
		"$GC_VT" fd 4 memfd g 1M fill 0 1M G mark 0 1M touch "$U/g-marked" wait "$U/g-purged" \
		fd 4 sendfd 5 recvfd unmark 0 1M expect 0 1M zero end \
		fd 3 recvfd touch "$U/g-lent" wait "$U/g-back" fd 3 sendfd 5 reap
	wait_file "$U/g-marked"
	upurge g-purge0
	expect_line g-purge0 "purged 1 range, 1048576 bytes"
	touch "$U/g-purged"
	wait_file "$U/g-lent"
	upurge g-purge1
	ok_until g-purge2 forgotten uvol purge --all
	ustatus g-st
	[ "$(jq_py g-st 'd["files"]')" -eq 0 ] ||
		say "g: the lent memfd's record was not forgotten: the tombstone is not what is tested"
	touch "$U/g-back"
	wait_bg g_lend
	[ "$rc" -eq 0 ] || { show g_lend; fail "the lender and the user's process: exit status $rc"; }
	expect_line g_lend "recvfd = 5"
	expect_line g_lend "sendfd 5 = 0"
	expect_line g_lend "unmark 0 1M = 1"
	expect_line g_lend "expect 0 1M zero ok"
else
	say "not root: no other user to lend a memfd to; part g not run"
fi

# ---- d. named files: on a private tmpfs, in a mount namespace ---------------------------
# (Not as an unprivileged user: its mount namespace would need a user
# namespace, and from inside one its own processes outside it, this test's
# shell among them, cannot be looked into; nothing would ever be gone.)
in_private_tmpfs "a private tmpfs" "; part d (named files) not run; a-c passed"
