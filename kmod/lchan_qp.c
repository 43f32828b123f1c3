// SPDX-License-Identifier: GPL-2.0
/*
 * A channel's queue pair and completion queue: made once the cm id has a
 * device, and torn down, at the channel's end or when the device goes.
 * A channel set up over a link (lchan_link_chan.c) has no cm id: its QP
 * is made with the verbs on the link's port and brought to RTR and RTS
 * here, from the link's path and the peer's QP as the link's messages
 * gave it; at its end it goes to error, and the peer learns it from its
 * own keepalive or RC retries.
 */
#include <linux/random.h>

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
		/* Over a link no CM waits for an RTU. */
		if (!chan->conn.over_link && chan->cm_id)
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

/*
 * CQ and QP with room for @sq and @rq of the ring's requests: through
 * rdma_cm on the channel's cm id, or with the verbs on its port when it
 * has none.  lock held.
 */
static int lchan_qp_make(struct lchan_channel *chan, u32 sq, u32 rq)
{
	struct ib_qp_init_attr attr = {};
	struct ib_device *ibdev = chan->dev->ibdev;
	struct ib_qp *qp;
	int ret;

	chan->cq = ib_alloc_cq(ibdev, chan, sq + rq + LCHAN_CQ_OWN,
			       0, chan->mode == LCHAN_MODE_DIRECT ?
			       IB_POLL_DIRECT :
			       chan->dev->quirk->cq_poll);
	if (IS_ERR(chan->cq)) {
		ret = PTR_ERR(chan->cq);
		chan->cq = NULL;
		return ret;
	}

	attr.qp_context = chan;
	attr.event_handler = lchan_qp_event;
	attr.send_cq = chan->cq;
	attr.recv_cq = chan->cq;
	attr.cap.max_send_wr = sq + LCHAN_QP_OWN_PER_QUEUE;
	attr.cap.max_recv_wr = rq + LCHAN_QP_OWN_PER_QUEUE;
	attr.cap.max_send_sge = chan->caps.max_send_sge;
	attr.cap.max_recv_sge = chan->caps.max_recv_sge;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	if (!chan->conn.over_link) {
		ret = rdma_create_qp(chan->cm_id, chan->pd->ibpd, &attr);
		if (ret)
			goto err_free_cq;
		chan->qp = chan->cm_id->qp;
	} else {
		attr.port_num = chan->conn.port_num;
		qp = ib_create_qp(chan->pd->ibpd, &attr);
		if (IS_ERR(qp)) {
			ret = PTR_ERR(qp);
			goto err_free_cq;
		}
		chan->qp = qp;
	}
	chan->conn.sq_room = sq;
	chan->conn.rq_room = rq;
	return 0;

err_free_cq:
	lchan_cq_free(chan->cq);
	chan->cq = NULL;
	return ret;
}

static void lchan_qp_destroy(struct lchan_channel *chan)
{
	if (chan->conn.over_link)
		ib_destroy_qp(chan->qp);
	else
		rdma_destroy_qp(chan->cm_id);
	chan->qp = NULL;
}

/* CQ, QP and rings for a channel bound to its device.  lock held. */
int lchan_qp_create(struct lchan_channel *chan,
		    const struct lchan_ring_sizes *sizes)
{
	struct lchan_ring *ring = &chan->ring;
	int ret;

	ret = lchan_ring_alloc(chan, sizes);
	if (ret)
		return ret;
	ret = lchan_qp_make(chan, ring->sq.entries, ring->rq.entries);
	if (ret)
		goto err_free_ring;
	ring->info.local_qpn = chan->qp->qp_num;
	if (chan->tp->prepare_qp) {
		ret = chan->tp->prepare_qp(chan);
		if (ret)
			goto err_destroy_qp;
	}
	trace_lchan_chan_step(chan->id, LCHAN_STEP_QP_READY);
	return 0;

err_destroy_qp:
	lchan_qp_destroy(chan);
	lchan_cq_free(chan->cq);
	chan->cq = NULL;
err_free_ring:
	lchan_ring_free(ring);
	return ret;
}

