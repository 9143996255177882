#!/bin/sh
# SPDX-License-Identifier: MIT
# The shared region's own errors (DESIGN 5, 9):
# - full (VOLATILE_REGION_RANGES=16 sets the capacity of a new region):
#   the next MARK that needs a range gets ENOMEM and nothing changes;
#   room made by UNMARK is used again;
# - unusable (group/other access, another owner, a symlink, a FIFO, a
#   directory, garbage, another format): MARK and UNMARK fail with the
#   errno documented in volatile.h, the program keeps running, its
#   ordinary fallocate calls still work, nothing is punched, nothing is
#   printed, and the region file is left as it was.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

f=$WORK/file
g=$WORK/other

# ---- full ----------------------------------------------------------------------
new_region
mkfile "$f" 256K A
mkfile "$g" 64K G
set --
for i in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
	set -- "$@" mark $((i * 8))K 4K
done
ok full svte VOLATILE_REGION_RANGES=16 -- open "$f" rw "$@" mark 128K 4K
expect_line full "mark 120K 4K = 0"
expect_line full "mark 128K 4K = -1 ENOMEM"
[ "$(grep -c ' = 0$' "$WORK/full.out")" -eq 16 ] || { show full; fail "16 marks should succeed"; }
status_json st1
expect_eq "capacity_ranges" "$(jq_py st1 'd["capacity_ranges"]')" 16
expect_eq "ranges when full" "$(jq_py st1 'd["ranges"]')" 16
expect_eq "volatile_bytes when full" "$(jq_py st1 'd["volatile_bytes"]')" 65536
expect_eq "files when full" "$(jq_py st1 'd["files"]')" 1
# Full, still: no room in another file either; marking inside a range, or
# next to one (a merge), needs no room; a split by UNMARK does.
ok full2 svt open "$g" rw mark 0 4K open "$f" rw mark 128K 4K unmark 128K 4K mark 1K 1K \
	mark 4K 2K unmark 9K 1K
expect_out full2 <<EOF
open $g rw = 3
mark 0 4K = -1 ENOMEM
open $f rw = 4
mark 128K 4K = -1 ENOMEM
unmark 128K 4K = 0
mark 1K 1K = 0
mark 4K 2K = 0
unmark 9K 1K = -1 ENOMEM
EOF
status_json st2
expect_eq "ranges after the failures" "$(jq_py st2 'd["ranges"]')" 16
expect_eq "volatile_bytes after the failures" "$(jq_py st2 'd["volatile_bytes"]')" $((65536 + 2048))
expect_eq "files after the failures" "$(jq_py st2 'd["files"]')" 1
expect_eq "the ranges of $f" "$(jq_py st2 '[[r["offset"], r["length"]] for x in d["file_list"] for r in x["ranges"]][:3]')" \
	"[[0, 6144], [8192, 4096], [16384, 4096]]"
# UNMARK makes room, and it is used
ok full3 svt open "$f" rw unmark 16K 4K mark 128K 4K open "$g" rw mark 0 4K
expect_out full3 <<EOF
open $f rw = 3
unmark 16K 4K = 0
mark 128K 4K = 0
open $g rw = 4
mark 0 4K = -1 ENOMEM
EOF
ok full4 svt open "$f" rw unmark 24K 4K open "$g" rw mark 0 4K
expect_line full4 "mark 0 4K = 0"
ok full5 vol purge --all
ok full6 vt open "$f" r expect 0 6K zero expect 6K 2K A expect 8K 4K zero expect 12K 12K A \
	expect 24K 8K A expect 32K 4K zero
ok full7 vt open "$f" r expect 128K 4K zero expect 132K 124K A

