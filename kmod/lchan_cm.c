// SPDX-License-Identifier: GPL-2.0
/*
 * Connections through the in-kernel RDMA connection manager: connect,
 * listen, accept, establish, and the rdma_cm event handler.
 *
 * The handler never takes chan->lock: teardown holds that lock while
 * rdma_destroy_id() waits for running handlers.  It reports to the waiting
 * ioctl through chan->cm_status + chan->cm_done and through chan->state.
 */
#include <linux/anon_inodes.h>
#include <linux/fs.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/sched/mm.h>
#include <net/net_namespace.h>
#include <linux/nsproxy.h>

#include "lchan.h"
#include "lchan_trace.h"

static const struct file_operations lchan_listener_fops;

int lchan_addr_to_sockaddr(const struct lchan_addr *a,
			   struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	switch (a->family) {
	case AF_INET: {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		if (a->scope_id || memchr_inv(a->addr + 4, 0, 12))
			return -EINVAL;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(a->port);
		memcpy(&sin->sin_addr, a->addr, 4);
		return 0;
	}
	case AF_INET6: {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(a->port);
		sin6->sin6_scope_id = a->scope_id;
		memcpy(&sin6->sin6_addr, a->addr, 16);
		return 0;
	}
	case 0:
		return -EDESTADDRREQ;
	}
	return -EAFNOSUPPORT;
}

void lchan_sockaddr_to_addr(const struct sockaddr_storage *ss,
			    struct lchan_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

		a->family = AF_INET;
		a->port = ntohs(sin->sin_port);
		memcpy(a->addr, &sin->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 =
			(const struct sockaddr_in6 *)ss;

		a->family = AF_INET6;
		a->port = ntohs(sin6->sin6_port);
		a->scope_id = sin6->sin6_scope_id;
		memcpy(a->addr, &sin6->sin6_addr, 16);
	}
}

static void lchan_copy_sockaddr(struct sockaddr_storage *dst,
				const struct sockaddr *src)
{
	memcpy(dst, src, rdma_addr_size(src));
}

/* Tell the ioctl waiting on this channel how a cm step ended. */
static void lchan_cm_report(struct lchan_chan *chan, int status)
{
	WRITE_ONCE(chan->cm_status, status);
	complete(&chan->cm_done);
}

static int lchan_cm_errno(struct rdma_cm_event *event, int fallback)
{
	return event->status < 0 ? event->status : fallback;
}

/*
 * A connection attempt that failed says why only as far as the caller can
 * act on it: timed out, or failed (retryable).  A device's own reason, such
 * as siw's -EINVAL for an MPA exchange it could not parse, would read as a
 * bad request.
 */
static int lchan_cm_conn_errno(struct rdma_cm_event *event, int fallback)
{
	return event->status == -ETIMEDOUT ? -ETIMEDOUT : fallback;
}

static int lchan_chan_event(struct lchan_chan *chan, struct rdma_cm_id *id,
			    struct rdma_cm_event *event)
{
	int ret;

	trace_lchan_cm_event(chan->id, false, event->event, event->status);

	switch (event->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(id, LCHAN_RESOLVE_TIMEOUT_MS);
		if (ret)
			lchan_cm_report(chan, ret);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		lchan_cm_report(chan, 0);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		lchan_cm_report(chan, lchan_cm_errno(event, -EHOSTUNREACH));
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		/* The passive side learnt it from the request. */
		if (event->param.conn.qp_num)
			WRITE_ONCE(chan->remote_qpn, event->param.conn.qp_num);
		lchan_chan_set_state(chan, LCHAN_STATE_CONNECTED);
		/*
		 * What waited for the connection (SQEs published before it,
		 * the iWARP first SEND) goes out now, without another ENTER.
		 */
		lchan_post_kick(chan);
		lchan_post_rtr_connected(chan);
		lchan_cm_report(chan, 0);
		break;
	case RDMA_CM_EVENT_REJECTED:
		lchan_chan_set_state(chan, LCHAN_STATE_DISCONNECTED);
		lchan_cm_report(chan, -ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
		lchan_chan_set_state(chan, LCHAN_STATE_DISCONNECTED);
		lchan_cm_report(chan, lchan_cm_conn_errno(event, -EHOSTUNREACH));
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		lchan_chan_set_state(chan, LCHAN_STATE_DISCONNECTED);
		lchan_cm_report(chan, lchan_cm_conn_errno(event, -ECONNRESET));
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		/* Move our QP to error too, so posted work is flushed. */
		rdma_disconnect(id);
		lchan_chan_set_state(chan, LCHAN_STATE_DISCONNECTED);
		lchan_cm_report(chan, -ECONNRESET);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		lchan_chan_set_state(chan, LCHAN_STATE_ERROR);
		lchan_cm_report(chan, -ENODEV);
		break;
	default:
		break;
	}
	return 0;
}

static struct lchan_conn_req *lchan_backlog_find(struct lchan_listener *lst,
						 struct rdma_cm_id *id)
{
	struct lchan_conn_req *req;

