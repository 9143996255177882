/* SPDX-License-Identifier: MIT */
/*
 * compiler.h - what the library asks of the compiler.
 *
 * VL_COLD marks the slow way out of a hot function (a repair, a purge, the
 * first look at a file): kept out of line, so that the hot function's
 * frame holds only what the common case needs. A MARK+UNMARK pair passes
 * through some twenty functions; their prologues were a tenth of its
 * instructions while every one of them saved registers for a branch the
 * pair never takes.
 */
#ifndef VL_CORE_COMPILER_H
#define VL_CORE_COMPILER_H

#define VL_COLD __attribute__((cold, noinline))

/*
 * VL_INLINE marks a helper of a hot function that the compiler's size
 * heuristics leave out of line although its only hot caller is in the
 * same file (pool.c's commit): a static function, inlined always.
 */
#define VL_INLINE inline __attribute__((always_inline))

#endif
