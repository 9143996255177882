#!/bin/sh
# `volatile run` stays CMD's parent (its supervisor, DESIGN 21) and
# forwards to CMD the signals a process sends to run. A program under the
# library sees the same signals as without it (SPEC 9). A signal sent to
# the process group, which holds run and CMD (kill -SIG -PGID, as timeout
# does, and a service manager's stop, to every process of the unit),
# reached CMD twice: once from the sender, once forwarded by run. Only a
# terminal's (SI_KERNEL) was told apart.
#
# CMD here is a program counting SIGUSR1s; one killpg of its group must
# be counted once, as without run.
. "$(dirname "$0")/lib.sh"

need_cmd
need_python
command -v setsid >/dev/null 2>&1 || skip "no setsid (util-linux)"

# a counter that counts each delivery (a shell's trap, or Python's, runs
# once for signals that arrived together)
CC=${VL_CC:-cc}
cat >"$WORK/count.c" <<'EOF'
#include <signal.h>
#include <stdio.h>
#include <time.h>
static volatile sig_atomic_t n;
static void on_usr1(int sig) { (void)sig; n++; }
int main(int argc, char **argv)
{
	struct timespec t = { 0, 50000000 };
	FILE *f;

	signal(SIGUSR1, on_usr1);
	if (argc != 2 || (f = fopen(argv[1], "w")) == NULL)
		return 2;
	fclose(f);
	for (int i = 0; i < 40; i++)
		nanosleep(&t, NULL);
	printf("SIGUSR1 x%d\n", (int)n);
	return 0;
}
EOF
# shellcheck disable=SC2086 # CC may carry words
$CC -o "$WORK/count" "$WORK/count.c" 2>"$WORK/cc.err" ||
	skip "$CC cannot build a program: $(head -n 2 "$WORK/cc.err")"

# group_kill NAME CMD...: CMD in a process group of its own with a sh
# (catching SIGUSR1, which CMD then gets at its default), which sends
# SIGUSR1 to the whole group once CMD is ready ($WORK/NAME.ready)
group_kill() {
	_gk=$1
	shift
	rm -f "$WORK/$_gk.ready"
	# shellcheck disable=SC2016 # for the inner sh
	run "$_gk" timeout 30 setsid sh -c '
		trap : USR1
		ready=$1
		shift
		"$@" &
		i=0
		while [ ! -e "$ready" ] && [ "$i" -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
		"$PYTHON" -c "import os, signal; signal.signal(signal.SIGUSR1, signal.SIG_IGN); os.killpg(0, signal.SIGUSR1)"
		wait $!' sh "$WORK/$_gk.ready" "$@"
}

export PYTHON
group_kill alone "$WORK/count" "$WORK/alone.ready"
expect_out alone <<EOF
SIGUSR1 x1
EOF
group_kill under-run "$VOLATILE_CMD" run -- "$WORK/count" "$WORK/under-run.ready"
expect_out under-run <<EOF
SIGUSR1 x1
EOF
exit 0
