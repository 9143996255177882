#!/bin/sh
# SPDX-License-Identifier: MIT
# system.sh SRCDIR: after `make install` as root into the system (the
# default prefix, no DESTDIR), on a machine that may be changed (.ci/run's
# fresh chroot): what libvolatile(7) and the README promise works at once,
# with no ldconfig of the user's (the install hook ran it):
#   1. `LD_PRELOAD=libvolatile.so.0 prog`: a bare name, found through the
#      dynamic linker's cache; a MARK of a memfd says 0, not EOPNOTSUPP;
#   2. a program built with `cc $(pkg-config --cflags --libs libvolatile)`
#      starts (the linker finds libvolatile.so.0) and asks the library;
#   3. the installed `volatile` command runs a program with the library.
# Prints one line per check and exits 1 if any failed.
set -u
src=${1:-.}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0
check() {
	_what=$1
	shift
	if "$@" >"$tmp/out" 2>"$tmp/err" && [ ! -s "$tmp/err" ]; then
		echo "PASS: $_what: $(head -n 1 "$tmp/out")"
	else
		echo "FAIL: $_what"
		cat "$tmp/out" "$tmp/err"
		failed=1
	fi
}

# a program that does not link the library: MARK through the preload only
cat >"$tmp/mark.c" <<'EOF'
#include <volatile.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
int main(void)
{
	int fd = memfd_create("m", 0);

	if (fd < 0 || ftruncate(fd, 4096) != 0)
		return 2;
	if (fallocate(fd, FALLOC_FL_MARK_VOLATILE, 0, 4096) != 0) {
		perror("mark");
		return 1;
	}
	printf("mark = 0, unmark = %d\n", fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, 0, 4096));
	return 0;
}
EOF
export VOLATILE_REGION="$tmp/region"
if cc -D_GNU_SOURCE -o "$tmp/mark" "$tmp/mark.c" 2>"$tmp/cc.err"; then
	check "LD_PRELOAD=libvolatile.so.0 prog" env LD_PRELOAD=libvolatile.so.0 "$tmp/mark"
	check "volatile run -- prog" volatile run -- "$tmp/mark"
else
	echo "FAIL: cc of a program with <volatile.h> from the installed headers"
	cat "$tmp/cc.err"
	failed=1
fi
# shellcheck disable=SC2046 # pkg-config's words
if cc -o "$tmp/pkgconfig" "$src/tests/install/pkgconfig.c" \
	$(pkg-config --cflags --libs libvolatile) 2>"$tmp/cc.err"; then
	check "a program built with pkg-config --libs libvolatile" "$tmp/pkgconfig"
else
	echo "FAIL: cc \$(pkg-config --cflags --libs libvolatile)"
	cat "$tmp/cc.err"
	failed=1
fi
exit "$failed"
