# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Job "soak" (make soak): the job "tests" with lchan.repeat=N, in its own
# run directory so that it does not replace the last make check's.
# shellcheck source=tests.sh
. "$LCHAN_SHARE/guest/tests.sh"
