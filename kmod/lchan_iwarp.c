// SPDX-License-Identifier: GPL-2.0
/*
 * The iWARP transport (lchan_iwarp_transport, chosen when a channel binds
 * to an iWARP device): what an iWARP channel needs beyond the generic
 * path.  Here the opening exchange between two lchan kernels, agreed on in
 * the MPA private data, and the accepting side's look at its socket; the
 * local TCP port in lchan_iwarp_port.c, the socket read in
 * lchan_iwarp_sock.c.
 *
 * MPA (RFC 5044) lets the accepting side send only after the connecting
 * side's first FPDU has arrived: siw's initiator fails the connection
 * (CONNECT_ERROR, -EINVAL to rdma_cm; a reset for the peer) when an FPDU
 * arrives right behind the MPA reply, before it has read it.  RFC 6581's
 * ready-to-receive message lifts that rule where the driver offers it;
 * siw answers such a request but never makes one.  So an application
 * protocol in which the server speaks first needs the kernels' help:
 *
 *   connecting side                      accepting side
 *   hello in the MPA request  ------->   hello in the MPA reply
 *   first SEND (zero length)  ------->   lands in a receive posted at QP
 *                                        creation
 *                             <-------   acknowledgement, then its SQ opens
 *   second SEND, then its SQ opens ->    lands in a second such receive
 *
 * The exchange puts SENDs on the wire that only lchan expects, so it runs
 * only when both ends asked for it: the connecting application with
 * LCHAN_OPEN_EXCHANGE, the accepting kernel by finding the hello
 * (lchan_hello.c) in the request.  A plain rdma_cm peer sees nothing of
 * it: lchan's connect sends no private data without that flag (or a
 * stream's), and an accepting lchan kernel answers a request without the
 * hello as any rdma_cm program would.  The
 * acknowledgement is sent only after the first SEND has arrived, which
 * proves the reply was read, however late the reply came (TCP resends a
 * lost one).  The second SEND keeps the two sides' requests in step.
 * Each side's own SEND goes before any of the application's, under
 * chan->lock, so the receives posted at creation are consumed in stream
 * order.
 *
 * siw's accepting side hands the socket to the QP only after it has sent
 * the MPA reply, and what arrives in between waits in the socket until
 * more data comes.  So every accepted iWARP channel, with the exchange or
 * without, has its QP read the socket once connected (lchan_iwarp_sock.c):
 * with the exchange until the first SEND is in, without it until a look
 * finds the socket empty, every LCHAN_PEER_FIRST_LOOK_MS.
 */
#include "lchan.h"

/* A connection request on a listener: does it ask for the exchange? */
static bool lchan_iwarp_request_wants(const struct rdma_conn_param *conn)
{
	return lchan_hello_read(conn) >= 0;
}

/*
 * Before the QP exists: whether the channel runs the exchange.  A
 * connecting one's application asked with @flags; an accepting one's
 * @flags carry the request's answer (lchan_listen.c).  lock held.
 */
static void lchan_iwarp_choose(struct lchan_channel *chan, u32 flags)
{
	chan->iw.exchange = flags & LCHAN_OPEN_EXCHANGE;
}

/* The connection parameters carry the hello when the exchange runs. */
static void lchan_iwarp_conn_param(struct lchan_channel *chan,
				   struct rdma_conn_param *param)
{
	if (chan->iw.exchange)
		lchan_hello_param(param, 0);
}

/*
 * The connecting side is connected: a reply without the hello comes from
 * a peer that will not run the exchange, and a SEND of ours would land in
 * a receive of its application.  0 or -EPROTONOSUPPORT.  Handler.
 */
static int lchan_iwarp_check_reply(struct lchan_channel *chan,
				   const struct rdma_conn_param *conn)
{
	if (chan->conn.passive || !chan->iw.exchange ||
	    lchan_hello_read(conn) >= 0)
		return 0;
	lchan_dbg_chan(chan, "the peer did not answer the hello\n");
	return -EPROTONOSUPPORT;
}

