// SPDX-License-Identifier: GPL-2.0
/*
 * Stream listeners: one socket for a program's listening TCP socket and an
 * lchan listener on the same address and port (LISTEN with
 * LCHAN_FD_STREAM).  accept(2) on it gives what either has: the TCP
 * socket's next connection, made by the TCP socket's own accept, or the
 * next established stream channel (lchan_stream.c).  A program that
 * listens and accepts through it serves TCP and lchan peers on one port
 * without knowing which it serves.
 *
 * As TCP's, a connection is made before the program accepts it: a work
 * item accepts each request the lchan listener receives with a stream of
 * its own, and queues the stream once its peer's answer came, up to the
 * backlog, charging the listener's creator (its memory cgroup).  A
 * client's connect so returns without waiting for the server's accept, as
 * a TCP client's does.  The work never waits for a peer: one that does
 * not answer holds a place in the backlog until LCHAN_CONNECT_TIMEOUT_MS,
 * not the streams behind it.
 *
 * The TCP socket is held by a reference to its file, and the calls of a
 * listening socket other than accept and poll go to it.  A blocking
 * accept waits on the TCP socket's wait queue and on the listener's own;
 * poll registers on both.  The lchan listener may die with its device:
 * TCP is served on.
 *
 * sl->lock (process context only) guards the queue of established
 * streams and the counts.  The one work item runs alone, and only it
 * walks the streams waiting for their answer until the listener closes;
 * it does nothing once 'closing' is set.
 */
#include <linux/file.h>
#include <linux/memcontrol.h>
#include <linux/net.h>
#include <linux/nsproxy.h>
#include <linux/poll.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <net/sock.h>
#include <net/tcp_states.h>

#include "lchan.h"

/* A stream of the listener's: waiting for its peer's answer, or accept. */
struct lchan_stream_entry {
	struct list_head node;		/* on sl->pending, then sl->ready */
	struct lchan_stream *st;
	unsigned long deadline;		/* for the answer */
	struct wait_queue_entry wait;	/* on the stream's, while pending */
	struct lchan_stream_listener *sl;
};

/* Wildcard listeners beside iWARP: one per address (lchan_stream_addrs.c). */
#define LCHAN_STREAM_LISTEN_POINTS	16

/* One of its lchan listeners, and its entry on the listener's queue. */
struct lchan_stream_point {
	struct lchan_listen_point *lst;
	struct wait_queue_entry wait;	/* on lst->wq: queues the work */
	struct lchan_stream_listener *sl;
};

struct lchan_stream_listener {
	struct sock sk;			/* first: sk_alloc() makes the whole */
	struct socket *tcp;		/* the program's listening socket */
	u32 nr_points;
	struct lchan_stream_point points[LCHAN_STREAM_LISTEN_POINTS];
	struct mem_cgroup *memcg;	/* the creator's: streams' charges */
	struct delayed_work work;	/* sets requests up; the first deadline */
	wait_queue_head_t wq;		/* a stream is ready */
	spinlock_t lock;
	struct list_head pending;	/* accepted, the answer to come */
	struct list_head ready;		/* established, not accepted */
	u32 nr_pending, nr_ready, max_ready;
	bool closing;
};

static struct proto lchan_stream_listen_prot = {
	.name = "LCHAN_LISTEN",
	.owner = THIS_MODULE,
	.obj_size = sizeof(struct lchan_stream_listener),
};

static const struct proto_ops lchan_stream_listen_ops;

static struct lchan_stream_listener *lchan_stream_listen_of(struct sock *sk)
{
	return container_of(sk, struct lchan_stream_listener, sk);
}

static struct socket *lchan_stream_listen_tcp_of(struct socket *sock)
{
	return lchan_stream_listen_of(sock->sk)->tcp;
}

/* The work runs now, or again once it ends. */
static void lchan_stream_listen_kick(struct lchan_stream_listener *sl)
{
	mod_delayed_work(lchan_wq, &sl->work, 0);
}

