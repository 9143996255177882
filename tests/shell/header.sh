#!/bin/sh
# SPDX-License-Identifier: MIT
# <volatile.h> is all a program needs (DESIGN 2): the contract's own lines,
#   #include <volatile.h>   /* includes <fcntl.h> */
#   fallocate(fd, FALLOC_FL_MARK_VOLATILE, off, len);
# compile without warnings in strict ISO C as well as with _GNU_SOURCE, and
# call the same libc symbol glibc's own declaration would (fallocate, or
# fallocate64 under _FILE_OFFSET_BITS=64).
. "$(dirname "$0")/lib.sh"
CC=${VL_CC:-cc}
command -v "${CC%% *}" >/dev/null 2>&1 || skip "no C compiler ($CC) to build a user's program"
command -v nm >/dev/null 2>&1 || skip "nm (binutils) is not installed"

cat >"$WORK/user.c" <<'C'
#include <volatile.h>   /* includes <fcntl.h> */

int mark_then_unmark(int fd, off_t off, off_t len)
{
	if (fallocate(fd, FALLOC_FL_MARK_VOLATILE, off, len) != 0)
		return -1;
	return fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, off, len);
}
C

# the libc symbol the object calls
called() {
	nm -u "$1" | awk '$2 ~ /^fallocate/ { print $2 }'
}

n=0
for std in c99 c11 gnu99 gnu11; do
	for bits in "" -D_FILE_OFFSET_BITS=64; do
		for gnu in "" -D_GNU_SOURCE; do
			n=$((n + 1))
			o=$WORK/user-$n.o
			# shellcheck disable=SC2086
			$CC -std=$std $bits $gnu -Wall -Wextra -Werror -pedantic \
				-I"$VL_TOP_SRCDIR/include" -c "$WORK/user.c" -o "$o" \
				2>"$WORK/cc.err" ||
				fail "-std=$std $bits $gnu: $(head -3 "$WORK/cc.err")"
			got=$(called "$o")
			want=fallocate
			[ -n "$bits" ] && want=fallocate64
			[ "$got" = "$want" ] ||
				fail "-std=$std $bits $gnu: calls '$got', want '$want'"
		done
	done
done
say "$n builds of the API's lines (DESIGN 2): no warning, the right symbol each time"

# Every installed header compiles on its own, as the first line of a file,
# and so does a use of what it defines.
alone() {
	case $1 in
	volatile.h) echo 'int use(int fd) { return fallocate(fd, FALLOC_FL_MARK_VOLATILE, 0, 1); }' ;;
	cutils/ashmem.h)
		# what a pin returns is named by libcutils' header itself, as a
		# program written for Android compares with it
		echo 'int use(void) { return ashmem_create_region("x", 4096); }'
		echo 'int pin(int fd) { return ashmem_pin_region(fd, 0, 0) == ASHMEM_WAS_PURGED; }'
		echo 'int pinned(int fd) { return ashmem_pin_region(fd, 0, 0) == ASHMEM_NOT_PURGED; }'
		;;
	linux/ashmem.h)
		echo 'unsigned long use[] = { ASHMEM_SET_NAME, ASHMEM_GET_NAME, ASHMEM_SET_SIZE,'
		echo '	ASHMEM_GET_SIZE, ASHMEM_SET_PROT_MASK, ASHMEM_GET_PROT_MASK, ASHMEM_PIN,'
		echo '	ASHMEM_UNPIN, ASHMEM_GET_PIN_STATUS, ASHMEM_PURGE_ALL_CACHES, ASHMEM_GET_FILE_ID };'
		;;
	esac
}
for h in volatile.h cutils/ashmem.h linux/ashmem.h; do
	{ printf '#include <%s>\n' "$h"; alone "$h"; } >"$WORK/alone.c"
	for std in c99 gnu11; do
		$CC -std=$std -Wall -Wextra -Werror -pedantic -I"$VL_TOP_SRCDIR/include" \
			-c "$WORK/alone.c" -o "$WORK/alone.o" 2>"$WORK/cc.err" ||
			fail "<$h> alone, -std=$std: $(head -3 "$WORK/cc.err")"
	done
done
say "each installed header compiles alone"

# and the two ashmem headers together, in either order (the names both define agree)
for pair in "cutils/ashmem.h linux/ashmem.h" "linux/ashmem.h cutils/ashmem.h"; do
	for h in $pair; do printf '#include <%s>\n' "$h"; done >"$WORK/both.c"
	echo 'int use(int fd) { return ashmem_pin_region(fd, 0, 0) == ASHMEM_WAS_PURGED; }' >>"$WORK/both.c"
	$CC -std=c99 -Wall -Wextra -Werror -pedantic -I"$VL_TOP_SRCDIR/include" \
		-c "$WORK/both.c" -o "$WORK/both.o" 2>"$WORK/cc.err" ||
		fail "<${pair% *}> then <${pair#* }>: $(head -3 "$WORK/cc.err")"
done
say "the ashmem headers compile together, in either order"
exit 0
