# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Top-level make for people; kbuild reads Kbuild.  Everything that is not
# the module lands in build/.

# The module is built for the running kernel, or for the kernel whose build
# tree KDIR names.  The rig builds for its guest kernels instead: KERNEL, a
# name from rig/kernels (6.1, 6.12, 6.1-rt, 6.12-rt), or KVER, a Debian
# release, makes KDIR that kernel's Debian headers; the rig's own targets
# below (check-tests, soak, ...) name them always, default the first entry
# of rig/kernels.  KDIR reaches the rig scripts only when one of the three
# was given.
KERNEL ?= $(LCHAN_KERNEL)
LCHAN_KERNEL := $(KERNEL)
RIG_KERNEL := $(if $(KERNEL)$(KVER),yes)
KVER ?= $(shell rig/kver.sh $(KERNEL))
ifeq ($(RIG_KERNEL),yes)
KDIR ?= /usr/src/linux-headers-$(KVER)
export KVER
endif
ifneq ($(origin KDIR),undefined)
export KDIR
endif
RUNNING_KVER := $(shell uname -r)
RUNNING_KDIR := /lib/modules/$(RUNNING_KVER)/build
KDIR ?= $(RUNNING_KDIR)
B ?= $(CURDIR)/build

CC ?= cc
CFLAGS_COMMON := -std=gnu11 -O2 -g -Wall -Wextra -Werror -I$(CURDIR)/lib

export B CC CFLAGS_COMMON LCHAN_KERNEL

# A missing build tree stops the module with one line saying what to do.
ifeq ($(KDIR),$(RUNNING_KDIR))
KDIR_FIX := install linux-headers-$(RUNNING_KVER) (headers of the running kernel), or build for another kernel with make KDIR=<its build tree>
else
KDIR_FIX := install the headers of that kernel, or name another build tree with KDIR=<dir>
endif
KDIR_CHECK = test -f "$(KDIR)/Makefile" || { echo "module: no kernel build tree in $(KDIR): $(KDIR_FIX)" >&2; exit 1; }

# The optional parts: each builds when what it needs is there.  LACKS_<part>
# is shell that prints what the part lacks, one item a line, nothing when
# it can be built.  `make` and `make install` skip a part that lacks
# something and say so in one line; naming the part (make fabric) makes a
# lack an error.
OPTIONAL := selftests fabric bench-tools
pc_lacks = if ! command -v pkg-config >/dev/null; then echo pkg-config; \
	elif ! pkg-config --exists $(1); then echo '$(2)'; fi
# kselftest_harness.h: from KSFT_INC (a kernel tree's
# tools/testing/selftests) when given, else from Debian's linux-source.
KSFT_INC ?=
ifneq ($(KSFT_INC),)
ksft_lacks = test -f '$(KSFT_INC)/kselftest_harness.h' || echo 'kselftest_harness.h in KSFT_INC=$(KSFT_INC)'
else
ksft_lacks = rig/ksft-headers.sh --lacks
endif
LACKS_fabric = $(call pc_lacks,libfabric,libfabric-dev)
LACKS_install-fabric = $(LACKS_fabric)
LACKS_bench-tools = $(call pc_lacks,librdmacm libibverbs,librdmacm-dev and libibverbs-dev)
LACKS_selftests = $(ksft_lacks); $(LACKS_fabric)
lacks = m=$$( { $(LACKS_$(1)); } | paste -sd ';' | sed 's/;/; /g')
NEED = $(call lacks,$(1)); [ -z "$$m" ] || { echo "$(1): cannot be built without $$m" >&2; exit 1; }

.PHONY: all module lib selftests tools bench-tools fabric clean check check-rt demo vm-shell checkpatch sparse ksft-headers

# The module last: without a build tree for it, everything else is built
# before make stops with KDIR_CHECK's line.
all: lib tools $(addprefix maybe-,$(OPTIONAL)) $(if $(wildcard $(KDIR)/Makefile),module)
	@$(KDIR_CHECK)

$(addprefix maybe-,$(OPTIONAL) install-fabric): maybe-%: lib
	@$(call lacks,$*); if [ -n "$$m" ]; then \
		echo "$*: skipped (optional), needs $$m"; \
	else $(MAKE) --no-print-directory $*; fi
.PHONY: $(addprefix maybe-,$(OPTIONAL) install-fabric)

module:
	@$(KDIR_CHECK)
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

