// SPDX-License-Identifier: GPL-2.0
/*
 * The message layer (liblchan_msg.h): a stream of messages of every size
 * both ways with content checks, flow control against a slow receiver,
 * channels under epoll, end of stream after the last message, timeouts.
 */
#include <sys/epoll.h>
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "lchan_test.h"
#include "liblchan_msg.h"

#define MAX_MSG		(4u << 20)
#define SRC_LEN		(MAX_MSG + 4096)

FIXTURE(msg) {
	struct lchan_t_dev d;
	struct lchan_ctx sctx, cctx;
	char pool_cpus[256];		/* poller_cpus to restore, or "" */
};

LCHAN_T_VARIANTS(msg);

FIXTURE_SETUP(msg)
{
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	lchan_t_raise_memlock();
	ASSERT_EQ(0, lchan_ctx_open(&self->sctx));
	ASSERT_EQ(0, lchan_ctx_open(&self->cctx));
}

FIXTURE_TEARDOWN(msg)
{
	if (self->pool_cpus[0])
		lchan_t_set_param("poller_cpus", self->pool_cpus);
	if (self->cctx.fd > 0)
		lchan_ctx_close(&self->cctx);
	if (self->sctx.fd > 0)
		lchan_ctx_close(&self->sctx);
}

struct acc {
	struct lchan_msg_listener *lst;
	struct lchan_msg **m;
	unsigned n;
	int ret;
};

static void *accept_thread(void *p)
{
	struct acc *a = p;
	unsigned i;

	for (i = 0; i < a->n; i++) {
		a->ret = lchan_msg_accept(a->lst, 20000, &a->m[i]);
		if (a->ret)
			break;
	}
	return NULL;
}

/* @n connected message channel pairs: srv[i] accepted, cli[i] connected. */
static int msg_pairs(FIXTURE_DATA(msg) *self,
		     const struct lchan_msg_opts *opts,
		     struct lchan_msg **srv, struct lchan_msg **cli,
		     unsigned n)
{
	struct lchan_msg_listener *lst;
	struct acc a = { NULL, srv, n, 0 };
	pthread_t thr;
	char port[16];
	unsigned i;
	int ret = 0;

	snprintf(port, sizeof(port), "%u", lchan_t_port());
	ret = lchan_msg_listen(&self->sctx, self->d.addr, port, 16, opts,
			       &lst);
	if (ret)
		return ret;
	a.lst = lst;
	if (pthread_create(&thr, NULL, accept_thread, &a)) {
		lchan_msg_listener_close(lst);
		return -EAGAIN;
	}
	for (i = 0; i < n && !ret; i++)
		ret = lchan_msg_connect(&self->cctx, self->d.addr, port, opts,
					&cli[i]);
	pthread_join(thr, NULL);
	lchan_msg_listener_close(lst);
	if (ret || a.ret)
		fprintf(stderr, "# msg_pairs: connect %u of %u: %d, accept: %d\n",
			i, n, ret, a.ret);
	return ret ? ret : a.ret;
}

/* Mostly small, some bounce-sized, a few READ-sized up to 4 MiB. */
static size_t msg_size(unsigned i, unsigned seed)
{
	unsigned h = (i + 1) * 2654435761u ^ seed;
	unsigned r;

	h ^= h >> 13;
	h *= 0x5bd1e995u;
	h ^= h >> 15;
	if (i == 0)
		return 1;
	if (i == 1)
		return MAX_MSG;
	r = h % 2000;
	h >>= 11;
	if (r < 1800)
		return 1 + h % 512;
	if (r < 1980)
		return 1 + h % 16384;
	if (r < 1999)
		return 1 + h % (256u << 10);
	return 1 + h % MAX_MSG;
}

static size_t msg_off(unsigned i)
{
	return (i * 97u) % 4096;
}

static uint8_t *src_buf(void)
{
	uint8_t *src = aligned_alloc(4096, SRC_LEN);
	size_t j;

	if (src)
		for (j = 0; j < SRC_LEN; j++)
			src[j] = (uint8_t)(j * 7 + (j >> 9) + 3);
	return src;
}

struct stream {
	struct lchan_msg *m;
	const uint8_t *src;
	unsigned count, seed, done;
	struct lchan_mr mr;	/* for the _mr variants; handle 0: none */
	int ret;
	char why[128];
};

