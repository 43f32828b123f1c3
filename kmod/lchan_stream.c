// SPDX-License-Identifier: GPL-2.0
/*
 * Stream channels: a connected channel whose file is a socket, a byte
 * stream as TCP's, carried by SENDs the kernel posts from buffers of its
 * own (CONNECT and ACCEPT with LCHAN_FD_STREAM).  Every call of the socket
 * API then works on it as on a TCP socket: read, write, the vector and
 * message calls, poll, select and epoll, shutdown, sendfile and splice,
 * fork, exec and descriptor passing, because the file is the kernel's.
 *
 * Protocol (lchan(7), "Stream channels"): each message is one SEND, an
 * 8-byte header {type, credits} then, for DATA, the payload.
 *   DATA    up to a page of the stream, less the header
 *   CREDIT  nothing but credits
 *   EOS     the sender's end of the stream: no DATA follows
 * Each side posts LCHAN_STREAM_CREDITS receives for DATA and the peer may
 * have only as many in flight as it holds credits, so a SEND never finds
 * the receive queue empty (iWARP would end the connection).  A DATA
 * receive is posted again once the reader took all of it, and its credit
 * goes back in the header of the next message, or in a CREDIT once
 * LCHAN_STREAM_CREDIT_BATCH are owed.  CREDIT and EOS need no credit: they
 * land in LCHAN_STREAM_SPARE receives beyond the credits, posted again as
 * soon as they are seen.  At most one EOS, and at most
 * CREDITS / CREDIT_BATCH + 1 CREDITs can be unseen at once, since the peer
 * sends DATA only with credits and a CREDIT only after our DATA.
 *
 * Posting needs chan->lock (the QP goes under it at teardown); the
 * completion handlers (softirq or workqueue) only take st->lock, count,
 * queue and wake, and leave posting to the callers' next call or to the
 * stream's work.  Waiters sleep on chan->wq, which also hears the
 * channel's state changes.
 */
#include <linux/highmem.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/net.h>
#include <linux/nsproxy.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/sockios.h>
#include <asm/ioctls.h>
#include <net/sock.h>
#include <net/tcp_states.h>
#include <uapi/linux/tcp.h>

#include "lchan.h"

enum {
	LCHAN_STREAM_DATA = 1,
	LCHAN_STREAM_CREDIT,
	LCHAN_STREAM_EOS,
};

struct lchan_stream_hdr {
	u8 type;
	u8 resv;
	__be16 credits;
	__be32 resv2;
};

#define LCHAN_STREAM_SLOT	PAGE_SIZE
#define LCHAN_STREAM_HDR	sizeof(struct lchan_stream_hdr)
#define LCHAN_STREAM_PAYLOAD	(LCHAN_STREAM_SLOT - LCHAN_STREAM_HDR)
#define LCHAN_STREAM_CREDITS	32
#define LCHAN_STREAM_CREDIT_BATCH	(LCHAN_STREAM_CREDITS / 4)
/* One EOS, the CREDITs that can be unseen, and a margin. */
#define LCHAN_STREAM_SPARE	(1 + LCHAN_STREAM_CREDITS / \
				 LCHAN_STREAM_CREDIT_BATCH + 1 + 2)
#define LCHAN_STREAM_RECVS	(LCHAN_STREAM_CREDITS + LCHAN_STREAM_SPARE)
#define LCHAN_STREAM_SENDS	32
/* How long a closed stream's last bytes may take to reach the peer. */
#define LCHAN_STREAM_CLOSE_MS	10000
/* ... looking again this often whether its EOS can go. */
#define LCHAN_STREAM_LOOK_MS	100

/* The TCP options a program may set and read back; they change nothing. */
static const int lchan_stream_tcp_opts[] = {
	TCP_NODELAY, TCP_CORK, TCP_QUICKACK, TCP_KEEPIDLE, TCP_KEEPINTVL,
	TCP_KEEPCNT, TCP_USER_TIMEOUT, TCP_DEFER_ACCEPT, TCP_NOTSENT_LOWAT,
};

struct lchan_stream_buf {
	struct ib_cqe cqe;
	struct lchan_stream *st;
	struct list_head node;		/* the list its state puts it on */
	void *va;
	u64 dma;
	u32 len;			/* payload bytes: received, or to send */
	u32 off;			/* receive: payload bytes read */
	bool credit;			/* receive: reposting gives a credit */
};

/* Why a stream ended: set once, under st->lock. */
struct lchan_stream {
	struct sock sk;			/* first: sk_alloc() makes the whole */
	struct lchan_channel *chan;	/* ours: it ends with the stream */
	struct ib_device *ibdev;
	u32 lkey;

	struct mutex rx_mutex;		/* one reader at a time */
	struct mutex tx_mutex;		/* one writer at a time */
	spinlock_t lock;		/* _bh: what follows */
	struct list_head rx_ready;	/* DATA received, in stream order */
	struct list_head rx_repost;	/* receives to post again */
	struct list_head rx_idle;	/* receives not posted */
	struct list_head tx_free;
	u32 rx_posted;			/* receives on the QP */
	u32 rx_bytes;			/* unread bytes in rx_ready */
	u32 tx_bytes;			/* bytes sent and not completed */
	u32 tx_busy;			/* send slots in flight or being filled */
	u16 credits;			/* DATA we may send */
	u16 owed;			/* credits to give back */
	bool peer_eos;			/* the peer's EOS was received */
	bool eos_queued;		/* ours: to send, or sent */
	bool eos_sent;
	bool tx_dead;			/* a send failed: nothing more goes */
	bool tx_waiting;		/* a writer or poller found no room */
	bool connect_unreported;	/* see lchan_stream_reconnect() */
	bool tcp_port;			/* its port is a TCP listener's */
	int err;			/* the stream's end, a positive errno */
	int tcp_opt[ARRAY_SIZE(lchan_stream_tcp_opts)];

	struct lchan_stream_buf rx[LCHAN_STREAM_RECVS];
	struct lchan_stream_buf tx[LCHAN_STREAM_SENDS];
	struct work_struct work;	/* reposts and pushes for the handlers */
	struct work_struct end_work;	/* the end, after the last close */
};

static struct proto lchan_stream_prot = {
	.name = "LCHAN_STREAM",
	.owner = THIS_MODULE,
	.obj_size = sizeof(struct lchan_stream),
};

