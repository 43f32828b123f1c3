// SPDX-License-Identifier: GPL-2.0
/*
 * Poller mode: a pool of kernel threads, sized and placed by the
 * administrator, takes what applications publish in the rings of
 * poller-mode channels, so steady traffic needs no system call.
 *
 * The pool: `pollers` threads (default 1, at most LCHAN_POLLERS_MAX) that
 * may run on the CPUs of `poller_cpus` (a CPU list, or "all", the default).
 * Both are module parameters, writable at run time by root in
 * /sys/module/lchan/parameters/.  The threads are made when the module
 * loads and when the administrator asks for more; no user call makes,
 * pins or stops one.  A channel goes to a thread when its file is made, by
 * the rule `poller_assign` names: "load" (the default), the thread that
 * serves the fewest channels; "device", the thread that already serves a
 * channel of the same RDMA device, else the one with the fewest.  By load
 * spreads the work evenly; by device keeps each device's completions and
 * queues on one thread (its caches, the CPUs near it when the pool is
 * pinned there).  When the pool grows or shrinks, or the rule changes, the
 * channels are placed again: by load until no thread serves two more than
 * another, by device each device's channels together.
 *
 * Spinning and sleeping: a round in which any of a thread's queues moved
 * (whoever posted: the thread, an ENTER, the completion path) is traffic,
 * and the thread keeps polling for the idle time of that channel's
 * context, as long as its CPU is its own.  When another task waits for
 * that CPU and there is nothing to do, the thread lets it run.  After each
 * round it looks back: when it waited LCHAN_POLLER_AWAY_NS or more for its
 * CPU (the scheduler's run_delay) while user tasks ran there (the CPU's
 * user time grew), LCHAN_POLLER_LONG_AWAYS times with no more than
 * LCHAN_POLLER_STREAK_NS between them, the applications want this CPU, so
 * the thread stops spinning and sleeps, and they kick it (the protocol
 * below).  The driver's own threads (siw's transmit thread, ksoftirqd)
 * doing the work the poller handed them run as kernel time and do not
 * count.  (A preempt notifier would name the task that took the CPU, but
 * enabling one patches the scheduler's hottest code while it runs.)
 *
 * Asleep for a busy CPU the thread is not woken by the applications' kicks
 * (their ENTER posts what they published, as in doorbell mode, so waking
 * it would only take the CPU from them); it looks every
 * LCHAN_POLLER_PROBE_MS for a CPU of its own (the scheduler puts a waking
 * thread on an idle CPU if there is one; a CPU where no user task ran
 * between two looks is free) and spins again when it finds one.  When it
 * found work just as it was going to sleep for a busy CPU, it remembers
 * (contended): its next empty round while another task waits ends in that
 * sleep, without a new streak.  So a poller on a busy CPU costs what
 * doorbell mode costs and never holds the CPU that the processes it
 * serves need.  `poller_sleeps` (read-only) counts the sleeps of each kind.
 *
 * Going to sleep (the other half is in liblchan's lchan_submit()):
 *   poller: WRITE_ONCE(flags, NEED_WAKEUP); smp_mb(); read every tail
 *   app:    store-release tail; full fence; read flags
 * With both full barriers either the poller sees the new tail and stays
 * awake, or the app sees NEED_WAKEUP and issues ENTER, which posts and
 * wakes the thread.  ENTER posts itself, so a kick that reaches a thread
 * the channel has just left loses no work.
 *
 * CPU time: each round's time (local_clock()) is shared equally among the
 * channels it looked at; a channel's sum is its poller_ns in sysfs.
 *
 * Locks: lchan_pool_lock (the threads, the CPU mask, which thread serves
 * which channel) nests outside each poller's lock, which nests outside
 * the channels' locks (the thread only trylocks those).  A thread takes
 * no pool lock, so it is stopped with the pool lock held.
 */
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/moduleparam.h>
#include <linux/kernel_stat.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/stat.h>
#include <linux/slab.h>

#include "lchan.h"

