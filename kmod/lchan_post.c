// SPDX-License-Identifier: GPL-2.0
/*
 * Posting what the application published (one chain per queue per call)
 * and turning completions into CQEs.  Whether an entry may be taken (a CQ
 * slot and a WR slot for it) is lchan_flow.c's question.
 */
#include "lchan.h"

/*
 * Where the device's post path runs its request depends on the device and
 * the kernel (lchan_compat.h): with BHs disabled, or as it is.
 */
static void lchan_post_bh_off(const struct lchan_channel *chan)
{
	if (chan->dev->post_bh_off)
		local_bh_disable();
}

static void lchan_post_bh_on(const struct lchan_channel *chan)
{
	if (chan->dev->post_bh_off)
		local_bh_enable();
}

/* Submit what waits in the ring from process context, soon. */
void lchan_post_kick(struct lchan_channel *chan)
{
	kobject_get(&chan->kobj);
	if (!queue_work(lchan_wq, &chan->repost_work))
		lchan_chan_put(chan);
}

static void lchan_post_repost_work(struct work_struct *work)
{
	struct lchan_channel *chan = container_of(work, struct lchan_channel,
					       repost_work);
	u32 sq_done, rq_done;

	mutex_lock(&chan->lock);
	lchan_post_submit(chan, &sq_done, &rq_done);
	mutex_unlock(&chan->lock);
	lchan_chan_put(chan);
}

void lchan_post_init(struct lchan_channel *chan)
{
	INIT_WORK(&chan->repost_work, lchan_post_repost_work);
}

/* No completion can queue a repost any more; a queued one held a ref. */
void lchan_post_stop(struct lchan_channel *chan)
{
	if (cancel_work_sync(&chan->repost_work))
		lchan_chan_put(chan);
}

static u8 lchan_post_recv_op(const struct ib_wc *wc)
{
	return wc->opcode == IB_WC_RECV_RDMA_WITH_IMM ?
		LCHAN_CQE_RECV_WRITE_IMM : LCHAN_CQE_RECV;
}

static void lchan_post_wr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lchan_wr *wr = container_of(wc->wr_cqe, struct lchan_wr, cqe);
	struct lchan_channel *chan = cq->cq_context;	/* ib_alloc_cq()'s */
	bool is_recv = wr->opcode == LCHAN_CQE_RECV;
	/* A hidden send that succeeded: the application asked for no CQE. */
	bool quiet = !is_recv && wr->hidden && !wc->status;
	bool kick;
	struct lchan_cqe cqe = {
		.user_data = wr->user_data,
		.opcode = wr->opcode,
		.status = wc->status,
		.vendor_err = wc->vendor_err,
		.byte_len = wr->length,
	};

	/* The keepalive's stamp: one store, whatever the channel's setting. */
	lchan_keepalive_heard(chan);
	if (is_recv && !wc->status) {
		cqe.opcode = lchan_post_recv_op(wc);
		cqe.byte_len = wc->byte_len;
		lchan_cm_data_arrived(chan);
	}
	if (is_recv && (wc->wc_flags & IB_WC_WITH_IMM)) {
		cqe.flags |= LCHAN_CQE_F_IMM;
		cqe.imm_data = be32_to_cpu(wc->ex.imm_data);
	}

	/*
	 * _bh in the CQ handler too: it runs in softirq on one device and in
	 * a workqueue on another (rxe since 6.4, lchan_compat.h), and every
	 * channel's cq_lock is of one lock class.
	 */
	spin_lock_bh(&chan->cq_lock);
	if (!is_recv && !lchan_flow_send_owned(chan, wr)) {
		spin_unlock_bh(&chan->cq_lock);
		lchan_dbg_chan(chan, "second completion of send 0x%llx dropped\n",
			       cqe.user_data);
		return;
	}
	if (is_recv) {
		if (!wc->status) {
			chan->stats.recv_ops++;
			chan->stats.recv_bytes += wc->byte_len;
		}
		lchan_ring_put_cqe(chan, &cqe);
		kick = lchan_flow_recv_done(chan, wr);
	} else {
		if (!wc->status) {
			chan->stats.send_ops++;
			chan->stats.send_bytes += wr->length;
		}
		if (!quiet)
			lchan_ring_put_cqe(chan, &cqe);
		kick = lchan_flow_send_done(chan, wr, quiet);
	}
	/* The device owes this queue nothing more: flush what waits. */
	if (!kick)
		kick = lchan_flow_flush_due(chan, is_recv ? &chan->ring.rq :
							    &chan->ring.sq);
	/* Slots came free on a starved queue: submit from process context. */
	if (kick)
		lchan_post_kick(chan);
	spin_unlock_bh(&chan->cq_lock);
	/*
	 * A request of an RC QP that fails puts the QP in error (a flush is
	 * one that already was): the channel goes with it, before its
	 * waiters look.  A peer that stopped answering (lchan_rc_params)
	 * is one such failure.
	 */
	if (wc->status && wc->status != IB_WC_WR_FLUSH_ERR)
		lchan_chan_set_state(chan, LCHAN_STATE_ERROR);
	lchan_ring_wake(chan);
	lchan_quirk_recheck_soon(chan);
}

