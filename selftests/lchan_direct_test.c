// SPDX-License-Identifier: GPL-2.0
/*
 * Direct polling (LCHAN_DIRECT_POLL): the channel's CQ is polled in ENTER
 * and nowhere else.  Nothing reaches the ring until the application
 * enters; traffic flows without a completion event; ENTER's wait polls
 * and ends by count, timeout, signal or a peer gone; poll(2) is still
 * woken; the keepalive and close poll for themselves; what cannot be
 * direct is refused (iWARP, a poller context).
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

FIXTURE(direct) {
	struct lchan_t_dev d;
	struct lchan_t_ep srv, cli;
};

LCHAN_T_VARIANTS(direct);

FIXTURE_SETUP(direct)
{
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	lchan_t_raise_memlock();
	self->srv = (struct lchan_t_ep){ .slot = 4096, .nrecv = 16,
					 .nsend = 4 };
	self->cli = (struct lchan_t_ep){ .slot = 4096, .nrecv = 16,
					 .nsend = 4 };
}

FIXTURE_TEARDOWN(direct)
{
	lchan_t_ep_close(&self->cli);
	lchan_t_ep_close(&self->srv);
}

/* A connected pair, both ends direct, with @opts' other settings. */
static int direct_pair(struct lchan_t_ep *srv, struct lchan_t_ep *cli,
		       const char *host, struct lchan_opts opts)
{
	opts.flags |= LCHAN_DIRECT_POLL;
	return lchan_t_ep_pair(srv, cli, host, &opts);
}

#define NEED_DIRECT(kind) do {						\
	if (!strcmp(kind, "siw"))					\
		SKIP(return, "iWARP has no direct polling (its refusal: "\
		     "refused_where_it_cannot_work)");			\
} while (0)

/* Send message @i from @ep's send slot @i. */
static int send_msg(struct lchan_t_ep *ep, unsigned i, size_t len)
{
	struct lchan_sqe *sqe = lchan_get_sqe(&ep->chan);
	uint8_t *p = lchan_t_send_slot(ep, i);
	int ret;

	if (!sqe)
		return -ENOSPC;
	lchan_t_fill(p, i, len);
	lchan_prep_send(sqe, &ep->mr, p, len, i);
	ret = lchan_submit(&ep->chan);
	return ret < 0 ? ret : 0;
}

/* The next CQE by busy polling: ENTER (lchan_submit()) until one shows. */
static int busy_reap(struct lchan_t_ep *ep, struct lchan_cqe *out)
{
	double end = lchan_t_now() + 10;
	struct lchan_cqe *cqe;
	int ret;

	while (lchan_peek_cqe(&ep->chan, &cqe)) {
		ret = lchan_submit(&ep->chan);
		if (ret < 0)
			return ret;
		if (lchan_t_now() > end) {
			lchan_t_dump_chan("busy_reap", &ep->chan);
			return -ETIMEDOUT;
		}
	}
	*out = *cqe;
	lchan_cqe_seen(&ep->chan);
	return 0;
}

/*
 * IB/RoCE channels may be direct, iWARP ones not (EOPNOTSUPP); a poller
 * context's never (EINVAL); the channel says what it is.
 */
