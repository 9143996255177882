#!/bin/sh
# SPDX-License-Identifier: MIT
# Full tmpfs (DESIGN 6): when a tmpfs that holds volatile ranges has less
# free space than VOLATILE_TMPFS_MIN_FREE (a SIZE, or a percentage of that
# file system, default 10%), its own ranges are purged, oldest first: on
# MARK, and by the daemon when someone else fills it (it finds the tmpfs
# by a file's name, or through the process holding a file with none).
# Other file systems' ranges and memfds (no size limit) are left alone.
#
# An 8 MiB tmpfs mounted in a private mount namespace (root only).
. "$(dirname "$0")/lib.sh"
need_cmd

inside() {
	small=$WORK/small
	mkdir "$small" || fail "mkdir $small"
	mount -t tmpfs -o size=8M vltest "$small" 2>"$WORK/mount.err" || exit 78
	f=$small/cache
	g=$WORK/other # on /dev/shm, another tmpfs
	unset VOLATILE_TMPFS_MIN_FREE # the default, 10%: 819.2 KiB here

	# ---- 1. MARK: 7.5M of 8M used, 512K free < 10%: the oldest range of this tmpfs goes
	new_region
	mkfile "$g" 64K G
	mkfile "$f" 7680K A
	ok t1a svte VOLATILE_TMPFS_MIN_FREE=0 -- open "$g" rw mark 0 4K open "$f" rw mark 0 1M mark 2M 1M
	ok t1b svt open "$f" rw mark 4M 1M
	ok t1c svt open "$g" rw unmark 0 4K open "$f" rw unmark 0 1M unmark 2M 1M unmark 4M 1M \
		expect 0 1M zero expect 1M 6656K A
	expect_out t1c <<EOF
open $g rw = 3
unmark 0 4K = 0
open $f rw = 4
unmark 0 1M = 1
unmark 2M 1M = 0
unmark 4M 1M = 0
expect 0 1M zero ok
expect 1M 6656K A ok
EOF
	ok t1d vt open "$g" r expect 0 64K G

	# ---- 2. a SIZE: 2M; oldest first, as many as it takes ------------------------------
	new_region
	mkfile "$f" 7680K A
	ok t2a svte VOLATILE_TMPFS_MIN_FREE=0 -- open "$f" rw mark 0 1M mark 2M 1M mark 4M 1M
	ok t2b svte VOLATILE_TMPFS_MIN_FREE=2M -- open "$f" rw mark 6M 1M
	ok t2c svt open "$f" rw unmark 0 1M unmark 2M 1M unmark 4M 1M unmark 6M 1M \
		expect 1M 1M A expect 3M 4608K A
	expect_out t2c <<EOF
open $f rw = 3
unmark 0 1M = 1
unmark 2M 1M = 1
unmark 4M 1M = 0
unmark 6M 1M = 0
expect 1M 1M A ok
expect 3M 4608K A ok
EOF

	# ---- 3. a memfd is on no size-limited tmpfs: never purged for space -----------------
	new_region
	ok t3 svte VOLATILE_TMPFS_MIN_FREE=100% -- memfd m 64K fill 0 64K M mark 0 64K unmark 0 64K
	expect_line t3 "unmark 0 64K = 0"

	# ---- 4. the daemon: another program fills the tmpfs; the cache gives way ---------------
	new_region
	rm -f "$f"
	mkfile "$f" 6M A
	ok t4a svt open "$f" rw mark 0 1M mark 2M 1M
	bg d4 env VOLATILE_MIN_AVAILABLE=0 "$VOLATILE_CMD" daemon --foreground
	wait_match d4 err '^volatile daemon: watching region'
	# 2M free, more than 819.2K: nothing to do yet
	sleep 0.3
	grep -q '^volatile daemon: purged' "$WORK/d4.err" && { show d4; fail "the daemon purged a tmpfs with room"; }
	# a writer that knows nothing of volatile ranges takes 1.5M: 512K free
	ok t4b vt open "$small/writer" rwc fill 0 1536K W
	wait_match d4 err '^volatile daemon: purged'
	grep -qxE "volatile daemon: purged 1 range, 1048576 bytes: tmpfs of $f: [0-9]+ bytes free < 838860" \
		"$WORK/d4.err" || { show d4; fail "not the expected purge line"; }
	# the writer's next 512K fit with 1M to spare; before the purge they would
	# have taken the last byte
	ok t4c vt open "$small/writer" rw fill 1536K 512K W expect 0 2M W
	ok t4d svt open "$f" rw unmark 0 1M unmark 2M 1M expect 1M 1M A expect 3M 3M A
	expect_line t4d "unmark 0 1M = 1"
	expect_line t4d "unmark 2M 1M = 0"
	eval "kill -TERM \$BG_d4"
	wait_bg d4
	[ "$rc" -eq 0 ] || { show d4; fail "daemon on SIGTERM: exit status $rc"; }

	# ---- 5. the same for a file with no name any more (unlinked after its MARK): ----------
	# the daemon finds its tmpfs through the process that holds it
	new_region
	rm -f "$f" "$small/writer"
	mkfile "$f" 6M A
	bg h5 svt open "$f" rw mark 0 1M mark 2M 1M unlink "$f" touch "$WORK/h5-ready" \
		wait "$WORK/h5-go" unmark 0 1M unmark 2M 1M expect 1M 1M A expect 3M 3M A
	wait_file "$WORK/h5-ready"
	bg d5 env VOLATILE_MIN_AVAILABLE=0 "$VOLATILE_CMD" daemon --foreground
	wait_match d5 err '^volatile daemon: watching region'
	ok t5b vt open "$small/writer" rwc fill 0 1536K W
	wait_match d5 err '^volatile daemon: purged'
	grep -qxE "volatile daemon: purged 1 range, 1048576 bytes: tmpfs of /proc/[0-9]+/fd/3: [0-9]+ bytes free < 838860" \
		"$WORK/d5.err" || { show d5; fail "not the expected purge line (an unlinked file)"; }
	touch "$WORK/h5-go"
	wait_bg h5
	[ "$rc" -eq 0 ] || { show h5; fail "the holder of the unlinked file failed ($rc)"; }
	expect_line h5 "unmark 0 1M = 1"
	expect_line h5 "unmark 2M 1M = 0"
	eval "kill -TERM \$BG_d5"
	wait_bg d5
	umount "$small"
	exit 0
}

if [ "${1:-}" = --inside ]; then
	inside
fi

in_private_tmpfs "a small tmpfs to fill"