/*
 * CQ and QP before the rings, for an accept over a link, which answers
 * with its QP number before the application's accept says how large its
 * rings are: room for @sq and @rq requests.  lock held.
 */
int lchan_qp_create_bare(struct lchan_channel *chan, u32 sq, u32 rq)
{
	return lchan_qp_make(chan, sq, rq);
}

/*
 * The rings of a channel whose QP was made bare: -ENOBUFS when the rings
 * @sizes asks for need more room than the QP has.  lock held.
 */
int lchan_qp_add_ring(struct lchan_channel *chan,
		      const struct lchan_ring_sizes *sizes)
{
	struct lchan_ring *ring = &chan->ring;
	int ret;

	ret = lchan_ring_alloc(chan, sizes);
	if (ret)
		return ret;
	if (ring->sq.entries > chan->conn.sq_room ||
	    ring->rq.entries > chan->conn.rq_room) {
		lchan_ring_free(ring);
		return -ENOBUFS;
	}
	ring->info.local_qpn = chan->qp->qp_num;
	trace_lchan_chan_step(chan->id, LCHAN_STEP_QP_READY);
	return 0;
}

/*
 * A connect that leaves its link for rdma_cm: QP and CQ made again on
 * the channel's cm id, for the same rings.  Nothing was posted on the
 * link's QP.  lock held.
 */
int lchan_qp_remake(struct lchan_channel *chan)
{
	struct lchan_ring *ring = &chan->ring;
	int ret;

	if (chan->qp) {
		ib_destroy_qp(chan->qp);
		chan->qp = NULL;
	}
	if (chan->cq) {
		lchan_cq_free(chan->cq);
		chan->cq = NULL;
	}
	ret = lchan_qp_make(chan, ring->sq.entries, ring->rq.entries);
	if (ret)
		return ret;
	ring->info.local_qpn = chan->qp->qp_num;
	return chan->tp->prepare_qp ? chan->tp->prepare_qp(chan) : 0;
}

/*
 * @attr for the state it names, from @link's cm id: -ENOTCONN when the
 * link is not up.  link->mutex held, and kept until the modify returns.
 */
static int lchan_qp_link_attr(struct lchan_link *link, struct ib_qp_attr *attr,
			      int *mask)
{
	lockdep_assert_held(&link->mutex);
	if (!link->cm_id || READ_ONCE(link->state) != LCHAN_LINK_UP)
		return -ENOTCONN;
	return rdma_init_qp_attr(link->cm_id, attr, mask);
}

/*
 * INIT of a QP made without a cm id, on @link's port: its P_Key index
 * and port from the link's cm id.  Receives may be posted from now on.
 * -ENOTCONN when the link is not up.  chan->lock held.
 */
int lchan_qp_init(struct lchan_channel *chan, struct lchan_link *link)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_INIT };
	int mask, ret;

	mutex_lock(&link->mutex);
	ret = lchan_qp_link_attr(link, &attr, &mask);
	if (ret)
		goto out_unlock;
	/* The link takes no READ; the channel takes what rdma_cm grants. */
	attr.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			       IB_ACCESS_REMOTE_ATOMIC;
	ret = ib_modify_qp(chan->qp, &attr, mask);
out_unlock:
	mutex_unlock(&link->mutex);
	return ret;
}

/*
 * RTR of a QP in INIT toward the peer's QP @peer: the path (its address
 * vector, on RoCE with the source GID attribute) is @link's, from its cm
 * id; the QP number, PSN, MTU and READ depth the peer's.  The address
 * vector rdma_init_qp_attr() copies holds no reference of its own,
 * ib_modify_qp() takes one for the QP: the link's id must stay until the
 * modify returns, hence link->mutex across both.  -ENOTCONN when the
 * link is not up.  chan->lock held.
 */
