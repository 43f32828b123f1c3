#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
# Host check: every public function of liblchan and every tool has a man
# page, and every page formats without a warning.
#
#   public functions: the lchan_* symbols lib/liblchan.so.1 exports (nm -D)
#                     and the static inline lchan_* functions of the
#                     public headers lib/liblchan*.h; each needs
#                     man/NAME.3, a page whose
#                     NAME section lists it or a ".so man3/OTHER.3" alias
#                     of such a page
#   tools:            every program of PROGS in tools/Makefile needs
#                     man/PROG.1 or man/PROG.8; lchan.7 must exist
#   no stale pages:   a section-3 page names only functions that exist
#   references:       every "lchan... (N)" cross-reference has its page
#   failures:         every section-3 page has RETURN VALUE, and ERRORS
#                     unless RETURN VALUE says that the call cannot fail
#   warnings:         groff -man -ww and man --warnings print nothing
CHECK="man"
# shellcheck source-path=SCRIPTDIR source=checklib.sh
. "$(dirname "$0")/checklib.sh"

check_need nm perl groff man
check_run "$(check_dir man-check)/lib.log" "lib/liblchan.so.1 does not build" make --no-print-directory -C lib

mapfile -t exported < <(nm -D --defined-only lib/liblchan.so.1 |
	awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort -u)
mapfile -t inline < <(perl -0777 -ne \
	'while (/\bstatic\s+inline\b[^;{]*?\b(lchan_\w+)\s*\(/g) { print "$1\n" }' \
	lib/liblchan*.h | sort -u)
[ "${#exported[@]}" -gt 10 ] || err "only ${#exported[@]} exported symbols found in lib/liblchan.so.1"
[ "${#inline[@]}" -gt 5 ] || err "only ${#inline[@]} inline functions found in lib/liblchan*.h"
for s in "${exported[@]}"; do
	case $s in lchan_*) ;; *) err "liblchan.so.1 exports $s, outside the lchan_ namespace" ;; esac
done
declare -A public=()
for s in "${exported[@]}" "${inline[@]}"; do public[$s]=1; done

# The words of a page's NAME section (before "\-").
# shellcheck disable=SC2020 # commas and blanks both end a name
name_section() {
	awk '/^\.SH/ { in_name = ($2 == "NAME") ; next } in_name' "$1" |
		tr '\n' ' ' | sed 's/\\-.*//' | tr ', ' '\n\n' | sed '/^$/d'
}
# The roff lines of section NAME of a page.
section_text() { # PAGE NAME
	awk -v name="$2" '/^\.SH/ { sub(/^\.SH +/, ""); gsub(/"/, ""); in_s = ($0 == name); next }
		in_s' "$1"
}
# The page an alias points to, or the page itself.
resolve() {
	local target
	target=$(sed -n '1s|^\.so man[1-8]/\(.*\)$|\1|p' "$1")
	if [ -n "$target" ]; then
		echo "man/$target"
	else
		echo "$1"
	fi
}

for s in "${!public[@]}"; do
	page=man/$s.3
	if [ ! -f "$page" ]; then
		err "no man page for $s (man/$s.3)"
		continue
	fi
	real=$(resolve "$page")
	if [ ! -f "$real" ]; then
		err "$page is an alias of $real, which does not exist"
		continue
	fi
	name_section "$real" | grep -x "$s" >/dev/null || err "$real does not name $s in its NAME section"
	grep -q "$s(" "$real" || err "$real has no synopsis for $s"
done

# Section-3 pages of functions that do not exist (any more).
for page in man/*.3; do
	base=$(basename "$page" .3)
	[ -n "${public[$base]:-}" ] || err "$page: liblchan has no public function $base"
	if [ "$(resolve "$page")" = "$page" ]; then
		while read -r w; do
			[ -n "${public[$w]:-}" ] || err "$page names $w, which liblchan does not have"
		done < <(name_section "$page")
	fi
done

# Every function page says what the call returns, and how it fails: an
# ERRORS section, or RETURN VALUE says that it cannot fail.
for page in man/*.3; do
	[ "$(resolve "$page")" = "$page" ] || continue
	rv=$(section_text "$page" "RETURN VALUE")
	if [ -z "$rv" ]; then
		err "$page has no RETURN VALUE section"
	elif ! grep -q '^\.SH ERRORS' "$page" &&
		! tr '\n' ' ' <<<"$rv" | grep -q 'cannot fail'; then
		err "$page has no ERRORS section and its RETURN VALUE does not say that it cannot fail"
	fi
done

# The tools and the overview.
progs=$(check_progs PROGS)
for p in $progs; do
	[ -f "man/$p.1" ] || [ -f "man/$p.8" ] || err "no man page for the tool $p (man/$p.1 or man/$p.8)"
done
[ -f man/lchan.7 ] || err "no man/lchan.7"

# Cross-references to lchan pages must resolve.
while read -r ref; do
	name=${ref% *}
	sec=${ref#* }
	[ -f "man/$name.$sec" ] || err "a page refers to $name($sec), which has no page"
done < <(grep -ho '^\.BR lchan[a-z_]* ([1-8])' man/*.[1-8] | sed 's/^\.BR //; s/[()]//g' | sort -u)

# Format every page; any diagnostic is a failure.
pages=0
for page in man/*.[1-8]; do
	pages=$((pages + 1))
	[ "$(resolve "$page")" = "$page" ] || continue
	w=$(LC_ALL=C.UTF-8 groff -man -ww -z "$page" 2>&1)
	[ -z "$w" ] || err "groff: $w"
	w=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 >/dev/null)
	[ -z "$w" ] || err "man: $w"
done

check_done "${#exported[@]} exported and ${#inline[@]} inline functions, tools: $progs; $pages pages, no warnings"
