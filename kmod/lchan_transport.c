// SPDX-License-Identifier: GPL-2.0
/*
 * Which transport a device speaks, asked once where an id meets a device:
 * when a channel binds to its device (chan->tp), when a connecting id has
 * resolved (its local port), and when a connection request reaches a
 * listener (the opening exchange).  The rest of the module calls the
 * chosen table (struct lchan_transport_ops) and never asks again.
 */
#include "lchan.h"

/*
 * InfiniBand and RoCE: the verbs and rdma_cm do it all.  Also the table of
 * a channel not yet bound to a device, which has nothing of a transport's
 * own to do.
 */
const struct lchan_transport_ops lchan_transport_ib = {
	.rc_timing = true,
};

/* The transport of @ibdev's port @port. */
const struct lchan_transport_ops *lchan_transport_get(struct ib_device *ibdev,
						      u32 port)
{
	if (rdma_protocol_iwarp(ibdev, port))
		return &lchan_iwarp_transport;
	return &lchan_transport_ib;
}

/* What sysfs calls the transport of @ibdev (devices/<name>/transport). */
const char *lchan_transport_name(struct ib_device *ibdev)
{
	u32 port = rdma_start_port(ibdev);

	if (rdma_protocol_iwarp(ibdev, port))
		return "iWARP";
	if (rdma_protocol_roce(ibdev, port))
		return "RoCE";
	if (rdma_protocol_ib(ibdev, port))
		return "InfiniBand";
	return "unknown";
}

/* Whether a connection request on a listener asks for the exchange. */
bool lchan_transport_request_wants(struct rdma_cm_id *id,
				   const struct rdma_conn_param *conn)
{
	const struct lchan_transport_ops *tp;

	tp = lchan_transport_get(id->device, id->port_num);
	return tp->request_wants && tp->request_wants(conn);
}

/*
 * A connecting channel's id has resolved: its transport holds the local
 * port if it needs to.  -EADDRINUSE when the port is taken.  chan->lock
 * held.
 */
int lchan_transport_hold_port(struct lchan_channel *chan)
{
	struct rdma_cm_id *id = chan->cm_id;
	const struct lchan_transport_ops *tp;

	if (!id)
		return -ENODEV;	/* the device went away */
	tp = lchan_transport_get(id->device, id->port_num);
	return tp->hold_port ? tp->hold_port(chan) : 0;
}

/* Whether the transport holds the channel's SQ. */
bool lchan_transport_sq_held(const struct lchan_channel *chan)
{
	return chan->tp->sq_held && chan->tp->sq_held(chan);
}

/*
 * A connecting channel whose SQ the transport still holds: connect and
 * establish have not returned yet, and poll says nothing of EPOLLOUT.
 */
bool lchan_transport_opening(const struct lchan_channel *chan)
{
	return !chan->conn.passive && lchan_transport_sq_held(chan);
}