static const struct proto_ops lchan_stream_ops;

static struct lchan_stream *lchan_stream_of(struct sock *sk)
{
	return container_of(sk, struct lchan_stream, sk);
}

/* The stream ends with @err.  st->lock held. */
static void lchan_stream_fail(struct lchan_stream *st, int err)
{
	if (st->err)
		return;
	st->err = err;
	WRITE_ONCE(st->sk.sk_err, err);
	WRITE_ONCE(st->sk.sk_shutdown, SHUTDOWN_MASK);
}

/*
 * The channel is down and no receive is left on the QP: nothing more
 * arrives.  Without the peer's EOS that is a reset.  st->lock held.
 */
static bool lchan_stream_rx_over(struct lchan_stream *st)
{
	if (st->rx_posted || !lchan_chan_done(st->chan))
		return false;
	if (!st->peer_eos)
		lchan_stream_fail(st, ECONNRESET);
	/* Nothing goes either way any more: hung up, as TCP's after a close. */
	WRITE_ONCE(st->sk.sk_shutdown, SHUTDOWN_MASK);
	return true;
}

/*
 * The channel's counters in sysfs: a stream channel's messages and payload
 * bytes.  It has no ring requests, so st->lock orders their writers.
 */
static void lchan_stream_count(u64 *counter, u64 n)
{
	WRITE_ONCE(*counter, *counter + n);
}

static void lchan_stream_kick(struct lchan_stream *st)
{
	queue_work(lchan_wq, &st->work);
}

/*
 * The payload of @rx, a DATA just received, appended to the last message
 * not read yet if it fits there: its receive then goes back to the QP at
 * once and its credit to the peer, so that small writes no reader has
 * taken yet do not hold every credit, as TCP's receive queue holds them
 * in few buffers.  st->lock held.
 */
static bool lchan_stream_merge(struct lchan_stream *st,
			       struct lchan_stream_buf *rx)
{
	struct lchan_stream_buf *tail;

	if (list_empty(&st->rx_ready))
		return false;
	tail = list_last_entry(&st->rx_ready, struct lchan_stream_buf, node);
	if (tail->len + rx->len > LCHAN_STREAM_PAYLOAD)
		return false;
	/* Beyond what a reader may copy: it reads tail->len under st->lock. */
	memcpy(tail->va + LCHAN_STREAM_HDR + tail->len,
	       rx->va + LCHAN_STREAM_HDR, rx->len);
	tail->len += rx->len;
	return true;
}

static void lchan_stream_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lchan_stream_buf *rx = container_of(wc->wr_cqe,
						   struct lchan_stream_buf, cqe);
	struct lchan_stream *st = rx->st;
	const struct lchan_stream_hdr *hdr = rx->va;
	/* Poll keys: an edge-triggered epoll hears only what changed. */
	__poll_t key = 0;
	bool kick = false;

	ib_dma_sync_single_for_cpu(st->ibdev, rx->dma, LCHAN_STREAM_SLOT,
				   DMA_FROM_DEVICE);
	lchan_keepalive_heard(st->chan);
	if (wc->status == IB_WC_SUCCESS)
		lchan_cm_data_arrived(st->chan);
	spin_lock_bh(&st->lock);
	st->rx_posted--;
	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			lchan_stream_fail(st, ECONNRESET);
		list_add_tail(&rx->node, &st->rx_idle);
		lchan_stream_rx_over(st);
		goto out_wake;
	}
	if (wc->byte_len < LCHAN_STREAM_HDR ||
	    be16_to_cpu(hdr->credits) > LCHAN_STREAM_CREDITS - st->credits) {
		lchan_stream_fail(st, EPROTO);
		list_add_tail(&rx->node, &st->rx_idle);
		goto out_wake;
	}
	lchan_stream_count(&st->chan->stats.recv_ops, 1);
	lchan_stream_count(&st->chan->stats.recv_bytes,
			   wc->byte_len - LCHAN_STREAM_HDR);
	st->credits += be16_to_cpu(hdr->credits);
	if (hdr->credits && st->tx_waiting) {
		st->tx_waiting = false;
		key |= EPOLLOUT | EPOLLWRNORM;
	}
	rx->len = wc->byte_len - LCHAN_STREAM_HDR;
	rx->off = 0;
	switch (hdr->type) {
	case LCHAN_STREAM_DATA:
		if (!rx->len || st->peer_eos) {
			lchan_stream_fail(st, EPROTO);
			list_add_tail(&rx->node, &st->rx_idle);
			break;
		}
		rx->credit = true;
		st->rx_bytes += rx->len;
		key |= EPOLLIN | EPOLLRDNORM;
		if (lchan_stream_merge(st, rx)) {
			list_add_tail(&rx->node, &st->rx_repost);
			kick = true;
			break;
		}
		list_add_tail(&rx->node, &st->rx_ready);
		break;
	case LCHAN_STREAM_EOS:
		st->peer_eos = true;
		WRITE_ONCE(st->sk.sk_shutdown,
			   st->sk.sk_shutdown | RCV_SHUTDOWN);
		key |= EPOLLIN | EPOLLRDNORM | EPOLLRDHUP;
		fallthrough;
	case LCHAN_STREAM_CREDIT:
		rx->credit = false;
		list_add_tail(&rx->node, &st->rx_repost);
		kick = true;
		break;
	default:
		lchan_stream_fail(st, EPROTO);
		list_add_tail(&rx->node, &st->rx_idle);
		break;
	}
out_wake:
	/* A failure or a flush: whatever waits looks again. */
	if (st->err || wc->status != IB_WC_SUCCESS)
		key = 0;
	spin_unlock_bh(&st->lock);
	if (kick)
		lchan_stream_kick(st);
	if (key)
		wake_up_poll(&st->chan->wq, key);
	else
		wake_up(&st->chan->wq);
}

