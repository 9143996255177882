#!/bin/sh
# SPDX-License-Identifier: MIT
# A MARK never stalls on the machine (DESIGN 6, 13;
# doc/limits.md): the purges made inside a MARK (its budget, its pressure) reach
# a file only through cheap routes: the recorded holders, the recorded
# path, the holders' children at the holder's fd number (fork keeps fd
# numbers), this process's own fds. What only a look at every process's
# fds could reach is left to `volatile purge` and the daemon (that look
# took 520-570 ms with 200,000 fds on the machine: `make bench`, reach row).
#   child:   P marks memfd a, forks C (a's fd inherited), closes its own fd
#            (memfd b takes the number) and marks b over a budget of 8K: the
#            purge takes a's range through C. C's UNMARK says 1, bytes zero;
#            the debug log says it went through a child.
#   own:     P marks memfd a at fd 3, moves it to fd 5 (dup2, close 3;
#            memfd b takes 3) and marks b over the budget: the purge finds a
#            in P's own fd table.
#   orphan:  Q marks memfd a and detaches (its child D keeps the fd, Q exits):
#            no cheap route leads to a. R's MARK over the budget leaves a's
#            range alone, unpurged and remembered (it purges its own
#            instead); R's next MARK over the budget does not look for a
#            again (one line in its log); `volatile purge`, looking
#            everywhere, takes a's range; D's UNMARK says 1.
#   gone:    memfd x marked by a process that exited, then a MARK over the
#            budget. As root (CAP_DAC_READ_SEARCH) the kernel says x is gone
#            and the MARK forgets its records: the new range stays within
#            the budget. As an ordinary user (as root: nobody, through
#            setpriv) nothing cheap can tell: x's range is kept and the MARK
#            purges its own range instead; `volatile purge` forgets x.
. "$(dirname "$0")/lib.sh"
share_build 65534
need_cmd
need_python

W=$WORK

# ---- child ------------------------------------------------------------------------
new_region
bg p svte VOLATILE_BUDGET=8K VOLATILE_DEBUG=1 -- memfd a 64K fill 0 64K A mark 0 8K \
	spawn touch "$W/c-ready" wait "$W/c-go" fd 3 unmark 0 8K expect 0 8K zero expect 8K 56K A end \
	wait "$W/c-ready" close memfd b 64K fill 0 64K B mark 0 8K touch "$W/c-go" reap
wait_bg p
[ "$rc" -eq 0 ] || { show p; fail "child: exit status $rc"; }
expect_line p "unmark 0 8K = 1"
expect_line p "expect 0 8K zero ok"
expect_line p "expect 8K 56K A ok"
grep -q 'a child of pid' "$WORK/p.err" ||
	{ show p; fail "child: the budget purge did not go through the child (debug log)"; }

# ---- own ----------------------------------------------------------------------------
new_region
run own svte VOLATILE_BUDGET=8K VOLATILE_DEBUG=1 -- memfd a 64K fill 0 64K A mark 0 8K \
	dup 5 fd 3 close memfd b 64K fill 0 64K B mark 0 8K unmark 0 8K fd 5 unmark 0 8K \
	expect 0 8K zero expect 8K 56K A
[ "$rc" -eq 0 ] || { show own; fail "own: exit status $rc"; }
expect_line own "unmark 0 8K = 0" # b's: a went first
expect_line own "unmark 0 8K = 1" # a's
expect_line own "expect 0 8K zero ok"
grep -q 'reached through our own fd 5' "$WORK/own.err" ||
	{ show own; fail "own: the budget purge did not find a at fd 5 (debug log)"; }

# ---- orphan -------------------------------------------------------------------------
new_region
bg q svt memfd a 64K fill 0 64K A mark 0 8K detach touch "$W/d-ready" wait "$W/d-go" \
	fd 3 unmark 0 8K expect 0 8K zero expect 8K 56K A touch "$W/d-done"
wait_file "$W/d-ready"
ok r svte VOLATILE_BUDGET=8K -- memfd b 64K fill 0 64K B mark 0 8K expect 0 8K zero
status_json st
# a's range kept (the MARK could not reach a), b's purged in its place
expect_eq "orphan: the two ranges after R's MARK over the budget (purged?)" \
	"$(jq_py st "sorted(r['purged'] for x in d['file_list'] for r in x['ranges'])")" \
	"[false, true]"