static void *stream_send(void *p)
{
	struct stream *s = p;
	unsigned i;

	for (i = 0; i < s->count; i++) {
		size_t len = msg_size(i, s->seed);
		const uint8_t *b = s->src + msg_off(i);
		ssize_t n;

		if (s->mr.handle && (i & 1))
			n = lchan_msg_send_mr(s->m, &s->mr, b, len, 0);
		else
			n = lchan_msg_send(s->m, b, len, 0);
		if (n != (ssize_t)len) {
			s->ret = n < 0 ? (int)n : -EIO;
			snprintf(s->why, sizeof(s->why), "send %u of %zu: %zd",
				 i, len, n);
			return NULL;
		}
		__atomic_fetch_add(&s->done, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *stream_recv(void *p)
{
	struct stream *s = p;
	uint8_t *buf = s->mr.handle ? s->mr.addr : malloc(MAX_MSG);
	unsigned i;

	if (!buf) {
		s->ret = -ENOMEM;
		return NULL;
	}
	for (i = 0; i < s->count; i++) {
		size_t len = msg_size(i, s->seed);
		ssize_t n;

		if (s->mr.handle && (i & 1))
			n = lchan_msg_recv_mr(s->m, &s->mr, buf, MAX_MSG, 0,
					      60000);
		else
			n = lchan_msg_recv(s->m, buf, MAX_MSG, 0, 60000);
		if (n != (ssize_t)len ||
		    memcmp(buf, s->src + msg_off(i), len)) {
			s->ret = n < 0 ? (int)n : -EIO;
			snprintf(s->why, sizeof(s->why),
				 "recv %u: got %zd, want %zu bytes%s", i, n,
				 len, n == (ssize_t)len ? ", content differs" : "");
			break;
		}
		__atomic_fetch_add(&s->done, 1, __ATOMIC_RELAXED);
	}
	if (!s->mr.handle)
		free(buf);
	return NULL;
}

static void dump_msg(const char *who, struct lchan_msg *m)
{
	char buf[512];

	lchan_msg_describe(m, buf, sizeof(buf));
	fprintf(stderr, "# %s: msg %s\n", who, buf);
	lchan_t_dump_chan(who, lchan_msg_chan(m));
}

/* For lchan_t_join_watch: {sender, receiver}. */
static void dump_pair(void *arg)
{
	struct lchan_msg **pair = arg;

	dump_msg("sender", pair[0]);
	dump_msg("receiver", pair[1]);
	lchan_t_dump_tcp();
}

/* @count messages from @tx to @rx, a thread each. */
static void stream(struct __test_metadata *_metadata, struct lchan_msg *tx,
		   struct lchan_msg *rx, const uint8_t *src, unsigned count,
		   unsigned seed, const struct lchan_mr *txmr,
		   const struct lchan_mr *rxmr)
{
	struct stream s = { .m = tx, .src = src, .count = count, .seed = seed };
	struct stream r = { .m = rx, .src = src, .count = count, .seed = seed };
	unsigned *prog[] = { &s.done, &r.done };
	struct lchan_msg *pair[] = { tx, rx };
	pthread_t ts, tr, thr[2];
	double t0 = lchan_t_now();

	if (txmr)
		s.mr = *txmr;
	if (rxmr)
		r.mr = *rxmr;
	ASSERT_EQ(0, pthread_create(&tr, NULL, stream_recv, &r));
	ASSERT_EQ(0, pthread_create(&ts, NULL, stream_send, &s));
	thr[0] = ts;
	thr[1] = tr;
	/* A failed sender leaves the receiver to its 60 s timeout. */
	ASSERT_EQ(0, lchan_t_join_watch(thr, 2, prog, 2, dump_pair, pair))
		TH_LOG("stalled after %u of %u messages sent, %u received",
		       s.done, count, r.done);
	EXPECT_EQ(0, s.ret) TH_LOG("%s: %s", s.why, strerror(-s.ret));
	EXPECT_EQ(0, r.ret) TH_LOG("%s: %s", r.why, strerror(-r.ret));
	EXPECT_EQ(count, r.done);
	TH_LOG("%u messages in %.1f s", count, lchan_t_now() - t0);
}

/* 100,000 messages of 1 B to 4 MiB, half each way, every byte checked. */
TEST_F_TIMEOUT(msg, hundred_thousand_both_ways, 900)
{
	struct lchan_msg *srv = NULL, *cli = NULL;
	struct lchan_mr smr = { 0 }, dmr = { 0 };
	uint8_t *src, *dst;
	int ret;

	src = src_buf();
	dst = aligned_alloc(4096, MAX_MSG);
	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	ret = msg_pairs(self, NULL, &srv, &cli, 1);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
	/* Odd messages of the second half use caller-registered buffers. */
	ASSERT_EQ(0, lchan_mr_reg(&self->sctx, lchan_msg_chan(srv), src,
				  SRC_LEN, LCHAN_ACCESS_REMOTE_READ, &smr));
	ASSERT_EQ(0, lchan_mr_reg(&self->cctx, lchan_msg_chan(cli), dst,
				  MAX_MSG, LCHAN_ACCESS_LOCAL_WRITE, &dmr));
	stream(_metadata, cli, srv, src, lchan_t_count(50000), 1, NULL, NULL);
	stream(_metadata, srv, cli, src, lchan_t_count(50000), 2, &smr, &dmr);
	/* siw can drop a CQ event: how often lchan found one (lchan(7)). */
	TH_LOG("dropped CQ events recovered: %llu + %llu",
	       lchan_t_chan_attr(lchan_msg_chan(cli), "cq_recovered"),
	       lchan_t_chan_attr(lchan_msg_chan(srv), "cq_recovered"));
	lchan_mr_dereg(&self->sctx, &smr);
	lchan_mr_dereg(&self->cctx, &dmr);
	EXPECT_EQ(0, lchan_msg_close(cli));
	EXPECT_EQ(0, lchan_msg_close(srv));
	free(src);
	free(dst);
}

struct slow {
	struct lchan_msg *m;
	unsigned count, got;
	int ret;
};

static void *slow_recv(void *p)
{
	struct slow *s = p;
	uint32_t buf[256];

	for (s->got = 0; s->got < s->count; s->got++) {
		ssize_t n;

		usleep(2000);
		n = lchan_msg_recv(s->m, buf, sizeof(buf), 0, 30000);
		if (n != sizeof(buf) || buf[0] != s->got || buf[255] != ~s->got) {
			s->ret = n < 0 ? (int)n : -EIO;
			return NULL;
		}
	}
	return NULL;
}

/*
 * A receiver slower than the sender: blocking sends wait for credits,
 * non-blocking ones get -EAGAIN once the peer's buffers are all in use,
 * and nothing is lost or reordered.
 */
TEST_F_TIMEOUT(msg, slow_receiver, 300)
{
	/* Send buffers to spare (HELLO's may still be in flight): credits
	 * alone decide when the sender must wait.
	 */
	struct lchan_msg_opts o = { .nbufs = 8, .nsend = 16 };
	struct lchan_msg *srv = NULL, *cli = NULL;
	struct slow r = { 0 };
	uint32_t buf[256];
	unsigned i, eagain = 0;
	pthread_t thr;
	double t0;
	int ret;

	ret = msg_pairs(self, &o, &srv, &cli, 1);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));

	/* Nobody receives: exactly nbufs messages fit, then EAGAIN. */
	for (i = 0; i < 100; i++) {
		ssize_t n;
		double end = lchan_t_now() + 5;

		buf[0] = i;
		buf[255] = ~i;
		do {	/* the peer's HELLO may still be on its way */
			n = lchan_msg_send(cli, buf, sizeof(buf),
					   LCHAN_MSG_DONTWAIT);
		} while (i == 0 && n == -EAGAIN && lchan_t_now() < end);
		if (n == -EAGAIN)
			break;
		ASSERT_EQ(sizeof(buf), n);
	}
	EXPECT_EQ(o.nbufs, i);
	EXPECT_EQ(0, lchan_msg_poll_events(cli) & POLLOUT);

	/* Now a slow reader: blocking sends go on as it takes messages. */
	r.m = srv;
	r.count = 400;
	ASSERT_EQ(0, pthread_create(&thr, NULL, slow_recv, &r));
	t0 = lchan_t_now();
	for (; i < r.count; i++) {
		ssize_t n;

		buf[0] = i;
		buf[255] = ~i;
		/*
		 * Runs of 16 non-blocking sends: more than the 8 credits,
		 * so some must find none left.
		 */
		n = lchan_msg_send(cli, buf, sizeof(buf),
				   (i & 16) ? LCHAN_MSG_DONTWAIT : 0);
		if (n == -EAGAIN) {
			eagain++;
			i--;
			usleep(500);
			continue;
		}
		if (n != sizeof(buf)) {
			EXPECT_EQ(sizeof(buf), n) TH_LOG("send %u", i);
			break;
		}
	}
	pthread_join(thr, NULL);
	EXPECT_EQ(0, r.ret) TH_LOG("after %u: %s", r.got, strerror(-r.ret));
	EXPECT_EQ(r.count, r.got);
	EXPECT_LT(0, eagain);
	/* The sender cannot outrun 2 ms per message by much. */
	EXPECT_LT(0.5, lchan_t_now() - t0);
	EXPECT_EQ(0, lchan_msg_close(cli));
	EXPECT_EQ(0, lchan_msg_close(srv));
}

/* recv with nothing there: -EAGAIN at once, -ETIMEDOUT after the wait. */
TEST_F_TIMEOUT(msg, recv_timeout_and_nonblocking, 60)
{
	struct lchan_msg *srv = NULL, *cli = NULL;
	char buf[64];
	double t0;
	int ret;

	ret = msg_pairs(self, NULL, &srv, &cli, 1);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
	EXPECT_EQ(-EAGAIN, lchan_msg_recv(srv, buf, sizeof(buf),
					  LCHAN_MSG_DONTWAIT, -1));
	EXPECT_EQ(-EAGAIN, lchan_msg_recv(srv, buf, sizeof(buf), 0, 0));
	t0 = lchan_t_now();
	EXPECT_EQ(-ETIMEDOUT, lchan_msg_recv(srv, buf, sizeof(buf), 0, 300));
	EXPECT_LT(0.25, lchan_t_now() - t0);
	/* Too small a buffer: -EMSGSIZE, and the message stays. */
	EXPECT_EQ(10, lchan_msg_send(cli, "0123456789", 10, 0));
	EXPECT_EQ(-EMSGSIZE, lchan_msg_recv(srv, buf, 4, 0, 5000));
	EXPECT_EQ(10, lchan_msg_recv(srv, buf, sizeof(buf), 0, 5000));
	EXPECT_EQ(0, memcmp(buf, "0123456789", 10));
	EXPECT_EQ(-EMSGSIZE, lchan_msg_send(cli, buf, MAX_MSG + 1, 0));
	EXPECT_EQ(0, lchan_msg_close(cli));
	EXPECT_EQ(0, lchan_msg_close(srv));
}

/* Bytes i of the pattern of the iovec tests. */
static uint8_t iov_byte(size_t i)
{
	return (uint8_t)(i * 13 + 5);
}

struct iov_rx {
	struct lchan_msg *m;
	uint8_t *dst;
	size_t len;
	int ret;
};

/* Learn the next message's length, then take it scattered over two. */
static void *iov_receiver(void *p)
{
	struct iov_rx *r = p;
	size_t b = r->len / 2;
	struct iovec in[2] = {
		{ r->dst, b }, { r->dst + b, r->len + 1 - b },
	};
	ssize_t n;

	n = lchan_msg_peek_len(r->m, 0, 10000);
	if (n != (ssize_t)r->len) {
		r->ret = n < 0 ? (int)n : -EBADMSG;
		return NULL;
	}
	n = lchan_msg_recvv(r->m, in, 2, 0, 10000);
	if (n != (ssize_t)r->len)
		r->ret = n < 0 ? (int)n : -EBADMSG;
	return NULL;
}

/*
 * Send @len bytes of the pattern from three pieces, received into two by
 * a thread (a large message's send returns once the peer has taken it).
 */
static int iov_round(struct lchan_msg *tx, struct lchan_msg *rx, size_t len)
{
	uint8_t *src = malloc(len), *dst = malloc(len + 1);
	struct iov_rx r = { rx, dst, len, 0 };
	size_t a = len / 3, i;
	struct iovec out[3];
	pthread_t thr;
	ssize_t n;
	int ret = 0;

	if (!src || !dst || pthread_create(&thr, NULL, iov_receiver, &r)) {
		free(src);
		free(dst);
		return -ENOMEM;
	}
	for (i = 0; i < len; i++)
		src[i] = iov_byte(i);
	memset(dst, 0xee, len + 1);
	out[0] = (struct iovec){ src, a };
	out[1] = (struct iovec){ src + a, 0 };
	out[2] = (struct iovec){ src + a, len - a };
	n = lchan_msg_sendv(tx, out, 3, 0, 10000);
	if (n != (ssize_t)len)
		ret = n < 0 ? (int)n : -EIO;
	pthread_join(thr, NULL);
	if (!ret)
		ret = r.ret;
	if (!ret && (memcmp(src, dst, len) || dst[len] != 0xee))
		ret = -EBADMSG;
	free(src);
	free(dst);
	return ret;
}

/*
 * iovec send and receive, small (copied through the slots) and large
 * (READ through a bounce buffer), split differently on the two sides;
 * the length of a message that does not fit, learnt without taking it;
 * bad vectors refused.  The contexts are closed first: the channels keep
 * what they need.
 */
TEST_F_TIMEOUT(msg, iovec_and_peek_len, 120)
{
	struct lchan_msg *srv = NULL, *cli = NULL;
	struct iovec bad = { NULL, 1 };
	char buf[8];
	int ret;

	ret = msg_pairs(self, NULL, &srv, &cli, 1);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
	lchan_ctx_close(&self->sctx);
	lchan_ctx_close(&self->cctx);
	EXPECT_EQ(0, iov_round(cli, srv, 300));
	EXPECT_EQ(0, iov_round(srv, cli, 100000));
	EXPECT_EQ(0, iov_round(cli, srv, 1));

	EXPECT_EQ(20, lchan_msg_send(cli, "abcdefghijklmnopqrst", 20, 0));
	EXPECT_EQ(20, lchan_msg_peek_len(srv, 0, 5000));
	EXPECT_EQ(-EMSGSIZE, lchan_msg_recv(srv, buf, sizeof(buf), 0, 0));
	EXPECT_EQ(20, lchan_msg_peek_len(srv, LCHAN_MSG_DONTWAIT, -1));
	EXPECT_EQ(-EAGAIN, lchan_msg_peek_len(cli, LCHAN_MSG_DONTWAIT, -1));

	EXPECT_EQ(-EINVAL, lchan_msg_sendv(cli, &bad, -1, 0, 0));
	EXPECT_EQ(-EINVAL, lchan_msg_sendv(cli, NULL, 1, 0, 0));
	EXPECT_EQ(-EINVAL, lchan_msg_recvv(cli, &bad, 1 << 20, 0, 0));
	EXPECT_EQ(0, lchan_msg_close(cli));
	EXPECT_EQ(0, lchan_msg_close(srv));
}

/*
 * A send's timeout is the whole wait: for credits the peer does not give
 * back (the channel goes on), and for a large message the peer does not
 * take (the channel fails: whether the peer got it is unknown).
 */
TEST_F_TIMEOUT(msg, send_timeout_is_total, 120)
{
	struct lchan_msg_opts o = { .nbufs = 4 };
	struct lchan_msg *srv = NULL, *cli = NULL;
	static uint8_t big[65536];
	struct iovec iov = { big, 16 };
	unsigned sent = 0;
	char buf[16];
	ssize_t n;
	double t0;
	int ret;

	ret = msg_pairs(self, &o, &srv, &cli, 1);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
	/* The receiver takes nothing: the credits run out. */
	for (;;) {
		t0 = lchan_t_now();
		n = lchan_msg_sendv(cli, &iov, 1, 0, 300);
		if (n != 16)
			break;
		ASSERT_GT(100u, ++sent);
	}
	EXPECT_EQ(-ETIMEDOUT, n);
	EXPECT_LT(0.25, lchan_t_now() - t0);
	EXPECT_GT(3.0, lchan_t_now() - t0);
	EXPECT_EQ(-EAGAIN, lchan_msg_sendv(cli, &iov, 1, 0, 0));
	/* Taken: the credits come back, the channel is fine. */
	while (sent) {
		ASSERT_EQ(16, lchan_msg_recv(srv, buf, sizeof(buf), 0, 5000));
		sent--;
	}
	EXPECT_EQ(16, lchan_msg_sendv(cli, &iov, 1, 0, 5000));
	EXPECT_EQ(16, lchan_msg_recv(srv, buf, sizeof(buf), 0, 5000));

	/* A large message nobody takes. */
	iov.iov_len = sizeof(big);
	t0 = lchan_t_now();
	EXPECT_EQ(-ETIMEDOUT, lchan_msg_sendv(cli, &iov, 1, 0, 300));
	EXPECT_LT(0.25, lchan_t_now() - t0);
	EXPECT_EQ(-ETIMEDOUT, lchan_msg_send(cli, big, 16, 0));
	EXPECT_EQ(0, lchan_msg_close(cli));
	EXPECT_EQ(0, lchan_msg_close(srv));
}

static void on_signal(int sig)
{
	(void)sig;
}

struct pester {
	pthread_t target;
	volatile int stop;
};

/* Interrupt the target thread's system calls every 50 ms. */
static void *pester(void *p)
{
	struct pester *ps = p;

	while (!ps->stop) {
		usleep(50000);
		pthread_kill(ps->target, SIGUSR1);
	}
	return NULL;
}

/*
 * Failed calls leave their handles empty, and closing an empty handle
 * does nothing; a wait's timeout is its total, however often a signal
 * interrupts it; the listener's accept waits as long as asked.
 */
TEST_F_TIMEOUT(msg, failures_leave_handles_empty_and_timeouts_are_total, 120)
{
	struct lchan_msg_opts bad_opts = { .flags = 1u << 31 };
	struct sigaction sa = { .sa_handler = on_signal };
	struct lchan_msg *m = (struct lchan_msg *)&m, *srv, *cli;
	struct lchan_msg_listener *l = (void *)&l;
	struct lchan_chan chan;
	struct lchan_listener lst;
	struct lchan_mr mr;
	struct pester ps = { pthread_self(), 0 };
	struct lchan_cqe *cqe;
	pthread_t thr;
	char port[16];
	double t0;

	snprintf(port, sizeof(port), "%u", lchan_t_port());
	memset(&chan, 0x5a, sizeof(chan));
	EXPECT_EQ(-ECONNREFUSED, lchan_connect(&self->cctx, self->d.addr, port,
					       NULL, &chan));
	EXPECT_EQ(-1, chan.fd);
	EXPECT_EQ(NULL, chan.map);
	EXPECT_EQ(0, lchan_chan_close(&chan));
	memset(&chan, 0x5a, sizeof(chan));
	EXPECT_EQ(-EDESTADDRREQ, lchan_connect(&self->cctx, "", port, NULL,
					       &chan));
	EXPECT_EQ(-1, chan.fd);
	memset(&lst, 0x5a, sizeof(lst));
	EXPECT_GT(0, lchan_listen(&self->sctx, "no.such.host.invalid", port, 1,
				  0, &lst));
	EXPECT_EQ(-1, lst.fd);
	EXPECT_EQ(0, lchan_listener_close(&lst));
	memset(&mr, 0x5a, sizeof(mr));
	EXPECT_GT(0, lchan_mr_reg(&self->cctx, &chan, NULL, 4096,
				  LCHAN_ACCESS_LOCAL_WRITE, &mr));
	EXPECT_EQ(0u, mr.handle);
	EXPECT_EQ(0, lchan_mr_dereg(&self->cctx, &mr));

	EXPECT_EQ(-ECONNREFUSED, lchan_msg_connect(&self->cctx, self->d.addr,
						   port, NULL, &m));
	EXPECT_EQ(NULL, m);
	EXPECT_EQ(0, lchan_msg_close(m));
	EXPECT_EQ(-EINVAL, lchan_msg_listen(&self->sctx, self->d.addr, port, 1,
					    &bad_opts, &l));
	EXPECT_EQ(NULL, l);
	EXPECT_EQ(0, lchan_msg_listener_close(l));

	ASSERT_EQ(0, lchan_msg_listen(&self->sctx, self->d.addr, port, 1, NULL,
				      &l));
	EXPECT_LE(0, lchan_msg_listener_fd(l));
	EXPECT_EQ((unsigned)atoi(port), lchan_msg_listener_port(l));
	m = (struct lchan_msg *)&m;
	EXPECT_EQ(-EAGAIN, lchan_msg_accept(l, 0, &m));
	EXPECT_EQ(NULL, m);

	/* Signals every 50 ms do not stretch a 300 ms wait. */
	ASSERT_EQ(0, msg_pairs(self, NULL, &srv, &cli, 1));
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, pthread_create(&thr, NULL, pester, &ps));
	t0 = lchan_t_now();
	EXPECT_EQ(-ETIMEDOUT, lchan_msg_accept(l, 300, &m));
	EXPECT_GT(1.0, lchan_t_now() - t0);
	EXPECT_LT(0.25, lchan_t_now() - t0);
	/* The layer takes what came so far: the channel is quiet then. */
	lchan_msg_progress(cli);
	t0 = lchan_t_now();
	EXPECT_EQ(-ETIMEDOUT, lchan_wait_cqe(lchan_msg_chan(cli), &cqe, 300));
	EXPECT_GT(1.0, lchan_t_now() - t0);
	t0 = lchan_t_now();
	EXPECT_EQ(-ETIMEDOUT, lchan_msg_recv(cli, port, sizeof(port), 0, 300));
	EXPECT_GT(1.0, lchan_t_now() - t0);
	ps.stop = 1;
	pthread_join(thr, NULL);
	signal(SIGUSR1, SIG_DFL);
	EXPECT_EQ(0, lchan_msg_close(cli));
	EXPECT_EQ(0, lchan_msg_close(srv));
	EXPECT_EQ(0, lchan_msg_listener_close(l));
}

