# SPDX-License-Identifier: MIT
"""A user who took their own worker's socket, and lies (DESIGN 22, 18).

sysliar.py WORKER UID STATE [options]: takes fd 3 of the worker WORKER
(pidfd_getfd: what ptrace gives its user; run as root, it then drops to
UID), stops the worker, and answers root's asks itself with answers that
pass every check root can make: its oldest age an hour back. STATE is
written "ready" once it answers, then after each answer
"report R purge P cgroup C" (asks of each kind; C: REPORTs naming a
cgroup). Each answer is printed, with CLOCK_BOOTTIME (the clock of
/proc/uptime), on stdout.

  --purged N         a PURGE says N bytes purged in 1 range (default 0)
  --purge-delay S    each PURGE answered S seconds late (default 0)
  --cgroups-only     lie only to REPORTs naming a cgroup (they say 1 GiB
                     unpurged); other asks say nothing is unpurged
  --cg-report-delay S  each REPORT naming a cgroup answered S seconds late
"""
import argparse
import ctypes
import os
import signal
import socket
import struct
import time

CLOCK_MONOTONIC_COARSE = 6  # the age clock (age.h), the host's
CLOCK_BOOTTIME = 7
REPORT, PURGE = 1, 2


def take_socket(worker, uid):
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(worker)
    fd = libc.syscall(438, pidfd, 3, 0)  # pidfd_getfd
    if fd < 0:
        raise SystemExit("pidfd_getfd: " + os.strerror(ctypes.get_errno()))
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    os.kill(worker, signal.SIGSTOP)
    return socket.socket(fileno=fd)


def hour_back():
    now = int(time.clock_gettime(CLOCK_MONOTONIC_COARSE) * 1000)
    return (now - 3600 * 1000) & 0xffffffff or 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("worker", type=int)
    ap.add_argument("uid", type=int)
    ap.add_argument("state")
    ap.add_argument("--purged", type=int, default=0)
    ap.add_argument("--purge-delay", type=float, default=0)
    ap.add_argument("--cgroups-only", action="store_true")
    ap.add_argument("--cg-report-delay", type=float, default=0)
    a = ap.parse_args()
    s = take_socket(a.worker, a.uid)
    asks = {REPORT: 0, PURGE: 0, "cgroup": 0}
    with open(a.state, "w") as f:
        f.write("ready\n")
    while True:
        # an ask: its fixed part (struct vl_sys_ask up to cgroup[]), then cg_len bytes of path
        q = s.recv(8192)
        if len(q) < 32:
            break
        magic, op, seq, _until, _nbytes, _cg_version, cg_len = struct.unpack("=IIIIQII", q[:32])
        asks[op] = asks.get(op, 0) + 1
        on_cgroup = op == REPORT and cg_len > 0
        if on_cgroup:
            asks["cgroup"] += 1
            time.sleep(a.cg_report_delay)
        if op == PURGE:
            time.sleep(a.purge_delay)
        oldest, unpurged, purged, ranges = 0, 0, 0, 0
        if on_cgroup or not a.cgroups_only:
            oldest, unpurged = hour_back(), (1 << 30 if on_cgroup else 1 << 40)
        if op == PURGE and not a.cgroups_only and a.purged:
            purged, ranges = a.purged, 1
        s.send(struct.pack("=IIiIQQII", magic, seq, 0, oldest, unpurged, purged, ranges, 0))
        with open(a.state, "w") as f:
            f.write("report %d purge %d cgroup %d\n" % (asks[REPORT], asks[PURGE], asks["cgroup"]))
        print("%.3f op %d cg %d answered" % (time.clock_gettime(CLOCK_BOOTTIME), op, cg_len),
              flush=True)


main()
