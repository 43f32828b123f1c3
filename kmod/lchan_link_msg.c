// SPDX-License-Identifier: GPL-2.0
/*
 * A link's messages (Documentation/link.md): the link's PD, CQ, QP and
 * buffers, the send of a message, the receive and what each type does,
 * the table of our requests awaiting replies, and the keepalive's echo.
 *
 * Flow control: each side has at most LCHAN_LINK_PENDING requests and
 * LCHAN_LINK_REPLIES replies in flight toward the other, and as many
 * receives posted to take them; a receive is posted again as soon as its
 * message is read.  Every request a peer sends is answered or counted as
 * refused.
 *
 * Sends are posted with link->lock held and only while the link is up;
 * a link ends under the same lock before its teardown drains the QP, so
 * nothing is posted to a QP on its way out, nor written to a buffer
 * being freed.  The CQ handlers may run in softirq and never sleep.
 * When the drain returns, every successful receive has been handled (the
 * drain's marker completes after them on the same CQ), and what is
 * completed after it is a flush, which touches no QP.
 */
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "lchan.h"

static_assert(LCHAN_LINK_WIRE_MSG_MAX <= LCHAN_LINK_BUF);
static_assert(!(LCHAN_LINK_PENDING & (LCHAN_LINK_PENDING - 1)));
/* The wire's path MTU is the IB spec's, as enum ib_mtu has it. */
static_assert(IB_MTU_256 - LCHAN_LINK_WIRE_MTU_MIN == 0 &&
	      IB_MTU_4096 - LCHAN_LINK_WIRE_MTU_MAX == 0);

/* The slot of request @id in the table of pending requests. */
static unsigned int lchan_link_msg_slot(u64 id)
{
	return id & (LCHAN_LINK_PENDING - 1);
}

/*
 * @p waits for a reply under the next free id; -EBUSY when the table is
 * full.  Ids only grow, skipping those whose slot is taken.  lock held.
 */
static int lchan_link_msg_pend(struct lchan_link *link,
			       struct lchan_link_pending *p)
{
	u64 id;

	if (link->nr_pending >= LCHAN_LINK_PENDING)
		return -EBUSY;
	do {
		id = link->next_id++;
	} while (link->pending[lchan_link_msg_slot(id)]);
	p->id = id;
	p->done = false;
	link->pending[lchan_link_msg_slot(id)] = p;
	WRITE_ONCE(link->nr_pending, link->nr_pending + 1);
	return 0;
}

/* @p waits no more, its status set; if it already does not, nothing. */
static void lchan_link_msg_unpend(struct lchan_link *link,
				  struct lchan_link_pending *p)
{
	unsigned int slot = lchan_link_msg_slot(p->id);

	if (link->pending[slot] != p)
		return;
	link->pending[slot] = NULL;
	WRITE_ONCE(link->nr_pending, link->nr_pending - 1);
	if (p == &link->echo)
		link->echo_out = false;
	WRITE_ONCE(p->done, true);	/* the waiter reads it, then the lock */
}

/* The link ended: every pending request fails with @err.  lock held. */
void lchan_link_msg_fail(struct lchan_link *link, int err)
{
	unsigned int i;

	for (i = 0; i < LCHAN_LINK_PENDING; i++) {
		struct lchan_link_pending *p = link->pending[i];

		if (p) {
			p->status = err;
			lchan_link_msg_unpend(link, p);
		}
	}
}

/* One more of @link's counter @counter (link->stats).  Any context. */
void lchan_link_msg_count(struct lchan_link *link, u64 *counter)
{
	spin_lock_bh(&link->lock);
	WRITE_ONCE(*counter, *counter + 1);
	spin_unlock_bh(&link->lock);
}

/* A message of the peer's is refused: dropped, and counted. */
static void lchan_link_msg_refuse(struct lchan_link *link, int why,
				  const char *what)
{
	lchan_link_msg_count(link, &link->stats.refused);
	lchan_dbg_link(link, "refused: %s (%d)\n", what, why);
}

