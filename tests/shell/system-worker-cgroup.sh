#!/bin/sh
# SPDX-License-Identifier: MIT
# An ask naming a memory cgroup (DESIGN 22): the worker of the machine's
# daemon looks only at the files a recorded holder of which is in that
# cgroup or below it (its /proc/PID/cgroup), so that a cgroup at its limit
# is relieved by its own processes' ranges. Driven by tests/helpers/sysask
# as root's side, in a private region (VOLATILE_REGION), as the test's user:
#   1. A holder H marks three ranges of file h. Restricted to a cgroup no
#      process is in ("/no/such"): a REPORT sees nothing, a PURGE of all
#      purges nothing, and H's youngest range is intact (UNMARK says 0, its
#      bytes there). Restricted to H's own memory cgroup (read from
#      /proc/H/cgroup) and to "/": the REPORT sees H's two ranges left, a
#      PURGE of 4K takes the oldest, one of all the other.
#   2. As root on cgroup v1: two holders of the one region, H1 moved into a
#      new memory cgroup, H2 not, H2's range the older. A PURGE of all
#      restricted to H1's cgroup purges H1's file only: H2's stays intact
#      (UNMARK says 0), though it is the region's oldest. On v2, or not as
#      root, that part is skipped, the reason said.
. "$(dirname "$0")/lib.sh"
need_cmd

SYSASK=$VL_TOP_BUILDDIR/tests/helpers/sysask
[ -x "$SYSASK" ] || fail "$SYSASK is not built (make check builds it)"

# ask NAME ASK...: sysask with the asks, ok NAME (exit 0, nothing on stderr)
ask() {
	_an=$1
	shift
	ok "$_an" env VOLATILE_CMD="$VOLATILE_CMD" timeout "$VL_TIMEOUT" "$SYSASK" "$@"
}

# ask_n NAME ASK...: ask, then its output with every nonzero oldest age as N, in NAME-n
ask_n() {
	ask "$@"
	sed 's/oldest=[1-9][0-9]*/oldest=N/' "$WORK/$1.out" >"$WORK/$1-n.out"
}

# memory_cgroup PID: "V PATH", the version and path of PID's memory cgroup
# (v1: the line naming the memory controller; else v2's "0::" line)
memory_cgroup() {
	awk -F: '
		{ n = split($2, c, ","); for (i = 1; i <= n; i++) if (c[i] == "memory") v1 = $3 }
		$1 == "0" && $2 == "" { v2 = $3 }
		END { if (v1 != "") print 1, v1; else if (v2 != "") print 2, v2 }' "/proc/$1/cgroup"
}

# the pid a backgrounded vt NAME printed ("pid = N": vt runs under timeout)
pid_of() {
	wait_match "$1" out '^pid = '
	sed -n 's/^pid = //p' "$WORK/$1.out"
}

# ---- 1. H's own cgroup, and one with no process -------------------------------------
h=$WORK/h
mkfile "$h" 64K H
bg hold svt pid open "$h" rw mark 0 4K apart mark 8K 4K apart mark 16K 4K \
	touch "$WORK/h.marked" wait "$WORK/h.end"
