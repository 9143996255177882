#!/bin/sh
# SPDX-License-Identifier: MIT
# The `volatile` command (DESIGN 8): mark/unmark for shell scripts (unmark
# prints intact/purged, exits 0/1), sizes with K/M/G, status and status
# --json (valid JSON with the files and ranges), purge --bytes/--all
# (oldest first, prints what was freed), run (--budget, --region,
# --debug, LD_PRELOAD kept), --help everywhere (exit 0), and exit status
# 2 with exactly one line "volatile: ..." on stderr on bad usage or error;
# run's own failures (a bad VOLATILE_* value among them) 125, a CMD not
# found 127, one it cannot execute 126, as env(1).
. "$(dirname "$0")/lib.sh"
need_cmd
need_python

f=$WORK/file
mkfile "$f" 64K A

# ---- --help -------------------------------------------------------------------------
for sub in "" run status purge mark unmark; do
	# shellcheck disable=SC2086
	run help vol $sub --help
	[ "$rc" -eq 0 ] && [ ! -s "$WORK/help.err" ] && head -n 1 "$WORK/help.out" | grep -q '^Usage: volatile' ||
		{ show help; fail "'volatile $sub --help': want exit 0 and 'Usage: volatile ...' on stdout"; }
done

# ---- bad usage and errors: exit 2, one line "volatile: ..." on stderr, nothing on stdout --
need_disk
vt open "$DISK/file" rwt fill 0 4K D >/dev/null
usage_error() {
	run usage vol "$@"
	if [ "$rc" -ne 2 ] || [ -s "$WORK/usage.out" ] || [ "$(wc -l <"$WORK/usage.err")" -ne 1 ] ||
		! grep -q '^volatile: ' "$WORK/usage.err"; then
		show usage
		soft fail "'volatile $*': exit status $rc; want 2, and one line 'volatile: ...' on stderr"
		FAILED=1
	fi
}
usage_error
usage_error frob
usage_error --frob
usage_error status extra
usage_error status --frob
usage_error purge extra
usage_error purge --frob
usage_error purge --all --bytes 4K
usage_error purge --bytes
usage_error purge --bytes 4Q
usage_error purge --bytes -1
usage_error mark
usage_error mark "$f" 0
usage_error mark "$f" 0 4K extra
usage_error mark "$f" x 4K
usage_error mark "$f" 0 4Q
usage_error mark "$f" -1 4K
usage_error mark --frob "$f" 0 4K
usage_error unmark "$f" 0
usage_error unmark --frob
# volatile run: 125 its own failures, 127 CMD not found, 126 CMD not executable (as env(1))
run_error() {
	want=$1
	shift
	run runerr "$@"
	if [ "$rc" -ne "$want" ] || [ -s "$WORK/runerr.out" ] || [ "$(wc -l <"$WORK/runerr.err")" -ne 1 ] ||
		! grep -q '^volatile: ' "$WORK/runerr.err"; then
		show runerr
		soft fail "'$*': exit status $rc; want $want, and one line 'volatile: ...' on stderr"
		FAILED=1
	fi
}
run_error 125 vol run
run_error 125 vol run --budget
run_error 125 vol run --budget 8X -- true
run_error 125 vol run --frob -- true
# and its line says what a shell would: "command not found" only for a name
# looked up in PATH; a path that is not there is "No such file or directory"
run_error_says() {
	if ! grep -qF "$1" "$WORK/runerr.err"; then
		show runerr
		soft fail "want '$1' in the line of run's error"
		FAILED=1
	fi
}
run_error 127 vol run -- "$WORK/no-such-command"
run_error_says "$WORK/no-such-command: No such file or directory"
run_error 127 vol run -- no-such-command-anywhere
run_error_says "no-such-command-anywhere: command not found"
run_error 127 vol run -- "$WORK/no-such-dir/cmd"
run_error_says "$WORK/no-such-dir/cmd: No such file or directory"
printf '#!/bin/sh\nexit 0\n' >"$WORK/not-executable"
chmod 644 "$WORK/not-executable"
# (root too: exec wants an x bit whoever asks)
run_error 126 vol run -- "$WORK/not-executable"
run_error 126 vol run -- "$WORK"
# executable, but exec refuses it (ENOEXEC): 126 from the exec itself, supervised or not
printf '\177ELF garbage\n' >"$WORK/not-a-program"
chmod 755 "$WORK/not-a-program"
run_error 126 vol run -- "$WORK/not-a-program"
run_error 126 vol run --no-seccomp -- "$WORK/not-a-program"
# a set-user-ID CMD is refused (the dynamic linker would ignore LD_PRELOAD): run's own, 125
cp "$(command -v sleep)" "$WORK/suid-true"
chmod 4755 "$WORK/suid-true"
run_error 125 vol run -- "$WORK/suid-true"
grep -q 'set-user-ID' "$WORK/runerr.err" || { show runerr; soft fail "run's line does not say set-user-ID"; FAILED=1; }
# a bad VOLATILE_* value run would pass on: 125, the line names it (DESIGN 8)
run_error 125 env VOLATILE_BUDGET=lots "$VOLATILE_CMD" run -- true
grep -q '^volatile: VOLATILE_BUDGET=lots is not a size' "$WORK/runerr.err" ||
	{ show runerr; soft fail "run's line does not name VOLATILE_BUDGET=lots"; FAILED=1; }