/*
 * Send @msg: 0, -ENOTCONN unless the link is up, -ENOBUFS without a free
 * send buffer, -EINVAL for a message a peer would refuse.  A post that
 * fails ends the link.  Any context.
 */
int lchan_link_send(struct lchan_link *link, const struct lchan_link_msg *msg)
{
	struct ib_sge sge;
	struct ib_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct lchan_link_buf *buf;
	unsigned int slot;
	int len, ret;

	spin_lock_bh(&link->lock);
	if (link->state != LCHAN_LINK_UP) {
		ret = -ENOTCONN;
		goto out_unlock;
	}
	slot = find_first_zero_bit(link->tx_busy, LCHAN_LINK_SENDS);
	if (slot >= LCHAN_LINK_SENDS) {
		ret = -ENOBUFS;
		goto out_unlock;
	}
	buf = &link->ring->tx[slot];
	len = lchan_link_wire_encode(msg, link->version, buf->va,
				     LCHAN_LINK_BUF);
	if (len < 0) {
		ret = len;
		goto out_unlock;
	}
	ib_dma_sync_single_for_device(link->dev->ibdev, buf->dma, len,
				      DMA_TO_DEVICE);
	sge.addr = buf->dma;
	sge.length = len;
	sge.lkey = link->ring->lkey;
	wr.wr_cqe = &buf->cqe;
	__set_bit(slot, link->tx_busy);		/* its completion clears it */
	ret = ib_post_send(link->qp, &wr, NULL);
	if (ret)
		__clear_bit(slot, link->tx_busy);
out_unlock:
	spin_unlock_bh(&link->lock);
	if (ret && ret != -ENOTCONN && ret != -ENOBUFS && ret != -EINVAL)
		lchan_link_down(link, ret);
	return ret;
}

static void lchan_link_msg_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lchan_link *link = cq->cq_context;
	struct lchan_link_buf *buf = container_of(wc->wr_cqe,
						  struct lchan_link_buf, cqe);

	spin_lock_bh(&link->lock);
	__clear_bit(buf - link->ring->tx, link->tx_busy);
	spin_unlock_bh(&link->lock);
	/* A flush is the link going down for another reason. */
	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		lchan_link_down(link, -ECONNRESET);
}

