// SPDX-License-Identifier: GPL-2.0
/*
 * The channel object and its file: one RC QP and CQ, the shared rings,
 * poll, mmap and the data-path ioctls.
 */
#include <linux/anon_inodes.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/hrtimer.h>

#include "lchan.h"
#include "lchan_trace.h"

/* Channel ids: the sysfs directory name and lchan_chan_info.id. */
static DEFINE_IDA(lchan_chan_ida);

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
	init_completion(&chan->cm_done);
	init_waitqueue_head(&chan->wq);
	spin_lock_init(&chan->cq_lock);
	INIT_WORK(&chan->repost_work, lchan_post_repost_work);
	INIT_DELAYED_WORK(&chan->cq_recheck_work, lchan_quirk_cq_recheck);
	INIT_DELAYED_WORK(&chan->rtr_look_work, lchan_iwarp_look);
	INIT_DELAYED_WORK(&chan->ka_work, lchan_keepalive_work);
	INIT_DELAYED_WORK(&chan->direct_work, lchan_direct_look);
	INIT_LIST_HEAD(&chan->dev_node);
	INIT_LIST_HEAD(&chan->poll_node);
	chan->state = LCHAN_STATE_CONNECTING;
	chan->tp = &lchan_transport_ib;	/* nothing of its own until bound */
	chan->tgid = task_tgid_vnr(current);
	kref_get(&ctx->ref);
	chan->ctx = ctx;
	/* The submission mode is fixed from the first channel on. */
	mutex_lock(&ctx->lock);
	ctx->has_chans = true;
	chan->mode = ctx->mode;
	mutex_unlock(&ctx->lock);
	trace_lchan_chan_step(chan->id, LCHAN_STEP_ALLOC);
	return chan;
}

