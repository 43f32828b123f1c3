// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel RDMA connection manager's side of lchan: the rdma_cm event
 * handler of channels and listeners, and addresses between the uapi's
 * form and a sockaddr.
 *
 * The handler never takes chan->lock: teardown holds that lock while
 * rdma_destroy_id() waits for running handlers.  It reports to the stage
 * of the connect pipeline that waits (lchan_connect.c) through
 * chan->conn.status + chan->conn.done and through chan->state.
 */
#include <linux/in.h>
#include <linux/in6.h>

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
	WRITE_ONCE(chan->conn.status, status);
	WRITE_ONCE(chan->conn.in_flight, false);
	complete(&chan->conn.done);
	wake_up(&chan->wq);	/* a channel's end that waits for the answer */
}

/*
 * The attempt failed: the reason first, then the state that shows it, so
 * that whoever sees the end (a poll's POLLHUP) also finds why.
 */
static void lchan_cm_fail(struct lchan_channel *chan, int state, int status)
{
	lchan_cm_report(chan, status);
	lchan_chan_set_state(chan, state);
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
static void lchan_cm_peer_gone(struct lchan_channel *chan,
			       struct rdma_cm_id *id)
{
	lchan_chan_set_state(chan, LCHAN_STATE_DISCONNECTED);
	wait_event_timeout(chan->wq, !lchan_flow_outstanding(&chan->ring.sq),
			   msecs_to_jiffies(LCHAN_CM_DISCONNECT_LINGER_MS));
	/* Our QP to error too, so what is still posted is flushed. */
	rdma_disconnect(id);
	lchan_cm_report(chan, -ECONNRESET);
}

static int lchan_cm_chan_event(struct lchan_channel *chan,
			       struct rdma_cm_id *id,
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
		/* Given up while the request was out (lchan_connect_wait()). */
		if (lchan_chan_done(chan)) {
			rdma_disconnect(id);
			lchan_cm_report(chan, -ETIMEDOUT);
			break;
		}
		ret = chan->tp->check_reply ?
		      chan->tp->check_reply(chan, &event->param.conn) : 0;
		/* A stream's reply comes from a stream's accept, or none. */
		if (!ret && !chan->conn.passive && READ_ONCE(chan->stream) &&
		    !lchan_hello_says_stream(&event->param.conn))
			ret = -EPROTONOSUPPORT;
		if (ret) {
			lchan_cm_fail(chan, LCHAN_STATE_DISCONNECTED, ret);
			break;
		}
		/* The passive side learnt it from the request. */
		if (event->param.conn.qp_num)
			WRITE_ONCE(chan->conn.remote_qpn,
				   event->param.conn.qp_num);
		WRITE_ONCE(chan->conn.was_connected, true);
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
		lchan_cm_fail(chan, LCHAN_STATE_DISCONNECTED, -ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
		lchan_cm_fail(chan, LCHAN_STATE_DISCONNECTED,
			      lchan_cm_conn_errno(event, -EHOSTUNREACH));
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		lchan_cm_fail(chan, LCHAN_STATE_DISCONNECTED,
			      lchan_cm_conn_errno(event, -ECONNRESET));
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		lchan_cm_peer_gone(chan, id);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		lchan_cm_fail(chan, LCHAN_STATE_ERROR, -ENODEV);
		break;
	default:
		break;
	}
	return 0;
}

/*
 * A receive completed.  On the accepting side of IB/RoCE before the RTU,
 * the peer's data shows that the connection is up, which a device tells
 * with IB_EVENT_COMM_EST (lchan_qp.c); rxe tells nothing, and a lost RTU
 * would hold the accept until a resent REP is answered, 4.3 s a try.  So
 * the data tells the cm itself.  Any context: the QP, and so the cm id,
 * outlive every completion.
 */
void lchan_cm_data_arrived(struct lchan_channel *chan)
{
	struct rdma_cm_id *id;

	if (!chan->conn.passive || chan->conn.over_link ||
	    READ_ONCE(chan->state) != LCHAN_STATE_CONNECTING)
		return;
	id = READ_ONCE(chan->cm_id);
	if (id)
		rdma_notify(id, IB_EVENT_COMM_EST);
}

int lchan_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *event)
{
	enum lchan_cm_kind *kind = id->context;

	if (*kind == LCHAN_CM_LISTENER)
		return lchan_listen_cm_event(container_of(kind,
					    struct lchan_listen_point, kind),
					    id, event);
	return lchan_cm_chan_event(container_of(kind, struct lchan_channel,
						kind), id, event);
}
