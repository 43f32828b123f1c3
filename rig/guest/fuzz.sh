# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Job "fuzz": only lchan_fuzz, for as long as asked.  `make fuzz SEED=..
# N=..` passes lchan.fuzz_seed and lchan.fuzz_n on the kernel command line.
# shellcheck source=lib.sh
. "$LCHAN_SHARE/guest/lib.sh"

for _arg in $(cat /proc/cmdline); do
	case $_arg in
	lchan.fuzz_seed=*) LCHAN_FUZZ_SEED=${_arg#*=} ;;
	lchan.fuzz_n=*) LCHAN_FUZZ_ENTRIES=${_arg#*=}
		LCHAN_FUZZ_IOCTLS=$((${_arg#*=} / 10)) ;;
	esac
done
export LCHAN_FUZZ_SEED LCHAN_FUZZ_ENTRIES LCHAN_FUZZ_IOCTLS

if ! load_ko "$LCHAN_KO"; then
	tap "not ok - insmod lchan"
	exit 1
fi
mkdir -p /tmp/fuzzonly
cp "$LCHAN_SELFTESTS/lchan_fuzz" /tmp/fuzzonly/
failed=0
run_tests /tmp/fuzzonly || failed=1
if rmmod lchan; then
	tap "ok - rmmod lchan at end"
else
	tap "not ok - rmmod lchan at end"
	failed=1
fi
exit $failed
