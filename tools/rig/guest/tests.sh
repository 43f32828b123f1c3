# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Job "tests": load lchan.ko, run every program in selftests/, unload.
# shellcheck source=lib.sh
. "$LCHAN_SHARE/guest/lib.sh"

if ! load_ko "$LCHAN_KO"; then
	tap "not ok - insmod lchan ($LCHAN_KO; did make module run?)"
	exit 1
fi
tap "ok - insmod lchan"

# lchan.tests=a,b on the kernel command line (make check-tests TESTS=..)
# runs only those programs; lchan.env=NAME=VALUE sets a test's variable.
dir=$LCHAN_SELFTESTS
for _arg in $(cat /proc/cmdline); do
	case $_arg in
	lchan.tests=*)
		dir=/tmp/selected
		mkdir -p $dir
		cp -r "$LCHAN_SELFTESTS/data" "$LCHAN_SELFTESTS/pkgconfig" $dir/
		for _t in $(echo "${_arg#*=}" | tr ',' ' '); do
			cp "$LCHAN_SELFTESTS/$_t" $dir/ ||
				tap "not ok - no test program $_t"
		done ;;
	lchan.env=*=*) export "${_arg#lchan.env=}" ;;
	esac
done

failed=0
run_tests "$dir" || failed=1

# Tests may reload the module but must leave it loaded and unloadable.
if [ ! -d /sys/module/lchan ]; then
	tap "not ok - rmmod lchan at end: lchan was not loaded any more"
	failed=1
elif rmmod lchan; then
	tap "ok - rmmod lchan at end"
else
	tap "not ok - rmmod lchan at end"
	failed=1
fi
exit $failed
