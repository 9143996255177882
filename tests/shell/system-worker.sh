#!/bin/sh
# SPDX-License-Identifier: MIT
# The worker of the machine's daemon (DESIGN 22), `volatile system-worker`,
# as the test's own user, in a private region (VOLATILE_REGION: the worker
# is a library user like any other), driven by tests/helpers/sysask
# playing root's side of the protocol (core/sysorder.h):
#   1. Not started by root's way (fd 3 not a SOCK_SEQPACKET socket): exit
#      2; not in `volatile --help`, its own --help as every command's.
#   2. The age limit: files a and b, a's two ranges marked before b's two,
#      a clock tick apart each (vt apart). A REPORT gives a's oldest and
#      the unpurged bytes; a PURGE with that age as its limit purges that
#      range only (the next, a tick younger, is left), again for a's second;
#      a PURGE of 4K with no limit takes the oldest left (b's first); b's
#      second stays intact (UNMARK says 0, its bytes are there); the
#      region's log names the purges "system".
#   3. No region: ENOENT, and no region made; one made while the worker
#      waits is opened at the next ask.
#   4. A wrong ask (a datagram of another size, an empty one too, a wrong
#      magic, an unknown op): the worker exits 2 at once, the helper sees
#      the socket closed.
#   5. A scribbled region (its magic zeroed): EUCLEAN, nothing punched.
#   6. The refusals of DESIGN 9 answered with their errno, never a crash:
#      mode 0644 (EACCES), a symlink (EACCES), a FIFO (EACCES), a directory
#      (EACCES or EISDIR), another format (EPROTO); as root, a region of
#      another uid (EACCES).
#   7. The region's name moved while the worker has it open: the worker
#      follows it to the region new processes find, its records moved there.
#   8. Ages older than root's window (2^31 ms, 24.8 days: vl_sys_answer_ok):
#      told as a little younger than that (its answers pass root's check),
#      and a PURGE limited to that age takes every range older than it.
#      Ranges of d, e and f marked at days 0, 4 and 29 of the test build's
#      age clock (VOLATILE_FAULT_AGE_SHIFT), the worker's at day 30: d's
#      and e's purged, f's (a day old) left.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python
need_fault_lib
[ -x "$VOLATILE_FAULT_CMD" ] || fail "$VOLATILE_FAULT_CMD is not built (make check builds it)"

SYSASK=$VL_TOP_BUILDDIR/tests/helpers/sysask
[ -x "$SYSASK" ] || fail "$SYSASK is not built (make check builds it)"

# ask NAME ASK...: sysask with the asks, ok NAME (exit 0, nothing on stderr)
ask() {
	_an=$1
	shift
	ok "$_an" env VOLATILE_CMD="$VOLATILE_CMD" timeout "$VL_TIMEOUT" "$SYSASK" "$@"
}

# the n-th answer line's oldest age
oldest_of() {
	sed -n "$2s/^err=0 oldest=\\([0-9]*\\) .*/\\1/p" "$WORK/$1.out"
}

# younger WHAT A B: age B is younger than age A (after it, mod 2^32, less than 2^31 on)
younger() {
	_d=$((($3 - $2) & 0xffffffff))
	[ "$_d" -gt 0 ] && [ "$_d" -lt 2147483648 ] || fail "$1: age $3 is not younger than $2"
}

# ---- 1. started only root's way ---------------------------------------------------
run nofd "$VOLATILE_CMD" system-worker 3<&-
[ "$rc" -eq 2 ] || { show nofd; fail "system-worker without fd 3: exit $rc, want 2"; }
run notsock "$VOLATILE_CMD" system-worker 3</dev/null
[ "$rc" -eq 2 ] || { show notsock; fail "system-worker with a file as fd 3: exit $rc, want 2"; }
run self-help vol system-worker --help
[ "$rc" -eq 0 ] && [ ! -s "$WORK/self-help.err" ] &&
	head -n 1 "$WORK/self-help.out" | grep -q '^Usage: volatile system-worker$' ||
	{ show self-help; fail "'volatile system-worker --help': want exit 0 and its usage"; }
run args vol system-worker x 3<&-
[ "$rc" -eq 2 ] || { show args; fail "system-worker with an argument: exit $rc, want 2"; }
ok help vol --help
expect_no_line help "  system-worker"
grep -q system-worker "$WORK/help.out" && fail "volatile --help names system-worker"

# ---- 2. the age limit ----------------------------------------------------------------
a=$WORK/a
b=$WORK/b
mkfile "$a" 64K A
mkfile "$b" 64K B
ok marks svt open "$a" rw mark 0 4K apart mark 8K 4K apart open "$b" rw mark 0 4K apart \
	mark 8K 4K