static int lchan_link_msg_post_recv(struct lchan_link *link,
				    struct lchan_link_buf *buf)
{
	struct ib_sge sge = {
		.addr = buf->dma,
		.length = LCHAN_LINK_BUF,
		.lkey = link->ring->lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &buf->cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	ib_dma_sync_single_for_device(link->dev->ibdev, buf->dma,
				      LCHAN_LINK_BUF, DMA_FROM_DEVICE);
	return ib_post_recv(link->qp, &wr, NULL);
}

/*
 * A request of the peer's, request id @id: 0 if it may be served, else
 * -EALREADY (a replay: ids only grow) or -EBUSY (over the rate).  The
 * rate is a bucket of LCHAN_LINK_BURST tokens refilled at LCHAN_LINK_RATE
 * a second.  lock held.
 */
static int lchan_link_msg_take(struct lchan_link *link, u64 id)
{
	u64 now = ktime_get_ns();
	u64 elapsed = min_t(u64, now - link->refilled_ns, NSEC_PER_SEC);
	u64 add = div_u64(elapsed * LCHAN_LINK_RATE, NSEC_PER_SEC);

	if (id <= link->peer_id)
		return -EALREADY;
	if (link->tokens + add >= LCHAN_LINK_BURST) {
		link->tokens = LCHAN_LINK_BURST;
		link->refilled_ns = now;
	} else if (add) {
		link->tokens += add;
		link->refilled_ns += div_u64(add * NSEC_PER_SEC,
					     LCHAN_LINK_RATE);
	}
	if (!link->tokens)
		return -EBUSY;
	link->tokens--;
	link->peer_id = id;
	return 0;
}

static void lchan_link_msg_echo_req(struct lchan_link *link,
				    const struct lchan_link_msg *msg)
{
	struct lchan_link_msg rep = {
		.type = LCHAN_LINK_ECHO_REP,
		.req_id = msg->req_id,
	};
	int ret;

	spin_lock_bh(&link->lock);
	ret = lchan_link_msg_take(link, msg->req_id);
	spin_unlock_bh(&link->lock);
	if (!ret)
		ret = lchan_link_send(link, &rep);
	if (ret)
		lchan_link_msg_refuse(link, ret, "echo request");
}

/*
 * A peer's set-up request or cancel in process here: the listener's
 * side needs process context (lchan_listen.c), so the receive queues it
 * to the link's inreq work, at most LCHAN_LINK_INREQS at once.  One work
 * per link takes them in the order they came, so that a cancel finds
 * the channel its set-up made.
 */
struct lchan_link_inreq {
	struct list_head node;		/* link->inreq_list */
	struct lchan_link_msg msg;
};

void lchan_link_msg_inreq_work(struct work_struct *work)
{
	struct lchan_link *link = container_of(work, struct lchan_link,
					       inreq_work);
	struct lchan_link_inreq *in;

	for (;;) {
		spin_lock_bh(&link->lock);
		in = list_first_entry_or_null(&link->inreq_list,
					      struct lchan_link_inreq, node);
		if (in)
			list_del(&in->node);
		spin_unlock_bh(&link->lock);
		if (!in)
			break;
		if (in->msg.type == LCHAN_LINK_SETUP_REQ)
			lchan_listen_link_setup(link, &in->msg);
		else if (!lchan_listen_link_cancel(link, in->msg.req_id))
			lchan_link_msg_count(link, &link->stats.stale);
		spin_lock_bh(&link->lock);
		link->inreqs--;
		spin_unlock_bh(&link->lock);
		kfree(in);
	}
	lchan_link_put(link);		/* the queued work's */
}

/* Queue @msg for the inreq work: -EBUSY when the link has as many as it may. */
static int lchan_link_msg_inreq(struct lchan_link *link,
				const struct lchan_link_msg *msg)
{
	struct lchan_link_inreq *in;

	in = kmalloc(sizeof(*in), GFP_ATOMIC);
	if (!in)
		return -ENOMEM;
	in->msg = *msg;
	spin_lock_bh(&link->lock);
	if (link->inreqs >= LCHAN_LINK_INREQS) {
		spin_unlock_bh(&link->lock);
		kfree(in);
		return -EBUSY;
	}
	link->inreqs++;
	list_add_tail(&in->node, &link->inreq_list);
	spin_unlock_bh(&link->lock);
	kobject_get(&link->kobj);
	if (!queue_work(lchan_wq, &link->inreq_work))
		lchan_link_put(link);
	return 0;
}

/*
 * A peer's SETUP_REQ, on a passive link only, from the link's own path:
 * the GID and LID the peer sends as its own are the source of the path,
 * which the passive side's path record holds as its destination (on
 * RoCE the LID is 0).  The listener's side answers it, in its work.
 */
static void lchan_link_msg_setup_req(struct lchan_link *link,
				     const struct lchan_link_msg *msg)
{
	int ret;

	if (link->active) {
		lchan_link_msg_refuse(link, -EPERM, "set-up on an active link");
		return;
	}
	spin_lock_bh(&link->lock);
	ret = lchan_link_msg_take(link, msg->req_id);
	if (!ret && (memcmp(msg->setup.gid, link->peer_gid,
			    sizeof(link->peer_gid)) ||
		     msg->setup.lid != link->peer_lid))
		ret = -EXDEV;
	spin_unlock_bh(&link->lock);
	if (ret == -EXDEV) {
		/* The peer's path is written once, before the link is up. */
		lchan_link_msg_count(link, &link->stats.refused);
		lchan_dbg_link(link, "refused: set-up request from GID %pI6c LID %u, the link's peer is GID %pI6c LID %u\n",
			       msg->setup.gid, msg->setup.lid,
			       link->peer_gid, link->peer_lid);
		return;
	}
	if (!ret)
		ret = lchan_link_msg_inreq(link, msg);
	if (ret)
		lchan_link_msg_refuse(link, ret, "set-up request");
}

/*
 * A peer withdraws a set-up: the channel made for it goes, if it still
 * waits for accept; else the cancel came late, and counts as stale.
 */
static void lchan_link_msg_cancel(struct lchan_link *link,
				  const struct lchan_link_msg *msg)
{
	bool known;

	if (link->active) {
		lchan_link_msg_refuse(link, -EPERM, "cancel on an active link");
		return;
	}
	spin_lock_bh(&link->lock);
	known = msg->req_id <= link->peer_id;
	spin_unlock_bh(&link->lock);
	if (!known) {
		lchan_link_msg_refuse(link, -ENOENT, "cancel of no request");
		return;
	}
	if (lchan_link_msg_inreq(link, msg))
		lchan_link_msg_count(link, &link->stats.stale);
}

/*
 * A reply: to a request of ours still pending and of its type, else
 * stale (its request was sent, and has timed out) or refused.
 */
static void lchan_link_msg_reply(struct lchan_link *link,
				 const struct lchan_link_msg *msg)
{
	struct lchan_link_pending *p;
	u64 now = ktime_get_ns();
	bool matched = false, stale = false;

	spin_lock_bh(&link->lock);
	p = link->pending[lchan_link_msg_slot(msg->req_id)];
	if (p && p->id == msg->req_id)
		matched = lchan_link_wire_reply_to(p->type) == msg->type;
	else
		stale = msg->req_id < link->next_id;
	if (matched) {
		if (p == &link->echo)
			WRITE_ONCE(link->rtt_us, div_u64(now - p->sent_ns,
							 NSEC_PER_USEC));
		p->reply = *msg;
		p->status = 0;
		lchan_link_msg_unpend(link, p);
	} else if (stale) {
		WRITE_ONCE(link->stats.stale, link->stats.stale + 1);
	} else {
		WRITE_ONCE(link->stats.refused, link->stats.refused + 1);
	}
	spin_unlock_bh(&link->lock);
	if (matched)
		wake_up_all(&link->wq);
	else
		lchan_dbg_link(link, "reply %llu: %s\n", msg->req_id,
			       stale ? "stale" : "refused");
}

static void lchan_link_msg_dispatch(struct lchan_link *link,
				    const struct lchan_link_msg *msg)
{
	switch (msg->type) {
	case LCHAN_LINK_ECHO_REQ:
		lchan_link_msg_echo_req(link, msg);
		break;
	case LCHAN_LINK_SETUP_REQ:
		lchan_link_msg_setup_req(link, msg);
		break;
	case LCHAN_LINK_SETUP_CANCEL:
		lchan_link_msg_cancel(link, msg);
		break;
	case LCHAN_LINK_ECHO_REP:
	case LCHAN_LINK_SETUP_REP:
		lchan_link_msg_reply(link, msg);
		break;
	}
}

static void lchan_link_msg_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lchan_link *link = cq->cq_context;
	struct lchan_link_buf *buf = container_of(wc->wr_cqe,
						  struct lchan_link_buf, cqe);
	struct lchan_link_msg msg;
	int ret;