/* Voluntary context switches of the calling thread so far. */
static long thread_sleeps(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? -1 : ru.ru_nvcsw;
}

/* A receiver thread that busy-polls for n messages of size(i) bytes. */
struct busy_rx {
	struct lchan_msg *m;
	const struct lchan_mr *mr;	/* set: lchan_msg_recv_mr into it */
	uint8_t *buf;
	const uint8_t *src;
	size_t (*size)(unsigned i);
	unsigned n;
	long sleeps;			/* voluntary context switches */
	int ret;
};

/* Size of busy-poll message i: small ones and some going by READ. */
static size_t busy_size(unsigned i)
{
	return i % 4 == 3 ? 65536 + i : 16 + i;
}

static void *busy_recv(void *p)
{
	struct busy_rx *r = p;
	long t0 = thread_sleeps();
	unsigned i;

	for (i = 0; i < r->n && !r->ret; i++) {
		ssize_t n = r->mr ?
			lchan_msg_recv_mr(r->m, r->mr, r->buf, MAX_MSG,
					  LCHAN_MSG_BUSY_POLL, 20000) :
			lchan_msg_recv(r->m, r->buf, MAX_MSG,
				       LCHAN_MSG_BUSY_POLL, 20000);

		if (n != (ssize_t)r->size(i) ||
		    memcmp(r->buf, r->src + i, n))
			r->ret = n < 0 ? (int)n : -EBADMSG;
	}
	r->sleeps = thread_sleeps() - t0;
	return NULL;
}

