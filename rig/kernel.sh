#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fetch Debian's kernel image for the guest (LCHAN_KERNEL, or KVER) without
# installing it: apt-get download + dpkg -x into ~/.cache/lchan/$KVER/root,
# then depmod.  No initramfs hooks run and the host's /boot and /lib/modules
# stay as they are.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

KVER=$(rig_kver)
dir=$LCHAN_CACHE/$KVER
if [ -f "$dir/root/.complete" ]; then
	exit 0
fi

mkdir -p "$dir"
exec {lockfd}>"$dir/.lock"
flock "$lockfd"
[ ! -f "$dir/root/.complete" ] || exit 0

tmp=$(mktemp -d "$dir/.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

download() {
	# As root apt drops to _apt for downloads, which cannot write into a
	# private temp dir; this dir is ours anyway.
	local opt=()
	[ "$(id -u)" -ne 0 ] || opt=(-o APT::Sandbox::User=root)
	(cd "$tmp" && apt-get -qq "${opt[@]}" download "linux-image-$KVER")
}

rig_log "downloading linux-image-$KVER"
if ! download; then
	# Lists older than the mirror: the image may have been superseded.
	rig_log "download failed; running apt-get update and retrying"
	rig_root apt-get update -qq || true
	download || rig_die "cannot download linux-image-$KVER (has the mirror moved on? run rig/setup.sh)"
fi

dpkg -x "$tmp"/linux-image-*.deb "$tmp/root"
[ -f "$tmp/root/boot/vmlinuz-$KVER" ] || rig_die "linux-image-$KVER has no boot/vmlinuz-$KVER"
depmod -b "$tmp/root" "$KVER"
touch "$tmp/root/.complete"
rm -rf "$dir/root"
mv "$tmp/root" "$dir/root"
rig_log "guest kernel ready in $dir/root"
# Superseded releases of this kernel (~400 MB each) are of no further use;
# the other kernels of rig/kernels keep theirs.
abi=$(rig_kernel_field "$(rig_kernel)" abi)
# A KVER that is not LCHAN_KERNEL's says nothing about which are old.
grep -E -q -x "$abi" <<<"$KVER" || exit 0
for old in "$LCHAN_CACHE"/*; do
	[ "$old" != "$dir" ] && [ -d "$old" ] || continue
	grep -E -q -x "$abi" <<<"${old##*/}" || continue
	rig_log "removing old $old"
	rm -rf "$old"
done
