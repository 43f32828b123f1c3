// SPDX-License-Identifier: GPL-2.0
/*
 * The channel object's core, the ground floor every other file of the
 * channel stands on: its id, references, state and the wait for its CQEs.
 * Nothing here calls up into a part (lchan_parts.c) or into the file.
 */
#include <linux/slab.h>

#include "lchan.h"
#include "lchan_trace.h"

/* Channel ids: the sysfs directory name and lchan_chan_info.id. */
static DEFINE_IDA(lchan_chan_ida);

/* The kobject's release: the last reference to the channel is gone. */
static void lchan_chan_free(struct kobject *kobj)
{
	struct lchan_channel *chan = to_lchan_channel(kobj);

	ida_free(&lchan_chan_ida, chan->id);
	kfree(chan);
}

/* Its lifetime; sysfs adds the attributes (lchan_sysfs.c). */
static const struct kobj_type lchan_chan_ktype = {
	.release = lchan_chan_free,
	.sysfs_ops = &kobj_sysfs_ops,
};

/*
 * The channel belongs to the calling process, or, made by a worker (a
 * stream listener's sets streams up), to its context's owner.
 */
void lchan_chan_set_owner(struct lchan_channel *chan)
{
	if (current->flags & PF_KTHREAD) {
		chan->tgid = chan->ctx->tgid;
		memcpy(chan->comm, chan->ctx->comm, sizeof(chan->comm));
	} else {
		chan->tgid = task_tgid_vnr(current);
		get_task_comm(chan->comm, current);
	}
}

struct lchan_channel *lchan_chan_alloc(struct lchan_context *ctx)
{
	struct lchan_channel *chan;
	int id;

	chan = kzalloc(sizeof(*chan), LCHAN_GFP_USER);
	if (!chan)
		return ERR_PTR(-ENOMEM);
	id = ida_alloc(&lchan_chan_ida, GFP_KERNEL);
	if (id < 0) {
		kfree(chan);
		return ERR_PTR(id);
	}
	chan->id = id;
	chan->kind = LCHAN_CM_CHAN;
	kobject_init(&chan->kobj, &lchan_chan_ktype);
	mutex_init(&chan->lock);
	init_completion(&chan->conn.done);
	init_waitqueue_head(&chan->wq);
	spin_lock_init(&chan->cq_lock);
	INIT_LIST_HEAD(&chan->dev_node);
	chan->state = LCHAN_STATE_CONNECTING;
	kref_get(&ctx->ref);
	chan->ctx = ctx;
	lchan_chan_set_owner(chan);
	trace_lchan_chan_step(chan->id, LCHAN_STEP_ALLOC);
	return chan;
}

void lchan_chan_put(struct lchan_channel *chan)
{
	kobject_put(&chan->kobj);
}

/* Run @dwork of @chan in @ms; a queued work holds a channel reference. */
void lchan_chan_queue_delayed(struct lchan_channel *chan,
			      struct delayed_work *dwork, unsigned int ms)
{
	kobject_get(&chan->kobj);
	if (!queue_delayed_work(lchan_wq, dwork, msecs_to_jiffies(ms)))
		lchan_chan_put(chan);
}

/*
 * Every state change goes through here: traced, and waiters woken.  States
 * only move forward (connecting, connected, disconnected, error), so a
 * late cm event cannot hide that the device went away.
 */
void lchan_chan_set_state(struct lchan_channel *chan, int state)
{
	int old = READ_ONCE(chan->state);

	do {
		if (old >= state)
			goto out_wake;
	} while (!try_cmpxchg(&chan->state, &old, state));
	trace_lchan_chan_state(chan->id, old, state);
out_wake:
	wake_up(&chan->wq);
}

/* The connection is over: disconnected, or failed. */
bool lchan_chan_done(struct lchan_channel *chan)
{
	int state = READ_ONCE(chan->state);

	return state == LCHAN_STATE_DISCONNECTED || state == LCHAN_STATE_ERROR;
}

/*
 * Nothing more can complete: disconnected, nothing in flight, and no
 * flush deferred until the device's completions of its queue are in.
 */
bool lchan_chan_settled(struct lchan_channel *chan)
{
	return lchan_chan_done(chan) &&
	       !lchan_flow_outstanding(&chan->ring.sq) &&
	       !lchan_flow_outstanding(&chan->ring.rq) &&
	       !READ_ONCE(chan->ring.sq.deferred) &&
	       !READ_ONCE(chan->ring.rq.deferred);
}

/* A wait for @min CQEs is over: they are in the ring, or none can come. */
bool lchan_chan_wait_over(struct lchan_channel *chan, u32 min)
{
	return lchan_ring_cq_ready(chan) >= min || lchan_chan_settled(chan);
}
