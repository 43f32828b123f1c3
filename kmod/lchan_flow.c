// SPDX-License-Identifier: GPL-2.0
/*
 * Flow control of the submit path: an entry is taken from a ring only with
 * a CQ slot for its completion and a WR slot to post it from, so the kernel
 * never has more work outstanding than the CQ ring can hold and never
 * drops a completion.
 *
 * CQ claims.  ring->inflight counts the CQ slots claimed and not yet
 * written: one per request posted until it is retired, one per rejected
 * entry until its error CQE is written.  A claim is taken only while
 * CQEs unread plus claims stay within the ring.  Writing a CQE uses its
 * claim (lchan_ring_put_cqe()); a request that completes without a CQE
 * gives its claim back.  A submit claims for its whole batch in one cq_lock
 * section and gives back the claims it did not use in one more: the spares
 * are only ever counted, never written, so completions meanwhile (which
 * write into slots their own requests claimed) and the application
 * (which only frees slots) cannot make the ring overflow.  Room that frees
 * while a batch runs is used by the next submit.
 *
 * WR slots.  Each queue has a ring of struct lchan_wr as deep as its ring
 * of entries.  wr_post counts requests handed to the device, wr_done the
 * oldest slot not yet free again; both only grow.  Receives complete in
 * order.  Sends need not: siw completes a SEND once it is on the wire, an
 * earlier READ only when its data came back.  So each send slot is marked
 * completed on its own completion and wr_done advances over completed
 * slots only.  An unsignaled SEND or WRITE has no completion of its own
 * when it succeeds; those are in order among themselves, so it is known
 * complete when a later signaled request completes.  READs and atomics
 * are always signaled (hidden from the CQ ring if the application asked
 * for no completion), and every half ring the kernel signals one request
 * itself (lchan_post.c), so slots come back even if the application never
 * asks for a completion.  A failed request always completes, so its error
 * reaches the CQ ring.
 *
 * Entries the application published wait in the ring while every WR slot
 * of their queue is taken (siw completes a SEND before an older READ, and
 * the READ's slot holds back the ones after it).  The queue is then marked
 * starved, and the completion that frees a slot posts them without waiting
 * for another ENTER: a busy-polling application may never make one.
 *
 * On a channel that is down, entries are answered with flushes that lchan
 * writes itself.  Verbs keep one queue's completions in order, and so
 * does lchan: while the device still owes a queue completions, its
 * entries wait in the ring (the queue is deferred), and the last of those
 * completions has the repost work flush them.  A wait reports the
 * channel settled only after that.
 *
 * Takers hold chan->lock; the completion handler holds cq_lock.  cq_lock
 * nests inside chan->lock and is never held across a call into the device.
 */
#include "lchan.h"

static struct lchan_wr *lchan_flow_slot(struct lchan_queue *q, u32 idx)
{
	return &q->wr[idx & (q->entries - 1)];
}

/* Claim up to @want CQ slots for future CQEs.  Returns how many. */
u32 lchan_flow_claim_cq(struct lchan_channel *chan, u32 want)
{
	struct lchan_ring *ring = &chan->ring;
	u32 used, got = 0;

	if (!want)
		return 0;
	spin_lock_bh(&chan->cq_lock);
	used = lchan_ring_cq_ready(chan);
	if (used + ring->inflight < ring->cq_entries)
		got = min(want, ring->cq_entries - used - ring->inflight);
	ring->inflight += got;
	spin_unlock_bh(&chan->cq_lock);
	return got;
}

/* Give back @count claims that no CQE will use. */
void lchan_flow_unclaim_cq(struct lchan_channel *chan, u32 count)
{
	if (!count)
		return;
	spin_lock_bh(&chan->cq_lock);
	chan->ring.inflight -= count;
	spin_unlock_bh(&chan->cq_lock);
}

/*
 * A free WR slot on @q, or NULL.  Only chan->lock holders post; the
 * completion handler asks too (under cq_lock), hence READ_ONCE on post.
 * The acquire on done pairs with the release that freed the slot: the
 * handler's last stores to it come before the taker's refill.
 */
static struct lchan_wr *lchan_flow_free_wr(struct lchan_queue *q)
{
	u32 post = READ_ONCE(q->wr_post);
	u32 done = smp_load_acquire(&q->wr_done);	/* handler release */

	if (post - done >= q->entries)
		return NULL;
	return lchan_flow_slot(q, post);
}

/*
 * The WR slot for the next request on @q, or NULL when all are taken.  Then
 * @q is marked starved under cq_lock, looking again first, so that a
 * completion freeing a slot either is seen here or sees the mark.  The
 * caller fills the slot, then counts it in wr_post.  chan->lock held.
 */
struct lchan_wr *lchan_flow_get_wr(struct lchan_channel *chan,
				   struct lchan_queue *q)
{
	struct lchan_wr *wr = lchan_flow_free_wr(q);

	if (wr)
		return wr;
	spin_lock_bh(&chan->cq_lock);
	wr = lchan_flow_free_wr(q);
	if (!wr)
		q->starved = true;
	spin_unlock_bh(&chan->cq_lock);
	return wr;
}

/*
 * Whether slots were freed on a starved queue: then the caller has what
 * waited submitted from process context.  cq_lock held.
 */
static bool lchan_flow_unstarve(struct lchan_queue *q)
{
	if (!q->starved || !lchan_flow_free_wr(q))
		return false;
	q->starved = false;
	return true;
}

/*
 * Free the oldest send slots that are completed.  cq_lock held.  The
 * acquire on wr_post pairs with the taker's release: a slot counted there
 * is read as refilled (completed false), never as its last use left it.
 */