static void lchan_iwarp_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lchan_channel *chan = container_of(wc->wr_cqe,
						  struct lchan_channel, iw.cqe);

	lchan_quirk_recheck_soon(chan);
	/*
	 * Our own SENDs end here.  A failed request of the exchange put the
	 * QP in error, as one of the application's would (a flush is one
	 * that already was).
	 */
	if (wc->status && wc->status != IB_WC_WR_FLUSH_ERR) {
		lchan_dbg_chan(chan, "exchange %s: status %d\n",
			       wc->opcode & IB_WC_RECV ? "receive" : "SEND",
			       wc->status);
		lchan_chan_set_state(chan, LCHAN_STATE_ERROR);
		lchan_ring_wake(chan);
	}
	if (wc->status || !(wc->opcode & IB_WC_RECV))
		return;
	smp_store_release(&chan->iw.heard, true);	/* step acquire */
	lchan_post_kick(chan);
}

/* The accepting side is connected: look at the socket.  Handler. */
static void lchan_iwarp_connected(struct lchan_channel *chan)
{
	if (chan->conn.passive)
		lchan_chan_queue_delayed(chan, &chan->iw.look_work, 0);
}

/* Whether the accepting side should look at its socket again. */
static bool lchan_iwarp_look_again(struct lchan_channel *chan, int found)
{
	if (READ_ONCE(chan->state) != LCHAN_STATE_CONNECTED)
		return false;
	if (chan->iw.exchange)
		return READ_ONCE(chan->iw.sq_held) &&
		       !smp_load_acquire(&chan->iw.heard); /* done release */
	/* Found data: the QP may not have taken it (a busy QP leaves it). */
	return found > 0 || found == -EBUSY;
}

/* Have the QP read what waits in its socket.  Work. */
static void lchan_iwarp_look(struct work_struct *work)
{
	struct lchan_channel *chan = container_of(to_delayed_work(work),
					       struct lchan_channel,
					       iw.look_work);
	int found;

	mutex_lock(&chan->lock);
	if (READ_ONCE(chan->state) == LCHAN_STATE_CONNECTED) {
		found = lchan_iwarp_sock_read(chan);
		if (found > 0)
			WRITE_ONCE(chan->iw.reads, chan->iw.reads + 1);
		if (lchan_iwarp_look_again(chan, found))
			lchan_chan_queue_delayed(chan, &chan->iw.look_work,
						 LCHAN_PEER_FIRST_LOOK_MS);
	}
	mutex_unlock(&chan->lock);
	lchan_chan_put(chan);
}

void lchan_iwarp_init(struct lchan_channel *chan)
{
	INIT_DELAYED_WORK(&chan->iw.look_work, lchan_iwarp_look);
}

/* No look after this; the channel's QP is gone already. */
void lchan_iwarp_stop(struct lchan_channel *chan)
{
	if (cancel_delayed_work_sync(&chan->iw.look_work))
		lchan_chan_put(chan);
}

/*
 * At QP creation, before anything else is posted: the receives for the
 * peer's SENDs of the exchange, ahead of the application's.  lock held.
 */
static int lchan_iwarp_prepare(struct lchan_channel *chan)
{
	struct ib_recv_wr wr = { .wr_cqe = &chan->iw.cqe };
	int ret;

	if (!chan->iw.exchange)
		return 0;
	chan->iw.cqe.done = lchan_iwarp_done;
	WRITE_ONCE(chan->iw.sq_held, true);
	WRITE_ONCE(chan->iw.to_send, !chan->conn.passive);
	ret = ib_post_recv(chan->qp, &wr, NULL);
	if (ret || !chan->conn.passive)
		return ret;
	return ib_post_recv(chan->qp, &wr, NULL);
}

/*
 * One zero-length SEND of the exchange.  One that was not posted breaks
 * the channel: opening the SQ without it would put the application's
 * first SEND into the receive the peer posted for it.  lock held.
 */
