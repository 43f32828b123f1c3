#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
# lchan-run PROGRAM [ARGS...]: PROGRAM's TCP connections carried by lchan
# stream channels where the peer serves lchan, plain TCP elsewhere
# (lchan-run(1)).  The library it preloads sits beside it in the build
# tree, in LIBDIR once installed.
case ${1:-} in
''|-h|--help)
	echo "usage: lchan-run PROGRAM [ARGS...]" >&2
	echo "  LCHAN_RUN_DEBUG=1 prints how each connection went" >&2
	[ -n "${1:-}" ]
	exit $? ;;
esac
lib=$(dirname "$0")/liblchan-run.so
[ -f "$lib" ] || lib=@LIBDIR@/liblchan-run.so
if [ ! -f "$lib" ]; then
	echo "lchan-run: no $lib" >&2
	exit 127
fi
LD_PRELOAD=$lib${LD_PRELOAD:+:$LD_PRELOAD}
export LD_PRELOAD
exec "$@"