/* Room in the backlog for one more request.  sl->lock held. */
static bool lchan_stream_listen_room(struct lchan_stream_listener *sl)
{
	return sl->nr_pending + sl->nr_ready < sl->max_ready;
}

/* A TCP connection, if one waits: @newsock becomes the TCP socket's. */
static int lchan_stream_listen_take_tcp(struct lchan_stream_listener *sl,
					struct socket *newsock,
					const struct proto_accept_arg *arg)
{
	struct proto_accept_arg tcp_arg = {
		.flags = arg->flags | O_NONBLOCK,
		.kern = arg->kern,
	};
	const struct proto_ops *ops = READ_ONCE(sl->tcp->ops);
	int ret;

	ret = lchan_compat_accept(sl->tcp, newsock, &tcp_arg);
	if (ret)
		return ret;
	/* The accept call took this module's reference for our ops. */
	__module_get(ops->owner);
	newsock->ops = ops;
	module_put(THIS_MODULE);
	return 0;
}

/* An established stream, if one waits: @newsock becomes the stream's. */
static int lchan_stream_listen_take_lchan(struct lchan_stream_listener *sl,
					  struct socket *newsock)
{
	struct lchan_stream_entry *e;
	bool was_full;

	spin_lock(&sl->lock);
	e = list_first_entry_or_null(&sl->ready, struct lchan_stream_entry,
				     node);
	was_full = !lchan_stream_listen_room(sl);
	if (e) {
		list_del(&e->node);
		sl->nr_ready--;
	}
	spin_unlock(&sl->lock);
	if (!e)
		return -EAGAIN;
	/* Requests may wait for room. */
	if (was_full)
		lchan_stream_listen_kick(sl);
	lchan_stream_graft(e->st, newsock, true);
	kfree(e);
	return 0;
}

static bool lchan_stream_listen_has_ready(struct lchan_stream_listener *sl)
{
	bool ready;

	spin_lock(&sl->lock);
	ready = !list_empty(&sl->ready);
	spin_unlock(&sl->lock);
	return ready;
}

/* The answer to a pending stream came (or something else did): look. */
static int lchan_stream_listen_answered(struct wait_queue_entry *wait,
					unsigned int mode, int sync, void *key)
{
	struct lchan_stream_entry *e =
		container_of(wait, struct lchan_stream_entry, wait);

	lchan_stream_listen_kick(e->sl);
	return 0;
}

/*
 * A stream for the next request of @lst, accepted and waiting for its
 * peer's answer: 1, or 0 when none waits (or the listener died with its
 * device), or -ENOMEM.  A request that does not become a stream (the peer
 * left, its device went) is passed over, as TCP passes over a connection
 * reset before it was accepted: 1, progress all the same.
 */
static int lchan_stream_listen_set_up(struct lchan_stream_listener *sl,
				      struct lchan_listen_point *lst)
{
	struct lchan_stream_entry *e;
	struct lchan_stream *st;

	e = kmalloc(sizeof(*e), LCHAN_GFP_USER);
	if (!e)
		return -ENOMEM;
	st = lchan_listen_next_stream(lst);
	if (IS_ERR(st)) {
		kfree(e);
		if (PTR_ERR(st) == -EAGAIN || PTR_ERR(st) == -ENODEV)
			return 0;
		return PTR_ERR(st) == -ENOMEM ? -ENOMEM : 1;
	}
	e->st = st;
	e->sl = sl;
	e->deadline = jiffies + msecs_to_jiffies(LCHAN_CONNECT_TIMEOUT_MS);
	init_waitqueue_func_entry(&e->wait, lchan_stream_listen_answered);
	/* An answer before this is found by lchan_stream_listen_settle(). */
	add_wait_queue(lchan_stream_wq(st), &e->wait);
	spin_lock(&sl->lock);
	list_add_tail(&e->node, &sl->pending);
	sl->nr_pending++;
	spin_unlock(&sl->lock);
	return 1;
}