/*
 * LCHAN_MSG_BUSY_POLL with a kernel poller on both sides: messages of both
 * kinds flow with no ENTER (doorbell) once the pollers run, where the pool
 * has a CPU of its own (with the two busy threads on its CPU it gives the
 * CPU up and the doorbell rings: poller.*.busy_cpu_given_up_and_taken_back).
 * Unknown flags are refused.
 */
TEST_F_TIMEOUT(msg, busy_poll_with_poller_needs_no_doorbell, 180)
{
	struct lchan_msg *srv = NULL, *cli = NULL;
	struct busy_rx r = { 0 };
	unsigned long long enters[2];
	pthread_t thr;
	unsigned i;
	int ret;

	LCHAN_T_POOL_OWN_CPU(self->pool_cpus);
	/* Long idle time: the pollers must not sleep during the exchange. */
	ASSERT_EQ(0, lchan_ctx_setup_poller(&self->cctx, 5000, -1, NULL));
	ASSERT_EQ(0, lchan_ctx_setup_poller(&self->sctx, 5000, -1,
					    &self->cctx));
	ret = msg_pairs(self, NULL, &srv, &cli, 1);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
	EXPECT_EQ(-EINVAL, lchan_msg_send(cli, "x", 1, 1U << 7));
	EXPECT_EQ(-EINVAL, lchan_msg_recv(srv, r.buf, 1, 1U << 7, 0));

	r.m = srv;
	r.n = 64;
	r.size = busy_size;
	r.src = src_buf();
	r.buf = malloc(MAX_MSG);
	ASSERT_NE(NULL, r.src);
	ASSERT_NE(NULL, r.buf);
	/* Warm-up: both pollers have seen traffic and are awake. */
	ASSERT_EQ(4, lchan_msg_send(cli, r.src, 4, LCHAN_MSG_BUSY_POLL));
	ASSERT_EQ(4, lchan_msg_recv(srv, r.buf, MAX_MSG, LCHAN_MSG_BUSY_POLL,
				    20000));
	enters[0] = lchan_t_chan_attr(lchan_msg_chan(cli), "enters");
	enters[1] = lchan_t_chan_attr(lchan_msg_chan(srv), "enters");
	ASSERT_EQ(0, pthread_create(&thr, NULL, busy_recv, &r));
	for (i = 0; i < r.n; i++) {
		ssize_t n = lchan_msg_send(cli, r.src + i, busy_size(i),
					   LCHAN_MSG_BUSY_POLL);

		ASSERT_EQ((ssize_t)busy_size(i), n) TH_LOG("message %u", i);
	}
	pthread_join(thr, NULL);
	EXPECT_EQ(0, r.ret) TH_LOG("receiver: %s", strerror(-r.ret));
	EXPECT_EQ(enters[0],
		  lchan_t_chan_attr(lchan_msg_chan(cli), "enters"));
	EXPECT_EQ(enters[1],
		  lchan_t_chan_attr(lchan_msg_chan(srv), "enters"));
	EXPECT_EQ(0, lchan_msg_close(cli));
	EXPECT_EQ(0, lchan_msg_close(srv));
	free((void *)r.src);
	free(r.buf);
}

