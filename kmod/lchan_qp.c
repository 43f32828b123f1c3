// SPDX-License-Identifier: GPL-2.0
/*
 * A channel's queue pair and completion queue: made once the cm id has a
 * device, and torn down, at the channel's end or when the device goes.
 */
#include "lchan.h"
#include "lchan_trace.h"

/*
 * IB/RoCE: data arriving before the RTU (lost on the wire) shows the
 * passive side that the connection is up.  rdma_cm learns that only when
 * told; otherwise it waits for the peer to answer a resent REP.
 * The error events say the device put the QP in error, perhaps with no
 * request of ours to fail (a peer's WRITE refused here): so is the
 * channel.  Called in any context.
 */
static void lchan_qp_event(struct ib_event *event, void *context)
{
	struct lchan_channel *chan = context;

	switch (event->event) {
	case IB_EVENT_COMM_EST:
		rdma_notify(chan->cm_id, event->event);
		break;
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
		lchan_dbg_chan(chan, "QP event %s\n",
			       ib_event_msg(event->event));
		lchan_chan_set_state(chan, LCHAN_STATE_ERROR);
		break;
	default:
		break;
	}
}

/* CQ, QP and rings for a channel whose cm_id has a device.  lock held. */
int lchan_qp_create(struct lchan_channel *chan,
		    const struct lchan_ring_sizes *sizes)
{
	struct ib_qp_init_attr attr = {};
	struct lchan_ring *ring = &chan->ring;
	struct ib_device *ibdev = chan->dev->ibdev;
	int ret;

	ret = lchan_ring_alloc(chan, sizes);
	if (ret)
		return ret;

	chan->cq = ib_alloc_cq(ibdev, chan,
			       ring->sq.entries + ring->rq.entries +
			       LCHAN_CQ_OWN,
			       0, chan->mode == LCHAN_MODE_DIRECT ?
			       IB_POLL_DIRECT :
			       chan->dev->quirk->cq_poll);
	if (IS_ERR(chan->cq)) {
		ret = PTR_ERR(chan->cq);
		chan->cq = NULL;
		goto err_free_ring;
	}

	attr.qp_context = chan;
	attr.event_handler = lchan_qp_event;
	attr.send_cq = chan->cq;
	attr.recv_cq = chan->cq;
	attr.cap.max_send_wr = ring->sq.entries + LCHAN_QP_OWN_PER_QUEUE;
	attr.cap.max_recv_wr = ring->rq.entries + LCHAN_QP_OWN_PER_QUEUE;
	attr.cap.max_send_sge = chan->caps.max_send_sge;
	attr.cap.max_recv_sge = chan->caps.max_recv_sge;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	ret = rdma_create_qp(chan->cm_id, chan->pd->ibpd, &attr);
	if (ret)
		goto err_free_cq;
	chan->qp = chan->cm_id->qp;
	ring->info.local_qpn = chan->qp->qp_num;
	if (chan->tp->prepare_qp) {
		ret = chan->tp->prepare_qp(chan);
		if (ret)
			goto err_destroy_qp;
	}
	trace_lchan_chan_step(chan->id, LCHAN_STEP_QP_READY);
	return 0;

err_destroy_qp:
	rdma_destroy_qp(chan->cm_id);
	chan->qp = NULL;
err_free_cq:
	lchan_cq_free(chan->cq);
	chan->cq = NULL;
err_free_ring:
	lchan_ring_free(ring);
	return ret;
}

/*
 * Release the verbs objects: disconnect, flush everything posted (the
 * flush completions land in the CQ ring and drop their MR references),
 * destroy QP, CQ and cm_id.  Idempotent; chan->lock held.
 */
void lchan_qp_teardown(struct lchan_channel *chan)
{
	u32 sq_done, rq_done;

	if (chan->cm_id && chan->qp) {
		rdma_disconnect(chan->cm_id);
		trace_lchan_chan_step(chan->id, LCHAN_STEP_DISCONNECTED);
	}
	if (chan->qp) {
		if (chan->mode == LCHAN_MODE_DIRECT)
			lchan_direct_drain(chan);
		else
			ib_drain_qp(chan->qp);
		trace_lchan_chan_step(chan->id, LCHAN_STEP_DRAINED);
		lchan_flow_retire_all(chan);
		rdma_destroy_qp(chan->cm_id);
		chan->qp = NULL;
	}
	if (chan->cq) {
		lchan_cq_free(chan->cq);
		chan->cq = NULL;
	}
	if (chan->cm_id) {
		rdma_destroy_id(chan->cm_id);
		chan->cm_id = NULL;
		/* No answer comes any more. */
		WRITE_ONCE(chan->conn.in_flight, false);
	}
	lchan_iwarp_port_release(chan);
	/* No QP: what still waits in the ring is flushed now. */
	lchan_post_submit(chan, &sq_done, &rq_done);
}

/*
 * Device removal: every channel on @dev goes to the error state and loses
 * its verbs objects now.
 */
void lchan_qp_kill_dev(struct lchan_dev *dev)
{
	struct lchan_channel *chan;

	for (;;) {
		mutex_lock(&dev->lock);
		chan = list_first_entry_or_null(&dev->chans,
						struct lchan_channel, dev_node);
		if (chan) {
			list_del_init(&chan->dev_node);
			dev->nr_chans--;
			kobject_get(&chan->kobj);
		}
		mutex_unlock(&dev->lock);
		if (!chan)
			break;

		mutex_lock(&chan->lock);
		lchan_chan_set_state(chan, LCHAN_STATE_ERROR);
		lchan_qp_teardown(chan);
		mutex_unlock(&chan->lock);
		chan->conn.status = -ENODEV;
		complete_all(&chan->conn.done);
		wake_up(&chan->wq);
		lchan_chan_put(chan);
	}
}