int lchan_qp_ready(struct lchan_channel *chan, struct lchan_link *link,
		   const struct lchan_qp_peer *peer)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RTR };
	int mask, ret;

	mutex_lock(&link->mutex);
	ret = lchan_qp_link_attr(link, &attr, &mask);
	if (ret)
		goto out_unlock;
	attr.path_mtu = min_t(enum ib_mtu, attr.path_mtu, peer->mtu);
	attr.dest_qp_num = peer->qpn;
	attr.rq_psn = peer->psn;
	attr.max_dest_rd_atomic = peer->rd_in;
	attr.min_rnr_timer = 0;
	mask |= IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
		IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
	/* A link has no alternate path; a channel takes none of it. */
	mask &= ~IB_QP_ALT_PATH;
	ret = ib_modify_qp(chan->qp, &attr, mask);
out_unlock:
	mutex_unlock(&link->mutex);
	if (!ret)
		WRITE_ONCE(chan->conn.remote_qpn, peer->qpn);
	return ret;
}

/* The path MTU of @link's path, as its RTR would use it. */
int lchan_qp_link_mtu(struct lchan_link *link, enum ib_mtu *mtu)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RTR };
	int mask, ret;

	mutex_lock(&link->mutex);
	ret = link->cm_id ? rdma_init_qp_attr(link->cm_id, &attr, &mask) :
	      -ENOTCONN;
	mutex_unlock(&link->mutex);
	if (!ret)
		*mtu = attr.path_mtu;
	return ret;
}

/*
 * RTS of a QP in RTR: our own starting PSN @psn, the channel's ACK
 * timeout, the retry counts and how many READs it may have in flight.
 * lock held.
 */
int lchan_qp_send_ready(struct lchan_channel *chan, u32 psn, u8 retry,
			u8 rnr_retry, u8 rd_atomic)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RTS,
		.sq_psn = psn,
		.timeout = chan->conn.ack_timeout,
		.retry_cnt = retry,
		.rnr_retry = rnr_retry,
		.max_rd_atomic = rd_atomic,
	};

	return ib_modify_qp(chan->qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN |
			    IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			    IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC);
}

/* A starting PSN: 24 random bits. */
u32 lchan_qp_new_psn(void)
{
	return get_random_u32() & 0xffffff;
}

/*
 * Release the verbs objects: disconnect, flush everything posted (the
 * flush completions land in the CQ ring and drop their MR references),
 * destroy QP, CQ and cm_id.  Without a cm id the QP goes to error, which
 * is all a disconnect does here.  Idempotent; chan->lock held.
 */
void lchan_qp_teardown(struct lchan_channel *chan)
{
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	u32 sq_done, rq_done;

	if (chan->cm_id && chan->qp && !chan->conn.over_link) {
		rdma_disconnect(chan->cm_id);
		trace_lchan_chan_step(chan->id, LCHAN_STEP_DISCONNECTED);
	} else if (chan->qp) {
		ib_modify_qp(chan->qp, &err, IB_QP_STATE);
		trace_lchan_chan_step(chan->id, LCHAN_STEP_DISCONNECTED);
	}
	if (chan->qp) {
		if (chan->mode == LCHAN_MODE_DIRECT)
			lchan_direct_drain(chan);
		else
			ib_drain_qp(chan->qp);
		trace_lchan_chan_step(chan->id, LCHAN_STEP_DRAINED);
		lchan_flow_retire_all(chan);
		lchan_qp_destroy(chan);
	}
	if (chan->cq) {
		lchan_cq_free(chan->cq);
		chan->cq = NULL;
	}
	lchan_stream_qp_gone(chan);
	if (chan->cm_id) {
		rdma_destroy_id(chan->cm_id);
		chan->cm_id = NULL;
		/* No answer comes any more. */
		WRITE_ONCE(chan->conn.in_flight, false);
	}
	if (chan->conn.link) {
		lchan_link_put(chan->conn.link);
		chan->conn.link = NULL;
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