run_error 125 env VOLATILE_REGION=rel "$VOLATILE_CMD" run -- true
grep -q '^volatile: VOLATILE_REGION=rel is not an absolute path' "$WORK/runerr.err" ||
	{ show runerr; soft fail "run's line does not name VOLATILE_REGION=rel"; FAILED=1; }
for bad in VOLATILE_REGION_RANGES=0 VOLATILE_REGION_FILES=many VOLATILE_MIN_AVAILABLE=200% \
	VOLATILE_TMPFS_MIN_FREE=x VOLATILE_LOCK_WAIT=2h VOLATILE_2012_ABI=yes \
	VOLATILE_SECCOMP_FILTERS=abc; do
	run_error 125 env "$bad" "$VOLATILE_CMD" run -- true
	grep -q "^volatile: $bad " "$WORK/runerr.err" ||
		{ show runerr; soft fail "run's line does not name $bad"; FAILED=1; }
done
# CMD's own statuses pass through, 1 and 2 included
for st in 1 2 3; do
	run passes vol run -- sh -c "exit $st"
	[ "$rc" -eq "$st" ] || { show passes; soft fail "volatile run -- sh -c 'exit $st': exit status $rc"; FAILED=1; }
done
# errors: the file, and MARK's own errors (DESIGN 5)
usage_error mark "$WORK/no-such-file" 0 4K
usage_error unmark "$WORK/no-such-file" 0 4K
usage_error mark "$f" 0 0
usage_error unmark "$f" 4K 0
usage_error mark "$DISK/file" 0 4K
# the errno's text alone ("Operation not supported") does not tell a
# newcomer what is wrong with the file: the line says what it must be
grep -qxF "volatile: mark $DISK/file: Operation not supported (not a tmpfs or memfd file)" "$WORK/usage.err" ||
	{ show usage; soft fail "mark of a file on disk: the line does not say it must be on tmpfs"; FAILED=1; }
usage_error unmark "$DISK/file" 0 4K
usage_error mark /dev/null 0 4K
usage_error mark "$WORK" 0 4K
[ "$FAILED" -eq 0 ] || fail "bad usage is not reported as DESIGN 8 says"

# ---- mark, unmark, purge ------------------------------------------------------------------
ok m1 vol mark "$f" 4K 8K
[ ! -s "$WORK/m1.out" ] || { show m1; fail "volatile mark printed something"; }
ok u1 vol unmark "$f" 4K 8K
expect_out u1 <<EOF
intact
EOF
ok m2 vol mark "$f" 4K 8K
ok p2 vol purge --all
grep -q '^purged 1 range, 8192 bytes' "$WORK/p2.out" || { show p2; fail "volatile purge --all"; }
run u2 vol unmark "$f" 4K 8K
[ "$rc" -eq 1 ] && [ ! -s "$WORK/u2.err" ] || { show u2; fail "unmark of a purged range: exit status $rc, want 1"; }
expect_out u2 <<EOF
purged
EOF
ok u3 vol unmark "$f" 4K 8K
expect_out u3 <<EOF
intact
EOF
ok c2 vt open "$f" r expect 0 4K A expect 4K 8K zero expect 12K 52K A