	if (wc->status != IB_WC_SUCCESS) {
		/* A message longer than a buffer ends here, and the link. */
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			lchan_link_down(link, -ECONNRESET);
		return;
	}
	/*
	 * A peer sends once it has our accept, which rdma_accept() sends
	 * with the QP ready: its first message may come before rdma_cm
	 * reports the connection, and shows it up as well.
	 */
	if (READ_ONCE(link->state) == LCHAN_LINK_ACCEPTING)
		lchan_link_established(link, link->cm_id, link->version);
	WRITE_ONCE(link->heard, jiffies);
	WRITE_ONCE(link->heard_once, true);
	ib_dma_sync_single_for_cpu(link->dev->ibdev, buf->dma, LCHAN_LINK_BUF,
				   DMA_FROM_DEVICE);
	if (wc->opcode != IB_WC_RECV) {
		lchan_link_msg_refuse(link, -EBADMSG, "not a SEND");
	} else {
		ret = lchan_link_wire_decode(buf->va,
					     min_t(u32, wc->byte_len,
						   LCHAN_LINK_BUF),
					     READ_ONCE(link->version), &msg);
		if (ret)
			lchan_link_msg_refuse(link, ret, "malformed");
		else
			lchan_link_msg_dispatch(link, &msg);
	}
	ret = lchan_link_msg_post_recv(link, buf);
	if (ret)
		lchan_link_down(link, ret);
}

