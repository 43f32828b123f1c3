// SPDX-License-Identifier: GPL-2.0
/*
 * Direct polling (LCHAN_DIRECT_POLL): the channel's CQ is IB_POLL_DIRECT,
 * so the device never interrupts and no softirq or worker polls it; the
 * application's own ENTER polls it and writes the CQEs.  A completion then
 * reaches the ring in the call that waits for it, the way a user QP's
 * does, without the hand-offs a completion event costs.
 *
 * Everyone else who needs completions polls for itself: the drain at
 * teardown (lchan_direct_drain), the keepalive before it looks, and
 * while a process waits in poll(2) or epoll, a work that polls once a tick
 * (lchan_direct_look).  ib_core wants the polls of one CQ serialized:
 * every poll runs under chan->lock, which also keeps the CQ from going
 * away (teardown frees it under the lock).
 */
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/sched/signal.h>

#include "lchan.h"

/* Completions handled per poll: a ring's worth, then the caller moves on. */
static int lchan_direct_budget(const struct lchan_channel *chan)
{
	return chan->ring.cq_entries;
}

/* Poll the CQ into the ring.  chan->lock held. */
void lchan_direct_poll(struct lchan_channel *chan)
{
	lockdep_assert_held(&chan->lock);
	if (chan->mode == LCHAN_MODE_DIRECT && chan->cq)
		ib_process_cq_direct(chan->cq, lchan_direct_budget(chan));
}

/*
 * Polls between two looks at the clock in a timed wait: without a TSC a
 * clock read is an emulated device access that costs more than a poll.
 */
#define LCHAN_DIRECT_POLLS_PER_CLOCK	16

/*
 * ENTER's wait on a direct channel: poll until @min CQEs are ready or
 * nothing more can complete, without sleeping.  0 when the wait ended,
 * -ETIME at @timeout_ns (when @timed), -ERESTARTSYS on a signal.
 */
int lchan_direct_wait(struct lchan_channel *chan, u32 min, bool timed,
		      u64 timeout_ns)
{
	ktime_t end = timed ? ktime_add_ns(ktime_get(), timeout_ns) : 0;
	unsigned int polls;

	for (polls = 1;; polls++) {
		mutex_lock(&chan->lock);
		lchan_direct_poll(chan);
		mutex_unlock(&chan->lock);
		if (lchan_chan_wait_over(chan, min))
			return 0;
		if (signal_pending(current))
			return -ERESTARTSYS;
		/* A zero timeout is one look at the CQ. */
		if (timed && (!timeout_ns ||
			      !(polls % LCHAN_DIRECT_POLLS_PER_CLOCK)) &&
		    ktime_after(ktime_get(), end))
			return -ETIME;
		cond_resched();
	}
}

/* Run the look in a tick, unless queued; a queued work holds a reference. */
static void lchan_direct_look_soon(struct lchan_channel *chan)
{
	kobject_get(&chan->kobj);
	if (!queue_delayed_work(lchan_wq, &chan->direct.look_work, 1))
		lchan_chan_put(chan);
}

/* poll(2) is about to wait on a direct channel: poll the CQ for it. */
void lchan_direct_poll_wait(struct lchan_channel *chan)
{
	/* Someone who holds the lock (ENTER, teardown) polls anyway. */
	if (mutex_trylock(&chan->lock)) {
		lchan_direct_poll(chan);
		mutex_unlock(&chan->lock);
	}
	if (!lchan_chan_wait_over(chan, 1))
		lchan_direct_look_soon(chan);
}

/* Once a tick while a process waits in poll(2): its completions. */
static void lchan_direct_look(struct work_struct *work)
{
	struct lchan_channel *chan = container_of(to_delayed_work(work),
					       struct lchan_channel,
					       direct.look_work);
	bool again;

	mutex_lock(&chan->lock);
	lchan_direct_poll(chan);
	again = chan->cq && wq_has_sleeper(&chan->wq) &&
		!lchan_chan_wait_over(chan, 1);
	mutex_unlock(&chan->lock);
	if (again)
		lchan_direct_look_soon(chan);
	lchan_chan_put(chan);
}

void lchan_direct_init(struct lchan_channel *chan)
{
	INIT_DELAYED_WORK(&chan->direct.look_work, lchan_direct_look);
}

/* Stop the looks; the channel is torn down already. */
void lchan_direct_stop(struct lchan_channel *chan)
{
	if (cancel_delayed_work_sync(&chan->direct.look_work))
		lchan_chan_put(chan);
}

/* A drain marker of one queue: done once its flush completion is polled. */
struct lchan_direct_mark {
	struct ib_cqe cqe;
	bool done;
};

static void lchan_direct_mark_done(struct ib_cq *cq, struct ib_wc *wc)
{
	container_of(wc->wr_cqe, struct lchan_direct_mark, cqe)->done = true;
}

/*
 * Flush both queues and poll until their markers complete.  ib_drain_qp()
 * on a direct CQ first waits a tenth of a second per queue before its
 * first poll; here the poll comes at once, so a close costs what the
 * device's flush costs.  What was posted completes (flushed) into the CQ
 * ring through the normal handlers on the way.  lock held.
 */
void lchan_direct_drain(struct lchan_channel *chan)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct lchan_direct_mark sq = { .cqe.done = lchan_direct_mark_done };
	struct lchan_direct_mark rq = { .cqe.done = lchan_direct_mark_done };
	struct ib_rdma_wr swr = {
		.wr = { .wr_cqe = &sq.cqe, .opcode = IB_WR_RDMA_WRITE },
	};
	struct ib_recv_wr rwr = { .wr_cqe = &rq.cqe };
	int ret;

	lockdep_assert_held(&chan->lock);
	ret = ib_modify_qp(chan->qp, &attr, IB_QP_STATE);
	if (!ret)
		ret = ib_post_send(chan->qp, &swr.wr, NULL);
	sq.done = ret;
	if (!ret)
		ret = ib_post_recv(chan->qp, &rwr, NULL);
	rq.done = ret;
	if (ret)
		lchan_dbg_chan(chan, "drain: %d\n", ret);
	for (;;) {
		ib_process_cq_direct(chan->cq, -1);
		if (sq.done && rq.done)
			break;
		usleep_range(10, 50);
	}
}