/*
 * The pending streams whose answer came or whose time is up: the
 * connected ones are queued for accept, the others end.  The work runs
 * again at the first deadline still to come.
 */
static void lchan_stream_listen_settle(struct lchan_stream_listener *sl)
{
	struct lchan_stream_entry *e, *next;
	unsigned long first = 0;
	bool waiting = false;

	list_for_each_entry_safe(e, next, &sl->pending, node) {
		if (!lchan_stream_answered(e->st) &&
		    time_before(jiffies, e->deadline)) {
			if (!waiting || time_before(e->deadline, first))
				first = e->deadline;
			waiting = true;
			continue;
		}
		remove_wait_queue(lchan_stream_wq(e->st), &e->wait);
		spin_lock(&sl->lock);
		list_del(&e->node);
		sl->nr_pending--;
		spin_unlock(&sl->lock);
		if (lchan_stream_finish(e->st, e->deadline)) {
			kfree(e);
			continue;
		}
		spin_lock(&sl->lock);
		list_add_tail(&e->node, &sl->ready);
		sl->nr_ready++;
		spin_unlock(&sl->lock);
		wake_up_interruptible_poll(&sl->wq, EPOLLIN | EPOLLRDNORM);
	}
	/* Not queued when a kick came meanwhile: that run looks again. */
	if (waiting)
		queue_delayed_work(lchan_wq, &sl->work,
				   max_t(long, (long)(first - jiffies), 1));
}

/*
 * The work: the requests of every lchan listener in turn while there is
 * room, charged to the stream listener's creator, then the answers.
 */
static void lchan_stream_listen_work(struct work_struct *work)
{
	struct lchan_stream_listener *sl =
		container_of(to_delayed_work(work),
			     struct lchan_stream_listener, work);
	struct mem_cgroup *old;
	bool room, more = true;
	u32 i;
	int ret;

	spin_lock(&sl->lock);
	room = !sl->closing;
	spin_unlock(&sl->lock);
	if (!room)
		return;
	old = set_active_memcg(sl->memcg);
	while (more) {
		more = false;
		for (i = 0; i < sl->nr_points; i++) {
			spin_lock(&sl->lock);
			room = lchan_stream_listen_room(sl);
			spin_unlock(&sl->lock);
			if (!room)
				goto settle;
			ret = lchan_stream_listen_set_up(sl, sl->points[i].lst);
			if (ret < 0)
				goto settle;
			more |= ret;
		}
	}
settle:
	lchan_stream_listen_settle(sl);
	set_active_memcg(old);
}

/* A request came to an lchan listener (or it died): the work looks. */
static int lchan_stream_listen_woken(struct wait_queue_entry *wait,
				     unsigned int mode, int sync, void *key)
{
	struct lchan_stream_point *pt =
		container_of(wait, struct lchan_stream_point, wait);

	lchan_stream_listen_kick(pt->sl);
	return 0;
}

static int lchan_stream_listen_take(struct lchan_stream_listener *sl,
				    struct socket *newsock,
				    const struct proto_accept_arg *arg)
{
	int ret = lchan_stream_listen_take_tcp(sl, newsock, arg);

	if (ret != -EAGAIN)
		return ret;
	return lchan_stream_listen_take_lchan(sl, newsock);
}

/* Whether accept has something to take, or an error to give. */
static bool lchan_stream_listen_ready(struct lchan_stream_listener *sl)
{
	/* A poll without a table neither waits nor sleeps. */
	if (sl->tcp->ops->poll(NULL, sl->tcp, NULL))
		return true;
	return lchan_stream_listen_has_ready(sl);
}

static int lchan_stream_listen_accept(struct socket *sock,
				      struct socket *newsock,
				      struct proto_accept_arg *arg)
{
	struct lchan_stream_listener *sl = lchan_stream_listen_of(sock->sk);
	long timeo = sock_rcvtimeo(sock->sk, arg->flags & O_NONBLOCK);
	struct wait_queue_entry tcp_wait, own_wait;
	int ret;

