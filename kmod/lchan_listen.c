// SPDX-License-Identifier: GPL-2.0
/*
 * The listener object and its file: an rdma_cm id listening on an address,
 * the backlog of connection requests it received, and accept.
 *
 * The cm handler keeps the backlog under lst->lock and never sleeps on the
 * listener; lst->mutex orders the listening id's teardown against accept.
 */
#include <linux/anon_inodes.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/net.h>
#include <linux/nsproxy.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>

#include "lchan.h"
#include "lchan_trace.h"

static const struct file_operations lchan_listen_fops;

/*
 * Listeners of the initial namespace by address, where a peer's set-up
 * over a link looks for one (lchan_listen_link_setup()).
 */
static LIST_HEAD(lchan_listen_table);
static DEFINE_SPINLOCK(lchan_listen_table_lock);

static struct lchan_conn_req *
lchan_listen_backlog_find(struct lchan_listen_point *lst,
			  struct rdma_cm_id *id)
{
	struct lchan_conn_req *req;

	list_for_each_entry(req, &lst->backlog, node)
		if (req->cm_id == id)
			return req;
	return NULL;
}

/* A backlog entry goes, and with it what it holds of its link. */
static void lchan_listen_req_free(struct lchan_conn_req *req)
{
	if (req->link)
		lchan_link_put(req->link);
	kfree(req);
}

/*
 * Events of the listening id and of new ids not yet accepted (they carry
 * the listener as context until accept hands them to a channel).  A
 * non-zero return makes rdma_cm destroy the new id.
 */
int lchan_listen_cm_event(struct lchan_listen_point *lst,
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
		req->open_exchange = lchan_transport_request_wants(id,
							&event->param.conn);
		req->stream = lchan_hello_says_stream(&event->param.conn);
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
	req = lchan_listen_backlog_find(lst, id);
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

static void lchan_listen_free(struct kref *ref)
{
	struct lchan_listen_point *lst = container_of(ref,
						      struct lchan_listen_point,
						      ref);

	lchan_ctx_put(lst->ctx);
	kfree(lst);
}

/* Stop listening and refuse whoever waits in the backlog. */
static void lchan_listen_shutdown(struct lchan_listen_point *lst)
{
	struct lchan_conn_req *req, *next;
	LIST_HEAD(pending);

	spin_lock(&lchan_listen_table_lock);
	list_del_init(&lst->table_node);
	spin_unlock(&lchan_listen_table_lock);
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
		/* Over a link the peer learns it from its keepalive. */
		if (req->chan)
			lchan_file_abort(req->chan);
		else
			rdma_destroy_id(req->cm_id);
		lchan_listen_req_free(req);
	}
	wake_up(&lst->wq);
}

static void lchan_listen_unbind_dev(struct lchan_listen_point *lst)
{
	struct lchan_dev *dev = lst->dev;

	if (!dev)
		return;
	mutex_lock(&dev->lock);
	list_del_init(&lst->dev_node);
	mutex_unlock(&dev->lock);
}

/* The end of a listener lchan_listen_open() made. */
void lchan_listen_close(struct lchan_listen_point *lst)
{
	lchan_listen_shutdown(lst);
	lchan_listen_unbind_dev(lst);
	lchan_dev_put(lst->dev);
	kref_put(&lst->ref, lchan_listen_free);
}

static int lchan_listen_release(struct inode *inode, struct file *file)
{
	lchan_listen_close(file->private_data);
	return 0;
}

/* Device removal: listeners bound to an address on @dev stop. */
void lchan_listen_kill_dev(struct lchan_dev *dev)
{
	struct lchan_listen_point *lst;

	for (;;) {
		mutex_lock(&dev->lock);
		lst = list_first_entry_or_null(&dev->lsts,
					       struct lchan_listen_point,
					       dev_node);
		if (lst) {
			list_del_init(&lst->dev_node);
			kref_get(&lst->ref);
		}
		mutex_unlock(&dev->lock);
		if (!lst)
			break;
		lchan_listen_shutdown(lst);
		kref_put(&lst->ref, lchan_listen_free);
	}
}

/* Whether a request waits in the backlog. */
bool lchan_listen_pending(struct lchan_listen_point *lst)
{
	bool pending;

	spin_lock(&lst->lock);
	pending = !list_empty(&lst->backlog);
	spin_unlock(&lst->lock);
	return pending;
}

