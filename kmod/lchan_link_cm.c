// SPDX-License-Identifier: GPL-2.0
/*
 * A link's rdma_cm side (Documentation/link.md): the active link's
 * resolution and connect, the link service that hears peers' links and
 * accepts them, and the cm handler of both.
 *
 * The handler takes no mutex of a link's: teardown holds link->mutex
 * across rdma_destroy_id().  It records what came, ends the link if it
 * must, and queues the link's work (lchan_link.c), which calls the
 * steps here with link->mutex held.  A peer's request is the exception:
 * its handler makes the passive link, under the table's lock.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <net/net_namespace.h>

#include "lchan.h"

/* The link service: one listening id in the initial namespace. */
static struct lchan_link_svc {
	enum lchan_cm_kind kind;	/* first: id->context dispatch */
	struct mutex lock;		/* what follows */
	bool ready;			/* module init done, exit not begun */
	struct rdma_cm_id *cm_id;	/* listening, or NULL */
} lchan_link_svc = {
	.kind = LCHAN_CM_LINK_SERVICE,
	.lock = __MUTEX_INITIALIZER(lchan_link_svc.lock),
};

static int lchan_link_cm_handler(struct rdma_cm_id *id,
				 struct rdma_cm_event *event);

/*
 * What a link's connect and accept ask of rdma_cm: @hello in the private
 * data; no READ or atomic ever crosses a link; RNR retries without end
 * (the look bounds a peer that posts no receive).
 */
static void lchan_link_cm_param(struct rdma_conn_param *param,
				const struct lchan_link_wire_hello *hello)
{
	memset(param, 0, sizeof(*param));
	param->private_data = hello;
	param->private_data_len = sizeof(*hello);
	param->flow_control = 1;
	param->retry_count = LCHAN_LINK_RETRY_COUNT;
	param->rnr_retry_count = LCHAN_RNR_RETRY_COUNT;
}

/* Device, QP and buffers for the link's id, once it has a device. */
static int lchan_link_cm_prepare(struct lchan_link *link)
{
	struct rdma_cm_id *id = link->cm_id;
	int ret;

	/* An iWARP QP is a TCP connection: no other kernel can make it. */
	if (rdma_protocol_iwarp(id->device, id->port_num))
		return -EOPNOTSUPP;
	ret = lchan_link_bind(link, id->device, id->port_num);
	if (ret)
		return ret;
	ret = lchan_link_msg_create(link);
	if (ret)
		return ret;
	return rdma_set_ack_timeout(id, LCHAN_LINK_ACK_TIMEOUT);
}

/* Active, first step: resolve the peer's service.  mutex held. */
void lchan_link_cm_start(struct lchan_link *link)
{
	struct sockaddr_storage dst = link->peer;
	struct rdma_cm_id *id;
	int ret;

	if (link->cm_id || READ_ONCE(link->state) != LCHAN_LINK_RESOLVING)
		return;
	if (dst.ss_family == AF_INET)
		((struct sockaddr_in *)&dst)->sin_port =
			htons(lchan_link_service_port());
	else
		((struct sockaddr_in6 *)&dst)->sin6_port =
			htons(lchan_link_service_port());
	id = rdma_create_id(&init_net, lchan_link_cm_handler, &link->kind,
			    RDMA_PS_IB, IB_QPT_RC);
	if (IS_ERR(id)) {
		lchan_link_down(link, PTR_ERR(id));
		return;
	}
	link->cm_id = id;
	ret = rdma_resolve_addr(id, (struct sockaddr *)&link->local,
				(struct sockaddr *)&dst,
				LCHAN_RESOLVE_TIMEOUT_MS);
	if (ret)
		lchan_link_down(link, ret);
}

/*
 * Active, route resolved: make the link's QP and connect with the hello
 * of every version this module speaks.  A port that cannot serve a link
 * refuses it.  mutex held.
 */
