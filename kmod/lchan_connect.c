// SPDX-License-Identifier: GPL-2.0
/*
 * The connect pipeline: how a channel gets from a connect or an accept
 * call to its file, one stage after the other, each undone by the
 * channel's end (lchan_file.c) if a later one fails:
 *
 *   new        the object and its parts		lchan_connect_new()
 *   reach      a cm id on a device: connect resolves an address and a
 *              route (lchan_connect_resolve_port()) and, with links on,
 *              finds the link to the peer's machine (lchan_link_chan.c);
 *              accept takes a request of a listener's backlog
 *              (lchan_listen.c), or a channel a peer set up over a link
 *   bind       the device: its PD, transport, RC timing and the mode
 *   create     QP, CQ and rings (lchan_qp.c); over a link, the set-up
 *              with the peer's kernel, whether establish is deferred or
 *              not, or on to rdma_cm when the peer cannot
 *   establish  rdma_connect or rdma_accept, and the wait for the peer;
 *              deferred to the ESTABLISH command when asked
 *   publish    the channel's sysfs directory, while the peer answers
 *   install    the channel's file (lchan_file.c)
 *
 * Everything after reach is the same for every way in: another way to
 * reach a device's QP is another reach stage followed by
 * lchan_connect_open() and lchan_file_install(), nothing more.
 *
 * The cm handler (lchan_cm.c) reports each step through chan->conn.status,
 * chan->conn.done and chan->state; the stages here wait for it.
 */
#include <linux/fs.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/nsproxy.h>
#include <net/net_namespace.h>

#include "lchan.h"
#include "lchan_trace.h"

/* The first stage: a channel with its parts, nothing running yet. */
struct lchan_channel *lchan_connect_new(struct lchan_context *ctx)
{
	struct lchan_channel *chan;

	chan = lchan_chan_alloc(ctx);
	if (IS_ERR(chan))
		return chan;
	chan->tp = &lchan_transport_ib;	/* nothing of its own until bound */
	/* The submission mode is fixed from the first channel on. */
	chan->mode = lchan_ctx_fix_mode(ctx);
	lchan_parts_init(chan);
	return chan;
}

static void lchan_connect_conn_param(struct lchan_channel *chan,
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
	param->retry_count = chan->conn.retry_count;
	param->rnr_retry_count = LCHAN_RNR_RETRY_COUNT;
	if (chan->tp->conn_param)
		chan->tp->conn_param(chan, param);
	/* A stream's peer must be one: the hello says it, on any transport. */
	if (READ_ONCE(chan->stream))
		lchan_hello_param(param, LCHAN_HELLO_STREAM);
}

/* Wait for the cm step in flight; 0, a negative errno or -ETIMEDOUT. */
static int lchan_connect_wait_cm(struct lchan_channel *chan,
				 unsigned long deadline)
{
	long left = (long)(deadline - jiffies);
	long ret;

	if (left <= 0)
		left = 1;
	ret = wait_for_completion_interruptible_timeout(&chan->conn.done, left);
	if (ret == 0)
		return -ETIMEDOUT;
	if (ret < 0)
		return -EINTR;
	return READ_ONCE(chan->conn.status);
}

/*
 * How a connection made before ended up, for an ESTABLISH after the
 * first: -EISCONN, -EALREADY while under way, or why it failed or ended.
 * The handler writes conn.status before complete(), which completion_done()
 * orders, and reports a failure before the state shows it.  lock held.
 */
static int lchan_connect_result(struct lchan_channel *chan)
{
	int state = READ_ONCE(chan->state);
	int status;

	if (state == LCHAN_STATE_CONNECTED)
		return lchan_transport_opening(chan) ? -EALREADY : -EISCONN;
	if ((!chan->cm_id && !chan->conn.over_link) ||
	    !completion_done(&chan->conn.done))
		return state == LCHAN_STATE_CONNECTING ? -EALREADY :
		       -ENOTCONN;
	status = READ_ONCE(chan->conn.status);
	return status < 0 ? status : -ENOTCONN;
}