/* Size of every message of the large-transfer test. */
static size_t max_size(unsigned i)
{
	(void)i;
	return MAX_MSG;
}

/*
 * LCHAN_MSG_BUSY_POLL spins for messages, but sleeps through the bytes of
 * a large one (after 50 us): each side of a 4 MiB transfer sleeps at least
 * once per message.  Buffers are registered up front and touched, so
 * nothing else in the calls sleeps.
 */
TEST_F_TIMEOUT(msg, busy_poll_sleeps_through_large_transfers, 180)
{
	struct lchan_msg *srv = NULL, *cli = NULL;
	struct lchan_mr smr, rmr;
	struct busy_rx r = { 0 };
	pthread_t thr;
	long sleeps;
	unsigned i;
	int ret;

	ret = msg_pairs(self, NULL, &srv, &cli, 1);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
	r.m = srv;
	r.n = 4;
	r.size = max_size;
	r.src = src_buf();
	r.buf = aligned_alloc(4096, MAX_MSG);
	ASSERT_NE(NULL, r.src);
	ASSERT_NE(NULL, r.buf);
	memset(r.buf, 0, MAX_MSG);
	ASSERT_EQ(0, lchan_mr_reg(&self->cctx, lchan_msg_chan(cli),
				  (void *)r.src, SRC_LEN,
				  LCHAN_ACCESS_REMOTE_READ, &smr));
	ASSERT_EQ(0, lchan_mr_reg(&self->sctx, lchan_msg_chan(srv), r.buf,
				  MAX_MSG, LCHAN_ACCESS_LOCAL_WRITE, &rmr));
	r.mr = &rmr;
	ASSERT_EQ(0, pthread_create(&thr, NULL, busy_recv, &r));
	sleeps = thread_sleeps();
	for (i = 0; i < r.n; i++)
		ASSERT_EQ(MAX_MSG, lchan_msg_send_mr(cli, &smr, r.src + i,
						     MAX_MSG,
						     LCHAN_MSG_BUSY_POLL))
			TH_LOG("message %u", i);
	sleeps = thread_sleeps() - sleeps;
	pthread_join(thr, NULL);
	EXPECT_EQ(0, r.ret) TH_LOG("receiver: %s", strerror(-r.ret));
	TH_LOG("%u messages of %u bytes: sender slept %ld times, receiver %ld",
	       r.n, MAX_MSG, sleeps, r.sleeps);
	EXPECT_LE((long)r.n, sleeps);
	EXPECT_LE((long)r.n, r.sleeps);
	EXPECT_EQ(0, lchan_mr_dereg(&self->cctx, &smr));
	EXPECT_EQ(0, lchan_mr_dereg(&self->sctx, &rmr));
	EXPECT_EQ(0, lchan_msg_close(cli));
	EXPECT_EQ(0, lchan_msg_close(srv));
	free((void *)r.src);
	free(r.buf);
}

