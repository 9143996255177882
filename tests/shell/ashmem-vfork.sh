#!/bin/sh
# SPDX-License-Identifier: MIT
# A vfork child shares its parent's memory: what the library does in it
# must not change the parent's ashmem state. The parent makes
# a region (opened as /dev/ashmem, named and sized by ioctl; or by
# ashmem_create_region), close-on-exec or not, with the prot mask
# PROT_READ; the child closes its copy of the region fd, or dup2's another
# fd over it, then _exits or execs /bin/true. In the parent, afterwards:
# mmap(PROT_READ|PROT_WRITE, MAP_SHARED) still fails with EPERM, GET_PROT_MASK
# says PROT_READ, GET_NAME the name set, fstat of a /dev/ashmem region
# shows the device. (The child's close forgot the region's record, in the
# parent's memory and in the shared region: the parent's fd was a plain
# memfd, writable, named by nobody.) A child that only _exits or execs is
# the control.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ashmem-lib.sh"

BEHAVE=$VL_TOP_BUILDDIR/tests/helpers/behave
[ -x "$BEHAVE" ] || fail "$BEHAVE is not built (make check builds it)"

one() {
	how=$1 ce=$2 action=$3
	name=vf-$how-$ce-$action
	new_region
	ok "$name" shim "$BEHAVE" vfork "$how" "$ce" "$action"
	if [ "$how" = dev ]; then
		fst="fstat = chr 10:61"
	else
		fst="fstat = reg" # a region made by the API is a plain memfd to fstat
	fi
	expect_out "$name" <<EOT
child: $action, status 0
map rw = -1 EPERM
getprot = 1
getname = vfork-region
$fst
map r = ok
EOT
}

for how in dev api; do
	for ce in cloexec inherit; do
		for action in exit exec close dup2 close-exec dup2-exec; do
			soft one "$how" "$ce" "$action"
		done
	done
done

# A vfork child that execs keeps a region fd opened without O_CLOEXEC: when
# the parent then closes its own, the region's record must stay, for the
# child (before: the parent, not knowing of the child, forgot it; the
# child's fd was then a plain memfd named "dev/ashmem/kept", writable).
kept() {
	new_region
	ok keep shim "$BEHAVE" vforkkeep
	expect_out keep <<EOT
held: getprot = 1
getname = kept
held: map rw = -1 EPERM
child: status 0
EOT
}
soft kept
exit "$FAILED"