/*
 * Establish failed: the channel is torn down and left disconnected, or in
 * error if it already was.
 */
static void lchan_connect_fail(struct lchan_channel *chan)
{
	mutex_lock(&chan->lock);
	if (READ_ONCE(chan->state) != LCHAN_STATE_ERROR)
		lchan_chan_set_state(chan, LCHAN_STATE_DISCONNECTED);
	lchan_qp_teardown(chan);
	mutex_unlock(&chan->lock);
}

/*
 * Establish, first half: rdma_connect or rdma_accept, once.  0 when the
 * request is out; else why not, and on a failed request the channel is
 * torn down and left in an error state.
 */
int lchan_connect_request(struct lchan_channel *chan)
{
	struct rdma_conn_param param;
	u32 sq_done, rq_done;
	int ret;

	mutex_lock(&chan->lock);
	if (!chan->qp || (!chan->cm_id && !chan->conn.over_link)) {
		ret = READ_ONCE(chan->state) == LCHAN_STATE_CONNECTED ?
			-EISCONN : -ENOTCONN;
		goto out_unlock;
	}
	if (chan->conn.established_once) {
		ret = lchan_connect_result(chan);
		goto out_unlock;
	}
	chan->conn.established_once = true;
	/* Over a link the channel was connected before its file existed. */
	if (chan->conn.over_link) {
		ret = 0;
		goto out_unlock;
	}
	/*
	 * Receives published before this call must be on the QP before the
	 * peer can send: on iWARP a SEND that finds none ends the connection.
	 * In poller mode they may still be in the ring, waiting for the
	 * thread.  Before the connection is up this takes only the RQ.
	 */
	lchan_post_submit(chan, &sq_done, &rq_done);
	reinit_completion(&chan->conn.done);
	lchan_connect_conn_param(chan, &param);
	/* Before the request: the handler may answer before it returns. */
	WRITE_ONCE(chan->conn.in_flight, true);
	if (chan->conn.passive) {
		rdma_lock_handler(chan->cm_id);
		ret = rdma_accept(chan->cm_id, &param);
		rdma_unlock_handler(chan->cm_id);
	} else {
		ret = chan->tp->connect_charges ? lchan_charge_room() : 0;
		if (!ret)
			ret = rdma_connect(chan->cm_id, &param);
		/* The device's socket has the port now, or never will. */
		lchan_iwarp_port_release(chan);
	}
	if (ret)
		WRITE_ONCE(chan->conn.in_flight, false);
	mutex_unlock(&chan->lock);
	if (ret) {
		lchan_dbg_chan(chan, "%s: %d\n", chan->conn.passive ?
			       "rdma_accept" : "rdma_connect", ret);
		lchan_connect_fail(chan);
	}
	return ret;

out_unlock:
	mutex_unlock(&chan->lock);
	return ret;
}

/*
 * Establish, second half: wait for the peer until @deadline.  0 once
 * connected (and, where the transport holds the SQ, once it opens);
 * -EINTR while still in progress (poll says when); else the channel is
 * torn down and left in an error state.
 */
