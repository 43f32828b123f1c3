#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# PID 1 of the test guest (busybox sh).  Mounts the 9p share, brings up the
# network and the soft-RoCE/soft-iWARP devices, runs guest/$JOB.sh from the
# share under a hard timeout, saves dmesg and tells qemu the verdict through
# isa-debug-exit (qemu exits 1 = pass, 3 = fail).
#
# Kernel command line: lchan.job=NAME lchan.timeout=SECS (0 = none)
#                      lchan.test_timeout=SECS (per test binary)

export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
umask 022

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t configfs configfs /sys/kernel/config 2>/dev/null
# Enabling any trace event also hooks the scheduler's wake-up and switch
# tracepoints to record task names, which patches code every CPU runs.
# QEMU 7.2's multi-threaded TCG can translate that code while it is being
# patched and keep running the copy with the patch's int3 ("Oops: int3";
# fixed in QEMU 8.1, which locks pages before translating).  No test
# needs the names.
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
echo 0 >/sys/kernel/tracing/options/record-cmd 2>/dev/null
# cgroup v2: lchan_memcg_test charges rings to a memory cgroup.
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
# In case the initramfs had no /dev/console node.
exec </dev/console >/dev/console 2>&1

SHARE=/mnt/host
OUT=$SHARE/out
IP=/usr/sbin/ip  # busybox's own ip applet would win over a bare "ip"
job=
job_timeout=600
test_timeout=600

say() {
	read -r _up _ </proc/uptime
	echo "rig-guest: [$_up] $*"
}

# Write the verdict byte to port 0xf4: qemu exits with (byte << 1) | 1.
verdict() {
	sync
	say "verdict: $( [ "$1" = 0 ] && echo pass || echo fail )"
	if [ "$1" = 0 ]; then printf '\000'; else printf '\001'; fi |
		dd of=/dev/port bs=1 seek=244 count=1 2>/dev/null
	# Only reached without the isa-debug-exit device.
	say "isa-debug-exit did not stop the machine; powering off"
	poweroff -f
	sleep 60
}

setup_failed() {
	say "SETUP FAILED: $*"
	[ -d "$OUT" ] && dmesg >"$OUT/dmesg.txt" 2>/dev/null
	verdict 1
}

read -r cmdline </proc/cmdline
for arg in $cmdline; do
	case $arg in
	lchan.job=*) job=${arg#*=} ;;
	lchan.timeout=*) job_timeout=${arg#*=} ;;
	lchan.test_timeout=*) test_timeout=${arg#*=} ;;
	lchan.kallsyms=1) want_kallsyms=1 ;;
	esac
done
[ -n "$job" ] || setup_failed "no lchan.job= on the kernel command line"

hostname lchan-guest
# shellcheck disable=SC3045 # busybox ash has ulimit -l and -c
ulimit -l unlimited # RDMA pins memory
# shellcheck disable=SC3045
ulimit -c 0

# The share: fresh build outputs in, results out.
modprobe -a virtio_pci virtio_rng virtio_net 9pnet_virtio 9p ||
	setup_failed "virtio/9p modules"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 host0 "$SHARE" ||
	setup_failed "mounting the 9p share"
mkdir -p "$OUT"
say "share mounted"
# The kernel's text symbols, once per kernel (nokaslr: the same every
# boot), for the host to name where a hung guest's vCPUs were.
if [ "${want_kallsyms:-0}" = 1 ]; then
	grep ' [tT] ' /proc/kallsyms | grep -v '\[' >"$OUT/kallsyms" || true
fi

# depends= of a .ko file (busybox modinfo only looks names up).
ko_depends() {
	strings "$1" | sed -n 's/^depends=//p' | tr ',' ' '
}

# Network: eth0 is qemu's user net (restrict=on, nothing leaves the VM).
# dummy0 carries siw0; dummy1/dummy2 are spares for tests that create and
# delete their own rxe/siw links.  One `ip -batch`: each exec of ip costs
# ~0.1 s under TCG.
modprobe dummy numdummies=0 || setup_failed "modprobe dummy"
i=0
while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -e /sys/class/net/eth0 ] || setup_failed "no eth0"
cat >/tmp/net.batch <<NET
link set lo up
addr add 10.0.2.15/24 dev eth0
addr add fd00:1c::15/64 dev eth0 nodad
link set eth0 up
link add dummy0 type dummy
addr add 192.0.2.1/24 dev dummy0
addr add 2001:db8:1::1/64 dev dummy0 nodad
link set dummy0 up
link add dummy1 type dummy
addr add 198.51.100.1/24 dev dummy1
addr add 2001:db8:2::1/64 dev dummy1 nodad
link set dummy1 up
link add dummy2 type dummy
addr add 203.0.113.1/24 dev dummy2
addr add 2001:db8:3::1/64 dev dummy2 nodad
link set dummy2 up
NET
$IP -batch /tmp/net.batch || setup_failed "network configuration"
say "network up"

