#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/deb/build.sh - build the Debian packages from this tree and check them.
#
#   bash tests/deb/build.sh [OUTDIR]
#
# 1. As root: installs the build dependencies (apt-get build-dep from
#    debian/control) and lintian.
# 2. Copies the tree (tracked and untracked files, not ignored ones) into
#    OUTDIR/build and runs `dpkg-buildpackage -us -uc -b` there, as nobody
#    when run as root (as a build daemon would: the tests that need root must
#    skip, not fail), with the test suite unless DEB_BUILD_OPTIONS says
#    nocheck.
# 3. lintian on the .changes: any error (E:) fails; warnings are printed.
# 4. As root, and only if none of the packages is on the machine yet:
#    installs the three .debs, checks `volatile --help`, `volatile run`,
#    pkg-config, a program built with `cc $(pkg-config --cflags --libs
#    libvolatile)`, the manual pages, the user unit, the system unit and
#    that it is enabled, then purges the packages again.
#
# OUTDIR (default: a new directory in /tmp) keeps the logs; the .debs are in
# OUTDIR/build. Ends with one line "deb: N passed, N failed" and exits
# non-zero if anything failed.

# shellcheck disable=SC2317 # the check_* functions are called through step
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$(mktemp -d /tmp/libvolatile-deb.XXXXXX)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
packages="libvolatile0 libvolatile-dev volatile-tools"
pass=0
fail=0

ok() { echo "deb: ok: $*"; pass=$((pass + 1)); }
bad() { echo "deb: FAILED: $*"; fail=$((fail + 1)); }
finish() {
	echo "deb: logs in $out, packages in $out/build"
	echo "deb: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit
}
# step NAME COMMAND...: run one check and count it
step() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else bad "$name"; fi
}

root=no
[ "$(id -u)" -eq 0 ] && root=yes

# ---- 1. what the build needs ----------------------------------------------------
if [ $root = yes ]; then
	export DEBIAN_FRONTEND=noninteractive
	if { apt-get update -qq &&
		apt-get build-dep -y -qq "$top" &&
		apt-get install -y -qq --no-install-recommends lintian fakeroot git man-db; } \
			>"$out/apt.log" 2>&1; then
		ok "build dependencies installed"
	else
		cat "$out/apt.log"
		bad "build dependencies installed"
		finish
	fi
fi

# ---- 2. the build ---------------------------------------------------------------
# dpkg-buildpackage puts the .debs in the parent of the source tree
rm -rf "$out/build"
mkdir -p "$out/build/libvolatile"
if ! (cd "$top" && git ls-files -z -c -o --exclude-standard | tar --null -T - -cf -) |
		tar -C "$out/build/libvolatile" -xf -; then
	bad "copy of the tree"
	finish
fi
as_builder() { "$@"; }
if [ $root = yes ]; then
	chmod 755 "$out"
	chown -R nobody:nogroup "$out/build"
	as_builder() {
		setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env \
			env HOME="$out/build" PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-}" "$@"
	}
fi
builder=$(as_builder id -un)
start=$(date +%s)
# shellcheck disable=SC2016 # $1 is the inner shell's
if as_builder sh -c 'cd "$1" && dpkg-buildpackage -us -uc -b' sh "$out/build/libvolatile" \
		>"$out/build.log" 2>&1; then
	ok "dpkg-buildpackage -us -uc -b as $builder ($(($(date +%s) - start)) s)"
	grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR):' "$out/build.log" | sed 's/^/deb: make check: /'
else
	tail -n 80 "$out/build.log"
	bad "dpkg-buildpackage -us -uc -b as $builder (log: $out/build.log)"
	finish
fi

# ---- 3. lintian -------------------------------------------------------------------
changes=$(ls "$out"/build/*.changes)
as_builder lintian --fail-on error --pedantic "$changes" >"$out/lintian.log" 2>&1
lintian_rc=$?
sed 's/^/deb: lintian: /' "$out/lintian.log"
if [ $lintian_rc -eq 0 ] && ! grep -q '^E: ' "$out/lintian.log"; then
	ok "lintian: no errors ($(grep -c '^W: ' "$out/lintian.log") warnings)"
else
	bad "lintian: errors"
fi

# ---- 4. install, use, purge -------------------------------------------------------
if [ $root = no ]; then
	echo "deb: install check skipped: it needs root"
	finish
fi
# is any of the packages installed, or its configuration left?
installed_any() {
	# shellcheck disable=SC2086 # one word per package
	dpkg-query -W -f='${db:Status-Abbrev}\n' $packages 2>/dev/null | grep -q -v '^.n'
}
if installed_any; then
	echo "deb: install check skipped: one of $packages is on this machine already"
	finish
fi
debs=
for p in $packages; do debs="$debs $(ls "$out"/build/"${p}"_*.deb)"; done
# shellcheck disable=SC2086 # one word per package
purge() { dpkg -P $packages >"$out/purge.log" 2>&1; }
trap purge EXIT
# shellcheck disable=SC2086 # one word per .deb
if ! dpkg -i $debs >"$out/install.log" 2>&1; then
	cat "$out/install.log"
	bad "dpkg -i of the three packages"
	finish
fi
ok "dpkg -i of the three packages"

multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
work=$(mktemp -d /tmp/libvolatile-deb-prog.XXXXXX)
region=/dev/shm/libvolatile-deb-check.$$
check_help() { volatile --help >/dev/null; }
# shellcheck disable=SC2016 # $LIB is for ld.so to expand
preload='/usr/lib/'$multiarch'/libvolatile/preload/$LIB/libvolatile.so.0'
check_run() {
	# shellcheck disable=SC2016 # expanded by the child
	[ "$(volatile run -- sh -c 'echo "$LD_PRELOAD"')" = "$preload" ] &&
		volatile run -- sh -c 'grep -q "/libvolatile\.so\.0" /proc/$$/maps'
}
check_pkgconfig() { pkg-config --cflags --libs libvolatile; }
check_cc() {
	# shellcheck disable=SC2046 # pkg-config's words
	(cd "$work" && cc -Wall -Werror -o prog prog.c $(pkg-config --cflags --libs libvolatile))
}
check_prog() { (cd "$work" && VOLATILE_REGION=$region ./prog); }
check_man() { man -w "$1" >/dev/null; }
cp "$top/tests/deb/prog.c" "$work/prog.c"
step "volatile --help" check_help
step "volatile run preloads $preload, and the library is loaded" check_run
step "pkg-config --cflags --libs libvolatile" check_pkgconfig
step "cc \$(pkg-config --cflags --libs libvolatile) builds tests/deb/prog.c" check_cc
step "the program marks, purges, unmarks, makes an ashmem region" check_prog
rm -rf "$work" "$region" "$region".daemon
for page in volatile libvolatile volatile_purge volatile_stats; do
	step "man -w $page" check_man "$page"
done
step "user unit in /usr/lib/systemd/user" test -f /usr/lib/systemd/user/volatile-daemon.service
step "system unit in /lib/systemd/system" test -f /lib/systemd/system/volatile-system.service
# enabled by the package (deb-systemd-helper makes the link even where systemd does not run)
step "system unit enabled" test -L /etc/systemd/system/multi-user.target.wants/volatile-system.service

trap - EXIT
if purge && ! installed_any; then
	ok "dpkg -P of the three packages"
else
	cat "$out/purge.log"
	bad "dpkg -P of the three packages"
fi
finish
