#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build (once) the debug guest kernel: linux-source-6.1 with KASAN, lockdep,
# DEBUG_OBJECTS, kmemleak and rxe/siw as modules (rig/debug.config),
# plus the fixes in rig/debug-patches/ (bugs of the 6.1 tree that the
# checkers report, none of them in lchan).
#
#   rig/debug-kernel.sh            build if needed; print the tree
#   rig/debug-kernel.sh --tree     print the built tree, or fail
#   rig/debug-kernel.sh --release  print its kernel release, or fail
#
# The tree with its objects (~2 GB) is cached in
# ~/.cache/lchan/debug-<source version>-<hash>/linux, the hash covering this
# script, debug.config and the patches; a second run with nothing changed
# does nothing.
# bzImage and the modules are installed like kernel.sh's Debian image, into
# ~/.cache/lchan/<release>/root, so initramfs.sh and run-vm.sh take it as
# KVER=<release> (LCHAN_KERNEL=debug in run-vm.sh).  Compiles go through
# ccache (~/.cache/lchan/ccache): a changed config rebuilds in minutes.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

mode=build
case ${1:-} in
'') ;;
--tree) mode=tree ;;
--release) mode=release ;;
*) echo "usage: $0 [--tree|--release]" >&2; exit 2 ;;
esac

config=$RIG_DIR/debug.config
srcver=$(rig_src_version 6.1)
tarball=$(rig_src_tarball 6.1)
[ -n "$srcver" ] && [ -r "$tarball" ] ||
	rig_die "linux-source-6.1 is not installed (run rig/setup.sh)"
# Fixes to the 6.1 tree that the checkers need, applied in name order,
# then the siw fixes every guest's siw.ko carries (rig/siw.sh).
patches=()
for p in "$RIG_DIR"/debug-patches/*.patch "$RIG_DIR"/siw-patches/*.patch; do
	[ -e "$p" ] && patches+=("$p")
done
hash=$(cat "$RIG_DIR/debug-kernel.sh" "$config" ${patches[@]+"${patches[@]}"} |
	sha256sum | cut -c1-12)
dir=$LCHAN_CACHE/debug-$srcver-$hash
tree=$dir/linux

if [ "$mode" != build ]; then
	[ -f "$dir/.complete" ] ||
		rig_die "no debug kernel built for this config (run rig/debug-kernel.sh or make check-debug)"
	case $mode in
	tree) printf '%s\n' "$tree" ;;
	release) cat "$dir/kernelrelease" ;;
	esac
	exit 0
fi

if [ -f "$dir/.complete" ]; then
	printf '%s\n' "$tree"
	exit 0
fi

# The machine also runs benchmark guests: they keep the CPU.
if [ "$(nice)" -lt 19 ]; then
	exec nice -n 19 "$0" "$@"
fi

# Packages a kernel build needs beyond setup.sh's (Debian 12).
PKGS=(bison flex libelf-dev libssl-dev bc ccache make gcc xz-utils kmod patch)
missing=()
for p in "${PKGS[@]}"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	rig_log "installing: ${missing[*]}"
	if ! rig_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
		# Lists older than the mirror: refresh once and retry.
		rig_root apt-get update -qq || true
		rig_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
			rig_die "apt-get install failed: ${missing[*]}"
	fi
fi

mkdir -p "$LCHAN_CACHE"
exec {lockfd}>"$LCHAN_CACHE/.debug-kernel.lock"
if ! flock -n "$lockfd"; then
	rig_log "another debug kernel build is running; waiting"
	flock "$lockfd"
fi
if [ -f "$dir/.complete" ]; then
	printf '%s\n' "$tree"
	exit 0
fi

t0=$(rig_now)
log=$dir/build.log
mkdir -p "$dir"

# A half-extracted tree is thrown away; a half-built one is resumed.
if [ ! -f "$dir/.extracted" ]; then
	rig_log "extracting linux-source-6.1 $srcver into $dir"
	rm -rf "$tree" "$dir/.configured"
	mkdir -p "$tree"
	tar -xJf "$tarball" -C "$tree" --strip-components=1 ||
		rig_die "extracting $tarball failed"
	for p in ${patches[@]+"${patches[@]}"}; do
		rig_log "applying ${p##*/}"
		patch -d "$tree" -p1 -s --no-backup-if-mismatch <"$p" ||
			rig_die "$p does not apply to linux-source-6.1 $srcver"
	done
	touch "$dir/.extracted"