/* The request after @wr in the chain being posted, or NULL. */
static struct lchan_wr *lchan_post_next(struct lchan_wr *wr, bool is_recv)
{
	if (is_recv)
		return wr->recv.next ? container_of(wr->recv.next,
						    struct lchan_wr, recv) : NULL;
	return wr->rdma.wr.next ? container_of(wr->rdma.wr.next,
					       struct lchan_wr, rdma.wr) : NULL;
}

/*
 * After a failed post: the unposted rest of the chain, from @wr, are the
 * newest requests, so their slots are returned by moving the post index
 * back; the older ones in flight keep theirs.  Their flushes may not come
 * before completions the device still owes the queue: then the entries
 * go back into the ring, to be flushed after those (lchan_post_take()),
 * and a channel still up is broken, so that they are not posted again and
 * the device flushes what it holds.  Returns the number given back.
 */
static u32 lchan_post_fail_chain(struct lchan_channel *chan,
				 struct lchan_queue *q, struct lchan_wr *wr)
{
	bool is_recv = q == &chan->ring.rq;
	struct lchan_wr *bad = wr;
	u32 back = 0;

	for (; wr; wr = lchan_post_next(wr, is_recv)) {
		lchan_wr_put_mrs(wr);
		WRITE_ONCE(q->wr_post, q->wr_post - 1);
		back++;
	}
	/* Not over an entry this take answered already. */
	if ((s32)(bad->ring_idx - q->answered) >= 0 &&
	    lchan_flow_defer(chan, q)) {
		q->head_k = bad->ring_idx;
		if (!lchan_chan_done(chan))
			lchan_post_break(chan);
		return back;
	}
	for (wr = bad; wr; wr = lchan_post_next(wr, is_recv))
		lchan_ring_reject(chan, wr->opcode, wr->user_data,
				  LCHAN_CQE_WR_FLUSH_ERR);
	return 0;
}

/*
 * The QP can no longer be trusted with the channel's requests: error
 * state, and every request the device holds comes back flushed through
 * the normal completion path.
 */
void lchan_post_break(struct lchan_channel *chan)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	lchan_chan_set_state(chan, LCHAN_STATE_ERROR);
	ib_modify_qp(chan->qp, &attr, IB_QP_STATE);
}

/*
 * The device refused part of a chain.  @bad should name the first request
 * it did not take; a provider that fails after queueing everything (siw
 * when it cannot start the head of its queue) leaves @bad unset or
 * pointing elsewhere.  Then every request is the device's, the queue may
 * never move again, and only the error state gets them back: as flush
 * completions, through the normal completion path.
 */
static u32 lchan_post_failed(struct lchan_channel *chan, struct lchan_queue *q,
			     struct lchan_wr *first, struct lchan_wr *bad,
			     int err)
{
	bool is_recv = q == &chan->ring.rq;
	struct lchan_wr *wr;

	for (wr = first; wr; wr = lchan_post_next(wr, is_recv)) {
		if (wr == bad) {
			lchan_dbg_chan(chan, "%s post refused (%d)\n",
				       is_recv ? "receive" : "send", err);
			return lchan_post_fail_chain(chan, q, bad);
		}
	}
	lchan_dbg_chan(chan, "post failed (%d) without a bad request\n", err);
	lchan_post_break(chan);
	return 0;
}

/* Link a checked request, in the next slot of @q, into the chain. */
static void lchan_post_link(struct lchan_channel *chan, struct lchan_queue *q,
			    struct lchan_wr *wr, struct lchan_wr *last)
{
	u32 half = max(q->entries / 2, 1U);
	bool is_recv = q == &chan->ring.rq;

