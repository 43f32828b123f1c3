// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * liblchan message layer (liblchan_msg.h): whole messages over a channel.
 *
 * Protocol.  Only SEND/RECV and RDMA READ, so it runs the same on RoCE
 * (rxe) and iWARP (siw), which has no immediate data.  Every SEND carries a
 * 24-byte header {type, credits, len, addr, rkey, seq}:
 *   HELLO   first message each way; len = receive buffers granted (credits)
 *   DATA    a small message, payload after the header (bounce buffers)
 *   RTS     a large message: addr/len/rkey of the sender's buffer; the
 *           receiver READs it straight into the caller's buffer and answers
 *   FIN     the READ of RTS number seq is done; the sender's send returns
 *   CREDIT  nothing but credits
 *   EOS     end of stream: the sender closed after its last message
 * Flow control: each side posts R receive buffers for DATA/RTS, and the
 * peer may have only as many of those in flight as it holds credits.  A
 * buffer is reposted when the application has taken its message, and the
 * credit travels back in the header of the next message we send, or in a
 * CREDIT message once T = R/4 are owed.  So a SEND never finds the receive
 * queue empty: there is no receiver-not-ready, which on iWARP would end the
 * connection.  HELLO, FIN, CREDIT and EOS need no credit, so credits can
 * always flow back; they land in E extra buffers, reposted as soon as they
 * are seen.  E is bounded: one HELLO, one EOS, one FIN (a large send waits
 * for its FIN before the next), and CREDITs, each returning T credits, of
 * which at most R/T + 1 can be unseen, since the peer cannot send more
 * DATA than it holds credits without taking our CQEs.
 *
 * Large messages from or into memory the caller did not register are
 * registered for the one transfer and deregistered after it, not cached.
 * A registration cache keyed by address cannot see free() or munmap():
 * the pinned pages would outlive the mapping and a later buffer at the
 * same address would be sent from stale pages.  Callers that reuse
 * buffers register them once and use lchan_msg_send_mr/lchan_msg_recv_mr,
 * which is the zero-copy path without any per-message registration.
 * Bouncing through a staging buffer would cost two copies of up to
 * max_msg each and pin max_msg per channel and direction for good.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "liblchan.h"
#include "cpu_relax.h"
#include "queue.h"
#include "liblchan_msg.h"

enum {
	MSG_HELLO = 1,
	MSG_DATA,
	MSG_RTS,
	MSG_FIN,
	MSG_CREDIT,
	MSG_EOS,
};

struct msg_hdr {
	uint8_t type;
	uint8_t resv;
	uint16_t credits;
	uint32_t len;
	uint64_t addr;
	uint32_t rkey;
	uint32_t seq;
};

_Static_assert(sizeof(struct msg_hdr) == 24, "message header layout");

/* What a work request was, in the high half of user_data. */
enum { UD_RECV = 1, UD_SEND, UD_READ };

#define UD(kind, idx)	(((uint64_t)(kind) << 32) | (idx))
#define READ_CHUNK	(1U << 20)
#define CLOSE_WAIT_MS	10000
/* How long a busy-polling call spins for a large transfer before it sleeps. */
#define TRANSFER_SPIN_US	50

/* The options' defaults (liblchan_msg.h) and the most each may ask for. */
#define DEFAULT_MAX_MSG		(4U << 20)
#define DEFAULT_NBUFS		32
#define DEFAULT_NSEND		32
#define DEFAULT_BUF_SIZE	8192
#define MAX_BUFS		1024	/* nbufs and nsend */
#define MAX_BUF_SIZE		(1U << 24)
/* Receives beyond the credits: the credit returns in flight, and a margin. */
#define SPARE_RECVS		4
/* The header and payload of a slot start on a cache line of their own. */
#define SLOT_ALIGN		64
/* The buffer memory is registered whole: page-aligned, whole pages. */
#define MEM_PAGE		4096
#define PAGE_ALIGN_LEN(len)	\
	(((len) + MEM_PAGE - 1) & ~(size_t)(MEM_PAGE - 1))
/* READ chunks of one large message in flight beside the sends. */
#define READ_SLOTS		8

struct lchan_msg {
	struct lchan_ctx ctx;		/* our own fd of the caller's context */
	struct lchan_chan chan;
	struct lchan_mr mr;		/* receive slots, then send slots */
	uint8_t *mem;
	size_t mem_len;
	size_t max_msg;
	unsigned buf_size;		/* payload bytes per slot */
	unsigned slot;			/* header + payload */
	unsigned nbufs;			/* R: credits we grant */
	unsigned nrecv;			/* R + E: receives posted */
	unsigned nsend;
	unsigned signal_every;		/* one SEND in this many has a CQE */
	unsigned thresh;		/* T: owed credits that earn a CREDIT */
	unsigned credits;		/* DATA/RTS we may still send */
	unsigned owed;			/* credits to give back to the peer */
	uint32_t send_post, send_done;	/* send slots used, in order, and freed */
	unsigned unsignaled;		/* SENDs since the last signaled one */
	unsigned *rxq;			/* received DATA/RTS slots, in order */
	unsigned rxq_head, rxq_len;
	uint32_t rts_sent, fins;	/* large sends and their answers */
	unsigned reads;			/* READs in flight */
	int read_err;
	int err;			/* sticky: the connection failed */
	bool hello;			/* the peer's HELLO came */
	bool peer_eos;
	bool closed;
	bool sq_dirty;			/* SQEs to submit */
	bool rq_dirty;			/* reposted receives to submit */
	bool busy_poll;			/* this call: LCHAN_MSG_BUSY_POLL */
	bool direct;			/* LCHAN_MSG_OPT_DIRECT */
	bool transfer;			/* waiting for a large message's bytes */
};

