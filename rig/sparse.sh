#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sparse over the module: `make -C $KDIR M=$REPO W=1 C=2 modules` (C=2 checks
# every source, built or not; W=1 adds the compiler's extra warnings).
# Clean means the build succeeds and neither sparse nor the compiler prints
# a warning or error.  Log: $B/sparse.log.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

rig_use_kernel
command -v sparse >/dev/null || rig_die "sparse is not installed (run rig/setup.sh)"
mkdir -p "$B"
log=$B/sparse.log
if ! make -C "$KDIR" M="$REPO" W=1 C=2 CHECK=sparse modules >"$log" 2>&1; then
	cat "$log"
	rig_die "module build under sparse failed (log: $log)"
fi
if grep -E ':[0-9]+(:[0-9]+)?: (warning|error):' "$log"; then
	echo "sparse: $(grep -c -E ':[0-9]+(:[0-9]+)?: (warning|error):' "$log") warnings/errors (log: $log)"
	exit 1
fi
echo "sparse: clean ($(grep -c '^ *CHECK ' "$log") files checked)"