void lchan_link_cm_connect(struct lchan_link *link)
{
	struct lchan_link_wire_hello hello;
	struct rdma_conn_param param;
	int ret;

	if (!link->cm_id || READ_ONCE(link->state) != LCHAN_LINK_RESOLVING)
		return;
	ret = lchan_link_cm_prepare(link);
	if (ret)
		goto err_end;
	lchan_link_wire_hello(&hello, LCHAN_LINK_WIRE_VERSION_MIN,
			      LCHAN_LINK_WIRE_VERSION_MAX);
	lchan_link_cm_param(&param, &hello);
	/* Before the connect: ESTABLISHED may come at once. */
	spin_lock_bh(&link->lock);
	if (link->state == LCHAN_LINK_RESOLVING)
		WRITE_ONCE(link->state, LCHAN_LINK_CONNECTING);
	ret = link->state == LCHAN_LINK_CONNECTING ? 0 : -ECONNABORTED;
	spin_unlock_bh(&link->lock);
	if (ret)
		return;		/* it ended meanwhile */
	ret = rdma_connect(link->cm_id, &param);
	if (ret)
		goto err_end;
	return;

err_end:
	lchan_link_end(link, ret, ret == -EOPNOTSUPP);
}

/* Passive: make the link's QP and accept with the chosen version. */
void lchan_link_cm_accept(struct lchan_link *link)
{
	struct lchan_link_wire_hello hello;
	struct rdma_conn_param param;
	struct rdma_cm_id *id = link->cm_id;
	int ret;

	if (!id || READ_ONCE(link->state) != LCHAN_LINK_ACCEPTING)
		return;
	ret = lchan_link_cm_prepare(link);
	if (ret)
		goto err_down;
	lchan_link_wire_hello(&hello, link->version, link->version);
	lchan_link_cm_param(&param, &hello);
	rdma_lock_handler(id);
	ret = rdma_accept(id, &param);
	rdma_unlock_handler(id);
	if (ret)
		goto err_down;
	return;

err_down:
	lchan_link_down(link, ret);
}

/* Tell the peer the link is over, if it was connected.  mutex held. */
void lchan_link_cm_disconnect(struct lchan_link *link)
{
	if (link->cm_id && link->qp)
		rdma_disconnect(link->cm_id);
}

/* The link's id goes; no handler of it runs after.  mutex held. */
void lchan_link_cm_destroy(struct lchan_link *link)
{
	if (!link->cm_id)
		return;
	rdma_destroy_id(link->cm_id);
	link->cm_id = NULL;
}

/* The active side's connection is up if the peer chose a version of ours. */
static void lchan_link_cm_established(struct lchan_link *link,
				      struct rdma_cm_id *id,
				      const struct rdma_conn_param *conn)
{
	int version = link->version;

	if (link->active) {
		version = lchan_link_wire_hello_chosen(conn->private_data,
						       conn->private_data_len);
		if (version < 0) {
			lchan_dbg_link(link, "the peer's hello: %d\n", version);
			lchan_link_refuse(link, -EPROTONOSUPPORT);
			return;
		}
	}
	lchan_link_established(link, id, version);
}

static int lchan_link_cm_event(struct lchan_link *link, struct rdma_cm_id *id,
			       struct rdma_cm_event *event)
{
	int ret;

