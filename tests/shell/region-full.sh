#!/bin/sh
# SPDX-License-Identifier: MIT
# A full file system under the region (DESIGN 5, 10; doc/limits.md): the
# region is a sparse file that gets its pages as it grows. A page of a
# tmpfs file that cannot be had raises SIGBUS when it is first written, so
# the library asks for them first: a MARK that needs room the file system
# has not got fails with ENOMEM, and the program goes on (no SIGBUS);
# ordinary fallocate, and UNMARK of what is already there, still work.
# A region that cannot even be laid out: MARK fails, the program goes on.
#
# The region is put on a small private tmpfs, in a private mount namespace.
. "$(dirname "$0")/lib.sh"

inside() {
	need_cmd
	need_python
	mnt=$WORK/mnt
	mkdir -p "$mnt" || fail "mkdir $mnt"
	mount -t tmpfs -o size=2M,mode=0700 vlfull "$mnt" 2>"$WORK/mount.err" || exit 78
	[ "$(fs_type "$mnt")" = tmpfs ] || fail "$mnt is not a tmpfs after mounting one"
	VOLATILE_REGION=$mnt/region
	VOLATILE_REGION_FILES=16
	VOLATILE_REGION_RANGES=200000
	export VOLATILE_REGION VOLATILE_REGION_FILES VOLATILE_REGION_RANGES
	fill=$mnt/fill

	# ---- 1. the region, then a file that takes all but 96K of the tmpfs -----------
	ok make svt memfd first 4K mark 0 1
	[ -s "$VOLATILE_REGION" ] || fail "no region at $VOLATILE_REGION after a MARK"
	run fill vt open "$fill" rwc fill 0 4M x
	expect_line fill "fill 0 4M x = -1 ENOSPC"
	size=$(vt open "$fill" r size | sed -n 's/^size = //p')
	case $size in
	'' | *[!0-9]*) fail "the filler file's size: '$size'" ;;
	esac
	[ "$size" -gt 98304 ] || fail "the filler file has only $size bytes"
	ok shrink vt open "$fill" rw truncate $((size - 98304))
	df -k "$mnt" >"$WORK/df1.out" 2>&1

	# ---- 2. disjoint 1-byte ranges until the region cannot grow --------------------
	# one process: [500000,500100), then 1-byte ranges at 0, 2, 4... (the region
	# has room for a few thousand); then, whatever failed, it goes on
	n=30000
	marks=$(seq 0 2 $((2 * n - 2)) | sed 's/.*/mark & 1/')
	# word splitting of $marks is intended: "mark OFF 1" three words at a time
	# shellcheck disable=SC2086
	run many svt memfd m 1M fill 0 1M M mark 500000 100 $marks \
		echo marked unmark 500010 10 unmark 0 1 unmark 2 1 unmark 500010 10 \
		fa 0 0 2M fa PUNCH_HOLE+KEEP_SIZE 1M 4K size expect 0 1M M echo alive
	if [ "$rc" -ne 0 ]; then
		tail -n 5 "$WORK/many.out" >&2
		cat "$WORK/many.err" >&2
		case $rc in
		135 | 138) fail "the marking process died of SIGBUS (exit status $rc) when the region could not grow" ;;
		*) fail "the marking process: exit status $rc" ;;
		esac
	fi
	[ ! -s "$WORK/many.err" ] || { cat "$WORK/many.err" >&2; fail "the marking process wrote on stderr"; }
	grep '^mark [0-9]* 1 = ' "$WORK/many.out" >"$WORK/marks.out"
	[ "$(wc -l <"$WORK/marks.out")" -eq "$n" ] || { tail -n 5 "$WORK/many.out" >&2; fail "not every MARK printed a line"; }
	good=$(grep -c ' = 0$' "$WORK/marks.out")
	bad=$(grep -c ' = -1 ENOMEM$' "$WORK/marks.out")
	say "$good MARKs succeeded, then $bad failed with ENOMEM"
	[ $((good + bad)) -eq "$n" ] || {
		grep -v ' = 0$' "$WORK/marks.out" | grep -v ' = -1 ENOMEM$' | head -n 5 >&2
		fail "a MARK gave neither 0 nor -1 ENOMEM"
	}
	[ "$good" -ge 1000 ] || { cat "$WORK/df1.out" >&2; fail "only $good MARKs succeeded before the region was full"; }
	[ "$bad" -ge 1 ] || { cat "$WORK/df1.out" >&2; fail "no MARK failed: the region never ran out of room (is the tmpfs full?)"; }
	# nothing is freed between them: once one fails, the rest fail too
	first_bad=$(grep -n -m 1 ' = -1 ENOMEM$' "$WORK/marks.out" | cut -d: -f1)
	[ "$first_bad" -eq $((good + 1)) ] || fail "a MARK succeeded after one failed with ENOMEM"
	# what followed ran, and gave what it gives with room to spare: the split
	# UNMARK needs a node and has none (ENOMEM, nothing changed); removing
	# whole ranges needs none, and frees one for the split
	sed -n '/^marked$/,$p' "$WORK/many.out" >"$WORK/after.out"
	expect_out after <<EOF
marked
unmark 500010 10 = -1 ENOMEM
unmark 0 1 = 0
unmark 2 1 = 0
unmark 500010 10 = 0
fa 0 0 2M = 0
fa PUNCH_HOLE+KEEP_SIZE 1M 4K = 0
size = 2097152
expect 0 1M M ok
alive
EOF
	# the region is still sound, and what it holds is what the MARKs said
	ok st vol status --json
	"$PYTHON" - "$WORK/st.out" "$good" <<'EOF' || fail "volatile status after the region filled up: see above"
import json, sys
d = json.load(open(sys.argv[1]))
good = int(sys.argv[2])
# the first memfd's range, [500000,500100) split in two, and the good
# 1-byte ranges but the two unmarked
want = 1 + 2 + good - 2
if d["ranges"] != want:
    print("ranges: %d, want %d" % (d["ranges"], want))
    sys.exit(1)
EOF

	# ---- 3. a region that cannot even be laid out ------------------------------------
	run refill vt open "$fill" rw fill 0 4M x
	expect_line refill "fill 0 4M x = -1 ENOSPC"
	VOLATILE_REGION=$mnt/region2
	run nolayout svt memfd n 64K fill 0 64K N mark 0 4K unmark 0 4K mark 8K 4K \
		fa 0 0 128K expect 0 64K N echo alive
	[ "$rc" -eq 0 ] || { show nolayout; fail "the process whose region could not be laid out: exit status $rc"; }
	[ ! -s "$WORK/nolayout.err" ] || { show nolayout; fail "something was printed on stderr"; }
	err=$(sed -n 's/^mark 0 4K = -1 //p' "$WORK/nolayout.out")
	case $err in
	ENOSPC | ENOMEM) ;;
	*) show nolayout; fail "MARK with no room for the region: want -1 ENOSPC or ENOMEM" ;;
	esac
	expect_out nolayout <<EOF
memfd n 64K = 3
fill 0 64K N = ok
mark 0 4K = -1 $err
unmark 0 4K = -1 $err
mark 8K 4K = -1 $err
fa 0 0 128K = 0
expect 0 64K N ok
alive
EOF
	# with room again, a new process lays the region out and uses it
	rm -f "$fill"
	ok laidout svt memfd n 64K mark 0 4K unmark 0 4K
	expect_out laidout <<EOF
memfd n 64K = 3
mark 0 4K = 0
unmark 0 4K = 0
EOF
	exit 0
}

if [ "${1:-}" = --inside ]; then
	inside
fi

in_private_tmpfs "a small private tmpfs for the region"
