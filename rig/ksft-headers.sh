#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Put kselftest_harness.h and kselftest.h, and kselftest's runner
# (kselftest/runner.sh and the prefix.pl it uses), from the kernel's
# linux-source (LCHAN_KERNEL, or KVER: linux-source-6.1 or -6.12) into DIR.
# They come from the cache under ~/.cache/lchan/src/<version>/ (filled on
# first use together with checkpatch and siw); they are never committed.
#   rig/ksft-headers.sh --lacks   prints what is missing for that (the
#                                 package), nothing when it is there
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

if [ "${1:-}" = --lacks ]; then
	series=$(rig_src_series)
	if [ -z "$(rig_src_version "$series")" ] || [ ! -r "$(rig_src_tarball "$series")" ]; then
		echo "linux-source-$series (or KSFT_INC=<a kernel tree>/tools/testing/selftests)"
	fi
	exit 0
fi
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dst=$1
src=$(rig_src_cache)/tools/testing/selftests
mkdir -p "$dst/kselftest"
for h in kselftest_harness.h kselftest.h kselftest/runner.sh kselftest/prefix.pl; do
	# An identical copy is left alone, so make does not rebuild the
	# selftests for nothing; another kernel's gets a fresh mtime, so it
	# does rebuild them.
	cmp -s "$src/$h" "$dst/$h" || cp "$src/$h" "$dst/$h"
done