static void lchan_stream_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lchan_stream_buf *tx = container_of(wc->wr_cqe,
						   struct lchan_stream_buf, cqe);
	struct lchan_stream *st = tx->st;
	bool kick, wake;

	lchan_keepalive_heard(st->chan);
	spin_lock_bh(&st->lock);
	st->tx_busy--;
	st->tx_bytes -= tx->len;
	list_add(&tx->node, &st->tx_free);
	/*
	 * A SEND that did not arrive: nothing more goes out.  What came in
	 * is still read, and how the stream ended (EOF or reset) is the
	 * receive side's to tell (lchan_stream_rx_over()).
	 */
	if (wc->status != IB_WC_SUCCESS) {
		st->tx_dead = true;
	} else {
		lchan_stream_count(&st->chan->stats.send_ops, 1);
		lchan_stream_count(&st->chan->stats.send_bytes, tx->len);
	}
	kick = st->owed >= LCHAN_STREAM_CREDIT_BATCH ||
	       (st->eos_queued && !st->eos_sent);
	/* Room is news only to a writer that found none, as TCP's. */
	wake = st->tx_waiting || wc->status != IB_WC_SUCCESS;
	st->tx_waiting = false;
	spin_unlock_bh(&st->lock);
	if (kick)
		lchan_stream_kick(st);
	if (wc->status != IB_WC_SUCCESS)
		wake_up(&st->chan->wq);
	else if (wake)
		wake_up_poll(&st->chan->wq, EPOLLOUT | EPOLLWRNORM);
}

/* A free send slot, taken, or NULL.  st->lock held. */
static struct lchan_stream_buf *lchan_stream_take_tx(struct lchan_stream *st)
{
	struct lchan_stream_buf *tx;

	tx = list_first_entry_or_null(&st->tx_free, struct lchan_stream_buf,
				      node);
	if (tx) {
		list_del(&tx->node);
		st->tx_busy++;
	}
	return tx;
}

/* A slot taken and not posted goes back.  st->lock held. */
static void lchan_stream_untake_tx(struct lchan_stream *st,
				   struct lchan_stream_buf *tx)
{
	st->tx_busy--;
	list_add(&tx->node, &st->tx_free);
}

/* The QP, while the stream may post on it.  chan->lock held. */
static struct ib_qp *lchan_stream_qp(struct lchan_stream *st)
{
	struct lchan_channel *chan = st->chan;
	int state = READ_ONCE(chan->state);

	if (!chan->qp || state == LCHAN_STATE_DISCONNECTED ||
	    state == LCHAN_STATE_ERROR)
		return NULL;
	return chan->qp;
}

/*
 * Post @tx as a message of @type with @tx->len payload bytes, the owed
 * credits in its header.  chan->lock held, st->lock not.
 */
static int lchan_stream_post_send(struct lchan_stream *st,
				  struct lchan_stream_buf *tx, u8 type)
{
	struct lchan_stream_hdr *hdr = tx->va;
	struct ib_sge sge = {
		.addr = tx->dma,
		.length = LCHAN_STREAM_HDR + tx->len,
		.lkey = st->lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe = &tx->cqe,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_qp *qp = lchan_stream_qp(st);
	u16 credits;
	int ret;

	spin_lock_bh(&st->lock);
	credits = st->owed;
	st->owed = 0;
	if (qp) {
		st->tx_bytes += tx->len;
		if (type == LCHAN_STREAM_EOS)
			st->eos_sent = true;
	} else {
		lchan_stream_untake_tx(st, tx);
		st->tx_dead = true;
	}
	spin_unlock_bh(&st->lock);
	if (!qp)
		return -EPIPE;
	hdr->type = type;
	hdr->resv = 0;
	hdr->credits = cpu_to_be16(credits);
	hdr->resv2 = 0;
	ib_dma_sync_single_for_device(st->ibdev, tx->dma, sge.length,
				      DMA_TO_DEVICE);
	ret = lchan_post_own_send(st->chan, &wr);
	if (ret) {
		spin_lock_bh(&st->lock);
		st->tx_bytes -= tx->len;
		lchan_stream_untake_tx(st, tx);
		st->tx_dead = true;
		spin_unlock_bh(&st->lock);
	}
	return ret;
}

/* Post @rx as a receive.  chan->lock held, st->lock not. */
static int lchan_stream_post_recv(struct lchan_stream *st,
				  struct lchan_stream_buf *rx)
{
	struct ib_sge sge = {
		.addr = rx->dma,
		.length = LCHAN_STREAM_SLOT,
		.lkey = st->lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &rx->cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};
	struct ib_qp *qp = lchan_stream_qp(st);
	int ret = -ENOTCONN;