static void lchan_flow_advance(struct lchan_queue *q)
{
	while (q->wr_done != smp_load_acquire(&q->wr_post) &&	/* taker */
	       lchan_flow_slot(q, q->wr_done)->completed)
		smp_store_release(&q->wr_done, q->wr_done + 1);	/* taker */
}

/* An unsignaled request known to be done: account it without a CQE. */
static void lchan_flow_retire_quiet(struct lchan_channel *chan,
				    struct lchan_wr *wr)
{
	chan->stats.send_ops++;
	chan->stats.send_bytes += wr->length;
	chan->ring.inflight--;
	lchan_wr_put_mrs(wr);
	wr->completed = true;
}

/*
 * A receive completed and its CQE is written.  True when what waited for
 * a slot is to be submitted now.  cq_lock held.
 */
bool lchan_flow_recv_done(struct lchan_channel *chan, struct lchan_wr *wr)
{
	struct lchan_queue *q = &chan->ring.rq;

	lchan_wr_put_mrs(wr);
	smp_store_release(&q->wr_done, q->wr_done + 1);	/* taker acquire */
	return lchan_flow_unstarve(q);
}

/*
 * Whether send @wr is the device's still: posted and not yet completed.
 * siw completes a READ twice when its QP is flushed after the READ went
 * into the ORQ but before it was sent: siw_sq_flush() completes the ORQ
 * entry, then the same request again as the queued transmit WQE.  The
 * second completion must not write a CQE, drop MR references or free the
 * slot again.  Should a submit refill the slot in between (a full queue),
 * the QP is in error and the new request is flushed: the duplicate
 * stands for its one flush completion, written from the slot.  The
 * acquire on wr_post pairs with the taker's release.  cq_lock held.
 */
bool lchan_flow_send_owned(struct lchan_channel *chan,
			   const struct lchan_wr *wr)
{
	struct lchan_queue *q = &chan->ring.sq;
	u32 off = ((u32)(wr - q->wr) - q->wr_done) & (q->entries - 1);

	return off < smp_load_acquire(&q->wr_post) - q->wr_done &&	/* taker */
	       !wr->completed;
}

/*
 * A send completed; @quiet: without a CQE, so its claim goes back.  The
 * unsignaled SENDs and WRITEs before it are done too.  True when what
 * waited for a slot is to be submitted now.  cq_lock held.
 */
bool lchan_flow_send_done(struct lchan_channel *chan, struct lchan_wr *wr,
			  bool quiet)
{
	struct lchan_queue *q = &chan->ring.sq;
	/* Not yet freed, so it lies within [wr_done, wr_post). */
	u32 slot = wr - q->wr;
	u32 idx = q->wr_done + ((slot - q->wr_done) & (q->entries - 1));
	u32 i;

	if (quiet)
		chan->ring.inflight--;
	lchan_wr_put_mrs(wr);
	wr->completed = true;
	for (i = q->wr_done; i != idx; i++) {
		struct lchan_wr *old = lchan_flow_slot(q, i);

		if (!old->signaled && !old->completed)
			lchan_flow_retire_quiet(chan, old);
	}
	lchan_flow_advance(q);
	return lchan_flow_unstarve(q);
}

/*
 * Whether a completion of @q may still come from the device: a receive
 * not yet completed, or a signaled send.  A flush lchan writes itself
 * waits for these, as verbs keep one queue's completions in order.  An
 * unsignaled send may have succeeded without one; should it be flushed
 * instead, that flush follows lchan's, which keeps the order too.
 * cq_lock held.
 */
static bool lchan_flow_busy_locked(struct lchan_channel *chan,
				   struct lchan_queue *q)
{
	u32 post = smp_load_acquire(&q->wr_post);	/* taker release */
	u32 i;

	if (q == &chan->ring.rq || !q->wr)
		return post != q->wr_done;
	for (i = q->wr_done; i != post; i++) {
		struct lchan_wr *wr = lchan_flow_slot(q, i);

		if (wr->signaled && !wr->completed)
			return true;
	}
	return false;
}

/*
 * A taker's flushes of @q must wait when the device still owes @q
 * completions: then @q is marked deferred, under cq_lock, so that the
 * last of those completions sees the mark.  True when they must wait.
 * chan->lock held.
 */
bool lchan_flow_defer(struct lchan_channel *chan, struct lchan_queue *q)
{
	bool busy;

	spin_lock_bh(&chan->cq_lock);
	busy = lchan_flow_busy_locked(chan, q);
	if (busy)
		WRITE_ONCE(q->deferred, true);
	spin_unlock_bh(&chan->cq_lock);
	return busy;
}

/*
 * A completion of @q was handled: true when it was the last the device
 * owed and flushes were deferred for it, to be written now by the repost
 * work.  cq_lock held.
 */
bool lchan_flow_flush_due(struct lchan_channel *chan, struct lchan_queue *q)
{
	return READ_ONCE(q->deferred) && !lchan_flow_busy_locked(chan, q);
}

/*
 * After the drain marker completed, sends still unretired (unsignaled ones
 * at the end) are complete too.  Teardown only, chan->lock held.
 */
void lchan_flow_retire_all(struct lchan_channel *chan)
{
	struct lchan_queue *q = &chan->ring.sq;
	u32 i;

	if (!q->wr)
		return;
	spin_lock_bh(&chan->cq_lock);
	for (i = q->wr_done; i != q->wr_post; i++) {
		struct lchan_wr *old = lchan_flow_slot(q, i);

		if (!old->completed)
			lchan_flow_retire_quiet(chan, old);
	}
	lchan_flow_advance(q);
	spin_unlock_bh(&chan->cq_lock);
}