/* The kobject's release: the last reference to the channel is gone. */
void lchan_chan_free(struct kobject *kobj)
{
	struct lchan_channel *chan = to_lchan_channel(kobj);

	ida_free(&lchan_chan_ida, chan->id);
	kfree(chan);
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

/* Attach the channel to the device its cm_id resolved to. */
int lchan_chan_bind_dev(struct lchan_channel *chan, struct ib_device *ibdev)
{
	struct ib_port_attr attr;
	struct lchan_dev *dev;
	struct lchan_pd *pd;
	int ret;

	trace_lchan_chan_step(chan->id, LCHAN_STEP_BIND);
	dev = lchan_dev_get(ibdev);
	if (!dev)
		return -ENODEV;
	pd = lchan_ctx_get_pd(chan->ctx, dev);
	if (IS_ERR(pd)) {
		lchan_dev_put(dev);
		return PTR_ERR(pd);
	}

	ret = ib_query_port(ibdev, chan->cm_id->port_num, &attr);
	if (ret)
		goto err_put;
	chan->port_num = chan->cm_id->port_num;
	chan->tp = lchan_transport_get(ibdev, chan->port_num);
	chan->max_msg_size = attr.max_msg_sz;
	chan->max_send_sge = min_t(u32, ibdev->attrs.max_send_sge,
				   LCHAN_MAX_SGE);
	chan->max_recv_sge = min_t(u32, ibdev->attrs.max_recv_sge,
				   LCHAN_MAX_SGE);
	/* iWARP reads into one buffer only. */
	chan->max_read_sge = clamp_t(u32, ibdev->attrs.max_sge_rd, 1,
				     chan->max_send_sge);
	chan->features = LCHAN_FEATURES & ~chan->tp->features_off;
	if (ibdev->attrs.atomic_cap == IB_ATOMIC_NONE)
		chan->features &= ~LCHAN_FEATURE_ATOMIC;
	if (chan->max_send_sge < 2 || chan->max_recv_sge < 2)
		chan->features &= ~LCHAN_FEATURE_MULTI_SGE;

	mutex_lock(&dev->lock);
	if (dev->dying) {
		mutex_unlock(&dev->lock);
		ret = -ENODEV;
		goto err_put;
	}
	/* The PD lives while the device does: dev->lock orders its revoke. */
	chan->empty_lkey = pd->ibpd->local_dma_lkey;
	list_add_tail(&chan->dev_node, &dev->chans);
	dev->nr_chans++;
	mutex_unlock(&dev->lock);
	chan->dev = dev;
	chan->pd = pd;
	return 0;

err_put:
	lchan_ctx_put_pd(pd);
	lchan_dev_put(dev);
	return ret;
}

static void lchan_chan_unbind_dev(struct lchan_channel *chan)
{
	struct lchan_dev *dev = chan->dev;

	if (!dev)
		return;
	mutex_lock(&dev->lock);
	if (!list_empty(&chan->dev_node)) {
		list_del_init(&chan->dev_node);
		dev->nr_chans--;
	}
	mutex_unlock(&dev->lock);
}

/*
 * IB/RoCE: data arriving before the RTU (lost on the wire) shows the
 * passive side that the connection is up.  rdma_cm learns that only when
 * told; otherwise it waits for the peer to answer a resent REP.
 * The error events say the device put the QP in error, perhaps with no
 * request of ours to fail (a peer's WRITE refused here): so is the
 * channel.  Called in any context.
 */
static void lchan_chan_qp_event(struct ib_event *event, void *context)
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
int lchan_chan_create_qp(struct lchan_channel *chan,
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
	attr.event_handler = lchan_chan_qp_event;
	attr.send_cq = chan->cq;
	attr.recv_cq = chan->cq;
	attr.cap.max_send_wr = ring->sq.entries + LCHAN_QP_OWN_PER_QUEUE;
	attr.cap.max_recv_wr = ring->rq.entries + LCHAN_QP_OWN_PER_QUEUE;
	attr.cap.max_send_sge = chan->max_send_sge;
	attr.cap.max_recv_sge = chan->max_recv_sge;
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
	ib_free_cq(chan->cq);
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
void lchan_chan_teardown(struct lchan_channel *chan)
{
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
		ib_free_cq(chan->cq);
		chan->cq = NULL;
	}
	if (chan->cm_id) {
		rdma_destroy_id(chan->cm_id);
		chan->cm_id = NULL;
	}
	lchan_iwarp_port_release(chan);
}

/* The last user is gone: free everything.  Process context. */
static void lchan_chan_destroy(struct lchan_channel *chan)
{
	lchan_dbg_chan(chan, "destroy in state %s\n",
		       lchan_sysfs_state_name(READ_ONCE(chan->state)));
	trace_lchan_chan_step(chan->id, LCHAN_STEP_CLOSE);
	lchan_poller_del_chan(chan);
	mutex_lock(&chan->lock);
	lchan_chan_teardown(chan);
	mutex_unlock(&chan->lock);
	/* No completion can queue it any more; a queued one held a ref. */
	if (cancel_work_sync(&chan->repost_work))
		lchan_chan_put(chan);
	if (cancel_delayed_work_sync(&chan->cq_recheck_work))
		lchan_chan_put(chan);
	if (cancel_delayed_work_sync(&chan->rtr_look_work))
		lchan_chan_put(chan);
	lchan_keepalive_stop(chan);
	lchan_direct_stop(chan);

	lchan_sysfs_del_chan(chan);
	lchan_chan_unbind_dev(chan);
	lchan_ring_free(&chan->ring);
	lchan_ctx_put_pd(chan->pd);
	lchan_dev_put(chan->dev);
	lchan_ctx_put(chan->ctx);
	trace_lchan_chan_step(chan->id, LCHAN_STEP_DESTROYED);
	lchan_chan_put(chan);
}

/* For connect/accept failures before a file exists. */
void lchan_chan_abort(struct lchan_channel *chan)
{
	lchan_chan_destroy(chan);
}

/* Device removal: every channel on @dev goes to the error state now. */
void lchan_chan_kill_dev(struct lchan_dev *dev)
{
	struct lchan_channel *chan;

	for (;;) {
		mutex_lock(&dev->lock);
		chan = list_first_entry_or_null(&dev->chans, struct lchan_channel,
						dev_node);
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
		lchan_chan_teardown(chan);
		mutex_unlock(&chan->lock);
		chan->cm_status = -ENODEV;
		complete_all(&chan->cm_done);
		wake_up(&chan->wq);
		lchan_chan_put(chan);
	}
}

/*
 * lchan's own kernel memory for @chan: the object and its rings.  The
 * device's QP and CQ and rdma_cm's id are not counted: their size is the
 * driver's business (sysfs kmem_bytes).
 */
size_t lchan_chan_kmem_bytes(const struct lchan_channel *chan)
{
	return sizeof(*chan) + lchan_ring_kmem_bytes(&chan->ring);
}

static int lchan_chan_release(struct inode *inode, struct file *file)
{
	lchan_chan_destroy(file->private_data);
	return 0;
}

static bool lchan_chan_done(struct lchan_channel *chan)
{
	int state = READ_ONCE(chan->state);

	return state == LCHAN_STATE_DISCONNECTED || state == LCHAN_STATE_ERROR;
}

/* Nothing more can complete: disconnected and nothing in flight. */
static bool lchan_chan_settled(struct lchan_channel *chan)
{
	return lchan_chan_done(chan) &&
	       !lchan_flow_outstanding(&chan->ring.sq) &&
	       !lchan_flow_outstanding(&chan->ring.rq);
}

/* A wait for @min CQEs is over: they are in the ring, or none can come. */
bool lchan_chan_wait_over(struct lchan_channel *chan, u32 min)
{
	return lchan_ring_cq_ready(chan) >= min || lchan_chan_settled(chan);
}

/*
 * poll() has no errno: a process other than the owner is told EPOLLERR
 * alone, at once and for good, and learns nothing about the channel.
 */
static __poll_t lchan_chan_poll(struct file *file, poll_table *wait)
{
	struct lchan_channel *chan = file->private_data;
	__poll_t mask = 0;
	int state;

	if (!lchan_ctx_owned(chan->ctx))
		return EPOLLERR;
	poll_wait(file, &chan->wq, wait);
	if (chan->mode == LCHAN_MODE_DIRECT)
		lchan_direct_poll_wait(chan);
	/*
	 * Queued on chan->wq before the CQ tail is read: pairs with the
	 * smp_mb() of wq_has_sleeper() in lchan_ring_wake(), which reads the
	 * queue after writing the tail.  Without it both can read the old
	 * values and poll() sleeps through the CQE meant to wake it.
	 */
	smp_mb();
	state = READ_ONCE(chan->state);
	if (lchan_ring_cq_ready(chan))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (state == LCHAN_STATE_CONNECTED && !lchan_transport_opening(chan))
		mask |= EPOLLOUT | EPOLLWRNORM;
	/* RDHUP: the connection is gone.  HUP: nothing more will complete. */
	if (lchan_chan_done(chan))
		mask |= EPOLLRDHUP;
	if (lchan_chan_settled(chan)) {
		mask |= EPOLLHUP;
		if (state == LCHAN_STATE_ERROR)
			mask |= EPOLLERR;
	}
	return mask;
}

static int lchan_chan_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct lchan_channel *chan = file->private_data;

	if (!lchan_ctx_owned(chan->ctx))
		return -EPERM;
	return lchan_ring_mmap(chan, vma);
}