# ---- unusable regions ---------------------------------------------------------------
# What every process does with an unusable region: MARK/UNMARK fail with
# ERRNO; the rest works; nothing is punched.
unusable() {
	_case=$1
	_errno=$2
	mkfile "$f" 64K A
	_before=
	_sum=
	if [ -e "$VOLATILE_REGION" ] || [ -L "$VOLATILE_REGION" ]; then
		_before=$(stat -c '%A %U %s' "$VOLATILE_REGION")
	fi
	# (never read a FIFO: that would block)
	[ -f "$VOLATILE_REGION" ] && _sum=$(cksum <"$VOLATILE_REGION")
	ok "$_case" svt open "$f" rw fill 0 64K A mark 0 8K unmark 0 8K mark 16K 4K \
		fa 0 0 64K fa KEEP_SIZE 64K 4K fa 'PUNCH_HOLE|KEEP_SIZE' 60K 4K \
		memfd m 64K fill 0 64K M mark 0 4K unmark 0 4K expect 0 64K M \
		open "$f" rw expect 0 60K A expect 60K 4K zero size
	expect_out "$_case" <<EOF
open $f rw = 3
fill 0 64K A = ok
mark 0 8K = -1 $_errno
unmark 0 8K = -1 $_errno
mark 16K 4K = -1 $_errno
fa 0 0 64K = 0
fa KEEP_SIZE 64K 4K = 0
fa PUNCH_HOLE|KEEP_SIZE 60K 4K = 0
memfd m 64K = 4
fill 0 64K M = ok
mark 0 4K = -1 $_errno
unmark 0 4K = -1 $_errno
expect 0 64K M ok
open $f rw = 5
expect 0 60K A ok
expect 60K 4K zero ok
size = 65536
EOF
	# the command refuses it too: exit 2, one line
	run "$_case-purge" vol purge --all
	[ "$rc" -eq 2 ] || { show "$_case-purge"; fail "$_case: volatile purge exit status $rc, want 2"; }
	[ "$(wc -l <"$WORK/$_case-purge.err")" -eq 1 ] && grep -q '^volatile: ' "$WORK/$_case-purge.err" ||
		{ show "$_case-purge"; fail "$_case: volatile purge: want one line 'volatile: ...' on stderr"; }
	run "$_case-status" vol status
	[ "$rc" -eq 2 ] || { show "$_case-status"; fail "$_case: volatile status exit status $rc, want 2"; }
	ok "$_case-after" vt open "$f" r expect 0 60K A
	# and the region was left alone
	if [ -n "$_before" ]; then
		expect_eq "$_case: the region's mode, owner, size" \
			"$(stat -c '%A %U %s' "$VOLATILE_REGION")" "$_before"
	fi
	if [ -n "$_sum" ]; then
		expect_eq "$_case: the region's content" "$(cksum <"$VOLATILE_REGION")" "$_sum"
	fi
}

# a good region, with a range in it, to spoil
good_region() {
	new_region
	ok "good$REGION_N" svt memfd x 4K mark 0 4K
	[ -f "$VOLATILE_REGION" ] || fail "no region file was made at $VOLATILE_REGION"
	expect_eq "a new region's mode" "$(stat -c %a "$VOLATILE_REGION")" 600
}

good_region
chmod 0644 "$VOLATILE_REGION"
unusable mode0644 EACCES

good_region
chmod 0660 "$VOLATILE_REGION"
unusable mode0660 EACCES

good_region
chmod 0604 "$VOLATILE_REGION"
unusable mode0604 EACCES

if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
	good_region
	chown nobody "$VOLATILE_REGION" || fail "chown nobody"
	unusable owner EACCES
else
	say "not root: the 'owned by another user' row is not run"
fi

# a symlink to a good region, and a dangling one (not followed, not created)
good_region
real=$VOLATILE_REGION
VOLATILE_REGION=$WORK/link.$REGION_N
ln -s "$real" "$VOLATILE_REGION"
unusable symlink EACCES
VOLATILE_REGION=$WORK/dangling
ln -s "$WORK/nowhere" "$VOLATILE_REGION"
unusable dangling EACCES
[ ! -e "$WORK/nowhere" ] || fail "a dangling symlink region was followed: $WORK/nowhere was made"
# a symlink on the way, to the directory of a good region, and to one where
# it would be made (openat2 RESOLVE_NO_SYMLINKS: Linux 5.6 and later)
good_region
mkdir "$WORK/realdir"
mv "$VOLATILE_REGION" "$WORK/realdir/region"
ln -s "$WORK/realdir" "$WORK/dirlink"
VOLATILE_REGION=$WORK/dirlink/region
unusable dirlink EACCES
VOLATILE_REGION=$WORK/dirlink/new
unusable dirlink-new EACCES
[ ! -e "$WORK/realdir/new" ] || fail "a region was made through a symlinked directory"

