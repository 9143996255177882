#!/bin/sh
# SPDX-License-Identifier: MIT
# DESIGN 9: VOLATILE_REGION is an absolute path. A relative one would be
# resolved by each process against its own working directory, splitting
# the user's processes between regions (and falling back to the default
# region would split them from those given the same path absolute). So
# such a region is unusable: MARK and UNMARK fail with EINVAL, for the
# life of the process, no file is created anywhere, every other call is
# untouched, and with VOLATILE_DEBUG the log says why. The command
# refuses it too (exit status 2, one line; `volatile run` 125, as for its
# own failures, before CMD runs). `volatile run --region PATH`
# makes a relative PATH absolute against its own working directory.
. "$(dirname "$0")/lib.sh"
need_cmd

cwd=$WORK/cwd
mkdir -p "$cwd/sub" || fail "mkdir $cwd/sub"
f=$WORK/file
mkfile "$f" 64K A
cd "$cwd" || fail "cd $cwd"

# nothing_made WHAT: the working directory holds only sub/, empty, and
# nothing appeared next to it
nothing_made() {
	[ "$(ls -A "$cwd")" = sub ] && [ -z "$(ls -A "$cwd/sub")" ] &&
		[ ! -e "$WORK/up" ] || {
		ls -lAR "$WORK" >&2
		fail "$1: a file was made for a relative VOLATILE_REGION"
	}
}

# ---- the library: EINVAL, for good, and nothing made ------------------------------------
n=0
for rel in region sub/region ./region ../up; do
	n=$((n + 1))
	ok "lib-$n" svte VOLATILE_REGION="$rel" -- memfd m 64K mark 0 4K unmark 0 4K \
		fa 'MARK|KEEP_SIZE' 8K 4K open "$f" rw mark 0 4K fa 0 0 4K unmark 0 4K \
		fa 'PUNCH_HOLE|KEEP_SIZE' 60K 4K expect 0 60K A
	expect_out "lib-$n" <<EOF
memfd m 64K = 3
mark 0 4K = -1 EINVAL
unmark 0 4K = -1 EINVAL
fa MARK|KEEP_SIZE 8K 4K = -1 EINVAL
open $f rw = 4
mark 0 4K = -1 EINVAL
fa 0 0 4K = 0
unmark 0 4K = -1 EINVAL
fa PUNCH_HOLE|KEEP_SIZE 60K 4K = 0
expect 0 60K A ok
EOF
	nothing_made "VOLATILE_REGION=$rel"
done
# the arguments are still checked first (DESIGN 5's order)
ok lib-args svte VOLATILE_REGION=region -- memfd m 64K mark -1 4K fa 'MARK|UNMARK' 0 4K \
	open "$f" r mark 0 4K
expect_out lib-args <<EOF
memfd m 64K = 3
mark -1 4K = -1 EINVAL
fa MARK|UNMARK 0 4K = -1 EINVAL
open $f r = 4
mark 0 4K = -1 EBADF
EOF
# with VOLATILE_DEBUG the log says why
run dbg svte VOLATILE_REGION=region VOLATILE_DEBUG=1 -- memfd m 4K mark 0 4K
expect_line dbg "mark 0 4K = -1 EINVAL"
grep -q "VOLATILE_REGION=region is not an absolute path" "$WORK/dbg.err" ||
	{ show dbg; fail "the debug log does not say the region is not an absolute path"; }
nothing_made "VOLATILE_DEBUG=1"

# ---- the command refuses it: status 2, one line -------------------------------------
n=0
for args in "status" "status --json" "purge --all" "mark $f 0 4K" "unmark $f 0 4K" \
	"daemon --foreground"; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	run "cmd-$n" env VOLATILE_REGION=region timeout "$VL_TIMEOUT" "$VOLATILE_CMD" $args
	if [ "$rc" -ne 2 ] || [ "$(wc -l <"$WORK/cmd-$n.err")" -ne 1 ] ||
		! grep -q "VOLATILE_REGION=region is not an absolute path" "$WORK/cmd-$n.err"; then
		show "cmd-$n"
		fail "volatile $args with a relative VOLATILE_REGION: exit status $rc (want 2 and one line)"
	fi
	nothing_made "volatile $args"
done

# ---- volatile run refuses to pass it on: 125 (its own failure), one line ------------------
run run-rel env VOLATILE_REGION=region timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run -- true
if [ "$rc" -ne 125 ] || [ "$(wc -l <"$WORK/run-rel.err")" -ne 1 ] ||
	! grep -q "VOLATILE_REGION=region is not an absolute path" "$WORK/run-rel.err"; then
	show run-rel
	fail "volatile run with a relative VOLATILE_REGION: exit status $rc (want 125 and one line)"
fi
nothing_made "volatile run"

