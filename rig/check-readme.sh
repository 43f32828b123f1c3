#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
# Host check: README.md, the front door, and the example programs it shows
# build as a user outside the tree builds them.
#  - README.md has at most 300 lines
#  - every ```c block of README.md is one of examples/*.c (the file after
#    its SPDX line), and it shows examples/msg_server.c and msg_client.c:
#    what it shows is what lchan_examples_test runs in the guest
#  - each block compiles and links as C11 (-Wall -Wextra -Werror) with the
#    flags of pkg-config alone, against `make install-lib` staged in
#    build/readme-check
#  - examples/, copied out of the source tree, builds with its own Makefile
#    against the same stage: the four liblchan programs, linked with
#    liblchan.so.1, and the fi_ pair, linked with libfabric.so.1, where
#    libfabric's pkg-config file is (else one SKIP line says so)
#  - every lchan header a block or a program read is the stage's
CHECK=readme
# shellcheck source-path=SCRIPTDIR source=checklib.sh
. "$(dirname "$0")/checklib.sh"

MAX_LINES=300
LCHAN_EXAMPLES=(msg_client msg_server ring_client ring_server)
FABRIC_EXAMPLES=(fi_client fi_server)

check_need cc pkg-config readelf
[ -f README.md ] || check_fail "no README.md"
d=$(check_dir readme-check)
mkdir -p "$d/blocks" "$d/bin"
check_stage "$d" install-lib
# The stage first; libfabric from the system.
export PKG_CONFIG_PATH=$root/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$stage
pkg-config --exists liblchan || check_fail "pkg-config finds no liblchan.pc in the stage"

# --- length
lines=$(wc -l <README.md)
if [ "$lines" -le "$MAX_LINES" ]; then
	ok "readme: README.md has $lines lines (at most $MAX_LINES)"
else
	notok "readme: README.md has $lines lines, more than $MAX_LINES" \
		"the front door stays short: details go to lchan(7), rig/README.md, bench/README.md"
fi

# --- the C blocks: one file each, with the README line it starts on
nblocks=$(awk -v dir="$d/blocks" '
	/^```c[[:space:]]*$/ { k++; on = 1; out = dir "/" k ".c"; printf "" > out
		print NR > (dir "/" k ".line"); next }
	on && /^```[[:space:]]*$/ { on = 0; close(out); next }
	on { print > out }
	END { print k + 0 }' README.md)
declare -A shown=()
for ((k = 1; k <= nblocks; k++)); do
	src=$d/blocks/$k.c
	at="README.md line $(cat "$d/blocks/$k.line")"
	match=
	for f in examples/*.c; do
		if tail -n +2 "$f" | cmp -s - "$src"; then
			match=$f
			break
		fi
	done
	if [ -z "$match" ]; then
		notok "readme: the C block at $at is none of examples/*.c" \
			"each block is an example file after its SPDX line, so that the guest runs what the README shows"
		continue
	fi
	shown[$match]=1
	# shellcheck disable=SC2046 # pkg-config's flags are words
	if ! out=$(cc -std=c11 -O2 -Wall -Wextra -Werror $(pkg-config --cflags liblchan) \
		-MD -MF "$d/blocks/$k.d" -o "$d/blocks/$k" "$src" $(pkg-config --libs liblchan) 2>&1); then
		mapfile -t msgs < <(head -n 15 <<<"$out")
		notok "readme: the C block at $at ($match) does not build against the staged install" "${msgs[@]}"
		continue
	fi
	mapfile -t foreign < <(check_foreign_headers "$d/blocks/$k.d")
	if [ "${#foreign[@]}" != 0 ]; then
		notok "readme: the C block at $at ($match) read lchan headers from outside the stage" "${foreign[@]}"
		continue
	fi
	ok "readme: the C block at $at is $match and builds against the staged install"
done
missing=()
for f in examples/msg_server.c examples/msg_client.c; do
	[ -n "${shown[$f]:-}" ] || missing+=("$f")
done
if [ "${#missing[@]}" = 0 ]; then
	ok "readme: shows examples/msg_server.c and examples/msg_client.c"
else
	notok "readme: does not show ${missing[*]} as a C block"
fi

# --- examples/ with its own Makefile, from a copy outside the tree
cp -r examples "$d/examples"
rm -f "${LCHAN_EXAMPLES[@]/#/$d/examples/}" "${FABRIC_EXAMPLES[@]/#/$d/examples/}"
build_examples() { # TARGET NEEDED-LIBRARY PROGRAM...
	local target=$1 needed=$2 p log=$d/make-$1.log
	shift 2
	make --no-print-directory -C "$d/examples" OUT="$d/bin" CFLAGS="-O2 -MD" \
		"$target" >"$log" 2>&1
	for p in "$@"; do
		if [ ! -x "$d/bin/$p" ]; then
			mapfile -t msgs < <(grep -v '^\s*$' "$log" | tail -n 15)
			notok "examples: make -C examples $target does not build $p (log: $log)" "${msgs[@]}"
		elif ! readelf -d "$d/bin/$p" | grep -q "(NEEDED).*\[$needed\]"; then
			notok "examples: $p is not linked with $needed"
		elif mapfile -t foreign < <(check_foreign_headers "$d/bin/$p.d") &&
			[ "${#foreign[@]}" != 0 ]; then
			notok "examples: $p read lchan headers from outside the stage" "${foreign[@]}"
		else
			ok "examples: $p builds against the staged install with pkg-config alone"
		fi
	done
}
build_examples lchan liblchan.so.1 "${LCHAN_EXAMPLES[@]}"
if pkg-config --exists libfabric; then
	build_examples fabric libfabric.so.1 "${FABRIC_EXAMPLES[@]}"
else
	for p in "${FABRIC_EXAMPLES[@]}"; do
		skip "examples: $p" "pkg-config finds no libfabric.pc (libfabric-dev)"
	done
fi

tap_done "README.md $lines lines, $nblocks C blocks, examples: $(tap_passed) checks passed, $tap_failed failed, $tap_skipped skipped"