TEST_F_TIMEOUT(direct, refused_where_it_cannot_work, 60)
{
	struct lchan_opts opts = { .flags = LCHAN_DIRECT_POLL };
	bool iwarp = !strcmp(variant->kind, "siw");
	struct lchan_info info;
	struct lchan_t_ep psrv = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	struct lchan_t_ep pcli = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	char path[160], buf[32];
	int ret;

	ret = direct_pair(&self->srv, &self->cli, self->d.addr,
			  (struct lchan_opts){ 0 });
	if (iwarp) {
		EXPECT_EQ(-EOPNOTSUPP, ret);
	} else {
		ASSERT_EQ(0, ret);
		EXPECT_TRUE(self->cli.chan.info.chan_flags & LCHAN_CHAN_DIRECT);
		EXPECT_TRUE(self->srv.chan.info.chan_flags & LCHAN_CHAN_DIRECT);
		EXPECT_TRUE(self->cli.chan.info.features &
			    LCHAN_FEATURE_DIRECT);
		snprintf(path, sizeof(path),
			 "/sys/kernel/lchan/channels/%u/mode",
			 self->cli.chan.info.id);
		ASSERT_EQ(0, lchan_t_read_sysfs(path, buf, sizeof(buf)));
		EXPECT_STREQ("direct", buf);
	}
	ASSERT_EQ(0, lchan_query(&self->cli.ctx, &info));
	EXPECT_TRUE(info.features & LCHAN_FEATURE_DIRECT);

	/* A poller context's channel cannot be direct, on any device. */
	ASSERT_EQ(0, lchan_ctx_open(&psrv.ctx));
	ASSERT_EQ(0, lchan_ctx_open(&pcli.ctx));
	ASSERT_EQ(0, lchan_ctx_setup_poller(&pcli.ctx, 10, -1, NULL));
	ret = lchan_t_pair(&psrv.ctx, &pcli.ctx, self->d.addr, &opts,
			   &psrv.chan, &pcli.chan, lchan_t_ep_prepare, &psrv,
			   &pcli);
	EXPECT_EQ(-EINVAL, ret);
	lchan_t_ep_close(&pcli);
	lchan_t_ep_close(&psrv);
}

/* The next receive by busy polling, send completions (all good) skipped. */
static int busy_reap_recv(struct lchan_t_ep *ep, struct lchan_cqe *cqe)
{
	int ret;

	do {
		ret = busy_reap(ep, cqe);
		if (!ret && cqe->status)
			return -EIO;
	} while (!ret && cqe->opcode == LCHAN_CQE_SEND);
	return ret;
}

/*
 * Nothing reaches the ring until the receiver enters; then a ping-pong
 * by busy polling alone, every byte checked.
 */
TEST_F_TIMEOUT(direct, ping_pong_without_events, 300)
{
	struct lchan_cqe cqe;
	unsigned i, n = lchan_t_count(2000);
	unsigned long long enters;

	NEED_DIRECT(variant->kind);
	ASSERT_EQ(0, direct_pair(&self->srv, &self->cli, self->d.addr,
				 (struct lchan_opts){ 0 }));

	ASSERT_EQ(0, send_msg(&self->cli, 0, 200));
	usleep(200000);
	EXPECT_EQ(0, lchan_cq_ready(&self->srv.chan))
		TH_LOG("a completion reached the ring without an ENTER");
	enters = lchan_t_chan_attr(&self->srv.chan, "enters");
	for (i = 0; i < n; i++) {
		size_t len = i ? 64 + i % 512 : 200;

		if (i)
			ASSERT_EQ(0, send_msg(&self->cli, i, len));
		ASSERT_EQ(0, busy_reap_recv(&self->srv, &cqe))
			TH_LOG("message %u", i);
		ASSERT_EQ(LCHAN_CQE_RECV, cqe.opcode);
		ASSERT_EQ(len, cqe.byte_len);
		EXPECT_EQ(-1, lchan_t_check(lchan_t_recv_slot(&self->srv,
					    cqe.user_data), i, len));
		ASSERT_EQ(0, lchan_t_post_recv(&self->srv, cqe.user_data));
		/* The answer. */
		ASSERT_EQ(0, send_msg(&self->srv, i, 64));
		ASSERT_EQ(0, busy_reap_recv(&self->cli, &cqe))
			TH_LOG("answer %u", i);
		ASSERT_EQ(64, cqe.byte_len);
		ASSERT_EQ(0, lchan_t_post_recv(&self->cli, cqe.user_data));
	}
	EXPECT_LT(enters + n, lchan_t_chan_attr(&self->srv.chan, "enters"));
}

static void on_alarm(int sig)
{
	(void)sig;
}

/*
 * ENTER's wait on a direct channel polls: it ends with ETIME at its
 * timeout, EINTR on a signal, at the count when the peer's SEND lands,
 * and with ENOTCONN once the peer is gone and the flushes are in.
 */
