# shellcheck shell=bash
# shellcheck disable=SC2034 # the functions set variables for their callers
# SPDX-License-Identifier: GPL-2.0
# The steps of a guest boot, sourced after lib.sh by run-vm.sh (one guest)
# and two-node.sh (two guests on a virtual wire), so that both boot, stage
# and judge a guest the same way.  The functions share their results
# through global variables, named below.

# vm_prepare: resolve the kernel (LCHAN_KERNEL) and build what a boot needs
# (image, siw.ko, the rig's self-test pieces, initramfs).  Sets KVER
# (exported), siw_ko, default_ko, machine (qemu arguments), boot_margin
# (seconds of boot before the job; the guest's job timeout leaves it to the
# host), kroot, initrd, manifest, vmlinuz.
vm_prepare() {
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
		# q35 and no 5-level paging: rig/README.md, "The debug kernel";
		# cx16 as below.
		# shellcheck disable=SC2054 # commas are qemu option syntax
		machine=(-M q35 -cpu max,la57=off,cx16=off)
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
		# No CMPXCHG16B: QEMU 7.2's TCG computes its flags from a stale
		# condition-code state, and an interrupt after one (SLUB's fast
		# path runs it on every allocation) can push garbage flags, TF
		# among them: a debug exception in kmem_cache_alloc_node, then
		# memory corruption (fixed in QEMU 8.0 when the instruction was
		# inlined).  Without it the kernel uses its fallback.
		# shellcheck disable=SC2054 # commas are qemu option syntax
		machine=(-M pc -cpu max,cx16=off)
		;;
	esac
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
}

# vm_lock: take build/.share.lock (one guest job at a time per build
# directory), waiting if another holds it.  Sets lockfd.
vm_lock() {
	mkdir -p "$B"
	exec {lockfd}>"$B/.share.lock"
	if ! flock -n "$lockfd"; then
		rig_log "another guest is using $B/share; waiting"
		flock "$lockfd"
	fi
}

