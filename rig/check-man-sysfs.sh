#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
# Host check: lchan(7) lists every sysfs attribute, no more and no fewer
# than kmod/lchan_sysfs.c defines and its ABI document describes, each as
# <root|dev|chan|link>/<name>.  The page's "sysfs" subsection: after a
# line ".IR /sys/kernel/lchan/ :", ".IR /sys/kernel/lchan/devices/ dev /:",
# ".IR /sys/kernel/lchan/channels/ id /:" or
# ".IR /sys/kernel/lchan/links/ n /:", each ".TP" followed by ".B NAME"
# is one attribute there.
CHECK="man-sysfs"
# shellcheck source-path=SCRIPTDIR source=checklib.sh
. "$(dirname "$0")/checklib.sh"

src=kmod/lchan_sysfs.c
doc=Documentation/ABI/testing/sysfs-kernel-lchan
page=man/lchan.7
for f in "$src" "$doc" "$page"; do
	[ -f "$f" ] || check_fail "no $f"
done

defined=$(check_sysfs_defined)
while read -r line; do err "$src: ${line#error: }"; done < <(grep '^error:' <<<"$defined")
defined=$(grep -v '^error:' <<<"$defined" | cut -d' ' -f1)
# Its format is check-abi-doc's concern: its attributes alone.
documented=$(check_sysfs_documented | grep -v '^error:' | cut -d' ' -f1)
listed=$(perl -ne '
	if (/^\.SS\s+"?sysfs"?\s*$/) { $in = 1; next }
	next unless $in;
	last if /^\.S[HS]\b/;
	if (m{^\.IR?\s+/sys/kernel/lchan/(?:(devices|channels|links)/\s+\w+\s+/)?\s*[:,]?\s*$}) {
		$kind = !defined $1 ? "root" : $1 eq "devices" ? "dev" :
			$1 eq "links" ? "link" : "chan";
		next;
	}
	if ($tp && /^\.B\s+(\w+)\s*$/ && $kind) { print "$kind/$1\n" }
	$tp = /^\.TP/;' "$page" | sort)

count() { grep -c "^$1/" <<<"$2"; }
for k in root dev chan link; do
	[ "$(count "$k" "$defined")" -gt 0 ] ||
		err "no $k attributes found in $src: has its layout changed? (update rig/checklib.sh)"
	[ "$(count "$k" "$listed")" -gt 0 ] ||
		err "no $k attributes found in $page's sysfs subsection (see the format above)"
done
# Each attribute of WHAT (found FROM) that OTHER lacks.
lacks() { # WHAT FROM OTHER WHERE
	while read -r a; do
		[ -z "$a" ] || grep -qx "$a" <<<"$3" || err "$a: $2, not $4"
	done <<<"$1"
}
lacks "$defined" "defined in $src" "$documented" "in $doc"
lacks "$defined" "defined in $src" "$listed" "listed in $page"
lacks "$documented" "in $doc" "$defined" "defined in $src"
lacks "$documented" "in $doc" "$listed" "listed in $page"
lacks "$listed" "listed in $page" "$defined" "defined in $src"
dups=$(uniq -d <<<"$listed")
[ -z "$dups" ] || err "listed twice in $page: $(tr '\n' ' ' <<<"$dups")"
check_done "lchan(7) lists the $(count root "$defined") root, $(count dev "$defined") device, $(count chan "$defined") channel and $(count link "$defined") link attributes of $src and $doc"
