#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host check: bench/README.md is what rig/report/readme.py makes from the
# committed data in bench/<kernel>/ (make bench-readme), byte for byte.
# Only the text is compared: the plots come out differently with another
# gnuplot, so they are neither made nor compared here.
CHECK="bench-readme"
# shellcheck source-path=SCRIPTDIR source=checklib.sh
. "$(dirname "$0")/checklib.sh"

t=$(check_dir bench-readme-check)/README.md
rig_report readme bench "$t" || check_fail "rig/report/readme.py failed"
diff -u bench/README.md "$t" | head -n 40
[ "${PIPESTATUS[0]}" = 0 ] || check_fail "bench/README.md is not what make bench-readme makes from bench/*/"
echo "$CHECK: bench/README.md ($(wc -l <bench/README.md) lines) is what the data in bench/*/ makes"