int lchan_connect_wait(struct lchan_channel *chan, unsigned long deadline)
{
	int ret;

	ret = lchan_connect_wait_cm(chan, deadline);
	/*
	 * A peer that left right after the connection was made (its
	 * disconnect's report can overwrite ESTABLISHED's before this reads
	 * it): the connection was made, and what the peer sent is in the
	 * ring; its end shows in the state, as a socket's EOF would.
	 */
	if (ret == -ECONNRESET && READ_ONCE(chan->conn.was_connected))
		ret = 0;
	if (!ret && !READ_ONCE(chan->conn.was_connected))
		ret = -ECONNRESET;
	/* On iWARP the connecting side's SQ opens one exchange later. */
	if (!ret && !chan->conn.passive && chan->tp->wait_open)
		ret = chan->tp->wait_open(chan, deadline);
	if (ret == -EINTR)
		return ret;	/* still in progress: poll for EPOLLOUT */
	/*
	 * A request the transport cannot withdraw: the caller's timeout ends
	 * the wait, and the QP goes when the channel ends
	 * (lchan_connect_held()), not before the answer.
	 */
	if (ret == -ETIMEDOUT && lchan_connect_held(chan)) {
		lchan_chan_set_state(chan, LCHAN_STATE_DISCONNECTED);
		return ret;
	}
	if (ret)
		lchan_connect_fail(chan);
	return ret;
}

/*
 * Whether the request's answer (or its failure) has come, so that
 * lchan_connect_wait() returns at once.
 */
bool lchan_connect_answered(struct lchan_channel *chan)
{
	return completion_done(&chan->conn.done);
}

/*
 * Whether the channel's request is out, unanswered, and the transport
 * cannot withdraw it (request_held): tearing the channel down now would
 * wait for the answer.
 */
bool lchan_connect_held(struct lchan_channel *chan)
{
	return chan->tp->request_held && READ_ONCE(chan->conn.in_flight);
}

int lchan_connect_check_fd_flags(u32 flags, u32 allowed)
{
	return flags & ~allowed ? -EINVAL : 0;
}

/*
 * What connect and accept both take: the new fd's flags, ring sizes and
 * RC timing.
 */