#define LCHAN_POLLERS_MAX		16
#define LCHAN_POLLER_AWAY_NS		NSEC_PER_MSEC
#define LCHAN_POLLER_LONG_AWAYS		3
#define LCHAN_POLLER_STREAK_NS		(20 * NSEC_PER_MSEC)
#define LCHAN_POLLER_PROBE_MS		10

enum lchan_poller_sleep {
	LCHAN_POLLER_SLEEP_IDLE,
	LCHAN_POLLER_SLEEP_PRESSURE,
	LCHAN_POLLER_SLEEP_KINDS
};

/* A thread of the pool; the slots live as long as the module. */
struct lchan_poller {
	struct task_struct *task;	/* NULL when stopped; pool lock */
	struct mutex lock;		/* chans, nr_chans, rings' flags */
	struct list_head chans;
	u32 nr_chans;			/* under lock; READ_ONCE outside */
	wait_queue_head_t wq;
	bool wake;			/* READ/WRITE_ONCE */
	bool probing;			/* asleep for a busy CPU; lock */
	/* The thread's own. */
	u64 seen_delay;			/* its run_delay at the last look */
	u64 seen_user;			/* @seen_cpu's user time then */
	int seen_cpu;
	unsigned int long_aways;	/* the streak */
	u64 long_away_at;		/* the streak's last */
	bool contended;			/* gave way to a user task */
};

static struct lchan_poller lchan_pollers[LCHAN_POLLERS_MAX];
static DEFINE_MUTEX(lchan_pool_lock);
static bool lchan_pool_ready;		/* under pool lock: init done */
static unsigned int lchan_pool_size = 1; /* the parameter; pool lock */
static unsigned int lchan_pool_running;	/* threads started; pool lock */
static cpumask_var_t lchan_pool_cpus;	/* allowed CPUs; pool lock */
static char lchan_pool_cpulist[256] = "all"; /* as given */
static atomic_long_t lchan_pool_sleeps[LCHAN_POLLER_SLEEP_KINDS];

enum lchan_pool_rule {
	LCHAN_POOL_BY_LOAD,
	LCHAN_POOL_BY_DEVICE,
};

static const char *const lchan_pool_rule_names[] = {
	[LCHAN_POOL_BY_LOAD] = "load",
	[LCHAN_POOL_BY_DEVICE] = "device",
};

static enum lchan_pool_rule lchan_pool_rule;	/* pool lock; READ_ONCE */

/* Set every ring's flags word; the longest idle time of the channels. */
static u32 lchan_poller_set_flags(struct lchan_poller *p, u32 flags)
{
	struct lchan_channel *chan;
	u32 idle_ms = 0;

	list_for_each_entry(chan, &p->chans, pool.node) {
		u32 *word = chan->ring.mem + chan->ring.info.sq_off.flags;

		WRITE_ONCE(*word, flags);
		idle_ms = max(idle_ms, chan->ctx->poll_idle_ms);
	}
	return idle_ms;
}

/* Whether @chan's queues moved since the last look.  chan->lock held. */
static bool lchan_poller_chan_moved(struct lchan_channel *chan)
{
	u32 sq = chan->ring.sq.head_k, rq = chan->ring.rq.head_k;
	bool moved = sq != chan->pool.sq_seen || rq != chan->pool.rq_seen;

	chan->pool.sq_seen = sq;
	chan->pool.rq_seen = rq;
	return moved;
}

/*
 * One pass over the channels; true when any queue moved, and then
 * @idle_ms is the longest idle time of a context whose queues moved.
 */
