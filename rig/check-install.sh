#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
# Host check: `make install` and what it installs.
#
#  - make install DESTDIR=build/install-check (PREFIX /usr/local): the
#    library (liblchan.so.1, the liblchan.so link, liblchan.a), the headers
#    (liblchan.h, liblchan_barrier.h, liblchan_msg.h, and uapi/lchan.h as
#    lchan/lchan.h, nothing under the generic name lchan.h), liblchan.pc,
#    every tool of
#    tools/Makefile, the libfabric provider (lib/libfabric/liblchan-fi.so,
#    exporting fi_prov_ini only) and every man page, each in its section
#  - the shared library: soname liblchan.so.1, every exported function
#    versioned LCHAN_*, linked with -z defs
#  - pkg-config: the staged liblchan.pc gives the version of VERSION and
#    flags with which hello.c and quickstart.c build; hello runs with the
#    staged library (README.md's examples: rig/check-readme.sh)
#  - make uninstall removes every file again
#
# The last line of output is the summary; exit status 0 pass, 1 fail.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$REPO" || exit 1

errors=0
err() { echo "# $*"; errors=$((errors + 1)); }
fail() { echo "install: FAIL: $*"; exit 1; }

for tool in pkg-config readelf cc; do
	command -v "$tool" >/dev/null || fail "$tool is not installed (rig/setup.sh)"
done

d=$B/install-check
prefix=/usr/local
rm -rf "$d"
mkdir -p "$d"
log=$d.log
if ! make --no-print-directory install DESTDIR="$d" PREFIX="$prefix" >"$log" 2>&1; then
	tail -n 30 "$log" | sed 's/^/#   /'
	fail "make install (log: $log)"
fi
r=$d$prefix
version=$(cat VERSION)

# --- the files
for f in lib/liblchan.so.1 lib/liblchan.a lib/pkgconfig/liblchan.pc \
	include/liblchan.h include/liblchan_barrier.h include/liblchan_msg.h \
	include/lchan/lchan.h lib/libfabric/liblchan-fi.so; do
	[ -f "$r/$f" ] || err "not installed: $prefix/$f"
done
# The provider exports its entry point and nothing else.
prov_syms=$(nm -D --defined-only "$r/lib/libfabric/liblchan-fi.so" 2>/dev/null | awk '{ print $3 }' | tr '\n' ' ')
[ "$prov_syms" = "fi_prov_ini " ] || err "liblchan-fi.so exports: ${prov_syms:-nothing}"
[ "$(readlink "$r/lib/liblchan.so")" = liblchan.so.1 ] || err "$prefix/lib/liblchan.so is not a link to liblchan.so.1"
cmp -s uapi/lchan.h "$r/include/lchan/lchan.h" || err "$prefix/include/lchan/lchan.h is not uapi/lchan.h"
[ ! -e "$r/include/lchan.h" ] || err "installed under a generic name: $prefix/include/lchan.h"
# shellcheck disable=SC2013 # the programs are words of one line
for p in $(sed -n 's/^PROGS *:\?= *//p' tools/Makefile); do
	[ -x "$r/bin/$p" ] || err "not installed: $prefix/bin/$p"
done
npages=0
for page in man/*.[1-8]; do
	sec=${page##*.}
	npages=$((npages + 1))
	cmp -s "$page" "$r/share/man/man$sec/${page##*/}" || err "not installed: $prefix/share/man/man$sec/${page##*/}"
done
[ "$npages" -gt 10 ] || err "only $npages man pages"

# --- the shared library's ABI
so=$r/lib/liblchan.so.1
readelf -d "$so" | grep 'SONAME.*\[liblchan\.so\.1\]' >/dev/null || err "soname of liblchan.so.1 is not liblchan.so.1"
unversioned=$(readelf --dyn-syms -W "$so" | awk '$5 != "LOCAL" && $7 != "UND" && $8 ~ /^lchan_/ && $8 !~ /@@?LCHAN_/ { print $8 }')
[ -z "$unversioned" ] || err "exported without a LCHAN_ version: $unversioned"
readelf --dyn-syms -W "$so" | grep '@@LCHAN_1\.0' >/dev/null || err "no symbol in version node LCHAN_1.0"
# A pattern in a node would let a new function join a released node.
! grep -nE '^[[:space:]]*lchan[a-z_]*\*' lib/liblchan.map || err "lib/liblchan.map: name each symbol, no patterns"
# -z defs: the link line has it (it leaves no mark in the library).
make --no-print-directory -n -B -C lib liblchan.so.1 2>/dev/null | grep -- '-Wl,-z,defs' >/dev/null ||
	err "lib/Makefile links liblchan.so.1 without -Wl,-z,defs"

# --- pkg-config against the staged install
pc() { PKG_CONFIG_LIBDIR=$r/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$d pkg-config "$@"; }
[ "$(pc --modversion liblchan)" = "$version" ] || err "pkg-config --modversion liblchan is '$(pc --modversion liblchan)', not $version"
grep -qx "prefix=$prefix" "$r/lib/pkgconfig/liblchan.pc" || err "liblchan.pc does not say prefix=$prefix"
cflags=$(pc --cflags liblchan) libs=$(pc --libs liblchan)
case " $cflags " in *" -I$r/include "*) ;; *) err "pkg-config --cflags: '$cflags'" ;; esac
for prog in hello quickstart; do
	# shellcheck disable=SC2086 # the flags are words
	if ! out=$(cc -std=c11 -Wall -Wextra -Werror $cflags -o "$d/$prog" \
		"selftests/pkgconfig/$prog.c" $libs 2>&1); then
		err "$prog.c does not build with pkg-config's flags: $out"
	fi
done
if [ -x "$d/hello" ]; then
	# The staged library loads; without /dev/lchan hello then says so.
	out=$(LD_LIBRARY_PATH=$r/lib "$d/hello" 2>&1)
	grep -qx "liblchan: $r/lib/liblchan.so.1" <<<"$out" || err "hello did not run with the staged library: $out"
fi
# --- uninstall
if ! make --no-print-directory uninstall DESTDIR="$d" PREFIX="$prefix" >>"$log" 2>&1; then
	err "make uninstall failed (log: $log)"
fi
left=$(find "$r" ! -type d | sed "s|^$d||")
[ -z "$left" ] || err "make uninstall left: $(tr '\n' ' ' <<<"$left")"

if [ "$errors" != 0 ]; then
	echo "install: FAIL: $errors problems"
	exit 1
fi
echo "install: lib, headers, liblchan.pc $version, tools, libfabric provider, $npages man pages; soname and symbol versions; pkg-config builds hello and quickstart; uninstall clean"
