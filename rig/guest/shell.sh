# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Job "shell": an interactive shell on the serial console; the guest powers
# off when it exits.
cat >/root/.profile <<PROFILE
. /etc/lchan.env
. \$LCHAN_SHARE/guest/lib.sh
PS1='lchan-guest:\w# '
PROFILE
cat <<MSG

lchan guest shell.  The share is $LCHAN_SHARE; the environment is in /etc/lchan.env.
  load_ko \$LCHAN_KO          load lchan with its dependencies
  run_tests \$LCHAN_SELFTESTS run the selftests
  /usr/sbin/ip, rdma, rping, ib_send_lat, qperf, strace ...
Exit the shell (or Ctrl-D) to power off; Ctrl-A x quits qemu at once.

MSG
# The terminal size run-vm.sh passed on the kernel command line.
read -r cmdline </proc/cmdline
for arg in $cmdline; do
	case $arg in
	lchan.rows=*) stty rows "${arg#*=}" 2>/dev/null ;;
	lchan.cols=*) stty cols "${arg#*=}" 2>/dev/null ;;
	esac
done
# cttyhack gives the shell the console as controlling tty (job control, ^C).
setsid cttyhack sh -l
exit 0
