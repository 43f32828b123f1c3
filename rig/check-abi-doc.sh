#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host check: Documentation/ABI/testing/sysfs-kernel-lchan is well formed
# (What:, Date:, KernelVersion:, Contact:, Description: in that order, each
# attribute (RO), (RW) or (WO)) and names the attributes of
# kmod/lchan_sysfs.c, each with its mode.  The guest test
# lchan_sysfs_doc_test compares the document with a live tree; this catches
# an undocumented attribute before any guest boots.
CHECK="abi-doc"
# shellcheck source-path=SCRIPTDIR source=checklib.sh
. "$(dirname "$0")/checklib.sh"

doc=Documentation/ABI/testing/sysfs-kernel-lchan
src=kmod/lchan_sysfs.c
[ -f "$doc" ] || check_fail "no $doc"
documented=$(check_sysfs_documented)
defined=$(check_sysfs_defined)
while read -r line; do err "$doc: ${line#error: }"; done < <(grep '^error:' <<<"$documented")
while read -r line; do err "$src: ${line#error: }"; done < <(grep '^error:' <<<"$defined")
documented=$(grep -v '^error:' <<<"$documented")
defined=$(grep -v '^error:' <<<"$defined")
ndef=$(grep -c . <<<"$defined")
[ "$ndef" -ge 20 ] || err "found only $ndef attributes in $src: has its layout changed? (update rig/checklib.sh)"

while read -r key mode; do
	[ -n "$key" ] || continue
	dmode=$(awk -v k="$key" '$1 == k { print $2 }' <<<"$documented")
	if [ -z "$dmode" ]; then
		err "$key is in $src but not documented in $doc"
	elif [ "$dmode" != "$mode" ]; then
		err "$key is $mode in $src but documented ($dmode)"
	fi
done <<<"$defined"
while read -r key _; do
	[ -n "$key" ] || continue
	awk -v k="$key" '$1 == k { f = 1 } END { exit !f }' <<<"$defined" ||
		err "$key is documented in $doc but $src does not define it"
done <<<"$documented"
check_done "$ndef attributes of $src documented, all (RO), entries well formed"
