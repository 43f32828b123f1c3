#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot the test guest for one job and judge the run.
#
#   tools/rig/run-vm.sh [-i] JOB [TIMEOUT_SECS]
#
# JOB is tools/rig/guest/JOB.sh, run inside the guest by its /init.  Fresh
# build outputs (kmod/lchan.ko, build/selftests, build/tools, lib/liblchan.so*,
# siw.ko, the rig self-test pieces) are staged into build/share/, the 9p
# share; the guest writes out/ there.  Everything of a run is kept under
# build/runs/JOB/: console.log (serial), dmesg.txt, tap.txt, logs/, and
# summary (machine-readable verdict for check.sh).
#
# Exit status is non-zero when a test failed, no test ran, the guest hung or
# gave no verdict, or the kernel log shows BUG/WARNING/Oops/... lines.
# -i: interactive (serial console on stdio, no timeout, no judging).
#
# LCHAN_KERNEL=<name> boots that kernel of tools/rig/kernels (default: its
# first entry) and keeps the run in build/runs/JOB-<name>.
# LCHAN_KERNEL=debug boots the debug kernel of tools/rig/debug-kernel.sh
# (KASAN, lockdep, kmemleak; built beforehand) with its own siw.ko and
# initramfs, and lchan.ko from $B/debug-kmod (make module-debug).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

interactive=0
if [ "${1:-}" = -i ]; then
	interactive=1
	shift
fi
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 [-i] JOB [TIMEOUT_SECS]" >&2; exit 2; }
job=$1
timeout_s=${2:-600}
[ -f "$RIG_DIR/guest/$job.sh" ] || rig_die "no such job: $job (tools/rig/guest/$job.sh)"
case $timeout_s in '' | *[!0-9]*) rig_die "timeout must be a number of seconds" ;; esac
# Boot before the job starts takes ~10 s under TCG; leave the guest's own
# job timeout room to report before the host pulls the plug.
boot_margin=60
case ${LCHAN_KERNEL:-} in
debug)
	# Only looked up: a 30-minute build does not belong in a guest run.
	KVER=$("$RIG_DIR/debug-kernel.sh" --release)
	export KVER
	# siw is built in that tree, so siw.sh has nothing to do.
	siw_ko=$LCHAN_CACHE/$KVER/root/lib/modules/$KVER/kernel/drivers/infiniband/sw/siw/siw.ko
	default_ko=$B/debug-kmod/kmod/lchan.ko
	# With -M pc ACPI interrupt routing stalls each virtio device for 30 s;
	# 5-level paging drew an early KASAN report (RIG.md).
	# shellcheck disable=SC2054 # commas are qemu option syntax
	machine=(-M q35 -cpu max,la57=off)
	# Boot is slower, and the guest scans kmemleak twice before the job
	# and twice after it.
	boot_margin=300
	;;
*)
	KVER=$(rig_kver)
	export KVER
	"$RIG_DIR/kernel.sh"
	siw_ko=$("$RIG_DIR/siw.sh")
	default_ko=$REPO/kmod/lchan.ko
	machine=(-M pc -cpu max)
	;;
esac
[ "$timeout_s" -gt $((boot_margin + 10)) ] || rig_die "timeout must exceed $((boot_margin + 10)) s"
kroot=$LCHAN_CACHE/$KVER/root
# The rig's own test pieces (cheap when up to date): harness and smoke jobs
# use them, and they are handy in the shell.  Their lchan_warn.ko is built
# for Debian's kernel only: the debug lane runs no harness job.
if [ "${LCHAN_KERNEL:-}" != debug ]; then
	"$RIG_DIR/selftest/build.sh"
else
	KVER='' LCHAN_KERNEL='' "$RIG_DIR/selftest/build.sh"
fi
initrd=$("$RIG_DIR/initramfs.sh")
manifest=${initrd%.cpio.gz}.files
vmlinuz=$kroot/boot/vmlinuz-$KVER

share=$B/share
# Each named kernel (and the debug lane) keeps its own runs.
run=$(rig_run_dir "$job")
mkdir -p "$B"
# One guest at a time owns build/share.
exec {lockfd}>"$B/.share.lock"
if ! flock -n "$lockfd"; then
	rig_log "another guest is using $share; waiting"
	flock "$lockfd"
fi