	list_for_each_entry(req, &lst->backlog, node)
		if (req->cm_id == id)
			return req;
	return NULL;
}

/*
 * Events of the listening id and of new ids not yet accepted (they carry
 * the listener as context until accept hands them to a channel).  A
 * non-zero return makes rdma_cm destroy the new id.
 */
static int lchan_listener_event(struct lchan_listener *lst,
				struct rdma_cm_id *id,
				struct rdma_cm_event *event)
{
	struct lchan_conn_req *req;
	int ret = 0;

	trace_lchan_cm_event(0, true, event->event, event->status);
	if (id == lst->cm_id) {
		if (event->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			WRITE_ONCE(lst->dead, true);
			wake_up(&lst->wq);
		}
		return 0;
	}

	if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		req = kzalloc(sizeof(*req), GFP_KERNEL);
		if (!req)
			return -ENOMEM;
		req->cm_id = id;
		req->remote_qpn = event->param.conn.qp_num;
		spin_lock(&lst->lock);
		if (READ_ONCE(lst->dead) || lst->nr_backlog >= lst->max_backlog) {
			ret = -ECONNREFUSED;
		} else {
			list_add_tail(&req->node, &lst->backlog);
			lst->nr_backlog++;
		}
		spin_unlock(&lst->lock);
		if (ret)
			kfree(req);
		else
			wake_up(&lst->wq);
		return ret;
	}

	spin_lock(&lst->lock);
	req = lchan_backlog_find(lst, id);
	if (req && event->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
		/* rdma_cm waits for this id: let it destroy the id now. */
		list_del(&req->node);
		lst->nr_backlog--;
		kfree(req);
		ret = 1;
	} else if (req) {
		/* The peer gave up; accept will discard it. */
		req->dead = true;
	}
	spin_unlock(&lst->lock);
	return ret;
}

int lchan_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *event)
{
	enum lchan_cm_kind *kind = id->context;

	if (*kind == LCHAN_CM_LISTENER)
		return lchan_listener_event(container_of(kind,
					    struct lchan_listener, kind),
					    id, event);
	return lchan_chan_event(container_of(kind, struct lchan_chan, kind),
				id, event);
}

static void lchan_conn_param(struct lchan_chan *chan,
			     struct rdma_conn_param *param)
{
	const struct ib_device_attr *attrs = &chan->dev->ibdev->attrs;

	memset(param, 0, sizeof(*param));
	param->responder_resources = min_t(int, attrs->max_qp_rd_atom, 16);
	param->initiator_depth = min_t(int, attrs->max_qp_init_rd_atom, 16);
	param->flow_control = 1;
	param->retry_count = 7;
	param->rnr_retry_count = 7;	/* IB/RoCE: wait for a receive */
}

/* Wait for the cm step in flight; 0, a negative errno or -ETIMEDOUT. */
static int lchan_cm_wait(struct lchan_chan *chan, unsigned long deadline)
{
	long left = (long)(deadline - jiffies);
	long ret;

	if (left <= 0)
		left = 1;
	ret = wait_for_completion_interruptible_timeout(&chan->cm_done, left);
	if (ret == 0)
		return -ETIMEDOUT;
	if (ret < 0)
		return -EINTR;
	return READ_ONCE(chan->cm_status);
}

/*
 * Make the connection: rdma_connect or rdma_accept, then wait for it.
 * On failure the channel is torn down and left in an error state.
 */