/*
 * The keepalive's echo, unless one is out: 0 once sent or when every
 * pending slot is taken (requests are out, so replies will come),
 * -ENOBUFS without a send buffer.  Process context.
 */
int lchan_link_echo(struct lchan_link *link)
{
	struct lchan_link_msg msg = { .type = LCHAN_LINK_ECHO_REQ };
	int ret;

	spin_lock_bh(&link->lock);
	if (link->echo_out || link->state != LCHAN_LINK_UP) {
		spin_unlock_bh(&link->lock);
		return 0;
	}
	link->echo.type = LCHAN_LINK_ECHO_REQ;
	ret = lchan_link_msg_pend(link, &link->echo);
	if (!ret) {
		link->echo_out = true;
		link->echo.sent_ns = ktime_get_ns();
		msg.req_id = link->echo.id;
	}
	spin_unlock_bh(&link->lock);
	if (ret)
		return 0;
	ret = lchan_link_send(link, &msg);
	if (ret) {
		spin_lock_bh(&link->lock);
		lchan_link_msg_unpend(link, &link->echo);
		spin_unlock_bh(&link->lock);
	}
	return ret == -ENOBUFS ? ret : 0;
}

/* Until @p is answered or the link ends; 0, -ETIMEDOUT or -EINTR. */
static int lchan_link_msg_wait(struct lchan_link *link,
			       struct lchan_link_pending *p,
			       unsigned long deadline)
{
	long left = (long)(deadline - jiffies);

	if (left <= 0)
		return READ_ONCE(p->done) ? 0 : -ETIMEDOUT;
	left = wait_event_interruptible_timeout(link->wq, READ_ONCE(p->done),
						left);
	if (left > 0)
		return 0;
	return left ? -EINTR : -ETIMEDOUT;
}

/* Room in the table of pending requests.  lock held, dropped, held. */
static int lchan_link_msg_room(struct lchan_link *link,
			       struct lchan_link_pending *p,
			       unsigned long deadline)
	__must_hold(&link->lock)
{
	long left;
	int ret;

	for (;;) {
		if (link->state != LCHAN_LINK_UP)
			return link->error ?: -ENOTCONN;
		ret = lchan_link_msg_pend(link, p);
		if (ret != -EBUSY)
			return ret;
		spin_unlock_bh(&link->lock);
		left = (long)(deadline - jiffies);
		if (left > 0)
			left = wait_event_interruptible_timeout(link->wq,
				READ_ONCE(link->nr_pending) < LCHAN_LINK_PENDING ||
				READ_ONCE(link->state) != LCHAN_LINK_UP, left);
		spin_lock_bh(&link->lock);
		if (left < 0)
			return -EINTR;
		if (!left)
			return -ETIMEDOUT;
	}
}