TEST_F_TIMEOUT(direct, enter_wait_ends_by_count_timeout_signal_or_peer, 120)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { .it_value = { .tv_usec = 200000 } };
	struct lchan_cqe *cqe;
	unsigned i, flushed = 0;
	int ret;

	NEED_DIRECT(variant->kind);
	ASSERT_EQ(0, direct_pair(&self->srv, &self->cli, self->d.addr,
				 (struct lchan_opts){ 0 }));

	EXPECT_EQ(-ETIME, lchan_submit_and_wait(&self->srv.chan, 1,
						50 * 1000000LL));
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	EXPECT_EQ(-EINTR, lchan_submit_and_wait(&self->srv.chan, 1, -1));
	signal(SIGALRM, SIG_DFL);

	ASSERT_EQ(0, send_msg(&self->cli, 1, 100));
	ret = lchan_submit_and_wait(&self->srv.chan, 1, 5000 * 1000000LL);
	ASSERT_LE(0, ret);
	ASSERT_EQ(0, lchan_peek_cqe(&self->srv.chan, &cqe));
	EXPECT_EQ(LCHAN_CQE_RECV, cqe->opcode);
	EXPECT_EQ(0, cqe->status);
	lchan_cqe_seen(&self->srv.chan);

	/* More than can ever come: the wait ends when the channel settles. */
	lchan_t_ep_close(&self->cli);
	EXPECT_EQ(-ENOTCONN, lchan_submit_and_wait(&self->srv.chan, 64,
						   10000 * 1000000LL));
	for (i = 0; !lchan_peek_cqe(&self->srv.chan, &cqe); i++) {
		if (cqe->status == LCHAN_CQE_WR_FLUSH_ERR)
			flushed++;
		lchan_cqe_seen(&self->srv.chan);
	}
	EXPECT_EQ(self->srv.nrecv - 1, flushed) TH_LOG("%u CQEs", i);
}

struct later_send {
	struct lchan_t_ep *ep;
	int ret;
};

static void *send_later(void *arg)
{
	struct later_send *ls = arg;

	usleep(100000);
	ls->ret = send_msg(ls->ep, 7, 300);
	return NULL;
}

/* poll(2) on a direct channel is woken when a completion comes. */
TEST_F_TIMEOUT(direct, poll_wakes_on_completion, 60)
{
	struct later_send ls = { .ep = &self->cli };
	struct pollfd pfd;
	struct lchan_cqe *cqe;
	pthread_t thr;
	int round;

	NEED_DIRECT(variant->kind);
	ASSERT_EQ(0, direct_pair(&self->srv, &self->cli, self->d.addr,
				 (struct lchan_opts){ 0 }));
	for (round = 0; round < 3; round++) {
		pfd = (struct pollfd){ .fd = self->srv.chan.fd,
				       .events = POLLIN };
		ASSERT_EQ(0, pthread_create(&thr, NULL, send_later, &ls));
		EXPECT_EQ(1, poll(&pfd, 1, 20000)) TH_LOG("round %d", round);
		EXPECT_TRUE(pfd.revents & POLLIN);
		pthread_join(thr, NULL);
		ASSERT_EQ(0, ls.ret);
		ASSERT_EQ(0, lchan_peek_cqe(&self->srv.chan, &cqe));
		EXPECT_EQ(300, cqe->byte_len);
		ASSERT_EQ(0, lchan_t_post_recv(&self->srv, cqe->user_data));
		lchan_cqe_seen(&self->srv.chan);
		ASSERT_LE(0, lchan_submit(&self->srv.chan));
		/* The client's send completion, by its own ENTER. */
		ASSERT_EQ(0, lchan_t_reap(&self->cli, &(struct lchan_cqe){ 0 },
					  5000));
	}
}

/*
 * An idle direct channel with a keepalive stays up: the keepalive polls
 * the CQ for its probes' completions, with no ENTER from anyone.
 */