/* As a channel's: EPOLLERR alone for a process other than the owner. */
static __poll_t lchan_listen_poll(struct file *file, poll_table *wait)
{
	struct lchan_listen_point *lst = file->private_data;
	__poll_t mask = 0;

	if (!lchan_ctx_owned(lst->ctx))
		return EPOLLERR;
	poll_wait(file, &lst->wq, wait);
	if (lchan_listen_pending(lst))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (READ_ONCE(lst->dead))
		mask |= EPOLLERR | EPOLLHUP;
	return mask;
}

static struct lchan_conn_req *
lchan_listen_backlog_pop(struct lchan_listen_point *lst)
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

/*
 * Next live request of a stream if @stream, else of anything but a
 * stream, waiting unless @nonblock; what it says goes to @chan, and to
 * @open_flags whether it asks for the opening exchange.  The others are
 * refused on the way: a stream's peer must be one (lchan_hello.c).
 */
static struct rdma_cm_id *lchan_listen_next(struct lchan_listen_point *lst,
					    bool nonblock, bool stream,
					    struct lchan_channel *chan,
					    u32 *open_flags,
					    struct lchan_channel **ready)
{
	struct lchan_conn_req *req;
	struct rdma_cm_id *id;
	bool dead;
	int ret;

	for (;;) {
		req = lchan_listen_backlog_pop(lst);
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
		if (req->chan) {
			/*
			 * Set up over a link, which a stream never asks for;
			 * its device may have gone.
			 */
			*ready = req->chan;
			lchan_listen_req_free(req);
			if (!stream && !lchan_chan_done(*ready))
				return NULL;
			lchan_file_abort(*ready);
			*ready = NULL;
			continue;
		}
		id = req->cm_id;
		/* The handler sets 'dead' with the handler lock held. */
		rdma_lock_handler(id);
		dead = req->dead;
		rdma_unlock_handler(id);
		if (!dead && req->stream != stream) {
			rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
			dead = true;
		}
		chan->conn.remote_qpn = req->remote_qpn;
		*open_flags = req->open_exchange ? LCHAN_OPEN_EXCHANGE : 0;
		kfree(req);
		if (!dead)
			return id;
		rdma_destroy_id(id);
	}
}

int lchan_ioctl_accept_check(const struct lchan_ucmd *ucmd)
{
	const struct lchan_accept_args *req = ucmd->cmd;
	int ret;

	/* The connecting side asks for the exchange; a request says so. */
	if (req->flags & LCHAN_OPEN_EXCHANGE)
		return -EINVAL;
	ret = lchan_connect_check_open(req->flags, &req->rings, &req->rc);
	if (ret)
		return ret;
	return lchan_stream_check(req->flags, &req->rings);
}

/* Accept's stages after reach for a stream channel (lchan_stream.c). */
static long lchan_listen_accept_stream(struct lchan_ucmd *ucmd,
				       struct lchan_channel *chan,
				       u32 open_flags)
{
	struct lchan_accept_args *req = ucmd->cmd;
	struct lchan_stream *st;
	long ret;

	st = lchan_stream_open(chan, &req->rc, req->flags | open_flags, NULL);
	if (IS_ERR(st))
		return PTR_ERR(st) == -ERESTARTSYS ? -EINTR : PTR_ERR(st);
	lchan_cm_sockaddr_to_addr(&chan->conn.remote, &req->peer);
	ret = lchan_ioctl_respond(ucmd);
	if (ret) {
		lchan_stream_abort(st);
		return ret;
	}
	return lchan_stream_install(st, req->flags);
}

/*
 * Accept's first stages: a channel of @lst's context for the next live
 * request (of a stream if @stream, else of anything but a stream),
 * waiting for one unless @nonblock, with the request's id and in
 * @open_flags whether it asks for the opening exchange; or the channel a
 * link set up for it (*@ready, never for a stream).
 */
static struct lchan_channel *lchan_listen_take(struct lchan_listen_point *lst,
					       bool nonblock, bool stream,
					       u32 *open_flags, bool *ready)
{
	struct lchan_channel *chan, *built = NULL;
	struct rdma_cm_id *id;

	chan = lchan_connect_new(lst->ctx);
	if (IS_ERR(chan))
		return chan;
	chan->conn.passive = true;

	*open_flags = 0;
	id = lchan_listen_next(lst, nonblock, stream, chan, open_flags,
			       &built);
	if (IS_ERR(id)) {
		lchan_file_abort(chan);
		return ERR_CAST(id);
	}
	*ready = built;
	if (built) {
		/* Set up over a link: the channel waited, built, in RTR. */
		lchan_file_abort(chan);
		return built;
	}

	mutex_lock(&chan->lock);
	chan->cm_id = id;
	rdma_lock_handler(id);
	id->context = &chan->kind;	/* from now on events are ours */
	rdma_unlock_handler(id);
	lchan_cm_copy_sockaddr(&chan->conn.remote, (struct sockaddr *)
			       &id->route.addr.dst_addr);
	mutex_unlock(&chan->lock);
	return chan;
}

