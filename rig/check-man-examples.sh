#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
# Host check: the C code in the man pages' EXAMPLES sections compiles, and
# the pages that need an example have one.
#
#   what is C:   a .EX/.EE (or .nf/.fi) block of an EXAMPLES section
#                whose first line, as man(1) shows it, is #include or
#                #define: a whole translation unit, never a fragment.
#                Every block of a section-3 page's EXAMPLES must be one; in
#                sections 1, 7 and 8 the other blocks are shell sessions,
#                left alone.
#   compiled:    as the reader sees it (groff -man -Tutf8, so that a roff
#                escape gone wrong, such as \n for \en, breaks the build),
#                with cc -std=c11 -Wall -Wextra -Werror against lib/ and
#                uapi/; a unit that defines main() is linked with
#                lib/liblchan.a
#   width:       no line of C is wider than 80 columns on the page (a
#                tool's output may be)
#   required:    the pages of $required have a C example, the tools' pages
#                (sections 1 and 8) an EXAMPLES section
#
# One TAP line per page (an alias, ".so manN/OTHER.N", is its target's).
CHECK="man-examples"
# shellcheck source-path=SCRIPTDIR source=checklib.sh
. "$(dirname "$0")/checklib.sh"

# Calls that are not trivial: each page shows one in a whole program or
# function (the prep_* family by one page per kind of operation).
required="lchan.7 lchan_accept.3 lchan_connect.3 lchan_cqe_seen.3
	lchan_ctx_open.3 lchan_ctx_setup_poller.3 lchan_establish.3
	lchan_get_sqe.3 lchan_listen.3 lchan_mr_reg.3 lchan_msg_connect.3
	lchan_msg_progress.3 lchan_msg_recv.3 lchan_msg_send.3
	lchan_peek_cqe.3 lchan_prep_cmp_swap.3 lchan_prep_recv.3
	lchan_prep_send.3 lchan_prep_write.3 lchan_query.3
	lchan_sqe_set_sges.3 lchan_submit.3 lchan_submit_and_wait.3
	lchan_wait_cqe.3"

check_need cc groff perl
t=$(check_dir man-examples)
check_run "$t/lib.log" "lib/liblchan.a does not build" make --no-print-directory -C lib liblchan.a
CFLAGS=(-std=c11 -Wall -Wextra -Werror -I"$REPO/lib" -I"$REPO/uapi")

# The page with a marker line around each .EX block of its EXAMPLES
# section, rendered as man(1) renders it; then the blocks, one file each:
# $t/PAGE.N.txt.  Prints how many.
extract() { # PAGE
	local page=$1 base
	base=$(basename "$page")
	awk '
		/^\.SH/ { ex = ($0 ~ /^\.SH +"?EXAMPLES"?[[:space:]]*$/) }
		ex && /^\.(EX|nf)/ { print; print "@@example-begin@@"; next }
		ex && /^\.(EE|fi)/ { print "@@example-end@@" }
		{ print }' "$page" |
		LC_ALL=C.UTF-8 groff -man -Tutf8 -P-cbou 2>/dev/null |
		perl -ne '
			BEGIN { ($dir, $base) = @ARGV[0, 1]; @ARGV = (); $n = 0 }
			if (/^\s*\@\@example-begin\@\@\s*$/) {
				$n++;
				open($out, ">", "$dir/$base.$n.txt") or die;
				next;
			}
			if (/^\s*\@\@example-end\@\@\s*$/) { close($out); undef $out; next }
			print $out $_ if $out;
			END { print "$n\n" }' "$t" "$base"
}

pages=()
for page in man/*.[1-8]; do
	grep -q '^\.so man[1-8]/' "$page" || pages+=("$page")
done
[ "${#pages[@]}" -gt 20 ] || check_fail "only ${#pages[@]} pages in man/"
for r in $required; do
	[ -f "man/$r" ] || check_fail "$r is required to have an example but does not exist"
done

units=0
linked=0
for page in "${pages[@]}"; do
	base=$(basename "$page")
	sec=${base##*.}
	problems=()
	nc=0
	blocks=$(extract "$page")
	for ((k = 1; k <= blocks; k++)); do
		txt=$t/$base.$k.txt
		first=$(grep -m1 -v '^[[:space:]]*$' "$txt" | sed 's/^[[:space:]]*//')
		case $first in
		'#include'* | '#define'*) ;;
		*)
			[ "$sec" != 3 ] || problems+=("example $k is not a whole C unit (#include first)")
			continue
			;;
		esac
		nc=$((nc + 1))
		units=$((units + 1))
		wide=$(awk 'length($0) > 80 { print NR; exit }' "$txt")
		[ -z "$wide" ] || problems+=("example $k: line $wide is wider than 80 columns")
		src=$t/$base.$k.c
		cp "$txt" "$src"
		if ! out=$(cc "${CFLAGS[@]}" -c -o "$t/$base.$k.o" "$src" 2>&1); then
			problems+=("example $k does not compile ($src):")
			while IFS= read -r l; do problems+=("  $l"); done < <(head -n 15 <<<"$out")
			continue
		fi
		if grep -Eq '^[[:space:]]*int[[:space:]]+main[[:space:]]*\(' "$src"; then
			if ! out=$(cc -o "$t/$base.$k" "$t/$base.$k.o" "$REPO/lib/liblchan.a" 2>&1); then
				problems+=("example $k does not link with lib/liblchan.a:")
				while IFS= read -r l; do problems+=("  $l"); done < <(head -n 15 <<<"$out")
				continue
			fi
			linked=$((linked + 1))
		fi
	done
	has_examples=$(grep -c '^\.SH "\?EXAMPLES"\?[[:space:]]*$' "$page")
	if [ "$nc" = 0 ] && grep -qw "$base" <<<"$required"; then
		problems+=("$base needs an EXAMPLES section with a C example")
	fi
	if [ "$has_examples" = 0 ] && { [ "$sec" = 1 ] || [ "$sec" = 8 ]; }; then
		problems+=("$base is a tool's page without an EXAMPLES section")
	fi
	if [ "${#problems[@]}" != 0 ]; then
		notok "$base" "${problems[@]}"
	elif [ "$nc" != 0 ]; then
		ok "$base: $nc C example(s) compile"
	elif [ "$has_examples" != 0 ]; then
		ok "$base: shell example(s), not compiled"
	else
		skip "$base" "no EXAMPLES"
	fi
done

tap_done "$units C examples compile ($linked programs linked with liblchan.a), ${#pages[@]} pages" "$tap_failed of ${#pages[@]} pages"
