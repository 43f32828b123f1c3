// SPDX-License-Identifier: GPL-2.0
/*
 * Connections through the in-kernel RDMA connection manager: connect,
 * establish, and the rdma_cm event handler of channels and listeners.
 *
 * The handler never takes chan->lock: teardown holds that lock while
 * rdma_destroy_id() waits for running handlers.  It reports to the waiting
 * ioctl through chan->cm_status + chan->cm_done and through chan->state.
 */
#include <linux/fs.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/slab.h>
#include <linux/sched/mm.h>
#include <net/net_namespace.h>
#include <linux/nsproxy.h>

#include "lchan.h"
#include "lchan_trace.h"

int lchan_cm_addr_to_sockaddr(const struct lchan_addr *a,
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

void lchan_cm_sockaddr_to_addr(const struct sockaddr_storage *ss,
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

void lchan_cm_copy_sockaddr(struct sockaddr_storage *dst,
			    const struct sockaddr *src)
{
	memcpy(dst, src, rdma_addr_size(src));
}

/* Tell the ioctl waiting on this channel how a cm step ended. */
static void lchan_cm_report(struct lchan_channel *chan, int status)
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

/*
 * The peer disconnected.  Acknowledgements it sent before it left may still
 * wait in the device on their way to completions (rxe hands them to a work
 * item that drops them once the QP is in error): moving the QP to error at
 * once would report as flushed sends the peer has.  So the sends in flight
 * get LCHAN_CM_DISCONNECT_LINGER_MS to complete; nothing new can come from
 * the peer, so a longer wait would only delay the flush of the rest.
 */
static void lchan_cm_peer_gone(struct lchan_channel *chan, struct rdma_cm_id *id)
{
	lchan_chan_set_state(chan, LCHAN_STATE_DISCONNECTED);
	wait_event_timeout(chan->wq, !lchan_flow_outstanding(&chan->ring.sq),
			   msecs_to_jiffies(LCHAN_CM_DISCONNECT_LINGER_MS));
	/* Our QP to error too, so what is still posted is flushed. */
	rdma_disconnect(id);
	lchan_cm_report(chan, -ECONNRESET);
}

static int lchan_cm_chan_event(struct lchan_channel *chan, struct rdma_cm_id *id,
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
		ret = chan->tp->check_reply ?
		      chan->tp->check_reply(chan, &event->param.conn) : 0;
		if (ret) {
			lchan_chan_set_state(chan, LCHAN_STATE_DISCONNECTED);
			lchan_cm_report(chan, ret);
			break;
		}
		/* The passive side learnt it from the request. */
		if (event->param.conn.qp_num)
			WRITE_ONCE(chan->remote_qpn, event->param.conn.qp_num);
		WRITE_ONCE(chan->was_connected, true);
		lchan_chan_set_state(chan, LCHAN_STATE_CONNECTED);
		/*
		 * What waited for the connection (SQEs published before it,
		 * the iWARP first SEND) goes out now, without another ENTER.
		 */
		lchan_post_kick(chan);
		if (chan->tp->connected)
			chan->tp->connected(chan);
		lchan_keepalive_start(chan);
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
		lchan_cm_peer_gone(chan, id);
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

int lchan_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *event)
{
	enum lchan_cm_kind *kind = id->context;

	if (*kind == LCHAN_CM_LISTENER)
		return lchan_listen_cm_event(container_of(kind,
					    struct lchan_listen_point, kind),
					    id, event);
	return lchan_cm_chan_event(container_of(kind, struct lchan_channel, kind),
				id, event);
}

static void lchan_cm_conn_param(struct lchan_channel *chan,
				struct rdma_conn_param *param)
{
	const struct ib_device_attr *attrs = &chan->dev->ibdev->attrs;

	memset(param, 0, sizeof(*param));
	param->responder_resources = min_t(int, attrs->max_qp_rd_atom,
					   LCHAN_RD_ATOMIC_MAX);
	param->initiator_depth = min_t(int, attrs->max_qp_init_rd_atom,
				       LCHAN_RD_ATOMIC_MAX);
	param->flow_control = 1;
	/* iWARP has none: TCP retransmits. */
	param->retry_count = chan->retry_count;
	param->rnr_retry_count = LCHAN_RNR_RETRY_COUNT;
	if (chan->tp->conn_param)
		chan->tp->conn_param(chan, param);
}

/* Wait for the cm step in flight; 0, a negative errno or -ETIMEDOUT. */
static int lchan_cm_wait(struct lchan_channel *chan, unsigned long deadline)
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
 * How a connection made before ended up, for an ESTABLISH after the
 * first: -EISCONN, -EALREADY while under way, or why it failed or ended.
 * The handler writes cm_status before complete(), which completion_done()
 * orders.  lock held.
 */
static int lchan_cm_result(struct lchan_channel *chan)
{
	int state = READ_ONCE(chan->state);
	int status;

	if (state == LCHAN_STATE_CONNECTED)
		return lchan_transport_opening(chan) ? -EALREADY : -EISCONN;
	if (!chan->cm_id || !completion_done(&chan->cm_done))
		return state == LCHAN_STATE_CONNECTING ? -EALREADY :
		       -ENOTCONN;
	status = READ_ONCE(chan->cm_status);
	return status < 0 ? status : -ENOTCONN;
}

/*
 * Make the connection: rdma_connect or rdma_accept, then wait for it,
 * unless @nonblock: then -EINPROGRESS once the request is out, and the
 * handler finishes it (poll says when; a later ESTABLISH says how).
 * On failure the channel is torn down and left in an error state.
 */
int lchan_cm_establish(struct lchan_channel *chan, u32 timeout_ms,
		       bool nonblock)
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
		ret = lchan_cm_result(chan);
		goto out_unlock;
	}
	chan->established_once = true;
	/*
	 * Receives published before this call must be on the QP before the
	 * peer can send: on iWARP a SEND that finds none ends the connection.
	 * In poller mode they may still be in the ring, waiting for the
	 * thread.  Before the connection is up this takes only the RQ.
	 */
	lchan_post_submit(chan, &sq_done, &rq_done);
	reinit_completion(&chan->cm_done);
	lchan_cm_conn_param(chan, &param);
	if (chan->passive) {
		rdma_lock_handler(chan->cm_id);
		ret = rdma_accept(chan->cm_id, &param);
		rdma_unlock_handler(chan->cm_id);
	} else {
		ret = rdma_connect(chan->cm_id, &param);
		/* The device's socket has the port now, or never will. */
		lchan_iwarp_port_release(chan);
	}
	mutex_unlock(&chan->lock);
	if (ret) {
		lchan_dbg_chan(chan, "%s: %d\n", chan->passive ?
			       "rdma_accept" : "rdma_connect", ret);
		goto err_teardown;
	}
	/* Built while the peer answers: off the connect's critical path. */
	ret = lchan_sysfs_add_chan(chan);
	if (ret)
		goto err_teardown;
	if (nonblock)
		return -EINPROGRESS;

	ret = lchan_cm_wait(chan, deadline);
	/*
	 * A peer that left right after the connection was made (its
	 * disconnect's report can overwrite ESTABLISHED's before this reads
	 * it): the connection was made, and what the peer sent is in the
	 * ring; its end shows in the state, as a socket's EOF would.
	 */
	if (ret == -ECONNRESET && READ_ONCE(chan->was_connected))
		ret = 0;
	if (!ret && !READ_ONCE(chan->was_connected))
		ret = -ECONNRESET;
	/* On iWARP the connecting side's SQ opens one exchange later. */
	if (!ret && !chan->passive && chan->tp->wait_open)
		ret = chan->tp->wait_open(chan, deadline);
	if (ret == -EINTR)
		return ret;	/* still in progress: poll for EPOLLOUT */
	if (!ret)
		return 0;

err_teardown:
	mutex_lock(&chan->lock);
	if (READ_ONCE(chan->state) != LCHAN_STATE_ERROR)
		lchan_chan_set_state(chan, LCHAN_STATE_DISCONNECTED);
	lchan_qp_teardown(chan);
	mutex_unlock(&chan->lock);
	return ret;
out_unlock:
	mutex_unlock(&chan->lock);
	return ret;
}

