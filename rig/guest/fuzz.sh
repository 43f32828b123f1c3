# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Job "fuzz": only lchan_fuzz, for as long as asked.  `make fuzz SEED=..
# N=..` passes lchan.fuzz_seed and lchan.fuzz_n on the kernel command line.
# shellcheck source=lib.sh
. "$LCHAN_SHARE/guest/lib.sh"

_seed=$(kernel_arg fuzz_seed "")
[ -z "$_seed" ] || LCHAN_FUZZ_SEED=$_seed
_n=$(kernel_arg fuzz_n "")
if [ -n "$_n" ]; then
	LCHAN_FUZZ_ENTRIES=$_n
	LCHAN_FUZZ_IOCTLS=$((_n / 10))
fi
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