# the command and the shim share the region
mkfile "$f" 64K A
ok m4 vol mark "$f" 0 4K
ok s4 svt open "$f" rw unmark 0 4K mark 8K 4K
expect_line s4 "unmark 0 4K = 0"
ok u4 vol unmark "$f" 8K 4K
expect_out u4 <<EOF
intact
EOF

# a memfd, through /proc/PID/fd/N, while its holder lives
bg holder svt memfd m 64K fill 0 64K M pid touch "$WORK/m-ready" wait "$WORK/m-done" \
	unmark 0 8K expect 0 8K zero expect 8K 56K M
wait_file "$WORK/m-ready"
mpid=$(sed -n 's/^pid = //p' "$WORK/holder.out")
[ -n "$mpid" ] || fail "cannot find the vt holding the memfd"
ok m5 vol mark "/proc/$mpid/fd/3" 0 8K
ok p5 vol purge --all
grep -q '^purged 1 range, 8192 bytes' "$WORK/p5.out" || { show p5; fail "the memfd marked through /proc was not purged"; }
touch "$WORK/m-done"
wait_bg holder
[ "$rc" -eq 0 ] || { show holder; fail "the memfd holder: exit status $rc"; }
expect_line holder "unmark 0 8K = 1"
expect_line holder "expect 0 8K zero ok"
expect_line holder "expect 8K 56K M ok"

# ---- sizes: plain bytes, K, M, G --------------------------------------------------------
new_region
status_json s0
expect_eq "files in a region not yet made" "$(jq_py s0 'd["files"]')" 0
mkfile "$f" 64K A
ok sz1 vol mark "$f" 1K 2K
ok sz2 vol mark "$f" 1M 1G
ok sz3 vol mark "$f" 8192 100
ok sz4 vol mark "$f" 2G 1M
status_json s1
expect_eq "region" "$(jq_py s1 'd["region"]')" "$VOLATILE_REGION"
expect_eq "files" "$(jq_py s1 'd["files"]')" 1
expect_eq "ranges" "$(jq_py s1 'd["ranges"]')" 4
expect_eq "volatile_bytes" "$(jq_py s1 'd["volatile_bytes"]')" $((2048 + 1073741824 + 100 + 1048576))
expect_eq "purged_bytes" "$(jq_py s1 'd["purged_bytes"]')" 0
expect_eq "the file's path" "$(jq_py s1 'd["file_list"][0]["path"]')" "$f"
expect_eq "the file's inode" "$(jq_py s1 'd["file_list"][0]["ino"]')" "$(stat -c %i "$f")"
jq_py s1 'd["file_list"][0]["dev"]' >/dev/null
expect_eq "its ranges" \
	"$(jq_py s1 '[[r["offset"], r["length"], r["purged"]] for r in d["file_list"][0]["ranges"]]')" \
	"[[1024, 2048, false], [8192, 100, false], [1048576, 1073741824, false], [2147483648, 1048576, false]]"
ok text vol status
grep -qF "$f" "$WORK/text.out" || { show text; fail "volatile status does not show the file"; }
ok ux vol unmark "$f" 0 3G
expect_out ux <<EOF
intact
EOF

# ---- purge --bytes: the oldest range only; then --all ----------------------------------------
new_region
mkfile "$f" 64K A
ok pa vol mark "$f" 0 4K
ok pb vol mark "$f" 8K 4K
ok pc vol mark "$f" 16K 4K
ok pp1 vol purge --bytes 4K
grep -q '^purged 1 range, 4096 bytes' "$WORK/pp1.out" || { show pp1; fail "purge --bytes 4K: want the oldest range only"; }
status_json s2
expect_eq "ranges after purge --bytes 4K" \
	"$(jq_py s2 '[[r["offset"], r["purged"]] for r in d["file_list"][0]["ranges"]]')" \
	"[[0, true], [8192, false], [16384, false]]"