static int lchan_chan_check_info(const struct lchan_ucmd *ucmd)
{
	const struct lchan_chan_info *info = ucmd->cmd;

	return info->flags ? -EINVAL : 0;
}

long lchan_ioctl_chan_info(struct lchan_ucmd *ucmd)
{
	struct lchan_channel *chan = ucmd->file->private_data;
	struct lchan_chan_info *info = ucmd->cmd;
	u32 size = info->size;

	*info = chan->ring.info;
	/* As every command: the caller's size goes back unchanged. */
	info->size = size;
	info->features = chan->features;
	info->id = chan->id;
	info->max_msg_size = chan->max_msg_size;
	info->remote_qpn = READ_ONCE(chan->remote_qpn);
	info->max_send_sge = chan->max_send_sge;
	info->max_recv_sge = chan->max_recv_sge;
	info->max_read_sge = chan->max_read_sge;
	if (chan->mode == LCHAN_MODE_POLLER)
		info->chan_flags = LCHAN_CHAN_POLLER;
	else if (chan->mode == LCHAN_MODE_DIRECT)
		info->chan_flags = LCHAN_CHAN_DIRECT;
	else
		info->chan_flags = 0;
	lchan_cm_sockaddr_to_addr(&chan->local, &info->local);
	lchan_cm_sockaddr_to_addr(&chan->remote, &info->remote);
	return lchan_ioctl_respond(ucmd);
}

static int lchan_chan_check_enter(const struct lchan_ucmd *ucmd)
{
	const struct lchan_enter_args *req = ucmd->cmd;

	if (req->flags & ~(LCHAN_ENTER_GETEVENTS | LCHAN_ENTER_TIMEOUT))
		return -EINVAL;
	return req->resv ? -EINVAL : 0;
}

long lchan_ioctl_enter(struct lchan_ucmd *ucmd)
{
	struct lchan_channel *chan = ucmd->file->private_data;
	struct lchan_enter_args *req = ucmd->cmd;
	u32 sq_done, rq_done;
	long ret, wret;

	if (req->min_complete > chan->ring.cq_entries)
		return -EINVAL;

	mutex_lock(&chan->lock);
	ret = lchan_post_submit(chan, &sq_done, &rq_done);
	lchan_direct_poll(chan);
	WRITE_ONCE(chan->stats.enters, chan->stats.enters + 1);
	mutex_unlock(&chan->lock);
	/* In poller mode ENTER is also the doorbell that wakes the thread. */
	lchan_poller_kick(READ_ONCE(chan->poller));
	if (ret)
		return ret;
	req->sq_consumed = sq_done;
	req->rq_consumed = rq_done;

	if ((req->flags & LCHAN_ENTER_GETEVENTS) && req->min_complete) {
		u32 min = req->min_complete;

		if (chan->mode == LCHAN_MODE_DIRECT)
			wret = lchan_direct_wait(chan, min,
					req->flags & LCHAN_ENTER_TIMEOUT,
					req->timeout_ns);
		else if (req->flags & LCHAN_ENTER_TIMEOUT)
			wret = wait_event_interruptible_hrtimeout(chan->wq,
					lchan_chan_wait_over(chan, min),
					ns_to_ktime(req->timeout_ns));
		else
			wret = wait_event_interruptible(chan->wq,
					lchan_chan_wait_over(chan, min));
		if (lchan_ring_cq_ready(chan) < min)
			ret = wret ? wret : -ENOTCONN;
	}

	req->cq_ready = lchan_ring_cq_ready(chan);
	req->state = READ_ONCE(chan->state);
	wret = lchan_ioctl_respond(ucmd);
	return ret ? ret : wret;
}