	wr->cqe.done = lchan_post_wr_done;
	if (is_recv) {
		wr->recv.wr_cqe = &wr->cqe;
		wr->recv.sg_list = wr->sge;
		wr->recv.next = NULL;
		if (last)
			last->recv.next = &wr->recv;
		return;
	}
	/*
	 * READs and atomics may complete after later requests: they always
	 * signal.  And one in every half ring, so unsignaled slots come back.
	 */
	if (!wr->signaled &&
	    (wr->opcode == LCHAN_CQE_READ || wr->opcode == LCHAN_CQE_CMP_SWAP ||
	     wr->opcode == LCHAN_CQE_FETCH_ADD ||
	     q->wr_post % half == half - 1)) {
		wr->signaled = true;
		wr->hidden = true;
	}
	if (wr->signaled)
		wr->rdma.wr.send_flags |= IB_SEND_SIGNALED;
	wr->rdma.wr.wr_cqe = &wr->cqe;
	wr->rdma.wr.sg_list = wr->sge;
	wr->rdma.wr.next = NULL;
	if (last)
		last->rdma.wr.next = &wr->rdma.wr;
}

/* The receives up to the head can match a SEND now. */
static void lchan_post_mark_posted(struct lchan_queue *q)
{
	if (!q->posted)
		return;
	/* After the post: pairs with the app's acquire in lchan_submit(). */
	smp_store_release(q->posted, q->head_k);
}

/*
 * Post the chain from @first; what the device refused is answered, or
 * given back to the ring (*@back entries, lchan_post_fail_chain()).  The
 * device has copied the chain's SGE lists when this returns: post_sge is
 * free again.  Returns the post's error.
 */
static int lchan_post_chain(struct lchan_channel *chan, struct lchan_queue *q,
			    struct lchan_wr *first, u32 *back)
{
	const struct ib_send_wr *bad_send = NULL;
	const struct ib_recv_wr *bad_recv = NULL;
	struct lchan_wr *bad;
	int ret;

	lchan_post_bh_off(chan);
	if (q == &chan->ring.rq) {
		ret = ib_post_recv(chan->qp, &first->recv, &bad_recv);
		bad = bad_recv ? container_of(bad_recv, struct lchan_wr, recv) :
				 NULL;
	} else {
		ret = ib_post_send(chan->qp, &first->rdma.wr, &bad_send);
		bad = bad_send ? container_of(bad_send, struct lchan_wr,
					      rdma.wr) : NULL;
	}
	lchan_post_bh_on(chan);
	*back = ret ? lchan_post_failed(chan, q, first, bad, ret) : 0;
	return ret;
}

/*
 * Take published entries of queue @q, post the good ones as one chain (or
 * more, when their SGE lists outgrow post_sge).  @post false: answer every
 * entry with a flush error instead (the channel is not connected), once
 * the device owes the queue no completion (lchan_flow.c).  Each
 * entry is read into a local first: a bad one is answered at once even
 * when the queue is full, a good one waits in the ring until a WR slot
 * frees.  CQ slots are claimed for the whole batch first and the spares
 * given back after (lchan_flow.c).  Returns the number of entries taken,
 * or -EINVAL for a tail that is not within one ring of the head.
 */
static int lchan_post_take(struct lchan_channel *chan, struct lchan_queue *q,
			   bool post, u32 tail)
{
	bool is_recv = q == &chan->ring.rq;
	struct lchan_wr *first = NULL, *last = NULL;
	struct lchan_wr local;
	u32 taken = 0, claimed, pending, sges = 0, back;
	s64 published;

	published = lchan_ring_pending(tail, q->head_k, q->entries);
	if (published < 0)
		return -EINVAL;
	/*
	 * A queue's completions stay in order: on a channel that is down the
	 * entries wait while the device still owes this queue completions,
	 * and the last of those kicks the repost work to flush them.
	 */
	if (!post && published && lchan_flow_defer(chan, q))
		return 0;
	pending = published;
	/* An entry takes one slot or more: @pending claims are enough. */
	claimed = lchan_flow_claim_cq(chan, pending);
	q->answered = q->head_k;

	while (pending && taken < claimed) {
		struct lchan_wr *wr = NULL;
		u32 status, slots;

		/* Room for the longest SGE list, or post what is linked. */
		if (sges > LCHAN_POST_SGES - LCHAN_MAX_SGE) {
			int ret = lchan_post_chain(chan, q, first, &back);

			taken -= back;
			first = NULL;
			last = NULL;
			sges = 0;
			if (ret)
				break;
		}
		local.sge = chan->ring.post_sge + sges;
		status = is_recv ?
			lchan_wr_read_rqe(chan, q->head_k, pending, &local,
					  &slots) :
			lchan_wr_read_sqe(chan, q->head_k, pending, &local,
					  &slots);
		/* Nothing runs on a channel that is down: all are flushed. */
		if (!post && slots)
			status = LCHAN_CQE_WR_FLUSH_ERR;
		if (!status && slots)
			wr = lchan_flow_get_wr(chan, q);
		if (!slots || (!status && !wr)) {
			/* Incomplete or queue full: wait in the ring. */
			lchan_wr_put_mrs(&local);
			break;
		}
		local.ring_idx = q->head_k;
		q->head_k += slots;
		pending -= slots;
		taken++;
		if (status) {
			lchan_wr_put_mrs(&local);
			lchan_ring_reject(chan, local.opcode, local.user_data,
					  status);
			q->answered = q->head_k;
			continue;
		}

		*wr = local;
		sges += wr->num_sge;
		lchan_post_link(chan, q, wr, last);
		if (!first)
			first = wr;
		last = wr;
		/* The slot is filled before it counts: handler acquire. */
		smp_store_release(&q->wr_post, q->wr_post + 1);
	}
	/* Before the head moves: a refused request may go back. */
	if (first) {
		lchan_post_chain(chan, q, first, &back);
		taken -= back;
	}
	lchan_flow_unclaim_cq(chan, claimed - taken);

	/* The slots are read: give them back.  Pairs with app acquire. */
	smp_store_release(q->head, q->head_k);
	lchan_post_mark_posted(q);
	/* What waited is flushed: a waiter may be settled now. */
	if (!post && READ_ONCE(q->deferred)) {
		WRITE_ONCE(q->deferred, false);
		lchan_ring_wake(chan);
	}
	return taken;
}

