#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile run -- X` is X as far as X's own process can tell, but for
# what run is there to add (doc/wrappers.md; DESIGN 21): each check runs
# X directly and under run and compares.
#   - environment: run adds LD_PRELOAD (its library in front, an
#     existing value kept after it) and, with its supervisor,
#     VOLATILE_RUN_REGION and VOLATILE_SECCOMP_FILTERS; every other
#     variable arrives byte for byte (env -0), odd values included;
#   - working directory, umask, every limit (ulimit -a, soft and hard),
#     nice value, process group, session, controlling terminal and its
#     foreground group: unchanged;
#   - stdin, stdout and stderr are the caller's files (/proc/PID/fd), and
#     nothing of run keeps them open: $(volatile run -- sh -c 'sleep &')
#     returns while the sleep, its output elsewhere, runs on;
#   - CMD's exit status passes through, run's own failures are 127 (not
#     found), 126 (cannot be executed) and 125 (a bad option), one line;
#   - no_new_privs is set only where the supervisor is (its filter needs
#     it).
. "$(dirname "$0")/lib.sh"

need_cmd
need_python

# ---- environment --------------------------------------------------------------
nl='
'
odd_env() {
	env "WEIRD_SPACES=a  b	c" "WEIRD_NEWLINE=one${nl}two" "WEIRD_EQUALS=x=y=z" WEIRD_EMPTY= \
		"WEIRD_BYTES=$(printf '\377\001')" "$@"
}
cmp_env() {
	# cmp_env NAME: $WORK/NAME.direct and NAME.run, two `env -0` outputs
	"$PYTHON" - "$WORK/$1.direct" "$WORK/$1.run" "$2" <<'PY'
import sys
def load(p):
    out = {}
    for item in open(p, "rb").read().split(b"\0"):
        if item:
            k, v = item.split(b"=", 1)
            out[k] = v
    return out
direct, run, supervised = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3] == "yes"
bad = []
added = {b"LD_PRELOAD"} | ({b"VOLATILE_RUN_REGION", b"VOLATILE_SECCOMP_FILTERS"} if supervised else set())
for k in sorted(set(direct) | set(run)):
    if k in added:
        continue
    if direct.get(k) != run.get(k):
        bad.append("%r: %r directly, %r under run" % (k, direct.get(k), run.get(k)))
for k in sorted(added - {b"LD_PRELOAD"}):
    if k not in run:
        bad.append("%r: not set by run" % k)
pre = run.get(b"LD_PRELOAD", b"")
old = direct.get(b"LD_PRELOAD")
if b"libvolatile" not in pre.split(b":")[0]:
    bad.append("LD_PRELOAD does not begin with the library: %r" % pre)
if old is not None and not pre.endswith(b":" + old):
    bad.append("LD_PRELOAD %r does not keep %r after the library" % (pre, old))