	ret = lchan_stream_listen_take(sl, newsock, arg);
	if (ret != -EAGAIN || !timeo)
		return ret;

	init_waitqueue_entry(&tcp_wait, current);
	init_waitqueue_entry(&own_wait, current);
	add_wait_queue(sk_sleep(sl->tcp->sk), &tcp_wait);
	add_wait_queue(&sl->wq, &own_wait);
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!lchan_stream_listen_ready(sl))
			timeo = schedule_timeout(timeo);
		__set_current_state(TASK_RUNNING);
		if (signal_pending(current)) {
			ret = sock_intr_errno(timeo);
			break;
		}
		ret = lchan_stream_listen_take(sl, newsock, arg);
		if (ret != -EAGAIN || !timeo)
			break;
	}
	remove_wait_queue(&sl->wq, &own_wait);
	remove_wait_queue(sk_sleep(sl->tcp->sk), &tcp_wait);
	return ret;
}

static __poll_t lchan_stream_listen_poll(struct file *file,
					 struct socket *sock, poll_table *wait)
{
	struct lchan_stream_listener *sl = lchan_stream_listen_of(sock->sk);
	__poll_t mask;

	/* The TCP socket's poll waits for @file on its own queue. */
	mask = sl->tcp->ops->poll(file, sl->tcp, wait);
	poll_wait(file, &sl->wq, wait);
	if (lchan_stream_listen_has_ready(sl))
		mask |= EPOLLIN | EPOLLRDNORM;
	return mask;
}

/*
 * Also called (6.10 on) for a socket just accepted, whose ops are the
 * TCP socket's or a stream's by then.
 */
static int lchan_stream_listen_getname(struct socket *sock,
				       struct sockaddr *addr, int peer)
{
	struct socket *tcp;

	if (sock->ops != &lchan_stream_listen_ops)
		return sock->ops->getname(sock, addr, peer);
	tcp = lchan_stream_listen_tcp_of(sock);
	return tcp->ops->getname(tcp, addr, peer);
}

/* The calls of a listening socket other than accept and poll: TCP's. */

static int lchan_stream_listen_bind(struct socket *sock,
				    struct sockaddr *addr, int len)
{
	struct socket *tcp = lchan_stream_listen_tcp_of(sock);

	return tcp->ops->bind(tcp, addr, len);
}

static int lchan_stream_listen_connect(struct socket *sock,
				       struct sockaddr *addr, int len,
				       int flags)
{
	struct socket *tcp = lchan_stream_listen_tcp_of(sock);

	return tcp->ops->connect(tcp, addr, len, flags);
}

static int lchan_stream_listen_ioctl(struct socket *sock, unsigned int cmd,
				     unsigned long arg)
{
	struct socket *tcp = lchan_stream_listen_tcp_of(sock);

	return tcp->ops->ioctl(tcp, cmd, arg);
}

static int lchan_stream_listen_listen(struct socket *sock, int backlog)
{
	struct socket *tcp = lchan_stream_listen_tcp_of(sock);

	return tcp->ops->listen(tcp, backlog);
}

static int lchan_stream_listen_shutdown(struct socket *sock, int how)
{
	struct socket *tcp = lchan_stream_listen_tcp_of(sock);

	return tcp->ops->shutdown(tcp, how);
}

static int lchan_stream_listen_setsockopt(struct socket *sock, int level,
					  int optname, sockptr_t optval,
					  unsigned int optlen)
{
	struct socket *tcp = lchan_stream_listen_tcp_of(sock);

	return tcp->ops->setsockopt(tcp, level, optname, optval, optlen);
}

static int lchan_stream_listen_getsockopt(struct socket *sock, int level,
					  int optname, char __user *optval,
					  int __user *optlen)
{
	struct socket *tcp = lchan_stream_listen_tcp_of(sock);

	return tcp->ops->getsockopt(tcp, level, optname, optval, optlen);
}

