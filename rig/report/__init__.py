# SPDX-License-Identifier: GPL-2.0
"""The rig's reports, made on the host from the raw data the guests keep:
python3 -m report WHICH ARGS... with rig/ on PYTHONPATH (rig_report in
rig/lib.sh).  Python 3, standard library only; what the reports share is
in stats.py."""