ask ages report purge oldest all report purge oldest all purge 0 4K report
sed 's/oldest=[0-9]*/oldest=N/' "$WORK/ages.out" >"$WORK/ages-n.out"
expect_out ages-n <<EOF
err=0 oldest=N unpurged=16384 purged=0 ranges=0
err=0 oldest=N unpurged=12288 purged=4096 ranges=1
err=0 oldest=N unpurged=12288 purged=0 ranges=0
err=0 oldest=N unpurged=8192 purged=4096 ranges=1
err=0 oldest=N unpurged=4096 purged=4096 ranges=1
err=0 oldest=N unpurged=4096 purged=0 ranges=0
worker exit 0
EOF
o1=$(oldest_of ages 1)
o2=$(oldest_of ages 2)
o4=$(oldest_of ages 4)
o5=$(oldest_of ages 5)
[ "$o1" -ne 0 ] || fail "the REPORT of a region with ranges says oldest 0"
expect_eq "the second REPORT's oldest, after the first PURGE's answer" "$(oldest_of ages 3)" "$o2"
younger "a's second range after its first" "$o1" "$o2"
younger "b's first range after a's second" "$o2" "$o4"
younger "b's second range after its first" "$o4" "$o5"
expect_eq "the last REPORT's oldest" "$(oldest_of ages 6)" "$o5"
ok ua1 svt open "$a" rw unmark 0 4K expect 4K 4K A
expect_line ua1 "unmark 0 4K = 1"
ok ua2 svt open "$a" rw unmark 8K 4K
expect_line ua2 "unmark 8K 4K = 1"
ok ub1 svt open "$b" rw unmark 0 4K
expect_line ub1 "unmark 0 4K = 1"
ok ub2 svt open "$b" rw unmark 8K 4K expect 4K 60K B
expect_line ub2 "unmark 8K 4K = 0"
expect_line ub2 "expect 4K 60K B ok"
status_json log
expect_eq "the region's log of the worker's purges" \
	"$(jq_py log '[e["reason"] + " " + str(e["ranges"]) for e in d["last_purges"]]')" \
	'["system 1", "system 1", "system 1"]'
say "a's two ranges purged each by its own age limit, then b's first by 4K: b's second intact"

# ---- 3. no region: ENOENT, none made; one made meanwhile is opened ---------------------
new_region
ask none report purge 0 all
expect_out none <<EOF
err=ENOENT oldest=0 unpurged=0 purged=0 ranges=0
err=ENOENT oldest=0 unpurged=0 purged=0 ranges=0
worker exit 0
EOF
[ ! -e "$VOLATILE_REGION" ] || fail "the worker made a region: $VOLATILE_REGION"
bg later env VOLATILE_CMD="$VOLATILE_CMD" timeout "$VL_TIMEOUT" "$SYSASK" report \
	touch "$WORK/later.asked" wait "$WORK/later.made" report purge 0 all
wait_file "$WORK/later.asked"
ok lmark svt open "$a" rw mark 16K 4K
touch "$WORK/later.made"
wait_bg later
[ "$rc" -eq 0 ] && [ ! -s "$WORK/later.err" ] || { show later; fail "sysask: exit $rc"; }
sed 's/oldest=[1-9][0-9]*/oldest=N/' "$WORK/later.out" >"$WORK/later-n.out"
expect_out later-n <<EOF
err=ENOENT oldest=0 unpurged=0 purged=0 ranges=0
err=0 oldest=N unpurged=4096 purged=0 ranges=0
err=0 oldest=0 unpurged=0 purged=4096 ranges=1
worker exit 0
EOF

# ---- 4. a wrong ask: the worker exits 2 at once -----------------------------------------
for wrong in "raw 0" "raw 7" "raw 25" "raw 24" "op 0" "op 3"; do
	# shellcheck disable=SC2086 # $wrong: words
	ask wrong report $wrong report
	sed 's/oldest=[0-9]*/oldest=N/' "$WORK/wrong.out" >"$WORK/wrong-n.out"
	expect_out wrong-n <<EOF
err=0 oldest=N unpurged=0 purged=0 ranges=0
closed
closed
worker exit 2
EOF
done
say "a datagram of 0, 7, 25 or 24 garbage bytes, an op 0 or 3: the worker exited 2"

# ---- 5. a scribbled region: EUCLEAN, nothing punched ------------------------------------
new_region
c=$WORK/c
mkfile "$c" 64K C
ok cmark svt open "$c" rw mark 0 16K
dd if=/dev/zero of="$VOLATILE_REGION" bs=8 count=1 seek=$((VL_REGION_OFFSET / 8)) conv=notrunc \
	2>/dev/null || fail "cannot scribble on the region"
ask scribbled report purge 0 all
expect_out scribbled <<EOF
err=EUCLEAN oldest=0 unpurged=0 purged=0 ranges=0
err=EUCLEAN oldest=0 unpurged=0 purged=0 ranges=0
worker exit 0
EOF
ok cafter vt open "$c" r expect 0 64K C

