// SPDX-License-Identifier: GPL-2.0
/*
 * Local ports of connecting iWARP channels.  An iWARP connection is a TCP
 * connection: the device binds a TCP socket to the local port rdma_cm chose
 * for the connecting id.  rdma_cm chooses from its own port space, which
 * TCP's sockets are not in, so the port may be held by a TCP socket that
 * does not allow its reuse (the connect fails with EADDRINUSE) or name a
 * connection to the same peer in TIME_WAIT (EADDRNOTAVAIL).
 *
 * So a connecting channel on an iWARP device holds its local port in TCP's
 * space too, from route resolution until rdma_connect() has returned: a
 * socket of the caller's bound without reuse, which no TCP socket on that
 * port (TIME_WAIT included) lets succeed, and which then allows reuse, so
 * that the device's own bind (with reuse) shares the port.  When the port
 * rdma_cm chose is taken, TCP chooses one (lchan_iwarp_port_pick()) and the
 * channel resolves again from there.  A listener on a port rdma_cm chose
 * (port 0) meets the same: the device listens with a TCP socket there.
 */
#include <linux/net.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <net/sock.h>
#include <rdma/ib_addr.h>

#include "lchan.h"

static int lchan_iwarp_port_bind(struct sockaddr *addr, struct socket **sockp)
{
	struct socket *sock;
	int ret;

	ret = lchan_charge_room();
	if (ret)
		return ret;
	/* A socket of the caller's: its network namespace, its limits. */
	ret = sock_create(addr->sa_family, SOCK_STREAM, IPPROTO_TCP, &sock);
	if (ret)
		return ret;
	ret = kernel_bind(sock, addr, rdma_addr_size(addr));
	if (ret) {
		sock_release(sock);
		return ret;
	}
	sock_set_reuseaddr(sock->sk);
	*sockp = sock;
	return 0;
}

/*
 * Hold the local port of @chan's resolved cm_id in TCP's space, if no
 * port is held yet (the transport's hold_port).  -EADDRINUSE: TCP has it;
 * -ENOMEM: the caller's cgroup has no room for a socket.  A port TCP will
 * not bind for another reason is left to the device, as if unchecked.
 * chan->lock held.
 */
int lchan_iwarp_port_hold(struct lchan_channel *chan)
{
	int ret;

	if (chan->iwport)
		return 0;
	ret = lchan_iwarp_port_bind((struct sockaddr *)
				    &chan->cm_id->route.addr.src_addr,
				    &chan->iwport);
	return ret == -EADDRINUSE || ret == -ENOMEM ? ret : 0;
}

/*
 * Let TCP choose a local port on @addr's address, one no TCP socket holds,
 * and hold it in *@sockp; @addr gets the port.
 */
int lchan_iwarp_port_pick(struct sockaddr_storage *addr, struct socket **sockp)
{
	int ret;

	if (addr->ss_family == AF_INET)
		((struct sockaddr_in *)addr)->sin_port = 0;
	else
		((struct sockaddr_in6 *)addr)->sin6_port = 0;
	ret = lchan_iwarp_port_bind((struct sockaddr *)addr, sockp);
	if (ret)
		return ret;
	ret = kernel_getsockname(*sockp, (struct sockaddr *)addr);
	if (ret < 0) {
		sock_release(*sockp);
		*sockp = NULL;
		return ret;
	}
	return 0;
}

/* The device has bound its own socket, or will not.  chan->lock held. */
void lchan_iwarp_port_release(struct lchan_channel *chan)
{
	if (chan->iwport) {
		sock_release(chan->iwport);
		chan->iwport = NULL;
	}
}
