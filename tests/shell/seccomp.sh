#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile run` serves what LD_PRELOAD cannot reach (DESIGN 1, 8; the
# contract's section 10): a static glibc program (vt-static, whose
# fallocate is the system call) and the dynamic vt's raw
# syscall(SYS_fallocate) get from the supervisor what a dynamic program
# gets from the library: MARK 0, UNMARK 0 or 1, the purge reaching a memfd
# only they hold. Also: the filter is there (no_new_privs, seccomp mode 2)
# unless --no-seccomp; a dynamic program keeps the preload (--debug shows
# no call served for it); the preload and the supervisor share the ranges;
# forked children and exec'd grandchildren are served; the 2012 aliases
# with --2012-abi. vt-musl and gofa: seccomp-musl.sh, seccomp-go.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/seccomp-lib.sh"
need_seccomp
need_static

# ---- the filter is installed in CMD, not with --no-seccomp --------------------------
ok filter vrun -- grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status
expect_out filter <<EOF
NoNewPrivs:	1
Seccomp:	2
EOF
ok nofilter vrun --no-seccomp -- grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status
expect_out nofilter <<EOF
NoNewPrivs:	0
Seccomp:	0
EOF

# ---- served: a static program, and a dynamic one's raw system call --------------------
served_cases static "$VT_STATIC" mark unmark
served_cases sysfa "$VT" "sysfa MARK" "sysfa UNMARK"

# ---- --debug: one line per call served; none for a dynamic program's calls -----------
# debug_calls NAME PROG: the same five calls, four of them volatile, under run --debug
debug_calls() {
	run "$1" vrun --debug -- "$2" memfd m 64K mark 0 4K unmark 0 4K \
		fa 'MARK|KEEP_SIZE' 8K 4K fa64 UNMARK 8K 4K fa KEEP_SIZE 0 4K
	[ "$rc" -eq 0 ] || { show "$1"; fail "$1: exit status $rc"; }
	expect_out "$1" <<EOF
memfd m 64K = 3
mark 0 4K = 0
unmark 0 4K = 0
fa MARK|KEEP_SIZE 8K 4K = 0
fa64 UNMARK 8K 4K = 0
fa KEEP_SIZE 0 4K = 0
EOF
}

new_region
debug_calls dyn "$VT"
[ "$(served dyn)" -eq 0 ] || { show dyn; fail "a dynamic program's calls went to the supervisor, not to the preloaded library"; }
debug_calls stat "$VT_STATIC"
# four volatile calls, and the KEEP_SIZE one stays in the kernel
[ "$(served stat)" -eq 4 ] || {
	show stat
	fail "a static program's 4 volatile calls: $(served stat) 'volatile run: served' lines (want 4)"
}

# ---- the preload and the supervisor see the same ranges ------------------------------
# the dynamic vt marks through the library, unmarks by the raw system
# call; a purge in between; an exec'd static program unmarks what the
# library marked, on the fd it inherited
new_region
run mixed vrun --debug -- "$VT" memfd m 64K fill 0 64K M mark 0 16K sysfa UNMARK 0 4K \
	sysfa MARK 32K 16K unmark 32K 8K exec "$VT_STATIC" fd 3 unmark 4K 12K unmark 40K 8K \
	expect 0 64K M
[ "$rc" -eq 0 ] || { show mixed; fail "mixed: exit status $rc"; }
expect_out mixed <<EOF
memfd m 64K = 3
fill 0 64K M = ok
mark 0 16K = 0
sysfa UNMARK 0 4K = 0
sysfa MARK 32K 16K = 0
unmark 32K 8K = 0
exec $VT_STATIC
fd 3
unmark 4K 12K = 0
unmark 40K 8K = 0
expect 0 64K M ok
EOF
[ "$(served mixed)" -eq 4 ] || { show mixed; fail "mixed: $(served mixed) calls served (want 4: 2 sysfa, 2 of the static program)"; }
ok mixed-status vol status --json
[ "$(jq_py mixed-status "d['ranges']")" -eq 0 ] || { cat "$WORK/mixed-status.out" >&2; fail "ranges left after the mixed run unmarked them all"; }

