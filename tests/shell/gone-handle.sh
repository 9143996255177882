#!/bin/sh
# SPDX-License-Identifier: MIT
# The kernel's word that a file is gone (src/inode_gone.c; doc/limits.md; DESIGN 15).
#
# A purge that cannot reach a file asks the kernel, where it may (root, or
# CAP_DAC_READ_SEARCH): it opens the inode's file handle, which fails with
# ESTALE once the inode no longer exists. That is proof by itself, so the
# file's records, purged ranges included, are forgotten by that one purge,
# with no second sighting 3 s later, and even where /proc cannot prove
# anything (a process of the user that cannot be looked into: the init of
# some sandboxes, for root).
#
#   a. a memfd with a purged range, its holder exited: forgotten by the
#      first purge;
#   b. a named tmpfs file with a purged range, unlinked, its holder exited:
#      forgotten by the first purge;
#   c. an ashmem region only mapped (its fd closed), with a purged unpinned
#      range: no route reaches it, but its inode exists: its record and
#      purged range are kept, by purges the grace apart (the test build of
#      the command purges, told a grace of VL_GRACE s rather than 3).
. "$(dirname "$0")/lib.sh"
VOLATILE_FAULT_GONE_GRACE=$VL_GRACE
export VOLATILE_FAULT_GONE_GRACE
need_cmd
need_python
LEGACY=$VL_TOP_BUILDDIR/tests/helpers/ashmem-legacy
[ -x "$LEGACY" ] || fail "$LEGACY is not built (make check builds it)"

kernel_word || skip "$KERNEL_WORD_WHY"

# ---- an incomplete view of /proc, where it can be had -----------------------------------
# A process of root that the purges cannot look into: one there is already
# (the init of a sandbox), or a non-dumpable one, looked at by purges without
# CAP_SYS_PTRACE. Where neither works the test goes on: a first purge that
# forgets a file can only have had the kernel's word (/proc needs two).
AS=
blind=
for p in /proc/[0-9]*; do
	[ "$(awk '/^Uid:/ { print $2; exit }' "$p/status" 2>/dev/null)" = 0 ] || continue
	cat "$p/maps" >/dev/null 2>&1 || [ ! -d "$p" ] || blind="$blind ${p#/proc/}"
done
if [ -z "$blind" ] && command -v setpriv >/dev/null 2>&1; then
	bg nodump "$VT" pid nodump touch "$WORK/nodump-ready" sleep 120000
	wait_file "$WORK/nodump-ready"
	p=$(sed -n '1s/^pid = //p' "$WORK/nodump.out")
	AS="setpriv --bounding-set=-sys_ptrace --"
	# shellcheck disable=SC2086
	if $AS cat "/proc/$p/maps" >/dev/null 2>&1; then
		AS=
	else
		blind=" $p"
	fi
fi
if [ -n "$blind" ]; then
	say "processes$blind cannot be looked into by the purges: /proc proves nothing gone"
else
	say "every process can be looked into here: only a first purge's forgetting shows the kernel's word"
fi

# purge NAME: `volatile purge --all`, as the purges of this test run
purge() {
	# word splitting of $AS is intended: setpriv and its options, or nothing
	# shellcheck disable=SC2086
	ok "$1" timeout "$VL_TIMEOUT" $AS "$VOLATILE_FAULT_CMD" purge --all
}

# ---- a. a memfd, its holder exited --------------------------------------------------------
new_region
ok a-mark svte VOLATILE_BUDGET=4K -- memfd a 64K fill 0 64K A mark 0 8K expect 0 8K zero
expect_line a-mark "mark 0 8K = 0"
status_json a-st0
expect_eq "purged ranges of the memfd" "$(jq_py a-st0 'd["ranges_purged"]')" 1
purge a-purge
expect_line a-purge "purged 0 ranges, 0 bytes; 1 file gone, forgotten"
status_json a-st1
expect_eq "records after one purge" "$(jq_py a-st1 'd["records"]')" 0
expect_eq "purged bytes after one purge" "$(jq_py a-st1 'd["purged_bytes"]')" 0

# ---- b. a named tmpfs file, unlinked, its holder exited ---------------------------------------
new_region
f=$WORK/named
ok b-mark svte VOLATILE_BUDGET=4K -- open "$f" rwc fill 0 64K B mark 0 8K expect 0 8K zero \
	unlink "$f"
expect_line b-mark "mark 0 8K = 0"
expect_line b-mark "unlink $f = 0"
status_json b-st0
expect_eq "purged ranges of the named file" "$(jq_py b-st0 'd["ranges_purged"]')" 1
purge b-purge
expect_line b-purge "purged 0 ranges, 0 bytes; 1 file gone, forgotten"
status_json b-st1
expect_eq "records after one purge" "$(jq_py b-st1 'd["records"]')" 0

# ---- c. alive, but reached by no route: kept ------------------------------------------------------
if [ -e /dev/ashmem ]; then
	say "a real /dev/ashmem: part c (an ashmem region only mapped) not run"
	exit 0
fi
new_region
bg c_leg env LD_PRELOAD="$VOLATILE_LIBRARY" "$LEGACY" open setname mapped setsize 16K \
	map 16K rw fill 0 16K M unpin 0 8K purgeall close touch "$WORK/c-ready" \
	wait "$WORK/c-go" expect 0 8K zero expect 8K 8K M
wait_file "$WORK/c-ready"
purge c-purge1
past_grace
purge c-purge2
grep -q forgotten "$WORK/c-purge1.out" "$WORK/c-purge2.out" && {
	show c-purge1
	show c-purge2
	fail "a purge forgot a region that is still mapped"
}
status_json c-st
expect_eq "records of the region only mapped" "$(jq_py c-st 'd["records"]')" 1
expect_eq "its purged range" \
	"$(jq_py c-st "[[r['offset'], r['length']] for x in d['file_list'] for r in x['ranges'] if r['purged']]")" \
	"[[0, 8192]]"
touch "$WORK/c-go"
wait_bg c_leg
[ "$rc" -eq 0 ] || { show c_leg; fail "the ashmem program: exit status $rc"; }
expect_line c_leg "expect 0 8K zero ok"
expect_line c_leg "expect 8K 8K M ok"
exit 0