/*
 * The stream listener's accept (lchan_stream_listen.c): a stream channel
 * for the next stream's request, accepted, its peer's answer still to come
 * (lchan_stream_finish()); -EAGAIN when none waits.
 */
struct lchan_stream *lchan_listen_next_stream(struct lchan_listen_point *lst)
{
	static const struct lchan_rc_params rc;
	struct lchan_channel *chan;
	struct lchan_stream *st;
	u32 open_flags;
	bool ready;

	chan = lchan_listen_take(lst, true, true, &open_flags, &ready);
	if (IS_ERR(chan))
		return ERR_CAST(chan);
	st = lchan_stream_start(chan, &rc, LCHAN_FD_STREAM | open_flags, NULL);
	if (IS_ERR(st) && PTR_ERR(st) == -ERESTARTSYS)
		return ERR_PTR(-EINTR);
	return st;
}

long lchan_ioctl_accept(struct lchan_ucmd *ucmd)
{
	struct file *file = ucmd->file;
	struct lchan_listen_point *lst = file->private_data;
	struct lchan_accept_args *req = ucmd->cmd;
	struct lchan_channel *chan;
	u32 open_flags;
	bool ready;
	long ret;

	chan = lchan_listen_take(lst, file->f_flags & O_NONBLOCK,
				 req->flags & LCHAN_FD_STREAM, &open_flags,
				 &ready);
	if (IS_ERR(chan))
		return PTR_ERR(chan);
	if (ready) {
		ret = lchan_link_chan_accept(chan, &req->rings, &req->rc,
					     req->flags);
		if (ret)
			goto err_abort;
		goto out_respond;
	}

	if (req->flags & LCHAN_FD_STREAM)
		return lchan_listen_accept_stream(ucmd, chan, open_flags);
	/* The request's answer to the exchange stands for the caller's. */
	ret = lchan_connect_open(chan, &req->rings, &req->rc,
				 req->flags | open_flags, NULL);
	if (ret)
		goto err_abort;

out_respond:
	lchan_cm_sockaddr_to_addr(&chan->conn.remote, &req->peer);
	ret = lchan_ioctl_respond(ucmd);
	if (ret)
		goto err_abort;
	return lchan_file_install(chan, req->flags);

err_abort:
	lchan_file_abort(chan);
	return ret;
}

static const struct lchan_ioctl_op lchan_listen_ioctl_ops[] = {
	LCHAN_IOCTL_OWNER_OP(LCHAN_IOC_ACCEPT, lchan_ioctl_accept_check,
			     lchan_ioctl_accept, struct lchan_accept_args, rings),
};

static long lchan_listen_ioctl(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	struct lchan_listen_point *lst = file->private_data;

	return lchan_ioctl_dispatch(file, cmd, arg, lchan_listen_ioctl_ops,
				    ARRAY_SIZE(lchan_listen_ioctl_ops),
				    lst->ctx);
}