for b in bad:
    print("run-wrapper: environment: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}
sup=no
supervised && sup=yes
odd_env timeout "$VL_TIMEOUT" env -0 >"$WORK/env.direct" || fail "env -0 directly"
odd_env timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run -- env -0 >"$WORK/env.run" ||
	fail "env -0 under run: exit status $?"
cmp_env env "$sup" || fail "the environment under run differs from the direct one (above)"
# an LD_PRELOAD of the caller's is kept, after run's library (libc,
# harmless to load twice)
libc=$(awk '$6 ~ /\/libc[.-]/ { print $6; exit }' /proc/self/maps)
[ -r "$libc" ] || fail "cannot find libc in awk's own maps: '$libc'"
odd_env LD_PRELOAD="$libc" timeout "$VL_TIMEOUT" env -0 >"$WORK/envp.direct" ||
	fail "env -0 directly"
odd_env LD_PRELOAD="$libc" timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run -- env -0 \
	>"$WORK/envp.run" || fail "env -0 under run: exit status $?"
cmp_env envp "$sup" || fail "the environment under run, with an LD_PRELOAD, differs (above)"

# ---- cwd, umask, limits, nice, group, session, terminal -----------------------------
# (timeout --foreground: the command stays in our process group, as it
# would without timeout)
# shellcheck disable=SC2016 # for the inner sh
probe='cd_=$(pwd); echo "cwd $cd_"; echo "umask $(umask)"; ulimit -a; ulimit -H -a
set -- $(sed "s/.*) //" /proc/$$/stat)
echo "nice ${17} pgrp $3 session $4 tty $5 tpgid $6"'
mkdir "$WORK/a dir" || fail "mkdir"
(
	cd "$WORK/a dir" || exit 1
	umask 0027
	# shellcheck disable=SC3045 # dash and bash have ulimit -S
	ulimit -S -n 200
	# shellcheck disable=SC3045
	ulimit -S -c 0
	nice -n 3 timeout --foreground "$VL_TIMEOUT" sh -c "$probe" >"$WORK/proc.direct" 2>&1 || exit 1
	nice -n 3 timeout --foreground "$VL_TIMEOUT" "$VOLATILE_CMD" run -- sh -c "$probe" \
		>"$WORK/proc.run" 2>&1
) || fail "the probe of cwd, umask, limits and nice failed: $(cat "$WORK/proc.run" 2>/dev/null)"
if ! grep -q "^cwd $WORK/a dir\$" "$WORK/proc.direct" || ! grep -q '^umask 0027$' "$WORK/proc.direct"; then
	cat "$WORK/proc.direct" >&2
	fail "the direct probe is not what was set up"
fi
diff -u "$WORK/proc.direct" "$WORK/proc.run" >"$WORK/proc.diff" ||
	{ cat "$WORK/proc.diff" >&2; fail "cwd, umask, limits, nice, group, session or terminal differ under run (- direct, + run)"; }

# ---- stdin, stdout, stderr ------------------------------------------------------------
# shellcheck disable=SC2016 # for the inner sh
fds='echo "$(readlink /proc/$$/fd/0) $(readlink /proc/$$/fd/1) $(readlink /proc/$$/fd/2)" >"$1"'
: >"$WORK/in"
timeout "$VL_TIMEOUT" sh -c "$fds" sh "$WORK/fds.direct" <"$WORK/in" >"$WORK/o.direct" 2>"$WORK/e.direct" ||
	fail "the direct probe of stdio failed"
timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run -- sh -c "$fds" sh "$WORK/fds.run" <"$WORK/in" \
	>"$WORK/o.direct" 2>"$WORK/e.direct" || fail "the probe of stdio under run failed: exit status $?"
expect_eq "stdin, stdout and stderr under run" "$(cat "$WORK/fds.run")" "$(cat "$WORK/fds.direct")"
expect_eq "the files themselves" "$(cat "$WORK/fds.direct")" "$WORK/in $WORK/o.direct $WORK/e.direct"
# nothing of run keeps stdout open: the substitution ends with CMD, while
# the background sleep (its output elsewhere) still runs
s0=$(date +%s)
spid=$(timeout "$VL_TIMEOUT" "$VOLATILE_CMD" run -- sh -c 'sleep 60 >/dev/null 2>&1 </dev/null & echo $!')
s1=$(date +%s)
case $spid in '' | *[!0-9]*) fail "no pid of the background sleep: '$spid'" ;; esac
BG_PIDS="$BG_PIDS $spid"
kill -0 "$spid" 2>/dev/null || fail "the sleep is gone: \$(...) waited $((s1 - s0)) s for it"
[ $((s1 - s0)) -lt "$VL_TIMEOUT" ] || fail "\$(volatile run -- sh -c 'sleep 60 >/dev/null &') took $((s1 - s0)) s"
kill "$spid"

