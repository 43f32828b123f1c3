#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
# Host check: every header `make install-lib` puts in the include directory
# compiles alone, in C and in C++, as an application sees it: with the
# include flags of the staged liblchan.pc and nothing else (a header that
# needs one of the source tree, or one installed elsewhere, fails), a file
# that includes it twice (its guard) builds as C11 with gcc and clang
# (-pedantic) and as C++11 to C++23 with g++ and clang++, -Wall -Wextra
# -Werror, reading no lchan header but the stage's.  One TAP line per
# header, language and compiler; clang's lines SKIP without clang.
CHECK=headers
# shellcheck source-path=SCRIPTDIR source=checklib.sh
. "$(dirname "$0")/checklib.sh"

check_need pkg-config
d=$(check_dir headers-check)
mkdir -p "$d/tu"
check_stage "$d" install-lib
inc=$root/include
cflags=$(PKG_CONFIG_LIBDIR=$root/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$stage \
	pkg-config --cflags liblchan) || check_fail "pkg-config --cflags liblchan"
case " $cflags " in *" -I$inc "*) ;; *) check_fail "pkg-config --cflags liblchan: '$cflags'" ;; esac

mapfile -t headers < <(cd "$inc" && find . -name '*.h' | sed 's|^\./||' | sort)
[ "${#headers[@]}" -gt 0 ] || check_fail "make install-lib installed no header"
for h in lib/liblchan*.h; do
	[ -f "$inc/${h#lib/}" ] || check_fail "${h#lib/} is not installed"
done

# The cases, in the order of their TAP lines: header, language, compiler.
cases=()
for h in "${headers[@]}"; do
	cases+=("$h c11 gcc" "$h c11 clang")
	for l in c++11 c++14 c++17 c++20 c++23; do
		cases+=("$h $l g++" "$h $l clang++")
	done
done

# Older compilers know C++23 by its draft name.
declare -A std23=()
for c in g++ clang++; do
	for s in c++23 c++2b; do
		if command -v "$c" >/dev/null && "$c" -std=$s -x c++ -fsyntax-only /dev/null 2>/dev/null; then
			std23[$c]=$s
			break
		fi
	done
done

# compile I HEADER LANG CC: build case I; its diagnostics in tu/I.err.
compile() {
	local i=$1 h=$2 l=$3 c=$4 std=$3 src=$d/tu/$1.cc flags=()
	if [ "$l" = c11 ]; then
		src=$d/tu/$i.c
		flags=(-pedantic)
	elif [ "$l" = c++23 ]; then
		std=${std23[$c]:-}
		[ -n "$std" ] || { echo "$c knows neither -std=c++23 nor -std=c++2b" >"$d/tu/$i.err"; return 1; }
	fi
	printf '#include <%s>\n#include <%s>\nextern int lchan_header_check;\n' "$h" "$h" >"$src"
	# shellcheck disable=SC2086 # pkg-config's flags are words
	"$c" -std="$std" -O2 -Wall -Wextra -Werror "${flags[@]}" $cflags \
		-c -o "$d/tu/$i.o" -MD -MF "$d/tu/$i.d" "$src" >"$d/tu/$i.err" 2>&1 || return 1
	check_foreign_headers "$d/tu/$i.d" | sed 's/^/read from outside the stage: /' >>"$d/tu/$i.err"
	[ ! -s "$d/tu/$i.err" ]
}

# Build the cases nproc at a time; each leaves tu/I.rc.
jobs=$(nproc 2>/dev/null || echo 2)
running=0
for i in "${!cases[@]}"; do
	read -r h l c <<<"${cases[$i]}"
	command -v "$c" >/dev/null || continue
	{
		compile "$i" "$h" "$l" "$c"
		echo $? >"$d/tu/$i.rc"
	} &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

for i in "${!cases[@]}"; do
	read -r h l c <<<"${cases[$i]}"
	what="headers: $h as ${l^^} with $c"
	[ "$l" != c++23 ] || [ "${std23[$c]:-c++23}" = c++23 ] || what+=" (-std=${std23[$c]})"
	if ! command -v "$c" >/dev/null; then
		# Only clang may be missing; gcc and g++ are the build's compilers.
		case $c in
		clang | clang++) skip "$what" "$c is not installed" ;;
		*) notok "$what: $c is not installed (rig/setup.sh)" ;;
		esac
	elif [ "$(cat "$d/tu/$i.rc" 2>/dev/null)" = 0 ]; then
		ok "$what"
	else
		mapfile -t msgs < <(head -n 15 "$d/tu/$i.err")
		notok "$what" "${msgs[@]}"
	fi
done
tap_done "${#headers[@]} headers (${headers[*]}), C11 and C++11..C++23: $(tap_passed) compiled, $tap_failed failed, $tap_skipped skipped"