static bool lchan_poller_round(struct lchan_poller *p, u32 *idle_ms)
{
	u64 start = local_clock(), share;
	struct lchan_channel *chan;
	u32 sq_done, rq_done;
	bool did = false;

	list_for_each_entry(chan, &p->chans, pool.node) {
		/* Whoever holds the lock (ENTER, teardown) does the work. */
		if (!mutex_trylock(&chan->lock))
			continue;
		if (lchan_post_has_work(chan))
			lchan_post_submit(chan, &sq_done, &rq_done);
		if (lchan_poller_chan_moved(chan)) {
			did = true;
			*idle_ms = max(*idle_ms, chan->ctx->poll_idle_ms);
		}
		mutex_unlock(&chan->lock);
	}
	if (!p->nr_chans)
		return did;
	share = div_u64(local_clock() - start, p->nr_chans);
	list_for_each_entry(chan, &p->chans, pool.node)
		WRITE_ONCE(chan->pool.ns, chan->pool.ns + share);
	return did;
}

static bool lchan_poller_any_work(struct lchan_poller *p)
{
	struct lchan_channel *chan;

	list_for_each_entry(chan, &p->chans, pool.node)
		if (lchan_post_has_work(chan))
			return true;
	return false;
}

/* User tasks' CPU time on @cpu so far (at the tick, or at switches). */
static u64 lchan_poller_user_time(int cpu)
{
	return READ_ONCE(kcpustat_cpu(cpu).cpustat[CPUTIME_USER]) +
	       READ_ONCE(kcpustat_cpu(cpu).cpustat[CPUTIME_NICE]);
}

/* Since the last look: did a user task keep this thread off its CPU? */
static void lchan_poller_look_back(struct lchan_poller *p)
{
	u64 delay = current->sched_info.run_delay;
	u64 user = lchan_poller_user_time(p->seen_cpu);
	int cpu = raw_smp_processor_id();

	if (delay - p->seen_delay >= LCHAN_POLLER_AWAY_NS &&
	    user != p->seen_user) {
		p->long_aways++;
		p->long_away_at = local_clock();
	}
	p->seen_delay = delay;
	if (cpu != p->seen_cpu) {
		p->seen_cpu = cpu;
		user = lchan_poller_user_time(cpu);
	}
	p->seen_user = user;
}

/*
 * Whether to poll again rather than sleep, after a round; if not, @why
 * says for what.
 */
static bool lchan_poller_keep_spinning(struct lchan_poller *p, bool did,
				       unsigned long idle_until,
				       enum lchan_poller_sleep *why)
{
	*why = LCHAN_POLLER_SLEEP_PRESSURE;
	lchan_poller_look_back(p);
	if (p->long_aways &&
	    local_clock() - p->long_away_at > LCHAN_POLLER_STREAK_NS)
		p->long_aways = 0;
	if (p->long_aways >= LCHAN_POLLER_LONG_AWAYS) {
		p->long_aways = 0;
		p->contended = true;
		return false;
	}
	if (did)
		return true;
	if (!READ_ONCE(p->nr_chans) || !time_before(jiffies, idle_until)) {
		*why = LCHAN_POLLER_SLEEP_IDLE;
		return false;
	}
	if (single_task_running()) {
		p->contended = false;
		return true;
	}
	/* Someone waits for this CPU and there is nothing to do. */
	if (p->contended)
		return false;
	schedule();
	return true;
}

/*
 * Sleep until kicked; asleep for a busy CPU, until it wakes twice in a row
 * on the same CPU and no user task ran there in between.  (Whether it is
 * alone when it wakes says nothing: on PREEMPT_RT the timer thread that
 * woke it is still runnable.)
 */
static void lchan_poller_sleep(struct lchan_poller *p)
{
	long probe = msecs_to_jiffies(LCHAN_POLLER_PROBE_MS);
	u64 user = 0;
	int cpu = -1;

	if (!p->probing) {
		wait_event_idle(p->wq, READ_ONCE(p->wake) ||
				kthread_should_stop());
		return;
	}
	while (!wait_event_idle_timeout(p->wq, READ_ONCE(p->wake) ||
					kthread_should_stop(), probe)) {
		int now_cpu = raw_smp_processor_id();
		u64 now_user = lchan_poller_user_time(now_cpu);

		if (now_cpu == cpu && now_user == user)
			break;
		cpu = now_cpu;
		user = now_user;
	}
	p->contended = false;
}