static int lchan_stream_listen_sendmsg(struct socket *sock,
				       struct msghdr *msg, size_t len)
{
	struct socket *tcp = lchan_stream_listen_tcp_of(sock);

	return tcp->ops->sendmsg(tcp, msg, len);
}

static int lchan_stream_listen_recvmsg(struct socket *sock,
				       struct msghdr *msg, size_t len,
				       int flags)
{
	struct socket *tcp = lchan_stream_listen_tcp_of(sock);

	return tcp->ops->recvmsg(tcp, msg, len, flags);
}

/* The streams of @list end (their peers read a reset). */
static void lchan_stream_listen_abort(struct list_head *list, bool pending)
{
	struct lchan_stream_entry *e, *next;

	list_for_each_entry_safe(e, next, list, node) {
		list_del(&e->node);
		if (pending)
			remove_wait_queue(lchan_stream_wq(e->st), &e->wait);
		lchan_stream_abort(e->st);
		kfree(e);
	}
}

/*
 * The lchan side's end: no request is set up after it, and the streams
 * set up and not accepted end.  A pending stream's wake-up may still queue
 * the work until its entry is gone; a run then finds 'closing' and leaves.
 */
static void lchan_stream_listen_end(struct lchan_stream_listener *sl)
{
	u32 i;

	spin_lock(&sl->lock);
	sl->closing = true;
	spin_unlock(&sl->lock);
	for (i = 0; i < sl->nr_points; i++)
		remove_wait_queue(&sl->points[i].lst->wq, &sl->points[i].wait);
	cancel_delayed_work_sync(&sl->work);
	for (i = 0; i < sl->nr_points; i++)
		lchan_listen_close(sl->points[i].lst);
	sl->nr_points = 0;
	lchan_stream_listen_abort(&sl->pending, true);
	sl->nr_pending = 0;
	/* Nothing can queue it now. */
	cancel_delayed_work_sync(&sl->work);
	lchan_stream_listen_abort(&sl->ready, false);
	sl->nr_ready = 0;
	mem_cgroup_put(sl->memcg);
}

static int lchan_stream_listen_release(struct socket *sock)
{
	struct sock *sk = sock->sk;
	struct lchan_stream_listener *sl;

	if (!sk)
		return 0;
	sl = lchan_stream_listen_of(sk);
	lchan_stream_listen_end(sl);
	sockfd_put(sl->tcp);
	sock_orphan(sk);
	sock->sk = NULL;
	sock_put(sk);
	return 0;
}

LCHAN_COMPAT_ACCEPT_DEFINE(lchan_stream_listen_accept);

static const struct proto_ops lchan_stream_listen_ops = {
	.family = PF_INET,
	.owner = THIS_MODULE,
	.release = lchan_stream_listen_release,
	.bind = lchan_stream_listen_bind,
	.connect = lchan_stream_listen_connect,
	.socketpair = sock_no_socketpair,
	.accept = LCHAN_COMPAT_ACCEPT(lchan_stream_listen_accept),
	.getname = lchan_stream_listen_getname,
	.poll = lchan_stream_listen_poll,
	.ioctl = lchan_stream_listen_ioctl,
	.listen = lchan_stream_listen_listen,
	.shutdown = lchan_stream_listen_shutdown,
	.setsockopt = lchan_stream_listen_setsockopt,
	.getsockopt = lchan_stream_listen_getsockopt,
	.sendmsg = lchan_stream_listen_sendmsg,
	.recvmsg = lchan_stream_listen_recvmsg,
	.mmap = sock_no_mmap,
};

/*
 * The SOL_SOCKET options the TCP socket had, which the kernel reads on
 * the stream listener's own sock (getsockopt, accept's SO_RCVTIMEO).
 */
