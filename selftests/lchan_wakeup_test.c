// SPDX-License-Identifier: GPL-2.0
/*
 * Completions reach the ring and wake the waiter, every time.
 *
 * poll(2) on a channel never misses a completion.  A ping-pong where each
 * side sleeps in poll() for every CQE it needs: the completion handler
 * writes the CQ tail and wakes sleepers only if it sees one queued, so a
 * poll() that queues itself and reads the tail without a full barrier in
 * between can sleep through the CQE that was meant to wake it.  That is a
 * stream that stops for good with its data sitting in the ring.  Each wait
 * here has a long timeout, and a poll() that times out with a CQE in the
 * ring is counted as a lost wake-up: there must be none.
 *
 * A completion the device reports while its CQ is being re-armed is never
 * lost either.  siw (Linux 6.1, 6.12) publishes a CQE and then reads the
 * CQ's armed flag without a barrier between them, against a consumer that
 * arms and then reads the CQE count: both can read the old value, and the CQE
 * then waits in the device's CQ until another completion comes.  Bursts of
 * unsignaled SENDs, each answered once all arrived, end in exactly that
 * state when it happens: the last receive of a burst completes while the
 * CQ is re-armed after the one before, and nothing else will complete.
 */
#include "kselftest_harness.h"
#include "lchan_test.h"

#define SLOT		64
#define NRECV		16
#define POLL_MS		5000

FIXTURE(wake) {
	struct lchan_t_dev d;
	struct lchan_t_ep srv, cli;
};

LCHAN_T_VARIANTS(wake);

FIXTURE_SETUP(wake)
{
	struct lchan_opts o = { .sq_entries = 16, .rq_entries = NRECV };
	int ret;

	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	self->srv = (struct lchan_t_ep){ .slot = SLOT, .nrecv = NRECV,
					 .nsend = 16 };
	self->cli = self->srv;
	ret = lchan_t_ep_pair(&self->srv, &self->cli, self->d.addr, &o);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
}

FIXTURE_TEARDOWN(wake)
{
	lchan_t_ep_close(&self->cli);
	lchan_t_ep_close(&self->srv);
}

struct side {
	struct lchan_t_ep *ep;
	unsigned count;
	bool echo;		/* answer each message (else: send first) */
	unsigned done;		/* round trips; read by the watchdog */
	unsigned lost;		/* poll() timed out with a CQE in the ring */
	unsigned waits;		/* poll() calls that slept */
	int ret;
	char why[128];
};

/* Sleep in poll() until a CQE is in the ring. */
static int wait_cqe_poll(struct side *s)
{
	struct lchan_chan *ch = &s->ep->chan;
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	int r;

	while (!lchan_cq_ready(ch)) {
		s->waits++;
		r = poll(&p, 1, POLL_MS);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0) {
			if (!lchan_cq_ready(ch))
				return -ETIMEDOUT;
			s->lost++;
			fprintf(stderr, "# lost wake-up after %u round trips: "
				"poll() slept %d ms with a CQE in the ring\n",
				s->done, POLL_MS);
			return 0;
		}
		if ((p.revents & (POLLERR | POLLHUP)) && !lchan_cq_ready(ch))
			return -ENOTCONN;
	}
	return 0;
}

static int send_one(struct side *s, unsigned i)
{
	struct lchan_sqe *sqe = lchan_get_sqe(&s->ep->chan);
	uint8_t *p = lchan_t_send_slot(s->ep, i);
	int ret;

	if (!sqe)
		return -ENOSPC;
	lchan_t_fill(p, i, SLOT);
	lchan_prep_send(sqe, &s->ep->mr, p, SLOT, 1ULL << 32 | i);
	ret = lchan_submit(&s->ep->chan);
	return ret < 0 ? ret : 0;
}