static uint8_t *rslot(struct lchan_msg *m, unsigned i)
{
	return m->mem + (size_t)i * m->slot;
}

static uint8_t *sslot(struct lchan_msg *m, unsigned i)
{
	return m->mem + ((size_t)m->nrecv + i) * m->slot;
}

static unsigned send_free(const struct lchan_msg *m)
{
	return m->nsend - (m->send_post - m->send_done);
}

/*
 * Submit the receives and SQEs filled so far (on a direct channel the same
 * ENTER polls the device).  One submit takes the RQ
 * before the SQ (liblchan publishes the RQ tail first, the kernel posts it
 * first), which is what lets msg_submit() leave reposted receives alone.
 */
static int msg_enter(struct lchan_msg *m)
{
	int ret;

	m->sq_dirty = false;
	m->rq_dirty = false;
	ret = lchan_submit_in_band(&m->chan);
	if (ret < 0 && !m->err && !m->peer_eos)
		m->err = ret == -ENOTCONN ? -ECONNRESET : ret;
	return ret < 0 ? ret : 0;
}

/* msg_enter() when something is filled: no system call for nothing. */
static int msg_flush(struct lchan_msg *m)
{
	return m->sq_dirty || m->rq_dirty ? msg_enter(m) : 0;
}

/*
 * Submit when there are SQEs.  Receives reposted alone wait for the next
 * SQE, or for msg_flush() before a wait: no credit for them reaches the
 * peer before then, since credits only travel in our SENDs, so the peer
 * cannot send into them, and the extra buffers for credit-free messages
 * are reposted before any SEND that could provoke one.  In doorbell mode
 * this saves the system call a receive would cost on its own: a message
 * taken and answered is one ENTER.
 */
static int msg_submit(struct lchan_msg *m)
{
	return m->sq_dirty ? msg_flush(m) : 0;
}

static void post_recv(struct lchan_msg *m, unsigned i)
{
	struct lchan_rqe *rqe = lchan_get_rqe(&m->chan);

	/*
	 * The RQ holds nrecv entries and we never post more than that; a
	 * channel going down may stop taking them, which matters no more.
	 */
	if (!rqe) {
		if (!m->err && !m->peer_eos)
			m->err = -EPROTO;
		return;
	}
	lchan_prep_recv(rqe, &m->mr, rslot(m, i), m->slot, UD(UD_RECV, i));
	m->rq_dirty = true;
}

/* Copy @len bytes gathered from @iov to @dst. */
static void iov_gather(uint8_t *dst, const struct iovec *iov, int iovcnt,
		       size_t len)
{
	int i;

	for (i = 0; i < iovcnt && len; i++) {
		size_t n = iov[i].iov_len < len ? iov[i].iov_len : len;

		memcpy(dst, iov[i].iov_base, n);
		dst += n;
		len -= n;
	}
}

/* Copy @len bytes from @src, scattered over @iov. */
static void iov_scatter(const struct iovec *iov, int iovcnt,
			const uint8_t *src, size_t len)
{
	int i;

	for (i = 0; i < iovcnt && len; i++) {
		size_t n = iov[i].iov_len < len ? iov[i].iov_len : len;

		memcpy(iov[i].iov_base, src, n);
		src += n;
		len -= n;
	}
}

/*
 * Queue a SEND of header + payload (@plen bytes gathered from @iov) from
 * a free send slot.
 */
static int post_ctrl(struct lchan_msg *m, uint8_t type, uint32_t len,
		     uint64_t addr, uint32_t rkey, uint32_t seq,
		     const struct iovec *iov, int iovcnt, size_t plen)
{
	struct lchan_sqe *sqe;
	struct msg_hdr *h;
	unsigned i, give;

	if (!send_free(m))
		return -EAGAIN;
	sqe = lchan_get_sqe(&m->chan);
	if (!sqe)
		return -ENOSPC;	/* cannot happen: SQ > send slots + READs */
	i = m->send_post++ % m->nsend;
	h = (struct msg_hdr *)sslot(m, i);
	give = m->owed > 0xffff ? 0xffff : m->owed;
	m->owed -= give;
	*h = (struct msg_hdr){
		.type = type, .credits = (uint16_t)give, .len = len,
		.addr = addr, .rkey = rkey, .seq = seq,
	};
	if (plen)
		iov_gather((uint8_t *)(h + 1), iov, iovcnt, plen);
	lchan_prep_send(sqe, &m->mr, h, (uint32_t)(sizeof(*h) + plen),
			UD(UD_SEND, i));
	/*
	 * Most SENDs ask for no CQE: each CQE is a wake-up of a sleeping
	 * receiver, and in a ping-pong the send's would come between two
	 * messages.  SENDs complete in order, so one CQE frees the slots of
	 * the SENDs before it too.  One in signal_every signals, so with all
	 * slots in flight at least two CQEs are coming; the EOS signals, so
	 * close sees every SEND done.  A failed SEND has a CQE all the same.
	 */
	if (++m->unsignaled >= m->signal_every || type == MSG_EOS)
		m->unsignaled = 0;
	else
		sqe->flags |= LCHAN_SQE_UNSIGNALED;
	m->sq_dirty = true;
	return 0;
}

/* The CQE of the SENDs up to slot @i: they and their slots are done. */
static void sends_done(struct lchan_msg *m, unsigned i)
{
	while (m->send_done != m->send_post &&
	       m->send_done++ % m->nsend != i)
		;
}

static void msg_fail(struct lchan_msg *m, int err)
{
	if (!m->err)
		m->err = err;
}