# ---- 6. the refusals of DESIGN 9 ----------------------------------------------------------
# refused NAME ERRNO...: a REPORT and a PURGE of all answer one of ERRNO, the worker exits 0
refused() {
	_rn=$1
	shift
	ask "$_rn" report purge 0 all
	for _e in "$@"; do
		_line="err=$_e oldest=0 unpurged=0 purged=0 ranges=0"
		if grep -qxF "$_line" "$WORK/$_rn.out"; then
			expect_out "$_rn" <<EOF
$_line
$_line
worker exit 0
EOF
			return
		fi
	done
	show "$_rn"
	fail "$_rn: want err=$*"
}
new_region
ok dmark svt open "$c" rw mark 0 16K
chmod 0644 "$VOLATILE_REGION"
refused mode0644 EACCES
chmod 0600 "$VOLATILE_REGION"
good=$VOLATILE_REGION
VOLATILE_REGION=$WORK/link
ln -s "$good" "$VOLATILE_REGION"
refused symlink EACCES
VOLATILE_REGION=$WORK/fifo
mkfifo -m 0600 "$VOLATILE_REGION"
refused fifo EACCES
VOLATILE_REGION=$WORK/dir
mkdir -m 0700 "$VOLATILE_REGION"
refused dir EACCES EISDIR
VOLATILE_REGION=$good
if [ "$(id -u)" -eq 0 ]; then
	chown 61000 "$VOLATILE_REGION"
	refused owner EACCES
	chown 0 "$VOLATILE_REGION"
else
	say "a region of another uid: not tried (not root: cannot chown)"
fi
cp "$good" "$WORK/format"
VOLATILE_REGION=$WORK/format
printf '\377\377\377\177' | dd of="$VOLATILE_REGION" bs=1 seek=$((VL_REGION_OFFSET + 8)) \
	conv=notrunc 2>/dev/null
refused format EPROTO
VOLATILE_REGION=$good
ok dafter vt open "$c" r expect 0 64K C

# ---- 7. the region's name moved: the worker follows it ------------------------------------
new_region
ok fmark svt open "$c" rw mark 0 4K apart mark 8K 4K
bg follow env VOLATILE_CMD="$VOLATILE_CMD" timeout "$VL_TIMEOUT" "$SYSASK" report \
	touch "$WORK/follow.asked" wait "$WORK/follow.moved" report purge 0 4K
wait_file "$WORK/follow.asked"
mv "$VOLATILE_REGION" "$WORK/moved-away"
touch "$WORK/follow.moved"
wait_bg follow
[ "$rc" -eq 0 ] && [ ! -s "$WORK/follow.err" ] || { show follow; fail "sysask: exit $rc"; }
sed 's/oldest=[1-9][0-9]*/oldest=N/' "$WORK/follow.out" >"$WORK/follow-n.out"
expect_out follow-n <<EOF
err=0 oldest=N unpurged=8192 purged=0 ranges=0
err=0 oldest=N unpurged=8192 purged=0 ranges=0
err=0 oldest=N unpurged=4096 purged=4096 ranges=1
worker exit 0
EOF
[ -e "$VOLATILE_REGION" ] || fail "the worker did not follow its region to $VOLATILE_REGION"
ok fu svt open "$c" rw unmark 0 4K unmark 8K 4K
expect_line fu "unmark 0 4K = 1"
expect_line fu "unmark 8K 4K = 0"
say "the region's name moved: the worker followed it, the records with it"

# ---- 8. ages older than root's window ------------------------------------------------------
new_region
DAY=86400
for x in d e f; do
	mkfile "$WORK/$x" 64K "$(echo "$x" | tr a-z A-Z)"
done
shifted day0 0 open "$WORK/d" rw mark 0 4K
shifted day4 $((4 * DAY)) open "$WORK/e" rw mark 0 4K
shifted day29 $((29 * DAY)) open "$WORK/f" rw mark 0 4K
ok day30 env VOLATILE_FAULT_AGE_SHIFT=$((30 * DAY)) VOLATILE_CMD="$VOLATILE_FAULT_CMD" \
	timeout "$VL_TIMEOUT" "$SYSASK" report purge oldest all
sed 's/oldest=[1-9][0-9]*/oldest=N/' "$WORK/day30.out" >"$WORK/day30-n.out"
expect_out day30-n <<EOF
err=0 oldest=N unpurged=12288 purged=0 ranges=0
err=0 oldest=N unpurged=4096 purged=8192 ranges=2
worker exit 0
EOF
shifted day30u $((30 * DAY)) open "$WORK/d" rw unmark 0 4K open "$WORK/e" rw unmark 0 4K \
	open "$WORK/f" rw unmark 0 4K expect 4K 60K F
expect_eq "UNMARK of d, e and f after the PURGE" \
	"$(sed -n 's/^unmark 0 4K = //p' "$WORK/day30u.out" | tr '\n' ' ')" "1 1 0 "
say "ranges 30 and 26 days old told as 24.6 days old, and purged by that limit; one a day old left"
exit 0
