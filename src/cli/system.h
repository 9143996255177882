/* SPDX-License-Identifier: MIT */
/*
 * system.h - the machine's daemon (DESIGN 22): `volatile daemon --system`
 * and `volatile purge --system`, run by root, and the worker each serves
 * a user through.
 *
 * Root maps no user's region and punches no user's file. For each user
 * with a region in its default place (DESIGN 9) it runs one worker: the
 * command itself, exec'd after fork with that user's uid and groups and
 * no capabilities, an empty environment, talking over a SOCK_SEQPACKET
 * socket on its fd 3. Root asks; the worker answers from its own region
 * with the library's own purge (DESIGN 13); root checks every answer
 * (vl_sys_answer_ok) and decides the machine's order from what passes.
 *
 *        root (daemon --system)                  worker (uid U, gid G)
 *   ask {REPORT}            ------------------>  open U's default region
 *                           <------------------  {oldest age, unpurged}
 *   pick the oldest region, the next one's age as its limit
 *   ask {PURGE, until, bytes} ---------------->  purge oldest first, not
 *                           <------------------  younger than until
 *
 * The datagrams, their checks and the pick are core/sysorder.h's.
 */
#ifndef VL_CLI_SYSTEM_H
#define VL_CLI_SYSTEM_H

#include "core/sysorder.h"

/*
 * The machine's daemon's file: root's, mode 0644 (every user's `status`
 * reads it), "PID\nSINCE\n", flock'ed by the daemon while it runs, its
 * mtime the last wake-up (as the user's, daemons.c).
 */
#define VL_SYS_DAEMON_FILE "/run/libvolatile-system.daemon"

/* `volatile system-worker`: serve asks on VL_SYS_FD until it closes (syswork.c). */
int cmd_system_worker(int argc, char **argv);

/* `volatile daemon --system ...` and `volatile purge --system ...` (system.c). */
int cmd_daemon_system(int argc, char **argv);
int cmd_purge_system(int argc, char **argv);

#endif
