#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host check: the DKMS package builds the same module as `make`.
#
# Runs `make dkms-install` and `make dkms-uninstall` against the Debian
# headers the rig uses (rig/kver.sh), with private DKMS trees under
# build/dkms so the machine's own /usr/src, /var/lib/dkms and /lib/modules
# are left alone, then compares the installed module with kmod/lchan.ko from
# `make module`: modinfo's vermagic, depends, name, license and version (the
# tree's, VERSION), and the CRCs of the kernel symbols it uses
# (modversions).  Also `make modules_install INSTALL_MOD_PATH=...`.
# Skips without dkms, or when not root and sudo asks for a password (dkms
# insists on root).
CHECK=dkms
# shellcheck source-path=SCRIPTDIR source=checklib.sh
. "$(dirname "$0")/checklib.sh"

rig_use_kernel || exit 1
version=$(cat VERSION)
command -v dkms >/dev/null || check_skip "dkms is not installed (rig/setup.sh installs the Debian package)"
[ -f "$KDIR/Makefile" ] || check_skip "no kernel headers in $KDIR"
SUDO=()
if [ "$(id -u)" != 0 ]; then
	sudo -n true 2>/dev/null || check_skip "dkms needs root and sudo asks for a password"
	SUDO=(sudo -n)
fi

t=$(check_dir dkms)
log=$t/log
mkdir -p "$t/src" "$t/tree" "$t/modules/$KVER" "$t/stage"
# --no-depmod: depmod would write into the system's /lib/modules.  The
# signing key dkms creates on first use goes to the private tree too.
flags=(--dkmstree "$t/tree" --sourcetree "$t/src" --installtree "$t/modules" --no-depmod)
export mok_signing_key=$t/mok.key mok_certificate=$t/mok.pub

run() { # CMD...
	echo "+ $*" >>"$log"
	check_run "$log" "$*" "$@"
}

run make --no-print-directory module KDIR="$KDIR" KVER="$KVER"
ref=kmod/lchan.ko
[ -f "$ref" ] || check_fail "make module left no $ref"

run "${SUDO[@]}" make --no-print-directory dkms-install KDIR="$KDIR" KVER="$KVER" \
	DKMS_SRCTREE="$t/src" DKMS_KVER="$KVER" DKMS_FLAGS="${flags[*]}"
installed=$(find "$t/modules/$KVER" -name 'lchan.ko*' | head -n1)
[ -n "$installed" ] || check_fail "dkms install put no lchan.ko under $t/modules/$KVER"
"${SUDO[@]}" dkms status "${flags[@]}" lchan >>"$log" 2>&1
grep -q "lchan/.*$KVER.*installed" "$log" || check_fail "dkms status does not say installed"

differ=0
for field in vermagic depends name license version; do
	a=$(modinfo -F "$field" "$ref")
	b=$(modinfo -F "$field" "$installed")
	echo "$field: make '$a' dkms '$b'" >>"$log"
	if [ -z "$a" ] || [ "$a" != "$b" ]; then
		echo "# $field differs: make '$a', dkms '$b'"
		differ=1
	fi
done
if ! cmp -s <(modprobe --dump-modversions "$ref") <(modprobe --dump-modversions "$installed"); then
	echo "# the symbol CRCs (modversions) differ"
	differ=1
fi
[ "$(modprobe --dump-modversions "$ref" | wc -l)" -gt 10 ] || { echo "# $ref has no modversions"; differ=1; }
[ "$differ" = 0 ] || check_fail "the DKMS module is not the one make builds"
[ "$(modinfo -F version "$ref")" = "$version" ] || check_fail "modinfo gives version '$(modinfo -F version "$ref")', VERSION $version"

run "${SUDO[@]}" make --no-print-directory dkms-uninstall KDIR="$KDIR" KVER="$KVER" \
	DKMS_SRCTREE="$t/src" DKMS_FLAGS="${flags[*]}"
[ -z "$(find "$t/modules" -name 'lchan.ko*')" ] || check_fail "dkms remove left the module installed"
[ ! -e "$t/src/lchan-$version" ] ||
	check_fail "dkms-uninstall left the sources"
[ ! -e "$t/tree/lchan" ] || [ -z "$(ls -A "$t/tree/lchan")" ] || check_fail "dkms remove left its tree"

# kbuild's modules_install into a staging root.
run make --no-print-directory modules_install KDIR="$KDIR" KVER="$KVER" INSTALL_MOD_PATH="$t/stage"
staged=$(find "$t/stage/lib/modules/$KVER" -name 'lchan.ko*' | head -n1)
[ -n "$staged" ] || check_fail "modules_install put no lchan.ko under $t/stage"
[ "$(modinfo -F vermagic "$staged")" = "$(modinfo -F vermagic "$ref")" ] ||
	check_fail "modules_install installed another module"

echo "$CHECK: add/build/install/remove for $KVER; vermagic, depends, version $version, symbol CRCs match make's; modules_install ok"