static int lchan_poller_fn(void *data)
{
	struct lchan_poller *p = data;
	unsigned long idle_until = jiffies;

	p->seen_delay = current->sched_info.run_delay;
	p->seen_cpu = raw_smp_processor_id();
	p->seen_user = lchan_poller_user_time(p->seen_cpu);
	p->long_aways = 0;
	p->contended = false;

	while (!kthread_should_stop()) {
		enum lchan_poller_sleep why;
		u32 idle_ms = 0;
		bool did;

		mutex_lock(&p->lock);
		did = lchan_poller_round(p, &idle_ms);
		mutex_unlock(&p->lock);
		if (did)
			idle_until = jiffies + msecs_to_jiffies(idle_ms);
		if (lchan_poller_keep_spinning(p, did, idle_until, &why)) {
			cond_resched();
			continue;
		}

		mutex_lock(&p->lock);
		/* Cleared before the flag goes up, so no kick is lost. */
		WRITE_ONCE(p->wake, false);
		WRITE_ONCE(p->probing, why == LCHAN_POLLER_SLEEP_PRESSURE);
		lchan_poller_set_flags(p, LCHAN_SQ_NEED_WAKEUP);
		smp_mb();	/* flags before tails; pairs with the app */
		if (lchan_poller_any_work(p)) {
			WRITE_ONCE(p->probing, false);
			lchan_poller_set_flags(p, 0);
			mutex_unlock(&p->lock);
			continue;
		}
		mutex_unlock(&p->lock);

		atomic_long_inc(&lchan_pool_sleeps[why]);
		lchan_poller_sleep(p);

		mutex_lock(&p->lock);
		WRITE_ONCE(p->probing, false);
		idle_ms = lchan_poller_set_flags(p, 0);
		mutex_unlock(&p->lock);
		idle_until = jiffies + msecs_to_jiffies(idle_ms);
	}

	return 0;
}

static void lchan_poller_kick(struct lchan_poller *p)
{
	/* Asleep for a busy CPU: the kicker's ENTER did the work. */
	if (!p || READ_ONCE(p->probing))
		return;
	WRITE_ONCE(p->wake, true);
	wake_up(&p->wq);
}

/* The thread that serves @chan, if any, has work: ENTER's doorbell. */
void lchan_poller_kick_chan(struct lchan_channel *chan)
{
	lchan_poller_kick(READ_ONCE(chan->pool.poller));
}

/* The running thread with the fewest channels.  Pool lock held. */
static struct lchan_poller *lchan_poller_least_loaded(void)
{
	struct lchan_poller *best = &lchan_pollers[0];
	unsigned int i;

	for (i = 1; i < lchan_pool_running; i++)
		if (lchan_pollers[i].nr_chans < best->nr_chans)
			best = &lchan_pollers[i];
	return best;
}

static struct lchan_poller *lchan_poller_most_loaded(void)
{
	struct lchan_poller *best = &lchan_pollers[0];
	unsigned int i;

	for (i = 1; i < lchan_pool_running; i++)
		if (lchan_pollers[i].nr_chans > best->nr_chans)
			best = &lchan_pollers[i];
	return best;
}

/*
 * The running thread that serves a channel of @dev, or NULL.  Pool lock
 * held: every change of a thread's list happens under it.
 */
static struct lchan_poller *lchan_poller_of_dev(const struct lchan_dev *dev)
{
	struct lchan_channel *chan;
	unsigned int i;

	for (i = 0; i < lchan_pool_running; i++)
		list_for_each_entry(chan, &lchan_pollers[i].chans, pool.node)
			if (chan->dev == dev)
				return &lchan_pollers[i];
	return NULL;
}

/* The thread @chan goes to by the administrator's rule.  Pool lock held. */
static struct lchan_poller *lchan_poller_pick(const struct lchan_channel *chan)
{
	struct lchan_poller *p = NULL;

	if (lchan_pool_rule == LCHAN_POOL_BY_DEVICE)
		p = lchan_poller_of_dev(chan->dev);
	return p ?: lchan_poller_least_loaded();
}

