#!/bin/sh
# SPDX-License-Identifier: MIT
# A fork in another thread while a region is made, or while its last fd
# here is closed, gives the child the memfd: the record must stay for it
# (attack on 28b53f4: the epoch of the table of regions made here).
#   a. newfork: the first attach of open("/dev/ashmem") waits (the region's
#      lock is held by a stopped process, as in fork-attach.sh); another
#      thread forks meanwhile, and the child inherits the memfd. The parent
#      sizes the region, sets the prot mask PROT_READ and closes its fd.
#      At 28b53f4 the entry of the table was stamped with the epoch of
#      after the fork (vl_here_made runs at the end of vl_ash_new), so the
#      close forgot the record the child holds: the child's GET_PROT_MASK
#      said 7 and its mmap PROT_WRITE succeeded.
#   b. closefork: one thread makes regions (prot mask PROT_READ) and closes
#      them, while another forks; a fork between the close's look at the
#      table and the real close gives the child a region whose record the
#      close then forgets (vl_ash_close_end does not look at the epoch
#      again). Probabilistic: about 1 child in 150 at 28b53f4.
#   c. reuse: no fork at all. Another thread dups and closes an fd on a
#      region in a loop; this one makes a region Y (prot mask PROT_READ),
#      dups it to N and closes Y's first fd. When N is the number the other
#      thread's close just freed, that close's vl_ash_close_end (after the
#      real close) clears the table's entry for N, which by then is Y's:
#      Y's first fd is then "alone", its close forgets the record, and N
#      is a plain writable memfd. About 1 in 10,000 at 28b53f4.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ashmem-lib.sh"

TWINS=$VL_TOP_BUILDDIR/tests/helpers/twins
[ -x "$TWINS" ] || fail "$TWINS is not built (make check builds it)"
need_fault_lib

part_a() {
	region_held_stopped a
	run a shim "$TWINS" newfork "$hpid"
	kill -CONT "$hpid" 2>/dev/null
	wait_bg ha
	if [ "$rc" -ne 0 ] || [ -s "$WORK/a.err" ]; then show a; fail "a: exit status $rc"; fi
	expect_out a <<EOT
child: getprot = 1
child: getsize = 65536
child: getname = dev/ashmem
child: map rw = -1 EPERM
child: status 0
EOT
}

part_b() {
	new_region
	run b env LD_PRELOAD="$VOLATILE_LIBRARY" timeout 60 "$TWINS" closefork "${VL_FORKRACE_SECS:-8}"
	if [ "$rc" -ne 0 ] || [ -s "$WORK/b.err" ]; then show b; fail "b: exit status $rc"; fi
	expect_out b <<EOT
held = enough
lost = 0
EOT
}

part_c() {
	new_region
	run c env LD_PRELOAD="$VOLATILE_LIBRARY" timeout 60 "$TWINS" reuse "${VL_FORKRACE_SECS:-8}"
	if [ "$rc" -ne 0 ] || [ -s "$WORK/c.err" ]; then show c; fail "c: exit status $rc"; fi
	expect_out c <<EOT
iterations = enough
lost = 0
EOT
}

soft part_a
soft part_b
soft part_c
exit "$FAILED"