int lchan_cm_check_fd_flags(u32 flags, u32 allowed)
{
	return flags & ~allowed ? -EINVAL : 0;
}

/*
 * What connect and accept both take: the new fd's flags, ring sizes and
 * RC timing.
 */
int lchan_cm_check_open(u32 flags, const struct lchan_ring_sizes *rings,
			const struct lchan_rc_params *rc)
{
	int ret;

	ret = lchan_cm_check_fd_flags(flags, LCHAN_FD_CLOEXEC |
				      LCHAN_FD_NONBLOCK |
				      LCHAN_DEFER_ESTABLISH |
				      LCHAN_DIRECT_POLL |
				      LCHAN_OPEN_EXCHANGE);
	if (ret)
		return ret;
	if (rc->resv0 ||
	    rc->ack_timeout > LCHAN_ACK_TIMEOUT_MAX ||
	    rc->retry_count > LCHAN_RETRY_COUNT_MAX)
		return -EINVAL;
	if (rc->keepalive_ms && (rc->keepalive_ms < LCHAN_KEEPALIVE_MIN_MS ||
				 rc->keepalive_ms > LCHAN_KEEPALIVE_MAX_MS))
		return -EINVAL;
	/* Refuse a bad request before it costs a peer its connection. */
	return lchan_ring_sizes_check(rings);
}

