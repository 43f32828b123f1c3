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
		# What the programs find beside them: every folder.
		for _d in "$LCHAN_SELFTESTS"/*/; do
			cp -r "$_d" $dir/
		done
		for _t in $(echo "${_arg#*=}" | tr ',' ' '); do
			cp "$LCHAN_SELFTESTS/$_t" $dir/ ||
				tap "not ok - no test program $_t"
		done ;;
	lchan.skip_tests=*)
		# Every program but these (a lane that leaves them to another).
		dir=/tmp/selected
		mkdir -p $dir
		cp -r "$LCHAN_SELFTESTS"/. $dir/
		for _t in $(echo "${_arg#*=}" | tr ',' ' '); do
			rm -f "$dir/$_t"
		done
		tap "# not in this lane: ${_arg#*=}" ;;
	lchan.env=*=*) export "${_arg#lchan.env=}" ;;
	lchan.repeat=*) repeat=${_arg#*=} ;;
	esac
done

failed=0
case ${repeat:-} in
'' | *[!0-9]* | 0 | 1)
	run_tests "$dir" || failed=1 ;;
*)
	# A soak (make soak): the same programs $repeat times in this boot, a
	# summary after each run and a tally at the end.  Kernel complaints of
	# any run fail the whole job (the host reads the log once).
	: >/tmp/soak-failed
	_i=1
	while [ "$_i" -le "$repeat" ]; do
		tap "# soak: run $_i of $repeat"
		if run_tests "$dir" ".run$_i"; then
			tap "# soak: run $_i of $repeat: ok"
		else
			failed=1
			tap "# soak: run $_i of $repeat: FAILED: $(tr '\n' ' ' </tmp/rig-failed)"
			sed "s/\$/ run $_i/" /tmp/rig-failed >>/tmp/soak-failed
		fi
		_i=$((_i + 1))
	done
	for _t in "$dir"/*; do
		[ -f "$_t" ] && [ -x "$_t" ] || continue
		_n=$(grep -c "^${_t##*/} " /tmp/soak-failed)
		tap "# soak: ${_t##*/}: $repeat runs, $_n failed$(
			[ "$_n" = 0 ] || echo " (runs $(grep "^${_t##*/} " /tmp/soak-failed |
				awk '{ printf "%s%s", sep, $3; sep = "," }'))")"
	done ;;
esac

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