struct echo {
	struct lchan_msg *m;
	unsigned n;
	int ret;
};

static void *echo_back(void *p)
{
	struct echo *e = p;
	char buf[64];
	unsigned i;

	for (i = 0; i < e->n && !e->ret; i++) {
		ssize_t n = lchan_msg_recv(e->m, buf, sizeof(buf), 0, 20000);

		if (n < 0)
			e->ret = (int)n;
		else if (lchan_msg_send(e->m, buf, n, 0) != n)
			e->ret = -EIO;
	}
	return NULL;
}

/*
 * Doorbell mode: a message taken and answered is one ENTER on each side.
 * The receive reposted for it goes with the answer's submit, not in an
 * ENTER of its own.  And about one CQE: the answer's receive.  The SENDs
 * signal one in nsend / 2 (16 by default), so a receiver asleep in a
 * ping-pong is not woken by its own send's completion.
 */
TEST_F_TIMEOUT(msg, one_enter_one_cqe_per_answered_message, 180)
{
	struct lchan_msg *srv = NULL, *cli = NULL;
	unsigned long long enters[2];
	unsigned cqes;
	struct echo e = { 0 };
	const unsigned n = 200;
	pthread_t thr;
	char buf[64];
	unsigned i;
	int ret;

	ret = msg_pairs(self, NULL, &srv, &cli, 1);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
	e.m = srv;
	e.n = n + 1;
	ASSERT_EQ(0, pthread_create(&thr, NULL, echo_back, &e));
	/* One round trip first: both HELLOs are in. */
	ASSERT_EQ(1, lchan_msg_send(cli, "w", 1, 0));
	ASSERT_EQ(1, lchan_msg_recv(cli, buf, sizeof(buf), 0, 20000));
	enters[0] = lchan_t_chan_attr(lchan_msg_chan(cli), "enters");
	enters[1] = lchan_t_chan_attr(lchan_msg_chan(srv), "enters");
	cqes = lchan_msg_chan(cli)->cq.head;
	for (i = 0; i < n; i++) {
		memset(buf, (int)i, 48);
		ASSERT_EQ(48, lchan_msg_send(cli, buf, 48, 0));
		memset(buf, 0, sizeof(buf));
		ASSERT_EQ(48, lchan_msg_recv(cli, buf, sizeof(buf), 0, 20000));
		ASSERT_EQ((char)i, buf[47]) TH_LOG("round trip %u", i);
	}
	cqes = lchan_msg_chan(cli)->cq.head - cqes;
	pthread_join(thr, NULL);
	EXPECT_EQ(0, e.ret) TH_LOG("echo: %s", strerror(-e.ret));
	enters[0] = lchan_t_chan_attr(lchan_msg_chan(cli), "enters") -
		    enters[0];
	enters[1] = lchan_t_chan_attr(lchan_msg_chan(srv), "enters") -
		    enters[1];
	TH_LOG("%u round trips: ENTERs client %llu, server %llu; client CQEs %u",
	       n, enters[0], enters[1], cqes);
	/* n answers, n / 16 signaled SENDs, a CREDIT or two. */
	EXPECT_LE(cqes, n + n / 16 + 4);
	/* The server's count may include the warm-up's answer. */
	EXPECT_LE(enters[0], n);
	EXPECT_LE(enters[1], n + 1);
	EXPECT_EQ(0, lchan_msg_close(cli));
	EXPECT_EQ(0, lchan_msg_close(srv));
}

struct direct_echo {
	struct lchan_msg *m;
	unsigned n, counted;	/* all, and the first ones, counted */
	int ret;
	char why[96];
};

/*
 * Answers each message whole; each answer but the last goes with the next
 * receive's wait (LCHAN_MSG_MORE).  The counted ones wait in one ENTER
 * each; after them odd ones busy poll.
 */
static void *direct_echo_back(void *p)
{
	struct direct_echo *e = p;
	uint8_t *buf = malloc(MAX_MSG);
	unsigned i;

	if (!buf) {
		e->ret = -ENOMEM;
		return NULL;
	}
	for (i = 0; i < e->n && !e->ret; i++) {
		unsigned flags = i >= e->counted && (i & 1) ?
				 LCHAN_MSG_BUSY_POLL : 0;
		ssize_t n = lchan_msg_recv(e->m, buf, MAX_MSG, flags, 20000);

		if (n < 0) {
			e->ret = (int)n;
			snprintf(e->why, sizeof(e->why), "recv %u: %s", i,
				 strerror((int)-n));
		} else if (lchan_msg_send(e->m, buf, n, flags | (i + 1 < e->n ?
						LCHAN_MSG_MORE : 0)) != n) {
			e->ret = -EIO;
			snprintf(e->why, sizeof(e->why), "send %u", i);
		}
	}
	free(buf);
	return NULL;
}

/*
 * LCHAN_MSG_OPT_DIRECT: every message byte-checked both ways, READ-sized
 * ones among them, busy and not; a DONTWAIT receive finds what arrived
 * although nothing else polls the device; a send with LCHAN_MSG_MORE is
 * posted by the next call, and a receive's wait posts it in the ENTER
 * that waits: one ENTER per small round trip and side (and one per
 * signaled send).  Busy polling (its ENTERs are not counted) after that.
 * iWARP refuses the option.
 */
