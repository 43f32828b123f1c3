#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fetch a Debian package for the guest without installing it on the host
# (nginx's install starts a web server there): apt-get download + dpkg -x
# into ~/.cache/lchan/unpacked/PKG/root, again when the candidate version
# changes.  The initramfs takes its programs from there.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

[ $# = 1 ] || rig_die "usage: $0 PKG"
pkg=$1
dir=$LCHAN_CACHE/unpacked/$pkg
version=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null | sed -n 's/^Version: //p' | head -n1)
[ -n "$version" ] || rig_die "apt knows no package $pkg"
if [ -f "$dir/root/.complete" ] && [ "$(cat "$dir/version" 2>/dev/null)" = "$version" ]; then
	exit 0
fi

mkdir -p "$dir"
exec {lockfd}>"$dir/.lock"
flock "$lockfd"
tmp=$(mktemp -d "$dir/.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# As root apt drops to _apt for downloads, which cannot write here.
opt=()
[ "$(id -u)" -ne 0 ] || opt=(-o APT::Sandbox::User=root)
(cd "$tmp" && apt-get -qq "${opt[@]}" download "$pkg=$version") ||
	rig_die "cannot download $pkg $version"
dpkg -x "$tmp/${pkg}_"*.deb "$tmp/root"
touch "$tmp/root/.complete"
rm -rf "$dir/root"
mv "$tmp/root" "$dir/root"
printf '%s\n' "$version" >"$dir/version"
rig_log "$pkg $version unpacked in $dir/root"