static void handle_recv(struct lchan_msg *m, const struct lchan_cqe *c,
			unsigned i)
{
	struct msg_hdr *h = (struct msg_hdr *)rslot(m, i);

	if (c->byte_len < sizeof(*h)) {
		msg_fail(m, -EPROTO);
		return;
	}
	m->credits += h->credits;
	switch (h->type) {
	case MSG_DATA:
		if (h->len != c->byte_len - sizeof(*h)) {
			msg_fail(m, -EPROTO);
			return;
		}
		/* fall through */
	case MSG_RTS:
		m->rxq[(m->rxq_head + m->rxq_len++) % m->nrecv] = i;
		return;
	case MSG_HELLO:
		m->credits += h->len;
		m->hello = true;
		break;
	case MSG_FIN:
		m->fins++;
		break;
	case MSG_CREDIT:
		break;
	case MSG_EOS:
		m->peer_eos = true;
		break;
	default:
		msg_fail(m, -EPROTO);
		return;
	}
	if (!m->peer_eos)
		post_recv(m, i);
}

static void handle_cqe(struct lchan_msg *m, const struct lchan_cqe *c)
{
	unsigned kind = (unsigned)(c->user_data >> 32);
	unsigned i = (unsigned)c->user_data;

	if (kind == UD_SEND)
		sends_done(m, i);
	else if (kind == UD_READ)
		m->reads--;
	if (c->status) {
		/* Flushed receives after the peer's EOS are the normal end. */
		if (kind == UD_RECV && m->peer_eos)
			return;
		if (kind == UD_READ)
			m->read_err = -EIO;
		msg_fail(m, c->status == LCHAN_CQE_WR_FLUSH_ERR ?
			 -ECONNRESET : -EIO);
		return;
	}
	if (kind == UD_RECV)
		handle_recv(m, c, i);
}

/* Give credits back on their own once T are owed and nothing carries them. */
static void maybe_credit(struct lchan_msg *m)
{
	if (m->owed >= m->thresh && m->hello && !m->err && !m->closed &&
	    !m->peer_eos)
		post_ctrl(m, MSG_CREDIT, 0, 0, 0, 0, NULL, 0, 0);
}

/*
 * Take every CQE waiting; returns how many.  What they make us send (a
 * credit) goes with the call's next submit: the wait's, or its last.
 */
static int reap(struct lchan_msg *m)
{
	struct lchan_cqe *cqe;
	int n = 0;

	while (!lchan_peek_cqe(&m->chan, &cqe)) {
		struct lchan_cqe c = *cqe;

		lchan_cqe_seen(&m->chan);
		handle_cqe(m, &c);
		n++;
	}
	maybe_credit(m);
	return n;
}

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static long long now_ms(void)
{
	return now_us() / 1000;
}

/* What is left until @deadline (ms, < 0: none), for poll(2): -1 for none. */
static int left_ms(long long deadline)
{
	long long d;

	if (deadline < 0)
		return -1;
	d = deadline - now_ms();
	return d < 0 ? 0 : d > 0x7fffffff ? 0x7fffffff : (int)d;
}

/*
 * Spin until a CQE is there (0), @deadline (ms, < 0: none) passes
 * (-ETIMEDOUT) or @budget_us of spinning is spent (-EAGAIN; < 0: no
 * budget).  No wait for a dead channel: every receive is posted, so its
 * end shows as flush CQEs.  The clock may be a system call (no vDSO
 * clocksource): read it rarely.
 */
static int spin_cqe(struct lchan_msg *m, long long deadline, int budget_us)
{
	long long stop = budget_us >= 0 ? now_us() + budget_us : -1;
	unsigned spins = 0;

	while (!lchan_cq_ready(&m->chan)) {
		if (!(++spins & 1023) && (deadline >= 0 || stop >= 0)) {
			long long t = now_us();

			if (deadline >= 0 && t / 1000 >= deadline)
				return -ETIMEDOUT;
			if (stop >= 0 && t >= stop)
				return -EAGAIN;
		}
		lchan_cpu_relax();
	}
	return 0;
}

/*
 * Busy polling on a direct channel: ENTERs that post what is filled and
 * look at the device once each, from user space, until a CQE is there or
 * @deadline (ms, < 0: none) passes.  A software device's work that an
 * ENTER hands to a softirq gets its CPU between two looks, which one long
 * wait in the kernel does not give it as readily.  The clock and the
 * channel's state are read rarely (either may be a system call).
 */
static int spin_direct(struct lchan_msg *m, long long deadline)
{
	unsigned spins = 0;
	int ret;

	for (;;) {
		ret = msg_enter(m);
		if (ret < 0)
			break;
		if (lchan_cq_ready(&m->chan))
			return 0;
		if (++spins & 255)
			continue;
		if (deadline >= 0 && now_ms() >= deadline)
			return -ETIMEDOUT;
		ret = lchan_chan_state(&m->chan);
		if (ret < 0)
			break;
		if (ret != LCHAN_STATE_CONNECTED && !lchan_cq_ready(&m->chan)) {
			ret = -ENOTCONN;
			break;
		}
	}
	msg_fail(m, ret == -ENOTCONN ? -ECONNRESET : ret);
	return m->err;
}

/*
 * A direct channel's ring shows only what an ENTER polled: one ENTER posts
 * what is filled and polls until a CQE is there or @deadline (ms, < 0:
 * none) passes.  It returns with none only when none can come any more.
 */
static int wait_cqe_direct(struct lchan_msg *m, long long deadline)
{
	long long left_ns = -1;
	int ret;

	if (deadline >= 0) {
		left_ns = (deadline - now_ms()) * 1000000LL;
		if (left_ns < 0)
			left_ns = 0;
	}
	m->sq_dirty = false;
	m->rq_dirty = false;
	ret = lchan_submit_and_wait(&m->chan, 1, left_ns);
	if (ret == -ETIME)
		return -ETIMEDOUT;
	if (ret == -EINTR)
		return ret;
	if (ret >= 0 && lchan_cq_ready(&m->chan))
		return 0;
	msg_fail(m, ret < 0 && ret != -ENOTCONN ? ret : -ECONNRESET);
	return m->err;
}