static int lchan_chan_check_establish(const struct lchan_ucmd *ucmd)
{
	const struct lchan_establish_args *req = ucmd->cmd;

	if (req->flags || req->resv || req->timeout_ms > LCHAN_MAX_TIMEOUT_MS)
		return -EINVAL;
	return 0;
}

long lchan_ioctl_establish(struct lchan_ucmd *ucmd)
{
	struct lchan_channel *chan = ucmd->file->private_data;
	const struct lchan_establish_args *req = ucmd->cmd;

	/* Only the connecting side's exchange runs without the caller. */
	return lchan_cm_establish(chan, req->timeout_ms ?:
				  LCHAN_CONNECT_TIMEOUT_MS, !chan->passive &&
				  (ucmd->file->f_flags & O_NONBLOCK));
}

/* The addresses and ring layout of CHAN_INFO are the owner's too. */
static const struct lchan_ioctl_op lchan_chan_ioctl_ops[] = {
	LCHAN_IOCTL_OWNER_OP(LCHAN_IOC_CHAN_INFO, lchan_chan_check_info,
			     lchan_ioctl_chan_info, struct lchan_chan_info,
			     max_read_sge),
	LCHAN_IOCTL_OWNER_OP(LCHAN_IOC_ENTER, lchan_chan_check_enter,
			     lchan_ioctl_enter, struct lchan_enter_args, state),
	LCHAN_IOCTL_OWNER_OP(LCHAN_IOC_ESTABLISH, lchan_chan_check_establish,
			     lchan_ioctl_establish, struct lchan_establish_args,
			     resv),
};

static long lchan_chan_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	struct lchan_channel *chan = file->private_data;

	return lchan_ioctl_dispatch(file, cmd, arg, lchan_chan_ioctl_ops,
				    ARRAY_SIZE(lchan_chan_ioctl_ops),
				    chan->ctx);
}

const struct file_operations lchan_chan_fops = {
	.owner = THIS_MODULE,
	.release = lchan_chan_release,
	.poll = lchan_chan_poll,
	.mmap = lchan_chan_mmap,
	.unlocked_ioctl = lchan_chan_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/* The channel of @fd, or NULL; on success the caller drops @f with fdput(). */
struct lchan_channel *lchan_chan_from_fd(int fd, struct fd *f)
{
	struct fd tmp = fdget(fd);

	if (!fd_file(tmp))
		return NULL;
	if (fd_file(tmp)->f_op != &lchan_chan_fops) {
		fdput(tmp);
		return NULL;
	}
	*f = tmp;
	return fd_file(tmp)->private_data;
}

/*
 * Give a connected (or deferred) channel a file descriptor and its sysfs
 * directory: the end of connect and accept.  After this the file owns the
 * channel; on failure the channel is aborted.
 */
int lchan_chan_install_fd(struct lchan_channel *chan, u32 flags)
{
	struct file *file;
	int fd, ret;

	fd = get_unused_fd_flags(O_RDWR |
				 (flags & LCHAN_FD_CLOEXEC ? O_CLOEXEC : 0));
	if (fd < 0) {
		lchan_chan_abort(chan);
		return fd;
	}
	ret = lchan_sysfs_add_chan(chan);
	if (ret)
		goto err_put_fd;
	file = anon_inode_getfile("[lchan-channel]", &lchan_chan_fops, chan,
				  O_RDWR |
				  (flags & LCHAN_FD_NONBLOCK ? O_NONBLOCK : 0));
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		goto err_del_sysfs;
	}
	/* Fully built: the poller may look at it now. */
	if (chan->mode == LCHAN_MODE_POLLER)
		lchan_poller_add_chan(chan);
	trace_lchan_chan_step(chan->id, LCHAN_STEP_FD);
	fd_install(fd, file);
	return fd;

err_del_sysfs:
	lchan_sysfs_del_chan(chan);
err_put_fd:
	put_unused_fd(fd);
	lchan_chan_abort(chan);
	return ret;
}
