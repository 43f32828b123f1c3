#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host check: the build a newcomer gets.  In a copy of the tree (its
# tracked and new files, nothing built) under a temporary directory, make
# runs as a user runs it: none of the rig's KERNEL, KVER, KDIR or B, and
# the optional dependencies hidden (pkg-config looks in an empty
# directory, so libfabric, librdmacm and libibverbs are not found).
#
#   1 make lib tools: the library and every program of tools/Makefile's
#     PROGS, none linked to librdmacm, libibverbs or libfabric
#   2 plain make on a host without the running kernel's headers (SKIP
#     where they are installed), after make clean: lib and tools built,
#     then a non-zero exit and one line naming the missing build tree,
#     linux-headers-$(uname -r) and KDIR=
#   3 make KDIR=<the rig kernel's headers> module: lchan.ko for that
#     kernel, version VERSION's, depending on ib_core and rdma_cm
#   4 make modules_install into a tree holding that kernel's modules (the
#     rig's unpacked image, linked): depmod runs, and modprobe lchan
#     would load ib_core and rdma_cm first (SKIP without the image)
#   5 make KDIR=... (all, KSFT_INC=/nonexistent): selftests, fabric and
#     bench-tools each skipped with one line naming what they lack, exit
#     0, none of their outputs
#   6 make selftests, make fabric, make bench-tools, named: each fails
#     with one line naming what it lacks
#   7 make install DESTDIR=: the library, headers, liblchan.pc, tools and
#     man pages, one line saying the provider was skipped, no provider
CHECK=build
# shellcheck source-path=SCRIPTDIR source=checklib.sh
. "$(dirname "$0")/checklib.sh"

# Problems of a case are collected, then one TAP line with them and the
# tail of LOG.
problems=()
problem() { problems+=("$*"); }
verdict() { # DESCRIPTION [LOG]
	local tail=()
	if [ "${#problems[@]}" = 0 ]; then
		ok "$1"
	else
		[ -z "${2:-}" ] || mapfile -t tail < <(tail -n 15 "$2" | sed 's/^/| /')
		notok "$1" "${problems[@]}" "${tail[@]}"
	fi
	problems=()
}

check_need git readelf
rig_use_kernel || exit 1
version=$(cat VERSION)
running=$(uname -r)
read -ra progs <<<"$(check_progs PROGS)"
[ "${#progs[@]}" -gt 3 ] || check_fail "no PROGS in tools/Makefile"

t=$(mktemp -d "${TMPDIR:-/tmp}/lchan-build.XXXXXX") || check_fail "mktemp"
trap 'rm -rf "$t"' EXIT
src=$t/src
nopc=$t/no-pkgconfig
mkdir -p "$src" "$nopc"
# The working files, edits included; a file deleted but not yet committed
# is left out.
git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
	tar -c --null -T - -f - | tar -x -C "$src" -f - || check_fail "copying the tree to $src"

umake() { # LOG ARGS...: make in the copy as a user runs it
	local log=$1
	shift
	env -u KDIR -u KVER -u KERNEL -u LCHAN_KERNEL -u B -u KSFT_INC \
		-u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u PKG_CONFIG_PATH \
		PKG_CONFIG_LIBDIR="$nopc" make -C "$src" --no-print-directory -j2 "$@" \
		>"$log.out" 2>"$log.err"
}
# The user-space build: the library and the tools, linked to nothing the
# user may lack.
check_userspace() {
	local p f needs
	for f in lib/liblchan.so.1 lib/liblchan.a; do
		[ -f "$src/$f" ] || problem "no $f"
	done
	for p in "${progs[@]}"; do
		f=$src/build/tools/$p
		if [ ! -x "$f" ]; then
			problem "no build/tools/$p"
			continue
		fi
		needs=$(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -E 'rdmacm|ibverbs|fabric' || true)
		[ -z "$needs" ] || problem "build/tools/$p needs $needs"
	done
}

# ---- 1: make lib tools
if umake "$t/1" lib tools; then
	check_userspace
	[ ! -e "$src/build/tools/cm_seqtime" ] || problem "make tools built the bench's cm_seqtime"
else
	problem "make lib tools failed"
fi
verdict "make lib tools: liblchan and ${#progs[@]} tools with a C compiler alone" "$t/1.err"

# ---- 2: plain make without the running kernel's headers
desc="make without KDIR: lib and tools built, then exit non-zero naming /lib/modules/$running/build and linux-headers-$running"
if [ -f "/lib/modules/$running/build/Makefile" ]; then
	skip "$desc" "the running kernel's headers are installed (/lib/modules/$running/build)"
else
	umake "$t/2c" clean || problem "make clean without a kernel build tree failed"
	[ ! -e "$src/lib/liblchan.so.1" ] || problem "make clean left lib/liblchan.so.1"
	if umake "$t/2" all; then
		problem "make exited 0 without a kernel build tree"
	else
		check_userspace
		line=$(grep -F "/lib/modules/$running/build" "$t/2.err" |
			grep -F "linux-headers-$running" | grep -F 'KDIR=' || true)
		[ "$(grep -c . <<<"$line")" = 1 ] ||
			problem "no one line naming /lib/modules/$running/build, linux-headers-$running and KDIR="
	fi
	verdict "$desc" "$t/2.err"
fi

# ---- 3: the module for the rig's kernel
ko=$src/kmod/lchan.ko
if [ ! -f "$KDIR/Makefile" ]; then
	problem "no kernel headers in $KDIR (rig/setup.sh)"
