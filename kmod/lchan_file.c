// SPDX-License-Identifier: GPL-2.0
/*
 * A channel's file: made at the end of connect and accept, it owns the
 * channel; poll, mmap and the data-path ioctls; the channel's end at its
 * last close.
 */
#include <linux/anon_inodes.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/hrtimer.h>

#include "lchan.h"
#include "lchan_trace.h"

/* The last user is gone: free everything.  Process context. */
static void lchan_file_end(struct lchan_channel *chan)
{
	lchan_dbg_chan(chan, "destroy in state %s\n",
		       lchan_sysfs_state_name(READ_ONCE(chan->state)));
	trace_lchan_chan_step(chan->id, LCHAN_STEP_CLOSE);
	lchan_parts_detach(chan);
	mutex_lock(&chan->lock);
	lchan_qp_teardown(chan);
	mutex_unlock(&chan->lock);
	lchan_parts_stop(chan);

	lchan_sysfs_del_chan(chan);
	lchan_dev_del_chan(chan);
	lchan_ring_free(&chan->ring);
	lchan_ctx_put_pd(chan->pd);
	lchan_dev_put(chan->dev);
	lchan_ctx_put(chan->ctx);
	trace_lchan_chan_step(chan->id, LCHAN_STEP_DESTROYED);
	lchan_chan_put(chan);
}

/*
 * The end of a channel whose request the transport cannot withdraw:
 * bounded by the provider's own timeout for the exchange.  The module's
 * exit flushes the workqueue before the devices go.
 */
static void lchan_file_end_work(struct work_struct *work)
{
	struct lchan_channel *chan = container_of(work, struct lchan_channel,
						  conn.end_work);

	wait_event(chan->wq, !READ_ONCE(chan->conn.in_flight));
	lchan_file_end(chan);
}

/*
 * Neither a close nor a failed connect waits for a request's answer
 * (lchan_connect_held()): the channel leaves sysfs now and ends in the
 * background, still counted in its device's channels.
 */
static void lchan_file_destroy(struct lchan_channel *chan)
{
	if (!lchan_connect_held(chan)) {
		lchan_file_end(chan);
		return;
	}
	lchan_dbg_chan(chan, "ends once its request is answered\n");
	/* A late ESTABLISHED disconnects at once (lchan_cm.c). */
	lchan_chan_set_state(chan, LCHAN_STATE_DISCONNECTED);
	lchan_sysfs_del_chan(chan);
	INIT_WORK(&chan->conn.end_work, lchan_file_end_work);
	queue_work(lchan_wq, &chan->conn.end_work);
}

/* For connect/accept failures before a file exists. */
void lchan_file_abort(struct lchan_channel *chan)
{
	lchan_file_destroy(chan);
}

static int lchan_file_release(struct inode *inode, struct file *file)
{
	lchan_file_destroy(file->private_data);
	return 0;
}

/*
 * poll() has no errno: a process other than the owner is told EPOLLERR
 * alone, at once and for good, and learns nothing about the channel.
 */
static __poll_t lchan_file_poll(struct file *file, poll_table *wait)
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

static int lchan_file_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct lchan_channel *chan = file->private_data;

	if (!lchan_ctx_owned(chan->ctx))
		return -EPERM;
	return lchan_ring_mmap(chan, vma);
}

static int lchan_ioctl_chan_info_check(const struct lchan_ucmd *ucmd)
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
	info->features = chan->caps.features;
	info->id = chan->id;
	info->max_msg_size = chan->caps.max_msg_size;
	info->remote_qpn = READ_ONCE(chan->conn.remote_qpn);
	info->max_send_sge = chan->caps.max_send_sge;
	info->max_recv_sge = chan->caps.max_recv_sge;
	info->max_read_sge = chan->caps.max_read_sge;
	if (chan->mode == LCHAN_MODE_POLLER)
		info->chan_flags = LCHAN_CHAN_POLLER;
	else if (chan->mode == LCHAN_MODE_DIRECT)
		info->chan_flags = LCHAN_CHAN_DIRECT;
	else
		info->chan_flags = 0;
	lchan_cm_sockaddr_to_addr(&chan->conn.local, &info->local);
	lchan_cm_sockaddr_to_addr(&chan->conn.remote, &info->remote);
	return lchan_ioctl_respond(ucmd);
}

static int lchan_ioctl_enter_check(const struct lchan_ucmd *ucmd)
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
	lchan_poller_kick_chan(chan);
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

/* The addresses and ring layout of CHAN_INFO are the owner's too. */
static const struct lchan_ioctl_op lchan_file_ioctl_ops[] = {
	LCHAN_IOCTL_OWNER_OP(LCHAN_IOC_CHAN_INFO, lchan_ioctl_chan_info_check,
			     lchan_ioctl_chan_info, struct lchan_chan_info,
			     max_read_sge),
	LCHAN_IOCTL_OWNER_OP(LCHAN_IOC_ENTER, lchan_ioctl_enter_check,
			     lchan_ioctl_enter, struct lchan_enter_args, state),
	LCHAN_IOCTL_OWNER_OP(LCHAN_IOC_ESTABLISH, lchan_ioctl_establish_check,
			     lchan_ioctl_establish, struct lchan_establish_args,
			     resv),
};

static long lchan_file_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	struct lchan_channel *chan = file->private_data;

	return lchan_ioctl_dispatch(file, cmd, arg, lchan_file_ioctl_ops,
				    ARRAY_SIZE(lchan_file_ioctl_ops),
				    chan->ctx);
}

static const struct file_operations lchan_file_fops = {
	.owner = THIS_MODULE,
	.release = lchan_file_release,
	.poll = lchan_file_poll,
	.mmap = lchan_file_mmap,
	.unlocked_ioctl = lchan_file_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/* The channel of @fd, or NULL; on success the caller drops @f with fdput(). */
struct lchan_channel *lchan_file_chan(int fd, struct fd *f)
{
	struct fd tmp = fdget(fd);

	if (!fd_file(tmp))
		return NULL;
	if (fd_file(tmp)->f_op != &lchan_file_fops) {
		fdput(tmp);
		return NULL;
	}
	*f = tmp;
	return fd_file(tmp)->private_data;
}

/*
 * Give a connected (or deferred) channel a file descriptor: the last stage
 * of connect and accept (lchan_connect.c).  After this the file owns the
 * channel; on failure the channel is aborted.
 */
int lchan_file_install(struct lchan_channel *chan, u32 flags)
{
	struct file *file;
	int fd, ret;

	ret = lchan_charge_room();
	if (ret) {
		lchan_file_abort(chan);
		return ret;
	}
	fd = get_unused_fd_flags(O_RDWR |
				 (flags & LCHAN_FD_CLOEXEC ? O_CLOEXEC : 0));
	if (fd < 0) {
		lchan_file_abort(chan);
		return fd;
	}
	file = anon_inode_getfile("[lchan-channel]", &lchan_file_fops, chan,
				  O_RDWR |
				  (flags & LCHAN_FD_NONBLOCK ? O_NONBLOCK : 0));
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		goto err_put_fd;
	}
	/* Fully built: the parts that run on their own may see it now. */
	lchan_parts_attach(chan);
	trace_lchan_chan_step(chan->id, LCHAN_STEP_FD);
	fd_install(fd, file);
	return fd;

err_put_fd:
	put_unused_fd(fd);
	lchan_file_abort(chan);
	return ret;
}