static int lchan_iwarp_send(struct lchan_channel *chan, const char *which)
{
	struct ib_send_wr wr = {
		.wr_cqe = &chan->iw.cqe,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	int ret;

	ret = lchan_post_own_send(chan, &wr);
	if (ret) {
		lchan_dbg_chan(chan, "%s SEND of the exchange: %d\n", which,
			       ret);
		lchan_post_break(chan);
		lchan_ring_wake(chan);
	}
	return ret;
}

/* Move the exchange on, on a connected channel.  lock held. */
static void lchan_iwarp_step(struct lchan_channel *chan)
{
	if (!chan->iw.exchange)
		return;
	if (READ_ONCE(chan->iw.to_send)) {
		WRITE_ONCE(chan->iw.to_send, false);
		if (lchan_iwarp_send(chan, "first"))
			return;
	}
	if (!READ_ONCE(chan->iw.sq_held) ||
	    !smp_load_acquire(&chan->iw.heard))	/* done release */
		return;
	if (lchan_iwarp_send(chan, chan->conn.passive ? "acknowledging" :
			     "second"))
		return;
	WRITE_ONCE(chan->iw.sq_held, false);
	/* Connect waits for it (lchan_iwarp_wait_open), poll too. */
	lchan_ring_wake(chan);
}

/* Whether the exchange holds the SQ; it changes under chan->lock. */
static bool lchan_iwarp_sq_held(const struct lchan_channel *chan)
{
	return READ_ONCE(chan->iw.sq_held);
}

/* A connecting side whose SQ the exchange still holds. */
static bool lchan_iwarp_pending(const struct lchan_channel *chan)
{
	return !chan->conn.passive && lchan_iwarp_sq_held(chan);
}

/*
 * Connect and establish return once the connecting side's SQ is open, so
 * that an application never finds its first SQEs held.  0, -EINTR (still
 * in progress), -ETIMEDOUT at @deadline, or -ECONNRESET.
 */
static int lchan_iwarp_wait_open(struct lchan_channel *chan,
				 unsigned long deadline)
{
	long left = max_t(long, (long)(deadline - jiffies), 1);
	long ret;

	ret = wait_event_interruptible_timeout(chan->wq,
			!lchan_iwarp_pending(chan) ||
			READ_ONCE(chan->state) != LCHAN_STATE_CONNECTED, left);
	if (ret < 0)
		return -EINTR;
	if (!lchan_iwarp_pending(chan))
		return 0;
	if (!ret)
		lchan_dbg_chan(chan, "no acknowledgement of the first SEND\n");
	return ret ? -ECONNRESET : -ETIMEDOUT;
}

const struct lchan_transport_ops lchan_iwarp_transport = {
	/*
	 * iWARP carries no immediate data, and its read fence belongs to the
	 * request after a READ, never to a READ (siw refuses one).  Its
	 * opening exchange moves on by completion events: no direct polling.
	 */
	.features_off = LCHAN_FEATURE_SEND_IMM | LCHAN_FEATURE_WRITE_IMM |
			LCHAN_FEATURE_READ_FENCE | LCHAN_FEATURE_DIRECT,
	/* No ACK timeout, no retry count: TCP retransmits. */
	.rc_timing = false,
	/*
	 * A WRITE completes once TCP has taken it; a READ completes on the
	 * peer's response (lchan_keepalive.c).
	 */
	.probe_by_read = true,
	/* iw_cm lets the id go only once the MPA exchange has ended. */
	.request_held = true,
	/* Its TCP socket is made in the caller's context. */
	.connect_charges = true,
	.request_wants = lchan_iwarp_request_wants,
	.choose = lchan_iwarp_choose,
	.prepare_qp = lchan_iwarp_prepare,
	.conn_param = lchan_iwarp_conn_param,
	.check_reply = lchan_iwarp_check_reply,
	.connected = lchan_iwarp_connected,
	.submit = lchan_iwarp_step,
	.sq_held = lchan_iwarp_sq_held,
	.wait_open = lchan_iwarp_wait_open,
	.hold_port = lchan_iwarp_port_hold,
};