/*
 * A call that would return -EAGAIN looks at the device once first: on a
 * direct channel nothing else does.  true when it polled.
 */
static bool poll_direct(struct lchan_msg *m)
{
	if (!m->direct)
		return false;
	msg_enter(m);
	return true;
}

/*
 * Sleep until a CQE is there or @deadline (ms, < 0: none) passes.
 * -ETIMEDOUT, or the connection's error when nothing can come any more.
 *
 * A busy-polling call spins, except for the bytes of a large message: the
 * time they take is set by their size, not by a wake-up, so after a short
 * spin it sleeps.  Spinning through a transfer would burn a CPU for
 * nothing on an RDMA adapter, and on a software device (rxe, siw) take
 * the very CPU that moves the bytes.
 */
static int wait_cqe(struct lchan_msg *m, long long deadline)
{
	struct lchan_cqe *cqe;
	int ret;

	if (m->direct)
		return m->busy_poll && !m->transfer ? spin_direct(m, deadline) :
		       wait_cqe_direct(m, deadline);
	/* Nothing is left unposted while we wait (a failure is in m->err). */
	msg_flush(m);
	if (m->busy_poll) {
		ret = spin_cqe(m, deadline, m->transfer ? TRANSFER_SPIN_US : -1);
		if (ret != -EAGAIN)
			return ret;
	}
	ret = lchan_wait_cqe(&m->chan, &cqe, left_ms(deadline));
	if (ret == -ENOTCONN) {
		msg_fail(m, -ECONNRESET);
		return m->err;
	}
	return ret;
}

int lchan_msg_fd(const struct lchan_msg *m)
{
	return m->chan.fd;
}

struct lchan_chan *lchan_msg_chan(struct lchan_msg *m)
{
	return &m->chan;
}

int lchan_msg_poll_events(const struct lchan_msg *m)
{
	int ev = 0;

	if (m->rxq_len || m->peer_eos || m->err)
		ev |= POLLIN;
	if (m->peer_eos)
		ev |= POLLHUP;
	if (m->err)
		ev |= POLLERR;
	if (!m->err && !m->peer_eos && !m->closed && m->hello &&
	    m->credits && send_free(m))
		ev |= POLLOUT;
	return ev;
}

/*
 * For a maintainer looking at a stuck channel, possibly from another
 * thread while the owner waits: plain reads of plain fields, a snapshot
 * that may be torn but tells where the stream stands.
 */
int lchan_msg_describe(const struct lchan_msg *m, char *buf, size_t len)
{
	int n;

	if (!m || (!buf && len))
		return -EINVAL;
	n = snprintf(buf, len,
		     "hello %d credits %u owed %u thresh %u sends %u/%u of %u "
		     "unsignaled %u rx queued %u head %u recv bufs %u "
		     "rts %u fins %u reads %u read_err %d transfer %d "
		     "dirty sq %d rq %d peer_eos %d closed %d err %d",
		     m->hello, m->credits, m->owed, m->thresh,
		     m->send_post - m->send_done, m->send_post, m->nsend,
		     m->unsignaled, m->rxq_len, m->rxq_head, m->nrecv,
		     m->rts_sent, m->fins, m->reads, m->read_err, m->transfer,
		     m->sq_dirty, m->rq_dirty, m->peer_eos, m->closed, m->err);
	return n < 0 ? -EIO : n;
}

int lchan_msg_progress(struct lchan_msg *m)
{
	poll_direct(m);
	reap(m);
	msg_submit(m);
	return lchan_msg_poll_events(m);
}

/* Wait for a condition of reap()'s making; 0, or the error. */
#define WAIT_UNTIL(m, cond, deadline) ({				\
	int _r = 0;							\
	for (;;) {							\
		reap(m);						\
		if (cond)						\
			break;						\
		if ((m)->err) {						\
			_r = (m)->err;					\
			break;						\
		}							\
		_r = wait_cqe(m, deadline);				\
		if (_r && _r != -EINTR)					\
			break;						\
		_r = 0;							\
	}								\
	_r;								\
})

static int reg_err(int ret)
{
	/* Pinning failed: RLIMIT_MEMLOCK or memory; say so plainly. */
	return ret == -EAGAIN || ret == -EPERM || ret == -EFAULT ?
	       -ENOMEM : ret;
}

/*
 * The start of a send or receive: the channel is open, @flags known
 * (@more: LCHAN_MSG_MORE among them, a send's).
 */
static int msg_call(struct lchan_msg *m, unsigned flags, unsigned more)
{
	if (m->closed)
		return -EBADF;
	if (flags & ~(LCHAN_MSG_DONTWAIT | LCHAN_MSG_BUSY_POLL | more))
		return -EINVAL;
	m->busy_poll = flags & LCHAN_MSG_BUSY_POLL;
	return 0;
}

/*
 * The deadline of a call that may wait @timeout_ms (ms since the epoch of
 * now_ms(), -1: none).  LCHAN_MSG_DONTWAIT is a timeout of 0.  No clock
 * read when there is no wait (it may be a system call).
 */
static long long msg_deadline(unsigned flags, int *timeout_ms)
{
	if (flags & LCHAN_MSG_DONTWAIT)
		*timeout_ms = 0;
	return *timeout_ms > 0 ? now_ms() + *timeout_ms : -1;
}