	/* The CPU may have written in it (lchan_stream_merge()). */
	ib_dma_sync_single_for_device(st->ibdev, rx->dma, LCHAN_STREAM_SLOT,
				      DMA_FROM_DEVICE);
	/* A DATA receive gives its credit once it is posted. */
	spin_lock_bh(&st->lock);
	if (qp) {
		st->rx_posted++;
		if (rx->credit)
			st->owed++;
	}
	spin_unlock_bh(&st->lock);
	if (qp) {
		ret = ib_post_recv(qp, &wr, NULL);
		if (!ret)
			return 0;
	}
	spin_lock_bh(&st->lock);
	if (qp) {
		st->rx_posted--;
		if (rx->credit)
			st->owed--;
	}
	list_add_tail(&rx->node, &st->rx_idle);
	spin_unlock_bh(&st->lock);
	return ret;
}

/*
 * What waits for posting: receives to post again, then a CREDIT when
 * enough are owed and an EOS when asked for, each when a send slot is
 * free.  chan->lock held.
 */
static void lchan_stream_flush(struct lchan_stream *st)
{
	struct lchan_stream_buf *buf;
	u8 type;

	for (;;) {
		spin_lock_bh(&st->lock);
		buf = list_first_entry_or_null(&st->rx_repost,
					       struct lchan_stream_buf, node);
		if (buf)
			list_del(&buf->node);
		spin_unlock_bh(&st->lock);
		if (!buf)
			break;
		lchan_stream_post_recv(st, buf);
	}
	/* On iWARP nothing of ours goes before the opening exchange's. */
	if (lchan_transport_opening(st->chan))
		return;
	for (;;) {
		spin_lock_bh(&st->lock);
		type = 0;
		if (st->eos_queued && !st->eos_sent)
			type = LCHAN_STREAM_EOS;
		else if (st->owed >= LCHAN_STREAM_CREDIT_BATCH)
			type = LCHAN_STREAM_CREDIT;
		buf = type ? lchan_stream_take_tx(st) : NULL;
		spin_unlock_bh(&st->lock);
		if (!buf)
			break;
		buf->len = 0;
		if (lchan_stream_post_send(st, buf, type))
			break;
	}
}

/* lchan_stream_flush() from a caller that does not hold chan->lock. */
static void lchan_stream_flush_now(struct lchan_stream *st)
{
	mutex_lock(&st->chan->lock);
	lchan_stream_flush(st);
	mutex_unlock(&st->chan->lock);
}

static void lchan_stream_work(struct work_struct *work)
{
	lchan_stream_flush_now(container_of(work, struct lchan_stream, work));
}

/* The buffers, mapped for the device.  Before the QP has a request. */
static int lchan_stream_map(struct lchan_stream *st)
{
	struct lchan_stream_buf *buf;
	u32 i;

	for (i = 0; i < LCHAN_STREAM_RECVS + LCHAN_STREAM_SENDS; i++) {
		bool rx = i < LCHAN_STREAM_RECVS;
		struct page *page = alloc_page(LCHAN_GFP_USER);

		buf = rx ? &st->rx[i] : &st->tx[i - LCHAN_STREAM_RECVS];
		if (!page)
			return -ENOMEM;
		buf->va = page_address(page);
		buf->dma = ib_dma_map_single(st->ibdev, buf->va,
					     LCHAN_STREAM_SLOT,
					     rx ? DMA_FROM_DEVICE :
					     DMA_TO_DEVICE);
		if (ib_dma_mapping_error(st->ibdev, buf->dma)) {
			buf->dma = 0;
			return -ENOMEM;
		}
		buf->st = st;
		buf->cqe.done = rx ? lchan_stream_recv_done :
			       lchan_stream_send_done;
		list_add_tail(&buf->node, rx ? &st->rx_idle : &st->tx_free);
	}
	return 0;
}

/*
 * The QP is gone (lchan_qp_teardown(), on any path: close, a failed
 * establish, the device's removal): no request holds a buffer, and the
 * device may go once this returns.  The pages stay: what was received is
 * still read.  chan->lock held.
 */
void lchan_stream_qp_gone(struct lchan_channel *chan)
{
	struct lchan_stream *st = chan->stream;
	struct lchan_stream_buf *buf;
	u32 i;

	if (!st)
		return;
	for (i = 0; i < LCHAN_STREAM_RECVS + LCHAN_STREAM_SENDS; i++) {
		bool rx = i < LCHAN_STREAM_RECVS;

		buf = rx ? &st->rx[i] : &st->tx[i - LCHAN_STREAM_RECVS];
		if (!buf->dma)
			continue;
		ib_dma_unmap_single(st->ibdev, buf->dma, LCHAN_STREAM_SLOT,
				    rx ? DMA_FROM_DEVICE : DMA_TO_DEVICE);
		buf->dma = 0;
	}
}

static void lchan_stream_free_pages(struct lchan_stream *st)
{
	u32 i;

	for (i = 0; i < LCHAN_STREAM_RECVS; i++)
		if (st->rx[i].va)
			free_page((unsigned long)st->rx[i].va);
	for (i = 0; i < LCHAN_STREAM_SENDS; i++)
		if (st->tx[i].va)
			free_page((unsigned long)st->tx[i].va);
}

/* ------------------------------------------------------------- data */

/* Whether a DATA message could go now.  st->lock held. */
static bool lchan_stream_can_send(struct lchan_stream *st)
{
	return st->credits && !list_empty(&st->tx_free) &&
	       READ_ONCE(st->chan->state) == LCHAN_STATE_CONNECTED &&
	       !lchan_transport_opening(st->chan);
}

static bool lchan_stream_send_wait_over(struct lchan_stream *st)
{
	bool over;

	spin_lock_bh(&st->lock);
	over = st->err || st->eos_queued || st->tx_dead ||
	       lchan_stream_can_send(st) || lchan_chan_done(st->chan);
	spin_unlock_bh(&st->lock);
	return over;
}

/* Readable bytes, the end of the stream, or its failure.  st->lock held. */
static bool lchan_stream_readable(struct lchan_stream *st)
{
	return !list_empty(&st->rx_ready) || st->err ||
	       (READ_ONCE(st->sk.sk_shutdown) & RCV_SHUTDOWN) ||
	       lchan_stream_rx_over(st);
}

static bool lchan_stream_recv_wait_over(struct lchan_stream *st, u32 have)
{
	bool over;

	spin_lock_bh(&st->lock);
	over = st->rx_bytes > have || lchan_stream_readable(st);
	spin_unlock_bh(&st->lock);
	return over;
}

/*
 * Sleep until a receive (@rx: more than @have bytes, or the end) or a send
 * can go on, within *@timeo, which it lowers: 0, -EAGAIN when the time is
 * up, or what a signal makes of it.
 */
static int lchan_stream_wait(struct lchan_stream *st, long *timeo, bool rx,
			     u32 have)
{
	long left;

	if (!*timeo)
		return -EAGAIN;
	left = wait_event_interruptible_timeout(st->chan->wq, rx ?
			lchan_stream_recv_wait_over(st, have) :
			lchan_stream_send_wait_over(st), *timeo);
	if (left < 0)
		return sock_intr_errno(*timeo);
	if (!left)
		return -EAGAIN;
	*timeo = left;
	return 0;
}

static int lchan_stream_sendmsg(struct socket *sock, struct msghdr *msg,
				size_t size)
{
	struct lchan_stream *st = lchan_stream_of(sock->sk);
	struct sock *sk = &st->sk;
	long timeo = sock_sndtimeo(sk, msg->msg_flags & MSG_DONTWAIT);
	struct lchan_stream_buf *tx;
	size_t sent = 0;
	bool failed = false;
	int err = 0;

	if (msg->msg_flags & MSG_OOB)
		return -EOPNOTSUPP;
	if (mutex_lock_interruptible(&st->tx_mutex))
		return -ERESTARTSYS;
	while (msg_data_left(msg)) {
		size_t n = min_t(size_t, msg_data_left(msg),
				 LCHAN_STREAM_PAYLOAD);

		tx = NULL;
		spin_lock_bh(&st->lock);
		if (st->err) {
			failed = true;
			err = -EPIPE;
		} else if (st->eos_queued || st->tx_dead) {
			err = -EPIPE;
		} else if (lchan_stream_can_send(st)) {
			tx = lchan_stream_take_tx(st);
			st->credits--;
		} else {
			err = lchan_chan_done(st->chan) ? -EPIPE : -EAGAIN;
			st->tx_waiting = true;
		}
		spin_unlock_bh(&st->lock);
		if (err == -EAGAIN) {
			err = lchan_stream_wait(st, &timeo, false, 0);
			if (err)
				break;
			continue;
		}
		if (err)
			break;
		if (copy_from_iter(tx->va + LCHAN_STREAM_HDR, n,
				   &msg->msg_iter) != n) {
			spin_lock_bh(&st->lock);
			lchan_stream_untake_tx(st, tx);
			st->credits++;
			spin_unlock_bh(&st->lock);
			err = -EFAULT;
			break;
		}
		tx->len = n;
		mutex_lock(&st->chan->lock);
		lchan_stream_flush(st);
		err = lchan_stream_post_send(st, tx, LCHAN_STREAM_DATA);
		mutex_unlock(&st->chan->lock);
		if (err)
			break;
		sent += n;
	}
	mutex_unlock(&st->tx_mutex);
	if (sent)
		return sent;
	/* As a read's: told once, by the call that returns it. */
	if (failed)
		err = sock_error(sk) ?: -EPIPE;
	if (err == -EPIPE && !(msg->msg_flags & MSG_NOSIGNAL))
		send_sig(SIGPIPE, current, 0);
	return err;
}

/*
 * Copy up to @len bytes from the received messages, skipping @skip
 * (MSG_PEEK's bytes copied before), consuming them unless @peek.  Bytes
 * copied, or -EFAULT.
 */
static int lchan_stream_copy_out(struct lchan_stream *st, struct msghdr *msg,
				 size_t len, size_t skip, bool peek)
{
	struct lchan_stream_buf *rx;
	size_t copied = 0;

	while (copied < len) {
		size_t n, at = skip;
		bool done;

		spin_lock_bh(&st->lock);
		list_for_each_entry(rx, &st->rx_ready, node) {
			if (at < rx->len - rx->off)
				break;
			at -= rx->len - rx->off;
		}
		if (list_entry_is_head(rx, &st->rx_ready, node))
			rx = NULL;
		else
			/* The last may grow (lchan_stream_merge()) meanwhile. */
			n = min_t(size_t, len - copied, rx->len - rx->off - at);
		spin_unlock_bh(&st->lock);
		if (!rx)
			break;
		/* Only this reader takes messages off the list. */
		at += rx->off;
		if (copy_to_iter(rx->va + LCHAN_STREAM_HDR + at, n,
				 &msg->msg_iter) != n)
			return copied ? copied : -EFAULT;
		copied += n;
		if (peek) {
			skip += n;
			continue;
		}
		skip = 0;
		spin_lock_bh(&st->lock);
		rx->off += n;
		st->rx_bytes -= n;
		done = rx->off == rx->len;
		if (done) {
			list_del(&rx->node);
			list_add_tail(&rx->node, &st->rx_repost);
		}
		spin_unlock_bh(&st->lock);
	}
	return copied;
}

static int lchan_stream_recvmsg(struct socket *sock, struct msghdr *msg,
				size_t len, int flags)
{
	struct lchan_stream *st = lchan_stream_of(sock->sk);
	struct sock *sk = &st->sk;
	bool peek = flags & MSG_PEEK;
	long timeo = sock_rcvtimeo(sk, flags & MSG_DONTWAIT);
	size_t target = sock_rcvlowat(sk, flags & MSG_WAITALL, len);
	size_t copied = 0;
	bool repost = false, readable, failed = false;
	int ret = 0;

	if (flags & MSG_OOB)
		return -EINVAL;
	if (flags & MSG_ERRQUEUE)
		return -EAGAIN;
	if (mutex_lock_interruptible(&st->rx_mutex))
		return -ERESTARTSYS;
	while (copied < len) {
		ret = lchan_stream_copy_out(st, msg, len - copied,
					    peek ? copied : 0, peek);
		if (ret < 0)
			break;
		repost |= ret && !peek;
		copied += ret;
		ret = 0;
		if (copied >= target)
			break;
		spin_lock_bh(&st->lock);
		/* It may find the end, and record a reset. */
		readable = lchan_stream_readable(st);
		if (!list_empty(&st->rx_ready))
			ret = 0;	/* bytes came meanwhile */
		else
			ret = readable ? 1 : -EAGAIN;
		failed = st->err;
		spin_unlock_bh(&st->lock);
		if (!ret)
			continue;
		if (ret == 1) {
			ret = 0;	/* the end of the stream, or its failure */
			break;
		}
		ret = lchan_stream_wait(st, &timeo, true, peek ? copied : 0);
		if (ret)
			break;
	}
	mutex_unlock(&st->rx_mutex);
	if (repost)
		lchan_stream_flush_now(st);
	if (copied)
		return copied;
	/*
	 * A failure is told once, by the call that returns it (a read that
	 * returns bytes leaves it to the next); then reads end as at EOF.
	 */
	if (failed && !ret)
		ret = sock_error(sk);
	return ret;
}

static __poll_t lchan_stream_poll(struct file *file, struct socket *sock,
				  poll_table *wait)
{
	struct lchan_stream *st = lchan_stream_of(sock->sk);
	struct sock *sk = &st->sk;
	__poll_t mask = 0;
	u8 shut;

	poll_wait(file, &st->chan->wq, wait);
	spin_lock_bh(&st->lock);
	if (lchan_stream_readable(st))
		mask |= EPOLLIN | EPOLLRDNORM;
	shut = READ_ONCE(sk->sk_shutdown);
	if (shut & RCV_SHUTDOWN)
		mask |= EPOLLIN | EPOLLRDNORM | EPOLLRDHUP;
	/* Writable also when a write would fail at once, as TCP's. */
	if (lchan_stream_can_send(st) || (shut & SEND_SHUTDOWN) || st->err ||
	    st->tx_dead || lchan_chan_done(st->chan))
		mask |= EPOLLOUT | EPOLLWRNORM;
	else
		st->tx_waiting = true;
	if (shut == SHUTDOWN_MASK)
		mask |= EPOLLHUP;
	if (READ_ONCE(sk->sk_err))
		mask |= EPOLLERR;
	spin_unlock_bh(&st->lock);
	return mask;
}

/* ------------------------------------------------------------- socket */

static int lchan_stream_shutdown(struct socket *sock, int how)
{
	struct lchan_stream *st = lchan_stream_of(sock->sk);
	struct sock *sk = &st->sk;
	bool eos = false;

	/* SHUT_RD 0, SHUT_WR 1, SHUT_RDWR 2, as the kernel's TCP maps them. */
	how++;
	if ((how & ~SHUTDOWN_MASK) || !how)
		return -EINVAL;
	spin_lock_bh(&st->lock);
	WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | how);
	if ((how & SEND_SHUTDOWN) && !st->eos_queued && !st->err) {
		st->eos_queued = true;
		eos = true;
	}
	spin_unlock_bh(&st->lock);
	if (eos)
		lchan_stream_flush_now(st);
	wake_up(&st->chan->wq);
	return 0;
}