static const struct file_operations lchan_listen_fops = {
	.owner = THIS_MODULE,
	.release = lchan_listen_release,
	.poll = lchan_listen_poll,
	.unlocked_ioctl = lchan_listen_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static int lchan_listen_bind_dev(struct lchan_listen_point *lst,
				 struct ib_device *ibdev)
{
	struct lchan_dev *dev = lchan_dev_get(ibdev);
	int ret;

	if (!dev)
		return -ENODEV;
	ret = lchan_dev_join(dev, &lst->dev_node, &dev->lsts);
	if (ret) {
		lchan_dev_put(dev);
		return ret;
	}
	lst->dev = dev;
	return 0;
}

/*
 * Into the table set-ups over links look in, if the listener is in the
 * initial namespace: links serve no other.
 */
static void lchan_listen_publish(struct lchan_listen_point *lst)
{
	if (!net_eq(current->nsproxy->net_ns, &init_net))
		return;
	lchan_cm_copy_sockaddr(&lst->addr, (struct sockaddr *)
			       &lst->cm_id->route.addr.src_addr);
	spin_lock(&lchan_listen_table_lock);
	list_add_tail(&lst->table_node, &lchan_listen_table);
	spin_unlock(&lchan_listen_table_lock);
}

/* Whether @addr is its family's wildcard address. */
bool lchan_listen_wildcard(const struct sockaddr_storage *addr)
{
	if (addr->ss_family == AF_INET)
		return ((const struct sockaddr_in *)addr)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	return ipv6_addr_any(&((const struct sockaddr_in6 *)addr)->sin6_addr);
}

/*
 * Whether an IPv6 wildcard listener hears IPv4 peers too: rdma_cm binds
 * it so unless the initial namespace's bindv6only says otherwise (lchan
 * never sets afonly on a listener).
 */
static bool lchan_listen_v6_hears_v4(void)
{
#if IS_ENABLED(CONFIG_IPV6)
	return !READ_ONCE(init_net.ipv6.sysctl.bindv6only);
#else
	return false;
#endif
}

/*
 * The listener on @local (a link's key: port 0) port @port, else one on
 * a wildcard address that hears it as rdma_cm's would: a counted
 * reference, or NULL.
 */
static struct lchan_listen_point *
lchan_listen_find(const struct sockaddr_storage *local, u16 port)
{
	struct lchan_listen_point *lst, *found = NULL;
	struct sockaddr_storage key;
	bool same;

	spin_lock(&lchan_listen_table_lock);
	list_for_each_entry(lst, &lchan_listen_table, table_node) {
		if (lchan_link_addr_port(&lst->addr) != port ||
		    READ_ONCE(lst->dead))
			continue;
		same = lst->addr.ss_family == local->ss_family;
		if (same && !lchan_link_addr_key(&key, (struct sockaddr *)
						 &lst->addr) &&
		    !memcmp(&key, local, sizeof(key))) {
			found = lst;
			break;
		}
		if (found || !lchan_listen_wildcard(&lst->addr))
			continue;
		if (same || (lst->addr.ss_family == AF_INET6 &&
			     lchan_listen_v6_hears_v4()))
			found = lst;
	}
	if (found)
		kref_get(&found->ref);
	spin_unlock(&lchan_listen_table_lock);
	return found;
}

/*
 * A place in @lst's backlog for a set-up over a link, taken before the
 * channel is built: -EBUSY when the backlog is full, -ECONNREFUSED when
 * the listener is going.
 */
static int lchan_listen_reserve(struct lchan_listen_point *lst)
{
	int ret = 0;

	spin_lock(&lst->lock);
	if (READ_ONCE(lst->dead))
		ret = -ECONNREFUSED;
	else if (lst->nr_backlog >= lst->max_backlog)
		ret = -EBUSY;
	else
		lst->nr_backlog++;
	spin_unlock(&lst->lock);
	return ret;
}

static void lchan_listen_unreserve(struct lchan_listen_point *lst)
{
	spin_lock(&lst->lock);
	lst->nr_backlog--;
	spin_unlock(&lst->lock);
}

/*
 * A peer's SETUP_REQ @msg on the passive link @link (its set-up work,
 * lchan_link_msg.c): the listener on the link's address and the
 * request's port, a place in its backlog as a cm request would take,
 * the channel in RTR, the reply; once the reply is out, the channel
 * waits in the backlog for accept.  Each request is answered; a reply
 * that cannot go leaves nothing behind.  The set-up counts as done or
 * failed before its reply leaves.  Process context.
 */
void lchan_listen_link_setup(struct lchan_link *link,
			     const struct lchan_link_msg *msg)
{
	struct lchan_link_msg rep = {
		.type = LCHAN_LINK_SETUP_REP,
		.req_id = msg->req_id,
	};
	struct lchan_channel *chan = NULL;
	struct lchan_listen_point *lst;
	struct lchan_conn_req *req = NULL;
	int ret;

	lst = lchan_listen_find(&link->local, msg->setup.dst_port);
	if (!lst) {
		rep.reply.status = LCHAN_LINK_ST_NO_LISTENER;
		goto out_reply;
	}
	ret = lchan_listen_reserve(lst);
	if (ret) {
		rep.reply.status = ret == -EBUSY ? LCHAN_LINK_ST_BACKLOG_FULL :
				   LCHAN_LINK_ST_NO_LISTENER;
		goto out_reply;
	}
	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!req) {
		rep.reply.status = LCHAN_LINK_ST_NO_RESOURCES;
		goto out_unreserve;
	}
	chan = lchan_link_chan_build(lst, link, &msg->setup, &rep.reply);
	if (IS_ERR(chan)) {
		chan = NULL;
		goto out_unreserve;
	}
	req->chan = chan;
	req->remote_qpn = msg->setup.qpn;
	kobject_get(&link->kobj);	/* a cancel names it */
	req->link = link;
	req->link_req = msg->req_id;
	goto out_reply;

out_unreserve:
	lchan_listen_unreserve(lst);
out_reply:
	lchan_link_msg_count(link, chan ? &link->stats.setups_done :
			     &link->stats.setups_failed);
	ret = lchan_link_send(link, &rep);
	if (!chan)
		goto out_put;
	spin_lock(&lst->lock);
	if (ret || READ_ONCE(lst->dead)) {
		lst->nr_backlog--;
	} else {
		list_add_tail(&req->node, &lst->backlog);
		req = NULL;
	}
	spin_unlock(&lst->lock);
	if (req)
		lchan_file_abort(chan);
	else
		wake_up(&lst->wq);
out_put:
	if (req)
		lchan_listen_req_free(req);
	if (lst)
		kref_put(&lst->ref, lchan_listen_free);
}

