#!/bin/sh
# SPDX-License-Identifier: MIT
# A MARK that finds the region full repairs the files whose lock a dead
# process holds (ops.c reserve_when_full, lock.c vl_repair_dead_holders;
# DESIGN 10): chunk-other-file.sh is the dead holder. Here the holder is
# alive but stopped, in the very step that makes a dead one's chunk worth
# repairing (its UNMARK gives a chunk back: the chunk PENDING of its file,
# DESIGN 10). Its lock must not be taken from it, nor its chunk: the full
# region's MARKs of another file fail ENOMEM (no room: the chunk is the
# live holder's), the lock word stays the holder's token, and once it goes
# on, its UNMARKs all say 0 (nothing was purged or repaired under it) and
# the chunk comes back: 8 ranges of the other file are made.
. "$(dirname "$0")/lib.sh"
need_cmd
. "$(dirname "$0")/chunk-lib.sh"
need_lockword

f=$WORK/f
g=$WORK/g

# made FILE NAME: marks_made, which must exit 0
made() {
	marks_made "$1" "$2"
	[ "$rc" -eq 0 ] || { show "$2"; fail "$2: exit status $rc"; }
}

new_region
mkfile "$f" 64K A
mkfile "$g" 64K G
made "$g" first
[ "$made" -eq 8 ] || fail "first: a region with room for 8 ranges made $made of g's 8"

# P, stopped (alive) as its UNMARK of f gives a chunk back, f's lock held
freer P "$f"
p_pid=$fpid

ok lw1 "$LOCKWORD" slot "$f" token "$p_pid"
slot=$(sed -n 's/^slot .* = //p' "$WORK/lw1.out")
token=$(sed -n 's/^token .* = //p' "$WORK/lw1.out")
case $slot$token in *none*|'') show lw1; fail "f has no record, or P no token" ;; esac
ok lw2 "$LOCKWORD" word "$slot"
word=$(sed -n 's/^word .* = //p' "$WORK/lw2.out")
say "f is record $slot, its lock word $word, P's token $token"
[ "$((word & 0x3fffffff))" -eq "$((token))" ] || {
	show lw2
	kill -KILL "$p_pid"
	fail "P stopped in f's UNMARK, yet f's lock word $word is not its token $token"
}

made "$g" while-stopped
ok lw3 "$LOCKWORD" word "$slot"
after=$(sed -n 's/^word .* = //p' "$WORK/lw3.out")
if [ "$((after & 0x3fffffff))" -ne "$((token))" ]; then
	show while-stopped
	kill -KILL "$p_pid"
	fail "a full region's MARK of g took f's lock from P, alive and stopped: word $word -> $after"
fi
[ "$made" -le 4 ] || {
	kill -KILL "$p_pid"
	fail "g made $made MARKs while P, alive, held the chunk it was giving back (4 at most: only g's own chunk is free)"
}
soft expect_line while-stopped "mark 32K 4K = -1 ENOMEM"

kill -CONT "$p_pid"
wait_bg P
[ "$rc" -eq 0 ] || { show P; fail "P: exit status $rc"; }
bad=$(grep -c '^unmark .* = [^0]' "$WORK/P.out")
[ "$bad" -eq 0 ] || { show P; fail "P's UNMARKs of f, its lock kept while stopped: $bad did not say 0"; }
made "$g" after
[ "$made" -eq 8 ] || fail "after: P went on and gave its chunk back, yet g made $made of 8"
exit $FAILED