/* @chan joins @p and @p looks at it.  Pool lock held. */
static void lchan_poller_link(struct lchan_poller *p,
			      struct lchan_channel *chan)
{
	u32 *word = chan->ring.mem + chan->ring.info.sq_off.flags;

	mutex_lock(&p->lock);
	list_add_tail(&chan->pool.node, &p->chans);
	WRITE_ONCE(p->nr_chans, p->nr_chans + 1);
	/* A thread that will not be kicked leaves the work to ENTER. */
	WRITE_ONCE(*word, p->probing ? LCHAN_SQ_NEED_WAKEUP : 0);
	WRITE_ONCE(chan->pool.poller, p);
	mutex_unlock(&p->lock);
	lchan_poller_kick(p);
}

static void lchan_poller_unlink(struct lchan_channel *chan)
{
	struct lchan_poller *p = chan->pool.poller;

	mutex_lock(&p->lock);
	list_del_init(&chan->pool.node);
	WRITE_ONCE(p->nr_chans, p->nr_chans - 1);
	mutex_unlock(&p->lock);
}

/* Move channels until no thread serves two more than another. */
static void lchan_poller_balance(void)
{
	for (;;) {
		struct lchan_poller *from = lchan_poller_most_loaded();
		struct lchan_poller *to = lchan_poller_least_loaded();
		struct lchan_channel *chan;

		if (from->nr_chans <= to->nr_chans + 1)
			return;
		chan = list_last_entry(&from->chans, struct lchan_channel,
				       pool.node);
		lchan_poller_unlink(chan);
		lchan_poller_link(to, chan);
	}
}

/* Every channel to the thread the rule picks, anew.  Pool lock held. */
static void lchan_poller_regroup(void)
{
	LIST_HEAD(all);
	struct lchan_channel *chan, *next;
	unsigned int i;

	for (i = 0; i < lchan_pool_running; i++)
		list_for_each_entry_safe(chan, next, &lchan_pollers[i].chans,
					 pool.node) {
			lchan_poller_unlink(chan);
			list_add_tail(&chan->pool.node, &all);
		}
	list_for_each_entry_safe(chan, next, &all, pool.node) {
		list_del_init(&chan->pool.node);
		lchan_poller_link(lchan_poller_pick(chan), chan);
	}
}

/* Place the channels again after a change of the pool or of its rule. */
static void lchan_poller_spread(void)
{
	if (lchan_pool_rule == LCHAN_POOL_BY_DEVICE)
		lchan_poller_regroup();
	else
		lchan_poller_balance();
}

static int lchan_poller_start(struct lchan_poller *p, unsigned int index)
{
	struct task_struct *task;

	task = kthread_create(lchan_poller_fn, p, "lchan-poll/%u", index);
	if (IS_ERR(task))
		return PTR_ERR(task);
	set_cpus_allowed_ptr(task, lchan_pool_cpus);
	get_task_struct(task);
	p->task = task;
	wake_up_process(task);
	return 0;
}

static void lchan_poller_stop(struct lchan_poller *p)
{
	kthread_stop(p->task);
	/*
	 * kthread_stop() returns at the thread's exit_mm(), before its pid
	 * is released: wait for that, so that a resize that returned has
	 * no stopped thread left in /proc.
	 */
	while (pid_alive(p->task))
		schedule_timeout_uninterruptible(1);
	put_task_struct(p->task);
	p->task = NULL;
}

/* Run @n threads.  Pool lock held. */
static int lchan_poller_resize(unsigned int n)
{
	int ret = 0;

	while (lchan_pool_running < n) {
		ret = lchan_poller_start(&lchan_pollers[lchan_pool_running],
					 lchan_pool_running);
		if (ret)
			break;
		lchan_pool_running++;
	}
	while (lchan_pool_running > n) {
		struct lchan_poller *p = &lchan_pollers[--lchan_pool_running];

		/* Its channels go to the threads that stay. */
		while (p->nr_chans) {
			struct lchan_channel *chan;

			chan = list_first_entry(&p->chans, struct lchan_channel,
						pool.node);
			lchan_poller_unlink(chan);
			lchan_poller_link(lchan_poller_least_loaded(), chan);
		}
		lchan_poller_stop(p);
	}
	lchan_poller_spread();
	return ret;
}