/*
 * Send request @msg (its id is set here) and wait for its reply, into
 * @reply, until @deadline: 0, or -ETIMEDOUT, -EINTR, or why the link
 * ended.  The link counts as used meanwhile; a SETUP_REQ counts as done
 * or failed.  Process context.
 */
int lchan_link_call(struct lchan_link *link, struct lchan_link_msg *msg,
		    struct lchan_link_msg *reply, unsigned long deadline)
{
	struct lchan_link_pending p = { .type = msg->type };
	int ret, wret = 0;

	if (!lchan_link_wire_is_request(msg->type))
		return -EINVAL;
	spin_lock_bh(&link->lock);
	ret = lchan_link_msg_room(link, &p, deadline);
	if (ret) {
		spin_unlock_bh(&link->lock);
		return ret;
	}
	link->users++;
	p.sent_ns = ktime_get_ns();
	spin_unlock_bh(&link->lock);
	WRITE_ONCE(link->used, jiffies);

	msg->req_id = p.id;
	ret = lchan_link_send(link, msg);
	if (!ret)
		wret = lchan_link_msg_wait(link, &p, deadline);

	spin_lock_bh(&link->lock);
	if (p.done) {
		ret = p.status;
	} else {
		lchan_link_msg_unpend(link, &p);
		ret = ret ?: wret ?: -ETIMEDOUT;
	}
	if (!ret && p.reply.type == LCHAN_LINK_SETUP_REP)
		ret = lchan_link_wire_errno(p.reply.reply.status);
	if (msg->type == LCHAN_LINK_SETUP_REQ) {
		u64 *counter = ret ? &link->stats.setups_failed :
				     &link->stats.setups_done;

		WRITE_ONCE(*counter, *counter + 1);
	}
	link->users--;
	spin_unlock_bh(&link->lock);
	WRITE_ONCE(link->used, jiffies);
	wake_up_all(&link->wq);		/* room in the table */
	if (!ret)
		*reply = p.reply;
	return ret;
}

/*
 * IB/RoCE: data arriving before the RTU shows the passive side that the
 * link is up (rdma_cm learns it only when told).  A fatal QP event ends
 * the link.  Any context.
 */
static void lchan_link_msg_qp_event(struct ib_event *event, void *context)
{
	struct lchan_link *link = context;

	switch (event->event) {
	case IB_EVENT_COMM_EST:
		rdma_notify(link->cm_id, event->event);
		break;
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
		lchan_dbg_link(link, "QP event %s\n",
			       ib_event_msg(event->event));
		lchan_link_down(link, -EIO);
		break;
	default:
		break;
	}
}

/* The link's buffers, each a slice of one mapping per direction. */
static int lchan_link_msg_ring(struct lchan_link *link)
{
	struct ib_device *ibdev = link->dev->ibdev;
	struct lchan_link_ring *ring;
	unsigned int i;

	ring = kzalloc(sizeof(*ring), GFP_KERNEL);
	if (!ring)
		return -ENOMEM;
	link->ring = ring;
	ring->lkey = link->pd->local_dma_lkey;
	ring->rx_mem = kcalloc(LCHAN_LINK_RECVS, LCHAN_LINK_BUF, GFP_KERNEL);
	ring->tx_mem = kcalloc(LCHAN_LINK_SENDS, LCHAN_LINK_BUF, GFP_KERNEL);
	if (!ring->rx_mem || !ring->tx_mem)
		return -ENOMEM;
	ring->rx_dma = ib_dma_map_single(ibdev, ring->rx_mem,
					 LCHAN_LINK_RECVS * LCHAN_LINK_BUF,
					 DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(ibdev, ring->rx_dma))
		return -ENOMEM;
	ring->rx_mapped = true;
	ring->tx_dma = ib_dma_map_single(ibdev, ring->tx_mem,
					 LCHAN_LINK_SENDS * LCHAN_LINK_BUF,
					 DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ibdev, ring->tx_dma))
		return -ENOMEM;
	ring->tx_mapped = true;
	for (i = 0; i < LCHAN_LINK_RECVS; i++) {
		ring->rx[i].va = ring->rx_mem + i * LCHAN_LINK_BUF;
		ring->rx[i].dma = ring->rx_dma + i * LCHAN_LINK_BUF;
		ring->rx[i].cqe.done = lchan_link_msg_recv_done;
	}
	for (i = 0; i < LCHAN_LINK_SENDS; i++) {
		ring->tx[i].va = ring->tx_mem + i * LCHAN_LINK_BUF;
		ring->tx[i].dma = ring->tx_dma + i * LCHAN_LINK_BUF;
		ring->tx[i].cqe.done = lchan_link_msg_send_done;
	}
	return 0;
}