elif umake "$t/3" module KDIR="$KDIR"; then
	if [ -f "$ko" ]; then
		v=$(modinfo -F version "$ko")
		[ "$v" = "$version" ] || problem "modinfo version '$v', VERSION $version"
		deps=,$(modinfo -F depends "$ko"),
		for m in ib_core rdma_cm; do
			[[ $deps == *",$m,"* ]] || problem "modinfo depends '$deps' lacks $m"
		done
		magic=$(modinfo -F vermagic "$ko")
		[ "${magic%% *}" = "$KVER" ] || problem "vermagic '$magic', not $KVER"
	else
		problem "make module left no kmod/lchan.ko"
	fi
else
	problem "make KDIR=$KDIR module failed"
fi
verdict "make KDIR=$KDIR module: lchan.ko $version for $KVER, depends ib_core, rdma_cm" "$t/3.err"

# ---- 4: modules_install and modules.dep
image=$LCHAN_CACHE/$KVER/root/lib/modules/$KVER
if [ ! -f "$ko" ]; then
	skip "make modules_install: modprobe lchan loads ib_core and rdma_cm" "no lchan.ko (case 3)"
elif [ ! -f "$image/modules.order" ]; then
	skip "make modules_install: modprobe lchan loads ib_core and rdma_cm" \
		"no unpacked linux-image-$KVER in $LCHAN_CACHE (rig/setup.sh)"
else
	root=$t/root
	mdir=$root/lib/modules/$KVER
	mkdir -p "$mdir"
	ln -s "$image/kernel" "$mdir/kernel"
	cp "$image"/modules.order "$image"/modules.builtin "$image"/modules.builtin.modinfo "$mdir/"
	if umake "$t/4" modules_install KDIR="$KDIR" INSTALL_MOD_PATH="$root"; then
		[ -f "$mdir/modules.dep" ] || problem "make modules_install ran no depmod"
		# Module names, compressed or not (6.12's are .ko.xz).
		chain=$(modprobe -d "$root" -S "$KVER" --show-depends lchan 2>&1 |
			sed -n 's|^insmod .*/\([^/ ]*\.ko\)[^/ ]* *$|\1|p' | paste -sd ' ')
		# modprobe loads them in this order, lchan last.
		[[ " $chain " == *" ib_core.ko "* && " $chain " == *" rdma_cm.ko "* &&
			${chain##* } == lchan.ko ]] ||
			problem "modprobe --show-depends lchan: '$chain'"
	else
		problem "make modules_install INSTALL_MOD_PATH=$root failed"
	fi
	verdict "make modules_install: depmod ran, modprobe lchan loads ib_core and rdma_cm first" "$t/4.err"
fi

# ---- 5: make with the optional parts' dependencies missing
if umake "$t/5" all KDIR="$KDIR" KSFT_INC=/nonexistent; then
	for want in 'selftests:kselftest_harness.h' 'selftests:libfabric-dev' \
		'fabric:libfabric-dev' 'bench-tools:librdmacm-dev'; do
		part=${want%%:*}
		lines=$(grep -c "^$part: skipped" "$t/5.out")
		[ "$lines" = 1 ] || problem "$lines lines '$part: skipped', not one"
		grep "^$part: skipped" "$t/5.out" | grep -qF "${want#*:}" ||
			problem "$part's skip line does not name ${want#*:}"
	done
	for f in build/fabric/liblchan-fi.so build/tools/cm_seqtime build/selftests/lchan_abi_test; do
		[ ! -e "$src/$f" ] || problem "skipped, yet built: $f"
	done
	[ -f "$ko" ] || problem "no kmod/lchan.ko"
else
	problem "make exited non-zero with only optional parts missing"
fi
verdict "make, optional dependencies missing: selftests, fabric, bench-tools skipped with one line each" "$t/5.err"

# ---- 6: an optional part named on the command line fails without them
for want in 'selftests:kselftest_harness.h' 'fabric:libfabric-dev' 'bench-tools:librdmacm-dev'; do
	part=${want%%:*}
	if umake "$t/6" "$part" KSFT_INC=/nonexistent; then
		problem "make $part exited 0"
	else
		grep "^$part: cannot be built" "$t/6.err" | grep -qF "${want#*:}" ||
			problem "make $part: no line naming ${want#*:}"
	fi
done
verdict "make selftests, fabric, bench-tools without their dependencies: an error naming them" "$t/6.err"

# ---- 7: make install installs what was built
d=$t/dest
p=$d/usr/local
if umake "$t/7" install DESTDIR="$d"; then
	for f in lib/liblchan.so.1 lib/liblchan.a lib/pkgconfig/liblchan.pc include/liblchan.h \
		include/lchan/lchan.h share/man/man7/lchan.7; do
		[ -f "$p/$f" ] || problem "not installed: $f"
	done
	for f in "${progs[@]}"; do
		[ -x "$p/bin/$f" ] || problem "not installed: bin/$f"
	done
	[ ! -e "$p/lib/libfabric/liblchan-fi.so" ] || problem "installed a provider make could not build"
	[ ! -e "$src/build/fabric/liblchan-fi.so" ] || problem "make install built the provider"
	[ "$(grep -c '^install-fabric: skipped' "$t/7.out")" = 1 ] || problem "no one line saying the provider was skipped"
else
	problem "make install failed"
fi
verdict "make install DESTDIR=: library, headers, liblchan.pc, tools, man pages; the provider skipped" "$t/7.err"

tap_done "$tap_n cases: lib and tools alone; the module for $KVER ($version, modules.dep pulls ib_core, rdma_cm); missing headers and optional parts each said in one line; install of what was built" "$tap_failed of $tap_n cases"
