#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build (once) the guest initramfs for the kernel (LCHAN_KERNEL, or KVER)
# and print its path:
#   ~/.cache/lchan/$KVER/initramfs-<hash>.cpio.gz
# The hash covers this script, the guest init and the versions of the host
# packages whose files go in, so it is rebuilt only when one of them changes.
# Fresh build outputs (lchan.ko, siw.ko, tests) do not live here: they reach
# the guest through the 9p share.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

KVER=$(rig_kver)
kdir=$LCHAN_CACHE/$KVER
kroot=$kdir/root
[ -f "$kroot/.complete" ] || "$RIG_DIR/kernel.sh"

# Modules the guest loads, dependencies are added by modprobe.  rxe needs a
# crc32 algorithm that modules.dep does not name; siw (built separately)
# needs libcrc32c and a crc32c algorithm.
MODULES=(
	virtio_pci virtio_net virtio_rng 9p 9pnet_virtio e1000
	dummy veth sch_netem sch_prio cls_u32
	ib_core ib_uverbs ib_umad ib_cm iw_cm rdma_cm rdma_ucm rdma_rxe
	crc32_generic crc32-pclmul libcrc32c crc32c_generic crc32c-intel
)

# Real programs (busybox would shadow some: call them by full path).
PROGRAMS=(
	/usr/sbin/ip /usr/sbin/tc /usr/bin/rdma /usr/bin/ss
	/usr/bin/ibv_devices /usr/bin/ibv_devinfo
	/usr/bin/ibv_rc_pingpong /usr/bin/ibv_ud_pingpong
	/usr/bin/rping /usr/bin/udaddy /usr/bin/ucmatose
	/usr/bin/rstream /usr/bin/riostream /usr/bin/cmtime
	/usr/bin/rdma_server /usr/bin/rdma_client
	/usr/bin/ib_send_lat /usr/bin/ib_send_bw /usr/bin/ib_write_lat
	/usr/bin/ib_write_bw /usr/bin/ib_read_lat /usr/bin/ib_read_bw
	/usr/bin/ib_atomic_lat
	/usr/bin/qperf /usr/bin/sockperf /usr/bin/strace /usr/bin/setpriv
	/usr/bin/bash /usr/bin/perf
	/usr/bin/fi_info /usr/bin/fi_pingpong
	/usr/bin/mpirun /usr/bin/orted
	/usr/bin/redis-check-rdb /usr/bin/redis-benchmark /usr/bin/redis-cli
	/usr/bin/iperf3 /usr/bin/wrk
)
# Programs of packages unpacked, not installed (rig/unpacked.sh), at
# their package's path: PKG:PATH.
UNPACKED=(nginx:/usr/sbin/nginx)
MULTIARCH=/usr/lib/x86_64-linux-gnu
# Loaded with dlopen, so ldd of the programs does not show them.
DLOPENED=(
	"$MULTIARCH/libgcc_s.so.1"
	"$MULTIARCH/libibverbs/librxe-rdmav34.so"
	"$MULTIARCH/libibverbs/libsiw-rdmav34.so"
	"$MULTIARCH/rsocket/librspreload.so"
)
DRIVER_FILES=(/etc/libibverbs.d/rxe.driver /etc/libibverbs.d/siw.driver)
# Open MPI loads its components and PMIx's with dlopen from its own
# directories, and reads its help and parameter files at run time.
OMPI_PLUGIN_DIRS=("$MULTIARCH/openmpi/lib/openmpi3" "$MULTIARCH/pmix2/lib/pmix")
OMPI_DATA_DIRS=(/usr/share/openmpi /etc/openmpi "$MULTIARCH/pmix2/share")
# Packages that provide the files above: their versions key the cache.
SRC_PKGS=(busybox-static iproute2 ibverbs-utils ibverbs-providers
	rdmacm-utils perftest qperf sockperf strace util-linux bash libc6 libgcc-s1
	libibverbs1 librdmacm1 linux-perf libfabric-bin libfabric1
	openmpi-bin openmpi-common libopenmpi3 libpmix2 redis-tools iperf3
	libiperf0 wrk)

hash=$( {
	cat "$RIG_DIR/initramfs.sh" "$RIG_DIR/init.sh"
	printf '%s\n' "$KVER"
	dpkg-query -W -f='${Package} ${Version}\n' "${SRC_PKGS[@]}"
	for u in "${UNPACKED[@]}"; do
		cat "$LCHAN_CACHE/unpacked/${u%%:*}/version" 2>/dev/null || true
	done
} | sha256sum | cut -c1-16)
out=$kdir/initramfs-$hash.cpio.gz
manifest=$kdir/initramfs-$hash.files

if [ -f "$out" ] && [ -f "$manifest" ]; then
	# Marks it in use (see the pruning below).
	touch "$out" "$manifest"
	printf '%s\n' "$out"
	exit 0
fi

rig_log "building initramfs for $KVER ($hash)"
work=$(mktemp -d "$kdir/.initramfs.XXXXXX")
trap 'rm -rf "$work"' EXIT
r=$work/root

# Merged /usr like the host, so ldd's paths and the program paths agree.
mkdir -p "$r"/usr/{bin,sbin,lib,lib64} "$r"/{dev,proc,sys,tmp,run,mnt/host,etc,root}
ln -s usr/bin "$r/bin"
ln -s usr/sbin "$r/sbin"
ln -s usr/lib "$r/lib"
ln -s usr/lib64 "$r/lib64"

