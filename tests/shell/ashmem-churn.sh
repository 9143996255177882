#!/bin/sh
# SPDX-License-Identifier: MIT
# ashmem (DESIGN 7): regions made and closed, one after the other, do not fill
# the region's file table, and open("/dev/ashmem") never stalls: a region
# made here, never forked nor sent, is forgotten at its last close when
# nothing maps it, or else at its last munmap after that. open() runs no
# collection of its own. Regions that may live on elsewhere (forked,
# spawned, sent) keep their records, for `volatile purge` to decide.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ashmem-lib.sh"
need_python

# ---- a table of 200 files, 1000 regions made and closed ------------------------
new_region
VOLATILE_REGION_FILES=200
export VOLATILE_REGION_FILES
ok c1 leg churn 1000
expect_out c1 <<OUT
churn 1000 = ok
OUT
status_json st1
expect_eq "records left after 1000 regions made, mapped, unmapped and closed" \
	"$(jq_py st1 'd["records"]')" 0

ok c2 leg churn 300 nomap churn 10 map
expect_out c2 <<OUT
churn 300 nomap = ok
churn 10 map = ok
OUT
status_json st2
expect_eq "records left after regions closed unmapped" "$(jq_py st2 'd["records"]')" 0

# mapped, closed, then unmapped: forgotten at the munmap
ok c3 leg churn 1000 late
expect_out c3 <<OUT
churn 1000 late = ok
OUT
status_json st3
expect_eq "records left after 1000 regions closed while mapped, then unmapped" \
	"$(jq_py st3 'd["records"]')" 0

# ---- not dropped while something still holds the memfd ---------------------------
# a duplicate fd; a mapping; a forked child
new_region
ok k1 leg open setsize 8K map 8K rw fill 0 8K K close expect 0 8K K unmap
status_json sk1
expect_eq "records after a region closed, then unmapped" "$(jq_py sk1 'd["records"]')" 0
# two mappings, one unmapped after the close: the other holds the region (and
# the process exits without munmap: the record waits for a purge)
ok k1b leg open setsize 8K map 8K rw fill 0 8K K map 8K r close unmap
status_json sk1b
expect_eq "records after a region closed, one of two mappings unmapped" \
	"$(jq_py sk1b 'd["records"]')" 1
# a record, but no file with volatile ranges (nothing was unpinned)
expect_eq "files with volatile ranges, one ashmem region pinned" "$(jq_py sk1b 'd["files"]')" 0
new_region
ok k2 leg open setsize 8K map 8K rw fill 0 8K F spawn close expect 0 8K F end reap \
	expect 0 8K F pinstatus 0 0 unpin 0 4K pinstatus 0 0
expect_line k2 "reap = 0"
expect_line k2 "pinstatus 0 0 = 0"
# a child made by posix_spawn (no fork(), no pthread_atfork handler) that
# inherited the fd still holds the region when the parent closes its own
new_region
ok k3 leg openx setsize 8K setname kept map 8K rw unpin 0 4K unmap pspawn wait "$WORK/k3" \
	getname pinstatus 0 4K pinstatus 4K 4K end close touch "$WORK/k3" reap
expect_line k3 "pspawn = ok"
expect_line k3 "getname = kept (4)"
expect_line k3 "pinstatus 0 4K = 0"
expect_line k3 "pinstatus 4K 4K = 1"
expect_line k3 "reap = 0"
# the same with a child made by _Fork (fork without its atfork handlers)
new_region
ok k3f leg open setsize 8K setname kf map 8K rw unpin 0 4K unmap spawnf wait "$WORK/k3f" \
	getname pinstatus 0 4K end close touch "$WORK/k3f" reap
expect_line k3f "getname = kf (2)"
expect_line k3f "pinstatus 0 4K = 0"
expect_line k3f "reap = 0"
# sent by sendmmsg, then closed here: the receiver holds the region
new_region
bg a4 leg open setsize 8K setname viamm map 8K rw unpin 0 4K unmap servem "$WORK/sock4" close \
	touch "$WORK/a4"
ok b4 leg recv "$WORK/sock4" wait "$WORK/a4" getname pinstatus 0 4K
wait_bg a4
[ "$rc" -eq 0 ] || { show a4; fail "a4: exit status $rc"; }
expect_line a4 "servem $WORK/sock4 = 1"
expect_line b4 "getname = viamm (5)"
expect_line b4 "pinstatus 0 4K = 0"
# a holder no call of ours sees (an fd opened through /proc/PID/fd): the
# region's last close here forgets it, but not while a range of it was
# purged, so the holder still hears so from PIN
new_region
bg a5 leg open setsize 8K map 8K rw fill 0 8K P unpin 0 4K purgeall unmap pid \
	wait "$WORK/b5" close touch "$WORK/a5"
for _ in $(seq 600); do
	grep -q "^pid = " "$WORK/a5.out" 2>/dev/null && break
	sleep 0.1
done
a5=$(sed -n 's/^pid = //p' "$WORK/a5.out")
[ -n "$a5" ] || { show a5; fail "a5 never said its pid"; }
ok b5 leg open "/proc/$a5/fd/3" touch "$WORK/b5" wait "$WORK/a5" pin 0 4K pin 4K 4K
wait_bg a5
[ "$rc" -eq 0 ] || { show a5; fail "a5: exit status $rc"; }
expect_line b5 "pin 0 4K = 1"
expect_line b5 "pin 4K 4K = 0"
exit 0
