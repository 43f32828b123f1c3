#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
# Host check: lchan(7) lists every sysfs attribute, no more and no fewer
# than the module defines and its ABI document describes.
#
#   the module:   kmod/lchan_sysfs.c, the entries of its attribute arrays
#                 (lchan_root_attrs, lchan_dev_attrs, lchan_chan_attrs),
#                 named by their __ATTR()/LCHAN_CHAN_ATTR() definitions
#   the document: Documentation/ABI/testing/sysfs-kernel-lchan, What:
#   the page:     man/lchan.7's "sysfs" subsection: after a line
#                 ".IR /sys/kernel/lchan/ :", ".IR /sys/kernel/lchan/devices/ dev /:"
#                 or ".IR /sys/kernel/lchan/channels/ id /:", each
#                 ".TP" followed by ".B NAME" is one attribute there
#
# Each attribute is compared as <root|dev|chan>/<name> in all three; any
# one missing from another is a failure.  The last line of output is the
# summary; exit status 0 pass, 1 fail.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$REPO" || exit 1

src=kmod/lchan_sysfs.c
doc=Documentation/ABI/testing/sysfs-kernel-lchan
page=man/lchan.7
for f in "$src" "$doc" "$page"; do
	[ -f "$f" ] || { echo "man-sysfs: FAIL: no $f"; exit 1; }
done

defined=$(perl -0777 -ne '
	my %name;	# C variable -> sysfs name
	while (/static struct kobj_attribute (\w+)\s*=\s*__ATTR(?:_RO)?\((\w+)/g) { $name{$1} = $2 }
	while (/^LCHAN_CHAN_ATTR\((\w+),/mg) { $name{"chan_$1_attr"} = $1 }
	my %kind = (lchan_root_attrs => "root", lchan_dev_attrs => "dev", lchan_chan_attrs => "chan");
	while (/static struct attribute \*(\w+)\[\]\s*=\s*\{(.*?)\};/sg) {
		my ($arr, $body) = ($1, $2);
		next unless $kind{$arr};
		while ($body =~ /&(\w+)\.attr/g) {
			print "$kind{$arr}/", ($name{$1} // "?$1"), "\n";
		}
	}' "$src" | sort)

documented=$(sed -n 's|^What:[[:space:]]*/sys/kernel/lchan/||p' "$doc" |
	sed -e '/^$/d' -e '/\/$/d' -e 's|^devices/<dev>/|dev/|' -e 's|^channels/<id>/|chan/|' \
		-e '/\//!s|^|root/|' | sort)

listed=$(perl -ne '
	if (/^\.SS\s+"?sysfs"?\s*$/) { $in = 1; next }
	next unless $in;
	last if /^\.S[HS]\b/;
	if (m{^\.IR?\s+/sys/kernel/lchan/(?:(devices|channels)/\s+\w+\s+/)?\s*[:,]?\s*$}) {
		$kind = !defined $1 ? "root" : $1 eq "devices" ? "dev" : "chan";
		next;
	}
	if ($tp && /^\.B\s+(\w+)\s*$/ && $kind) { print "$kind/$1\n" }
	$tp = /^\.TP/;' "$page" | sort)

errors=0
err() { echo "# $*"; errors=$((errors + 1)); }
count() { grep -c "^$1/" <<<"$2"; }
for k in root dev chan; do
	[ "$(count "$k" "$defined")" -gt 0 ] ||
		err "no $k attributes found in $src: has its layout changed? (update rig/check-man-sysfs.sh)"
	[ "$(count "$k" "$listed")" -gt 0 ] ||
		err "no $k attributes found in $page's sysfs subsection (see the format above)"
done
while read -r a; do
	[ -n "$a" ] || continue
	case $a in */\?*) err "$src: ${a#*/?} is in an attribute array but not defined"; continue ;; esac
	grep -qx "$a" <<<"$documented" || err "$a: defined in $src, not in $doc"
	grep -qx "$a" <<<"$listed" || err "$a: defined in $src, not listed in $page"
done <<<"$defined"
while read -r a; do
	[ -n "$a" ] || continue
	grep -qx "$a" <<<"$defined" || err "$a: in $doc, not defined in $src"
	grep -qx "$a" <<<"$listed" || err "$a: in $doc, not listed in $page"
done <<<"$documented"
while read -r a; do
	[ -n "$a" ] || continue
	grep -qx "$a" <<<"$defined" || err "$a: listed in $page, not defined in $src"
done <<<"$listed"
dups=$(uniq -d <<<"$listed")
[ -z "$dups" ] || err "listed twice in $page: $(tr '\n' ' ' <<<"$dups")"

if [ "$errors" != 0 ]; then
	echo "man-sysfs: FAIL: $errors problems"
	exit 1
fi
echo "man-sysfs: lchan(7) lists the $(count root "$defined") root, $(count dev "$defined") device and $(count chan "$defined") channel attributes of $src and $doc"