# busybox and its applet links.
cp /bin/busybox "$r/usr/bin/busybox"
case $(ldd /bin/busybox 2>&1 || true) in
*"not a dynamic"*) ;;
*) rig_die "/bin/busybox is not the static one (install busybox-static)" ;;
esac
while read -r applet; do
	applet=${applet#/}
	case $applet in bin/*|sbin/*) applet=usr/$applet ;; esac
	[ "$applet" = usr/bin/busybox ] && continue
	mkdir -p "$r/$(dirname "$applet")"
	ln -sf /usr/bin/busybox "$r/$applet"
done < <(/bin/busybox --list-full)

# Copy a host file to the same path in the guest (or to GUEST-PATH),
# dereferencing links (the guest needs the content, whatever the host's
# link farm looks like).
put() {
	local f=$1 dst
	dst=$r${2:-$f}
	case ${2:-$f} in /bin/*|/sbin/*|/lib/*|/lib64/*) dst=$r/usr${2:-$f} ;; esac
	mkdir -p "$(dirname "$dst")"
	rm -f "$dst"
	cp -L "$f" "$dst"
}

# Shared libraries of a binary, as absolute paths.
libs_of() {
	ldd "$1" 2>/dev/null | awk '/=> \//{print $3} /^[ \t]*\/[^ ]*ld-linux/{print $1}'
}

declare -A seen=()
put_with_libs() {
	local f=$1 l
	put "$f" "${2:-}"
	for l in $(libs_of "$f"); do
		[ -n "${seen[$l]:-}" ] && continue
		seen[$l]=1
		put "$l"
		printf '%s\n' "$(basename "$l")" >>"$work/libs"
	done
}

: >"$work/libs"
for p in "${PROGRAMS[@]}" "${DLOPENED[@]}"; do
	[ -e "$p" ] || rig_die "$p missing on the host (run rig/setup.sh)"
	put_with_libs "$p"
	case $p in *.so*) printf '%s\n' "$(basename "$p")" >>"$work/libs" ;; esac
done
for u in "${UNPACKED[@]}"; do
	p=$LCHAN_CACHE/unpacked/${u%%:*}/root${u#*:}
	[ -x "$p" ] || rig_die "$p missing (run rig/setup.sh)"
	put_with_libs "$p" "${u#*:}"
done
for f in "${DRIVER_FILES[@]}"; do
	put "$f"
done
for d in "${OMPI_PLUGIN_DIRS[@]}"; do
	[ -d "$d" ] || rig_die "$d missing on the host (run rig/setup.sh)"
	for p in "$d"/*.so; do
		put_with_libs "$p"
	done
done
while read -r f; do
	put "$f"
done < <(find "${OMPI_DATA_DIRS[@]}" -type f)
# Without a cache ld.so may not search the multiarch dir.
printf '%s\n' /usr/lib/x86_64-linux-gnu /usr/lib >"$r/etc/ld.so.conf"
ldconfig -r "$r"

# Kernel modules with their dependencies, then the guest's own depmod.
mdir=lib/modules/$KVER
mkdir -p "$r/usr/$mdir"
for f in modules.order modules.builtin modules.builtin.modinfo; do
	cp "$kroot/$mdir/$f" "$r/usr/$mdir/"
done
for m in "${MODULES[@]}"; do
	modprobe -d "$kroot" -S "$KVER" --show-depends "$m" ||
		rig_die "module $m not found for $KVER"
done | awk '$1 == "insmod" {print $2}' | sort -u | while read -r ko; do
	rel=${ko#"$kroot"/}
	rel=${rel#usr/}
	mkdir -p "$r/usr/$(dirname "$rel")"
	case $ko in
	# 6.12 ships xz modules; busybox's modprobe need not read them.
	*.ko.xz) xz -dc "$ko" >"$r/usr/${rel%.xz}" ;;
	*) cp "$ko" "$r/usr/$rel" ;;
	esac
	printf '%s\n' "$(basename "${ko%.xz}" .ko)" >>"$work/modules"
done
depmod -b "$r" "$KVER"

# Minimal /etc: names for setpriv and getaddrinfo("localhost").
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$r/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n' >"$r/etc/hosts"
printf 'passwd: files\ngroup: files\nhosts: files\n' >"$r/etc/nsswitch.conf"

install -m 0755 "$RIG_DIR/init.sh" "$r/init"
# The kernel opens /dev/console before /init runs; devtmpfs comes later.
if [ "$(id -u)" -eq 0 ]; then
	mknod -m 600 "$r/dev/console" c 5 1
fi

(cd "$r" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --quiet --reproducible -R 0:0) | gzip -6 -n >"$work/initramfs.cpio.gz"
{ echo "[modules]"; sort -u "$work/modules"; echo "[libs]"; sort -u "$work/libs"; } >"$work/files"
mv -f "$work/files" "$manifest"
mv -f "$work/initramfs.cpio.gz" "$out"
# Older images for this kernel are dead weight once no checkout has used
# them for a day (another checkout's rig may still boot its own).
find "$kdir" -maxdepth 1 -name 'initramfs-*' ! -name "initramfs-$hash.*" -mmin +1440 -delete
printf '%s\n' "$out"
