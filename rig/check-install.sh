#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
# Host check: `make install` (DESTDIR=build/install-check/stage, PREFIX
# /usr/local) and what it installs:
#  - the library (liblchan.so.1, the liblchan.so link, liblchan.a), the
#    headers (uapi/lchan.h as lchan/lchan.h, nothing under the generic name
#    lchan.h), liblchan.pc, every tool of tools/Makefile, the libfabric
#    provider (exporting fi_prov_ini only) and every man page
#  - soname liblchan.so.1, every exported function versioned LCHAN_*,
#    linked with -z defs
#  - the staged liblchan.pc gives VERSION and flags with which hello.c and
#    quickstart.c build; hello runs with the staged library
#  - make uninstall removes every file again
CHECK=install
# shellcheck source-path=SCRIPTDIR source=checklib.sh
. "$(dirname "$0")/checklib.sh"

check_need pkg-config readelf cc
d=$(check_dir install-check)
check_stage "$d" install
version=$(cat VERSION)

# --- the files
for f in lib/liblchan.so.1 lib/liblchan.a lib/pkgconfig/liblchan.pc \
	include/liblchan.h include/liblchan_barrier.h include/liblchan_msg.h \
	include/lchan/lchan.h lib/libfabric/liblchan-fi.so; do
	[ -f "$root/$f" ] || err "not installed: /usr/local/$f"
done
prov_syms=$(nm -D --defined-only "$root/lib/libfabric/liblchan-fi.so" 2>/dev/null | awk '{ print $3 }' | tr '\n' ' ')
[ "$prov_syms" = "fi_prov_ini " ] || err "liblchan-fi.so exports: ${prov_syms:-nothing}"
[ "$(readlink "$root/lib/liblchan.so")" = liblchan.so.1 ] || err "/usr/local/lib/liblchan.so is not a link to liblchan.so.1"
cmp -s uapi/lchan.h "$root/include/lchan/lchan.h" || err "/usr/local/include/lchan/lchan.h is not uapi/lchan.h"
[ ! -e "$root/include/lchan.h" ] || err "installed under a generic name: /usr/local/include/lchan.h"
for p in $(check_progs PROGS); do
	[ -x "$root/bin/$p" ] || err "not installed: /usr/local/bin/$p"
done
npages=0
for page in man/*.[1-8]; do
	f=share/man/man${page##*.}/${page##*/}
	npages=$((npages + 1))
	cmp -s "$page" "$root/$f" || err "not installed: /usr/local/$f"
done
[ "$npages" -gt 10 ] || err "only $npages man pages"

# --- the shared library's ABI
so=$root/lib/liblchan.so.1
readelf -d "$so" | grep 'SONAME.*\[liblchan\.so\.1\]' >/dev/null || err "soname of liblchan.so.1 is not liblchan.so.1"
unversioned=$(readelf --dyn-syms -W "$so" | awk '$5 != "LOCAL" && $7 != "UND" && $8 ~ /^lchan_/ && $8 !~ /@@?LCHAN_/ { print $8 }')
[ -z "$unversioned" ] || err "exported without a LCHAN_ version: $unversioned"
readelf --dyn-syms -W "$so" | grep '@@LCHAN_1\.0' >/dev/null || err "no symbol in version node LCHAN_1.0"
# A pattern in a node would let a new function join a released node.
! grep -nE '^[[:space:]]*lchan[a-z_]*\*' lib/liblchan.map || err "lib/liblchan.map: name each symbol, no patterns"
# -z defs leaves no mark in the library: the link line must have it.
make --no-print-directory -n -B -C lib liblchan.so.1 2>/dev/null | grep -- '-Wl,-z,defs' >/dev/null ||
	err "lib/Makefile links liblchan.so.1 without -Wl,-z,defs"

# --- pkg-config against the staged install
export PKG_CONFIG_LIBDIR=$root/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$stage
[ "$(pkg-config --modversion liblchan)" = "$version" ] || err "pkg-config --modversion liblchan is '$(pkg-config --modversion liblchan)', not $version"
grep -qx "prefix=/usr/local" "$root/lib/pkgconfig/liblchan.pc" || err "liblchan.pc does not say prefix=/usr/local"
cflags=$(pkg-config --cflags liblchan) libs=$(pkg-config --libs liblchan)
case " $cflags " in *" -I$root/include "*) ;; *) err "pkg-config --cflags: '$cflags'" ;; esac
for prog in hello quickstart; do
	# shellcheck disable=SC2086 # the flags are words
	out=$(cc -std=c11 -Wall -Wextra -Werror $cflags -o "$d/$prog" "selftests/pkgconfig/$prog.c" $libs 2>&1) ||
		err "$prog.c does not build with pkg-config's flags: $out"
done
if [ -x "$d/hello" ]; then
	# The staged library loads; without /dev/lchan hello then says so.
	out=$(LD_LIBRARY_PATH=$root/lib "$d/hello" 2>&1)
	grep -qx "liblchan: $root/lib/liblchan.so.1" <<<"$out" || err "hello did not run with the staged library: $out"
fi
# --- uninstall
make --no-print-directory uninstall DESTDIR="$stage" PREFIX=/usr/local >>"$d/install.log" 2>&1 ||
	err "make uninstall failed (log: $d/install.log)"
left=$(find "$root" ! -type d | sed "s|^$stage||")
[ -z "$left" ] || err "make uninstall left: $(tr '\n' ' ' <<<"$left")"
check_done "lib, headers, liblchan.pc $version, tools, libfabric provider, $npages man pages; soname and symbol versions; pkg-config builds hello and quickstart; uninstall clean"
