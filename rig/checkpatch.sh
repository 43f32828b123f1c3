#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# checkpatch over the module and uapi sources, using checkpatch.pl from the
# guest kernel's cached linux-source (no kernel tree needed).  Clean means
# zero errors and zero warnings; CHECK-level notes are shown but do not fail.
#   rig/checkpatch.sh [FILE...]   (default: kmod/*.[ch] uapi/*.h)
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

src=$(rig_src_cache)
cd "$REPO"
if [ $# -gt 0 ]; then
	files=("$@")
else
	# Sources only: tracked or new, not ignored (skips kbuild's *.mod.c).
	mapfile -t files < <(git ls-files --cached --others --exclude-standard -- 'kmod/*.[ch]' 'uapi/*.h')
fi
[ "${#files[@]}" -gt 0 ] || rig_die "no files to check (kmod/*.[ch], uapi/*.h)"

# One perl process for all files; it prints a "total:" line per file.  Its
# exit status also counts CHECKs, so the totals decide.  Kernel version tests belong in kmod/lchan_compat.h and nowhere else: that
# rule is checked here, so checkpatch's own (meant for in-tree code, which
# has no versions to span) is off.
misplaced=$(grep -l 'LINUX_VERSION_CODE\|KERNEL_VERSION' "${files[@]}" | grep -v '^kmod/lchan_compat\.h$' || true)
out=$(perl "$src/scripts/checkpatch.pl" --no-tree -f --show-types \
	--ignore LINUX_VERSION_CODE "${files[@]}" 2>&1 || true)
totals=$(grep -E '^total: [0-9]+ errors, [0-9]+ warnings' <<<"$out" || true)
if [ "$(wc -l <<<"$totals")" != "${#files[@]}" ]; then
	printf '%s\n' "$out"
	rig_die "checkpatch did not report on every file"
fi
errors=$(awk '{e += $2} END {print e + 0}' <<<"$totals")
warnings=$(awk '{w += $4} END {print w + 0}' <<<"$totals")
if [ "$errors" != 0 ] || [ "$warnings" != 0 ] || grep -q '^CHECK:' <<<"$out"; then
	printf '%s\n' "$out"
fi
for f in $misplaced; do
	echo "$f: ERROR: a kernel version test outside kmod/lchan_compat.h"
	errors=$((errors + 1))
done
echo "checkpatch: ${#files[@]} files, $errors errors, $warnings warnings"
[ "$errors" = 0 ] && [ "$warnings" = 0 ]