lib:
	$(MAKE) -C lib

# kselftest_harness.h comes from the kernel's linux-source at build time.
ksft-headers:
	rig/ksft-headers.sh $(B)/ksft

selftests: lib
	@$(call NEED,selftests)
	$(if $(KSFT_INC),,rig/ksft-headers.sh $(B)/ksft)
	$(MAKE) -C selftests KSFT_INC=$(or $(KSFT_INC),$(B)/ksft) OUT=$(B)/selftests

tools: lib
	$(MAKE) -C tools OUT=$(B)/tools

# The bench's own programs (librdmacm and libibverbs, no lchan): built,
# never installed.
bench-tools:
	@$(call NEED,bench-tools)
	$(MAKE) -C tools bench OUT=$(B)/tools

# liblchan-fi.so, the libfabric provider "lchan" (fabric/, man fi_lchan.7).
fabric: lib
	@$(call NEED,fabric)
	$(MAKE) -C fabric OUT=$(B)/fabric

checkpatch:
	rig/checkpatch.sh

# Zero sparse (and compiler) warnings; log in $(B)/sparse.log.  On the
# rig's kernel, as checkpatch: KDIR only when given.
sparse:
	rig/sparse.sh

# The whole suite on KERNEL, or without it on every kernel of
# rig/kernels (6.1, 6.12 and their PREEMPT_RT builds); check-rt on
# the rt lane alone (6.1-rt, 6.12-rt).  One combined last line; run
# directories build/runs/<job>-<kernel>.
check:
	rig/check.sh $(KERNEL)

check-rt:
	rig/check.sh --lane rt

demo:
	rig/demo.sh

vm-shell:
	rig/vm-shell.sh