static int lchan_chan_do_establish(struct lchan_chan *chan, u32 timeout_ms)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(timeout_ms);
	struct rdma_conn_param param;
	u32 sq_done, rq_done;
	int ret;

	mutex_lock(&chan->lock);
	if (!chan->cm_id || !chan->qp) {
		ret = READ_ONCE(chan->state) == LCHAN_STATE_CONNECTED ?
			-EISCONN : -ENOTCONN;
		goto out_unlock;
	}
	if (chan->established_once) {
		ret = READ_ONCE(chan->state) == LCHAN_STATE_CONNECTED ?
			-EISCONN : -EALREADY;
		goto out_unlock;
	}
	chan->established_once = true;
	/*
	 * Receives published before this call must be on the QP before the
	 * peer can send: on iWARP a SEND that finds none ends the connection.
	 * In poller mode they may still be in the ring, waiting for the
	 * thread.  Before the connection is up this takes only the RQ.
	 */
	lchan_ring_submit(chan, &sq_done, &rq_done);
	reinit_completion(&chan->cm_done);
	lchan_conn_param(chan, &param);
	if (chan->passive) {
		rdma_lock_handler(chan->cm_id);
		ret = rdma_accept(chan->cm_id, &param);
		rdma_unlock_handler(chan->cm_id);
	} else {
		ret = rdma_connect(chan->cm_id, &param);
	}
	mutex_unlock(&chan->lock);
	if (ret) {
		lchan_dbg_chan(chan, "%s: %d\n", chan->passive ?
			       "rdma_accept" : "rdma_connect", ret);
		goto err_teardown;
	}

	ret = lchan_cm_wait(chan, deadline);
	if (ret == -EINTR)
		return ret;	/* still in progress: poll for EPOLLOUT */
	if (!ret && READ_ONCE(chan->state) == LCHAN_STATE_CONNECTED)
		return 0;
	if (!ret)
		ret = -ECONNRESET;

err_teardown:
	mutex_lock(&chan->lock);
	if (READ_ONCE(chan->state) != LCHAN_STATE_ERROR)
		lchan_chan_set_state(chan, LCHAN_STATE_DISCONNECTED);
	lchan_chan_teardown(chan);
	mutex_unlock(&chan->lock);
	return ret;
out_unlock:
	mutex_unlock(&chan->lock);
	return ret;
}

int lchan_establish(struct lchan_chan *chan, u32 timeout_ms)
{
	return lchan_chan_do_establish(chan, timeout_ms ?: LCHAN_CONNECT_TIMEOUT_MS);
}

static int lchan_check_fd_flags(u32 flags, u32 allowed)
{
	return flags & ~allowed ? -EINVAL : 0;
}

long lchan_connect(struct lchan_ctx *ctx, void __user *uarg)
{
	struct lchan_connect req = {};
	struct sockaddr_storage dst, src;
	struct rdma_cm_id *cm_id;
	struct lchan_chan *chan;
	unsigned long deadline;
	u32 timeout_ms;
	long ret;
	int fd;

	ret = lchan_copy_arg(&req, sizeof(req), sizeof(req), uarg);
	if (ret)
		return ret;
	ret = lchan_check_fd_flags(req.flags, LCHAN_FD_CLOEXEC |
				   LCHAN_FD_NONBLOCK | LCHAN_DEFER_ESTABLISH);
	if (ret)
		return ret;
	if (req.resv || req.timeout_ms > LCHAN_MAX_TIMEOUT_MS)
		return -EINVAL;
	ret = lchan_ring_sizes_check(&req.rings);
	if (ret)
		return ret;
	ret = lchan_addr_to_sockaddr(&req.dst, &dst);
	if (ret)
		return ret;
	if (!req.dst.port)
		return -EINVAL;
	if (req.src.family) {
		ret = lchan_addr_to_sockaddr(&req.src, &src);
		if (ret)
			return ret;
		if (src.ss_family != dst.ss_family)
			return -EINVAL;
	}
	if (current->mm != ctx->mm)
		return -EPERM;

	timeout_ms = req.timeout_ms ?: LCHAN_CONNECT_TIMEOUT_MS;
	deadline = jiffies + msecs_to_jiffies(timeout_ms);

	chan = lchan_chan_alloc(ctx);
	if (IS_ERR(chan))
		return PTR_ERR(chan);
	chan->remote = dst;

	mutex_lock(&chan->lock);
	cm_id = rdma_create_id(current->nsproxy->net_ns, lchan_cm_handler,
			       &chan->kind, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(cm_id)) {
		ret = PTR_ERR(cm_id);
		goto err_unlock;
	}
	chan->cm_id = cm_id;
	ret = rdma_resolve_addr(cm_id, req.src.family ?
				(struct sockaddr *)&src : NULL,
				(struct sockaddr *)&dst,
				min_t(u32, timeout_ms, LCHAN_RESOLVE_TIMEOUT_MS));
	mutex_unlock(&chan->lock);
	if (ret)
		goto err_abort;

	ret = lchan_cm_wait(chan, deadline);
	if (ret)
		goto err_abort;

	mutex_lock(&chan->lock);
	if (!chan->cm_id) {
		ret = -ENODEV;
		goto err_unlock;
	}
	ret = lchan_chan_bind_dev(chan, cm_id->device);
	if (ret)
		goto err_unlock;
	ret = lchan_chan_create_qp(chan, &req.rings);
	if (ret)
		goto err_unlock;
	lchan_copy_sockaddr(&chan->local, (struct sockaddr *)
			    &cm_id->route.addr.src_addr);
	mutex_unlock(&chan->lock);

	if (!(req.flags & LCHAN_DEFER_ESTABLISH)) {
		long left = (long)(deadline - jiffies);

		ret = lchan_chan_do_establish(chan, left > 0 ?
					      jiffies_to_msecs(left) : 1);
		if (ret)
			goto err_abort;
	}

	fd = lchan_chan_install_fd(chan, req.flags);
	if (fd < 0) {
		ret = fd;
		goto err_abort;
	}
	return fd;

err_unlock:
	mutex_unlock(&chan->lock);
err_abort:
	lchan_chan_abort(chan);
	return ret == -ERESTARTSYS ? -EINTR : ret;
}

