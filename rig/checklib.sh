# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# What the host checks (rig/check-*.sh) share; sourced with CHECK set to
# the check's name.  rig/check.sh reads a check's last line, its verdict
# ("CHECK: ...", "CHECK: FAIL: ...", "CHECK: SKIP: ..." with exit status
# $ksft_skip), and the TAP lines of check-headers and check-readme.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO" || exit 1

check_fail() { echo "$CHECK: FAIL: $*"; exit 1; }
check_skip() { echo "$CHECK: SKIP: $*"; exit "$ksft_skip"; }

check_need() { # TOOL...
	local tool
	for tool in "$@"; do
		command -v "$tool" >/dev/null || check_fail "$tool is not installed (rig/setup.sh)"
	done
}

# A fresh work directory $B/NAME.
check_dir() { rm -rf "${B:?}/$1" && mkdir -p "$B/$1" && printf '%s\n' "$B/$1"; }

# CMD's output appended to LOG; on failure its tail, then FAIL naming WHAT.
check_run() { # LOG WHAT CMD...
	local log=$1 what=$2
	shift 2
	"$@" >>"$log" 2>&1 && return 0
	tail -n 30 "$log" | sed 's/^/#   /'
	check_fail "$what (log: $log)"
}

# Install TARGET (install-lib, install) with DESTDIR=DIR/stage, PREFIX
# /usr/local; sets stage and root (the prefix inside the stage).
check_stage() { # DIR TARGET
	stage=$1/stage root=$1/stage/usr/local
	check_run "$1/$2.log" "make $2" make --no-print-directory "$2" DESTDIR="$stage" PREFIX=/usr/local
}

# The lchan headers a compiler's dependency file names outside the stage.
check_foreign_headers() { # DEPFILE
	tr -s ' \134' '\n' <"$1" | grep -E '(^|/)(lib)?lchan[^/]*\.h$' | grep -v "^$root/include/"
}

# The words of tools/Makefile's VARIABLEs (PROGS, BENCH_PROGS), one line.
check_progs() { # VARIABLE...
	local v
	for v in "$@"; do sed -n "s/^$v *:\\?= *//p" tools/Makefile; done | paste -sd ' '
}

# Problems counted, one comment line each; check_done passes with
# SUMMARY or fails counting them.
errors=0
err() { echo "# $*"; errors=$((errors + 1)); }
check_done() { # SUMMARY
	[ "$errors" = 0 ] || check_fail "$errors problems"
	echo "$CHECK: $*"
}

# TAP: one line a case, detail lines behind "#   ".
tap_n=0 tap_failed=0 tap_skipped=0
ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n $*"; }
notok() { # DESCRIPTION [DETAIL...]
	tap_n=$((tap_n + 1)) tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n $1"
	shift
	[ $# = 0 ] || printf '#   %s\n' "$@"
}
skip() { tap_n=$((tap_n + 1)) tap_skipped=$((tap_skipped + 1)); echo "ok $tap_n $1 # SKIP $2"; }
tap_passed() { echo $((tap_n - tap_failed - tap_skipped)); }
# The plan, then the verdict: FAIL-SUMMARY if a case failed, else SUMMARY.
tap_done() { # SUMMARY [FAIL-SUMMARY]
	echo "1..$tap_n"
	[ "$tap_failed" = 0 ] || check_fail "${2:-$1}"
	echo "$CHECK: $1"
}

# The sysfs attributes of kmod/lchan_sysfs.c,
# "<root|dev|chan|link>/NAME RO|RW" a line, from the entries of its
# attribute arrays and their __ATTR(), __ATTR_RO(), LCHAN_CHAN_ATTR() or
# LCHAN_LINK_ATTR() definitions; "error: ..." lines for what does not
# parse.
check_sysfs_defined() {
	perl -0777 -ne '
	my %name;	# C variable -> [sysfs name, mode]
	while (/static struct kobj_attribute (\w+)\s*=\s*__ATTR_RO\((\w+)\)/g) { $name{$1} = [$2, "RO"] }
	while (/static struct kobj_attribute (\w+)\s*=\s*__ATTR\((\w+),\s*(0\d+)/g) {
		my ($var, $attr, $perm) = ($1, $2, $3);
		$name{$var} = [$attr, $perm =~ /^0[0-4]{3}$/ ? "RO" : "RW"];
	}
	while (/^LCHAN_CHAN_ATTR\((\w+),/mg) { $name{"chan_$1_attr"} = [$1, "RO"] }
	while (/^LCHAN_LINK_ATTR\((\w+),/mg) { $name{"link_$1_attr"} = [$1, "RO"] }
	my %kind = (lchan_root_attrs => "root", lchan_dev_attrs => "dev", lchan_chan_attrs => "chan",
		    lchan_link_attrs => "link");
	while (/static struct attribute \*(\w+)\[\]\s*=\s*\{(.*?)\};/sg) {
		my ($arr, $body) = ($1, $2);
		next unless $kind{$arr};
		while ($body =~ /&(\w+)\.attr/g) {
			my $n = $name{$1} or do { print "error: $arr: no definition of $1\n"; next };
			print "$kind{$arr}/$n->[0] $n->[1]\n";
		}
	}' kmod/lchan_sysfs.c | sort
}

# The same from Documentation/ABI/testing/sysfs-kernel-lchan, the mode
# being the (RO), (RW) or (WO) of the description, "?" without; "error:"
# lines for an entry whose fields are not in order or an unexpected What:.
check_sysfs_documented() {
	perl -ne '
	BEGIN { @want = qw(What Date KernelVersion Contact Description); }
	sub flush {
		return unless @whats;
		my $order = join(" ", @fields);
		print "error: entry $whats[0]: fields are \"$order\", not \"@want\"\n"
			unless $order eq "@want";
		for my $w (@whats) {
			next if $w =~ m{/$};
			my $k;
			if ($w =~ m{^/sys/kernel/lchan/([^/<]+)$}) { $k = "root/$1" }
			elsif ($w =~ m{^/sys/kernel/lchan/devices/<dev>/([^/]+)$}) { $k = "dev/$1" }
			elsif ($w =~ m{^/sys/kernel/lchan/channels/<id>/([^/]+)$}) { $k = "chan/$1" }
			elsif ($w =~ m{^/sys/kernel/lchan/links/<n>/([^/]+)$}) { $k = "link/$1" }
			else { print "error: unexpected What: $w\n"; next }
			print "$k ", ($mode // "?"), "\n";
		}
		@whats = (); @fields = (); undef $mode; $desc = 0;
	}
	if (/^What:\s*(\S+)/) {
		flush() if $desc;
		push @whats, $1;
		push @fields, "What" if !@fields;
	} elsif (/^(Date|KernelVersion|Contact|Description):/) {
		push @fields, $1;
		$desc = 1 if $1 eq "Description";
	}
	$mode //= $1 if $desc && /\((RO|RW|WO)\)/;
	END { flush() }' Documentation/ABI/testing/sysfs-kernel-lchan | sort
}