# ---- exit statuses ---------------------------------------------------------------------
for st in 0 1 2 3 124 125 126 127 128 255; do
	run "x$st" vol run -- sh -c "exit $st"
	[ "$rc" -eq "$st" ] || { show "x$st"; fail "CMD exits $st: run exits $rc"; }
done
: >"$WORK/notexec"
chmod 0644 "$WORK/notexec"
# run's own failures: as env(1) (the contract), one line each (a PATH of
# directories we may search: one we may not makes sh and env(1) say 126)
PATH=/usr/bin:/bin
export PATH
for c in "127 $WORK/nonexistent" "127 no-such-command-here" "126 $WORK/notexec" "126 $WORK"; do
	want=${c%% *}
	what=${c#* }
	run own vol run -- "$what"
	[ "$rc" -eq "$want" ] || { show own; fail "volatile run -- $what: exit status $rc, want $want"; }
	[ "$(wc -l <"$WORK/own.err")" -eq 1 ] || { show own; fail "volatile run -- $what: not one line"; }
	# the shell says the same number
	run shown timeout "$VL_TIMEOUT" sh -c 'exec "$@"' sh "$what"
	[ "$rc" -eq "$want" ] || { show shown; fail "sh -c 'exec $what': exit status $rc, want $want"; }
done
# found in PATH only where it may not be run (no x bit; a directory), or
# behind a directory of PATH run may not search: execvp's EACCES, 126, as
# sh says; and a directory of that name before the program: searched on
mkdir -p "$WORK/bin/dirprog" "$WORK/shut" || fail "mkdir $WORK/bin"
: >"$WORK/bin/noxprog"
chmod 0644 "$WORK/bin/noxprog"
: >"$WORK/shut/shutprog"
chmod 0755 "$WORK/shut/shutprog"
chmod 0 "$WORK/shut"
PATH=$WORK/shut:$WORK/bin:/usr/bin:/bin
shut=126
[ "$(id -u)" -eq 0 ] && shut=0 # root searches any directory: shutprog runs
# shutprog is empty: exec's ENOEXEC, which execvp and sh answer by running it with sh
for c in "126 noxprog" "126 dirprog" "$shut shutprog"; do
	want=${c%% *}
	what=${c#* }
	run shown timeout "$VL_TIMEOUT" sh -c 'exec "$@"' sh "$what"
	[ "$rc" -eq "$want" ] || { show shown; fail "sh -c 'exec $what' (in PATH): exit status $rc, want $want"; }
	run own vol run -- "$what"
	[ "$rc" -eq "$want" ] || { show own; fail "volatile run -- $what (in PATH): exit status $rc, want $want, as sh"; }
done
chmod 0755 "$WORK/shut"
mkdir "$WORK/bin2" && mkdir "$WORK/bin2/true" || fail "mkdir $WORK/bin2"
PATH=$WORK/bin2:/usr/bin:/bin
run own vol run -- true
[ "$rc" -eq 0 ] || { show own; fail "volatile run -- true, a directory named true first in PATH: exit status $rc, want 0 (execvp searches on)"; }
PATH=/usr/bin:/bin
run own vol run --no-such-option -- true
[ "$rc" -eq 125 ] || { show own; fail "volatile run --no-such-option: exit status $rc, want 125"; }
[ "$(wc -l <"$WORK/own.err")" -eq 1 ] || { show own; fail "volatile run --no-such-option: not one line"; }

# ---- no_new_privs -----------------------------------------------------------------------
nnp_direct=$(timeout "$VL_TIMEOUT" sh -c 'grep "^NoNewPrivs:" /proc/$$/status')
nnp_run=$(vol run -- sh -c 'grep "^NoNewPrivs:" /proc/$$/status')
if [ "$sup" = yes ]; then
	expect_eq "no_new_privs under run's supervisor" "$nnp_run" "NoNewPrivs:	1"
else
	expect_eq "no_new_privs under run without a supervisor" "$nnp_run" "$nnp_direct"
fi
exit 0
