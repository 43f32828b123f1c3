#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
# Host check: every header `make install` puts in the include directory
# compiles alone, in C and in C++, as an application sees it.
#
#  - make install-lib DESTDIR=build/headers-check (PREFIX /usr/local), and
#    the include flags of its liblchan.pc (pkg-config), nothing else: a
#    header that needs one of the source tree, or one installed elsewhere
#    on this machine, fails
#  - for each installed header H, a file that includes H twice (its guard)
#    and nothing else builds as C11 with gcc and clang (-std=c11 -Wall
#    -Wextra -Werror -pedantic) and as C++11, 14, 17, 20 and 23 with g++
#    and clang++ (-Wall -Wextra -Werror); any lchan header it reads must be
#    the staged one
#
# One TAP line per header, language and compiler; the clang and clang++
# lines SKIP when that compiler is not installed, no other.  The last line
# of output is the summary; exit status 0 pass, 1 fail.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$REPO" || exit 1

fail() { echo "headers: FAIL: $*"; exit 1; }

command -v pkg-config >/dev/null || fail "pkg-config is not installed (rig/setup.sh)"

d=$B/headers-check
prefix=/usr/local
rm -rf "$d" "$d.log"
mkdir -p "$d/tu"
if ! make --no-print-directory install-lib DESTDIR="$d/stage" PREFIX="$prefix" >"$d.log" 2>&1; then
	tail -n 30 "$d.log" | sed 's/^/#   /'
	fail "make install-lib (log: $d.log)"
fi
r=$d/stage$prefix
inc=$r/include
cflags=$(PKG_CONFIG_LIBDIR=$r/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$d/stage \
	pkg-config --cflags liblchan) || fail "pkg-config --cflags liblchan"
case " $cflags " in *" -I$inc "*) ;; *) fail "pkg-config --cflags liblchan: '$cflags'" ;; esac

mapfile -t headers < <(cd "$inc" && find . -name '*.h' | sed 's|^\./||' | sort)
[ "${#headers[@]}" -gt 0 ] || fail "make install-lib installed no header"
for h in lib/liblchan*.h; do
	[ -f "$inc/${h#lib/}" ] || fail "${h#lib/} is not installed"
done

# The cases, in the order of their TAP lines: header, language, compiler.
langs=(c11 c++11 c++14 c++17 c++20 c++23)
cases=()
for h in "${headers[@]}"; do
	for l in "${langs[@]}"; do
		case $l in
		c11) cases+=("$h $l gcc" "$h $l clang") ;;
		*) cases+=("$h $l g++" "$h $l clang++") ;;
		esac
	done
done

# Older compilers know C++23 by its draft name.
declare -A std23=()
for c in g++ clang++; do
	if command -v "$c" >/dev/null; then
		for s in c++23 c++2b; do
			if "$c" -std=$s -x c++ -fsyntax-only /dev/null 2>/dev/null; then
				std23[$c]=$s
				break
			fi
		done
	fi
done

# compile I HEADER LANG CC: build case I; its diagnostics in tu/I.err.
compile() {
	local i=$1 h=$2 l=$3 c=$4 std=$3 src flags dep
	if [ "$l" = c11 ]; then
		src=$d/tu/$i.c
		flags=(-pedantic)
	else
		src=$d/tu/$i.cc
		flags=()
		if [ "$l" = c++23 ]; then
			std=${std23[$c]:-}
			[ -n "$std" ] || { echo "$c knows neither -std=c++23 nor -std=c++2b" >"$d/tu/$i.err"; return 1; }
		fi
	fi
	printf '#include <%s>\n#include <%s>\nextern int lchan_header_check;\n' "$h" "$h" >"$src"
	dep=$d/tu/$i.d
	# shellcheck disable=SC2086 # pkg-config's flags are words
	"$c" -std="$std" -O2 -Wall -Wextra -Werror "${flags[@]}" $cflags \
		-c -o "$d/tu/$i.o" -MD -MF "$dep" "$src" >"$d/tu/$i.err" 2>&1 || return 1
	# Every lchan header it read is one of the stage's.
	tr -s ' \134' '\n' <"$dep" | grep -E '(^|/)(lib)?lchan[^/]*\.h$' |
		grep -v "^$inc/" | sed 's/^/read from outside the stage: /' >>"$d/tu/$i.err"
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

echo "1..${#cases[@]}"
passed=0 failed=0 skipped=0
for i in "${!cases[@]}"; do
	read -r h l c <<<"${cases[$i]}"
	n=$((i + 1))
	what="headers: $h as ${l^^} with $c"
	[ "$l" != c++23 ] || [ "${std23[$c]:-c++23}" = c++23 ] || what+=" (-std=${std23[$c]})"
	if ! command -v "$c" >/dev/null; then
		# Only clang may be missing; gcc and g++ are the build's compilers.
		case $c in
		clang | clang++)
			echo "ok $n $what # SKIP $c is not installed"
			skipped=$((skipped + 1))
			;;
		*)
			echo "not ok $n $what: $c is not installed (rig/setup.sh)"
			failed=$((failed + 1))
			;;
		esac
	elif [ "$(cat "$d/tu/$i.rc" 2>/dev/null)" = 0 ]; then
		echo "ok $n $what"
		passed=$((passed + 1))
	else
		echo "not ok $n $what"
		head -n 15 "$d/tu/$i.err" | sed 's/^/#   /'
		failed=$((failed + 1))
	fi
done

summary="${#headers[@]} headers (${headers[*]}), C11 and C++11..C++23: $passed compiled, $failed failed, $skipped skipped"
if [ "$failed" != 0 ]; then
	echo "headers: FAIL: $summary"
	exit 1
fi
echo "headers: $summary"
