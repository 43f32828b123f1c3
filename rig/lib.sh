# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the rig scripts (sourced, not run).

# Repository root, whatever the caller's working directory.
RIG_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$RIG_DIR/.." && pwd)
B=${B:-$REPO/build}
# Per-user cache that outlives `make clean` and fresh clones.
LCHAN_CACHE=${LCHAN_CACHE:-$HOME/.cache/lchan}
# kselftest's KSFT_SKIP: the exit status of a check or test that skipped.
# shellcheck disable=SC2034 # read by the scripts that source this
ksft_skip=4

rig_log() { printf '[rig] %s\n' "$*" >&2; }
rig_die() { printf '[rig] error: %s\n' "$*" >&2; exit 1; }
# One of the reports of rig/report/ (python3 -m report WHICH ARGS...).
rig_report() { PYTHONPATH="$RIG_DIR${PYTHONPATH:+:$PYTHONPATH}" python3 -m report "$@"; }

# Run as root directly, else through sudo (apt-get, depmod into caches need neither
# root nor sudo, only package installation does).
rig_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	else
		sudo "$@"
	fi
}

# The list of guest kernels (one place: name, lane, source, how to resolve).
RIG_KERNELS=$RIG_DIR/kernels

# Its entries without comments, one per line: name lane source meta abi.
rig_kernel_entries() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$RIG_KERNELS"
}

# Names of the kernels in LANE (check, rt), or of all of them.
# shellcheck disable=SC2120 # the argument is optional
rig_kernel_names() {
	rig_kernel_entries | awk -v lane="${1:-}" 'lane == "" || $2 == lane { print $1 }'
}

# The kernel to work on: LCHAN_KERNEL (make's KERNEL), else the entry whose
# release pattern KVER matches, else the first entry.
rig_kernel() {
	local k=${LCHAN_KERNEL:-} name abi
	if [ -z "$k" ] && [ -n "${KVER:-}" ]; then
		while read -r name _ _ _ abi; do
			if grep -E -q -x "$abi" <<<"$KVER"; then
				k=$name
				break
			fi
		done < <(rig_kernel_entries)
	fi
	[ -n "$k" ] || k=$(rig_kernel_names | head -n1)
	printf '%s\n' "$k"
}

# rig_kernel_field NAME lane|source|meta|abi
rig_kernel_field() {
	local col v
	case $2 in
	lane) col=2 ;;
	source) col=3 ;;
	meta) col=4 ;;
	abi) col=5 ;;
	*) rig_die "no kernel field $2" ;;
	esac
	v=$(rig_kernel_entries | awk -v n="$1" -v c="$col" '$1 == n { print $c; exit }')
	[ -n "$v" ] || rig_die "unknown kernel '$1' (rig/kernels: $(rig_kernel_names | paste -sd ' '))"
	printf '%s\n' "$v"
}

# The Debian kernel release (uname -r) everything is built and booted
# against: KVER, else that of rig_kernel.
rig_kver() {
	if [ -z "${KVER:-}" ]; then
		KVER=$("$RIG_DIR/kver.sh" "$(rig_kernel)")
	fi
	[ -n "$KVER" ] || rig_die "cannot resolve the Debian kernel version (run rig/setup.sh)"
	printf '%s\n' "$KVER"
}

# KVER (rig_kver) and KDIR, its Debian headers unless KDIR is given.
rig_use_kernel() {
	KVER=$(rig_kver) || return 1
	KDIR=${KDIR:-/usr/src/linux-headers-$KVER}
}

# The linux-source series (6.1, 6.12) of rig_kernel.
rig_src_series() {
	rig_kernel_field "$(rig_kernel)" source
}

# Version of the installed linux-source-SERIES package (keys the source
# cache); SERIES defaults to rig_src_series.
rig_src_version() {
	local series=${1:-}
	[ -n "$series" ] || series=$(rig_src_series) || return 1
	dpkg-query -W -f='${Version}' "linux-source-$series" 2>/dev/null
}

