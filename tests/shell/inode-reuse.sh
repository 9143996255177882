#!/bin/sh
# SPDX-License-Identifier: MIT
# A new file that reuses an inode number inherits nothing (DESIGN 14):
# identity is (device, inode, birth time, inode generation).
#
# tmpfs hands out inode numbers from a per-mount counter, so the same
# (device, inode number) pair really comes back: unmount a private tmpfs
# and mount a new one (the anonymous device number is reused: the lowest
# free one is taken), and create the same files in the same order. In a
# private mount namespace (unshare -m as root, unshare -Urm otherwise).
#
# The old file had a purged range and an unpurged one. The new file, same
# device and inode number, must not see them: a purge does not punch it
# (THE INVARIANT: every byte is checked), its UNMARKs return 0, its own
# MARKs and purges work as for any file, and status shows it once.
. "$(dirname "$0")/lib.sh"

# check_new_file FILE INO: FILE (its content all 'B') has the inode
# number of an older file whose records (a purged range [0,16K), an
# unpurged one [32K,48K)) are still in the region.
check_new_file() {
	f=$1
	ino1=$2
	# the stale records are still there: nothing has looked at them yet
	status_json st2
	expect_eq "records with that inode number before the new file is used" \
		"$(jq_py st2 "len([x for x in d['file_list'] if x['ino'] == $ino1])")" 1

	# a purge now must not punch the new file, whose name and numbers match
	run purge2 vol purge --all
	[ "$rc" -eq 0 ] || { show purge2; fail "volatile purge --all: exit status $rc"; }
	grep -q '^purged 0 ranges, 0 bytes' "$WORK/purge2.out" || { show purge2; fail "a purge punched the new file"; }
	ok check2 vt open "$f" r expect 0 64K B

	# the new file's UNMARKs: nothing of the old ranges is inherited
	ok new svt open "$f" rw unmark 0 16K unmark 32K 16K unmark 0 64K mark 8K 8K
	expect_out new <<EOF
open $f rw = 3
unmark 0 16K = 0
unmark 32K 16K = 0
unmark 0 64K = 0
mark 8K 8K = 0
EOF
	# two files share the inode number now: the old one's records are not
	# the new one's, and the new one's MARK did not touch them either. (The
	# purge above, finding the old file unreachable, forgot its unpurged
	# range: its bytes were intact; the purged one stays until it is
	# certainly gone. As root the kernel says so at once: the old tmpfs is
	# unmounted, no inode of it is left (src/inode_gone.c).)
	old='[[0, 16384, true]], '
	grep -q '1 file gone, forgotten' "$WORK/purge2.out" && old=
	status_json st3
	expect_eq "the ranges of each file with that inode number now" \
		"$(jq_py st3 "[[[r['offset'], r['length'], r['purged']] for r in x['ranges']] for x in d['file_list'] if x['ino'] == $ino1]")" \
		"[${old}[[8192, 8192, false]]]"
	ok purge3 vol purge --all
	grep -q '^purged 1 range, 8192 bytes' "$WORK/purge3.out" || { show purge3; fail "the new file's own range was not purged"; }
	ok check3 svt open "$f" rw expect 0 8K B expect 8K 8K zero expect 16K 48K B unmark 8K 8K unmark 0 8K
	expect_out check3 <<EOF
open $f rw = 3
expect 0 8K B ok
expect 8K 8K zero ok
expect 16K 48K B ok
unmark 8K 8K = 1
unmark 0 8K = 0
EOF
	# (when the old file's records are forgotten is gc.sh's business)
}

inside() {
	need_cmd
	need_python
	mnt=$WORK/mnt
	mkdir -p "$mnt"
	trap 'umount "$mnt" 2>/dev/null' EXIT

	# ---- the first file, on the first tmpfs --------------------------------------
	mount -t tmpfs -o size=4M,mode=0700 vltest "$mnt" 2>"$WORK/why" || exit 78
	f=$mnt/f
	mkfile "$f" 64K A
	dev1=$(stat -c %d "$f")
	ino1=$(stat -c %i "$f")
	ok mark1 svt open "$f" rw mark 0 16K mark 32K 16K
	ok purge1 vol purge --bytes 1
	grep -q '^purged 1 range, 16384 bytes' "$WORK/purge1.out" || { show purge1; fail "first purge"; }
	status_json st1
	expect_eq "records of the first file" \
		"$(jq_py st1 "[[r['offset'], r['length'], r['purged']] for x in d['file_list'] if x['ino'] == $ino1 for r in x['ranges']]")" \
		"[[0, 16384, true], [32768, 16384, false]]"
	umount "$mnt" || fail "umount"

	# ---- the second file: same device, same inode number, later birth ---------------
	sleep 0.05 # more than the birth time's granularity (a few ms)
	mount -t tmpfs -o size=4M,mode=0700 vltest "$mnt" || fail "second mount"
	mkfile "$f" 64K B
	dev2=$(stat -c %d "$f")
	ino2=$(stat -c %i "$f")
	if [ "$dev2" != "$dev1" ] || [ "$ino2" != "$ino1" ]; then
		echo "the kernel did not hand out the same device and inode number again" \
			"($dev1:$ino1, then $dev2:$ino2)" >"$WORK/why"
		exit 78
	fi
	check_new_file "$f" "$ino1"

	# ---- again, the new file's first call a MARK over the old purged range -----------
	ok mark4 svt open "$f" rw mark 0 16K mark 32K 16K
	ok purge4 vol purge --bytes 1
	umount "$mnt" || fail "umount"
	sleep 0.05
	mount -t tmpfs -o size=4M,mode=0700 vltest "$mnt" || fail "third mount"
	mkfile "$f" 64K C
	# anonymous device numbers are the machine's: a test mounting meanwhile takes it
	if [ "$(stat -c %d:%i "$f")" != "$dev1:$ino1" ]; then
		echo "the kernel handed out the same device and inode number once, not a second" \
			"time ($dev1:$ino1, then $(stat -c %d:%i "$f"))" >"$WORK/why"
		exit 78
	fi
	ok new4 svt open "$f" rw mark 0 16K expect 0 64K C unmark 0 16K unmark 32K 16K expect 0 64K C
	expect_out new4 <<EOF
open $f rw = 3
mark 0 16K = 0
expect 0 64K C ok
unmark 0 16K = 0
unmark 32K 16K = 0
expect 0 64K C ok
EOF
	exit 0
}

# Where no mount namespace can be had, the old file's records are written
# into the region by tests/helpers/plant instead (same device and inode
# number, birth time an hour earlier, same name): the same checks.
planted() {
	need_cmd
	need_python
	PLANT=$VL_TOP_BUILDDIR/tests/helpers/plant
	[ -x "$PLANT" ] || skip "$1; and tests/helpers/plant is not built"
	say "$1: the old file's records are planted instead"
	f=$WORK/f
	mkfile "$f" 64K B
	ok plant "$PLANT" "$f" 0 16384 32768 16384
	check_new_file "$f" "$(stat -c %i "$f")"
	exit 0
}

if [ "${1:-}" = --inside ]; then
	inside
fi

[ -z "${VL_FORCE_PLANT:-}" ] || planted "VL_FORCE_PLANT is set"
command -v unshare >/dev/null 2>&1 || planted "unshare (util-linux) is not installed"
mount_ns || planted "cannot make a mount namespace ($MOUNT_NS): $(cat "$WORK/unshare.err")"
ns=$MOUNT_NS
rerun_inside "$ns"
[ "$rc" -eq 78 ] && planted "no inode number reuse on a private tmpfs: $(cat "$WORK/why")"
exit "$rc"
