#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile run` execs CMD in its own place (DESIGN 8, 21): a signal
# reaches CMD once, as without run, however it is sent: to the pid the
# shell started as `volatile run` (CMD's), to CMD's own process group by
# CMD, and to the whole group by another process (which, when run stayed
# CMD's parent and forwarded signals, reached CMD twice).
#
# CMD here is a program counting SIGUSR1s.
. "$(dirname "$0")/lib.sh"

need_cmd
need_python
command -v setsid >/dev/null 2>&1 || skip "no setsid (util-linux)"

# a counter that counts each delivery (a shell's trap runs once for
# signals that arrived together); with "self" it sends SIGUSR1 to its own
# process group once
CC=${VL_CC:-cc}
cat >"$WORK/count.c" <<'EOF'
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
static volatile sig_atomic_t n;
static void on_usr1(int sig) { (void)sig; n++; }
static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
int main(int argc, char **argv)
{
	struct timespec t = { 0, 10000000 };
	double start, first = 0;
	FILE *f;

	signal(SIGUSR1, on_usr1);
	if (argc != 3 || (f = fopen(argv[1], "w")) == NULL)
		return 2;
	fclose(f);
	if (strcmp(argv[2], "self") == 0)
		kill(0, SIGUSR1);
	/* until 2 s after the first SIGUSR1 (a second one would come then),
	 * 20 s at most: not a fixed 2 s from the start, which a loaded
	 * machine may spend before the test's kill gets here */
	start = now();
	while (now() - start < 20 && (first == 0 || now() - first < 2)) {
		nanosleep(&t, NULL);
		if (n > 0 && first == 0)
			first = now();
	}
	printf("SIGUSR1 x%d\n", (int)n);
	return 0;
}
EOF
# shellcheck disable=SC2086 # CC may carry words
$CC -o "$WORK/count" "$WORK/count.c" 2>"$WORK/cc.err" ||
	skip "$CC cannot build a program: $(head -n 2 "$WORK/cc.err")"

# in a process group of its own (setsid), with SIGUSR1 ignored by the
# shell that waits for it, so that only run and CMD take it
# shellcheck disable=SC2016 # for the inner sh
run self timeout 30 setsid sh -c 'trap : USR1; "$@"' sh \
	"$VOLATILE_CMD" run -- "$WORK/count" "$WORK/self.ready" self
expect_out self <<EOF
SIGUSR1 x1
EOF

# sent to the pid started as run's: CMD's, once
rm -f "$WORK/bypid.ready"
"$VOLATILE_CMD" run -- "$WORK/count" "$WORK/bypid.ready" wait >"$WORK/bypid.out" 2>&1 &
runpid=$!
i=0
while [ ! -e "$WORK/bypid.ready" ] && [ "$i" -lt 3000 ]; do sleep 0.01; i=$((i + 1)); done
[ -e "$WORK/bypid.ready" ] || fail "CMD did not start under run"
kill -USR1 "$runpid"
wait "$runpid"
rc=$?
[ "$rc" -eq 0 ] || { show bypid; fail "bypid: exit status $rc"; }
expect_out bypid <<EOF
SIGUSR1 x1
EOF

# sent to the whole process group by another process: once
# shellcheck disable=SC2016 # for the inner sh
timeout 30 setsid sh -c 'trap : USR1; echo $$ >"$1.pgid"; shift; "$@"' sh "$WORK/group" \
	"$VOLATILE_CMD" run -- "$WORK/count" "$WORK/group.ready" wait >"$WORK/group.out" 2>&1 &
gpid=$!
i=0
while [ ! -e "$WORK/group.ready" ] && [ "$i" -lt 3000 ]; do sleep 0.01; i=$((i + 1)); done
[ -e "$WORK/group.ready" ] || fail "CMD did not start under run (group)"
kill -USR1 -- "-$(cat "$WORK/group.pgid")"
wait "$gpid"
rc=$?
[ "$rc" -eq 0 ] || { show group; fail "group: exit status $rc"; }
expect_out group <<EOF
SIGUSR1 x1
EOF
exit 0
