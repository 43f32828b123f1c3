// SPDX-License-Identifier: GPL-2.0
/*
 * A channel set up over a link (Documentation/link.md): the connecting
 * side's reach stage and its SETUP_REQ, and the accepting side's channel,
 * brought to RTR when the peer's request comes and finished by accept.
 * Once set up it is an ordinary channel with no cm id (lchan_qp.c).
 *
 * The connecting side sets the channel up before connect returns, also
 * when the connect defers its establish: a peer's SEND that comes before
 * a receive is posted waits in RNR retries, which are unbounded on IB
 * and RoCE, and nothing posted has to be undone when the connect leaves
 * the link.  It keeps the cm id of its route resolution until the peer
 * has answered: a peer that cannot set the channel up over its link
 * (UNSUPPORTED) sends the connect on through rdma_cm from where it is.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include <net/net_namespace.h>

#include "lchan.h"

static u16 lchan_link_chan_port(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET ?
	       ntohs(((const struct sockaddr_in *)ss)->sin_port) :
	       ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
}

static void lchan_link_chan_set_port(struct sockaddr_storage *ss, u16 port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

/* READs and atomics @ibdev lets a QP have in flight, each way. */
static u8 lchan_link_chan_rd_out(struct ib_device *ibdev)
{
	return min_t(int, ibdev->attrs.max_qp_init_rd_atom,
		     LCHAN_RD_ATOMIC_MAX);
}

static u8 lchan_link_chan_rd_in(struct ib_device *ibdev)
{
	return min_t(int, ibdev->attrs.max_qp_rd_atom, LCHAN_RD_ATOMIC_MAX);
}

/*
 * Whether a link can serve @chan's resolved id: links on, an InfiniBand
 * or RoCE port, the initial namespace.  lock held.
 */
static bool lchan_link_chan_can(struct lchan_channel *chan)
{
	struct rdma_cm_id *id = chan->cm_id;

	return lchan_link_enabled() && id && id->device &&
	       net_eq(id->route.addr.dev_addr.net, &init_net) &&
	       !rdma_protocol_iwarp(id->device, id->port_num);
}

/*
 * Until @link has left its way up, or @deadline; 0 when it is up,
 * -ETIMEDOUT while still on its way, -EOPNOTSUPP when it cannot serve.
 */
static int lchan_link_chan_wait_up(struct lchan_link *link,
				   unsigned long deadline, bool wait)
{
	long left = (long)(deadline - jiffies);
	int state;

	if (wait && left > 0) {
		left = wait_event_interruptible_timeout(link->wq,
				READ_ONCE(link->state) >= LCHAN_LINK_UP, left);
		if (left < 0)
			return -EINTR;
	}
	state = READ_ONCE(link->state);
	if (state == LCHAN_LINK_UP)
		return 0;
	return state < LCHAN_LINK_UP ? -ETIMEDOUT : -EOPNOTSUPP;
}

/*
 * Connect's reach stage for a link, once chan->cm_id has resolved its
 * route: with the link to the peer up, chan->conn.link holds it and the
 * channel is set up over it.  A link still on its way (made now if there
 * is none) is waited for until half the time left to @deadline, so that
 * rdma_cm keeps the other half; a non-blocking connect does not wait.
 * 0 also when the connect goes through rdma_cm.  LCHAN_CONNECT_LINK_ONLY
 * waits until @deadline, and fails with -EOPNOTSUPP when no link can
 * serve and -ETIMEDOUT when it is not up in time.
 */
int lchan_link_chan_reach(struct lchan_channel *chan, u32 flags,
			  unsigned long deadline)
{
	bool only = flags & LCHAN_CONNECT_LINK_ONLY;
	struct ib_device *ibdev;
	struct lchan_link *link;
	struct lchan_dev *dev;
	u32 port;
	int ret;

	if (flags & LCHAN_CONNECT_CM_ONLY)
		return 0;
	mutex_lock(&chan->lock);
	if (!lchan_link_chan_can(chan)) {
		mutex_unlock(&chan->lock);
		return only ? -EOPNOTSUPP : 0;
	}
	ibdev = chan->cm_id->device;
	port = chan->cm_id->port_num;
	link = lchan_link_get((struct sockaddr *)
			      &chan->cm_id->route.addr.src_addr,
			      (struct sockaddr *)
			      &chan->cm_id->route.addr.dst_addr);
	mutex_unlock(&chan->lock);
	if (IS_ERR(link))
		return only ? -EOPNOTSUPP : 0;
	if (!only)
		deadline = jiffies + (long)(deadline - jiffies) / 2;
	ret = lchan_link_chan_wait_up(link, deadline,
				      only || !(flags & LCHAN_FD_NONBLOCK));
	dev = READ_ONCE(link->dev);
	/* The link's path must be the one the route resolved to. */
	if (!ret && (!dev || dev->ibdev != ibdev ||
		     READ_ONCE(link->port_num) != port))
		ret = -EOPNOTSUPP;
	if (ret) {
		lchan_link_put(link);
		if (ret == -EINTR)
			return ret;
		return only ? ret : 0;
	}
	chan->conn.link = link;
	chan->conn.over_link = true;
	return 0;
}

