#!/bin/sh
# SPDX-License-Identifier: MIT
# The libFuzzer target of MARK/UNMARK/purge against the model: a short run (run-fuzz.sh).
exec "${SHELL:-/bin/sh}" "$VL_TOP_SRCDIR/tests/fuzz/run-fuzz.sh" ranges