# not a regular file
new_region
mkfifo -m 0600 "$VOLATILE_REGION"
unusable fifo EACCES

# garbage: a page of 'x', and a file too short for a header
new_region
vt open "$VOLATILE_REGION" rwc fill 0 64K x >/dev/null
chmod 0600 "$VOLATILE_REGION"
unusable garbage EUCLEAN
new_region
printf 'hello' >"$VOLATILE_REGION"
chmod 0600 "$VOLATILE_REGION"
unusable short EUCLEAN

# a good region whose format word (bytes 8-11 of it, after the magic) is not ours
good_region
printf '\377\377\377\177' | dd of="$VOLATILE_REGION" bs=1 seek=$((VL_REGION_OFFSET + 8)) \
	conv=notrunc 2>/dev/null
unusable format EPROTO
# the command says what to do about it: the upgrade's case (README)
run st_format "$VOLATILE_CMD" status
[ "$rc" -eq 2 ] || { show st_format; fail "status of a region of another format: exit $rc, want 2"; }
grep -q "^volatile: region $VOLATILE_REGION was made by an incompatible version (Protocol error): remove it once no program of that version uses it, or reboot$" \
	"$WORK/st_format.err" || { show st_format; fail "status of a region of another format: not the one line that says what to do"; }

# a directory in its place: refused, with EACCES or open(2)'s EISDIR
new_region
mkdir -m 0700 "$VOLATILE_REGION"
ok dir svt memfd m 4K mark 0 4K unmark 0 4K fa 0 0 4K
case $(sed -n 2p "$WORK/dir.out") in
"mark 0 4K = -1 EACCES" | "mark 0 4K = -1 EISDIR") ;;
*) show dir; fail "a directory as the region: want EACCES or EISDIR" ;;
esac
expect_line dir "fa 0 0 4K = 0"

# A file whose region header is all zeros, or no file content at all, is
# not a region the library made: it is refused (EUCLEAN), never laid out
# (DESIGN 9: "zeros at the start" must not mean "mine to overwrite"). The
# library makes a region complete before it gives it its name, so no
# region of its own ever looks like this.
new_region
vt open "$VOLATILE_REGION" rwc truncate $((VL_REGION_OFFSET + 1048576)) >/dev/null
chmod 0600 "$VOLATILE_REGION"
unusable zeros EUCLEAN
new_region
: >"$VOLATILE_REGION"
chmod 0600 "$VOLATILE_REGION"
unusable empty EUCLEAN

# A region that loses its magic while in use was scribbled on: refused
# (EUCLEAN) to new users, the file left as it is, its user goes on
# unharmed; and still refused once that user is gone.
new_region
mkfile "$WORK/zu" 64K U
bg zuser svt open "$WORK/zu" rw mark 0 64K touch "$WORK/zu-ready" wait "$WORK/zu-go" \
	unmark 0 32K expect 0 64K U
wait_file "$WORK/zu-ready"
zsize=$(stat -c %s "$VOLATILE_REGION")
dd if=/dev/zero of="$VOLATILE_REGION" bs=8 count=1 seek=$((VL_REGION_OFFSET / 8)) conv=notrunc \
	2>/dev/null
VOLATILE_REGION_RANGES=8
VOLATILE_REGION_FILES=4
export VOLATILE_REGION_RANGES VOLATILE_REGION_FILES
ok zscribbled svt memfd m 4K mark 0 4K fa 0 0 4K
unset VOLATILE_REGION_RANGES VOLATILE_REGION_FILES
expect_line zscribbled "mark 0 4K = -1 EUCLEAN"
expect_line zscribbled "fa 0 0 4K = 0"
expect_eq "the scribbled region's size" "$(stat -c %s "$VOLATILE_REGION")" "$zsize"
touch "$WORK/zu-go"
wait_bg zuser
[ "$rc" -eq 0 ] || { show zuser; fail "the region's user failed ($rc) after another process opened it"; }
expect_line zuser "expect 0 64K U ok"
zsum=$(cksum <"$VOLATILE_REGION")
ok zafter svt memfd m 4K mark 0 4K
expect_line zafter "mark 0 4K = -1 EUCLEAN"
expect_eq "the scribbled region, once its user is gone" "$(cksum <"$VOLATILE_REGION")" "$zsum"
exit 0