void lchan_poller_member_init(struct lchan_channel *chan)
{
	INIT_LIST_HEAD(&chan->pool.node);
}

/* A new channel of a poller context: a thread of the pool takes it. */
void lchan_poller_add_chan(struct lchan_channel *chan)
{
	kobject_get(&chan->kobj);
	mutex_lock(&lchan_pool_lock);
	lchan_poller_link(lchan_poller_pick(chan), chan);
	mutex_unlock(&lchan_pool_lock);
}

/* The number N of the thread (lchan-poll/N) that serves @chan, or -1. */
int lchan_poller_index(const struct lchan_channel *chan)
{
	struct lchan_poller *p = READ_ONCE(chan->pool.poller);

	return p ? p - lchan_pollers : -1;
}

/* The channel leaves before its teardown; never while a thread uses it. */
void lchan_poller_del_chan(struct lchan_channel *chan)
{
	bool had;

	if (chan->mode != LCHAN_MODE_POLLER)
		return;
	mutex_lock(&lchan_pool_lock);
	had = chan->pool.poller;
	if (had) {
		lchan_poller_unlink(chan);
		WRITE_ONCE(chan->pool.poller, NULL);
	}
	mutex_unlock(&lchan_pool_lock);
	if (had)
		lchan_chan_put(chan);
}

static int lchan_poller_param_set_size(const char *val,
				       const struct kernel_param *kp)
{
	unsigned int n;
	int ret;

	ret = kstrtouint(val, 0, &n);
	if (ret)
		return ret;
	if (n < 1 || n > LCHAN_POLLERS_MAX)
		return -EINVAL;
	mutex_lock(&lchan_pool_lock);
	if (lchan_pool_ready)
		ret = lchan_poller_resize(n);
	lchan_pool_size = ret ? lchan_pool_running : n;
	mutex_unlock(&lchan_pool_lock);
	return ret;
}

static int lchan_poller_param_get_size(char *buf,
				       const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%u\n", READ_ONCE(lchan_pool_size));
}

static const struct kernel_param_ops lchan_poller_size_ops = {
	.set = lchan_poller_param_set_size,
	.get = lchan_poller_param_get_size,
};
module_param_cb(pollers, &lchan_poller_size_ops, NULL, 0644);
MODULE_PARM_DESC(pollers, "Poller threads for all poller-mode channels (1-16, default 1)");

/*
 * The CPUs of @list ("all" or "": every CPU) into @mask; -EINVAL if none
 * is online.
 */
static int lchan_poller_parse_cpus(const char *list, struct cpumask *mask)
{
	int ret;

	if (!*list || !strcmp(list, "all")) {
		cpumask_copy(mask, cpu_possible_mask);
		return 0;
	}
	ret = cpulist_parse(list, mask);
	if (ret)
		return ret;
	return cpumask_intersects(mask, cpu_online_mask) ? 0 : -EINVAL;
}

static int lchan_poller_param_set_cpus(const char *val,
				       const struct kernel_param *kp)
{
	char list[sizeof(lchan_pool_cpulist)];
	cpumask_var_t mask;
	unsigned int i;
	char *cpus;
	int ret;

	if (strscpy(list, val, sizeof(list)) < 0)
		return -EINVAL;
	cpus = strim(list);
	if (!alloc_cpumask_var(&mask, GFP_KERNEL))
		return -ENOMEM;
	ret = lchan_poller_parse_cpus(cpus, mask);
	if (ret)
		goto out_free;
	mutex_lock(&lchan_pool_lock);
	strscpy(lchan_pool_cpulist, *cpus ? cpus : "all",
		sizeof(lchan_pool_cpulist));
	if (lchan_pool_ready) {
		cpumask_copy(lchan_pool_cpus, mask);
		for (i = 0; i < lchan_pool_running; i++)
			set_cpus_allowed_ptr(lchan_pollers[i].task, mask);
	}
	mutex_unlock(&lchan_pool_lock);
out_free:
	free_cpumask_var(mask);
	return ret;
}

