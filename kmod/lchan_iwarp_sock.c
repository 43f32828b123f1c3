// SPDX-License-Identifier: GPL-2.0
/*
 * The TCP connection under an accepted iWARP channel.  siw's accepting
 * side (Linux 6.1, 6.12) sends the MPA reply before it hands the socket
 * to the QP, and what arrives in between stays in the socket: the QP's
 * receive path runs when data arrives, and more may never come.  The
 * peer's first message (or the first SEND of the opening exchange,
 * lchan_iwarp.c) is such a message whenever the peer answers quickly.
 * lchan_iwarp_sock_read() runs the socket's data-ready callback as TCP does
 * on arrival, so that the QP reads what waits there.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <net/inet_hashtables.h>
#include <net/inet6_hashtables.h>
#include <net/sock.h>
#include <rdma/rdma_cm.h>

#include "lchan.h"

/* The established TCP socket with @id's addresses, referenced, or NULL. */
static struct sock *lchan_iwarp_sock_lookup(struct rdma_cm_id *id)
{
	struct rdma_dev_addr *da = &id->route.addr.dev_addr;
	struct sockaddr *src = (struct sockaddr *)&id->route.addr.src_addr;
	struct sockaddr *dst = (struct sockaddr *)&id->route.addr.dst_addr;
	struct net *net = da->net;
	struct inet_hashinfo *hashinfo = net->ipv4.tcp_death_row.hashinfo;

	/* The peer is the source of what the socket receives. */
	if (src->sa_family == AF_INET) {
		const struct sockaddr_in *l = (const struct sockaddr_in *)src;
		const struct sockaddr_in *r = (const struct sockaddr_in *)dst;

		return __inet_lookup_established(net, hashinfo,
						 r->sin_addr.s_addr, r->sin_port,
						 l->sin_addr.s_addr,
						 ntohs(l->sin_port),
						 da->bound_dev_if, 0);
	}
#if IS_ENABLED(CONFIG_IPV6)
	if (src->sa_family == AF_INET6) {
		const struct sockaddr_in6 *l = (const struct sockaddr_in6 *)src;
		const struct sockaddr_in6 *r = (const struct sockaddr_in6 *)dst;

		return __inet6_lookup_established(net, hashinfo, &r->sin6_addr,
						  r->sin6_port, &l->sin6_addr,
						  ntohs(l->sin6_port),
						  da->bound_dev_if, 0);
	}
#endif
	return NULL;
}

/*
 * Have the receive path of @chan's QP read what waits in its socket.
 * Returns 1 when something waited (handed to the QP), 0 when nothing did,
 * -EBUSY when the socket's user holds it (the device's transmit path: the
 * caller looks again later), -ENOENT without a connected socket.
 * chan->lock held.
 */
int lchan_iwarp_sock_read(struct lchan_channel *chan)
{
	void (*data_ready)(struct sock *sk);
	struct sock *sk;
	int ret = -ENOENT;

	if (!chan->cm_id)
		return ret;
	sk = lchan_iwarp_sock_lookup(chan->cm_id);
	if (!sk)
		return ret;
	if (sk_fullsock(sk)) {
		/* As TCP's receive path calls it: BHs off, socket locked. */
		local_bh_disable();
		bh_lock_sock(sk);
		if (sock_owned_by_user(sk)) {
			ret = -EBUSY;
		} else if (skb_queue_empty(&sk->sk_receive_queue)) {
			ret = 0;
		} else {
			ret = 1;
			data_ready = READ_ONCE(sk->sk_data_ready);
			data_ready(sk);
		}
		bh_unlock_sock(sk);
		local_bh_enable();
	}
	sock_gen_put(sk);
	return ret;
}