/* The bytes @iov holds, or -EINVAL (a bad count, or more than SSIZE_MAX). */
static ssize_t iov_total(const struct iovec *iov, int iovcnt)
{
	size_t total = 0;
	int i;

	if (iovcnt < 0 || iovcnt > IOV_MAX || (iovcnt && !iov))
		return -EINVAL;
	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > (size_t)SSIZE_MAX - total)
			return -EINVAL;
		total += iov[i].iov_len;
	}
	return (ssize_t)total;
}

/*
 * One buffer that a large message of @len bytes can be READ from or into:
 * the caller's own when @iov is one buffer, else a bounce buffer (*@bounce,
 * for the caller to free).
 */
static void *large_buf(const struct iovec *iov, int iovcnt, size_t len,
		       void **bounce)
{
	*bounce = NULL;
	if (iovcnt == 1)
		return iov[0].iov_base;
	*bounce = aligned_alloc(MEM_PAGE, PAGE_ALIGN_LEN(len));
	return *bounce;
}

/*
 * A large message: offered to the peer, which READs it; we wait for its
 * FIN.  A deadline that passes once the offer is out leaves the stream in
 * an unknown state (the peer may still READ, or may not have): the
 * channel fails with -ETIMEDOUT, and the buffer's registration goes, so
 * a late READ fails on the peer instead of reading reused memory.
 */
static int send_large(struct lchan_msg *m, const struct lchan_mr *umr,
		      const void *buf, size_t len, long long deadline)
{
	struct lchan_mr tmp = { 0 };
	const struct lchan_mr *mr = umr;
	uint32_t seq;
	int ret;

	if (!mr) {
		ret = lchan_mr_reg(&m->ctx, &m->chan, (void *)buf, len,
				   LCHAN_ACCESS_REMOTE_READ, &tmp);
		if (ret)
			return reg_err(ret);
		mr = &tmp;
	}
	seq = ++m->rts_sent;
	ret = post_ctrl(m, MSG_RTS, (uint32_t)len, (uintptr_t)buf, mr->rkey,
			seq, NULL, 0, 0);
	if (!ret) {
		m->credits--;
		msg_submit(m);
		/* FINs come in order, one per RTS. */
		m->transfer = true;
		ret = WAIT_UNTIL(m, (int32_t)(m->fins - seq) >= 0, deadline);
		m->transfer = false;
		if (ret == -ETIMEDOUT)
			msg_fail(m, ret);
	}
	lchan_mr_dereg(&m->ctx, &tmp);
	return ret;
}

static ssize_t msg_send_one(struct lchan_msg *m, const struct lchan_mr *mr,
			    const struct iovec *iov, int iovcnt,
			    unsigned flags, int timeout_ms)
{
	ssize_t total = iov_total(iov, iovcnt);
	long long deadline;
	void *bounce, *buf;
	bool polled = false;
	int ret;

	ret = msg_call(m, flags, LCHAN_MSG_MORE);
	if (ret)
		return ret;
	if (total < 0)
		return total;
	if ((size_t)total > m->max_msg)
		return -EMSGSIZE;
	deadline = msg_deadline(flags, &timeout_ms);
	for (;;) {
		reap(m);
		if (m->peer_eos)
			return -EPIPE;
		if (m->err)
			return m->err;
		if (m->hello && m->credits && send_free(m))
			break;
		if (!timeout_ms) {
			if (!polled && (polled = poll_direct(m)))
				continue;
			return -EAGAIN;
		}
		ret = wait_cqe(m, deadline);
		if (ret && ret != -EINTR)
			return ret;
	}
	if ((size_t)total <= m->buf_size) {
		ret = post_ctrl(m, MSG_DATA, (uint32_t)total, 0, 0, 0, iov,
				iovcnt, (size_t)total);
		if (ret)
			return ret;
		m->credits--;
		return total;
	}

	/* Rendezvous: the peer READs from here, so it must stay put. */
	buf = large_buf(iov, iovcnt, (size_t)total, &bounce);
	if (!buf)
		return -ENOMEM;
	if (bounce) {
		iov_gather(bounce, iov, iovcnt, (size_t)total);
		mr = NULL;
	}
	ret = send_large(m, mr, buf, (size_t)total, deadline);
	free(bounce);
	return ret ? ret : total;
}

/*
 * A send is posted before the call returns, unless LCHAN_MSG_MORE lets it
 * go with the next call's first ENTER (a receive's wait, on a direct
 * channel the same ENTER that waits) or its last.
 */
static ssize_t msg_send(struct lchan_msg *m, const struct lchan_mr *mr,
			const struct iovec *iov, int iovcnt, unsigned flags,
			int timeout_ms)
{
	ssize_t ret = msg_send_one(m, mr, iov, iovcnt, flags, timeout_ms);

	if (ret < 0 || !(flags & LCHAN_MSG_MORE)) {
		msg_submit(m);
		if (ret >= 0 && m->err)
			ret = m->err;
	}
	return ret;
}

ssize_t lchan_msg_send(struct lchan_msg *m, const void *buf, size_t len,
		       unsigned flags)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return msg_send(m, NULL, &iov, 1, flags, -1);
}

ssize_t lchan_msg_sendv(struct lchan_msg *m, const struct iovec *iov,
			int iovcnt, unsigned flags, int timeout_ms)
{
	return msg_send(m, NULL, iov, iovcnt, flags, timeout_ms);
}

ssize_t lchan_msg_send_mr(struct lchan_msg *m, const struct lchan_mr *mr,
			  const void *buf, size_t len, unsigned flags)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	if (!mr)
		return -EINVAL;
	return msg_send(m, mr, &iov, 1, flags, -1);
}

