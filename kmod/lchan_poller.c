// SPDX-License-Identifier: GPL-2.0
/*
 * Poller mode: a kernel thread takes what the application publishes in
 * the rings of its channels, so steady traffic needs no system call.  One
 * thread may serve several contexts (LCHAN_IOC_CTX_SETUP attach_fd).
 *
 * Going to sleep (the other half is in liblchan's lchan_submit()):
 *   poller: WRITE_ONCE(flags, NEED_WAKEUP); smp_mb(); read every tail
 *   app:    store-release tail; full fence; read flags
 * With both full barriers either the poller sees the new tail and stays
 * awake, or the app sees NEED_WAKEUP and issues ENTER, which wakes it.
 */
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "lchan.h"

static void lchan_poller_set_flags(struct lchan_poller *p, u32 flags)
{
	struct lchan_chan *chan;

	list_for_each_entry(chan, &p->chans, poll_node) {
		u32 *word = chan->ring.mem + chan->ring.info.sq_off.flags;

		WRITE_ONCE(*word, flags);
	}
}

/* One pass over the channels; true when anything was posted. */
static bool lchan_poller_round(struct lchan_poller *p)
{
	struct lchan_chan *chan;
	u32 sq_done, rq_done;
	bool did = false;

	list_for_each_entry(chan, &p->chans, poll_node) {
		/* Whoever holds the lock (ENTER, teardown) does the work. */
		if (!mutex_trylock(&chan->lock))
			continue;
		if (lchan_post_has_work(chan) &&
		    !lchan_post_submit(chan, &sq_done, &rq_done) &&
		    (sq_done || rq_done)) {
			did = true;
			p->posts += sq_done + rq_done;
		}
		mutex_unlock(&chan->lock);
	}
	p->rounds++;
	return did;
}

static bool lchan_poller_any_work(struct lchan_poller *p)
{
	struct lchan_chan *chan;

	list_for_each_entry(chan, &p->chans, poll_node)
		if (lchan_post_has_work(chan))
			return true;
	return false;
}

static int lchan_poller_fn(void *data)
{
	struct lchan_poller *p = data;
	unsigned long idle_until = jiffies + msecs_to_jiffies(p->idle_ms);

	while (!kthread_should_stop()) {
		bool did;

		mutex_lock(&p->lock);
		did = lchan_poller_round(p);
		mutex_unlock(&p->lock);
		if (did || time_before(jiffies, idle_until)) {
			if (did)
				idle_until = jiffies +
					     msecs_to_jiffies(p->idle_ms);
			cond_resched();
			continue;
		}

		mutex_lock(&p->lock);
		/* Cleared before the flag goes up, so no kick is lost. */
		WRITE_ONCE(p->wake, false);
		lchan_poller_set_flags(p, LCHAN_SQ_NEED_WAKEUP);
		smp_mb();	/* flags before tails; pairs with the app */
		if (lchan_poller_any_work(p)) {
			lchan_poller_set_flags(p, 0);
			mutex_unlock(&p->lock);
			continue;
		}
		p->sleeps++;
		mutex_unlock(&p->lock);

		wait_event_idle(p->wq, READ_ONCE(p->wake) ||
				kthread_should_stop());

		mutex_lock(&p->lock);
		lchan_poller_set_flags(p, 0);
		mutex_unlock(&p->lock);
		idle_until = jiffies + msecs_to_jiffies(p->idle_ms);
	}
	return 0;
}

void lchan_poller_kick(struct lchan_poller *p)
{
	if (!p)
		return;
	WRITE_ONCE(p->wake, true);
	wake_up(&p->wq);
}

static void lchan_poller_release(struct kref *ref)
{
	struct lchan_poller *p = container_of(ref, struct lchan_poller, ref);

	kthread_stop(p->task);
	put_task_struct(p->task);
	kfree(p);
}

void lchan_poller_put(struct lchan_poller *p)
{
	if (p)
		kref_put(&p->ref, lchan_poller_release);
}

struct lchan_poller *lchan_poller_create(u32 idle_ms, int cpu,
					 pid_t tgid)
{
	struct lchan_poller *p;
	struct task_struct *task;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return ERR_PTR(-ENOMEM);
	kref_init(&p->ref);
	mutex_init(&p->lock);
	INIT_LIST_HEAD(&p->chans);
	init_waitqueue_head(&p->wq);
	p->idle_ms = idle_ms ?: LCHAN_POLLER_IDLE_MS;
	p->cpu = cpu;

	task = kthread_create(lchan_poller_fn, p, "lchan-poll/%d", tgid);
	if (IS_ERR(task)) {
		kfree(p);
		return ERR_CAST(task);
	}
	if (cpu >= 0)
		kthread_bind(task, cpu);
	get_task_struct(task);
	p->task = task;
	wake_up_process(task);
	return p;
}

/* A new channel joins; the poller wakes to look at it. */
void lchan_poller_add_chan(struct lchan_poller *p, struct lchan_chan *chan)
{
	kobject_get(&chan->kobj);
	mutex_lock(&p->lock);
	chan->poller = p;
	list_add_tail(&chan->poll_node, &p->chans);
	mutex_unlock(&p->lock);
	lchan_poller_kick(p);
}

/* The channel leaves before its teardown; never while the poller uses it. */
void lchan_poller_del_chan(struct lchan_chan *chan)
{
	struct lchan_poller *p = chan->poller;

	if (!p)
		return;
	mutex_lock(&p->lock);
	list_del_init(&chan->poll_node);
	chan->poller = NULL;
	mutex_unlock(&p->lock);
	lchan_chan_put(chan);
}