/*
 * A peer's SETUP_CANCEL on @link for its request @req_id: the channel
 * still waiting in a backlog for it goes.  False when none waits.
 */
bool lchan_listen_link_cancel(struct lchan_link *link, u64 req_id)
{
	struct lchan_listen_point *lst;
	struct lchan_conn_req *req, *found = NULL;

	spin_lock(&lchan_listen_table_lock);
	list_for_each_entry(lst, &lchan_listen_table, table_node) {
		spin_lock(&lst->lock);
		list_for_each_entry(req, &lst->backlog, node) {
			if (req->chan && req->link == link &&
			    req->link_req == req_id) {
				list_del(&req->node);
				lst->nr_backlog--;
				found = req;
				break;
			}
		}
		spin_unlock(&lst->lock);
		if (found)
			break;
	}
	spin_unlock(&lchan_listen_table_lock);
	if (!found)
		return false;
	lchan_file_abort(found->chan);
	lchan_listen_req_free(found);
	return true;
}

int lchan_ioctl_listen_check(const struct lchan_ucmd *ucmd)
{
	const struct lchan_listen_args *req = ucmd->cmd;
	static const struct lchan_addr none;
	struct sockaddr_storage ss;
	int ret;

	ret = lchan_connect_check_fd_flags(req->flags, LCHAN_FD_CLOEXEC |
					   LCHAN_FD_NONBLOCK |
					   LCHAN_FD_STREAM);
	if (ret)
		return ret;
	if (req->backlog > LCHAN_MAX_BACKLOG)
		return -EINVAL;
	/* A stream listener's address is its TCP socket's. */
	if (req->flags & LCHAN_FD_STREAM)
		return memcmp(&req->addr, &none, sizeof(none)) ? -EINVAL : 0;
	if (req->sock_fd)
		return -EINVAL;
	return lchan_cm_addr_to_sockaddr(&req->addr, &ss);
}

/* Bind @lst's id to @ss; a v6only listener's hears its own family only. */
static int lchan_listen_bind(struct lchan_listen_point *lst,
			     struct sockaddr_storage *ss)
{
	int ret;

	if (lst->v6only) {
		ret = rdma_set_afonly(lst->cm_id, 1);
		if (ret)
			return ret;
	}
	return rdma_bind_addr(lst->cm_id, (struct sockaddr *)ss);
}

/*
 * An iWARP device listens with a TCP socket on the port rdma_cm chose in
 * its own port space; when TCP has that port (lchan_iwarp_port.c), listen
 * again on one TCP chooses.  The address stays, and so does the device.
 */
static int lchan_listen_again(struct lchan_listen_point *lst,
			      struct sockaddr_storage *ss)
{
	struct rdma_cm_id *cm_id;
	struct socket *hold;
	int tries, ret = -EADDRINUSE;

	for (tries = 0; ret == -EADDRINUSE && tries < LCHAN_IWARP_PORT_TRIES;
	     tries++) {
		ret = lchan_iwarp_port_pick(ss, &hold);
		if (ret)
			return ret;
		cm_id = rdma_create_id(current->nsproxy->net_ns,
				       lchan_cm_handler, &lst->kind,
				       RDMA_PS_TCP, IB_QPT_RC);
		if (IS_ERR(cm_id)) {
			sock_release(hold);
			return PTR_ERR(cm_id);
		}
		mutex_lock(&lst->mutex);
		rdma_destroy_id(lst->cm_id);	/* it never listened */
		lst->cm_id = cm_id;
		mutex_unlock(&lst->mutex);
		ret = lchan_listen_bind(lst, ss);
		/* rdma_cm's own port space has it. */
		if (ret == -EADDRNOTAVAIL)
			ret = -EADDRINUSE;
		if (!ret)
			ret = rdma_listen(cm_id, LCHAN_CM_LISTEN_DEPTH);
		sock_release(hold);
	}
	return ret;
}