/* The message at the head of the queue is taken: repost, owe a credit. */
static void rx_pop(struct lchan_msg *m)
{
	unsigned i = m->rxq[m->rxq_head];

	m->rxq_head = (m->rxq_head + 1) % m->nrecv;
	m->rxq_len--;
	post_recv(m, i);
	m->owed++;
}

/* READ the large message of @h into @dst, then tell the sender. */
static int rx_read(struct lchan_msg *m, const struct lchan_mr *umr,
		   const struct msg_hdr *h, uint8_t *dst)
{
	struct lchan_mr tmp = { 0 };
	const struct lchan_mr *mr = umr;
	unsigned chunk = READ_CHUNK;
	uint32_t off;
	int ret, err = 0;

	if (m->chan.info.max_msg_size && chunk > m->chan.info.max_msg_size)
		chunk = m->chan.info.max_msg_size;
	if (!mr) {
		ret = lchan_mr_reg(&m->ctx, &m->chan, dst, h->len,
				   LCHAN_ACCESS_LOCAL_WRITE, &tmp);
		if (ret)
			return reg_err(ret);
		mr = &tmp;
	}
	m->read_err = 0;
	m->transfer = true;
	for (off = 0; off < h->len;) {
		uint32_t n = h->len - off < chunk ? h->len - off : chunk;
		struct lchan_sqe *sqe = lchan_get_sqe(&m->chan);

		if (!sqe) {
			msg_submit(m);
			err = WAIT_UNTIL(m, lchan_sq_space(&m->chan), -1);
			if (err)
				break;
			continue;
		}
		lchan_prep_read(sqe, mr, dst + off, n, h->addr + off, h->rkey,
				UD(UD_READ, 0));
		m->reads++;
		m->sq_dirty = true;
		off += n;
	}
	msg_submit(m);
	/* The READs posted must end before their buffer may go. */
	ret = WAIT_UNTIL(m, !m->reads, -1);
	m->transfer = false;
	lchan_mr_dereg(&m->ctx, &tmp);
	if (err)
		return err;
	return ret ? ret : m->read_err;
}

/*
 * Wait until a message is queued (1), the peer's end of stream with
 * nothing queued (0) or the error.
 */
static int rx_wait(struct lchan_msg *m, unsigned flags, int timeout_ms)
{
	long long deadline = msg_deadline(flags, &timeout_ms);
	bool polled = false;
	int ret;

	for (;;) {
		reap(m);
		if (m->rxq_len)
			return 1;
		/* Queued messages first, then the end or the error. */
		if (m->peer_eos)
			return 0;
		if (m->err)
			return m->err;
		if (timeout_ms == 0) {
			if (!polled && (polled = poll_direct(m)))
				continue;
			return -EAGAIN;
		}
		ret = wait_cqe(m, deadline);
		if (ret && ret != -EINTR)
			return ret;
	}
}

static ssize_t msg_recv_one(struct lchan_msg *m, const struct lchan_mr *mr,
			    const struct iovec *iov, int iovcnt,
			    unsigned flags, int timeout_ms)
{
	ssize_t cap = iov_total(iov, iovcnt);
	void *bounce, *buf;
	struct msg_hdr h;
	int ret;

	ret = msg_call(m, flags, 0);
	if (ret)
		return ret;
	if (cap < 0)
		return cap;
	ret = rx_wait(m, flags, timeout_ms);
	if (ret <= 0)
		return ret;
	h = *(struct msg_hdr *)rslot(m, m->rxq[m->rxq_head]);
	if (h.len > (size_t)cap)
		return -EMSGSIZE;	/* left queued: lchan_msg_peek_len */
	if (h.type == MSG_DATA) {
		iov_scatter(iov, iovcnt, rslot(m, m->rxq[m->rxq_head]) +
			    sizeof(h), h.len);
		rx_pop(m);
		maybe_credit(m);
		return h.len;
	}
	buf = large_buf(iov, iovcnt, h.len, &bounce);
	if (!buf)
		return -ENOMEM;
	ret = rx_read(m, bounce ? NULL : mr, &h, buf);
	if (!ret && bounce)
		iov_scatter(iov, iovcnt, bounce, h.len);
	free(bounce);
	if (ret)
		return ret;
	rx_pop(m);
	ret = WAIT_UNTIL(m, send_free(m), -1);
	if (ret)
		return ret;
	/* The FIN carries the credit of the RTS buffer just reposted. */
	post_ctrl(m, MSG_FIN, 0, 0, 0, h.seq, NULL, 0, 0);
	return (ssize_t)h.len;
}

/* Whatever the receive left to send (a credit, a FIN, a deferred send). */
static ssize_t msg_recv(struct lchan_msg *m, const struct lchan_mr *mr,
			const struct iovec *iov, int iovcnt, unsigned flags,
			int timeout_ms)
{
	ssize_t ret = msg_recv_one(m, mr, iov, iovcnt, flags, timeout_ms);

	msg_submit(m);
	return ret >= 0 && m->err ? m->err : ret;
}

ssize_t lchan_msg_recv(struct lchan_msg *m, void *buf, size_t cap,
		       unsigned flags, int timeout_ms)
{
	struct iovec iov = { .iov_base = buf, .iov_len = cap };

	return msg_recv(m, NULL, &iov, 1, flags, timeout_ms);
}

ssize_t lchan_msg_recvv(struct lchan_msg *m, const struct iovec *iov,
			int iovcnt, unsigned flags, int timeout_ms)
{
	return msg_recv(m, NULL, iov, iovcnt, flags, timeout_ms);
}

