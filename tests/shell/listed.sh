#!/bin/sh
# SPDX-License-Identifier: MIT
# Makefile.am lists the tests and their helpers by hand (why: there, at
# shell_tests; doc/building.md, "The tests"): this fails, naming the file
# and the list, when one is in no list, so a new test cannot be forgotten
# by make check nor left out of make dist. Over the source tree as it is:
#   - a test of tests/shell (every .sh but lib.sh and the NAME-lib.sh
#     files the tests source) is in shell_tests;
#   - a sourced NAME-lib.sh is not;
#   - a unit test tests/unit/test-NAME.c is a program of unit_programs;
#   - every .sh .c .h .go .S of tests/shell, tests/unit, tests/helpers and
#     tests/fuzz is in the distribution: a program's _SOURCES or EXTRA_DIST.
# make check gives the lists as make expands them: VL_LISTED_TESTS
# ($(shell_tests) and $(unit_programs), every unit test, built or not:
# not $(TESTS), which make check TESTS=... replaces) and VL_LISTED_FILES
# ($(DISTFILES)).
. "$(dirname "$0")/lib.sh"
: "${VL_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
top=$VL_TOP_SRCDIR

[ -n "${VL_LISTED_TESTS:-}" ] && [ -n "${VL_LISTED_FILES:-}" ] ||
	fail "VL_LISTED_TESTS and VL_LISTED_FILES are not set: run it as make check TESTS=tests/shell/listed.sh"
[ -f "$top/tests/shell/lib.sh" ] || fail "no tests/shell/lib.sh under $top: is VL_TOP_SRCDIR right?"

# the lists, one word a line, a path made relative to the top (DISTFILES
# may write one below $(srcdir): ../x or the absolute path)
words() {
	# shellcheck disable=SC2086 # the words of the list
	printf '%s\n' $1 | sed "s|^$top/||; s|^\(\.\./\)*||; s|^\./||" | sort -u
}
words "$VL_LISTED_TESTS" >"$WORK/tests"
words "$VL_LISTED_FILES" >"$WORK/dist"

listed() {
	grep -qxF "$1" "$WORK/$2"
}

# in the distribution: the file, or a directory above it (EXTRA_DIST may name a directory)
distributed() {
	_p=$1
	while :; do
		listed "$_p" dist && return 0
		case $_p in */*) _p=${_p%/*} ;; *) return 1 ;; esac
	done
}

: >"$WORK/unlisted"
unlisted() {
	printf '  %s: %s\n' "$1" "$2" >>"$WORK/unlisted"
}

# the files, relative to the top; built files (an in-tree build) have other endings
(cd "$top" && find tests/shell tests/unit tests/helpers tests/fuzz \
	-type d \( -name .libs -o -name .deps \) -prune -o -type f \
	\( -name '*.sh' -o -name '*.c' -o -name '*.h' -o -name '*.go' -o -name '*.S' \) -print) |
	sort >"$WORK/files"
[ -s "$WORK/files" ] || fail "no test files found under $top/tests"

while read -r f; do
	case $f in
	tests/shell/lib.sh | tests/shell/*-lib.sh)
		listed "$f" tests &&
			{ unlisted "$f" "sourced by tests, not one: take it out of shell_tests (EXTRA_DIST has it)"; continue; }
		;;
	tests/shell/*.sh)
		listed "$f" tests ||
			{ unlisted "$f" "a test make check does not run: add it to shell_tests"; continue; }
		;;
	tests/unit/test-*.c)
		listed "${f%.c}" tests ||
			{ unlisted "$f" "a unit test make check does not run: add ${f%.c} to unit_programs, with its _SOURCES"; continue; }
		;;
	esac
	distributed "$f" ||
		unlisted "$f" "not in make dist: name it in its program's _SOURCES, or in EXTRA_DIST if a test builds or sources it"
done <"$WORK/files"

if [ -s "$WORK/unlisted" ]; then
	cat "$WORK/unlisted" >&2
	fail "$(wc -l <"$WORK/unlisted") of $(wc -l <"$WORK/files") files of tests/ not in their list of Makefile.am (above)"
fi
say "$(wc -l <"$WORK/files") files of tests/: every test in a list, every file in the distribution"