/* The peer stops setting up request @req_id: it is ours no more. */
static void lchan_link_chan_cancel(struct lchan_link *link, u64 req_id)
{
	struct lchan_link_msg msg = {
		.type = LCHAN_LINK_SETUP_CANCEL,
		.req_id = req_id,
	};

	if (req_id)
		lchan_link_send(link, &msg);
}

/* A reply within what the request offered. */
static bool lchan_link_chan_reply_ok(const struct lchan_link_setup *s,
				     const struct lchan_link_reply *r)
{
	return r->mtu <= s->mtu && r->rd_atomic <= s->rd_resp &&
	       r->rd_resp <= s->rd_atomic;
}

/* Tell connect's and establish's wait how the set-up went. */
static void lchan_link_chan_report(struct lchan_channel *chan, int status)
{
	WRITE_ONCE(chan->conn.status, status);
	complete(&chan->conn.done);
	wake_up(&chan->wq);
}

/* The channel is connected: what waited for it goes out. */
static void lchan_link_chan_connected(struct lchan_channel *chan)
{
	WRITE_ONCE(chan->conn.was_connected, true);
	lchan_chan_set_state(chan, LCHAN_STATE_CONNECTED);
	lchan_post_kick(chan);
	lchan_keepalive_start(chan);
	lchan_link_chan_report(chan, 0);
}

/* The SETUP_REQ of @chan, its QP in INIT, for @link.  lock held. */
static int lchan_link_chan_setup_msg(struct lchan_channel *chan,
				     struct lchan_link *link,
				     struct lchan_link_msg *msg)
{
	struct lchan_link_setup *s = &msg->setup;
	struct ib_device *ibdev = chan->dev->ibdev;
	enum ib_mtu mtu;
	int ret;

	ret = lchan_qp_link_mtu(link, &mtu);
	if (ret)
		return ret;
	ret = lchan_link_path_src(link, s->gid, &s->lid);
	if (ret)
		return ret;
	msg->type = LCHAN_LINK_SETUP_REQ;
	chan->conn.psn = lchan_qp_new_psn();
	s->qpn = chan->qp->qp_num;
	s->psn = chan->conn.psn;
	s->src_port = lchan_link_chan_port(&chan->conn.local);
	s->dst_port = lchan_link_chan_port(&chan->conn.remote);
	s->mtu = mtu;
	s->rd_atomic = lchan_link_chan_rd_out(ibdev);
	s->rd_resp = lchan_link_chan_rd_in(ibdev);
	s->retry = chan->conn.retry_count;
	s->rnr_retry = LCHAN_RNR_RETRY_COUNT;
	s->sq_entries = chan->ring.sq.entries;
	s->rq_entries = chan->ring.rq.entries;
	return 0;
}

/*
 * The connecting side's set-up over the link, once the channel's QP is
 * made and before anything can be posted on it, whether or not the
 * connect defers its establish: INIT, SETUP_REQ, and with the peer's QP
 * in the reply RTR and RTS; the route's cm id goes.  0 once connected;
 * -EOPNOTSUPP when the link cannot serve after all or the peer cannot,
 * and the caller may go on through rdma_cm; else why it failed, reported
 * to the waits as a cm step's end would be.
 */
