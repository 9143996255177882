#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""memfd_cache.py - a Python program's cache in a memfd, with volatile chunks.

Usage: volatile run -- python3 examples/memfd_cache.py [CMD [ARG...]]

The program renders CHUNKS chunks of a cache (the slow part: here bytes
derived from the chunk's number; in real life decoded images, parsed
files) into one memfd, then marks every chunk volatile: the system may
throw them away under memory pressure. Then it plays the pressure: it runs
CMD (for example `volatile purge --bytes 512K`), or, with no CMD, waits
for Enter while you run `volatile purge` from another terminal. Last, it
takes every chunk back with UNMARK, which says whether the chunk survived:
a purged chunk reads as zeros and is rendered again. Every chunk is then
checked against its first rendering, byte for byte.

Python's os module has no fallocate with a mode (os.posix_fallocate has
none), so the modes are called through ctypes: CDLL(None) looks fallocate
up in the process's global scope, where the library that `volatile run`
(or LD_PRELOAD) loads comes before libc. CDLL("libc.so.6").fallocate is
libc's own: with LD_PRELOAD alone the kernel answers it EOPNOTSUPP (under
`volatile run` its supervisor serves even that call, at ten times the
cost).

Each chunk is followed by a page that is never marked: adjacent marks
merge into one range (the 2012 semantics), and a merged range is purged
whole; the gap keeps every chunk a range of its own, purged oldest first.

Prints one line a chunk, "chunk N intact" or "chunk N purged,
regenerated", then "regenerated: N..." and "verified: CHUNKS chunks".
Exit status: 0; 1 if a chunk did not match its first rendering; 2 if the
memfd could not be made.
"""
import ctypes
import errno
import hashlib
import os
import subprocess
import sys

# <volatile.h>
FALLOC_FL_MARK_VOLATILE = 0x10000000
FALLOC_FL_UNMARK_VOLATILE = 0x20000000

CHUNKS = 8
CHUNK = 256 * 1024
PAGE = os.sysconf("SC_PAGE_SIZE")
STRIDE = CHUNK + PAGE  # a chunk, then a page never marked

_libc = ctypes.CDLL(None, use_errno=True)
_fallocate = _libc.fallocate
# int fallocate(int fd, int mode, off_t offset, off_t len); off_t is a
# long in a 64-bit process (and in a 32-bit one built without LFS)
_fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
_fallocate.restype = ctypes.c_int


def mark(fd, off, length):
    """MARK: True if the bytes are volatile now. False if volatile ranges
    are not available here (EOPNOTSUPP: no library) or the call failed:
    the bytes then simply stay pinned."""
    if _fallocate(fd, FALLOC_FL_MARK_VOLATILE, off, length) == 0:
        return True
    err = ctypes.get_errno()
    if err != errno.EOPNOTSUPP:
        print(f"mark: {os.strerror(err)}; kept pinned", file=sys.stderr)
    return False


def unmark(fd, off, length):
    """UNMARK: True if every byte is intact. False if some were purged,
    or if the call failed: their content is then unknown."""
    r = _fallocate(fd, FALLOC_FL_UNMARK_VOLATILE, off, length)
    if r < 0:
        print(f"unmark: {os.strerror(ctypes.get_errno())}; taken as purged", file=sys.stderr)
    return r == 0


def render(n):
    """The slow part: chunk n's bytes."""
    seed = hashlib.sha256(b"chunk %d" % n).digest()
    return (seed * (CHUNK // len(seed) + 1))[:CHUNK]


def main(argv):
    try:
        fd = os.memfd_create("memfd-cache")
    except OSError as e:
        print(f"memfd_create: {e.strerror}", file=sys.stderr)
        return 2
    os.ftruncate(fd, CHUNKS * STRIDE)
    digest = {}
    for n in range(CHUNKS):
        data = render(n)
        os.pwrite(fd, data, n * STRIDE)
        digest[n] = hashlib.sha256(data).hexdigest()

    # done with them for now: in the order of use, oldest first
    marked = [n for n in range(CHUNKS) if mark(fd, n * STRIDE, CHUNK)]
    if not marked:
        print("volatile ranges are not available: every chunk stays pinned")
    sys.stdout.flush()

    if argv:
        subprocess.run(argv, check=False)
    else:
        input("marked; purge now (volatile purge), then press Enter ")

    regenerated = []
    for n in range(CHUNKS):
        off = n * STRIDE
        if n not in marked or unmark(fd, off, CHUNK):
            print(f"chunk {n} intact")
            continue
        if os.pread(fd, CHUNK, off) == bytes(CHUNK):
            print(f"chunk {n} purged, regenerated")
        else:
            print(f"chunk {n} taken for purged, regenerated")
        os.pwrite(fd, render(n), off)
        regenerated.append(n)
    print("regenerated:", " ".join(map(str, regenerated)) or "none")

    bad = [n for n in range(CHUNKS)
           if hashlib.sha256(os.pread(fd, CHUNK, n * STRIDE)).hexdigest() != digest[n]]
    if bad:
        print("chunks that do not match their first rendering:", *bad)
        return 1
    print(f"verified: {CHUNKS} chunks")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