/* Post a request of the kernel's own on the SQ.  lock held. */
int lchan_post_own_send(struct lchan_channel *chan,
			const struct ib_send_wr *wr)
{
	int ret;

	lchan_post_bh_off(chan);
	ret = ib_post_send(chan->qp, wr, NULL);
	lchan_post_bh_on(chan);
	return ret;
}

/* A channel that is down answers entries with flush errors instead. */
static bool lchan_post_usable(struct lchan_channel *chan, int state)
{
	return chan->qp && state != LCHAN_STATE_DISCONNECTED &&
	       state != LCHAN_STATE_ERROR;
}

/*
 * SQEs wait in the ring while a deferred establish is pending, and while
 * the transport holds the SQ (iWARP's opening exchange); whoever ends the
 * wait submits them (ENTER, or the repost work).  The hold changes only
 * under chan->lock, so once read it holds for the whole call.  A channel
 * that is down is never gated: its entries are flushed.  lock held.
 */
static bool lchan_post_sq_gated(struct lchan_channel *chan, int state)
{
	if (!lchan_post_usable(chan, state))
		return false;
	return state != LCHAN_STATE_CONNECTED || lchan_transport_sq_held(chan);
}

/*
 * Post what the app published.  Called with chan->lock held.  Receives go
 * first so that a request/response exchange finds its buffer posted.
 */
int lchan_post_submit(struct lchan_channel *chan, u32 *sq_done, u32 *rq_done)
{
	int state = READ_ONCE(chan->state);
	bool usable = lchan_post_usable(chan, state);
	u32 sq_tail, rq_tail;
	int ret;

	*sq_done = 0;
	*rq_done = 0;
	if (!chan->ring.mem)
		return 0;
	/*
	 * The SQ tail first, then the RQ tail, each an acquire pairing with
	 * the application's release (liblchan publishes the RQ tail first).
	 * So the receives published before an SQE are posted before it: an
	 * SQE may grant the peer credit for them, and on iWARP a SEND that
	 * finds no receive ends the connection.  The poller reads the tails
	 * while the application writes them; ENTER comes after both.
	 */
	sq_tail = smp_load_acquire(chan->ring.sq.tail);	/* app release */
	rq_tail = smp_load_acquire(chan->ring.rq.tail);	/* app release */
	ret = lchan_post_take(chan, &chan->ring.rq, usable, rq_tail);
	if (ret < 0)
		return ret;
	*rq_done = ret;
	if (usable && state == LCHAN_STATE_CONNECTED) {
		/* The transport's turn may break it: then flush, not gate. */
		if (chan->tp->submit)
			chan->tp->submit(chan);
		state = READ_ONCE(chan->state);
		usable = lchan_post_usable(chan, state);
	}
	if (lchan_post_sq_gated(chan, state))
		return 0;
	ret = lchan_post_take(chan, &chan->ring.sq, usable, sq_tail);
	if (ret < 0)
		return ret;
	*sq_done = ret;
	return 0;
}

/* Published entries not yet taken (the poller's question).  lock held. */
bool lchan_post_has_work(struct lchan_channel *chan)
{
	struct lchan_ring *ring = &chan->ring;

	if (!ring->mem)
		return false;
	if (READ_ONCE(*ring->rq.tail) != ring->rq.head_k)
		return true;
	return READ_ONCE(*ring->sq.tail) != ring->sq.head_k &&
	       !lchan_post_sq_gated(chan, READ_ONCE(chan->state));
}