int lchan_link_chan_connect(struct lchan_channel *chan,
			    unsigned long deadline)
{
	struct lchan_link *link = chan->conn.link;
	struct lchan_link_msg msg = {}, rep;
	struct lchan_qp_peer peer;
	struct rdma_cm_id *old;
	int ret;

	reinit_completion(&chan->conn.done);
	mutex_lock(&chan->lock);
	/* Device removal takes the QP whenever chan->lock is free. */
	if (!chan->qp) {
		mutex_unlock(&chan->lock);
		return -ENODEV;
	}
	ret = lchan_qp_init(chan, link);
	if (!ret)
		ret = lchan_link_chan_setup_msg(chan, link, &msg);
	mutex_unlock(&chan->lock);
	if (ret)
		return -EOPNOTSUPP;	/* the link went down meanwhile */

	ret = lchan_link_call(link, &msg, &rep, deadline);
	if (ret == -EOPNOTSUPP)
		return ret;
	/* The link ended under the request: rdma_cm's way, if allowed. */
	if (ret && ret != -ETIMEDOUT && ret != -EINTR &&
	    READ_ONCE(link->state) != LCHAN_LINK_UP)
		return -EOPNOTSUPP;
	if (ret == -ETIMEDOUT || ret == -EINTR)
		lchan_link_chan_cancel(link, msg.req_id);
	if (ret)
		goto out_report;
	if (!lchan_link_chan_reply_ok(&msg.setup, &rep.reply)) {
		ret = -EPROTO;
		goto out_cancel;
	}
	peer.qpn = rep.reply.qpn;
	peer.psn = rep.reply.psn;
	peer.mtu = rep.reply.mtu;
	peer.rd_in = msg.setup.rd_resp;

	mutex_lock(&chan->lock);
	ret = chan->qp ? lchan_qp_ready(chan, link, &peer) : -ENODEV;
	if (!ret)
		ret = lchan_qp_send_ready(chan, chan->conn.psn, msg.setup.retry,
					  msg.setup.rnr_retry,
					  rep.reply.rd_resp);
	if (ret) {
		mutex_unlock(&chan->lock);
		goto out_cancel;
	}
	old = chan->cm_id;
	chan->cm_id = NULL;
	chan->conn.link = NULL;
	mutex_unlock(&chan->lock);
	/* No handler of the route's id runs after this. */
	if (old)
		rdma_destroy_id(old);
	lchan_link_put(link);
	lchan_link_chan_connected(chan);
	return 0;

out_cancel:
	lchan_link_chan_cancel(link, msg.req_id);
out_report:
	lchan_link_chan_report(chan, ret);
	return ret;
}

/*
 * The peer cannot set @chan up over the link: it goes on through rdma_cm
 * with the route's cm id, a QP and CQ made again on it and the same
 * rings (nothing was posted yet).  lock held.
 */
int lchan_link_chan_leave(struct lchan_channel *chan)
{
	struct lchan_link *link = chan->conn.link;

	if (!chan->cm_id)
		return -ENOTCONN;
	chan->conn.link = NULL;
	if (link)
		lchan_link_put(link);
	WRITE_ONCE(chan->conn.over_link, false);
	return lchan_qp_remake(chan);
}

/* What went wrong in building an accepting channel, as the wire says it. */
static u32 lchan_link_chan_status(int err)
{
	switch (err) {
	case -ECONNREFUSED:
		return LCHAN_LINK_ST_NO_LISTENER;
	case -EINVAL:
		return LCHAN_LINK_ST_BAD_REQUEST;
	case -EBUSY:
		return LCHAN_LINK_ST_BUSY;
	}
	return LCHAN_LINK_ST_NO_RESOURCES;
}

/*
 * Bind an accepting channel to @link's device and port.  No cm id holds
 * the device: link->mutex does, as device removal ends the device's
 * links first, under that mutex, and takes the channels after; once the
 * channel is among the device's, removal waits for chan->lock, held
 * until the channel is built.  chan->lock held.
 */
static int lchan_link_chan_bind(struct lchan_channel *chan,
				struct lchan_link *link)
{
	int ret = -ENOTCONN;

	mutex_lock(&link->mutex);
	if (link->cm_id && link->dev && READ_ONCE(link->state) == LCHAN_LINK_UP)
		ret = lchan_connect_bind_dev(chan, link->dev->ibdev,
					     link->port_num);
	mutex_unlock(&link->mutex);
	return ret;
}

/* The rooms of an accepting channel's queues: what the request hints. */
static u32 lchan_link_chan_room(struct ib_device *ibdev,
				const struct lchan_link_setup *s)
{
	u32 max = min_t(u32, LCHAN_MAX_ENTRIES, ibdev->attrs.max_qp_wr - 1);
	u32 want = max3(s->sq_entries, s->rq_entries,
			(u32)LCHAN_DEFAULT_ENTRIES);

	return min_t(u32, roundup_pow_of_two(want), max);
}

/*
 * The accepting side of request @s on @link, for listener @lst: a channel
 * of the listener's context, bound to the link's port, its QP in RTR
 * toward the peer's, and @r the reply that says so.  The rings wait for
 * accept, which says how large they are.  Allocations are charged to the
 * listener's owner.  An ERR_PTR whose wire status @r has on failure.
 */