/* Listener */

static void lchan_listener_free(struct kref *ref)
{
	struct lchan_listener *lst = container_of(ref, struct lchan_listener,
						  ref);

	lchan_ctx_put(lst->ctx);
	kfree(lst);
}

/* Stop listening and refuse whoever waits in the backlog. */
static void lchan_listener_shutdown(struct lchan_listener *lst)
{
	struct lchan_conn_req *req, *next;
	LIST_HEAD(pending);

	mutex_lock(&lst->mutex);
	WRITE_ONCE(lst->dead, true);
	if (lst->cm_id) {
		rdma_destroy_id(lst->cm_id);	/* no handler runs after */
		lst->cm_id = NULL;
	}
	mutex_unlock(&lst->mutex);

	spin_lock(&lst->lock);
	list_splice_init(&lst->backlog, &pending);
	lst->nr_backlog = 0;
	spin_unlock(&lst->lock);
	list_for_each_entry_safe(req, next, &pending, node) {
		rdma_destroy_id(req->cm_id);
		kfree(req);
	}
	wake_up(&lst->wq);
}

static void lchan_listener_unbind_dev(struct lchan_listener *lst)
{
	struct lchan_dev *dev = lst->dev;

	if (!dev)
		return;
	mutex_lock(&dev->lock);
	list_del_init(&lst->dev_node);
	mutex_unlock(&dev->lock);
}

static int lchan_listener_release(struct inode *inode, struct file *file)
{
	struct lchan_listener *lst = file->private_data;

	lchan_listener_shutdown(lst);
	lchan_listener_unbind_dev(lst);
	lchan_dev_put(lst->dev);
	kref_put(&lst->ref, lchan_listener_free);
	return 0;
}

/* Device removal: listeners bound to an address on @dev stop. */
void lchan_dev_kill_listeners(struct lchan_dev *dev)
{
	struct lchan_listener *lst;

	for (;;) {
		mutex_lock(&dev->lock);
		lst = list_first_entry_or_null(&dev->lsts,
					       struct lchan_listener, dev_node);
		if (lst) {
			list_del_init(&lst->dev_node);
			kref_get(&lst->ref);
		}
		mutex_unlock(&dev->lock);
		if (!lst)
			break;
		lchan_listener_shutdown(lst);
		kref_put(&lst->ref, lchan_listener_free);
	}
}

