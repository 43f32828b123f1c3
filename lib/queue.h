/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/* Private to liblchan: not installed, not exported. */
#ifndef LCHAN_QUEUE_H
#define LCHAN_QUEUE_H

#include "liblchan.h"

/*
 * lchan_submit() without its wait for new receives to reach the queue
 * pair, for a caller whose peer learns of its receives only from SENDs
 * submitted after them on the same channel (the message layer's credits):
 * the kernel posts receives before the SENDs published behind them, in
 * both modes, so no SEND can overtake the receive it grants.
 */
int lchan_submit_in_band(struct lchan_chan *chan);

#endif
