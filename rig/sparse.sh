#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sparse over the module: `make -C $KDIR M=DIR W=1 C=2 modules` (C=2 checks
# every source, built or not; W=1 adds the compiler's extra warnings), DIR
# a copy of the module's sources in $B/sparse/$KVER, so that kmod/lchan.ko
# is never rebuilt under a guest that is about to load it (make check runs
# this beside the guests).  Clean means the build succeeds and neither
# sparse nor the compiler prints a warning or error.  Log: $B/sparse.log.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

rig_use_kernel
command -v sparse >/dev/null || rig_die "sparse is not installed (run rig/setup.sh)"
mkdir -p "$B"
log=$B/sparse.log
tree=$B/sparse/$KVER
rm -rf "$tree"
mkdir -p "$tree"
cd "$REPO"
mapfile -t sources < <(git ls-files --cached --others --exclude-standard -- 'kmod/*.[ch]')
cp -p --parents VERSION Kbuild kmod/Kbuild uapi/lchan.h "${sources[@]}" "$tree/"
if ! make -C "$KDIR" M="$tree" W=1 C=2 CHECK=sparse modules >"$log" 2>&1; then
	cat "$log"
	rig_die "module build under sparse failed (log: $log)"
fi
if grep -E ':[0-9]+(:[0-9]+)?: (warning|error):' "$log"; then
	echo "sparse: $(grep -c -E ':[0-9]+(:[0-9]+)?: (warning|error):' "$log") warnings/errors (log: $log)"
	exit 1
fi
echo "sparse: clean ($(grep -c '^ *CHECK ' "$log") files checked)"