static __poll_t lchan_listener_poll(struct file *file, poll_table *wait)
{
	struct lchan_listener *lst = file->private_data;
	__poll_t mask = 0;

	poll_wait(file, &lst->wq, wait);
	spin_lock(&lst->lock);
	if (!list_empty(&lst->backlog))
		mask |= EPOLLIN | EPOLLRDNORM;
	spin_unlock(&lst->lock);
	if (READ_ONCE(lst->dead))
		mask |= EPOLLERR | EPOLLHUP;
	return mask;
}

static struct lchan_conn_req *lchan_backlog_pop(struct lchan_listener *lst)
{
	struct lchan_conn_req *req;

	spin_lock(&lst->lock);
	req = list_first_entry_or_null(&lst->backlog, struct lchan_conn_req,
				       node);
	if (req) {
		list_del(&req->node);
		lst->nr_backlog--;
	}
	spin_unlock(&lst->lock);
	return req;
}

/* Next live request, waiting unless @nonblock. */
static struct rdma_cm_id *lchan_listener_next(struct lchan_listener *lst,
					      bool nonblock, u32 *remote_qpn)
{
	struct lchan_conn_req *req;
	struct rdma_cm_id *id;
	bool dead;
	int ret;

	for (;;) {
		req = lchan_backlog_pop(lst);
		if (!req) {
			if (READ_ONCE(lst->dead))
				return ERR_PTR(-ENODEV);
			if (nonblock)
				return ERR_PTR(-EAGAIN);
			ret = wait_event_interruptible(lst->wq,
					!list_empty(&lst->backlog) ||
					READ_ONCE(lst->dead));
			if (ret)
				return ERR_PTR(-EINTR);
			continue;
		}
		id = req->cm_id;
		/* The handler sets 'dead' with the handler lock held. */
		rdma_lock_handler(id);
		dead = req->dead;
		rdma_unlock_handler(id);
		*remote_qpn = req->remote_qpn;
		kfree(req);
		if (!dead)
			return id;
		rdma_destroy_id(id);
	}
}

static long lchan_listener_accept(struct file *file, void __user *uarg)
{
	struct lchan_listener *lst = file->private_data;
	struct lchan_accept req = {};
	struct rdma_cm_id *id;
	struct lchan_chan *chan;
	long ret;
	int fd;

	ret = lchan_copy_arg(&req, sizeof(req), offsetof(struct lchan_accept,
							 peer), uarg);
	if (ret)
		return ret;
	ret = lchan_check_fd_flags(req.flags, LCHAN_FD_CLOEXEC |
				   LCHAN_FD_NONBLOCK | LCHAN_DEFER_ESTABLISH);
	if (ret)
		return ret;
	/* Refuse a bad request before it costs a peer its connection. */
	ret = lchan_ring_sizes_check(&req.rings);
	if (ret)
		return ret;
	if (current->mm != lst->ctx->mm)
		return -EPERM;

	chan = lchan_chan_alloc(lst->ctx);
	if (IS_ERR(chan))
		return PTR_ERR(chan);
	chan->passive = true;

	id = lchan_listener_next(lst, file->f_flags & O_NONBLOCK,
				 &chan->remote_qpn);
	if (IS_ERR(id)) {
		ret = PTR_ERR(id);
		goto err_abort;
	}

	mutex_lock(&chan->lock);
	chan->cm_id = id;
	rdma_lock_handler(id);
	id->context = &chan->kind;	/* from now on events are ours */
	rdma_unlock_handler(id);
	ret = lchan_chan_bind_dev(chan, id->device);
	if (ret)
		goto err_unlock;
	ret = lchan_chan_create_qp(chan, &req.rings);
	if (ret)
		goto err_unlock;
	lchan_copy_sockaddr(&chan->local, (struct sockaddr *)
			    &id->route.addr.src_addr);
	lchan_copy_sockaddr(&chan->remote, (struct sockaddr *)
			    &id->route.addr.dst_addr);
	mutex_unlock(&chan->lock);

	if (!(req.flags & LCHAN_DEFER_ESTABLISH)) {
		ret = lchan_chan_do_establish(chan, LCHAN_CONNECT_TIMEOUT_MS);
		if (ret)
			goto err_abort;
	}

	lchan_sockaddr_to_addr(&chan->remote, &req.peer);
	ret = lchan_copy_out(uarg, &req, sizeof(req));
	if (ret)
		goto err_abort;
	fd = lchan_chan_install_fd(chan, req.flags);
	if (fd < 0) {
		ret = fd;
		goto err_abort;
	}
	return fd;

err_unlock:
	mutex_unlock(&chan->lock);
err_abort:
	lchan_chan_abort(chan);
	return ret;
}

