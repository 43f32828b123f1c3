#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host check: bench/README.md is what rig/report/readme.py makes from the
# committed data in bench/<kernel>/ (make bench-readme), byte for byte.
# Only the text is compared: the plots (bench/*.png) come out differently
# with another gnuplot, so they are neither made nor compared here.
# The last line of output is the summary; exit status 0 pass, 1 fail.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$REPO" || exit 1

t=$(mktemp) || exit 1
trap 'rm -f "$t"' EXIT
if ! rig_report readme bench "$t"; then
	echo "bench-readme: FAIL: rig/report/readme.py failed"
	exit 1
fi
if ! diff -u bench/README.md "$t" | head -n 40; then
	echo "bench-readme: FAIL: bench/README.md is not what make bench-readme makes from bench/*/"
	exit 1
fi
echo "bench-readme: bench/README.md ($(wc -l <bench/README.md) lines) is what the data in bench/*/ makes"
