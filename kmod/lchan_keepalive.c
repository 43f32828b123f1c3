// SPDX-License-Identifier: GPL-2.0
/*
 * Keepalive of a channel (uapi lchan_rc_params.keepalive_ms): a peer that
 * vanished while the channel was idle is found in a bounded time.
 *
 * Traffic pays nothing but one store per completion (chan->ka.heard).  One
 * delayed work per channel looks every keepalive_ms: with a completion
 * since its last look it only re-arms; without one it sends a probe that
 * only a live peer can answer.  A zero-length RDMA WRITE serves on IB and
 * RoCE: RC completes it on the peer's acknowledgement.  On iWARP a WRITE
 * completes once TCP has taken it, so the probe is a zero-length RDMA
 * READ, which completes on the peer's response.  Neither needs memory or
 * an rkey of the peer's, and neither touches the rings.  (A zero-length
 * READ on rxe would not do: rxe of Linux 6.1 looks up the rkey of a READ
 * sent again after a lost response, and a zero-length one has none.)  A probe still out
 * at the next look, or one that failed, ends the channel; RC's own retries
 * (IB/RoCE) may end it sooner, and TCP's (iWARP) would take minutes, which
 * is why lchan keeps its own deadline.
 *
 * The probe has its own SQ and CQ room (LCHAN_QP_OWN_PER_QUEUE,
 * LCHAN_CQ_OWN); the error CQE it may leave takes a ring slot like any
 * other, claimed when it is written.
 */
#include "lchan.h"

enum {
	LCHAN_KA_REPORTED,		/* the keepalive ended the channel */
};

/* The peer is taken for gone: error state, one CQE, waiters woken. */
static void lchan_keepalive_report(struct lchan_channel *chan)
{
	if (test_and_set_bit(LCHAN_KA_REPORTED, &chan->ka.flags))
		return;
	lchan_chan_set_state(chan, LCHAN_STATE_ERROR);
	/* A full ring gets no CQE: the state tells all the same. */
	if (lchan_flow_claim_cq(chan, 1))
		lchan_ring_reject(chan, LCHAN_CQE_KEEPALIVE, 0,
				  LCHAN_CQE_RETRY_EXC_ERR);
	lchan_ring_wake(chan);
}

static void lchan_keepalive_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lchan_channel *chan = container_of(wc->wr_cqe,
						  struct lchan_channel, ka.cqe);

	/* A flush is the channel going down for another reason. */
	if (wc->status && wc->status != IB_WC_WR_FLUSH_ERR)
		lchan_keepalive_report(chan);
	smp_store_release(&chan->ka.probing, false);	/* work acquire */
	lchan_quirk_recheck_soon(chan);
}

/* Post one probe.  lock held, QP connected. */
static void lchan_keepalive_probe(struct lchan_channel *chan)
{
	struct ib_sge sge = { .lkey = chan->qp->pd->local_dma_lkey };
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_cqe = &chan->ka.cqe,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
		},
	};
	int ret;

	if (chan->tp->probe_by_read) {
		/* An iWARP READ names one sink buffer, here of 0 bytes. */
		wr.wr.opcode = IB_WR_RDMA_READ;
		wr.wr.sg_list = &sge;
		wr.wr.num_sge = 1;
	}
	chan->ka.cqe.done = lchan_keepalive_done;
	WRITE_ONCE(chan->ka.probes, chan->ka.probes + 1);
	/* Set before the post: the completion may come at once. */
	WRITE_ONCE(chan->ka.probing, true);
	ret = lchan_post_own_send(chan, &wr.wr);
	/* Only a QP in error refuses it; the channel is going down. */
	if (ret) {
		lchan_dbg_chan(chan, "keepalive probe not posted: %d\n", ret);
		WRITE_ONCE(chan->ka.probing, false);
	}
}

/* No answer for a whole period.  lock held. */
static void lchan_keepalive_expire(struct lchan_channel *chan)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	lchan_dbg_chan(chan, "no answer to the keepalive probe in %u ms\n",
		       READ_ONCE(chan->ka.ms));
	lchan_keepalive_report(chan);
	/*
	 * Flush what is posted now, then tell the peer if it can hear.  A
	 * channel set up over a link has no CM to tell it: the peer finds
	 * the QP in error by its own keepalive or retries.
	 */
	ib_modify_qp(chan->qp, &attr, IB_QP_STATE);
	if (chan->cm_id)
		rdma_disconnect(chan->cm_id);
}

/* Queue the next look; the queued work holds a channel reference. */
static void lchan_keepalive_arm(struct lchan_channel *chan)
{
	kobject_get(&chan->kobj);
	if (!queue_delayed_work(lchan_wq, &chan->ka.work,
				msecs_to_jiffies(READ_ONCE(chan->ka.ms))))
		lchan_chan_put(chan);
}

static void lchan_keepalive_work(struct work_struct *work)
{
	struct lchan_channel *chan = container_of(to_delayed_work(work),
					       struct lchan_channel, ka.work);
	unsigned long now = jiffies;
	bool again = false;

	mutex_lock(&chan->lock);
	/* Teardown clears qp under lock: nothing is posted after it. */
	if (!chan->qp || READ_ONCE(chan->state) != LCHAN_STATE_CONNECTED)
		goto out;
	/* A direct channel's completions, the probe's among them. */
	lchan_direct_poll(chan);
	if (smp_load_acquire(&chan->ka.probing)) {	/* done release */
		lchan_keepalive_expire(chan);
		goto out;
	}
	again = true;
	/* The iWARP opening exchange goes first on the SQ. */
	if (!time_after(READ_ONCE(chan->ka.heard), chan->ka.looked) &&
	    !lchan_transport_sq_held(chan))
		lchan_keepalive_probe(chan);
	chan->ka.looked = now;
out:
	mutex_unlock(&chan->lock);
	if (again)
		lchan_keepalive_arm(chan);
	lchan_chan_put(chan);
}

void lchan_keepalive_init(struct lchan_channel *chan)
{
	INIT_DELAYED_WORK(&chan->ka.work, lchan_keepalive_work);
}

/* The period connect or accept asked for, 0 for none; before connecting. */
void lchan_keepalive_set(struct lchan_channel *chan, u32 ms)
{
	WRITE_ONCE(chan->ka.ms, ms);
}

/* The channel is connected: the first look, if asked for.  Any context. */
void lchan_keepalive_start(struct lchan_channel *chan)
{
	if (!READ_ONCE(chan->ka.ms))
		return;
	WRITE_ONCE(chan->ka.heard, jiffies);
	chan->ka.looked = jiffies;
	lchan_keepalive_arm(chan);
}

/* No look after this; the channel's QP is gone already. */
void lchan_keepalive_stop(struct lchan_channel *chan)
{
	if (cancel_delayed_work_sync(&chan->ka.work))
		lchan_chan_put(chan);
}