TEST_F_TIMEOUT(direct, keepalive_polls_for_itself, 60)
{
	struct lchan_opts opts = { .flags = LCHAN_OPTS_KEEPALIVE,
				   .keepalive_ms = 100 };
	char path[160], buf[32];

	NEED_DIRECT(variant->kind);
	ASSERT_EQ(0, direct_pair(&self->srv, &self->cli, self->d.addr, opts));
	usleep(1500000);
	snprintf(path, sizeof(path), "/sys/kernel/lchan/channels/%u/state",
		 self->cli.chan.info.id);
	ASSERT_EQ(0, lchan_t_read_sysfs(path, buf, sizeof(buf)));
	EXPECT_STREQ("connected", buf);
	EXPECT_LT(2, lchan_t_chan_attr(&self->cli.chan, "keepalive_probes"));
	EXPECT_EQ(LCHAN_STATE_CONNECTED, lchan_chan_state(&self->cli.chan));
	EXPECT_EQ(LCHAN_STATE_CONNECTED, lchan_chan_state(&self->srv.chan));
}

/*
 * Closing with completions nobody polled: the drain polls them, every
 * reference goes, and the peer sees the channel end.
 */
TEST_F_TIMEOUT(direct, close_with_completions_unpolled, 60)
{
	unsigned i;

	NEED_DIRECT(variant->kind);
	ASSERT_EQ(0, direct_pair(&self->srv, &self->cli, self->d.addr,
				 (struct lchan_opts){ 0 }));
	for (i = 0; i < self->cli.nsend; i++) {
		struct lchan_sqe *sqe = lchan_get_sqe(&self->cli.chan);

		ASSERT_NE(NULL, sqe);
		lchan_prep_send(sqe, &self->cli.mr,
				lchan_t_send_slot(&self->cli, i), 512, i);
	}
	ASSERT_LE(0, lchan_submit(&self->cli.chan));
	usleep(100000);
	lchan_t_ep_close(&self->cli);
	EXPECT_EQ(-ENOTCONN, lchan_submit_and_wait(&self->srv.chan, 64,
						   10000 * 1000000LL));
}

/* Close @ep's channel; seconds until its sysfs directory is gone. */
static double close_secs(struct lchan_t_ep *ep)
{
	char path[96];
	double t0, end;

	snprintf(path, sizeof(path), "/sys/kernel/lchan/channels/%u",
		 ep->chan.info.id);
	t0 = lchan_t_now();
	end = t0 + 10;
	lchan_chan_close(&ep->chan);
	while (access(path, F_OK) == 0 && lchan_t_now() < end)
		usleep(500);
	return lchan_t_now() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#define CLOSE_ROUNDS	5

/*
 * Closing a direct channel costs what closing a doorbell one does: the
 * drain polls its CQ at once instead of first waiting a polling period
 * (a tenth of a second per queue in ib_drain_qp()).  Medians of
 * alternating rounds; the bound is half of one such wait.
 */
TEST_F_TIMEOUT(direct, close_as_fast_as_doorbell, 120)
{
	double direct[CLOSE_ROUNDS], doorbell[CLOSE_ROUNDS];
	unsigned i;

	NEED_DIRECT(variant->kind);
	for (i = 0; i < 2 * CLOSE_ROUNDS; i++) {
		struct lchan_t_ep srv = self->srv, cli = self->cli;
		struct lchan_opts o = { 0 };
		bool is_direct = i % 2 == 0;
		int ret;

		ret = is_direct ? direct_pair(&srv, &cli, self->d.addr, o) :
				  lchan_t_ep_pair(&srv, &cli, self->d.addr, &o);
		ASSERT_EQ(0, ret) TH_LOG("pair %u: %s", i, strerror(-ret));
		/* A request in flight and receives posted: the drain has work. */
		ASSERT_EQ(0, send_msg(&cli, 0, 256));
		if (is_direct)
			direct[i / 2] = close_secs(&cli);
		else
			doorbell[i / 2] = close_secs(&cli);
		lchan_t_ep_close(&cli);
		lchan_t_ep_close(&srv);
	}
	qsort(direct, CLOSE_ROUNDS, sizeof(double), cmp_double);
	qsort(doorbell, CLOSE_ROUNDS, sizeof(double), cmp_double);
	TH_LOG("close to gone, medians of %u: direct %.1f ms, doorbell %.1f ms",
	       CLOSE_ROUNDS, direct[CLOSE_ROUNDS / 2] * 1e3,
	       doorbell[CLOSE_ROUNDS / 2] * 1e3);
	EXPECT_LT(direct[CLOSE_ROUNDS / 2], 0.05);
}

TEST_HARNESS_MAIN