static void lchan_stream_listen_copy_opts(struct sock *sk, struct sock *tcp)
{
	static const enum sock_flags flags[] = {
		SOCK_LINGER, SOCK_KEEPOPEN, SOCK_URGINLINE, SOCK_DBG,
		SOCK_LOCALROUTE,
	};
	int i;

	/* setsockopt() writes them under the socket's lock. */
	lock_sock(tcp);
	sk->sk_reuse = tcp->sk_reuse;
	sk->sk_reuseport = tcp->sk_reuseport;
	sk->sk_rcvbuf = tcp->sk_rcvbuf;
	sk->sk_sndbuf = tcp->sk_sndbuf;
	sk->sk_userlocks = tcp->sk_userlocks;
	sk->sk_rcvtimeo = tcp->sk_rcvtimeo;
	sk->sk_sndtimeo = tcp->sk_sndtimeo;
	sk->sk_lingertime = tcp->sk_lingertime;
	sk->sk_priority = tcp->sk_priority;
	sk->sk_mark = tcp->sk_mark;
	for (i = 0; i < ARRAY_SIZE(flags); i++)
		if (sock_flag(tcp, flags[i]))
			sock_set_flag(sk, flags[i]);
	release_sock(tcp);
}

/*
 * A listening TCP socket of the caller's namespace; not one of lchan's
 * sockets, which say they are TCP's too.
 */
static int lchan_stream_listen_check_tcp(struct socket *tcp)
{
	struct sock *sk = tcp->sk;

	if (tcp->ops->owner == THIS_MODULE)
		return -EINVAL;
	if (tcp->type != SOCK_STREAM || sk->sk_protocol != IPPROTO_TCP ||
	    (sk->sk_family != AF_INET && sk->sk_family != AF_INET6) ||
	    READ_ONCE(sk->sk_state) != TCP_LISTEN ||
	    !net_eq(sock_net(sk), current->nsproxy->net_ns))
		return -EINVAL;
	return 0;
}

static void lchan_stream_listen_setup_sock(struct socket *sock, void *arg)
{
	struct lchan_stream_listener *sl = arg;

	sock->ops = &lchan_stream_listen_ops;
	sock_init_data(sock, &sl->sk);
	sl->sk.sk_protocol = IPPROTO_TCP;
	sl->sk.sk_state = TCP_LISTEN;
	lchan_stream_listen_copy_opts(&sl->sk, sl->tcp->sk);
}

/* The socket of a stream listener: its release ends @sl's parts. */
static int lchan_stream_listen_install(struct lchan_stream_listener *sl,
				       u32 flags)
{
	bool set_up;
	int fd;

	fd = lchan_stream_sock_fd(flags, lchan_stream_listen_setup_sock, sl,
				  &set_up);
	if (fd < 0 && !set_up) {
		lchan_stream_listen_end(sl);
		sockfd_put(sl->tcp);
		sk_free(&sl->sk);
	}
	return fd;
}

/* An lchan listener on @ss, the stream listener's from now on. */
static int lchan_stream_listen_point(struct lchan_stream_listener *sl,
				     struct lchan_context *ctx,
				     const struct sockaddr_storage *ss,
				     u32 backlog)
{
	struct sockaddr_storage addr = *ss;
	struct lchan_stream_point *pt;
	struct lchan_listen_point *lst;

	if (sl->nr_points == LCHAN_STREAM_LISTEN_POINTS)
		return -ENOSPC;
	lst = lchan_listen_open(ctx, &addr, backlog,
				addr.ss_family == AF_INET6 &&
				sl->tcp->sk->sk_ipv6only);
	if (IS_ERR(lst))
		return PTR_ERR(lst);
	pt = &sl->points[sl->nr_points++];
	pt->lst = lst;
	pt->sl = sl;
	init_waitqueue_func_entry(&pt->wait, lchan_stream_listen_woken);
	add_wait_queue(&lst->wq, &pt->wait);
	return 0;
}

/*
 * The lchan side on the TCP socket's address @ss.  A wildcard that an
 * iWARP device keeps rdma_cm from listening on: each address of the other
 * RDMA devices instead, as many as listen.
 */