/* Attach the channel to the device its cm_id resolved to. */
static int lchan_cm_bind_dev(struct lchan_channel *chan,
			    struct ib_device *ibdev)
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

	ret = lchan_dev_add_chan(dev, chan, pd);
	if (ret)
		goto err_put;
	chan->dev = dev;
	chan->pd = pd;
	return 0;

err_put:
	lchan_ctx_put_pd(pd);
	lchan_dev_put(dev);
	return ret;
}

/*
 * The second half of connect and accept: a QP and rings on the device that
 * chan->cm_id reached, then the connection unless @flags defer it.
 * @deadline ends connect as a whole; without one, establish gets the
 * default timeout from when it starts.  On failure the caller aborts the
 * channel.
 */
/*
 * The RC timing @rc asks for, on the device the channel is bound to.  The
 * local ACK timeout reaches the QP when rdma_cm moves it to RTS; the retry
 * count goes out in the connection parameters.  iWARP has neither.  The
 * keepalive is lchan's own, on every device.
 */
static int lchan_cm_set_rc(struct lchan_channel *chan,
			   const struct lchan_rc_params *rc)
{
	/* Every device: the keepalive is lchan's own (lchan_keepalive.c). */
	lchan_keepalive_set(chan, rc->keepalive_ms);
	if (!chan->tp->rc_timing)
		return rc->ack_timeout || rc->retry_count ? -EOPNOTSUPP : 0;
	/* sysfs reads them lockless. */
	WRITE_ONCE(chan->ack_timeout,
		   rc->ack_timeout ?: LCHAN_ACK_TIMEOUT_DEFAULT);
	WRITE_ONCE(chan->retry_count,
		   rc->retry_count ?: LCHAN_RETRY_COUNT_DEFAULT);
	return rdma_set_ack_timeout(chan->cm_id, chan->ack_timeout);
}

/*
 * Direct polling, if @flags ask for it.  Its CQ has no events, and a
 * poller thread would have to poll it too; iWARP's opening exchange
 * (lchan_iwarp.c) moves on by completion events.
 */
