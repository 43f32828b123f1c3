#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install everything the rig needs on a Debian 12 host, then fetch the guest
# kernels:
#   rig/setup.sh [KERNEL...]   (names from rig/kernels; default
#                                     LCHAN_KERNEL, else the first entry)
# Each kernel needs its headers (linux-headers-<release>) and its
# linux-source-<series> (kselftest headers, checkpatch, siw).
# Idempotent and quick when nothing is missing: apt-get update only runs
# when a package is missing or the lists are older than an hour
# (LCHAN_APT_UPDATE=1 forces it), since the kernel releases are read from
# them.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

export DEBIAN_FRONTEND=noninteractive

kernels=("$@")
[ "${#kernels[@]}" -gt 0 ] || kernels=("$(rig_kernel)")
for k in "${kernels[@]}"; do
	rig_kernel_field "$k" lane >/dev/null
done

# Host packages.  qperf/sockperf/strace/util-linux (setpriv), redis-tools
# (redis-check-rdb is redis-server by another name), iperf3 and wrk also
# go into the guest.
PKGS=(
	make gcc g++ clang libc6-dev xz-utils cpio gzip kmod perl
	qemu-system-x86 busybox-static
	rdma-core ibverbs-utils ibverbs-providers rdmacm-utils perftest
	iproute2 libibverbs-dev librdmacm-dev
	sparse strace qperf sockperf util-linux
	pkgconf groff-base man-db binutils patch
	gnuplot-nox linux-perf python3
	libfabric-dev libfabric-bin openmpi-bin libopenmpi-dev
	redis-tools iperf3 wrk
)
# For the guest only, unpacked and not installed (rig/unpacked.sh).
UNPACKED_PKGS=(nginx)
# Wanted but not required: the host check that needs it SKIPs without it.
OPTIONAL_PKGS=(dkms)

update_stamp=$LCHAN_CACHE/apt-updated

apt_update() {
	rig_log "apt-get update"
	if rig_root apt-get update -qq; then
		mkdir -p "$LCHAN_CACHE"
		touch "$update_stamp"
	else
		# Offline or a mirror hiccup: go on with the lists we have.
		rig_log "warning: apt-get update failed; using the existing package lists"
	fi
}

missing_pkgs() {
	local p st
	for p in "$@"; do
		st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
		[ "$st" = "install ok installed" ] || printf '%s\n' "$p"
	done
}

# Old lists could name a kernel that has left the mirror, so refresh them
# hourly.  LCHAN_APT_UPDATE=1 forces an update; =0 says the caller just ran
# one (.ci/run), so the lists count as fresh.
updated=0
case ${LCHAN_APT_UPDATE:-auto} in
1) want_update=1 ;;
0) want_update=0 updated=1 ;;
*) if [ -n "$(find "$update_stamp" -mmin -60 2>/dev/null)" ]; then want_update=0; else want_update=1; fi ;;
esac
if [ "$want_update" = 1 ]; then
	apt_update
	updated=1
fi

# Each kernel's headers and source package; resolved again after an update,
# whose lists may name newer kernels.
resolve_kernel_pkgs() {
	local k kver
	kpkgs=()
	for k in "${kernels[@]}"; do
		kver=$("$RIG_DIR/kver.sh" "$k") || rig_die "cannot resolve kernel $k"
		kpkgs+=("linux-headers-$kver" "linux-source-$(rig_kernel_field "$k" source)")
	done
}
resolve_kernel_pkgs
mapfile -t missing < <(missing_pkgs "${PKGS[@]}" "${kpkgs[@]}" | sort -u)
if [ "${#missing[@]}" -gt 0 ]; then
	if [ "$updated" = 0 ]; then
		apt_update
		updated=1
		resolve_kernel_pkgs
		mapfile -t missing < <(missing_pkgs "${PKGS[@]}" "${kpkgs[@]}" | sort -u)
	fi
	rig_log "installing: ${missing[*]}"
	rig_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		rig_die "apt-get install failed: ${missing[*]}"
fi
mapfile -t missing < <(missing_pkgs "${OPTIONAL_PKGS[@]}")
if [ "${#missing[@]}" -gt 0 ]; then
	[ "$updated" = 1 ] || apt_update
	rig_log "installing (optional): ${missing[*]}"
	rig_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		rig_log "warning: could not install ${missing[*]}; the checks that need them skip"
fi

for p in "${UNPACKED_PKGS[@]}"; do
	"$RIG_DIR/unpacked.sh" "$p"
done

# KVER may be make's, for its default kernel: each resolves its own.
for k in "${kernels[@]}"; do
	LCHAN_KERNEL=$k KVER='' "$RIG_DIR/kernel.sh"
	rig_log "guest kernel $k ready: $("$RIG_DIR/kver.sh" "$k")"
done
