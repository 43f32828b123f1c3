// SPDX-License-Identifier: GPL-2.0
/*
 * The addresses a wildcard stream listener hears lchan peers on when
 * rdma_cm cannot listen on the wildcard: an iWARP device listens with a
 * TCP socket of its own in TCP's port space, where the program's TCP
 * socket already has the port, and a wildcard listen reaches every
 * device.  So the stream listener listens on each address of each
 * network device that an RDMA device other than iWARP is bound to.  The
 * addresses are those of the moment: one added later is not heard (TCP
 * is, as always).
 */
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <net/addrconf.h>
#include <net/if_inet6.h>
#include <rdma/ib_verbs.h>

#include "lchan.h"

/* Whether an RDMA device other than iWARP is bound to @ndev. */
static bool lchan_stream_addrs_rdma(struct net_device *ndev)
{
	struct ib_device *ibdev;
	bool ok;

	ibdev = ib_device_get_by_netdev(ndev, RDMA_DRIVER_UNKNOWN);
	if (!ibdev)
		return false;
	ok = !rdma_protocol_iwarp(ibdev, rdma_start_port(ibdev));
	ib_device_put(ibdev);
	return ok;
}

static bool lchan_stream_addrs_add(struct sockaddr_storage *out, int *n,
				   int max, const struct sockaddr_storage *ss)
{
	if (*n >= max)
		return false;
	out[(*n)++] = *ss;
	return true;
}

/*
 * Up to @max addresses with @port in @out, of the RDMA devices of @net:
 * IPv4 ones when @v4, global IPv6 ones when @v6.  The count.
 */
int lchan_stream_addrs(struct net *net, __be16 port, bool v4, bool v6,
		       struct sockaddr_storage *out, int max)
{
	struct net_device *ndev;
	struct sockaddr_storage ss;
	int n = 0;

	rcu_read_lock();
	for_each_netdev_rcu(net, ndev) {
		struct in_device *in_dev = __in_dev_get_rcu(ndev);
		struct inet6_dev *in6_dev = __in6_dev_get(ndev);
		const struct in_ifaddr *ifa;
		struct inet6_ifaddr *ifp;

		if (!lchan_stream_addrs_rdma(ndev))
			continue;
		if (v4 && in_dev) {
			in_dev_for_each_ifa_rcu(ifa, in_dev) {
				struct sockaddr_in *sin = (void *)&ss;

				memset(&ss, 0, sizeof(ss));
				sin->sin_family = AF_INET;
				sin->sin_port = port;
				sin->sin_addr.s_addr = ifa->ifa_local;
				if (!lchan_stream_addrs_add(out, &n, max, &ss))
					goto out;
			}
		}
		if (!v6 || !in6_dev)
			continue;
		list_for_each_entry_rcu(ifp, &in6_dev->addr_list, if_list) {
			struct sockaddr_in6 *sin6 = (void *)&ss;

			/* A link-local address needs its scope named. */
			if (ipv6_addr_type(&ifp->addr) & IPV6_ADDR_LINKLOCAL)
				continue;
			memset(&ss, 0, sizeof(ss));
			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = port;
			sin6->sin6_addr = ifp->addr;
			if (!lchan_stream_addrs_add(out, &n, max, &ss))
				goto out;
		}
	}
out:
	rcu_read_unlock();
	return n;
}