static int lchan_stream_getname(struct socket *sock, struct sockaddr *addr,
				int peer)
{
	struct lchan_stream *st = lchan_stream_of(sock->sk);
	const struct sockaddr_storage *ss = peer ? &st->chan->conn.remote :
					    &st->chan->conn.local;
	int len = ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
		  sizeof(struct sockaddr_in);

	memcpy(addr, ss, len);
	return len;
}

/*
 * A stream is connected from the start.  One whose connect was
 * non-blocking answers the first connect(2) after with 0, as a TCP
 * socket whose connect completed in the background, then EISCONN.
 */
static int lchan_stream_reconnect(struct socket *sock, struct sockaddr *addr,
				  int len, int flags)
{
	struct lchan_stream *st = lchan_stream_of(sock->sk);
	int ret = -EISCONN;

	spin_lock_bh(&st->lock);
	if (st->connect_unreported) {
		st->connect_unreported = false;
		ret = 0;
	}
	spin_unlock_bh(&st->lock);
	return ret;
}

static int lchan_stream_tcp_opt(int optname)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(lchan_stream_tcp_opts); i++)
		if (lchan_stream_tcp_opts[i] == optname)
			return i;
	return -1;
}

static int lchan_stream_setsockopt(struct socket *sock, int level,
				   int optname, sockptr_t optval,
				   unsigned int optlen)
{
	struct lchan_stream *st = lchan_stream_of(sock->sk);
	int i = lchan_stream_tcp_opt(optname);
	int val;

	if (level != SOL_TCP || i < 0)
		return -ENOPROTOOPT;
	if (optlen < sizeof(int))
		return -EINVAL;
	if (copy_from_sockptr(&val, optval, sizeof(val)))
		return -EFAULT;
	WRITE_ONCE(st->tcp_opt[i], val);
	return 0;
}