static int lchan_poller_param_get_cpus(char *buf,
				       const struct kernel_param *kp)
{
	int ret;

	mutex_lock(&lchan_pool_lock);
	ret = scnprintf(buf, PAGE_SIZE, "%s\n", lchan_pool_cpulist);
	mutex_unlock(&lchan_pool_lock);
	return ret;
}

static const struct kernel_param_ops lchan_poller_cpus_ops = {
	.set = lchan_poller_param_set_cpus,
	.get = lchan_poller_param_get_cpus,
};
module_param_cb(poller_cpus, &lchan_poller_cpus_ops, NULL, 0644);
MODULE_PARM_DESC(poller_cpus, "CPU list the poller threads may run on, or all (default)");

static int lchan_poller_param_set_assign(const char *val,
					 const struct kernel_param *kp)
{
	int rule = sysfs_match_string(lchan_pool_rule_names, val);

	if (rule < 0)
		return -EINVAL;
	mutex_lock(&lchan_pool_lock);
	WRITE_ONCE(lchan_pool_rule, rule);
	if (lchan_pool_ready)
		lchan_poller_spread();
	mutex_unlock(&lchan_pool_lock);
	return 0;
}

static int lchan_poller_param_get_assign(char *buf,
					 const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%s\n",
			 lchan_pool_rule_names[READ_ONCE(lchan_pool_rule)]);
}

static const struct kernel_param_ops lchan_poller_assign_ops = {
	.set = lchan_poller_param_set_assign,
	.get = lchan_poller_param_get_assign,
};
module_param_cb(poller_assign, &lchan_poller_assign_ops, NULL, 0644);
MODULE_PARM_DESC(poller_assign, "Which poller thread takes a channel: load (the one with the fewest, default) or device (the one serving its RDMA device)");

static int lchan_poller_param_get_sleeps(char *buf,
					 const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "idle %ld pressure %ld\n",
		atomic_long_read(&lchan_pool_sleeps[LCHAN_POLLER_SLEEP_IDLE]),
		atomic_long_read(&lchan_pool_sleeps[LCHAN_POLLER_SLEEP_PRESSURE]));
}

static const struct kernel_param_ops lchan_poller_sleeps_ops = {
	.get = lchan_poller_param_get_sleeps,
};
module_param_cb(poller_sleeps, &lchan_poller_sleeps_ops, NULL, 0444);
MODULE_PARM_DESC(poller_sleeps, "How often the poller threads went to sleep: idle, or for a busy user task on their CPU");

int lchan_poller_init(void)
{
	unsigned int i;
	int ret;

	for (i = 0; i < LCHAN_POLLERS_MAX; i++) {
		mutex_init(&lchan_pollers[i].lock);
		INIT_LIST_HEAD(&lchan_pollers[i].chans);
		init_waitqueue_head(&lchan_pollers[i].wq);
	}
	if (!alloc_cpumask_var(&lchan_pool_cpus, GFP_KERNEL))
		return -ENOMEM;
	mutex_lock(&lchan_pool_lock);
	ret = lchan_poller_parse_cpus(lchan_pool_cpulist, lchan_pool_cpus);
	if (!ret)
		ret = lchan_poller_resize(lchan_pool_size);
	if (!ret)
		lchan_pool_ready = true;
	else
		lchan_poller_resize(0);
	mutex_unlock(&lchan_pool_lock);
	if (ret)
		free_cpumask_var(lchan_pool_cpus);
	return ret;
}

/* Every channel is gone: the module has no users left. */
void lchan_poller_exit(void)
{
	mutex_lock(&lchan_pool_lock);
	lchan_pool_ready = false;
	lchan_poller_resize(0);
	mutex_unlock(&lchan_pool_lock);
	free_cpumask_var(lchan_pool_cpus);
}