static int lchan_stream_listen_points(struct lchan_stream_listener *sl,
				      struct lchan_context *ctx,
				      const struct sockaddr_storage *ss,
				      u32 backlog)
{
	struct sockaddr_storage *addrs;
	bool v6 = ss->ss_family == AF_INET6;
	__be16 port;
	int ret, n, i;

	ret = lchan_stream_listen_point(sl, ctx, ss, backlog);
	if (ret != -EADDRINUSE || !lchan_listen_wildcard(ss))
		return ret;
	addrs = kcalloc(LCHAN_STREAM_LISTEN_POINTS, sizeof(*addrs),
			GFP_KERNEL);
	if (!addrs)
		return -ENOMEM;
	port = v6 ? ((const struct sockaddr_in6 *)ss)->sin6_port :
		    ((const struct sockaddr_in *)ss)->sin_port;
	n = lchan_stream_addrs(sock_net(sl->tcp->sk), port,
			       !v6 || !sl->tcp->sk->sk_ipv6only, v6, addrs,
			       LCHAN_STREAM_LISTEN_POINTS);
	for (i = 0; i < n; i++)
		lchan_stream_listen_point(sl, ctx, &addrs[i], backlog);
	kfree(addrs);
	return sl->nr_points ? 0 : ret;
}

long lchan_stream_listen_new(struct lchan_ucmd *ucmd)
{
	struct lchan_context *ctx = ucmd->file->private_data;
	struct lchan_listen_args *req = ucmd->cmd;
	struct lchan_stream_listener *sl;
	struct sockaddr_storage ss = {};
	struct socket *tcp;
	struct sock *sk;
	u32 backlog;
	int ret;

	tcp = sockfd_lookup(req->sock_fd, &ret);
	if (!tcp)
		return ret;
	ret = lchan_stream_listen_check_tcp(tcp);
	if (ret)
		goto err_put;
	ret = kernel_getsockname(tcp, (struct sockaddr *)&ss);
	if (ret < 0)
		goto err_put;
	ret = lchan_charge_room();
	if (ret)
		goto err_put;
	sk = sk_alloc(current->nsproxy->net_ns, tcp->sk->sk_family,
		      LCHAN_GFP_USER, &lchan_stream_listen_prot, 0);
	if (!sk) {
		ret = -ENOMEM;
		goto err_put;
	}
	/* The TCP socket's backlog, unless the caller gives one. */
	backlog = req->backlog ?:
		  clamp_t(u32, READ_ONCE(tcp->sk->sk_max_ack_backlog), 1,
			  LCHAN_MAX_BACKLOG);
	sl = lchan_stream_listen_of(sk);
	sl->tcp = tcp;
	sl->memcg = get_mem_cgroup_from_mm(current->mm);
	INIT_DELAYED_WORK(&sl->work, lchan_stream_listen_work);
	init_waitqueue_head(&sl->wq);
	spin_lock_init(&sl->lock);
	INIT_LIST_HEAD(&sl->pending);
	INIT_LIST_HEAD(&sl->ready);
	sl->max_ready = backlog;
	ret = lchan_stream_listen_points(sl, ctx, &ss, backlog);
	if (!ret) {
		lchan_cm_sockaddr_to_addr(&ss, &req->addr);
		ret = lchan_ioctl_respond(ucmd);
	}
	if (ret) {
		lchan_stream_listen_end(sl);
		sk_free(sk);
		goto err_put;
	}
	/* A request may have come before the entries were there. */
	lchan_stream_listen_kick(sl);
	return lchan_stream_listen_install(sl, req->flags);

err_put:
	sockfd_put(tcp);
	return ret;
}

int lchan_stream_listen_init(void)
{
	return proto_register(&lchan_stream_listen_prot, 0);
}

void lchan_stream_listen_exit(void)
{
	proto_unregister(&lchan_stream_listen_prot);
}
