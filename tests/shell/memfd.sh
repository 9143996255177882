#!/bin/sh
# SPDX-License-Identifier: MIT
# memfds (DESIGN 13, 15): a memfd marked by a process that then exits, held
# only by its child, is purged from a third process, and the child's
# UNMARK says so. A purge never punches the wrong file, even when the
# fd number the marker used now names another memfd. The records of a
# memfd disappear once no process holds it.
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

# ---- 1. the marker exits; its child holds the memfd; a third process purges ------
bg p1 svt memfd cache 64K fill 0 64K A mark 4096 8192 pid detach pid \
	touch "$WORK/ready" wait "$WORK/purged" unmark 4096 8192 \
	expect 0 4096 A expect 4096 8192 zero expect 12288 53248 A unmark 4096 8192 \
	touch "$WORK/done"
wait_bg p1 # the parent, that marked, is gone now
[ "$rc" -eq 0 ] || { show p1; fail "the marking process failed ($rc)"; }
wait_file "$WORK/ready"
marker=$(sed -n 's/^pid = //p' "$WORK/p1.out" | head -n 1)
[ -n "$marker" ] && ! kill -0 "$marker" 2>/dev/null || fail "the marker ($marker) is still alive"
ok purge1 vol purge
grep -q '^purged 1 range, 8192 bytes' "$WORK/purge1.out" || {
	show purge1
	show p1
	fail "volatile purge did not purge the memfd held by the child"
}
touch "$WORK/purged"
wait_line p1 "touch $WORK/done = 0"
child=$(sed -n 's/^pid = //p' "$WORK/p1.out" | sed -n 2p)
[ -n "$child" ] && [ "$child" != "$marker" ] || { show p1; fail "no child after detach"; }
expect_out p1 <<EOF
memfd cache 64K = 3
fill 0 64K A = ok
mark 4096 8192 = 0
pid = $marker
detach
pid = $child
touch $WORK/ready = 0
wait $WORK/purged
unmark 4096 8192 = 1
expect 0 4096 A ok
expect 4096 8192 zero ok
expect 12288 53248 A ok
unmark 4096 8192 = 0
touch $WORK/done = 0
EOF
[ ! -s "$WORK/p1.err" ] || { show p1; fail "something was printed on stderr"; }

# ---- 2. the marker's fd number now names another memfd --------------------------
# The parent marks memfd X (fd 3), forks a child that keeps X, closes X and
# makes memfd Y, which gets fd 3. A purge that trusted "pid, fd 3" would
# punch Y; it must reach X through the child, and leave Y alone.
new_region
run p2 svt memfd X 64K fill 0 64K X mark 0 16K \
	spawn touch "$WORK/c-ready" wait "$WORK/go" unmark 0 16K \
	expect 0 16K zero expect 16K 48K X end \
	close memfd Y 64K fill 0 64K Y touch "$WORK/p-ready" wait "$WORK/go" \
	expect 0 64K Y reap &
BG_PIDS="$BG_PIDS $!"
p2=$!
wait_file "$WORK/c-ready"
wait_file "$WORK/p-ready"
ok purge2 vol purge --all
grep -q '^purged 1 range, 16384 bytes' "$WORK/purge2.out" || { show purge2; fail "memfd X was not purged"; }
touch "$WORK/go"
wait "$p2"
rc=$?
[ "$rc" -eq 0 ] || { show p2; fail "spawned processes failed ($rc)"; }
expect_line p2 "memfd Y 64K = 3"
expect_line p2 "unmark 0 16K = 1"
expect_line p2 "expect 0 16K zero ok"
expect_line p2 "expect 16K 48K X ok"
expect_line p2 "expect 0 64K Y ok"
expect_line p2 "reap = 0"

# ---- 3. a memfd nobody holds any more: its records go -----------------------------
new_region
ok p3 svt memfd gone 64K mark 0 8K mark 16K 8K
status_json st3a
expect_eq "files while the memfd's records are still there" "$(jq_py st3a 'd["files"]')" 1
expect_eq "ranges" "$(jq_py st3a 'd["ranges"]')" 2
ok purge3 vol purge --all
status_json st3b
expect_eq "files after a purge found the memfd gone" "$(jq_py st3b 'd["files"]')" 0
expect_eq "ranges after a purge found the memfd gone" "$(jq_py st3b 'd["ranges"]')" 0
expect_eq "volatile bytes after" "$(jq_py st3b 'd["volatile_bytes"]')" 0
expect_eq "purged bytes after" "$(jq_py st3b 'd["purged_bytes"]')" 0

# ---- 4. an unlinked tmpfs file nobody holds: its unpurged records go ---------------
new_region
g=$WORK/unlinked
mkfile "$g" 64K A
ok p4 svt open "$g" rw mark 0 8K
rm -f "$g"
ok purge4 vol purge --all
status_json st4
expect_eq "files after a purge found the unlinked file gone" "$(jq_py st4 'd["files"]')" 0
exit 0
