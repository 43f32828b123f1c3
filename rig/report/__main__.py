# SPDX-License-Identifier: GPL-2.0
"""python3 -m report WHICH ARGS...: one report (see each module's doc).

  apps DIR                   DIR/apps.md, apps.json
  bench DIR                  DIR/results.md, results.json
  connect DIR                DIR/connect.md, connect.json
  fabric DIR                 DIR/fabric.md, fabric.json
  latpath --kernel K DIR     latency-path.md on standard output
  readme [--plots] DIR [OUT] DIR/README.md (and DIR/*.png)
  two-machines TSV           check-2node's medians and ratios, on standard output
"""

import sys

from . import apps, bench, connect, fabric, latpath, readme, two

REPORTS = {"apps": apps, "bench": bench, "connect": connect, "fabric": fabric, "latpath": latpath,
           "readme": readme, "two-machines": two}

if len(sys.argv) < 2 or sys.argv[1] not in REPORTS:
    sys.exit("usage: python3 -m report {" + ",".join(REPORTS) + "} ARGS...")
REPORTS[sys.argv[1]].main(sys.argv[2:])