/*
 * TCP_INFO as a stream can answer it: its state, the payload of one
 * message as both MSS, the credits as the window in messages, the bytes
 * each way; no retransmission (the RC transport's are not seen here), no
 * RTT estimate (0).  Programs that read it (iperf3, nginx's $tcpinfo_*)
 * get true values rather than an error.
 */
static void lchan_stream_tcp_info(struct lchan_stream *st,
				  struct tcp_info *info)
{
	const struct lchan_stats *stats = &st->chan->stats;
	u8 shut = READ_ONCE(st->sk.sk_shutdown);

	memset(info, 0, sizeof(*info));
	info->tcpi_state = shut == SHUTDOWN_MASK ? TCP_CLOSE :
			   shut & RCV_SHUTDOWN ? TCP_CLOSE_WAIT :
			   shut & SEND_SHUTDOWN ? TCP_FIN_WAIT2 :
			   TCP_ESTABLISHED;
	info->tcpi_snd_mss = LCHAN_STREAM_PAYLOAD;
	info->tcpi_rcv_mss = LCHAN_STREAM_PAYLOAD;
	info->tcpi_advmss = LCHAN_STREAM_PAYLOAD;
	info->tcpi_pmtu = LCHAN_STREAM_SLOT;
	spin_lock_bh(&st->lock);
	info->tcpi_snd_cwnd = st->credits;
	info->tcpi_unacked = st->tx_busy;
	spin_unlock_bh(&st->lock);
	info->tcpi_rcv_space = LCHAN_STREAM_CREDITS * LCHAN_STREAM_PAYLOAD;
	info->tcpi_bytes_acked = READ_ONCE(stats->send_bytes);
	info->tcpi_bytes_received = READ_ONCE(stats->recv_bytes);
	info->tcpi_segs_out = READ_ONCE(stats->send_ops);
	info->tcpi_segs_in = READ_ONCE(stats->recv_ops);
	info->tcpi_data_segs_out = info->tcpi_segs_out;
	info->tcpi_data_segs_in = info->tcpi_segs_in;
}

static int lchan_stream_getsockopt(struct socket *sock, int level,
				   int optname, char __user *optval,
				   int __user *optlen)
{
	struct lchan_stream *st = lchan_stream_of(sock->sk);
	int i = lchan_stream_tcp_opt(optname);
	struct tcp_info info;
	int len, val;
	const void *from = &val;

	if (level != SOL_TCP)
		return -ENOPROTOOPT;
	if (get_user(len, optlen))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;
	if (optname == TCP_INFO) {
		lchan_stream_tcp_info(st, &info);
		from = &info;
		len = min_t(int, len, sizeof(info));
	} else if (optname == TCP_MAXSEG) {
		val = LCHAN_STREAM_PAYLOAD;
		len = min_t(int, len, sizeof(int));
	} else if (i >= 0) {
		val = READ_ONCE(st->tcp_opt[i]);
		len = min_t(int, len, sizeof(int));
	} else {
		return -ENOPROTOOPT;
	}
	if (put_user(len, optlen) || copy_to_user(optval, from, len))
		return -EFAULT;
	return 0;
}

static int lchan_stream_ioctl(struct socket *sock, unsigned int cmd,
			      unsigned long arg)
{
	struct lchan_stream *st = lchan_stream_of(sock->sk);
	int val;

	switch (cmd) {
	case SIOCINQ:
		val = READ_ONCE(st->rx_bytes);
		break;
	case SIOCOUTQ:
		val = READ_ONCE(st->tx_bytes);
		break;
	default:
		return -ENOIOCTLCMD;
	}
	return put_user(val, (int __user *)arg);
}