static void lchan_link_msg_ring_free(struct lchan_link *link)
{
	struct lchan_link_ring *ring = link->ring;
	struct ib_device *ibdev = link->dev->ibdev;

	if (!ring)
		return;
	if (ring->rx_mapped)
		ib_dma_unmap_single(ibdev, ring->rx_dma,
				    LCHAN_LINK_RECVS * LCHAN_LINK_BUF,
				    DMA_FROM_DEVICE);
	if (ring->tx_mapped)
		ib_dma_unmap_single(ibdev, ring->tx_dma,
				    LCHAN_LINK_SENDS * LCHAN_LINK_BUF,
				    DMA_TO_DEVICE);
	kfree(ring->rx_mem);
	kfree(ring->tx_mem);
	kfree(ring);
	link->ring = NULL;
}

/*
 * PD, buffers, CQ and QP of a link whose id has a device it is bound to,
 * with every receive posted.  On failure what was made stays for
 * lchan_link_msg_destroy(), which the link's end calls.  mutex held.
 */
int lchan_link_msg_create(struct lchan_link *link)
{
	struct ib_device *ibdev = link->dev->ibdev;
	struct ib_qp_init_attr attr = {};
	unsigned int i;
	int ret;

	link->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(link->pd)) {
		ret = PTR_ERR(link->pd);
		link->pd = NULL;
		return ret;
	}
	ret = lchan_link_msg_ring(link);
	if (ret)
		return ret;
	/* One more each way: the drain's markers. */
	link->cq = ib_alloc_cq(ibdev, link,
			       LCHAN_LINK_SENDS + LCHAN_LINK_RECVS + 2, 0,
			       link->dev->quirk->cq_poll);
	if (IS_ERR(link->cq)) {
		ret = PTR_ERR(link->cq);
		link->cq = NULL;
		return ret;
	}
	attr.qp_context = link;
	attr.event_handler = lchan_link_msg_qp_event;
	attr.send_cq = link->cq;
	attr.recv_cq = link->cq;
	attr.cap.max_send_wr = LCHAN_LINK_SENDS + 1;
	attr.cap.max_recv_wr = LCHAN_LINK_RECVS + 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	ret = rdma_create_qp(link->cm_id, link->pd, &attr);
	if (ret)
		return ret;
	link->qp = link->cm_id->qp;
	for (i = 0; i < LCHAN_LINK_RECVS; i++) {
		ret = lchan_link_msg_post_recv(link, &link->ring->rx[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Flush and free what lchan_link_msg_create() made, the QP first, its
 * buffers once no completion can come.  Idempotent; mutex held.
 */
void lchan_link_msg_destroy(struct lchan_link *link)
{
	if (link->qp) {
		ib_drain_qp(link->qp);
		rdma_destroy_qp(link->cm_id);
		link->qp = NULL;
	}
	if (link->cq) {
		lchan_cq_free(link->cq);
		link->cq = NULL;
	}
	lchan_link_msg_ring_free(link);
	if (link->pd) {
		ib_dealloc_pd(link->pd);
		link->pd = NULL;
	}
}
