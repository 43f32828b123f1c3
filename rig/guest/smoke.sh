# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Job "smoke": only the rig's own checks (RDMA devices carry traffic, a
# kselftest program runs); no lchan.  Tells rig trouble from module trouble.
# lchan.repeat=N on the kernel command line runs the traffic checks N times.
# shellcheck source=lib.sh
. "$LCHAN_SHARE/guest/lib.sh"
failed=0
repeat=$(kernel_arg repeat 1)
_i=1
while [ "$_i" -le "${repeat:-1}" ]; do
	if run_tests "$LCHAN_SHARE/rig/smoke" ".run$_i"; then
		tap "# smoke: run $_i of ${repeat:-1}: ok"
	else
		tap "# smoke: run $_i of ${repeat:-1}: FAILED"
		failed=1
	fi
	_i=$((_i + 1))
done
run_tests "$LCHAN_SHARE/rig/pass" || failed=1
exit $failed
