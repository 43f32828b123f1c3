# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Top-level make for people; kbuild reads Kbuild.  Everything that is not
# the module lands in build/.

KVER ?= $(shell tools/rig/kver.sh)
RUNNING_KDIR := /lib/modules/$(shell uname -r)/build
KDIR ?= $(if $(wildcard $(RUNNING_KDIR)/Makefile),$(RUNNING_KDIR),/usr/src/linux-headers-$(KVER))
B ?= $(CURDIR)/build

CC ?= cc
CFLAGS_COMMON := -std=gnu11 -O2 -g -Wall -Wextra -Werror -I$(CURDIR)/uapi -I$(CURDIR)/lib

export KDIR KVER B CC CFLAGS_COMMON

.PHONY: all module lib selftests tools clean check demo vm-shell checkpatch sparse ksft-headers

all: module lib selftests tools

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

lib:
	$(MAKE) -C lib

# kselftest_harness.h comes from linux-source-6.1 at build time.
ksft-headers:
	tools/rig/ksft-headers.sh $(B)/ksft

selftests: lib ksft-headers
	$(MAKE) -C selftests KSFT_INC=$(B)/ksft OUT=$(B)/selftests

tools: lib
	$(MAKE) -C tools OUT=$(B)/tools

checkpatch:
	tools/rig/checkpatch.sh

# Zero sparse (and compiler) warnings; log in $(B)/sparse.log.
sparse:
	KDIR=$(KDIR) tools/rig/sparse.sh

check:
	tools/rig/check.sh

demo:
	tools/rig/demo.sh

vm-shell:
	tools/rig/vm-shell.sh

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C lib clean
	rm -rf $(B)