TEST_F_TIMEOUT(msg, direct_polling_checked_one_enter_per_round_trip, 300)
{
	const struct lchan_msg_opts opts = { .flags = LCHAN_MSG_OPT_DIRECT };
	struct lchan_msg *srv = NULL, *cli = NULL;
	const unsigned n = lchan_t_count(400), small = 200;
	struct direct_echo e = { 0 };
	unsigned long long enters[2];
	uint8_t *src, *buf;
	pthread_t thr;
	double t0;
	unsigned i;
	ssize_t got;
	int ret;

	if (!strcmp(variant->kind, "siw")) {
		struct lchan_msg_listener *lst;
		char port[16];

		/* Refused before any request leaves: nothing to accept. */
		snprintf(port, sizeof(port), "%u", lchan_t_port());
		ASSERT_EQ(0, lchan_msg_listen(&self->sctx, self->d.addr, port,
					      1, NULL, &lst));
		ret = lchan_msg_connect(&self->cctx, self->d.addr, port, &opts,
					&cli);
		EXPECT_EQ(-EOPNOTSUPP, ret) TH_LOG("iWARP: %s", strerror(-ret));
		EXPECT_EQ(NULL, cli);
		EXPECT_EQ(0, lchan_msg_listener_close(lst));
		return;
	}
	ret = msg_pairs(self, &opts, &srv, &cli, 1);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
	EXPECT_TRUE(lchan_msg_chan(cli)->info.chan_flags & LCHAN_CHAN_DIRECT);
	EXPECT_TRUE(lchan_msg_chan(srv)->info.chan_flags & LCHAN_CHAN_DIRECT);
	src = src_buf();
	buf = malloc(MAX_MSG);
	ASSERT_TRUE(src && buf);

	/* Nothing but the DONTWAIT calls themselves polls for the answer. */
	ASSERT_EQ(3, lchan_msg_send(cli, "dw", 3, 0));
	ASSERT_EQ(3, lchan_msg_recv(srv, buf, MAX_MSG, 0, 20000));
	ASSERT_EQ(3, lchan_msg_send(srv, "DW", 3, 0));
	t0 = lchan_t_now();
	do {
		got = lchan_msg_recv(cli, buf, MAX_MSG, LCHAN_MSG_DONTWAIT, 0);
	} while (got == -EAGAIN && lchan_t_now() - t0 < 10);
	ASSERT_EQ(3, got) TH_LOG("DONTWAIT receive: %s",
				 got < 0 ? strerror((int)-got) : "short");
	EXPECT_EQ(0, memcmp(buf, "DW", 3));
	/* A deferred send goes with the next call, whatever it is. */
	ASSERT_EQ(3, lchan_msg_send(cli, "mo", 3, LCHAN_MSG_MORE));
	lchan_msg_progress(cli);
	ASSERT_EQ(3, lchan_msg_recv(srv, buf, MAX_MSG, 0, 10000));
	EXPECT_EQ(0, memcmp(buf, "mo", 3));
	EXPECT_EQ(-EINVAL, lchan_msg_recv(cli, buf, MAX_MSG, LCHAN_MSG_MORE, 0));

	e.m = srv;
	e.n = small + n;
	e.counted = small;
	ASSERT_EQ(0, pthread_create(&thr, NULL, direct_echo_back, &e));
	enters[0] = lchan_t_chan_attr(lchan_msg_chan(cli), "enters");
	enters[1] = lchan_t_chan_attr(lchan_msg_chan(srv), "enters");
	for (i = 0; i < small; i++) {
		memcpy(buf, src + i, 48);
		ASSERT_EQ(48, lchan_msg_send(cli, buf, 48, LCHAN_MSG_MORE));
		memset(buf, 0, 48);
		got = lchan_msg_recv(cli, buf, MAX_MSG, 0, 20000);
		ASSERT_EQ(48, got) TH_LOG("round trip %u: %zd", i, got);
		ASSERT_EQ(0, memcmp(buf, src + i, 48)) TH_LOG("round trip %u", i);
	}
	enters[0] = lchan_t_chan_attr(lchan_msg_chan(cli), "enters") -
		    enters[0];
	enters[1] = lchan_t_chan_attr(lchan_msg_chan(srv), "enters") -
		    enters[1];
	for (i = 0; i < n; i++) {
		size_t len = msg_size(i, 7), off = msg_off(i);

		unsigned flags = i & 2 ? LCHAN_MSG_BUSY_POLL : 0;

		ASSERT_EQ((ssize_t)len, lchan_msg_send(cli, src + off, len,
						       flags));
		got = lchan_msg_recv(cli, buf, MAX_MSG, flags, 20000);
		ASSERT_EQ((ssize_t)len, got) TH_LOG("message %u: %zd", i, got);
		ASSERT_EQ(0, memcmp(buf, src + off, len))
			TH_LOG("message %u of %zu bytes differs", i, len);
	}
	pthread_join(thr, NULL);
	EXPECT_EQ(0, e.ret) TH_LOG("echo: %s", e.why);
	TH_LOG("%u small round trips: ENTERs client %llu, server %llu",
	       small, enters[0], enters[1]);
	/*
	 * One per round trip, and one per signaled send (one in 16), whose
	 * completion ends a wait before the answer; the server's count may
	 * include the warm-up's answer.
	 */
	EXPECT_LE(enters[0], small + small / 16 + 1);
	EXPECT_LE(enters[1], small + small / 16 + 2);
	free(buf);
	free(src);
	EXPECT_EQ(0, lchan_msg_close(cli));
	EXPECT_EQ(0, lchan_msg_close(srv));
}

/* The sender closes right after its last send; the reader gets all, then 0. */
TEST_F_TIMEOUT(msg, close_gives_eof_after_data, 120)
{
	struct lchan_msg *srv = NULL, *cli = NULL;
	uint8_t *src, *buf;
	unsigned i;
	int ret;

	src = src_buf();
	buf = malloc(MAX_MSG);
	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, buf);
	ret = msg_pairs(self, NULL, &srv, &cli, 1);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
	for (i = 0; i < 20; i++)
		ASSERT_EQ(100 + i, lchan_msg_send(cli, src + i, 100 + i, 0));
	ASSERT_EQ(0, lchan_msg_close(cli));
	usleep(200000);
	for (i = 0; i < 20; i++) {
		ssize_t n = lchan_msg_recv(srv, buf, MAX_MSG, 0, 5000);

		ASSERT_EQ(100 + i, n) TH_LOG("message %u", i);
		ASSERT_EQ(0, memcmp(buf, src + i, n));
	}
	EXPECT_EQ(0, lchan_msg_recv(srv, buf, MAX_MSG, 0, 5000));
	EXPECT_EQ(0, lchan_msg_recv(srv, buf, MAX_MSG, LCHAN_MSG_DONTWAIT, 0));
	EXPECT_NE(0, lchan_msg_poll_events(srv) & POLLHUP);
	EXPECT_EQ(-EPIPE, lchan_msg_send(srv, buf, 1, 0));
	EXPECT_EQ(0, lchan_msg_close(srv));
	free(src);
	free(buf);
}

