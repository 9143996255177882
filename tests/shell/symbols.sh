#!/bin/sh
# SPDX-License-Identifier: MIT
# libvolatile.so exports the names it interposes and its documented API,
# nothing else (everything else is -fvisibility=hidden): a helper that
# leaked would be a symbol every program it is preloaded into could bind
# to by accident. The list, src/libvolatile.map (the version script the
# library is linked with), is the contract; doc/semantics.md (C API) and doc/ashmem.md list it too.
. "$(dirname "$0")/lib.sh"
# the library as installed, not the test suite's debug build (lib.sh)
VOLATILE_LIBRARY=$VOLATILE_RELEASE_LIBRARY
command -v nm >/dev/null 2>&1 || skip "nm (binutils) is not installed"

# the list is the version script the library is linked with; vfork is x86_64's only
map=${VL_TOP_SRCDIR:-$VL_TOP_BUILDDIR/..}/src/libvolatile.map
[ -r "$map" ] || fail "$map is not there"
sed -n 's/^	\([A-Za-z_][A-Za-z0-9_]*\);$/\1/p' "$map" >"$WORK/want"
[ "$(uname -m)" = x86_64 ] || sed -i '/^vfork$/d' "$WORK/want"
[ "$(wc -l <"$WORK/want")" -ge 60 ] || fail "$map lists only $(wc -l <"$WORK/want") names"
LC_ALL=C sort -o "$WORK/want" "$WORK/want"
nm -D --defined-only "$VOLATILE_LIBRARY" | awk 'NF == 3 && $2 != "A" { print $3 }' |
	LC_ALL=C sort -u >"$WORK/got" || fail "nm failed on $VOLATILE_LIBRARY"
if ! diff -u "$WORK/want" "$WORK/got" >"$WORK/diff"; then
	cat "$WORK/diff" >&2
	fail "the exported symbols differ from the contract (-: missing, +: leaked)"
fi
# ...and calls none of them itself: a name the library defines that is also
# one of its own relocations (a call through the PLT) would send the
# library's own call into its own hook (sys.h: the vl_raw_ layer).
command -v objdump >/dev/null 2>&1 || skip "objdump (binutils) is not installed"
objdump -R "$VOLATILE_LIBRARY" |
	awk '$2 ~ /JUMP_SLOT|GLOB_DAT/ { sub(/@.*/, "", $3); print $3 }' |
	LC_ALL=C sort -u >"$WORK/calls" || fail "objdump failed on $VOLATILE_LIBRARY"
LC_ALL=C comm -12 "$WORK/got" "$WORK/calls" >"$WORK/both"
[ ! -s "$WORK/both" ] ||
	fail "the library calls names it defines, through its own hooks: $(tr '\n' ' ' <"$WORK/both")"
# ...and none of glibc's cancellation points, or the stdio that may act as
# one (and their _FORTIFY_SOURCE names): the library calls none, with its
# raw system calls (sys.h) instead
# (reentry.c also disables cancellation for a call: a signal handler may
# call one, cancel-signal.sh).
cat >"$WORK/cancel" <<'EOF2'
__fgets_chk
__fprintf_chk
__fread_chk
__open64_2
__open_2
__openat64_2
__openat_2
__pread64_chk
__pread_chk
__printf_chk
__read_chk
accept
accept4
clock_nanosleep
close
connect
creat
epoll_pwait
epoll_wait
fallocate
fallocate64
fclose
fcntl
fcntl64
fdatasync
fdopen
fflush
fgets
fopen
fprintf
fputs
fread
fsync
fwrite
getline
lockf
msync
nanosleep
open
open64
open_by_handle_at
openat
openat64
pause
perror
poll
popen
ppoll
pread
pread64
preadv
printf
pselect
pthread_cond_timedwait
pthread_cond_wait
pthread_join
pthread_testcancel
puts
pwrite
pwrite64
pwritev
read
readv
recv
recvfrom
recvmsg
select
sem_timedwait
sem_wait
send
sendmsg
sendto
sigsuspend
sigtimedwait
sigwait
sigwaitinfo
sleep
sync_file_range
syslog
system
tcdrain
usleep
wait
wait3
wait4
waitid
waitpid
write
writev
EOF2
LC_ALL=C sort -o "$WORK/cancel" "$WORK/cancel"
LC_ALL=C comm -12 "$WORK/cancel" "$WORK/calls" >"$WORK/cancels"
[ ! -s "$WORK/cancels" ] ||
	fail "the library calls cancellation points (reentry.c): $(tr '\n' ' ' <"$WORK/cancels")"
# ...nor a function that keeps its state for the caller between calls
# (strtok's position, rand's seed...): a call here would move the host's.
printf '%s\n' asctime ctime drand48 gmtime localtime rand random srand srandom \
	strsignal strtok ttyname | LC_ALL=C sort >"$WORK/stateful"
LC_ALL=C comm -12 "$WORK/stateful" "$WORK/calls" >"$WORK/stateful.used"
[ ! -s "$WORK/stateful.used" ] ||
	fail "the library calls functions whose state is the host's: $(tr '\n' ' ' <"$WORK/stateful.used")"
say "$(wc -l <"$WORK/got") symbols exported, as documented, none called through the PLT, no cancellation point called"
exit 0