ssize_t lchan_msg_recv_mr(struct lchan_msg *m, const struct lchan_mr *mr,
			  void *buf, size_t cap, unsigned flags,
			  int timeout_ms)
{
	struct iovec iov = { .iov_base = buf, .iov_len = cap };

	if (!mr)
		return -EINVAL;
	return msg_recv(m, mr, &iov, 1, flags, timeout_ms);
}

ssize_t lchan_msg_peek_len(struct lchan_msg *m, unsigned flags,
			   int timeout_ms)
{
	int ret;

	ret = msg_call(m, flags, 0);
	if (!ret)
		ret = rx_wait(m, flags, timeout_ms);
	msg_submit(m);
	if (ret <= 0)
		return ret;
	return ((struct msg_hdr *)rslot(m, m->rxq[m->rxq_head]))->len;
}

static void msg_free(struct lchan_msg *m)
{
	lchan_mr_dereg(&m->ctx, &m->mr);
	lchan_chan_close(&m->chan);
	lchan_ctx_close(&m->ctx);
	free(m->mem);
	free(m->rxq);
	free(m);
}

/* Sizes from the options; the channel is made by the caller after this. */
/* @o with the defaults filled in, in @d; -EINVAL when out of range. */
static int msg_opts_resolve(const struct lchan_msg_opts *o,
			    struct lchan_msg_opts *d)
{
	*d = o ? *o : (struct lchan_msg_opts){ 0 };
	if (!d->max_msg)
		d->max_msg = DEFAULT_MAX_MSG;
	if (!d->nbufs)
		d->nbufs = DEFAULT_NBUFS;
	if (!d->nsend)
		d->nsend = DEFAULT_NSEND;
	if (!d->buf_size)
		d->buf_size = DEFAULT_BUF_SIZE;
	if (d->max_msg > UINT32_MAX || d->nbufs > MAX_BUFS ||
	    d->nsend > MAX_BUFS || d->buf_size > MAX_BUF_SIZE ||
	    (d->flags & ~LCHAN_MSG_OPT_DIRECT))
		return -EINVAL;
	return 0;
}

static struct lchan_msg *msg_alloc(struct lchan_ctx *ctx,
				   const struct lchan_msg_opts *o,
				   struct lchan_opts *copts)
{
	struct lchan_msg_opts d;
	struct lchan_msg *m;

	if (msg_opts_resolve(o, &d)) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->chan.fd = -1;
	/*
	 * A descriptor of our own for the context: the caller may close
	 * theirs while the message channel lives on.
	 */
	m->ctx.fd = fcntl(ctx->fd, F_DUPFD_CLOEXEC, 0);
	if (m->ctx.fd < 0) {
		int err = errno;

		free(m);
		errno = err;
		return NULL;
	}
	m->max_msg = d.max_msg;
	m->nbufs = d.nbufs;
	m->nsend = d.nsend;
	m->buf_size = d.buf_size;
	m->thresh = m->nbufs / 4 ? m->nbufs / 4 : 1;
	m->nrecv = m->nbufs + m->nbufs / m->thresh + SPARE_RECVS;
	/* Slots keep payloads 8-aligned behind the header. */
	m->slot = (unsigned)((sizeof(struct msg_hdr) + m->buf_size +
			      SLOT_ALIGN - 1) & ~(SLOT_ALIGN - 1u));
	m->mem_len = PAGE_ALIGN_LEN((size_t)m->slot * (m->nrecv + m->nsend));
	m->mem = aligned_alloc(MEM_PAGE, m->mem_len);
	m->rxq = calloc(m->nrecv, sizeof(unsigned));
	if (!m->mem || !m->rxq) {
		msg_free(m);
		errno = ENOMEM;
		return NULL;
	}
	memset(m->mem, 0, m->mem_len);
	m->signal_every = m->nsend / 2 ? m->nsend / 2 : 1;
	m->direct = d.flags & LCHAN_MSG_OPT_DIRECT;
	*copts = (struct lchan_opts){
		.sq_entries = m->nsend + READ_SLOTS,
		.rq_entries = m->nrecv,
		.timeout_ms = d.timeout_ms,
		.flags = LCHAN_DEFER_ESTABLISH |
			 (m->direct ? LCHAN_DIRECT_POLL : 0),
	};
	return m;
}

/* Register, post every receive, connect, say hello. */
static int msg_start(struct lchan_msg *m, unsigned timeout_ms)
{
	unsigned i;
	int ret;

	ret = lchan_mr_reg(&m->ctx, &m->chan, m->mem, m->mem_len,
			   LCHAN_ACCESS_LOCAL_WRITE, &m->mr);
	if (ret)
		return reg_err(ret);
	for (i = 0; i < m->nrecv; i++)
		post_recv(m, i);
	/* ESTABLISH posts published receives before it connects: no ENTER. */
	lchan_publish(&m->chan);
	m->rq_dirty = false;
	ret = lchan_establish(&m->chan, timeout_ms);
	if (ret)
		return ret;
	ret = post_ctrl(m, MSG_HELLO, m->nbufs, 0, 0, 0, NULL, 0, 0);
	if (!ret)
		ret = msg_submit(m);
	return ret ? ret : m->err;
}

/*
 * The second half of connect and accept: @ret is how making the channel
 * went.  Start the layer on it and hand it out in @out, or free it all.
 */
static int msg_open(struct lchan_msg *m, int ret, unsigned timeout_ms,
		    struct lchan_msg **out)
{
	if (!ret)
		ret = msg_start(m, timeout_ms);
	if (ret) {
		msg_free(m);
		return ret;
	}
	*out = m;
	return 0;
}

int lchan_msg_connect(struct lchan_ctx *ctx, const char *host,
		      const char *port, const struct lchan_msg_opts *opts,
		      struct lchan_msg **out)
{
	struct lchan_opts copts;
	struct lchan_msg *m;
	int ret;