expect_eq "volatile_bytes" "$(jq_py s2 'd["volatile_bytes"]')" 8192
expect_eq "purged_bytes" "$(jq_py s2 'd["purged_bytes"]')" 4096
ok pp2 vt open "$f" r expect 0 4K zero expect 4K 60K A
ok pp3 vol purge --all
grep -q '^purged 2 ranges, 8192 bytes' "$WORK/pp3.out" || { show pp3; fail "purge --all: want the two ranges left"; }
ok pp4 vol purge
grep -q '^purged 0 ranges, 0 bytes' "$WORK/pp4.out" || { show pp4; fail "purge with nothing left"; }
for r in "0 4K" "8K 4K" "16K 4K"; do
	# shellcheck disable=SC2086
	run pu vol unmark "$f" $r
	[ "$rc" -eq 1 ] && [ "$(cat "$WORK/pu.out")" = purged ] || { show pu; fail "unmark $r: want purged"; }
done

# ---- run ----------------------------------------------------------------------------------
new_region
mkfile "$f" 64K A
ok run1 vol run --budget 8K -- "$VT" open "$f" rw mark 0 4K mark 8K 4K mark 16K 4K \
	unmark 0 4K unmark 8K 4K unmark 16K 4K
expect_out run1 <<EOF
open $f rw = 3
mark 0 4K = 0
mark 8K 4K = 0
mark 16K 4K = 0
unmark 0 4K = 1
unmark 8K 4K = 0
unmark 16K 4K = 0
EOF
# without a budget the shim is there, and purges nothing
ok run2 vol run -- "$VT" open "$f" rw mark 0 4K mark 8K 4K mark 16K 4K unmark 0 4K
expect_line run2 "unmark 0 4K = 0"
# found on PATH, too
ok run3 env PATH="$(dirname "$VT"):$PATH" "$VOLATILE_CMD" run -- vt memfd m 4K mark 0 4K
expect_line run3 "mark 0 4K = 0"

# the environment it gives: LD_PRELOAD (an existing one kept), the options
other=$(ldd "$VT" 2>/dev/null | sed -n 's/.*libc\.so\.6 => \([^ ]*\) .*/\1/p')
[ -n "$other" ] && [ -f "$other" ] || fail "cannot find libc.so.6 to preload alongside"
ok env1 env LD_PRELOAD="$other" "$VOLATILE_CMD" run --budget 8K --region "$WORK/r2" --debug -- env
preload=$(sed -n 's/^LD_PRELOAD=//p' "$WORK/env1.out")
case ":$preload:" in
*libvolatile*) ;;
*) fail "volatile run: LD_PRELOAD=$preload has no libvolatile" ;;
esac
case " $preload " in
*"$other"*) ;;
*) fail "volatile run: the existing LD_PRELOAD ($other) was not kept: LD_PRELOAD=$preload" ;;
esac
expect_line env1 "VOLATILE_BUDGET=8K"
expect_line env1 "VOLATILE_REGION=$WORK/r2"
expect_line env1 "VOLATILE_DEBUG=1"
ok env2 "$VOLATILE_CMD" run -- env
grep -q '^VOLATILE_BUDGET=' "$WORK/env2.out" && fail "volatile run without --budget set a budget"
grep -q '^VOLATILE_DEBUG=' "$WORK/env2.out" && fail "volatile run without --debug set VOLATILE_DEBUG"
# --debug logs to stderr; without it nothing is printed
run dbg vol run --debug -- "$VT" memfd m 4K mark 0 4K
[ "$rc" -eq 0 ] && [ -s "$WORK/dbg.err" ] || { show dbg; fail "volatile run --debug: nothing logged"; }
exit 0