#define NCHAN	8
#define PER_CHAN 2000

struct ep_rx {
	struct lchan_msg **m;
	unsigned total;		/* messages received; read by the watchdog */
	unsigned got[NCHAN];
	bool eof[NCHAN];
	int ret;
	char why[96];
};

/* One thread, one epoll set, NCHAN channels; runs until every one ends. */
static void *epoll_recv(void *p)
{
	struct ep_rx *x = p;
	struct epoll_event ev, evs[NCHAN];
	unsigned i, open = NCHAN;
	int ep = epoll_create1(EPOLL_CLOEXEC);

	for (i = 0; i < NCHAN; i++) {
		ev.events = EPOLLIN;
		ev.data.u32 = i;
		epoll_ctl(ep, EPOLL_CTL_ADD, lchan_msg_fd(x->m[i]), &ev);
	}
	while (open && !x->ret) {
		int n, busy = 0;

		/* Messages already taken from the ring do not wake epoll. */
		for (i = 0; i < NCHAN; i++)
			if (!x->eof[i] && (lchan_msg_progress(x->m[i]) & POLLIN))
				busy = 1;
		n = epoll_wait(ep, evs, NCHAN, busy ? 0 : 10000);
		if (n < 0 || (!n && !busy)) {
			x->ret = n < 0 ? -errno : -ETIMEDOUT;
			snprintf(x->why, sizeof(x->why), "epoll_wait");
			break;
		}
		for (i = 0; i < NCHAN; i++) {
			uint32_t buf[64];
			ssize_t r;

			while (!x->eof[i]) {
				r = lchan_msg_recv(x->m[i], buf, sizeof(buf),
						   LCHAN_MSG_DONTWAIT, 0);
				if (r == -EAGAIN)
					break;
				if (r == 0) {
					x->eof[i] = true;
					open--;
					break;
				}
				if (r != (ssize_t)(8 + (x->got[i] % 61) * 4) ||
				    buf[0] != x->got[i] || buf[r / 4 - 1] != i) {
					x->ret = r < 0 ? (int)r : -EIO;
					snprintf(x->why, sizeof(x->why),
						 "chan %u msg %u: %zd", i,
						 x->got[i], r);
					break;
				}
				x->got[i]++;
				__atomic_fetch_add(&x->total, 1,
						   __ATOMIC_RELAXED);
			}
		}
	}
	close(ep);
	return NULL;
}

struct ep_tx {
	struct lchan_msg **cli, **srv;
	const struct ep_rx *x;
	unsigned sent;		/* read by the watchdog */
	int ret;
	char why[64];
};

/* Round robin; a full channel makes the writer wait on that one. */
static void *epoll_send(void *p)
{
	struct ep_tx *t = p;
	unsigned i, j;

	for (j = 0; j < PER_CHAN && !t->x->ret; j++) {
		for (i = 0; i < NCHAN; i++) {
			uint32_t buf[64];
			unsigned words = 2 + j % 61;
			ssize_t n;

			buf[0] = j;
			buf[words - 1] = i;
			n = lchan_msg_send(t->cli[i], buf, words * 4, 0);
			if (n != words * 4) {
				t->ret = n < 0 ? (int)n : -EIO;
				snprintf(t->why, sizeof(t->why),
					 "chan %u msg %u: %zd", i, j, n);
				return NULL;
			}
			__atomic_fetch_add(&t->sent, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

static void dump_epoll_pairs(void *arg)
{
	struct ep_tx *t = arg;
	unsigned i;

	for (i = 0; i < NCHAN; i++) {
		char who[32];

		snprintf(who, sizeof(who), "sender %u", i);
		dump_msg(who, t->cli[i]);
		snprintf(who, sizeof(who), "receiver %u", i);
		dump_msg(who, t->srv[i]);
	}
	lchan_t_dump_tcp();
}

/* NCHAN message channels in one process, the reader on epoll. */
TEST_F_TIMEOUT(msg, many_channels_epoll, 300)
{
	struct lchan_msg *srv[NCHAN] = { 0 }, *cli[NCHAN] = { 0 };
	struct lchan_msg_opts o = { .nbufs = 16, .nsend = 16 };
	struct ep_rx x = { .m = srv };
	struct ep_tx t = { .cli = cli, .srv = srv, .x = &x };
	unsigned *prog[] = { &t.sent, &x.total };
	pthread_t thr[2];
	unsigned i;
	int ret;

	ret = msg_pairs(self, &o, srv, cli, NCHAN);
	ASSERT_EQ(0, ret) TH_LOG("pairs: %s", strerror(-ret));
	ASSERT_EQ(0, pthread_create(&thr[0], NULL, epoll_recv, &x));
	ASSERT_EQ(0, pthread_create(&thr[1], NULL, epoll_send, &t));
	/* The reader ends at the closes, so watch the sender alone first. */
	ASSERT_EQ(0, lchan_t_join_watch(&thr[1], 1, prog, 2, dump_epoll_pairs,
					&t))
		TH_LOG("stalled after %u sent, %u received", t.sent, x.total);
	EXPECT_EQ(0, t.ret) TH_LOG("%s: %s", t.why, strerror(-t.ret));
	for (i = 0; i < NCHAN; i++)
		EXPECT_EQ(0, lchan_msg_close(cli[i]));
	ASSERT_EQ(0, lchan_t_join_watch(thr, 1, prog, 2, dump_epoll_pairs, &t))
		TH_LOG("stalled after %u sent, %u received", t.sent, x.total);
	EXPECT_EQ(0, x.ret) TH_LOG("%s: %s", x.why, strerror(-x.ret));
	for (i = 0; i < NCHAN; i++) {
		EXPECT_EQ(PER_CHAN, x.got[i]) TH_LOG("chan %u", i);
		EXPECT_TRUE(x.eof[i]);
		lchan_msg_close(srv[i]);
	}
}

TEST_HARNESS_MAIN