static bool lchan_stream_sent_all(struct lchan_stream *st)
{
	bool over;

	spin_lock_bh(&st->lock);
	over = (!st->tx_busy && st->eos_sent) || st->err || st->tx_dead ||
	       lchan_chan_done(st->chan);
	spin_unlock_bh(&st->lock);
	return over;
}

/* The QP goes, then the channel, then the stream and its pages. */
static void lchan_stream_destroy(struct lchan_stream *st)
{
	struct lchan_channel *chan = st->chan;

	mutex_lock(&chan->lock);
	lchan_qp_teardown(chan);
	chan->stream = NULL;
	mutex_unlock(&chan->lock);
	/* No completion comes now, so nothing queues the work again. */
	cancel_work_sync(&st->work);
	lchan_file_abort(chan);
	lchan_stream_free_pages(st);
	sock_put(&st->sk);
}

/*
 * The stream's end, after its last close: what was sent reaches the peer,
 * for at most LCHAN_STREAM_CLOSE_MS, unless SO_LINGER asked for an abort.
 */
static void lchan_stream_end_work(struct work_struct *work)
{
	struct lchan_stream *st = container_of(work, struct lchan_stream,
					       end_work);
	unsigned long end = jiffies + msecs_to_jiffies(LCHAN_STREAM_CLOSE_MS);

	if (sock_flag(&st->sk, SOCK_LINGER) && !st->sk.sk_lingertime)
		end = jiffies;
	/* The EOS may wait for a send slot or for iWARP's exchange. */
	while (time_before(jiffies, end)) {
		lchan_stream_flush_now(st);
		if (wait_event_timeout(st->chan->wq, lchan_stream_sent_all(st),
				       min_t(unsigned long, end - jiffies,
					     msecs_to_jiffies(LCHAN_STREAM_LOOK_MS))))
			break;
	}
	lchan_stream_destroy(st);
}

static int lchan_stream_release(struct socket *sock)
{
	struct sock *sk = sock->sk;
	struct lchan_stream *st;
	bool closed_first;

	if (!sk)
		return 0;
	st = lchan_stream_of(sk);
	if (!(sock_flag(sk, SOCK_LINGER) && !sk->sk_lingertime)) {
		/* Closed first: TIME_WAIT, from now as the close returns. */
		spin_lock_bh(&st->lock);
		closed_first = !st->peer_eos && !st->err;
		spin_unlock_bh(&st->lock);
		if (closed_first && st->tcp_port)
			lchan_stream_timewait(sock_net(sk), &st->chan->conn.local);
		lchan_stream_shutdown(sock, SHUT_WR);
		/* SO_LINGER: the close waits for the bytes, as TCP's. */
		if (sock_flag(sk, SOCK_LINGER))
			wait_event_interruptible_timeout(st->chan->wq,
					lchan_stream_sent_all(st),
					sk->sk_lingertime);
	}
	sock_orphan(sk);
	sock->sk = NULL;
	queue_work(lchan_wq, &st->end_work);
	return 0;
}

static const struct proto_ops lchan_stream_ops = {
	.family = PF_INET,
	.owner = THIS_MODULE,
	.release = lchan_stream_release,
	.bind = sock_no_bind,
	.connect = lchan_stream_reconnect,
	.socketpair = sock_no_socketpair,
	.accept = sock_no_accept,
	.getname = lchan_stream_getname,
	.poll = lchan_stream_poll,
	.ioctl = lchan_stream_ioctl,
	.listen = sock_no_listen,
	.shutdown = lchan_stream_shutdown,
	.setsockopt = lchan_stream_setsockopt,
	.getsockopt = lchan_stream_getsockopt,
	.sendmsg = lchan_stream_sendmsg,
	.recvmsg = lchan_stream_recvmsg,
	.mmap = sock_no_mmap,
};

/* ------------------------------------------------------------- set-up */

/* What a stream channel cannot be asked for with LCHAN_FD_STREAM. */
int lchan_stream_check(u32 flags, const struct lchan_ring_sizes *rings)
{
	if (!(flags & LCHAN_FD_STREAM))
		return 0;
	if (flags & (LCHAN_DEFER_ESTABLISH | LCHAN_DIRECT_POLL |
		     LCHAN_CONNECT_LINK_ONLY))
		return -EINVAL;
	if (rings->sq_entries || rings->rq_entries || rings->cq_entries)
		return -EINVAL;
	return 0;
}

static struct lchan_stream *lchan_stream_alloc(struct lchan_channel *chan)
{
	struct lchan_stream *st;
	struct sock *sk;

	/* The namespace its id was made in: the caller's, or a listener's. */
	sk = sk_alloc(chan->cm_id->route.addr.dev_addr.net,
		      chan->conn.remote.ss_family, LCHAN_GFP_USER,
		      &lchan_stream_prot, 0);
	if (!sk)
		return NULL;
	/*
	 * sk_alloc() zeroes the whole object, obj_size bytes.  The socket's
	 * reference is set by sock_init_data() when the stream gets its
	 * socket; one is needed before, for a set-up that fails.
	 */
	refcount_set(&sk->sk_refcnt, 1);
	st = lchan_stream_of(sk);
	st->chan = chan;
	mutex_init(&st->rx_mutex);
	mutex_init(&st->tx_mutex);
	spin_lock_init(&st->lock);
	INIT_LIST_HEAD(&st->rx_ready);
	INIT_LIST_HEAD(&st->rx_repost);
	INIT_LIST_HEAD(&st->rx_idle);
	INIT_LIST_HEAD(&st->tx_free);
	st->credits = LCHAN_STREAM_CREDITS;
	INIT_WORK(&st->work, lchan_stream_work);
	INIT_WORK(&st->end_work, lchan_stream_end_work);
	return st;
}

/*
 * The buffers, and the receives on the QP before the connection request
 * goes, so that the peer's first DATA finds one on every transport.
 */