/* CQEs until message @i arrived (send CQEs are taken on the way). */
static int recv_one(struct side *s, unsigned i)
{
	struct lchan_cqe c;
	int ret;

	for (;;) {
		ret = wait_cqe_poll(s);
		if (ret)
			return ret;
		ret = lchan_t_reap(s->ep, &c, 0);
		if (ret)
			return ret;
		if (c.status) {
			snprintf(s->why, sizeof(s->why), "CQE %s for %#llx",
				 lchan_cqe_status_str(c.status),
				 (unsigned long long)c.user_data);
			return -EIO;
		}
		if (c.opcode != LCHAN_CQE_RECV)
			continue;
		if (c.byte_len != SLOT ||
		    lchan_t_check(lchan_t_recv_slot(s->ep, (unsigned)c.user_data),
				  i, SLOT) != -1) {
			snprintf(s->why, sizeof(s->why),
				 "message %u: %u bytes or content wrong", i,
				 c.byte_len);
			return -EIO;
		}
		return lchan_t_post_recv(s->ep, (unsigned)c.user_data);
	}
}

static void *side_run(void *arg)
{
	struct side *s = arg;
	unsigned i;

	for (i = 0; i < s->count && !s->ret; i++) {
		if (!s->echo)
			s->ret = send_one(s, i);
		if (!s->ret)
			s->ret = recv_one(s, i);
		if (!s->ret && s->echo)
			s->ret = send_one(s, i);
		if (s->ret && !s->why[0])
			snprintf(s->why, sizeof(s->why), "round trip %u: %s",
				 i, strerror(-s->ret));
		__atomic_fetch_add(&s->done, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void dump_eps(void *arg)
{
	FIXTURE_DATA(wake) *self = arg;

	lchan_t_dump_chan("client", &self->cli.chan);
	lchan_t_dump_chan("server", &self->srv.chan);
	lchan_t_dump_tcp();
}

/* Every CQE wakes the poll() that waits for it, both ways, many times. */
TEST_F_TIMEOUT(wake, poll_sees_every_completion, 600)
{
	unsigned n = lchan_t_count(20000);
	struct side cli = { .ep = &self->cli, .count = n };
	struct side srv = { .ep = &self->srv, .count = n, .echo = true };
	unsigned *prog[] = { &cli.done, &srv.done };
	pthread_t thr[2];
	double t0 = lchan_t_now();

	ASSERT_EQ(0, pthread_create(&thr[0], NULL, side_run, &srv));
	ASSERT_EQ(0, pthread_create(&thr[1], NULL, side_run, &cli));
	ASSERT_EQ(0, lchan_t_join_watch(thr, 2, prog, 2, dump_eps, self))
		TH_LOG("stalled at %u / %u round trips", cli.done, srv.done);
	EXPECT_EQ(0, cli.ret) TH_LOG("client: %s", cli.why);
	EXPECT_EQ(0, srv.ret) TH_LOG("server: %s", srv.why);
	EXPECT_EQ(0, cli.lost + srv.lost)
		TH_LOG("lost wake-ups: client %u, server %u", cli.lost,
		       srv.lost);
	EXPECT_EQ(n, cli.done);
	TH_LOG("%u round trips in %.1f s, %u + %u sleeps in poll()", n,
	       lchan_t_now() - t0, cli.waits, srv.waits);
}

#define BURST		8

struct burst_side {
	struct lchan_t_ep *ep;
	unsigned bursts;
	bool answer;		/* receive a burst, answer it; else the reverse */
	unsigned done;		/* bursts; read by the watchdog */
	unsigned lost;
	unsigned waits;
	int ret;
	char why[128];
};

static int burst_send(struct lchan_t_ep *ep, unsigned n, unsigned first)
{
	unsigned i;
	int ret;

	for (i = 0; i < n; i++) {
		struct lchan_sqe *sqe = lchan_get_sqe(&ep->chan);
		uint8_t *p = lchan_t_send_slot(ep, first + i);

		if (!sqe)
			return -ENOSPC;
		lchan_t_fill(p, first + i, SLOT);
		lchan_prep_send(sqe, &ep->mr, p, SLOT, 1ULL << 32 | (first + i));
		/*
		 * No send CQEs (the kernel reclaims the slots): each side's CQ
		 * sees only the peer's messages, so a dropped event for the
		 * last message of a burst is not rescued by a later CQE.
		 */
		sqe->flags |= LCHAN_SQE_UNSIGNALED;
	}
	ret = lchan_submit(&ep->chan);
	return ret < 0 ? ret : 0;
}

/* Receive @n messages numbered from @first, sleeping in poll() between. */
static int burst_recv(struct burst_side *b, unsigned n, unsigned first)
{
	struct side s = { .ep = b->ep };
	unsigned got = 0;
	int ret = 0;

	while (got < n && !ret) {
		struct lchan_cqe c;

		ret = wait_cqe_poll(&s);
		if (!ret)
			ret = lchan_t_reap(b->ep, &c, 0);
		if (ret)
			break;
		if (c.status) {
			snprintf(b->why, sizeof(b->why), "CQE %s for %#llx",
				 lchan_cqe_status_str(c.status),
				 (unsigned long long)c.user_data);
			ret = -EIO;
		} else if (c.opcode == LCHAN_CQE_RECV) {
			unsigned slot = (unsigned)c.user_data;

			if (c.byte_len != SLOT ||
			    lchan_t_check(lchan_t_recv_slot(b->ep, slot),
					  first + got, SLOT) != -1) {
				snprintf(b->why, sizeof(b->why),
					 "message %u wrong", first + got);
				ret = -EIO;
			} else {
				ret = lchan_t_post_recv(b->ep, slot);
				got++;
			}
		}
	}
	b->lost += s.lost;
	b->waits += s.waits;
	return ret;
}

static void *burst_run(void *arg)
{
	struct burst_side *b = arg;
	unsigned i;

	for (i = 0; i < b->bursts && !b->ret; i++) {
		unsigned first = i * BURST;

		if (b->answer) {
			b->ret = burst_recv(b, BURST, first);
			if (!b->ret)
				b->ret = burst_send(b->ep, 1, i);
		} else {
			b->ret = burst_send(b->ep, BURST, first);
			if (!b->ret)
				b->ret = burst_recv(b, 1, i);
		}
		if (b->ret && !b->why[0])
			snprintf(b->why, sizeof(b->why), "burst %u: %s", i,
				 strerror(-b->ret));
		__atomic_fetch_add(&b->done, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Bursts of SENDs, each answered once all arrived: no CQE left behind. */
TEST_F_TIMEOUT(wake, bursts_reach_the_ring, 600)
{
	unsigned n = lchan_t_count(20000);
	struct burst_side tx = { .ep = &self->cli, .bursts = n };
	struct burst_side rx = { .ep = &self->srv, .bursts = n, .answer = true };
	unsigned *prog[] = { &tx.done, &rx.done };
	pthread_t thr[2];
	double t0 = lchan_t_now();

	ASSERT_EQ(0, pthread_create(&thr[0], NULL, burst_run, &rx));
	ASSERT_EQ(0, pthread_create(&thr[1], NULL, burst_run, &tx));
	ASSERT_EQ(0, lchan_t_join_watch(thr, 2, prog, 2, dump_eps, self))
		TH_LOG("stalled at %u / %u bursts", tx.done, rx.done);
	EXPECT_EQ(0, tx.ret) TH_LOG("sender: %s", tx.why);
	EXPECT_EQ(0, rx.ret) TH_LOG("receiver: %s", rx.why);
	EXPECT_EQ(0, tx.lost + rx.lost)
		TH_LOG("lost wake-ups: sender %u, receiver %u", tx.lost, rx.lost);
	EXPECT_EQ(n, tx.done);
	TH_LOG("%u bursts of %u in %.1f s, %u + %u sleeps in poll(), "
	       "dropped CQ events recovered %llu + %llu", n, BURST,
	       lchan_t_now() - t0, tx.waits, rx.waits,
	       lchan_t_chan_attr(&self->cli.chan, "cq_recovered"),
	       lchan_t_chan_attr(&self->srv.chan, "cq_recovered"));
}

TEST_HARNESS_MAIN
