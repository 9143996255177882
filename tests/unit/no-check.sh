#!/bin/sh
# SPDX-License-Identifier: MIT
# Stands for the unit tests when configure found no `check` framework.
echo "SKIP: no-check: the unit tests need check >= 0.9.10 (Debian: apt-get install check), which configure did not find; they are not built"
exit 77
