// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * liblchan data path calls that need the kernel: submit (one ioctl per
 * batch) and waiting for completions.
 */
#include <poll.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <time.h>

#include "liblchan.h"
#include "cpu_relax.h"
#include "queue.h"

/* Tens to a few hundred us of polling, as the pause's length varies by CPU. */
#define LCHAN_POSTED_SPINS 4096

/* Entries the kernel has taken from the two rings, ever (wraps). */
static unsigned lchan_taken(const struct lchan_chan *chan)
{
	return lchan_load_acquire(chan->sq.khead) +
	       lchan_load_acquire(chan->rq.khead);
}

/*
 * ENTER, returning how many entries left the rings while it ran.  The
 * kernel also takes entries on its own (after a completion frees a work
 * request slot, and on iWARP once the opening exchange lets the SQ go),
 * and may do so between our publish and the ioctl: ENTER's own count
 * would then miss entries that are posted.  The heads are read before
 * publishing, so nothing of this call is taken before the first read.
 */
static int lchan_enter(struct lchan_chan *chan, struct lchan_enter_args *req)
{
	unsigned before = lchan_taken(chan);

	lchan_publish(chan);
	chan->sq.published = chan->sq.tail;
	chan->rq.published = chan->rq.tail;
	req->size = sizeof(*req);
	if (ioctl(chan->fd, LCHAN_IOC_ENTER, req))
		return errno ? -errno : -EIO;
	return (int)(lchan_taken(chan) - before);
}

/*
 * Poller mode: spin until the kernel thread has posted the receives just
 * published.  true when they are at the queue pair; false when the thread
 * is too slow (it sleeps, or shares our CPU), or the kernel does not say.
 */
static bool lchan_rq_wait_posted(const struct lchan_chan *chan)
{
	unsigned spins;

	if (!chan->rq.kposted)
		return false;
	for (spins = 0; spins < LCHAN_POSTED_SPINS; spins++) {
		if (lchan_load_acquire(chan->rq.kposted) == chan->rq.published)
			return true;
		lchan_cpu_relax();
	}
	return false;
}

static int lchan_submit_common(struct lchan_chan *chan, bool recvs_at_qp)
{
	struct lchan_enter_args req = { 0 };
	bool new_recvs;
	int n;

	if (!(chan->info.chan_flags & LCHAN_CHAN_POLLER))
		return lchan_enter(chan, &req);
	new_recvs = chan->rq.tail != chan->rq.published;
	n = (int)((chan->sq.tail - chan->sq.published) +
		  (chan->rq.tail - chan->rq.published));
	lchan_publish(chan);
	chan->sq.published = chan->sq.tail;
	chan->rq.published = chan->rq.tail;
	if (lchan_poller_needs_wakeup(chan) ||
	    (recvs_at_qp && new_recvs && !lchan_rq_wait_posted(chan))) {
		int ret = lchan_enter(chan, &req);

		if (ret < 0)
			return ret;
	}
	return n;
}

/*
 * Post every entry filled since the last call.  Doorbell mode: one ioctl,
 * returns how many entries the kernel took while the call ran.  Poller
 * mode: no system call unless the kernel thread sleeps or is slow to post
 * new receives; returns how many were published.
 *
 * Receives are at the queue pair when this returns, in both modes: the
 * caller may then tell its peer to send by a path the poller does not see
 * (a socket, another channel), and a SEND that finds no receive ends an
 * iWARP connection and waits out the receiver-not-ready timer on IB/RoCE.
 */
int lchan_submit(struct lchan_chan *chan)
{
	return lchan_submit_common(chan, true);
}

int lchan_submit_in_band(struct lchan_chan *chan)
{
	return lchan_submit_common(chan, false);
}

/* An ENTER that waits for @min_complete CQEs (@timeout_ns < 0: forever). */
static struct lchan_enter_args lchan_wait_args(unsigned min_complete,
					       long long timeout_ns)
{
	struct lchan_enter_args req = {
		.size = sizeof(req),
		.flags = LCHAN_ENTER_GETEVENTS,
		.min_complete = min_complete,
	};

	if (timeout_ns >= 0) {
		req.flags |= LCHAN_ENTER_TIMEOUT;
		req.timeout_ns = (uint64_t)timeout_ns;
	}
	return req;
}

/* Submit, then wait for @min_complete CQEs (@timeout_ns < 0: forever). */
int lchan_submit_and_wait(struct lchan_chan *chan, unsigned min_complete,
			  long long timeout_ns)
{
	struct lchan_enter_args req = lchan_wait_args(min_complete, timeout_ns);

	return lchan_enter(chan, &req);
}