/*
 * A listener of @ctx on @ss (its port read back there), hearing only
 * IPv6 on an IPv6 wildcard when @v6only (as a TCP socket with
 * IPV6_V6ONLY; else as the namespace's bindv6only says): a counted
 * reference, which lchan_listen_close() ends.
 */
struct lchan_listen_point *lchan_listen_open(struct lchan_context *ctx,
					     struct sockaddr_storage *ss,
					     u32 backlog, bool v6only)
{
	struct lchan_listen_point *lst;
	struct rdma_cm_id *cm_id;
	bool any_port = !lchan_link_addr_port(ss);
	int ret;

	/* The device's listening socket (iWARP). */
	ret = lchan_charge_room();
	if (ret)
		return ERR_PTR(ret);
	lst = kzalloc(sizeof(*lst), LCHAN_GFP_USER);
	if (!lst)
		return ERR_PTR(-ENOMEM);
	lst->kind = LCHAN_CM_LISTENER;
	kref_init(&lst->ref);
	mutex_init(&lst->mutex);
	spin_lock_init(&lst->lock);
	INIT_LIST_HEAD(&lst->backlog);
	INIT_LIST_HEAD(&lst->dev_node);
	INIT_LIST_HEAD(&lst->table_node);
	init_waitqueue_head(&lst->wq);
	lst->max_backlog = backlog ?: LCHAN_DEFAULT_BACKLOG;
	lst->v6only = v6only;
	kref_get(&ctx->ref);
	lst->ctx = ctx;

	cm_id = rdma_create_id(current->nsproxy->net_ns, lchan_cm_handler,
			       &lst->kind, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(cm_id)) {
		ret = PTR_ERR(cm_id);
		goto err_put;
	}
	lst->cm_id = cm_id;
	ret = lchan_listen_bind(lst, ss);
	if (ret)
		goto err_shutdown;
	/* A specific address pins the listener to one device. */
	if (cm_id->device) {
		ret = lchan_listen_bind_dev(lst, cm_id->device);
		if (ret)
			goto err_shutdown;
	}
	ret = rdma_listen(cm_id, LCHAN_CM_LISTEN_DEPTH);
	if (ret == -EADDRINUSE && any_port)
		ret = lchan_listen_again(lst, ss);
	if (ret)
		goto err_unbind;
	lchan_cm_copy_sockaddr(ss, (struct sockaddr *)
			       &lst->cm_id->route.addr.src_addr);
	lchan_listen_publish(lst);
	return lst;

err_unbind:
	lchan_listen_unbind_dev(lst);
err_shutdown:
	lchan_listen_shutdown(lst);
	lchan_dev_put(lst->dev);
err_put:
	kref_put(&lst->ref, lchan_listen_free);
	return ERR_PTR(ret);
}

long lchan_ioctl_listen(struct lchan_ucmd *ucmd)
{
	struct lchan_context *ctx = ucmd->file->private_data;
	struct lchan_listen_args *req = ucmd->cmd;
	struct sockaddr_storage ss;
	struct lchan_listen_point *lst;
	long ret;
	int fd;

	if (req->flags & LCHAN_FD_STREAM)
		return lchan_stream_listen_new(ucmd);
	/* lchan_ioctl_listen_check() found the address good. */
	lchan_cm_addr_to_sockaddr(&req->addr, &ss);
	lst = lchan_listen_open(ctx, &ss, req->backlog, false);
	if (IS_ERR(lst))
		return PTR_ERR(lst);

	lchan_cm_sockaddr_to_addr(&ss, &req->addr);
	ret = lchan_ioctl_respond(ucmd);
	if (ret)
		goto err_close;
	fd = anon_inode_getfd("[lchan-listener]", &lchan_listen_fops, lst,
			      O_RDWR |
			      (req->flags & LCHAN_FD_CLOEXEC ? O_CLOEXEC : 0) |
			      (req->flags & LCHAN_FD_NONBLOCK ? O_NONBLOCK : 0));
	if (fd < 0) {
		ret = fd;
		goto err_close;
	}
	return fd;

err_close:
	lchan_listen_close(lst);
	return ret;
}