static int lchan_cm_set_direct(struct lchan_channel *chan, u32 flags)
{
	if (!(flags & LCHAN_DIRECT_POLL))
		return 0;
	if (chan->mode == LCHAN_MODE_POLLER)
		return -EINVAL;
	if (!(chan->features & LCHAN_FEATURE_DIRECT))
		return -EOPNOTSUPP;
	chan->mode = LCHAN_MODE_DIRECT;
	return 0;
}

int lchan_cm_open_chan(struct lchan_channel *chan,
		       const struct lchan_ring_sizes *rings,
		       const struct lchan_rc_params *rc, u32 flags,
		       const unsigned long *deadline)
{
	u32 timeout_ms = LCHAN_CONNECT_TIMEOUT_MS;
	struct rdma_cm_id *cm_id;
	int ret;

	mutex_lock(&chan->lock);
	cm_id = chan->cm_id;
	if (!cm_id) {
		ret = -ENODEV;
		goto out_unlock;
	}
	ret = lchan_cm_bind_dev(chan, cm_id->device);
	if (ret)
		goto out_unlock;
	ret = lchan_cm_set_rc(chan, rc);
	if (ret)
		goto out_unlock;
	ret = lchan_cm_set_direct(chan, flags);
	if (ret)
		goto out_unlock;
	if (chan->tp->choose)
		chan->tp->choose(chan, flags);
	ret = lchan_qp_create(chan, rings);
	if (ret)
		goto out_unlock;
	lchan_cm_copy_sockaddr(&chan->local, (struct sockaddr *)
			       &cm_id->route.addr.src_addr);
	mutex_unlock(&chan->lock);

	if (flags & LCHAN_DEFER_ESTABLISH)
		return 0;
	if (deadline) {
		long left = (long)(*deadline - jiffies);

		timeout_ms = left > 0 ? jiffies_to_msecs(left) : 1;
	}
	/* A non-blocking connect returns with the request out. */
	return lchan_cm_establish(chan, timeout_ms, !chan->passive &&
				  (flags & LCHAN_FD_NONBLOCK));

out_unlock:
	mutex_unlock(&chan->lock);
	return ret;
}

int lchan_cm_check_connect(const struct lchan_ucmd *ucmd)
{
	const struct lchan_connect_args *req = ucmd->cmd;
	struct sockaddr_storage dst, src;
	int ret;

	ret = lchan_cm_check_open(req->flags, &req->rings, &req->rc);
	if (ret)
		return ret;
	if (req->resv || req->timeout_ms > LCHAN_MAX_TIMEOUT_MS)
		return -EINVAL;
	ret = lchan_cm_addr_to_sockaddr(&req->dst, &dst);
	if (ret)
		return ret;
	if (!req->dst.port)
		return -EINVAL;
	if (req->src.family) {
		ret = lchan_cm_addr_to_sockaddr(&req->src, &src);
		if (ret)
			return ret;
		if (src.ss_family != dst.ss_family)
			return -EINVAL;
	}
	return 0;
}

/*
 * Create the channel's cm_id and resolve its address and route, from @src
 * (NULL: any) to @dst.
 */
static int lchan_cm_resolve(struct lchan_channel *chan, struct sockaddr *src,
			    struct sockaddr *dst, u32 timeout_ms,
			    unsigned long deadline)
{
	struct rdma_cm_id *cm_id;
	int ret;

	mutex_lock(&chan->lock);
	cm_id = rdma_create_id(current->nsproxy->net_ns, lchan_cm_handler,
			       &chan->kind, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(cm_id)) {
		mutex_unlock(&chan->lock);
		return PTR_ERR(cm_id);
	}
	chan->cm_id = cm_id;
	reinit_completion(&chan->cm_done);
	ret = rdma_resolve_addr(cm_id, src, dst,
				min_t(u32, timeout_ms, LCHAN_RESOLVE_TIMEOUT_MS));
	mutex_unlock(&chan->lock);
	if (ret)
		return ret;
	return lchan_cm_wait(chan, deadline);
}

static u16 lchan_cm_port(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET ?
	       ntohs(((const struct sockaddr_in *)ss)->sin_port) :
	       ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
}