wait_file "$WORK/h.marked"
hpid=$(pid_of hold)
cg=$(memory_cgroup "$hpid")
[ -n "$cg" ] || fail "no memory cgroup line in /proc/$hpid/cgroup: $(cat "/proc/$hpid/cgroup")"
cgv=${cg%% *}
cgp=${cg#* }
say "H (pid $hpid) is in memory cgroup v$cgv $cgp"

ask_n none cgroup 1 /no/such report purge 0 all cgroup 2 /no/such report purge 0 all
expect_out none-n <<EOF
err=0 oldest=0 unpurged=0 purged=0 ranges=0
err=0 oldest=0 unpurged=0 purged=0 ranges=0
err=0 oldest=0 unpurged=0 purged=0 ranges=0
err=0 oldest=0 unpurged=0 purged=0 ranges=0
worker exit 0
EOF
ok none-u svt open "$h" rw unmark 16K 4K expect 16K 4K H
expect_line none-u "unmark 16K 4K = 0"
expect_line none-u "expect 16K 4K H ok"
say "restricted to /no/such: nothing seen, nothing purged, H's range intact"

ask_n own cgroup "$cgv" "$cgp" report purge 0 4K report cgroup 0 - report \
	cgroup "$cgv" / purge 0 all
expect_out own-n <<EOF
err=0 oldest=N unpurged=8192 purged=0 ranges=0
err=0 oldest=N unpurged=4096 purged=4096 ranges=1
err=0 oldest=N unpurged=4096 purged=0 ranges=0
err=0 oldest=N unpurged=4096 purged=0 ranges=0
err=0 oldest=0 unpurged=0 purged=4096 ranges=1
worker exit 0
EOF
ok own-u svt open "$h" rw unmark 0 4K unmark 8K 4K
expect_line own-u "unmark 0 4K = 1"
expect_line own-u "unmark 8K 4K = 1"
touch "$WORK/h.end"
wait_bg hold
[ "$rc" -eq 0 ] || { show hold; fail "H: exit status $rc"; }
say "restricted to H's own cgroup, then to /: H's ranges seen and purged, oldest first"

# ---- 2. two holders, one moved into a new cgroup ------------------------------------------
if [ "$(id -u)" -ne 0 ]; then
	say "two holders in two cgroups: not tried (not root: cannot make a cgroup)"
	exit 0
fi
if [ ! -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
	say "two holders in two cgroups: not tried (no cgroup v1 memory hierarchy; the v2 case is not written)"
	exit 0
fi
. "$(dirname "$0")/cgroup-lib.sh"
if ! cg_mkdir_v1 cgw; then
	say "two holders in two cgroups: not tried (cannot make a memory cgroup: $(cat "$WORK/mkdir.err"))"
	exit 0
fi
trap 'cg_remove; cleanup' EXIT

new_region
f1=$WORK/f1
f2=$WORK/f2
mkfile "$f1" 64K A
mkfile "$f2" 64K B
# H2 first (its range the older), in the test's cgroup; then H1, moved into CG before it runs
bg h2 svt pid open "$f2" rw mark 0 4K apart touch "$WORK/h2.marked" wait "$WORK/hs.end"
wait_file "$WORK/h2.marked"
# shellcheck disable=SC2016 # $$: the inner shell's, which exec makes vt's parent (timeout)
bg h1 sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" env LD_PRELOAD="$VOLATILE_LIBRARY" \
	timeout "$VL_TIMEOUT" "$VT" pid open "$f1" rw mark 0 4K touch "$WORK/h1.marked" \
	wait "$WORK/hs.end"
wait_file "$WORK/h1.marked"
h1cg=$(memory_cgroup "$(pid_of h1)")
h2cg=$(memory_cgroup "$(pid_of h2)")
[ "${h1cg%% *}" = 1 ] && [ "$h1cg" != "$h2cg" ] ||
	fail "H1 in '$h1cg', H2 in '$h2cg': want two v1 memory cgroups"
say "H1 in v1 ${h1cg#* }, H2 in v1 ${h2cg#* }"

ask_n two report cgroup 1 "${h1cg#* }" report purge 0 all
expect_out two-n <<EOF
err=0 oldest=N unpurged=8192 purged=0 ranges=0
err=0 oldest=N unpurged=4096 purged=0 ranges=0
err=0 oldest=0 unpurged=0 purged=4096 ranges=1
worker exit 0
EOF
o_all=$(sed -n '1s/^err=0 oldest=\([0-9]*\) .*/\1/p' "$WORK/two.out")
o_h1=$(sed -n '2s/^err=0 oldest=\([0-9]*\) .*/\1/p' "$WORK/two.out")
d=$(((o_h1 - o_all) & 0xffffffff))
[ "$d" -gt 0 ] && [ "$d" -lt 2147483648 ] ||
	fail "the region's oldest ($o_all) is not H2's, older than H1's ($o_h1)"
ok two-u svt open "$f2" rw unmark 0 4K expect 0 64K B open "$f1" rw unmark 0 4K
expect_line two-u "unmark 0 4K = 0"
expect_line two-u "expect 0 64K B ok"
expect_line two-u "unmark 0 4K = 1"
touch "$WORK/hs.end"
wait_bg h1
[ "$rc" -eq 0 ] || { show h1; fail "H1: exit status $rc"; }
wait_bg h2
[ "$rc" -eq 0 ] || { show h2; fail "H2: exit status $rc"; }
say "restricted to H1's cgroup: H1's range purged, H2's older one intact"
exit 0