struct lchan_channel *lchan_link_chan_build(struct lchan_listen_point *lst,
					    struct lchan_link *link,
					    const struct lchan_link_setup *s,
					    struct lchan_link_reply *r)
{
	struct mem_cgroup *memcg, *old_memcg;
	struct lchan_channel *chan;
	struct lchan_qp_peer peer;
	struct ib_device *ibdev;
	enum ib_mtu mtu;
	u32 room;
	int ret;

	memcg = get_mem_cgroup_from_mm(lst->ctx->mm);
	old_memcg = set_active_memcg(memcg);
	chan = lchan_connect_new(lst->ctx);
	if (IS_ERR(chan)) {
		ret = PTR_ERR(chan);
		goto out_memcg;
	}
	chan->conn.passive = true;
	chan->conn.over_link = true;
	chan->conn.local = link->local;
	lchan_link_chan_set_port(&chan->conn.local, s->dst_port);
	chan->conn.remote = link->peer;
	lchan_link_chan_set_port(&chan->conn.remote, s->src_port);

	mutex_lock(&chan->lock);
	ret = lchan_link_chan_bind(chan, link);
	if (ret)
		goto out_unlock;
	ibdev = chan->dev->ibdev;
	room = lchan_link_chan_room(ibdev, s);
	ret = lchan_qp_create_bare(chan, room, room);
	if (ret)
		goto out_unlock;
	ret = lchan_qp_init(chan, link);
	if (ret)
		goto out_unlock;
	ret = lchan_qp_link_mtu(link, &mtu);
	if (ret)
		goto out_unlock;
	peer.qpn = s->qpn;
	peer.psn = s->psn;
	peer.mtu = min_t(u8, mtu, s->mtu);
	peer.rd_in = min(lchan_link_chan_rd_in(ibdev), s->rd_atomic);
	ret = lchan_qp_ready(chan, link, &peer);
	if (ret)
		goto out_unlock;
	chan->conn.psn = lchan_qp_new_psn();
	chan->conn.retry = s->retry;
	chan->conn.rnr_retry = s->rnr_retry;
	chan->conn.rd_atomic = min(lchan_link_chan_rd_out(ibdev), s->rd_resp);
	ret = lchan_link_path_src(link, r->gid, &r->lid);
	if (ret)
		goto out_unlock;
	r->status = LCHAN_LINK_ST_OK;
	r->qpn = chan->qp->qp_num;
	r->psn = chan->conn.psn;
	r->mtu = peer.mtu;
	r->rd_atomic = chan->conn.rd_atomic;
	r->rd_resp = peer.rd_in;
out_unlock:
	mutex_unlock(&chan->lock);
	if (ret) {
		lchan_file_abort(chan);
		chan = ERR_PTR(ret);
	}
out_memcg:
	set_active_memcg(old_memcg);
	mem_cgroup_put(memcg);
	if (IS_ERR(chan)) {
		memset(r, 0, sizeof(*r));
		r->status = lchan_link_chan_status(PTR_ERR(chan));
	}
	return chan;
}

/*
 * Accept of a channel set up over a link: the rings the caller asks for
 * (-ENOBUFS beyond what the QP was made for), its RC timing, RTS, and
 * the channel is connected, its sysfs directory made.  Direct polling
 * needs a CQ made for it, and this one was made before accept:
 * -EOPNOTSUPP.
 */
int lchan_link_chan_accept(struct lchan_channel *chan,
			   const struct lchan_ring_sizes *rings,
			   const struct lchan_rc_params *rc, u32 flags)
{
	int ret;

	if (flags & LCHAN_DIRECT_POLL)
		return -EOPNOTSUPP;
	lchan_chan_set_owner(chan);
	mutex_lock(&chan->lock);
	ret = chan->qp ? lchan_connect_set_rc(chan, rc) : -ENODEV;
	if (!ret)
		ret = lchan_qp_add_ring(chan, rings);
	if (!ret)
		ret = lchan_qp_send_ready(chan, chan->conn.psn,
					  chan->conn.retry,
					  chan->conn.rnr_retry,
					  chan->conn.rd_atomic);
	if (!ret)
		chan->conn.established_once = !(flags & LCHAN_DEFER_ESTABLISH);
	mutex_unlock(&chan->lock);
	if (ret)
		return ret;
	ret = lchan_sysfs_add_chan(chan);
	if (ret)
		return ret;
	reinit_completion(&chan->conn.done);
	lchan_link_chan_connected(chan);
	return 0;
}