int lchan_connect_check_open(u32 flags, const struct lchan_ring_sizes *rings,
			     const struct lchan_rc_params *rc)
{
	int ret;

	ret = lchan_connect_check_fd_flags(flags, LCHAN_FD_CLOEXEC |
					   LCHAN_FD_NONBLOCK |
					   LCHAN_FD_STREAM |
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

/*
 * Attach the channel to port @port_num of @ibdev: the device its cm_id
 * resolved to, or a link's.
 */
int lchan_connect_bind_dev(struct lchan_channel *chan, struct ib_device *ibdev,
			   u32 port_num)
{
	struct lchan_dev *dev;
	struct lchan_pd *pd;
	int ret;

	trace_lchan_chan_step(chan->id, LCHAN_STEP_BIND);
	if (!rdma_is_port_valid(ibdev, port_num))
		return -ENODEV;
	dev = lchan_dev_get(ibdev);
	if (!dev)
		return -ENODEV;
	pd = lchan_ctx_get_pd(chan->ctx, dev);
	if (IS_ERR(pd)) {
		lchan_dev_put(dev);
		return PTR_ERR(pd);
	}

	chan->conn.port_num = port_num;
	chan->tp = lchan_transport_get(ibdev, chan->conn.port_num);
	chan->caps.max_msg_size = dev->port_max_msg[port_num];
	chan->caps.max_send_sge = min_t(u32, ibdev->attrs.max_send_sge,
					LCHAN_MAX_SGE);
	chan->caps.max_recv_sge = min_t(u32, ibdev->attrs.max_recv_sge,
					LCHAN_MAX_SGE);
	/* iWARP reads into one buffer only. */
	chan->caps.max_read_sge = clamp_t(u32, ibdev->attrs.max_sge_rd, 1,
					  chan->caps.max_send_sge);
	chan->caps.features = LCHAN_FEATURES & ~chan->tp->features_off;
	if (ibdev->attrs.atomic_cap == IB_ATOMIC_NONE)
		chan->caps.features &= ~LCHAN_FEATURE_ATOMIC;
	if (chan->caps.max_send_sge < 2 || chan->caps.max_recv_sge < 2)
		chan->caps.features &= ~LCHAN_FEATURE_MULTI_SGE;

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
 * The RC timing @rc asks for, on the device the channel is bound to.  The
 * local ACK timeout reaches the QP when rdma_cm moves it to RTS; the retry
 * count goes out in the connection parameters.  iWARP has neither.  The
 * keepalive is lchan's own, on every device.
 */
int lchan_connect_set_rc(struct lchan_channel *chan,
			 const struct lchan_rc_params *rc)
{
	/* Every device: the keepalive is lchan's own (lchan_keepalive.c). */
	lchan_keepalive_set(chan, rc->keepalive_ms);
	if (!chan->tp->rc_timing)
		return rc->ack_timeout || rc->retry_count ? -EOPNOTSUPP : 0;
	/* sysfs reads them lockless. */
	WRITE_ONCE(chan->conn.ack_timeout,
		   rc->ack_timeout ?: LCHAN_ACK_TIMEOUT_DEFAULT);
	WRITE_ONCE(chan->conn.retry_count,
		   rc->retry_count ?: LCHAN_RETRY_COUNT_DEFAULT);
	/* Without a cm id the ACK timeout reaches the QP at RTS. */
	if (!chan->cm_id)
		return 0;
	return rdma_set_ack_timeout(chan->cm_id, chan->conn.ack_timeout);
}

/*
 * Direct polling, if @flags ask for it.  Its CQ has no events, and a
 * poller thread would have to poll it too; iWARP's opening exchange
 * (lchan_iwarp.c) moves on by completion events.
 */
static int lchan_connect_set_direct(struct lchan_channel *chan, u32 flags)
{
	if (!(flags & LCHAN_DIRECT_POLL))
		return 0;
	if (chan->mode == LCHAN_MODE_POLLER)
		return -EINVAL;
	if (!(chan->caps.features & LCHAN_FEATURE_DIRECT))
		return -EOPNOTSUPP;
	chan->mode = LCHAN_MODE_DIRECT;
	return 0;
}

/*
 * Bind: the device chan->cm_id reached, the RC timing @rc asks for, the
 * mode and the transport's choices.  lock held.
 */
static int lchan_connect_bind(struct lchan_channel *chan,
			      const struct lchan_rc_params *rc, u32 flags)
{
	int ret;

	if (!chan->cm_id)
		return -ENODEV;
	ret = lchan_connect_bind_dev(chan, chan->cm_id->device,
				     chan->cm_id->port_num);
	if (ret)
		return ret;
	ret = lchan_connect_set_rc(chan, rc);
	if (ret)
		return ret;
	ret = lchan_connect_set_direct(chan, flags);
	if (ret)
		return ret;
	if (chan->tp->choose)
		chan->tp->choose(chan, flags);
	return 0;
}

/* Create: QP, CQ and rings on the bound device.  lock held. */
static int lchan_connect_create(struct lchan_channel *chan,
				const struct lchan_ring_sizes *rings)
{
	int ret;

	ret = lchan_qp_create(chan, rings);
	if (ret)
		return ret;
	lchan_cm_copy_sockaddr(&chan->conn.local, (struct sockaddr *)
			       &chan->cm_id->route.addr.src_addr);
	return 0;
}

/*
 * Connect's reach stage found a link to the peer: the channel is set up
 * over it now, or, where the peer cannot and @flags allow it, goes on
 * through rdma_cm.
 */
static int lchan_connect_link(struct lchan_channel *chan, u32 flags,
			      unsigned long deadline)
{
	int ret;

	ret = lchan_link_chan_connect(chan, deadline);
	if (ret != -EOPNOTSUPP || (flags & LCHAN_CONNECT_LINK_ONLY))
		return ret;
	mutex_lock(&chan->lock);
	ret = lchan_link_chan_leave(chan);
	mutex_unlock(&chan->lock);
	return ret;
}

/*
 * The stages after reach, the same for connect and accept: bind, create,
 * then establish and publish, or only publish when @flags defer the
 * connection to ESTABLISH.  @deadline ends connect as a whole; without
 * one, establish gets the default timeout from when it starts.  A
 * non-blocking connect returns -EINPROGRESS with the request out.  On
 * failure the caller aborts the channel.
 */
int lchan_connect_open(struct lchan_channel *chan,
		       const struct lchan_ring_sizes *rings,
		       const struct lchan_rc_params *rc, u32 flags,
		       const unsigned long *deadline)
{
	u32 timeout_ms = LCHAN_CONNECT_TIMEOUT_MS;
	bool establish = !(flags & LCHAN_DEFER_ESTABLISH);
	unsigned long establish_by;
	int ret;

	mutex_lock(&chan->lock);
	ret = lchan_connect_bind(chan, rc, flags);
	if (!ret)
		ret = lchan_connect_create(chan, rings);
	mutex_unlock(&chan->lock);
	if (ret)
		return ret;
	if (deadline) {
		long left = (long)(*deadline - jiffies);

		timeout_ms = left > 0 ? jiffies_to_msecs(left) : 1;
	}
	establish_by = jiffies + msecs_to_jiffies(timeout_ms);
	if (chan->conn.link) {
		ret = lchan_connect_link(chan, flags, establish_by);
		if (ret)
			return ret;
	}
	if (establish) {
		ret = lchan_connect_request(chan);
		if (ret)
			return ret;
	}
	/* Built while the peer answers: off the connect's critical path. */
	ret = lchan_sysfs_add_chan(chan);
	if (ret) {
		if (establish)
			lchan_connect_fail(chan);
		return ret;
	}
	if (!establish)
		return 0;
	if (!chan->conn.passive && (flags & LCHAN_FD_NONBLOCK))
		return -EINPROGRESS;
	return lchan_connect_wait(chan, establish_by);
}

int lchan_ioctl_establish_check(const struct lchan_ucmd *ucmd)
{
	const struct lchan_establish_args *req = ucmd->cmd;

	if (req->flags || req->resv || req->timeout_ms > LCHAN_MAX_TIMEOUT_MS)
		return -EINVAL;
	return 0;
}

/*
 * ESTABLISH: the establish stage of a channel whose connect or accept
 * deferred it, or how the one before ended.  Only the connecting side's
 * exchange runs without the caller.
 */
long lchan_ioctl_establish(struct lchan_ucmd *ucmd)
{
	struct lchan_channel *chan = ucmd->file->private_data;
	const struct lchan_establish_args *req = ucmd->cmd;
	u32 timeout_ms = req->timeout_ms ?: LCHAN_CONNECT_TIMEOUT_MS;
	unsigned long deadline = jiffies + msecs_to_jiffies(timeout_ms);
	int ret;

	ret = lchan_connect_request(chan);
	if (ret)
		return ret;
	if (!chan->conn.passive && (ucmd->file->f_flags & O_NONBLOCK))
		return -EINPROGRESS;
	return lchan_connect_wait(chan, deadline);
}

int lchan_ioctl_connect_check(const struct lchan_ucmd *ucmd)
{
	const struct lchan_connect_args *req = ucmd->cmd;
	struct sockaddr_storage dst, src;
	int ret;

	ret = lchan_connect_check_open(req->flags & ~(LCHAN_CONNECT_CM_ONLY |
						      LCHAN_CONNECT_LINK_ONLY |
						      LCHAN_CONNECT_NO_IWARP),
				       &req->rings, &req->rc);
	if (ret)
		return ret;
	ret = lchan_stream_check(req->flags, &req->rings);
	if (ret)
		return ret;
	if (req->resv || req->timeout_ms > LCHAN_MAX_TIMEOUT_MS)
		return -EINVAL;
	if ((req->flags & LCHAN_CONNECT_CM_ONLY) &&
	    (req->flags & LCHAN_CONNECT_LINK_ONLY))
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
static int lchan_connect_resolve(struct lchan_channel *chan,
				 struct sockaddr *src, struct sockaddr *dst,
				 u32 timeout_ms, unsigned long deadline)
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
	reinit_completion(&chan->conn.done);
	ret = rdma_resolve_addr(cm_id, src, dst,
				min_t(u32, timeout_ms, LCHAN_RESOLVE_TIMEOUT_MS));
	mutex_unlock(&chan->lock);
	if (ret)
		return ret;
	return lchan_connect_wait_cm(chan, deadline);
}

static u16 lchan_connect_port(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET ?
	       ntohs(((const struct sockaddr_in *)ss)->sin_port) :
	       ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
}

static bool lchan_connect_port_named(const struct sockaddr_storage *src,
				     bool src_given)
{
	return src_given && lchan_connect_port(src);
}

/*
 * Resolve, and let the transport of the device resolved to hold the local
 * port (iWARP's is a TCP port: lchan_iwarp_port.c).  When TCP holds the
 * one rdma_cm chose, start again from a port TCP chose, unless the caller
 * named the port.
 */
static int lchan_connect_resolve_port(struct lchan_channel *chan,
				      struct sockaddr_storage *src,
				      bool src_given,
				      struct sockaddr *dst, u32 timeout_ms,
				      unsigned long deadline)
{
	struct rdma_cm_id *old;
	int tries = 0;
	int ret;

	ret = lchan_connect_resolve(chan, src_given ?
				    (struct sockaddr *)src : NULL,
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
		    lchan_connect_port_named(src, src_given))
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
			       lchan_connect_port(src));
		ret = lchan_connect_resolve(chan, (struct sockaddr *)src, dst,
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
	u32 timeout_ms, flags;
	long ret;

	/* lchan_ioctl_connect_check() found both addresses good. */
	lchan_cm_addr_to_sockaddr(&req->dst, &dst);
	if (req->src.family)
		lchan_cm_addr_to_sockaddr(&req->src, &src);

	timeout_ms = req->timeout_ms ?: LCHAN_CONNECT_TIMEOUT_MS;
	deadline = jiffies + msecs_to_jiffies(timeout_ms);

	chan = lchan_connect_new(ctx);
	if (IS_ERR(chan))
		return PTR_ERR(chan);
	chan->conn.remote = dst;

	ret = lchan_connect_resolve_port(chan, &src, req->src.family,
					 (struct sockaddr *)&dst, timeout_ms,
					 deadline);
	if (ret)
		goto err_abort;
	/* Nothing has reached the peer yet: only a local port is held. */
	if ((req->flags & LCHAN_CONNECT_NO_IWARP) &&
	    rdma_protocol_iwarp(chan->cm_id->device, chan->cm_id->port_num)) {
		ret = -EPROTONOSUPPORT;
		goto err_abort;
	}
	/* A stream's ends both run lchan; it is set up through rdma_cm. */
	flags = req->flags;
	if (flags & LCHAN_FD_STREAM)
		flags |= LCHAN_OPEN_EXCHANGE | LCHAN_CONNECT_CM_ONLY;
	/* Over the link to the peer's machine where one can serve. */
	ret = lchan_link_chan_reach(chan, flags, deadline);
	if (ret)
		goto err_abort;
	if (flags & LCHAN_FD_STREAM) {
		struct lchan_stream *st;

		st = lchan_stream_open(chan, &req->rc, flags, &deadline);
		if (IS_ERR(st))
			return PTR_ERR(st) == -ERESTARTSYS ? -EINTR :
			       PTR_ERR(st);
		return lchan_stream_install(st, req->flags);
	}
	ret = lchan_connect_open(chan, &req->rings, &req->rc, req->flags,
				 &deadline);
	if (ret && ret != -EINPROGRESS)
		goto err_abort;

	return lchan_file_install(chan, req->flags);

err_abort:
	lchan_file_abort(chan);
	return ret == -ERESTARTSYS ? -EINTR : ret;
}
