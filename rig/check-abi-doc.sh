#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host check: Documentation/ABI/testing/sysfs-kernel-lchan is well formed
# and names the same attributes as the module's source.
#
#  - every entry has What:, Date:, KernelVersion:, Contact: and
#    Description:, in that order; every attribute says (RO), (RW) or (WO)
#  - the attributes of kmod/lchan_sysfs.c (the root, device and channel
#    attribute arrays) and the documented ones are the same, and a
#    read-only attribute (mode 0444, __ATTR_RO) is documented (RO)
#
# The guest test lchan_sysfs_doc_test compares the document with a live
# tree; this catches an undocumented attribute before any guest boots.
# The last line of output is the summary; exit status 0 pass, 1 fail.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$REPO" || exit 1

doc=Documentation/ABI/testing/sysfs-kernel-lchan
src=kmod/lchan_sysfs.c
[ -f "$doc" ] || { echo "abi-doc: FAIL: no $doc"; exit 1; }

# "<kind>/<name> <RO|RW|WO|?>" for each documented attribute, where kind is
# root, dev or chan; format errors as "error: ...".
documented=$(perl -ne '
	BEGIN { @want = qw(What Date KernelVersion Contact Description); }
	sub flush {
		return unless @whats;
		my $order = join(" ", @fields);
		print "error: entry $whats[0]: fields are \"$order\", not \"@want\"\n"
			unless $order eq "@want";
		for my $w (@whats) {
			next if $w =~ m{/$};
			my $k;
			if ($w =~ m{^/sys/kernel/lchan/([^/<]+)$}) { $k = "root/$1" }
			elsif ($w =~ m{^/sys/kernel/lchan/devices/<dev>/([^/]+)$}) { $k = "dev/$1" }
			elsif ($w =~ m{^/sys/kernel/lchan/channels/<id>/([^/]+)$}) { $k = "chan/$1" }
			else { print "error: unexpected What: $w\n"; next }
			print "$k ", ($mode // "?"), "\n";
		}
		@whats = (); @fields = (); undef $mode; $desc = 0;
	}
	if (/^What:\s*(\S+)/) {
		flush() if $desc;
		push @whats, $1;
		push @fields, "What" if !@fields;
	} elsif (/^(Date|KernelVersion|Contact|Description):/) {
		push @fields, $1;
		$desc = 1 if $1 eq "Description";
	}
	$mode //= $1 if $desc && /\((RO|RW|WO)\)/;
	END { flush() }' "$doc" | sort)

# The same from the source: the attribute arrays and their definitions.
defined=$(perl -0777 -ne '
	my %name;	# C variable -> [sysfs name, mode]
	while (/static struct kobj_attribute (\w+)\s*=\s*__ATTR_RO\((\w+)\)/g) { $name{$1} = [$2, "RO"] }
	while (/static struct kobj_attribute (\w+)\s*=\s*__ATTR\((\w+),\s*(0\d+)/g) {
		my ($var, $attr, $perm) = ($1, $2, $3);
		$name{$var} = [$attr, $perm =~ /^0[0-4]{3}$/ ? "RO" : "RW"];
	}
	while (/^LCHAN_CHAN_ATTR\((\w+),/mg) { $name{"chan_$1_attr"} = [$1, "RO"] }
	my %kind = (lchan_root_attrs => "root", lchan_dev_attrs => "dev", lchan_chan_attrs => "chan");
	while (/static struct attribute \*(\w+)\[\]\s*=\s*\{(.*?)\};/sg) {
		my ($arr, $body) = ($1, $2);
		next unless $kind{$arr};
		while ($body =~ /&(\w+)\.attr/g) {
			my $n = $name{$1} or do { print "error: $arr: no definition of $1\n"; next };
			print "$kind{$arr}/$n->[0] $n->[1]\n";
		}
	}' "$src" | sort)

errors=0
err() { echo "# $*"; errors=$((errors + 1)); }
while read -r line; do err "$doc: ${line#error: }"; done < <(grep '^error:' <<<"$documented")
while read -r line; do err "$src: ${line#error: }"; done < <(grep '^error:' <<<"$defined")
documented=$(grep -v '^error:' <<<"$documented")
defined=$(grep -v '^error:' <<<"$defined")
ndef=$(grep -c . <<<"$defined")
[ "$ndef" -ge 20 ] || err "found only $ndef attributes in $src: has its layout changed? (update rig/check-abi-doc.sh)"

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

if [ "$errors" != 0 ]; then
	echo "abi-doc: FAIL: $errors problems"
	exit 1
fi
echo "abi-doc: $ndef attributes of $src documented, all (RO), entries well formed"
