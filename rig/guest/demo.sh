# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Job "demo": load lchan and show what it exposes.
# shellcheck source=lib.sh
. "$LCHAN_SHARE/guest/lib.sh"

DEMO=$LCHAN_OUT/demo.txt
if ! load_ko "$LCHAN_KO"; then
	tap "not ok - insmod lchan ($LCHAN_KO; did make module run?)"
	exit 1
fi
tap "ok - insmod lchan"

failed=0
{
	echo "== RDMA devices"
	rdma link show
	echo "== /sys/kernel/lchan"
	show_sysfs /sys/kernel/lchan
} >"$DEMO" 2>&1
if [ -d /sys/kernel/lchan ]; then
	tap "ok - /sys/kernel/lchan exists"
else
	tap "not ok - /sys/kernel/lchan exists"
	failed=1
fi

# The module side may add a demo script to the tools it ships.
if [ -f "$LCHAN_TOOLS/demo.sh" ]; then
	if sh "$LCHAN_TOOLS/demo.sh" >>"$DEMO" 2>&1; then
		tap "ok - tools/demo.sh"
	else
		tap "not ok - tools/demo.sh"
		failed=1
	fi
fi

if rmmod lchan; then
	tap "ok - rmmod lchan"
else
	tap "not ok - rmmod lchan"
	failed=1
fi
exit $failed