# soft-RoCE.  rxe needs a crc32 algorithm that modules.dep does not name.
modprobe crc32-pclmul 2>/dev/null || true
modprobe -a crc32_generic ib_uverbs ib_umad rdma_ucm rdma_rxe ||
	setup_failed "rxe modules"
rdma link add rxe0 type rxe netdev eth0 || setup_failed "rdma link add rxe0"

# soft-iWARP, built out of tree and fresh on the share.
[ -f "$SHARE/siw.ko" ] || setup_failed "siw.ko missing from the share"
modprobe crc32c-intel 2>/dev/null || true
# shellcheck disable=SC2046 # word splitting of the dependency list is wanted
modprobe -a crc32c_generic $(ko_depends "$SHARE/siw.ko") || setup_failed "siw dependencies"
insmod "$SHARE/siw.ko" || setup_failed "insmod siw.ko"
rdma link add siw0 type siw netdev dummy0 || setup_failed "rdma link add siw0"
say "rxe0 and siw0 up"

# The environment the tests rely on; also kept for sourcing.
cat >/etc/lchan.env <<ENV
export LCHAN_SHARE=$SHARE
export LCHAN_KO=$SHARE/lchan.ko
export LCHAN_RXE_DEV=rxe0
export LCHAN_RXE_NETDEV=eth0
export LCHAN_RXE_ADDR=10.0.2.15
export LCHAN_RXE_ADDR6=fd00:1c::15
export LCHAN_SIW_DEV=siw0
export LCHAN_SIW_NETDEV=dummy0
export LCHAN_SIW_ADDR=192.0.2.1
export LCHAN_SIW_ADDR6=2001:db8:1::1
export LCHAN_SPARE_RXE_NETDEV=dummy1
export LCHAN_SPARE_RXE_ADDR=198.51.100.1
export LCHAN_SPARE_RXE_ADDR6=2001:db8:2::1
export LCHAN_SPARE_SIW_NETDEV=dummy2
export LCHAN_SPARE_SIW_ADDR=203.0.113.1
export LCHAN_SPARE_SIW_ADDR6=2001:db8:3::1
export LCHAN_TOOLS=$SHARE/tools
export LCHAN_SELFTESTS=$SHARE/selftests
export LCHAN_FABRIC=$SHARE/fabric
export LCHAN_OUT=$OUT
export LCHAN_TEST_TIMEOUT=$test_timeout
export LD_LIBRARY_PATH=$SHARE/lib:$SHARE/syslib
ENV
cp /etc/lchan.env "$OUT/env.sh"
# shellcheck disable=SC1091 # written by the guest /init
. /etc/lchan.env

# kmemleak, on the debug kernel only.  A leak shows up on the second scan
# that finds it unreferenced (the first notes its checksum) and only once it
# is 5 s old; `clear` forgets what has been reported.  So: scan, wait, scan,
# clear before the job, and the same after it, so that what is left is what
# the job leaked.
KMEMLEAK=/sys/kernel/debug/kmemleak
kmemleak_scan() {
	echo scan >"$KMEMLEAK" && sleep 5 && echo scan >"$KMEMLEAK"
}
if [ -w "$KMEMLEAK" ]; then
	say "kmemleak: scanning what boot left"
	kmemleak_scan || setup_failed "kmemleak scan"
	cat "$KMEMLEAK" >"$OUT/kmemleak-boot.txt"
	echo clear >"$KMEMLEAK" || setup_failed "kmemleak clear"
	say "kmemleak: cleared $(grep -c 'unreferenced object' "$OUT/kmemleak-boot.txt") boot-time reports"
fi

jobfile=$SHARE/guest/$job.sh
[ -f "$jobfile" ] || setup_failed "no job $job ($jobfile)"
say "running job $job (timeout ${job_timeout}s)"
start=$(date +%s)
if [ "$job_timeout" = 0 ]; then
	sh "$jobfile"
	rc=$?
else
	# TERM first so the job can report, KILL 10 s later.
	timeout -k 10 "$job_timeout" sh "$jobfile"
	rc=$?
fi
elapsed=$(($(date +%s) - start))
if [ "$job_timeout" != 0 ] && [ "$elapsed" -ge "$job_timeout" ]; then
	say "job $job TIMED OUT after ${elapsed}s (limit ${job_timeout}s)"
	echo "timeout $elapsed" >"$OUT/job-timeout"
fi
say "job $job exited with status $rc after ${elapsed}s"
echo "$rc" >"$OUT/job-rc"
if [ -w "$KMEMLEAK" ]; then
	say "kmemleak: scanning"
	kmemleak_scan
	cat "$KMEMLEAK" >"$OUT/kmemleak.txt"
	# Worded so that run-vm.sh's kernel-log patterns do not match it.
	say "kmemleak: $(grep -c 'unreferenced object' "$OUT/kmemleak.txt") leak reports"
	cat "$OUT/kmemleak.txt"
fi
dmesg >"$OUT/dmesg.txt"
if [ "$rc" = 0 ]; then verdict 0; else verdict 1; fi
