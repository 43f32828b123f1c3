// SPDX-License-Identifier: GPL-2.0
/*
 * TIME_WAIT for accepted streams.  A TCP connection closed first by its
 * own side keeps its port for TIME_WAIT (60 s): a bind(2) to the port
 * without SO_REUSEADDR fails with EADDRINUSE meanwhile, and one with it
 * succeeds.  A stream accepted on a stream listener has the TCP
 * listener's port as its own, and programs rely on that answer (a server
 * restarted at once must set SO_REUSEADDR, and one that does not learns
 * it).  So when such a stream is closed first by this side, a TCP socket
 * bound to its address with SO_REUSEADDR, never listening, holds the port
 * as long: it refuses the same binds as a connection in TIME_WAIT and
 * lets the same ones through.
 *
 * At most LCHAN_STREAM_TW_MAX are held at once; beyond, a port is not held,
 * as TCP drops TIME_WAIT sockets beyond its own bound.  Each holds a
 * reference to its network namespace, as a process's socket does.
 */
#include <linux/atomic.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/sock.h>

#include "lchan.h"

#define LCHAN_STREAM_TW_SECS	60
#define LCHAN_STREAM_TW_MAX	4096

struct lchan_stream_tw {
	struct list_head node;
	struct socket *sock;
	struct delayed_work work;
};

static LIST_HEAD(lchan_stream_tw_list);
static DEFINE_SPINLOCK(lchan_stream_tw_lock);
static atomic_t lchan_stream_tw_count = ATOMIC_INIT(0);

static void lchan_stream_tw_free(struct lchan_stream_tw *tw)
{
	sock_release(tw->sock);
	kfree(tw);
	atomic_dec(&lchan_stream_tw_count);
}

static void lchan_stream_tw_expire(struct work_struct *work)
{
	struct lchan_stream_tw *tw = container_of(to_delayed_work(work),
						  struct lchan_stream_tw, work);
	bool ours;

	/* Off the list already: module exit took it, and frees it. */
	spin_lock(&lchan_stream_tw_lock);
	ours = !list_empty(&tw->node);
	list_del_init(&tw->node);
	spin_unlock(&lchan_stream_tw_lock);
	if (ours)
		lchan_stream_tw_free(tw);
}

/* Hold @local's port in @net's TCP for TIME_WAIT, if it can be held. */
void lchan_stream_timewait(struct net *net,
			   const struct sockaddr_storage *local)
{
	int len = local->ss_family == AF_INET6 ?
		  sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	struct lchan_stream_tw *tw;

	if (atomic_inc_return(&lchan_stream_tw_count) > LCHAN_STREAM_TW_MAX)
		goto err_count;
	tw = kzalloc(sizeof(*tw), GFP_KERNEL);
	if (!tw)
		goto err_count;
	/* A user socket's kind: it holds the namespace. */
	if (__sock_create(net, local->ss_family, SOCK_STREAM, IPPROTO_TCP,
			  &tw->sock, 0))
		goto err_free;
	sock_set_reuseaddr(tw->sock->sk);
	/* A listener on the port (the program listens again) holds it. */
	if (kernel_bind(tw->sock, (struct sockaddr *)local, len))
		goto err_release;
	INIT_DELAYED_WORK(&tw->work, lchan_stream_tw_expire);
	spin_lock(&lchan_stream_tw_lock);
	list_add_tail(&tw->node, &lchan_stream_tw_list);
	spin_unlock(&lchan_stream_tw_lock);
	queue_delayed_work(lchan_wq, &tw->work, LCHAN_STREAM_TW_SECS * HZ);
	return;

err_release:
	sock_release(tw->sock);
err_free:
	kfree(tw);
err_count:
	atomic_dec(&lchan_stream_tw_count);
}

/* Module exit: every port held goes now. */
void lchan_stream_timewait_exit(void)
{
	struct lchan_stream_tw *tw;

	for (;;) {
		spin_lock(&lchan_stream_tw_lock);
		tw = list_first_entry_or_null(&lchan_stream_tw_list,
					      struct lchan_stream_tw, node);
		if (tw)
			list_del_init(&tw->node);
		spin_unlock(&lchan_stream_tw_lock);
		if (!tw)
			break;
		/* An expiry running now leaves it to us. */
		cancel_delayed_work_sync(&tw->work);
		lchan_stream_tw_free(tw);
	}
}
