#!/bin/sh
# SPDX-License-Identifier: MIT
# A purge reaches files it does not hold without asking any other file
# system for anything and without opening anything it has not checked
# (DESIGN 13):
#
#   1. a lease: the holder of a marked file has a write lease on it; a
#      purge from another process takes the holder's fd (pidfd_getfd)
#      instead of opening the file, so the lease is not broken (no SIGIO,
#      still held). Reopening the file O_RDWR broke it.
#   2. (root) a FUSE file system that never answers (tests/helpers/fusehang)
#      mounted over the directory of a marked file's recorded path: the
#      path is resolved inside the file's own tmpfs only (openat2
#      RESOLVE_NO_XDEV), so `volatile purge` does not hang; a stat of the
#      path went into the FUSE mount and waited for ever.
#   3. (root) the same under a directory that the thorough search of a
#      tmpfs walks (a file with a purged range, its holder gone, its name
#      removed: only the search can prove it gone): the walk does not cross
#      into another file system, and what it could not search keeps the
#      file's records (not proven gone).
. "$(dirname "$0")/lib.sh"
need_cmd

# ---- 2, 3: a FUSE server that never answers (root, private mount namespace) ----------
FUSEHANG=$VL_TOP_BUILDDIR/tests/helpers/fusehang
inside() {
	m=$WORK/m
	mkdir -p "$m" && mount -t tmpfs -o size=8M vlreach "$m" 2>"$WORK/mount.err" || exit 78
	mkdir "$m/d" "$m/sub" || fail "mkdir"

	# 2. the recorded path goes through a FUSE mount now
	mkfile "$m/d/f" 64K P
	ok mark2 svt open "$m/d/f" rw mark 0 16K
	bg fuse2 "$FUSEHANG" "$m/d"
	wait_line fuse2 "mounted"
	run purge2 timeout 10 "$VOLATILE_CMD" purge --all
	[ "$rc" -ne 124 ] || fail "volatile purge hung on a FUSE mount over the recorded path"
	[ "$rc" -eq 0 ] || { show purge2; fail "volatile purge: exit status $rc"; }
	expect_line purge2 "purged 0 ranges, 0 bytes; 1 file gone, forgotten"
	eval "kill \$BG_fuse2"
	wait_bg fuse2

	# 3. a file with a purged range, its holder gone, its name removed: only a
	# search of its whole tmpfs could prove it gone, and one directory of it is
	# a FUSE mount now
	mkfile "$m/f3" 64K W
	bg h3 svt open "$m/f3" rw mark 0 16K touch "$WORK/h3-ready" wait "$WORK/h3-go"
	wait_file "$WORK/h3-ready"
	ok purge3a vol purge --all
	expect_line purge3a "purged 1 range, 16384 bytes"
	touch "$WORK/h3-go"
	wait_bg h3
	rm "$m/f3"
	bg fuse3 "$FUSEHANG" "$m/sub"
	wait_line fuse3 "mounted"
	run purge3 timeout 10 "$VOLATILE_CMD" purge --all
	[ "$rc" -ne 124 ] || fail "volatile purge hung walking into a FUSE mount"
	[ "$rc" -eq 0 ] || { show purge3; fail "volatile purge: exit status $rc"; }
	# what is under the mount could not be searched: the search does not prove
	# the file gone (the kernel may, by its file handle, where root may ask: inode_gone.c)
	grep -qxE 'purged 0 ranges, 0 bytes; 1 file (unreachable|gone, forgotten)' "$WORK/purge3.out" ||
		{ show purge3; fail "volatile purge: want 0 ranges, and the file unreachable or gone"; }
	eval "kill \$BG_fuse3"
	wait_bg fuse3
	exit 0
}
if [ "${1:-}" = --inside ]; then
	inside
fi

# ---- 1. a lease is not broken -----------------------------------------------------------
f=$WORK/leased
mkfile "$f" 64K L
bg h svt open "$f" rw mark 0 16K lease touch "$WORK/h-ready" wait "$WORK/h-go" leased \
	unmark 0 16K expect 16K 48K L
wait_file "$WORK/h-ready"
run purge1 timeout 20 "$VOLATILE_CMD" purge --all
[ "$rc" -eq 0 ] || { show purge1; fail "volatile purge: exit status $rc"; }
expect_line purge1 "purged 1 range, 16384 bytes"
touch "$WORK/h-go"
wait_bg h
[ "$rc" -eq 0 ] || { show h; fail "the lease holder: exit status $rc"; }
expect_line h "lease = 0"
expect_line h "leased = wr sigio = 0"
expect_line h "unmark 0 16K = 1"

[ "$(id -u)" -eq 0 ] || { say "not root: parts 2 and 3 (FUSE) are not run"; exit 0; }
[ -c /dev/fuse ] || { say "no /dev/fuse: parts 2 and 3 are not run"; exit 0; }
[ -x "$FUSEHANG" ] || fail "$FUSEHANG is not built (make check builds it)"
command -v unshare >/dev/null 2>&1 || skip "unshare (util-linux) is not installed"
# a pid namespace of its own too: every process there can be looked into, so
# "not found anywhere" is an answer, and the search of the tmpfs really runs
private_ns -p -f --mount-proc ||
	skip "cannot make a mount namespace ($PRIVATE_NS): $(cat "$WORK/unshare.err")"
rerun_inside "$PRIVATE_NS"
[ "$rc" -eq 78 ] && skip "cannot mount a tmpfs: $(cat "$WORK/mount.err")"
exit "$rc"
