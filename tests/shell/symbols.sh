#!/bin/sh
# libvolatile.so exports the names it interposes and its documented API,
# nothing else (everything else is -fvisibility=hidden): a helper that
# leaked would be a symbol every program it is preloaded into could bind
# to by accident. The list here is the contract; README lists it too.
. "$(dirname "$0")/lib.sh"
command -v nm >/dev/null 2>&1 || skip "nm (binutils) is not installed"

cat >"$WORK/want" <<'EOF'
ASharedMemory_create
ASharedMemory_getSize
ASharedMemory_setProt
_Fork
__fxstat
__fxstat64
__fxstatat
__fxstatat64
__lxstat
__lxstat64
__open64_2
__open_2
__openat64_2
__openat_2
__xstat
__xstat64
access
ashmem_create_region
clone
close
ashmem_get_size_region
ashmem_pin_region
ashmem_set_prot_region
ashmem_unpin_region
ashmem_valid
dup
dup2
dup3
eaccess
euidaccess
faccessat
fallocate
fallocate64
fcntl
fcntl64
fstat
fstat64
fstatat
fstatat64
ioctl
lstat
lstat64
mmap
mmap64
munmap
open
open64
openat
openat64
popen
posix_spawn
posix_spawnp
recvmmsg
recvmsg
sendmmsg
sendmsg
stat
stat64
statx
system
volatile_purge
volatile_stats
wordexp
EOF
# vfork is followed where the library has its few instructions of assembly
case $(uname -m) in x86_64) echo vfork >>"$WORK/want" ;; esac
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
say "$(wc -l <"$WORK/got") symbols exported, as documented, none called through the PLT"
exit 0