# vm_stage SHARE: fill the 9p share with fresh build outputs (after
# vm_prepare).
vm_stage() {
	local share=$1 host_ko f l b
	rm -rf "$share"
	mkdir -p "$share/out" "$share/guest" "$share/lib" "$share/syslib"
	cp "$RIG_DIR"/guest/*.sh "$share/guest/"
	cp "$siw_ko" "$share/siw.ko"
	# LCHAN_HOST_KO: another build of the module.
	host_ko=${LCHAN_HOST_KO:-$default_ko}
	[ ! -f "$host_ko" ] || cp "$host_ko" "$share/lchan.ko"
	[ ! -d "$B/selftests" ] || cp -a "$B/selftests" "$share/selftests"
	[ ! -d "$B/tools" ] || cp -a "$B/tools" "$share/tools"
	mkdir -p "$share/selftests" "$share/tools" "$share/fabric"
	[ ! -f "$B/fabric/liblchan-fi.so" ] || cp "$B/fabric/liblchan-fi.so" "$share/fabric/"
	for f in "$REPO"/lib/liblchan.so*; do
		[ ! -e "$f" ] || cp -a "$f" "$share/lib/"
	done
	mkdir -p "$share/rig"
	cp -a "$B/rig-selftest/pass" "$B/rig-selftest/fail" "$B/rig-selftest/smoke" \
		"$B/rig-selftest/lchan_warn.ko" "$B/rig-selftest/rig_cmping" "$share/rig/"
	# Libraries the staged programs need beyond those in the initramfs go to
	# syslib/ (on the guest's LD_LIBRARY_PATH).
	local -A have=()
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
}

# vm_staged: the job reads nothing of the tree's build outputs from here
# on; tell whoever waits for that (LCHAN_STAGED: a file to create).
vm_staged() {
	[ -z "${LCHAN_STAGED:-}" ] || : >"$LCHAN_STAGED"
}

# vm_stall_watch QPID CONSOLE MONITOR: while qemu QPID runs, watch its
# CONSOLE file.  When nothing was written to it for LCHAN_STALL_SECS
# (default 900: longer than a test program may run silent), send the guest
# an NMI through the MONITOR socket, once.  The guest panics with its state
# on the console (vm_append), so a hung guest explains itself and ends the
# run.  A guest that panicked reboots at once (panic=-1): one silent for
# LCHAN_PANIC_SILENT_SECS (default 30) after "Kernel panic" hung in the
# kernel's panic path.  Then every vCPU's registers and the top of its
# stack, kernel addresses resolved, go to RUN/panic-hung.txt (RUN: the
# CONSOLE's directory) and qemu quits: the run ends as the panic it is,
# not at its timeout.
vm_stall_watch() {
	local qpid=$1 console=$2 monitor=$3 limit=${LCHAN_STALL_SECS:-900}
	local panic_limit=${LCHAN_PANIC_SILENT_SECS:-30}
	local size last=-1 since silent looked=-1
	since=$(rig_now)
	while kill -0 "$qpid" 2>/dev/null; do
		sleep 5
		size=$(stat -c %s "$console" 2>/dev/null || echo 0)
		if [ "$size" != "$last" ]; then
			last=$size
			since=$(rig_now)
			continue
		fi
		silent=$(($(rig_now) - since))
		# A silent console does not change: read it once per silence.
		if [ "$silent" -ge "$panic_limit" ] && [ "$looked" != "$size" ]; then
			looked=$size
			if grep -aq 'Kernel panic - not syncing' "$console"; then
				rig_log "guest silent for ${silent}s after a kernel panic: its vCPUs' registers, then quit"
				# shellcheck disable=SC2016 # $sp is the monitor's: the stack pointer
				vm_monitor "$monitor" "$(dirname "$console")/panic-hung.txt" \
					"$kroot/kallsyms" 'info registers -a' \
					'cpu 0' 'x/64xg $sp' 'cpu 1' 'x/64xg $sp' quit
				return 0
			fi
		fi
		if [ "$silent" -ge "$limit" ]; then
			rig_log "guest silent for ${limit}s: NMI, for its state on the console"
			vm_monitor "$monitor" /dev/null '' nmi
			return 0
		fi
	done
}

# vm_monitor MONITOR OUT KALLSYMS COMMAND...: send each COMMAND to qemu's
# human monitor at MONITOR, its answers to OUT, each kernel address in them
# followed by the KALLSYMS symbol it falls in (the guest runs nokaslr;
# vm_append asks a boot to copy /proc/kallsyms until the host has it).
vm_monitor() {
	python3 - "$@" <<'PY' || true
import bisect, os, re, socket, sys, time

mon, out, kallsyms, cmds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
syms = []
if kallsyms and os.path.exists(kallsyms):
    with open(kallsyms) as f:
        for line in f:
            addr, kind, name = line.split()[:3]
            if kind in "tTwW":
                syms.append((int(addr, 16), name))
    syms.sort()
keys = [a for a, _ in syms]

def where(m):
    addr = int(m.group(0), 16)
    i = bisect.bisect_right(keys, addr) - 1
    if i < 0 or addr - keys[i] > 0x100000:
        return m.group(0)
    return "%s <%s+%#x>" % (m.group(0), syms[i][1], addr - keys[i])

s = socket.socket(socket.AF_UNIX)
s.connect(mon)
s.settimeout(2)

def answer():
    text = b""
    end = time.time() + 5
    while time.time() < end and not text.endswith(b"(qemu) "):
        try:
            chunk = s.recv(65536)
        except (socket.timeout, OSError):
            break
        if not chunk:
            break
        text += chunk
    # The monitor echoes the command, key by key, on the first line, and
    # ends with its prompt: keep what is between.
    lines = text.decode(errors="replace").splitlines(True)[1:]
    return "".join(l for l in lines if not l.startswith("(qemu)"))

answer()
report = ""
for cmd in cmds:
    s.sendall(cmd.encode() + b"\n")
    report += "== %s\n%s" % (cmd, answer())
with open(out, "w") as f:
    f.write(re.sub(r"(?<![0-9a-f])ffffffff[0-9a-f]{8}\b", where, report))
PY
}

# vm_append JOB: the guest kernel's command line for JOB, without
# lchan.timeout (the caller adds it).  Sets append.
vm_append() {
	# log_buf_len: a long run must not push an early WARNING out of dmesg.
	# printk.devkmsg=on: tests (and the rig) may mark their steps in the log.
	append="console=ttyS0 panic=-1 oops=panic printk.time=1 log_buf_len=4M printk.devkmsg=on"
	append+=" lchan.job=$1"
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
	# An NMI from vm_stall_watch panics the guest, which prints every
	# task, the locks held and every CPU's backtrace.
	append+=" unknown_nmi_panic=1 panic_print=0x49"
	# Addresses the same every boot, so that the host's copy of the
	# guest's kallsyms names where a hung guest was (vm_stall_watch).
	append+=" nokaslr"
	[ -s "$kroot/kallsyms" ] || append+=" lchan.kallsyms=1"
	# LCHAN_APPEND: extra kernel arguments, e.g. dyndbg=... while debugging.
	[ -z "${LCHAN_APPEND:-}" ] || append+=" $LCHAN_APPEND"
}

# vm_qemu SHARE CPUS MEM: the qemu command line (no serial, monitor or
# -append yet) of a guest with user networking on eth0 and SHARE as its 9p
# share.  Sets qemu.
vm_qemu() {
	# shellcheck disable=SC2054 # commas are qemu option syntax
	qemu=(qemu-system-x86_64 -accel tcg,thread=multi "${machine[@]}" -smp "$2" -m "$3"
		-nodefaults -display none -no-reboot
		-kernel "$vmlinuz" -initrd "$initrd"
		-netdev user,id=n0,restrict=on
		-device virtio-net-pci,netdev=n0,speed=10000,duplex=full,romfile=
		-device virtio-rng-pci
		-device isa-debug-exit,iobase=0xf4,iosize=0x04
		-virtfs "local,path=$1,mount_tag=host0,security_model=none,id=host0")
}

# vm_judge RUN JOB QEMU-EXIT SECS TIMEOUT GUEST-TIMEOUT [LABEL]: judge a
# finished guest from what it left in RUN (console.log, dmesg.txt, tap.txt,
# job-rc, ...): the guest's verdict, the kernel-log gate, kmemleak.  Writes
# RUN/rig-tap.txt (the runner's findings as TAP lines "ok - LABEL: ...",
# LABEL default "rig") and RUN/summary, prints the findings, and sets
# passed, failed, skipped (over the guest's TAP and the runner's) and
# reasons (why the run failed; empty: it passed).
vm_judge() {
	local run=$1 job=$2 qrc=$3 secs=$4 timeout_s=$5 guest_timeout=$6 label=${7:-rig}
	local tap verdict_line pattern klog kprob kfirst kwhere leaks guest_results all oks r
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
	off)
		# Powered off by the host as a test asked (check-2node): the
		# guest wrote how its part went before.
		if [ "$(cat "$run/poweroff-verdict" 2>/dev/null)" != pass ]; then
			reasons+=("guest-fail: the guest powered off on request had not said its part passed")
		fi
		;;
	124 | 137) reasons+=("hung: guest hung: no exit within ${timeout_s}s") ;;
	*) reasons+=("qemu-error: qemu exit status $qrc: $(head -c 500 "$run/qemu.stderr")") ;;
	esac
	if grep -aq 'SETUP FAILED' "$run/console.log"; then
		reasons+=("setup: $(grep -a -o 'SETUP FAILED.*' "$run/console.log" | head -n1)")
	fi
	if [ -f "$run/panic-hung.txt" ]; then
		reasons+=("panic-hung: the kernel went silent in its panic path; its vCPUs' registers are in $run/panic-hung.txt")
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
	# A program's own fault is logged as "traps: NAME[PID] general protection
	# fault ip:..." (a bad pointer that is not canonical; a NULL one logs
	# "segfault at"): not the kernel's, and its test fails by its exit status.
	user_fault='traps: [^ ]+[[][0-9]+[]] general protection fault ip:'
	# Each finding names the last test program started before it (the guest marks
	# each one in the kernel log).
	# The kernel log's timestamped lines, read once for the scan and for
	# the first report's text below.
	klog=$( { cat "$run/dmesg.txt" 2>/dev/null || true; cat "$run/console.log"; } |
		tr -d '\r' | grep -a -E '\[ *[0-9]+\.[0-9]+\]' || true)
	kprob=$(printf '%s\n' "$klog" | sed 's/^.*\(\[ *[0-9]*\.[0-9]*\]\)/\1/' |
		awk -v pat="$pattern" -v user="$user_fault" '
			/\] rig: selftest / { during = $NF }
			$0 ~ pat && $0 !~ user && !seen[$0]++ { print $0 (during != "" ? "   <- last test program started: " during : "") }' || true)
	if [ -n "$kprob" ]; then
		reasons+=("kernel-log: the kernel log shows problems")
	fi
	# The first report whole, from its first line to its end-of-trace
	# marker (at most 80 lines), and its RIP and call chain in one line, so
	# that a run's tail (all a CI summary may keep) says where the kernel
	# was.
	kfirst=
	kwhere=
	if [ -n "$kprob" ]; then
		kfirst=$(awk -v pat="$pattern" -v user="$user_fault" '
			!on && $0 ~ pat && $0 !~ user { on = 1 }
			on { print; if (++n >= 80 || /---\[ end (trace|Kernel panic)/) exit }' <<<"$klog" || true)
		kwhere=$(awk '
			!rip && match($0, /RIP: [0-9a-z:]+[^ ]*/) {
				rip = substr($0, RSTART + 5, RLENGTH - 5)
				next
			}
			match($0, /\] +[?]? *[A-Za-z_][A-Za-z0-9_.]*\+0x[0-9a-f]+/) {
				f = substr($0, RSTART, RLENGTH)
				sub(/^\] +/, "", f)
				sub(/\+0x.*/, "", f)
				if (f !~ /^[?]/ && calls < 12)
					chain = chain (calls++ ? " < " : "") f
			}
			END {
				if (rip != "")
					out = "RIP " rip
				if (chain != "")
					out = out (out != "" ? "; " : "") "calls " chain
				if (out != "")
					print out
			}' <<<"$kfirst" | cut -c 1-400)
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
		# The first finding in the line itself, so that a run's tail
		# (check.sh's "# failed:" lines) says what the log showed.
		if [ -n "$kprob" ]; then
			echo "not ok - $label: kernel log clean (first: $(head -n 1 <<<"$kprob" | cut -c 1-200)${kwhere:+; $kwhere})"
		else
			echo "ok - $label: kernel log clean"
		fi
		case $qrc in
		1) echo "ok - $label: guest verdict is pass" ;;
		off)
			if [ "$(cat "$run/poweroff-verdict" 2>/dev/null)" = pass ]; then
				echo "ok - $label: guest verdict is pass (given before the power-off the test asked for)"
			else
				echo "not ok - $label: guest verdict is pass (powered off without one)"
			fi
			;;
		124 | 137) echo "not ok - $label: guest verdict is pass (guest hung)" ;;
		0) echo "not ok - $label: guest verdict is pass (guest gave no verdict; its console's last line: $(tr -d '\r' <"$run/console.log" | grep -a . | tail -n 1 | cut -c 1-200))" ;;
		3)
			# A fail verdict is explained by failed tests; otherwise it is a
			# failure of its own (setup, job script, timeout).
			if grep -q -E '^not ok( |$)' "$tap"; then
				echo "ok - $label: guest verdict received (fail, as the failed tests say)"
			else
				echo "not ok - $label: guest verdict is pass (fail, job exit status $(cat "$run/job-rc" 2>/dev/null || echo none))"
			fi
			;;
		*) echo "not ok - $label: guest verdict is pass (qemu exit $qrc)" ;;
		esac
		[ "$guest_results" != 0 ] || echo "not ok - $label: at least one test ran"
		case $leaks in
		'') ;;
		0) echo "ok - $label: kmemleak finds no leak" ;;
		*) echo "not ok - $label: kmemleak finds no leak ($leaks unreferenced objects)" ;;
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
		grep -E '^not ok( |$)' <<<"$all" | sed 's/^not ok [0-9-]* */failure=/' || true
	} >"$run/summary"

	echo "# run: job $job, $KVER, ${secs}s, qemu exit $qrc; logs in $run"
	if [ -n "$kprob" ]; then
		echo "# kernel log problems:"
		head -n 40 <<<"$kprob" | sed 's/^/#   /'
		# The first report whole: a CI log may be all there is of it.
		echo "# the first report whole:"
		printf '%s\n' "$kfirst" | sed 's/^/#   /'
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
	if [ -f "$run/panic-hung.txt" ]; then
		echo "# where each vCPU was when the panic went silent:"
		grep -a -E '^(CPU#|RIP=|== cpu)|<' "$run/panic-hung.txt" | head -n 60 | sed 's/^/#   /' || true
	fi
	if [ "${#reasons[@]}" -gt 0 ]; then
		for r in "${reasons[@]}"; do
			case $r in
			hung:*) echo "# FAIL: guest hung (no exit within ${timeout_s}s); see $run/console.log" ;;
			no-verdict:*) echo "# FAIL: guest gave no verdict (panic or early power-off); see $run/console.log" ;;
			*) echo "# FAIL: ${r#*: }" ;;
			esac
		done
	fi
}