# a value with a newline or a terminal's escape is named in one line still,
# its bytes shown as \ooo: by run (125) and by the other subcommands (2)
odd=$(printf 'rel\n\033[31mx')
for args in "run -- true" "status"; do
	# shellcheck disable=SC2086
	run odd env VOLATILE_REGION="$odd" timeout "$VL_TIMEOUT" "$VOLATILE_CMD" $args
	if [ "$(wc -l <"$WORK/odd.err")" -ne 1 ] || grep -q "$(printf '\033')" "$WORK/odd.err" ||
		! grep -qF 'VOLATILE_REGION=rel\012\033[31mx is not an absolute path' "$WORK/odd.err"; then
		show odd
		fail "volatile $args: a VOLATILE_REGION with odd bytes is not named in one line"
	fi
done
nothing_made "odd bytes"
# as is VOLATILE_LIBRARY, which run checks before it puts it in LD_PRELOAD
run odd-lib env VOLATILE_LIBRARY="$odd" timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run -- true
if [ "$rc" -ne 125 ] || [ "$(wc -l <"$WORK/odd-lib.err")" -ne 1 ] ||
	grep -q "$(printf '\033')" "$WORK/odd-lib.err" ||
	! grep -qF 'VOLATILE_LIBRARY=rel\012\033[31mx is not an absolute path' "$WORK/odd-lib.err"; then
	show odd-lib
	fail "volatile run: a VOLATILE_LIBRARY with odd bytes: exit status $rc (want 125 and one line)"
fi

# ---- volatile run --region makes it absolute ----------------------------------------
here=$(pwd -P)
ok run-env vol run --region rel -- env
expect_line run-env "VOLATILE_REGION=$here/rel"
ok run-env2 vol run --region sub/rel -- env
expect_line run-env2 "VOLATILE_REGION=$here/sub/rel"
# a child in another directory uses the same region
# shellcheck disable=SC2016
ok run-child vol run --region rel -- sh -c 'cd sub && exec "$0" memfd m 64K mark 0 4K' "$VT"
expect_line run-child "mark 0 4K = 0"
[ -f "$cwd/rel" ] || fail "volatile run --region rel: the child did not use $cwd/rel"
[ -e "$cwd/sub/rel" ] && fail "volatile run --region rel: the child used sub/rel"
# an absolute path is left as it is
ok run-abs vol run --region "$WORK/abs" -- env
expect_line run-abs "VOLATILE_REGION=$WORK/abs"

# ---- a name longer than a region can keep: refused, never another region ------------
# (a region keeps the name it was made with, 255 bytes at most: moving it when
# its name is removed depends on it)
long=$WORK/$(printf '%0200d' 0)/$(printf '%0100d' 0)/region
mkdir -p "${long%/region}" || fail "mkdir"
ok long svte VOLATILE_REGION="$long" -- memfd m 64K mark 0 4K unmark 0 4K
expect_line long "mark 0 4K = -1 ENAMETOOLONG"
[ ! -e "$long" ] || fail "a region was made at a name too long"
run long-cmd env VOLATILE_REGION="$long" timeout "$VL_TIMEOUT" "$VOLATILE_CMD" status
[ "$rc" -eq 2 ] || { show long-cmd; fail "volatile status with a name too long: exit status $rc"; }
# volatile run refuses what the library refuses: 125, one line, CMD not run
run long-run env VOLATILE_REGION="$long" timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run -- \
	"$VT" memfd m 64K mark 0 4K
if [ "$rc" -ne 125 ] || [ "$(wc -l <"$WORK/long-run.err")" -ne 1 ] ||
	! grep -q "^volatile: VOLATILE_REGION=.*255 bytes at most" "$WORK/long-run.err" ||
	[ -s "$WORK/long-run.out" ]; then
	show long-run
	fail "volatile run with a region name too long: exit status $rc (want 125 and one line)"
fi
# the 255 bytes are counted once "." and ".." are resolved, as the library counts
# them: a long name that resolves short is a good one, for run as for the library
dots=$(i=0; while [ "$i" -lt 200 ]; do printf '/.'; i=$((i + 1)); done)
ok long-dots vol run --region "$WORK$dots/dots" -- "$VT" memfd m 64K mark 0 4K
expect_line long-dots "mark 0 4K = 0"
[ -f "$WORK/dots" ] || fail "a name that resolves short: no region at $WORK/dots"
# a name longer than PATH_MAX (the kernel refuses it whole) is refused too,
# never cut to a prefix that names another region: here the prefix resolves
# to $WORK/cut, the name to $WORK/whole
dots=$(i=0; while [ "$i" -lt 2100 ]; do printf '/.'; i=$((i + 1)); done)
ok huge svte VOLATILE_REGION="$WORK/cut$dots/../whole" -- memfd m 64K mark 0 4K
expect_line huge "mark 0 4K = -1 ENAMETOOLONG"
[ ! -e "$WORK/cut" ] && [ ! -e "$WORK/whole" ] ||
	{ ls -lA "$WORK" >&2; fail "a region was made for a name longer than PATH_MAX"; }
exit 0