# ---- a forked child, and an exec'd grandchild whose memfd is purged from here ----------
new_region
bg fam vrun -- "$VT_STATIC" memfd m 64K fill 0 64K F spawn mark 0 4K unmark 0 4K end reap \
	spawn exec "$VT_STATIC" memfd g 64K fill 0 64K G mark 0 64K pid touch "$WORK/gc.marked" \
	wait "$WORK/gc.go" unmark 0 64K expect 0 64K zero end reap \
	mark 8K 4K unmark 8K 4K expect 0 64K F
wait_file "$WORK/gc.marked"
gpid=$(pid_of fam)
status_json gc-status
holders=$(jq_py gc-status "[[h['pid'], h['fd']] for f in d['file_list'] for h in f['holders']]")
run gc-purge vol purge --all
touch "$WORK/gc.go"
wait_bg fam
expect_eq "the holders of the grandchild's memfd (pid, fd)" "$holders" "[[$gpid, 4]]"
sed -i 's/^pid = .*/pid = N/' "$WORK/fam.out"
expect_out fam <<EOF
memfd m 64K = 3
fill 0 64K F = ok
mark 0 4K = 0
unmark 0 4K = 0
reap = 0
exec $VT_STATIC
memfd g 64K = 4
fill 0 64K G = ok
mark 0 64K = 0
pid = N
touch $WORK/gc.marked = 0
wait $WORK/gc.go
unmark 0 64K = 1
expect 0 64K zero ok
reap = 0
mark 8K 4K = 0
unmark 8K 4K = 0
expect 0 64K F ok
EOF
[ "$rc" -eq 0 ] || { show fam; fail "fam: exit status $rc"; }
expect_out gc-purge <<EOF
purged 1 range, 65536 bytes
EOF

# ---- --no-seccomp: the static program gets the kernel's answer, as before -------------
new_region
ok noseccomp vrun --no-seccomp -- "$VT_STATIC" memfd m 4K mark 0 4K unmark 0 4K sysfa MARK 0 4K
expect_out noseccomp <<EOF
memfd m 4K = 3
mark 0 4K = -1 EOPNOTSUPP
unmark 0 4K = -1 EOPNOTSUPP
sysfa MARK 0 4K = -1 EOPNOTSUPP
EOF
ok noseccomp-dyn vrun --no-seccomp -- "$VT" memfd m 4K mark 0 4K unmark 0 4K
expect_out noseccomp-dyn <<EOF
memfd m 4K = 3
mark 0 4K = 0
unmark 0 4K = 0
EOF

# ---- the 2012 aliases: served with --2012-abi, as the library does them --------------
# (on a disk file they are the kernel's modes, even with --2012-abi)
new_region
alias_script="memfd m 64K fill 0 64K A fa 0x4 0 4K fa 0x5 8K 4K fa 0x8 0 4K fa 0x9 8K 4K
	fa NO_HIDE_STALE|PUNCH_HOLE|KEEP_SIZE 16K 4K st
	open $WORK/afile rwt fill 0 64K T fa 0x4 0 4K fa 0x8 0 4K fa 0x8 60K 8K st"
if [ -n "$DISK" ]; then
	alias_script="$alias_script
	open $DISK/afile rwt fill 0 64K D fa 0x4 0 4K fa 0x5 0 4K fa 0x8 0 4K fa 0x9 0 4K size sum"
else
	say "no disk file system: the aliases on a disk file are not compared"
fi
# shellcheck disable=SC2086
ok alias-svt svte VOLATILE_2012_ABI=1 -- $alias_script
new_region
# shellcheck disable=SC2086
ok alias-static vrun --2012-abi -- "$VT_STATIC" $alias_script
same alias-svt alias-static "with --2012-abi, a static program's 0x04 and 0x08 differ from the library's"
exit 0
