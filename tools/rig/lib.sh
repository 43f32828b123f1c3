# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the rig scripts (sourced, not run).

# Repository root, whatever the caller's working directory.
RIG_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$RIG_DIR/../.." && pwd)
B=${B:-$REPO/build}
# Per-user cache that outlives `make clean` and fresh clones.
LCHAN_CACHE=${LCHAN_CACHE:-$HOME/.cache/lchan}

rig_log() { printf '[rig] %s\n' "$*" >&2; }
rig_die() { printf '[rig] error: %s\n' "$*" >&2; exit 1; }

# Run as root directly, else through sudo (apt-get, depmod into caches need neither
# root nor sudo, only package installation does).
rig_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	else
		sudo "$@"
	fi
}

# The Debian kernel ABI everything is built and booted against.
rig_kver() {
	if [ -z "${KVER:-}" ]; then
		KVER=$("$RIG_DIR/kver.sh")
	fi
	[ -n "$KVER" ] || rig_die "cannot resolve the Debian kernel version (run tools/rig/setup.sh)"
	printf '%s\n' "$KVER"
}

# Version of the installed linux-source-6.1 package (keys the source cache).
rig_src_version() {
	dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null
}

rig_src_tarball() {
	printf '%s\n' /usr/src/linux-source-6.1.tar.xz
}

# Seconds since the epoch, for phase timings.
rig_now() { date +%s; }

# Members of linux-source-6.1 the rig needs, extracted in one tar pass (the
# xz tarball takes ~15 s to walk, so never more than once per version).
RIG_SRC_MEMBERS=(
	tools/testing/selftests/kselftest_harness.h
	tools/testing/selftests/kselftest.h
	scripts/checkpatch.pl
	scripts/spelling.txt
	scripts/const_structs.checkpatch
	drivers/infiniband/sw/siw
)

# Ensure the source cache for the installed linux-source-6.1 exists and
# print its directory.
rig_src_cache() {
	local ver tarball dir tmp m
	tarball=$(rig_src_tarball)
	ver=$(rig_src_version)
	[ -n "$ver" ] && [ -r "$tarball" ] ||
		rig_die "linux-source-6.1 is not installed (run tools/rig/setup.sh)"
	dir=$LCHAN_CACHE/src/$ver
	if [ ! -f "$dir/.complete" ]; then
		mkdir -p "$LCHAN_CACHE/src"
		# Serialise concurrent builds: they would extract the same thing.
		exec {lockfd}>"$LCHAN_CACHE/src/.lock"
		flock "$lockfd"
		if [ ! -f "$dir/.complete" ]; then
			rig_log "extracting kselftest headers, checkpatch and siw from linux-source-6.1 $ver"
			tmp=$(mktemp -d "$LCHAN_CACHE/src/.tmp.XXXXXX")
			local args=()
			for m in "${RIG_SRC_MEMBERS[@]}"; do
				args+=("linux-source-6.1/$m")
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