int lchan_chan_state(struct lchan_chan *chan)
{
	struct lchan_enter_args req = { 0 };
	int ret;

	req.size = sizeof(req);
	/* Publishes nothing new: an ENTER with no work reports the state. */
	ret = ioctl(chan->fd, LCHAN_IOC_ENTER, &req);
	if (ret)
		return errno ? -errno : -EIO;
	return (int)req.state;
}

static long long lchan_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* What is left of a wait that ends at @end_ns (< 0: never), in ns. */
static long long lchan_left_ns(long long end_ns)
{
	long long left;

	if (end_ns < 0)
		return -1;
	left = end_ns - lchan_now_ns();
	return left > 0 ? left : 0;
}

/* The same in ms for poll(2), rounded up so that it never ends early. */
static int lchan_left_ms(long long end_ns)
{
	long long left = lchan_left_ns(end_ns);

	if (left < 0)
		return -1;
	left = (left + 999999) / 1000000;
	return left > 0x7fffffff ? 0x7fffffff : (int)left;
}

/*
 * lchan_wait_cqe() on a direct channel: the kernel polls in ENTER.  The
 * call publishes nothing, so it submits only what was published before.
 */
static int lchan_wait_cqe_direct(struct lchan_chan *chan,
				 struct lchan_cqe **cqe, long long end_ns)
{
	struct lchan_enter_args req;

	for (;;) {
		if (!lchan_peek_cqe(chan, cqe))
			return 0;
		req = lchan_wait_args(1, lchan_left_ns(end_ns));
		if (!ioctl(chan->fd, LCHAN_IOC_ENTER, &req))
			continue;
		if (!lchan_peek_cqe(chan, cqe))
			return 0;
		if (errno == ETIME)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

/*
 * The next CQE, waiting up to @timeout_ms in all (-1: forever) with
 * poll(2), or on a direct channel in ENTER.  -ETIMEDOUT when nothing
 * came, -ENOTCONN when the channel is down and nothing is left to read.
 * A wake-up that brought nothing (a signal, another thread's CQE) waits
 * on for what is left of the time, not for the whole of it again.
 */
int lchan_wait_cqe(struct lchan_chan *chan, struct lchan_cqe **cqe,
		   int timeout_ms)
{
	struct pollfd pfd = { .fd = chan->fd, .events = POLLIN };
	long long end_ns = -1;
	int ret;

	if (!lchan_peek_cqe(chan, cqe))
		return 0;
	if (timeout_ms >= 0)
		end_ns = lchan_now_ns() + timeout_ms * 1000000LL;
	if (chan->info.chan_flags & LCHAN_CHAN_DIRECT)
		return lchan_wait_cqe_direct(chan, cqe, end_ns);
	for (;;) {
		if (!lchan_peek_cqe(chan, cqe))
			return 0;
		ret = poll(&pfd, 1, lchan_left_ms(end_ns));
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!lchan_peek_cqe(chan, cqe))
			return 0;
		if (ret == 0)
			return -ETIMEDOUT;
		if (pfd.revents & (POLLHUP | POLLERR))
			return -ENOTCONN;
	}
}

const char *lchan_cqe_status_str(unsigned status)
{
	switch (status) {
	case LCHAN_CQE_OK: return "success";
	case LCHAN_CQE_LOC_LEN_ERR: return "local length error";
	case LCHAN_CQE_LOC_QP_OP_ERR: return "local QP operation error";
	case LCHAN_CQE_LOC_PROT_ERR: return "local protection error";
	case LCHAN_CQE_WR_FLUSH_ERR: return "flushed";
	case LCHAN_CQE_REM_INV_REQ_ERR: return "remote invalid request";
	case LCHAN_CQE_REM_ACCESS_ERR: return "remote access error";
	case LCHAN_CQE_REM_OP_ERR: return "remote operation error";
	case LCHAN_CQE_RETRY_EXC_ERR: return "transport retry exceeded";
	case LCHAN_CQE_RNR_RETRY_EXC_ERR: return "receiver not ready";
	case LCHAN_CQE_GENERAL_ERR: return "general error";
	case LCHAN_CQE_BAD_OPCODE: return "bad opcode";
	case LCHAN_CQE_BAD_FLAGS: return "bad flags";
	case LCHAN_CQE_BAD_RESV: return "reserved field not zero";
	case LCHAN_CQE_BAD_MR: return "bad memory region";
	case LCHAN_CQE_BAD_RANGE: return "range outside the memory region";
	case LCHAN_CQE_BAD_LEN: return "length too large";
	case LCHAN_CQE_BAD_ACCESS: return "memory region lacks access";
	case LCHAN_CQE_UNSUPPORTED: return "unsupported on this device";
	case LCHAN_CQE_BAD_SGE: return "bad scatter/gather list";
	case LCHAN_CQE_BAD_ALIGN: return "atomic needs 8 aligned bytes";
	}
	return "unknown status";
}