# twice over the budget in one process: a is looked for once
run r2 svte VOLATILE_BUDGET=8K VOLATILE_DEBUG=1 -- memfd b 64K fill 0 64K B mark 0 8K \
	mark 16K 8K expect 0 8K zero expect 16K 8K zero
[ "$rc" -eq 0 ] || { show r2; fail "orphan: R2's exit status $rc"; }
expect_eq "orphan: R2's debug lines saying a could not be reached cheaply" \
	"$(grep -c 'no cheap route reaches it' "$WORK/r2.err")" 1
ok purge vol purge --bytes 1
grep -q '^purged 1 range, 8192 bytes' "$WORK/purge.out" || { show purge; fail "orphan: volatile purge did not reach a"; }
touch "$W/d-go"
wait_file "$W/d-done"
expect_line q "unmark 0 8K = 1"
expect_line q "expect 0 8K zero ok"
expect_line q "expect 8K 56K A ok"

# ---- gone ---------------------------------------------------------------------------
# gone_case NAME WANT [RUNNER...]: x marked by a process that exited, then
# a MARK of 4K over a budget of 8K; WANT: "forgotten" or "kept". RUNNER
# runs each command (setpriv for the unprivileged case).
gone_case() {
	_n=$1 _want=$2
	shift 2
	ok "${_n}x" "$@" env LD_PRELOAD="$VOLATILE_LIBRARY" timeout "$VL_TIMEOUT" "$VT" \
		memfd x 64K fill 0 64K X mark 0 8K
	run "$_n" "$@" env VOLATILE_BUDGET=8K VOLATILE_DEBUG=1 LD_PRELOAD="$VOLATILE_LIBRARY" \
		timeout "$VL_TIMEOUT" "$VT" memfd b 64K fill 0 64K B mark 0 4K unmark 0 4K
	[ "$rc" -eq 0 ] || { show "$_n"; fail "$_n: exit status $rc"; }
	ok "${_n}st" "$@" timeout "$VL_TIMEOUT" "$VOLATILE_CMD" status --json
	_files=$(jq_py "${_n}st" "len(d['file_list'])")
	if [ "$_want" = forgotten ]; then
		# x forgotten on the kernel's word; b's 4K within the budget, intact
		expect_line "$_n" "unmark 0 4K = 0"
		grep -q 'is gone (no such inode)' "$WORK/$_n.err" ||
			{ show "$_n"; fail "$_n: x was not forgotten on the kernel's word"; }
		expect_eq "$_n: files with records after the MARK" "$_files" 0
	else
		# x kept, unpurged, out of reach; b's range purged in its place
		expect_line "$_n" "unmark 0 4K = 1"
		grep -q 'no cheap route reaches it' "$WORK/$_n.err" ||
			{ show "$_n"; fail "$_n: x was not left for later (debug log)"; }
		expect_eq "$_n: files with records after the MARK" "$_files" 1
		# volatile purge looks everywhere: no route, not mapped: its ranges go
		ok "${_n}p" "$@" timeout "$VL_TIMEOUT" "$VOLATILE_CMD" purge --all
		ok "${_n}st2" "$@" timeout "$VL_TIMEOUT" "$VOLATILE_CMD" status --json
		expect_eq "$_n: files with records after volatile purge" \
			"$(jq_py "${_n}st2" "len(d['file_list'])")" 0
	fi
}

# as root with the kernel's word, and as an ordinary user (as root: nobody)
new_region
if kernel_word; then
	gone_case groot forgotten
else
	say "gone: $KERNEL_WORD_WHY: the privileged case is not run"
fi
if [ "$(id -u)" -ne 0 ]; then
	gone_case guser kept
elif command -v setpriv >/dev/null 2>&1; then
	U=$WORK/u
	{ mkdir "$U" && chmod 0711 "$WORK" && chown 65534:65534 "$U" && chmod 0700 "$U"; } ||
		fail "cannot give $U to uid 65534"
	gone_case guser kept setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		env VOLATILE_REGION="$U/region"
else
	say "gone: setpriv (util-linux) is missing: the unprivileged case is not run"
fi
exit 0