rig_src_tarball() {
	local series=${1:-}
	[ -n "$series" ] || series=$(rig_src_series) || return 1
	printf '%s\n' "/usr/src/linux-source-$series.tar.xz"
}

# Seconds since the epoch, for phase timings.
rig_now() { date +%s; }

# Members of linux-source-<series> the rig needs, extracted in one tar pass
# (the xz tarball takes ~15 s to walk, so never more than once per version).
RIG_SRC_MEMBERS=(
	tools/testing/selftests/kselftest_harness.h
	tools/testing/selftests/kselftest.h
	tools/testing/selftests/kselftest/runner.sh
	tools/testing/selftests/kselftest/prefix.pl
	scripts/checkpatch.pl
	scripts/spelling.txt
	scripts/const_structs.checkpatch
	drivers/infiniband/sw/siw
)

# Ensure the source cache for the installed linux-source-SERIES (default:
# rig_src_series) exists and print its directory.
# shellcheck disable=SC2120 # the argument is optional
rig_src_cache() {
	local series=${1:-} ver tarball dir tmp m
	[ -n "$series" ] || series=$(rig_src_series) || return 1
	tarball=$(rig_src_tarball "$series")
	ver=$(rig_src_version "$series")
	[ -n "$ver" ] && [ -r "$tarball" ] ||
		rig_die "linux-source-$series is not installed (run rig/setup.sh)"
	dir=$LCHAN_CACHE/src/$ver
	# A cache from before a member joined the list is extracted again.
	for m in "${RIG_SRC_MEMBERS[@]}"; do
		[ -e "$dir/$m" ] || rm -f "$dir/.complete"
	done
	if [ ! -f "$dir/.complete" ]; then
		mkdir -p "$LCHAN_CACHE/src"
		# Serialise concurrent builds: they would extract the same thing.
		exec {lockfd}>"$LCHAN_CACHE/src/.lock"
		flock "$lockfd"
		if [ ! -f "$dir/.complete" ]; then
			rig_log "extracting kselftest headers, checkpatch and siw from linux-source-$series $ver"
			tmp=$(mktemp -d "$LCHAN_CACHE/src/.tmp.XXXXXX")
			local args=()
			for m in "${RIG_SRC_MEMBERS[@]}"; do
				args+=("linux-source-$series/$m")
			done
			tar -xJf "$tarball" -C "$tmp" --strip-components=1 "${args[@]}" ||
				{ rm -rf "$tmp"; rig_die "extracting from $tarball failed"; }
			for m in "${RIG_SRC_MEMBERS[@]}"; do
				[ -e "$tmp/$m" ] || { rm -rf "$tmp"; rig_die "$tarball has no $m"; }
			done
			chmod 755 "$tmp"
			touch "$tmp/.complete"
			rm -rf "$dir"
			mv "$tmp" "$dir"
		fi
		flock -u "$lockfd"
		exec {lockfd}>&-
	fi
	printf '%s\n' "$dir"
}

# Ready the guest kernel (rig/setup.sh), export its KVER, and build each
# TARGET against it; a make that fails stops the caller, except for the
# TARGETs after --may-fail, which warn: the guest gets what there is.
rig_build_for_guest() { # TARGET... [--may-fail TARGET...]
	local t may_fail=0
	"$RIG_DIR/setup.sh"
	KVER=$("$RIG_DIR/kver.sh")
	export KVER
	for t in "$@"; do
		if [ "$t" = --may-fail ]; then
			may_fail=1
		elif [ "$may_fail" = 1 ]; then
			make -s KVER="$KVER" KDIR="/usr/src/linux-headers-$KVER" "$t" ||
				rig_log "warning: make $t failed; the guest gets what there is"
		else
			make -s KVER="$KVER" KDIR="/usr/src/linux-headers-$KVER" "$t"
		fi
	done
}

# The run directory of a job: build/runs/JOB, or build/runs/JOB-<name> when
# LCHAN_KERNEL names a kernel (or is "debug").
rig_run_dir() {
	printf '%s\n' "$B/runs/$1${LCHAN_KERNEL:+-$LCHAN_KERNEL}"
}