	*out = NULL;
	m = msg_alloc(ctx, opts, &copts);
	if (!m)
		return -errno;
	/* The peer is a message channel: lchan's, so either may speak first. */
	copts.flags |= LCHAN_OPEN_EXCHANGE;
	ret = lchan_connect(&m->ctx, host, port, &copts, &m->chan);
	return msg_open(m, ret, copts.timeout_ms, out);
}

/*
 * The accept of LCHAN_1.1, for programs built against it: the caller's
 * listener from lchan_listen(), options per call.
 */
int lchan_msg_accept_v1_1(struct lchan_ctx *ctx, struct lchan_listener *lst,
			  const struct lchan_msg_opts *opts,
			  struct lchan_msg **out);
__asm__(".symver lchan_msg_accept_v1_1, lchan_msg_accept@LCHAN_1.1");
int lchan_msg_accept_v1_1(struct lchan_ctx *ctx, struct lchan_listener *lst,
			  const struct lchan_msg_opts *opts,
			  struct lchan_msg **out)
{
	struct lchan_opts copts;
	struct lchan_msg *m;
	int ret;

	*out = NULL;
	m = msg_alloc(ctx, opts, &copts);
	if (!m)
		return -errno;
	ret = lchan_accept(lst, &copts, &m->chan);
	return msg_open(m, ret, copts.timeout_ms, out);
}

struct lchan_msg_listener {
	struct lchan_ctx ctx;		/* our own fd of the caller's context */
	struct lchan_listener lst;	/* non-blocking: accept waits in poll */
	struct lchan_msg_opts opts;	/* of every channel accepted */
};

int lchan_msg_listen(struct lchan_ctx *ctx, const char *host,
		     const char *port, int backlog,
		     const struct lchan_msg_opts *opts,
		     struct lchan_msg_listener **out)
{
	struct lchan_msg_listener *l;
	struct lchan_msg_opts d;
	int ret;

	*out = NULL;
	/* The options are checked now, not at the first accept. */
	ret = msg_opts_resolve(opts, &d);
	if (ret)
		return ret;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->lst.fd = -1;
	if (opts)
		l->opts = *opts;
	l->ctx.fd = fcntl(ctx->fd, F_DUPFD_CLOEXEC, 0);
	if (l->ctx.fd < 0) {
		ret = -errno;
		goto err_free;
	}
	ret = lchan_listen(&l->ctx, host, port, backlog, LCHAN_FD_NONBLOCK,
			   &l->lst);
	if (ret)
		goto err_free;
	*out = l;
	return 0;

err_free:
	lchan_msg_listener_close(l);
	return ret;
}

int lchan_msg_listener_fd(const struct lchan_msg_listener *l)
{
	return l->lst.fd;
}

unsigned lchan_msg_listener_port(const struct lchan_msg_listener *l)
{
	return l->lst.addr.port;
}

int lchan_msg_listener_close(struct lchan_msg_listener *l)
{
	int ret;

	if (!l)
		return 0;
	ret = lchan_listener_close(&l->lst);
	lchan_ctx_close(&l->ctx);
	free(l);
	return ret;
}

/* Wait until the listener has a request, at most until @deadline. */
static int listener_wait(struct lchan_msg_listener *l, long long deadline)
{
	struct pollfd pfd = { .fd = l->lst.fd, .events = POLLIN };
	int ret;

	ret = poll(&pfd, 1, left_ms(deadline));
	if (ret < 0)
		return errno == EINTR ? 0 : -errno;
	if (ret == 0)
		return -ETIMEDOUT;
	return pfd.revents & (POLLERR | POLLHUP) ? -ENODEV : 0;
}

/*
 * The accept of LCHAN_1.3: the next connection on @l, waiting for one up
 * to @timeout_ms (0: -EAGAIN at once, -1: without end).
 */
int lchan_msg_accept_v1_3(struct lchan_msg_listener *l, int timeout_ms,
			  struct lchan_msg **out);
__asm__(".symver lchan_msg_accept_v1_3, lchan_msg_accept@@LCHAN_1.3");
int lchan_msg_accept_v1_3(struct lchan_msg_listener *l, int timeout_ms,
			  struct lchan_msg **out)
{
	long long deadline = msg_deadline(0, &timeout_ms);
	struct lchan_opts copts;
	struct lchan_msg *m;
	int ret;

	*out = NULL;
	m = msg_alloc(&l->ctx, &l->opts, &copts);
	if (!m)
		return -errno;
	for (;;) {
		ret = lchan_accept(&l->lst, &copts, &m->chan);
		if (ret != -EAGAIN || !timeout_ms)
			break;
		ret = listener_wait(l, deadline);
		if (ret)
			break;
	}
	return msg_open(m, ret, copts.timeout_ms, out);
}

/*
 * End of stream: EOS goes after every message sent so far, and we wait
 * (bounded) until all our SENDs completed, i.e. reached the peer's
 * buffers, before the channel goes.  The peer reads them, then gets 0.
 */
int lchan_msg_close(struct lchan_msg *m)
{
	long long deadline = now_ms() + CLOSE_WAIT_MS;
	int ret = 0;

	if (!m)
		return 0;
	m->busy_poll = false;
	if (!m->err && !m->peer_eos) {
		ret = WAIT_UNTIL(m, send_free(m), deadline);
		if (!ret)
			ret = post_ctrl(m, MSG_EOS, 0, 0, 0, 0, NULL, 0, 0);
		m->closed = true;
		msg_submit(m);
		if (!ret)
			ret = WAIT_UNTIL(m, m->send_done == m->send_post, deadline);
	}
	m->closed = true;
	msg_free(m);
	return ret == -ETIMEDOUT ? ret : 0;
}