	lchan_dbg_link(link, "%s (%d)\n", rdma_event_msg(event->event),
		       event->status);
	switch (event->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_protocol_iwarp(id->device, id->port_num)) {
			lchan_link_refuse(link, -EOPNOTSUPP);
			break;
		}
		ret = rdma_resolve_route(id, LCHAN_RESOLVE_TIMEOUT_MS);
		if (ret)
			lchan_link_down(link, ret);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		lchan_link_queue(link, LCHAN_LINK_EV_ROUTE);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		lchan_link_cm_established(link, id, &event->param.conn);
		break;
	case RDMA_CM_EVENT_REJECTED:
		/* No service there: links off, or a module without them. */
		lchan_link_refuse(link, -ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		lchan_link_down(link, event->status < 0 ? event->status :
				-EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
		lchan_link_down(link, -EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_DISCONNECTED:
		lchan_link_down(link, -ECONNRESET);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* rdma_cm waits for the id: the link's work destroys it. */
		lchan_link_down(link, -ENODEV);
		break;
	default:
		break;
	}
	return 0;
}

/*
 * A peer's link request, on a new id that carries the service as its
 * context.  A non-zero return makes rdma_cm refuse the request and
 * destroy the id: no hello of a version we speak, an iWARP port, or no
 * room.  Else the id is the new passive link's, which its work accepts.
 */
static int lchan_link_cm_request(struct rdma_cm_id *id,
				 struct rdma_cm_event *event)
{
	struct lchan_link *link;
	int version;

	/* The listening id's own events need nothing. */
	if (event->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return 0;
	if (rdma_protocol_iwarp(id->device, id->port_num))
		return -EOPNOTSUPP;
	version = lchan_link_wire_hello_pick(event->param.conn.private_data,
					     event->param.conn.private_data_len);
	if (version < 0)
		return version;
	link = lchan_link_accepted(id, version);
	if (IS_ERR(link))
		return PTR_ERR(link);
	id->context = &link->kind;	/* from now on its events are the link's */
	lchan_link_queue(link, LCHAN_LINK_EV_ACCEPT);
	return 0;
}

static int lchan_link_cm_handler(struct rdma_cm_id *id,
				 struct rdma_cm_event *event)
{
	enum lchan_cm_kind *kind = id->context;

	if (*kind == LCHAN_CM_LINK_SERVICE)
		return lchan_link_cm_request(id, event);
	return lchan_link_cm_event(container_of(kind, struct lchan_link, kind),
				   id, event);
}

/* Listen on the wildcard address of @family.  svc lock held. */
static int lchan_link_cm_listen(sa_family_t family)
{
	struct sockaddr_storage ss = { .ss_family = family };
	u16 port = lchan_link_service_port();
	struct rdma_cm_id *id;
	int ret;

	if (family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
	id = rdma_create_id(&init_net, lchan_link_cm_handler,
			    &lchan_link_svc.kind, RDMA_PS_IB, IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	/* IPv6's wildcard hears IPv4 peers too. */
	if (family == AF_INET6) {
		ret = rdma_set_afonly(id, 0);
		if (ret)
			goto err_destroy;
	}
	ret = rdma_bind_addr(id, (struct sockaddr *)&ss);
	if (ret)
		goto err_destroy;
	ret = rdma_listen(id, LCHAN_LINK_MAX);
	if (ret)
		goto err_destroy;
	lchan_link_svc.cm_id = id;
	return 0;

err_destroy:
	rdma_destroy_id(id);
	return ret;
}

/* svc lock held. */
static int lchan_link_cm_svc_start(void)
{
	int ret;

	if (lchan_link_svc.cm_id)
		return 0;
	ret = lchan_link_cm_listen(AF_INET6);
	if (ret == -EAFNOSUPPORT)
		ret = lchan_link_cm_listen(AF_INET);
	return ret;
}

/* No request handler runs after this.  svc lock held. */
static void lchan_link_cm_svc_stop(void)
{
	if (!lchan_link_svc.cm_id)
		return;
	rdma_destroy_id(lchan_link_svc.cm_id);
	lchan_link_svc.cm_id = NULL;
}

/*
 * The links parameter: the service listens, or stops.  Before module init
 * and after exit began this does nothing (init applies the parameter).
 */
int lchan_link_cm_service(bool on)
{
	int ret = 0;

	mutex_lock(&lchan_link_svc.lock);
	if (lchan_link_svc.ready) {
		if (on)
			ret = lchan_link_cm_svc_start();
		else
			lchan_link_cm_svc_stop();
	}
	mutex_unlock(&lchan_link_svc.lock);
	return ret;
}

int lchan_link_cm_init(bool on)
{
	int ret = 0;

	mutex_lock(&lchan_link_svc.lock);
	lchan_link_svc.ready = true;
	if (on)
		ret = lchan_link_cm_svc_start();
	mutex_unlock(&lchan_link_svc.lock);
	return ret;
}

void lchan_link_cm_exit(void)
{
	mutex_lock(&lchan_link_svc.lock);
	lchan_link_svc.ready = false;
	lchan_link_cm_svc_stop();
	mutex_unlock(&lchan_link_svc.lock);
}