# --- stage the share -------------------------------------------------------
rm -rf "$share"
mkdir -p "$share/out" "$share/guest" "$share/lib" "$share/syslib"
cp "$RIG_DIR"/guest/*.sh "$share/guest/"
cp "$siw_ko" "$share/siw.ko"
# LCHAN_HOST_KO: another build of the module.
host_ko=${LCHAN_HOST_KO:-$default_ko}
[ ! -f "$host_ko" ] || cp "$host_ko" "$share/lchan.ko"
[ ! -d "$B/selftests" ] || cp -a "$B/selftests" "$share/selftests"
[ ! -d "$B/tools" ] || cp -a "$B/tools" "$share/tools"
mkdir -p "$share/selftests" "$share/tools"
for f in "$REPO"/lib/liblchan.so*; do
	[ ! -e "$f" ] || cp -a "$f" "$share/lib/"
done
mkdir -p "$share/rig"
cp -a "$B/rig-selftest/pass" "$B/rig-selftest/fail" "$B/rig-selftest/smoke" \
	"$B/rig-selftest/lchan_warn.ko" "$B/rig-selftest/rig_cmping" "$share/rig/"
# Libraries the staged programs need beyond those in the initramfs go to
# syslib/ (on the guest's LD_LIBRARY_PATH).
declare -A have=()
while read -r l; do have[$l]=1; done < <(sed -n '/^\[libs\]/,$p' "$manifest")
while IFS= read -r -d '' f; do
	[ "$(head -c4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
	while read -r l; do
		b=$(basename "$l")
		case $b in liblchan.so*) continue ;; esac
		[ -z "${have[$b]:-}" ] || continue
		have[$b]=1
		cp -L "$l" "$share/syslib/"
	done < <(ldd "$f" 2>/dev/null | awk '/=> \//{print $3}')
done < <(find "$share" -type f -perm -u+x -print0)

# --- boot --------------------------------------------------------------------
rm -rf "$run"
mkdir -p "$run"
guest_timeout=$((timeout_s - boot_margin))
# log_buf_len: a long run must not push an early WARNING out of dmesg.
# printk.devkmsg=on: tests (and the rig) may mark their steps in the log.
append="console=ttyS0 panic=-1 oops=panic printk.time=1 log_buf_len=4M printk.devkmsg=on"
append+=" lchan.job=$job"
# Under TCG the TSC drifts from the hpet, and the clocksource watchdog
# marks it unstable at some point of the run.  That flips sched_clock's
# static key, and the kernel patches the key's branches with int3 while
# other vCPUs run them, which TCG does not always survive ("Oops: int3" in
# sched_clock_cpu, a panic 11 s into a 6.12 guest).  Unstable from the
# start, the key never flips.
append+=" tsc=unstable"
# Per test program.  The load test on siw (64 channels, READs) took 190
# to 320 s in recent runs, more on a busy host.
append+=" lchan.test_timeout=${LCHAN_TEST_TIMEOUT:-1200}"
# LCHAN_APPEND: extra kernel arguments, e.g. dyndbg=... while debugging.
[ -z "${LCHAN_APPEND:-}" ] || append+=" $LCHAN_APPEND"
# shellcheck disable=SC2054 # commas are qemu option syntax
qemu=(qemu-system-x86_64 -accel tcg,thread=multi "${machine[@]}" -smp 2 -m 2G
	-nodefaults -display none -no-reboot
	-kernel "$vmlinuz" -initrd "$initrd"
	-netdev user,id=n0,restrict=on
	-device virtio-net-pci,netdev=n0,speed=10000,duplex=full,romfile=
	-device virtio-rng-pci
	-device isa-debug-exit,iobase=0xf4,iosize=0x04
	-virtfs "local,path=$share,mount_tag=host0,security_model=none,id=host0")

if [ "$interactive" = 1 ]; then
	rig_log "guest console on this terminal; Ctrl-A x quits qemu, Ctrl-A h for help"
	# A serial console has no size: pass the terminal's to the guest shell.
	if size=$(stty size 2>/dev/null); then
		append+=" lchan.rows=${size% *} lchan.cols=${size#* }"
	fi
	set +e
	"${qemu[@]}" -serial mon:stdio -append "$append lchan.timeout=0"
	rc=$?
	set -e
	cp -a "$share/out/." "$run/" 2>/dev/null || true
	# 1 is the guest's "pass" verdict, i.e. a clean power-off.
	[ "$rc" = 1 ] && exit 0
	exit "$rc"
fi

rig_log "booting $KVER for job $job (timeout ${timeout_s}s); console: $run/console.log"
start=$(rig_now)
: >"$run/console.log"
# qemu runs in the background so that the guest's TAP (or, with
# LCHAN_VERBOSE=1, the whole serial console) can be shown as it comes, and
# so that Ctrl-C stops the guest too (timeout puts qemu in its own process
# group, out of reach of the terminal's SIGINT).
timeout -k 10 "$timeout_s" "${qemu[@]}" -monitor none -serial "file:$run/console.log" \
	-append "$append lchan.timeout=$guest_timeout" 2>"$run/qemu.stderr" &
qpid=$!
interrupted=0
on_signal() {
	interrupted=1
	kill -TERM "$qpid" 2>/dev/null || true
}
trap on_signal INT TERM HUP
if [ "${LCHAN_VERBOSE:-0}" = 1 ]; then
	live=$run/console.log
else
	live=$share/out/tap.txt
fi
# --pid: tail reads to the end once qemu is gone, then exits.
tail -n +1 -F --pid="$qpid" "$live" 2>/dev/null || true
set +e
wait "$qpid"
qrc=$?
while kill -0 "$qpid" 2>/dev/null; do
	wait "$qpid"
	qrc=$?
done
set -e
trap - INT TERM HUP
if [ "$interrupted" = 1 ]; then
	rig_log "interrupted; guest stopped (logs in $run)"
	exit 130
fi
secs=$(($(rig_now) - start))
cp -a "$share/out/." "$run/" 2>/dev/null || true
flock -u "$lockfd"

# --- judge -------------------------------------------------------------------
tap=$run/tap.txt
[ -f "$tap" ] || : >"$tap"
reasons=()
verdict_line=$(grep -a 'rig-guest: .*verdict: ' "$run/console.log" | tail -n1 | grep -o 'verdict: [a-z]*' || true)
case $qrc in
1)
	if [ "$verdict_line" != "verdict: pass" ]; then
		reasons+=("qemu-error: qemu exited 1 without a guest verdict: $(head -c 500 "$run/qemu.stderr")")
	fi
	;;
3) reasons+=("guest-fail: the guest's verdict is fail (job exit status $(cat "$run/job-rc" 2>/dev/null || echo '?'))") ;;
0) reasons+=("no-verdict: guest gave no verdict (qemu exit 0: kernel panic or power-off before the job finished)") ;;
124 | 137) reasons+=("hung: guest hung: no exit within ${timeout_s}s") ;;
*) reasons+=("qemu-error: qemu exit status $qrc: $(head -c 500 "$run/qemu.stderr")") ;;
esac
if grep -aq 'SETUP FAILED' "$run/console.log"; then
	reasons+=("setup: $(grep -a -o 'SETUP FAILED.*' "$run/console.log" | head -n1)")
fi
if [ -f "$run/job-timeout" ]; then
	reasons+=("job-timeout: the job hit its ${guest_timeout}s limit inside the guest")
fi

# Kernel complaints, in the guest's dmesg or (after a panic, the only record)
# the serial log.  Only kernel lines (with a printk timestamp) count, so test
# output that happens to say "WARNING:" does not.
# The debug kernel's checkers print more: ODEBUG (debugobjects), lockdep
# headers and lockdep switching itself off (which would hide every later
# report), kmemleak giving up.
pattern='BUG:|WARNING:|Oops|Call Trace|general protection|KASAN|UBSAN|Kernel panic|blocked for more than|detected stall'
pattern+='|ODEBUG|possible circular locking|sleeping function called from invalid context'
pattern+='|Disabling lock debugging|turning off the locking correctness validator|INFO: trying to register non-static key'
pattern+='|unreferenced object|memory leak detector disabled'
# Each finding names the last test program started before it (the guest marks
# each one in the kernel log).
kprob=$( { cat "$run/dmesg.txt" 2>/dev/null || true; cat "$run/console.log"; } |
	tr -d '\r' | grep -a -E '\[ *[0-9]+\.[0-9]+\]' | sed 's/^.*\(\[ *[0-9]*\.[0-9]*\]\)/\1/' |
	awk -v pat="$pattern" '
		/\] rig: selftest / { during = $NF }
		$0 ~ pat && !seen[$0]++ { print $0 (during != "" ? "   <- last test program started: " during : "") }' || true)
if [ -n "$kprob" ]; then
	reasons+=("kernel-log: the kernel log shows problems")
fi

# kmemleak (debug kernel): what the guest's scan after the job found.  The
# boot's own leaks were cleared before the job, so every object counts.
leaks=
if [ -f "$run/kmemleak.txt" ]; then
	leaks=$(grep -c 'unreferenced object' "$run/kmemleak.txt" || true)
	[ "$leaks" = 0 ] || reasons+=("kmemleak: kmemleak reports $leaks unreferenced objects")
fi

guest_results=$(grep -c -E '^(ok|not ok)( |$)' "$tap" || true)
if [ "$guest_results" = 0 ]; then
	reasons+=("no-tests: zero tests ran")
fi

# The runner's own findings are TAP lines too, so the totals agree with
# the exit status.
{
	if [ -n "$kprob" ]; then
		echo "not ok - rig: kernel log clean"
	else
		echo "ok - rig: kernel log clean"
	fi
	case $qrc in
	1) echo "ok - rig: guest verdict is pass" ;;
	124 | 137) echo "not ok - rig: guest verdict is pass (guest hung)" ;;
	0) echo "not ok - rig: guest verdict is pass (guest gave no verdict)" ;;
	3)
		# A fail verdict is explained by failed tests; otherwise it is a
		# failure of its own (setup, job script, timeout).
		if grep -q -E '^not ok( |$)' "$tap"; then
			echo "ok - rig: guest verdict received (fail, as the failed tests say)"
		else
			echo "not ok - rig: guest verdict is pass (fail, job exit status $(cat "$run/job-rc" 2>/dev/null || echo none))"
		fi
		;;
	*) echo "not ok - rig: guest verdict is pass (qemu exit $qrc)" ;;
	esac
	[ "$guest_results" != 0 ] || echo "not ok - rig: at least one test ran"
	case $leaks in
	'') ;;
	0) echo "ok - rig: kmemleak finds no leak" ;;
	*) echo "not ok - rig: kmemleak finds no leak ($leaks unreferenced objects)" ;;
	esac
} >"$run/rig-tap.txt"

# The guest's TAP was shown live, unless the console was.
[ "${LCHAN_VERBOSE:-0}" != 1 ] || cat "$tap"
cat "$run/rig-tap.txt"
all=$(cat "$tap" "$run/rig-tap.txt")
skipped=$(grep -c -i -E '^ok( .*)?[[:space:]]#[[:space:]]*skip' <<<"$all" || true)
oks=$(grep -c -E '^ok( |$)' <<<"$all" || true)
failed=$(grep -c -E '^not ok( |$)' <<<"$all" || true)
passed=$((oks - skipped))
[ "$failed" = 0 ] || reasons+=("failed-tests: $failed failed")

{
	echo "job=$job"
	echo "qemu_exit=$qrc"
	echo "seconds=$secs"
	echo "passed=$passed"
	echo "failed=$failed"
	echo "skipped=$skipped"
	for r in "${reasons[@]}"; do echo "reason=${r%%:*}"; done
} >"$run/summary"

echo "# run: job $job, $KVER, ${secs}s, qemu exit $qrc; logs in $run"
if [ -n "$kprob" ]; then
	echo "# kernel log problems:"
	head -n 40 <<<"$kprob" | sed 's/^/#   /'
fi
if [ -n "$leaks" ] && [ "$leaks" != 0 ]; then
	echo "# kmemleak ($run/kmemleak.txt):"
	head -n 60 "$run/kmemleak.txt" | sed 's/^/#   /'
fi
case " ${reasons[*]%%:*} " in
*" hung "* | *" no-verdict "* | *" setup "* | *" qemu-error "*)
	echo "# last lines of the serial console:"
	tr -d '\r' <"$run/console.log" | tail -n 25 | sed 's/^/#   /'
	;;
esac
if [ "${#reasons[@]}" -gt 0 ]; then
	for r in "${reasons[@]}"; do
		case $r in
		hung:*) echo "# FAIL: guest hung (no exit within ${timeout_s}s); see $run/console.log" ;;
		no-verdict:*) echo "# FAIL: guest gave no verdict (panic or early power-off); see $run/console.log" ;;
		*) echo "# FAIL: ${r#*: }" ;;
		esac
	done
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "${#reasons[@]}" = 0 ]