static long lchan_listener_ioctl(struct file *file, unsigned int cmd,
				 unsigned long arg)
{
	if (cmd == LCHAN_IOC_ACCEPT)
		return lchan_listener_accept(file, (void __user *)arg);
	return -ENOTTY;
}

static const struct file_operations lchan_listener_fops = {
	.owner = THIS_MODULE,
	.release = lchan_listener_release,
	.poll = lchan_listener_poll,
	.unlocked_ioctl = lchan_listener_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static int lchan_listener_bind_dev(struct lchan_listener *lst,
				   struct ib_device *ibdev)
{
	struct lchan_dev *dev = lchan_dev_get(ibdev);

	if (!dev)
		return -ENODEV;
	mutex_lock(&dev->lock);
	if (dev->dying) {
		mutex_unlock(&dev->lock);
		lchan_dev_put(dev);
		return -ENODEV;
	}
	list_add_tail(&lst->dev_node, &dev->lsts);
	mutex_unlock(&dev->lock);
	lst->dev = dev;
	return 0;
}

long lchan_listen(struct lchan_ctx *ctx, void __user *uarg)
{
	struct lchan_listen req = {};
	struct sockaddr_storage ss;
	struct lchan_listener *lst;
	struct rdma_cm_id *cm_id;
	long ret;
	int fd;

	ret = lchan_copy_arg(&req, sizeof(req), sizeof(req), uarg);
	if (ret)
		return ret;
	ret = lchan_check_fd_flags(req.flags, LCHAN_FD_CLOEXEC |
				   LCHAN_FD_NONBLOCK);
	if (ret)
		return ret;
	if (req.resv || req.backlog > LCHAN_MAX_BACKLOG)
		return -EINVAL;
	ret = lchan_addr_to_sockaddr(&req.addr, &ss);
	if (ret)
		return ret;
	if (current->mm != ctx->mm)
		return -EPERM;

	lst = kzalloc(sizeof(*lst), GFP_KERNEL);
	if (!lst)
		return -ENOMEM;
	lst->kind = LCHAN_CM_LISTENER;
	kref_init(&lst->ref);
	mutex_init(&lst->mutex);
	spin_lock_init(&lst->lock);
	INIT_LIST_HEAD(&lst->backlog);
	INIT_LIST_HEAD(&lst->dev_node);
	init_waitqueue_head(&lst->wq);
	lst->max_backlog = req.backlog ?: LCHAN_DEFAULT_BACKLOG;
	kref_get(&ctx->ref);
	lst->ctx = ctx;

	cm_id = rdma_create_id(current->nsproxy->net_ns, lchan_cm_handler,
			       &lst->kind, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(cm_id)) {
		ret = PTR_ERR(cm_id);
		goto err_put;
	}
	lst->cm_id = cm_id;
	ret = rdma_bind_addr(cm_id, (struct sockaddr *)&ss);
	if (ret)
		goto err_shutdown;
	/* A specific address pins the listener to one device. */
	if (cm_id->device) {
		ret = lchan_listener_bind_dev(lst, cm_id->device);
		if (ret)
			goto err_shutdown;
	}
	ret = rdma_listen(cm_id, lst->max_backlog);
	if (ret)
		goto err_unbind;

	lchan_sockaddr_to_addr((struct sockaddr_storage *)
			       &cm_id->route.addr.src_addr, &req.addr);
	ret = lchan_copy_out(uarg, &req, sizeof(req));
	if (ret)
		goto err_unbind;

	fd = anon_inode_getfd("[lchan-listener]", &lchan_listener_fops, lst,
			      O_RDWR |
			      (req.flags & LCHAN_FD_CLOEXEC ? O_CLOEXEC : 0) |
			      (req.flags & LCHAN_FD_NONBLOCK ? O_NONBLOCK : 0));
	if (fd < 0) {
		ret = fd;
		goto err_unbind;
	}
	return fd;

err_unbind:
	lchan_listener_unbind_dev(lst);
err_shutdown:
	lchan_listener_shutdown(lst);
	lchan_dev_put(lst->dev);
err_put:
	kref_put(&lst->ref, lchan_listener_free);
	return ret;
}