fi

export CCACHE_DIR=$LCHAN_CACHE/ccache
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
# Relative paths in the cache, so another hash's tree hits it too.
export CCACHE_BASEDIR=$dir
# A fixed build stamp keeps init/version.o (and ccache) stable across builds.
kmake=(make -C "$tree" -j3 CC="ccache gcc"
	KBUILD_BUILD_TIMESTAMP="linux-source-6.1 $srcver"
	KBUILD_BUILD_USER=lchan KBUILD_BUILD_HOST=rig)

run_logged() { # WHAT CMD...
	local what=$1
	shift
	if ! "$@" >>"$log" 2>&1; then
		tail -n 40 "$log" >&2
		rig_die "$what failed (log: $log)"
	fi
}

if [ ! -f "$dir/.configured" ]; then
	rig_log "configuring (defconfig + kvm_guest.config + debug.config)"
	: >"$log"
	# A fragment in kernel/configs/ is a make target of its own, merged in
	# order after defconfig and followed by olddefconfig.
	cp "$config" "$tree/kernel/configs/lchan_debug.config"
	run_logged "configuring" "${kmake[@]}" defconfig kvm_guest.config lchan_debug.config
	# Every option the fragment asks for must have survived Kconfig.
	bad=()
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			grep -qxF "$line" "$tree/.config" || bad+=("$line")
			;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }
			opt=${opt%% *}
			! grep -q "^$opt=" "$tree/.config" || bad+=("$line")
			;;
		esac
	done <"$config"
	[ "${#bad[@]}" = 0 ] || rig_die "Kconfig did not take: ${bad[*]}"
	touch "$dir/.configured"
fi

rig_log "building bzImage and modules (nice 19, ccache; cold about 30 min on 2 cores; log: $log)"
run_logged "kernel build" "${kmake[@]}" bzImage modules
release=$("${kmake[@]}" -s kernelrelease)
[ -n "$release" ] || rig_die "no kernel release from $tree"

# Install like kernel.sh lays out Debian's image, into a fresh root.
kdir=$LCHAN_CACHE/$release
mkdir -p "$kdir"
tmp=$(mktemp -d "$kdir/.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/root/boot"
run_logged "modules_install" "${kmake[@]}" INSTALL_MOD_PATH="$tmp/root" INSTALL_MOD_STRIP=1 modules_install
cp "$tree/arch/x86/boot/bzImage" "$tmp/root/boot/vmlinuz-$release"
cp "$tree/System.map" "$tmp/root/boot/System.map-$release"
# They point into the tree; nothing in the guest follows them.
rm -f "$tmp/root/lib/modules/$release/build" "$tmp/root/lib/modules/$release/source"
printf '%s\n' "$hash" >"$tmp/root/.complete"
rm -rf "$kdir/root"
mv "$tmp/root" "$kdir/root"
# An initramfs built from an older root of the same release is stale.
find "$kdir" -maxdepth 1 -name 'initramfs-*' -delete

printf '%s\n' "$release" >"$dir/kernelrelease"
touch "$dir/.complete"
rig_log "debug kernel $release ready in $(($(rig_now) - t0)) s: $tree"

# Trees of other configs or source versions are 2 GB each; ccache keeps
# what a switch back would need.
for old in "$LCHAN_CACHE"/debug-*; do
	[ "$old" = "$dir" ] || [ ! -d "$old" ] || { rig_log "removing old $old"; rm -rf "$old"; }
done
for old in "$LCHAN_CACHE"/*-dbg; do
	[ "$old" = "$kdir" ] || [ ! -d "$old" ] || { rig_log "removing old $old"; rm -rf "$old"; }
done
printf '%s\n' "$tree"