static int lchan_stream_prepare(struct lchan_stream *st)
{
	struct lchan_channel *chan = st->chan;
	int ret;

	st->ibdev = chan->dev->ibdev;
	st->lkey = chan->pd->ibpd->local_dma_lkey;
	mutex_lock(&chan->lock);
	chan->stream = st;
	ret = lchan_stream_map(st);
	if (!ret) {
		spin_lock_bh(&st->lock);
		list_splice_init(&st->rx_idle, &st->rx_repost);
		spin_unlock_bh(&st->lock);
		lchan_stream_flush(st);
		if (st->rx_posted != LCHAN_STREAM_RECVS)
			ret = -ENOTCONN;
	}
	mutex_unlock(&chan->lock);
	return ret;
}

/*
 * The stream becomes @sock's: a SOCK_STREAM socket whose ops' module
 * reference (this module's) its caller holds.  @tcp_port: its local port
 * is a TCP listener's (lchan_stream_listen.c), which it holds for
 * TIME_WAIT when it closes first.
 */
void lchan_stream_graft(struct lchan_stream *st, struct socket *sock,
			bool tcp_port)
{
	st->tcp_port = tcp_port;
	sock->ops = &lchan_stream_ops;
	sock_init_data(sock, &st->sk);
	st->sk.sk_protocol = IPPROTO_TCP;
	st->sk.sk_state = TCP_ESTABLISHED;
	lchan_parts_attach(st->chan);
}

/*
 * A SOCK_STREAM socket of this module's in a new descriptor with the
 * LCHAN_FD_* @flags, which @setup gives its ops and sock: the fd, or
 * -errno, before @setup ran when @*set_up is false; after, the socket's
 * release has ended what @setup gave it.
 */
int lchan_stream_sock_fd(u32 flags, void (*setup)(struct socket *, void *),
			 void *arg, bool *set_up)
{
	struct socket *sock;
	struct file *file;
	int fd;

	*set_up = false;
	fd = get_unused_fd_flags(flags & LCHAN_FD_CLOEXEC ? O_CLOEXEC : 0);
	if (fd < 0)
		return fd;
	sock = sock_alloc();
	if (!sock) {
		put_unused_fd(fd);
		return -ENFILE;
	}
	sock->type = SOCK_STREAM;
	/* sock_release() puts it. */
	__module_get(THIS_MODULE);
	setup(sock, arg);
	*set_up = true;
	file = sock_alloc_file(sock, flags & LCHAN_FD_NONBLOCK ?
			       O_NONBLOCK : 0, NULL);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		return PTR_ERR(file);
	}
	fd_install(fd, file);
	return fd;
}

static void lchan_stream_setup_sock(struct socket *sock, void *arg)
{
	lchan_stream_graft(arg, sock, false);
}

/*
 * The stream's socket file, in a new descriptor; on failure the stream
 * ends (a socket made already ends it through its release).
 */
int lchan_stream_install(struct lchan_stream *st, u32 flags)
{
	bool set_up;
	int fd;

	st->connect_unreported = (flags & LCHAN_FD_NONBLOCK) &&
				 !st->chan->conn.passive;
	fd = lchan_stream_sock_fd(flags, lchan_stream_setup_sock, st, &set_up);
	if (fd < 0 && !set_up)
		lchan_stream_destroy(st);
	return fd;
}

/* A stream that has no socket yet ends. */
void lchan_stream_abort(struct lchan_stream *st)
{
	lchan_stream_destroy(st);
}

/*
 * The stages of connect and accept after reach, for a stream channel
 * (lchan_connect_open() for the others), up to the request: the QP with
 * the stream's queues and establish deferred, the stream's receives, then
 * rdma_connect or rdma_accept.  lchan_stream_finish() waits for the
 * answer.  The channel ends on failure.
 */
struct lchan_stream *lchan_stream_start(struct lchan_channel *chan,
					const struct lchan_rc_params *rc,
					u32 flags, const unsigned long *deadline)
{
	static const struct lchan_ring_sizes rings = {
		.sq_entries = LCHAN_STREAM_SENDS,
		.rq_entries = LCHAN_STREAM_RECVS,
	};
	struct lchan_stream *st;
	int ret = -EINVAL;

	/* The stream posts for itself: no pool thread, no direct polling. */
	if (chan->mode != LCHAN_MODE_DOORBELL)
		goto err_abort;
	ret = lchan_charge_room();
	if (ret)
		goto err_abort;
	ret = lchan_connect_open(chan, &rings, rc,
				 (flags & ~(LCHAN_FD_NONBLOCK | LCHAN_FD_STREAM)) |
				 LCHAN_DEFER_ESTABLISH, deadline);
	if (ret)
		goto err_abort;
	st = lchan_stream_alloc(chan);
	if (!st) {
		ret = -ENOMEM;
		goto err_abort;
	}
	ret = lchan_stream_prepare(st);
	if (!ret)
		ret = lchan_connect_request(chan);
	if (ret) {
		lchan_stream_destroy(st);
		return ERR_PTR(ret);
	}
	return st;

err_abort:
	lchan_file_abort(chan);
	return ERR_PTR(ret);
}

/*
 * The answer to a started stream's request, waited for until @deadline:
 * 0 once connected; else the stream ends.
 */
int lchan_stream_finish(struct lchan_stream *st, unsigned long deadline)
{
	int ret = lchan_connect_wait(st->chan, deadline);

	if (ret)
		lchan_stream_destroy(st);
	return ret;
}

/* The wait queue a started stream's answer wakes. */
wait_queue_head_t *lchan_stream_wq(struct lchan_stream *st)
{
	return &st->chan->wq;
}

/* Whether lchan_stream_finish() would return at once. */
bool lchan_stream_answered(struct lchan_stream *st)
{
	return lchan_connect_answered(st->chan);
}

/* Start and finish: a connected stream, or why not (the channel ends). */
struct lchan_stream *lchan_stream_open(struct lchan_channel *chan,
				       const struct lchan_rc_params *rc,
				       u32 flags, const unsigned long *deadline)
{
	struct lchan_stream *st = lchan_stream_start(chan, rc, flags, deadline);
	int ret;

	if (IS_ERR(st))
		return st;
	ret = lchan_stream_finish(st, deadline ? *deadline : jiffies +
				  msecs_to_jiffies(LCHAN_CONNECT_TIMEOUT_MS));
	return ret ? ERR_PTR(ret) : st;
}

int lchan_stream_init(void)
{
	return proto_register(&lchan_stream_prot, 0);
}

void lchan_stream_exit(void)
{
	proto_unregister(&lchan_stream_prot);
}