# Without a kernel build tree, kbuild's outputs go by name.
clean:
	$(if $(wildcard $(KDIR)/Makefile),-$(MAKE) -C $(KDIR) M=$(CURDIR) clean,\
		rm -f Module.symvers modules.order kmod/*.o kmod/*.ko kmod/*.mod \
		kmod/*.mod.c kmod/.*.cmd kmod/modules.order .*.cmd)
	$(MAKE) -C lib clean
	rm -rf $(B)

# ---------------------------------------------------------------- packaging
#
# make install [PREFIX=/usr/local] [DESTDIR=]: the library, its headers and
# pkg-config file, the tools, the man pages and, when libfabric-dev is
# there, the libfabric provider.  The module is installed with `make
# modules_install` (INSTALL_MOD_PATH, INSTALL_MOD_DIR as kbuild knows them)
# or, better on a machine whose kernel gets updates, with DKMS: `make
# dkms-install` / `make dkms-uninstall`.

# The one version of the tree: the module's (MODULE_VERSION, kmod/Kbuild),
# liblchan.pc's and the DKMS package's.
LCHAN_VERSION := $(shell cat $(CURDIR)/VERSION)
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
INSTALL_VARS = DESTDIR='$(DESTDIR)' PREFIX='$(PREFIX)' BINDIR='$(BINDIR)' \
	LIBDIR='$(LIBDIR)' INCLUDEDIR='$(INCLUDEDIR)' MANDIR='$(MANDIR)' \
	VERSION='$(LCHAN_VERSION)'

# DKMS: the module sources go to $(DKMS_SRCTREE)/lchan-$(LCHAN_VERSION).
# DKMS_KVER builds for another kernel than the running one; DKMS_FLAGS are
# passed to every dkms command (the host check uses private trees).
DKMS ?= dkms
DKMS_SRCTREE ?= /usr/src
DKMS_KVER ?=
DKMS_FLAGS ?=
DKMS_SRC = $(DKMS_SRCTREE)/lchan-$(LCHAN_VERSION)
DKMS_MOD = lchan/$(LCHAN_VERSION)
DKMS_FILES = dkms.conf VERSION Kbuild kmod/Kbuild uapi/lchan.h \
	$(filter-out %.mod.c,$(wildcard kmod/*.c)) $(wildcard kmod/*.h)

.PHONY: install install-lib install-tools install-man install-fabric uninstall modules_install \
	dkms-source dkms-install dkms-uninstall host-checks

install: install-lib install-tools install-man maybe-install-fabric

install-lib: lib
	$(MAKE) -C lib install $(INSTALL_VARS)

install-tools: tools
	$(MAKE) -C tools install OUT=$(B)/tools $(INSTALL_VARS)

install-man:
	$(MAKE) -C man install $(INSTALL_VARS)

# Into $(LIBDIR)/libfabric, where libfabric looks for providers when
# LIBDIR is its own (Debian: LIBDIR=/usr/lib/x86_64-linux-gnu); else name
# the directory in FI_PROVIDER_PATH.
install-fabric: fabric
	$(MAKE) -C fabric install OUT=$(B)/fabric $(INSTALL_VARS)

uninstall:
	$(MAKE) -C lib uninstall $(INSTALL_VARS)
	$(MAKE) -C tools uninstall $(INSTALL_VARS)
	$(MAKE) -C man uninstall $(INSTALL_VARS)
	$(MAKE) -C fabric uninstall OUT=$(B)/fabric $(INSTALL_VARS)

# kbuild skips depmod without the kernel's System.map, which header
# packages lack, and modprobe finds lchan and what it uses (ib_core,
# rdma_cm) only through modules.dep: depmod runs here, on any tree that
# holds the kernel's modules (a staged lchan.ko alone is left to whoever
# assembles the tree).
modules_install: module
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install
	@krel=$$(modinfo -F vermagic kmod/lchan.ko | cut -d' ' -f1) && \
	if [ -f "$(INSTALL_MOD_PATH)/lib/modules/$$krel/modules.order" ]; then \
		echo "depmod $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH) )$$krel"; \
		depmod $(if $(INSTALL_MOD_PATH),-b "$(INSTALL_MOD_PATH)") "$$krel"; \
	fi

# dkms.conf's PACKAGE_VERSION is #MODULE_VERSION#, as dh_dkms knows it:
# the copy gets VERSION's.
dkms-source:
	@test -n '$(LCHAN_VERSION)' || { echo 'no version in VERSION' >&2; exit 1; }
	rm -rf '$(DKMS_SRC)'
	mkdir -p '$(DKMS_SRC)/kmod' '$(DKMS_SRC)/uapi'
	for f in $(DKMS_FILES); do cp "$$f" '$(DKMS_SRC)'/"$$f" || exit 1; done
	sed 's/#MODULE_VERSION#/$(LCHAN_VERSION)/' dkms.conf >'$(DKMS_SRC)/dkms.conf'

dkms-install: dkms-source
	if $(DKMS) status $(DKMS_FLAGS) $(DKMS_MOD) | grep -q .; then \
		$(DKMS) remove $(DKMS_FLAGS) $(DKMS_MOD) --all; fi
	$(DKMS) add $(DKMS_FLAGS) $(DKMS_MOD)
	$(DKMS) build $(DKMS_FLAGS) $(DKMS_MOD) $(if $(DKMS_KVER),-k $(DKMS_KVER))
	$(DKMS) install $(DKMS_FLAGS) $(DKMS_MOD) $(if $(DKMS_KVER),-k $(DKMS_KVER))

dkms-uninstall:
	if $(DKMS) status $(DKMS_FLAGS) $(DKMS_MOD) | grep -q .; then \
		$(DKMS) remove $(DKMS_FLAGS) $(DKMS_MOD) --all; fi
	rm -rf '$(DKMS_SRC)'

# The packaging checks of `make check` alone (no guest): DKMS, install and
# pkg-config, man pages, lchanctl on a made-up sysfs tree, the installed
# headers in C and C++, README.md and the examples it shows, the tools'
# command lines and exit statuses, every selftest skipping without devices,
# a newcomer's build, the socket semantics selftest against the host's
# TCP, the link's wire format.
HOST_CHECKS = rig/check-dkms.sh rig/check-install.sh rig/check-man.sh \
	rig/check-abi-doc.sh rig/check-lchanctl.sh rig/check-headers.sh \
	rig/check-readme.sh rig/check-tools.sh rig/check-skips.sh \
	rig/check-build.sh rig/check-socket.sh rig/check-link-wire.sh

# kselftest's exit status of a skip.
KSFT_SKIP = 4
host-checks:
	@rc=0; for c in $(HOST_CHECKS); do \
		echo "== $$c"; $$c; r=$$?; [ $$r = 0 ] || [ $$r = $(KSFT_SKIP) ] || rc=1; \
	done; exit $$rc

# What the guest jobs below use, each part required (rig/setup.sh installs
# what they need), built for the rig's kernel.
GUEST_PARTS := module lib selftests tools fabric

# Guest tests, no host checks (without TESTS, every program):
#   make check-tests TESTS="lchan_ops_test" [TEST_ENV="LCHAN_T_ONLY=siw"]
check-tests:
	$(MAKE) KDIR=/usr/src/linux-headers-$(KVER) $(GUEST_PARTS)
	LCHAN_APPEND="$(if $(TESTS),lchan.tests=$$(echo $(TESTS) | tr ' ' ,)) $(foreach e,$(TEST_ENV),lchan.env=$(e))" \
		rig/run-vm.sh tests 2400
.PHONY: check-tests

# The chosen programs REPEAT times in one boot, over both devices, with a
# summary per run, a tally per program and the kernel-log gate at the end
# (build/runs/soak/; each run's logs are logs/<prog>.run<N>.log):
#   make soak TESTS="lchan_msg_test lchan_conn_test" REPEAT=30
# Without TESTS every program runs.  SOAK_TIMEOUT bounds the whole boot.
REPEAT ?= 10
SOAK_TIMEOUT ?= $(shell echo $$((600 + $(REPEAT) * 900)))
soak:
	$(MAKE) KDIR=/usr/src/linux-headers-$(KVER) $(GUEST_PARTS)
	LCHAN_APPEND="$(if $(TESTS),lchan.tests=$$(echo $(TESTS) | tr ' ' ,)) lchan.repeat=$(REPEAT) $(foreach e,$(TEST_ENV),lchan.env=$(e))" \
		rig/run-vm.sh soak $(SOAK_TIMEOUT)
.PHONY: soak

# lchan across a virtual wire: two guests (1 vCPU, 1 GiB each) joined by
# QEMU dgram wires, rxe and siw on them, servers in one guest and clients in
# the other (rig/two-node.sh); runs in build/runs/2node-<kernel>/{a,b}.
check-2node:
	rig/two-node.sh
.PHONY: check-2node

# A longer fuzz run than make check's: make fuzz SEED=1234 N=1000000
SEED ?= 0
N ?= 1000000
fuzz:
	$(MAKE) KDIR=/usr/src/linux-headers-$(KVER) $(GUEST_PARTS)
	LCHAN_APPEND="lchan.fuzz_seed=$(SEED) lchan.fuzz_n=$(N)" \
		LCHAN_TEST_TIMEOUT=3000 rig/run-vm.sh fuzz 3600
.PHONY: fuzz

# lchan against perftest and TCP on rxe and siw in one guest run (about 25
# minutes) on KERNEL: bench/<kernel>/results.md, results.json, then
# bench/README.md (what each benchmark measures, the tables, the plots).
bench:
	rig/bench.sh
.PHONY: bench

# bench/README.md and its plots (bench/*.png) from the committed data in
# bench/<kernel>/ (rig/report/readme.py); make check compares the text.
bench-readme:
	PYTHONPATH=rig python3 -m report readme --plots bench
.PHONY: bench-readme

# Only the libfabric rows of make bench (a few minutes): fi_pingpong over
# the lchan provider beside libfabric's verbs and tcp providers and
# lchan_perf, on rxe and siw: bench/<kernel>/fabric.md, fabric.json.
bench-fabric:
	LCHAN_BENCH_ONLY=fabric rig/bench.sh
.PHONY: bench-fabric

# Only the two-machine table of make bench (about 4 minutes): lchan_perf
# beside perftest between two guests across a virtual wire, three rounds,
# medians: bench/<kernel>/two-machines.tsv.
bench-2node:
	LCHAN_BENCH_ONLY=2node rig/bench.sh
.PHONY: bench-2node

# Unmodified programs (redis, iperf3, nginx with wrk) over TCP, lchan-run
# and rsockets' preload on rxe0, three rounds (about 6 minutes):
# bench/<kernel>/apps.tsv, apps.md, apps.json.
bench-apps:
	LCHAN_BENCH_ONLY=apps rig/bench.sh
.PHONY: bench-apps

# The poller goals' latency rows alone, direct polling's among them, as
# medians of ROUNDS alternating rounds (default 3) on rxe0 and siw0 (about
# 10 minutes); the rounds kept in bench/<kernel>/poller.tsv, their medians
# and ratios in bench/README.md.
ROUNDS ?= 3
bench-poller:
	$(MAKE) KDIR=/usr/src/linux-headers-$(KVER) $(GUEST_PARTS)
	rc=0; LCHAN_APPEND="lchan.pollbench_rounds=$(ROUNDS)" \
		rig/run-vm.sh pollbench 1500 || rc=$$?; \
		rig/bench.sh --keep pollbench poller && exit $$rc
.PHONY: bench-poller

# The poller pool's placement rules (poller_assign load and device) side by
# side: two concurrent poller-mode ping-pongs (rxe0, siw0) on a pool of two
# threads, applications waiting for events, medians of POOL_ROUNDS
# alternating rounds (default 5; 7 rounds take 2 minutes on 6.1), kept in
# bench/<kernel>/pool.tsv.
POOL_ROUNDS ?= 5
bench-pool:
	$(MAKE) KDIR=/usr/src/linux-headers-$(KVER) $(GUEST_PARTS)
	rc=0; LCHAN_APPEND="lchan.poolbench_rounds=$(POOL_ROUNDS)" \
		rig/run-vm.sh poolbench 1500 || rc=$$?; \
		rig/bench.sh --keep poolbench pool && exit $$rc
.PHONY: bench-pool

# Where a 64-byte ping-pong's round trip goes on rxe0: lchan in doorbell
# and poller mode against ib_send_lat, busy and with events, timed by
# kprobes at the points they pass (rxe's post and completion, the CQ's
# handler, lchan's CQE write and ENTER), ROUNDS rounds:
# bench/<kernel>/latency-path.md (five rounds: a 90 s guest on 6.1, about
# 8 minutes on 6.12, where ib_send_lat -e hangs and waits out its 30 s
# limit twice a round).
latency-path:
	$(MAKE) KDIR=/usr/src/linux-headers-$(KVER) module lib tools
	rig/latpath.sh $(ROUNDS)
.PHONY: latency-path

# Where the time goes: perf profiles in the guest, bench/profile/*.txt
# (connection set-up, send latency and bandwidth; PROFILE=connect or
# PROFILE=send for those rows alone).
profile:
	rig/profile.sh
.PHONY: profile

# ---------------------------------------------------------------- debug kernel
#
# make check-debug: the whole selftest suite on a 6.1 kernel built from
# linux-source-6.1 with KASAN, lockdep, DEBUG_OBJECTS, sleep-in-atomic and
# kmemleak checks (rig/debug-kernel.sh, rig/debug.config; built
# once under nice and cached in ~/.cache/lchan), then a kmemleak scan.  Any
# report fails it.  rig/README.md, "The debug kernel".
#
# lchan.ko for that kernel is built in $(B)/debug-kmod from a copy of the
# module sources, so kmod/lchan.ko (Debian's kernel) stays as it is.
DEBUG_KMOD := $(B)/debug-kmod
# The whole guest run, and each test program in it.  RDMA on this kernel
# is 20 to 70 times slower than on Debian's.
DEBUG_TIMEOUT ?= 14400
DEBUG_TEST_TIMEOUT ?= 5400
# Sizes for the lane (lchan.env=NAME=VALUE in the guest): the fuzzer's
# defaults and the message counts of the volume tests (load, msg, poller,
# data; lchan_t_count) are made for the fast kernel.
DEBUG_ENV ?= LCHAN_FUZZ_ENTRIES=20000 LCHAN_FUZZ_IOCTLS=2000 LCHAN_T_DIVIDE=20

debug-kernel:
	rig/debug-kernel.sh >/dev/null

module-debug: debug-kernel
	mkdir -p $(DEBUG_KMOD)
	cp -p --parents $(filter-out dkms.conf,$(DKMS_FILES)) $(DEBUG_KMOD)/
	tree=$$(rig/debug-kernel.sh --tree) && \
		nice -n 19 $(MAKE) -C "$$tree" M=$(DEBUG_KMOD) modules

check-debug: module-debug
	$(MAKE) KDIR=/usr/src/linux-headers-$(KVER) lib selftests tools
	LCHAN_KERNEL=debug LCHAN_TEST_TIMEOUT=$(DEBUG_TEST_TIMEOUT) \
		LCHAN_APPEND="$(strip $(LCHAN_APPEND) $(foreach e,$(DEBUG_ENV),lchan.env=$(e)))" \
		rig/run-vm.sh tests $(DEBUG_TIMEOUT)
.PHONY: debug-kernel module-debug check-debug
