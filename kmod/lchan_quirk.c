// SPDX-License-Identifier: GPL-2.0
/*
 * What an RDMA driver needs of lchan beyond what the verbs say: one entry
 * per driver, keyed by its driver id and chosen once, when lchan first sees
 * the device (dev->quirk); and the work an entry asks for.  The rest of the
 * module reads dev->quirk and never asks which driver it runs on.
 */
#include "lchan.h"

/* A driver without an entry: the verbs say all there is. */
static const struct lchan_quirk lchan_quirk_none = {
	.cq_poll = IB_POLL_SOFTIRQ,
};

static const struct lchan_quirk lchan_quirks[] = {
	{
		.driver_id = RDMA_DRIVER_SIW,
		/*
		 * siw (Linux 6.1, 6.12) publishes a CQE and then reads
		 * whether its CQ is armed, with no barrier in between, while
		 * ib_core arms the CQ and then reads the CQE count: both can
		 * read the old value, and the CQE's event is lost
		 * (lchan_quirk_recheck_soon()).
		 */
		.cq_recheck = true,
		/* siw reports from softirq or from its own threads. */
		.cq_poll = IB_POLL_SOFTIRQ,
	},
	{
		.driver_id = RDMA_DRIVER_RXE,
		/*
		 * rxe reports completions in softirq before 6.4 and from a
		 * kworker since (lchan_compat.h): poll where they come from.
		 */
		.cq_poll = LCHAN_COMPAT_RXE_CQ_POLL,
	},
};

/* The entry of @ibdev's driver. */
const struct lchan_quirk *lchan_quirk_get(const struct ib_device *ibdev)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(lchan_quirks); i++)
		if (lchan_quirks[i].driver_id == ibdev->ops.driver_id)
			return &lchan_quirks[i];
	return &lchan_quirk_none;
}

/*
 * cq_recheck: a CQE whose event was lost waits in the driver's CQ until
 * another completion comes, which on a channel waiting for exactly that
 * one is never.  It can only happen while ib_core re-arms the CQ after a
 * batch of completions, so on such a device each batch makes lchan ask
 * the CQ again a little later, and run it when it has CQEs.  Called at
 * the end of every completion.
 */
void lchan_quirk_recheck_soon(struct lchan_channel *chan)
{
	/* A direct CQ has no events to lose. */
	if (!chan->dev->quirk->cq_recheck ||
	    chan->mode == LCHAN_MODE_DIRECT)
		return;
	WRITE_ONCE(chan->recheck.handled, chan->recheck.handled + 1);
	if (delayed_work_pending(&chan->recheck.work))
		return;
	WRITE_ONCE(chan->recheck.mark, chan->recheck.handled);
	lchan_chan_queue_delayed(chan, &chan->recheck.work,
				 LCHAN_CQ_RECHECK_MS);
}

/* Whether ib_core has a poll of @cq scheduled. */
static bool lchan_quirk_cq_poll_pending(struct ib_cq *cq)
{
	if (cq->poll_ctx == IB_POLL_SOFTIRQ)
		return test_bit(IRQ_POLL_F_SCHED, &cq->iop.state);
	return work_pending(&cq->work);
}

static void lchan_quirk_cq_recheck(struct work_struct *work)
{
	struct lchan_channel *chan = container_of(to_delayed_work(work),
					       struct lchan_channel,
					       recheck.work);
	struct ib_cq *cq;

	mutex_lock(&chan->lock);
	cq = chan->cq;
	if (cq && ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
				   IB_CQ_REPORT_MISSED_EVENTS) > 0) {
		/*
		 * CQEs wait.  With completions handled since, or a poll
		 * scheduled, ib_core is at work on the CQ anyway; else their
		 * event was dropped.
		 */
		if (READ_ONCE(chan->recheck.handled) ==
		    READ_ONCE(chan->recheck.mark) &&
		    !lchan_quirk_cq_poll_pending(cq))
			WRITE_ONCE(chan->stats.cq_recovered,
				   chan->stats.cq_recovered + 1);
		/* What the device would have called: ib_core polls the CQ. */
		local_bh_disable();
		cq->comp_handler(cq, cq->cq_context);
		local_bh_enable();
	}
	mutex_unlock(&chan->lock);
	lchan_chan_put(chan);
}

void lchan_quirk_init(struct lchan_channel *chan)
{
	INIT_DELAYED_WORK(&chan->recheck.work, lchan_quirk_cq_recheck);
}

/* No completion can queue the recheck any more; a queued one held a ref. */
void lchan_quirk_stop(struct lchan_channel *chan)
{
	if (cancel_delayed_work_sync(&chan->recheck.work))
		lchan_chan_put(chan);
}