static bool lchan_cm_port_named(const struct sockaddr_storage *src,
				bool src_given)
{
	return src_given && lchan_cm_port(src);
}

/*
 * Resolve, and let the transport of the device resolved to hold the local
 * port (iWARP's is a TCP port: lchan_iwarp_port.c).  When TCP holds the
 * one rdma_cm chose, start again from a port TCP chose, unless the caller
 * named the port.
 */
static int lchan_cm_resolve_port(struct lchan_channel *chan,
				 struct sockaddr_storage *src, bool src_given,
				 struct sockaddr *dst, u32 timeout_ms,
				 unsigned long deadline)
{
	struct rdma_cm_id *old;
	int tries = 0;
	int ret;

	ret = lchan_cm_resolve(chan, src_given ? (struct sockaddr *)src : NULL,
			       dst, timeout_ms, deadline);
	for (;;) {
		/* rdma_cm's answer for a port an id on any address has. */
		if (ret == -EADDRNOTAVAIL && tries)
			ret = -EADDRINUSE;
		if (ret && ret != -EADDRINUSE)
			return ret;
		if (!ret) {
			mutex_lock(&chan->lock);
			ret = lchan_transport_hold_port(chan);
			if (ret == -EADDRINUSE)
				lchan_cm_copy_sockaddr(src, (struct sockaddr *)
					&chan->cm_id->route.addr.src_addr);
			mutex_unlock(&chan->lock);
			if (ret != -EADDRINUSE)
				return ret;
		}
		/* -EADDRINUSE: TCP's port, or rdma_cm's for the one TCP chose. */
		if (++tries > LCHAN_IWARP_PORT_TRIES ||
		    lchan_cm_port_named(src, src_given))
			return ret;
		mutex_lock(&chan->lock);
		old = chan->cm_id;
		chan->cm_id = NULL;
		lchan_iwarp_port_release(chan);
		ret = old ? lchan_iwarp_port_pick(src, &chan->iwport) : -ENODEV;
		mutex_unlock(&chan->lock);
		/* No handler of the old id runs after this. */
		if (old)
			rdma_destroy_id(old);
		if (ret)
			return ret;
		lchan_dbg_chan(chan, "local port taken, again from port %u\n",
			       lchan_cm_port(src));
		ret = lchan_cm_resolve(chan, (struct sockaddr *)src, dst,
				       timeout_ms, deadline);
	}
}

long lchan_ioctl_connect(struct lchan_ucmd *ucmd)
{
	struct lchan_context *ctx = ucmd->file->private_data;
	const struct lchan_connect_args *req = ucmd->cmd;
	struct sockaddr_storage dst, src;
	struct lchan_channel *chan;
	unsigned long deadline;
	u32 timeout_ms;
	long ret;

	/* lchan_cm_check_connect() found both addresses good. */
	lchan_cm_addr_to_sockaddr(&req->dst, &dst);
	if (req->src.family)
		lchan_cm_addr_to_sockaddr(&req->src, &src);

	timeout_ms = req->timeout_ms ?: LCHAN_CONNECT_TIMEOUT_MS;
	deadline = jiffies + msecs_to_jiffies(timeout_ms);

	chan = lchan_chan_alloc(ctx);
	if (IS_ERR(chan))
		return PTR_ERR(chan);
	lchan_parts_init(chan);
	chan->remote = dst;

	ret = lchan_cm_resolve_port(chan, &src, req->src.family,
				    (struct sockaddr *)&dst, timeout_ms,
				    deadline);
	if (ret)
		goto err_abort;
	ret = lchan_cm_open_chan(chan, &req->rings, &req->rc, req->flags,
				 &deadline);
	if (ret && ret != -EINPROGRESS)
		goto err_abort;

	return lchan_file_install(chan, req->flags);

err_abort:
	lchan_file_abort(chan);
	return ret == -ERESTARTSYS ? -EINTR : ret;
}
