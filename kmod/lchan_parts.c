// SPDX-License-Identifier: GPL-2.0
/*
 * A channel's parts (struct lchan_keepalive, lchan_iwarp_open, ...): each
 * file sets up and stops its own; this is the one place that calls them,
 * in the order the channel's life needs.
 */
#include "lchan.h"

/* A new channel: every part ready to run, none running. */
void lchan_parts_init(struct lchan_channel *chan)
{
	lchan_post_init(chan);
	lchan_quirk_init(chan);
	lchan_iwarp_init(chan);
	lchan_keepalive_init(chan);
	lchan_direct_init(chan);
	lchan_poller_member_init(chan);
}

/* The channel has its file: a poller context's pool thread takes it. */
void lchan_parts_attach(struct lchan_channel *chan)
{
	if (chan->mode == LCHAN_MODE_POLLER)
		lchan_poller_add_chan(chan);
}

/* Before the QP goes: no pool thread posts for the channel any more. */
void lchan_parts_detach(struct lchan_channel *chan)
{
	lchan_poller_del_chan(chan);
}

/*
 * After the QP is gone, so that no completion can queue a part's work
 * any more; a queued work held a channel reference.
 */
void lchan_parts_stop(struct lchan_channel *chan)
{
	lchan_post_stop(chan);
	lchan_quirk_stop(chan);
	lchan_iwarp_stop(chan);
	lchan_keepalive_stop(chan);
	lchan_direct_stop(chan);
}
