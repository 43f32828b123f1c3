// SPDX-License-Identifier: GPL-2.0
/*
 * Channels set up over a link (the sources' Documentation/link.md), in
 * one machine: a connect to the device's own address goes over the
 * module's active link to its own passive one.
 *
 * Over rxe: the channel carries SENDs, RDMA WRITEs and READs, every byte
 * checked; sysfs says setup "link" on both ends; LCHAN_CONNECT_CM_ONLY
 * gives a cm channel; a missing listener and a full backlog fail as
 * through rdma_cm; establish, deferred or not, and accept behave as for
 * a cm channel; closing either end shows at the other within the
 * keepalive's bound; a killed process leaves no channel and no extra
 * link; 200 connects one after the other, timed beside cm's.  Over siw
 * no link can serve: the channel goes through rdma_cm, and
 * LCHAN_CONNECT_LINK_ONLY fails with EOPNOTSUPP.
 *
 * Needs root (the module parameters): each test turns links on and off
 * again at its end, which ends every link.
 */
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define LINKS "/sys/kernel/lchan/links"
#define CHANS "/sys/kernel/lchan/channels"
#define SLOT 4096
#define KEEPALIVE_MS 200

FIXTURE(lchan) {
	struct lchan_t_dev d;
	char links[8];
	int on;
	bool rxe;
};

LCHAN_T_VARIANTS(lchan);

FIXTURE_SETUP(lchan)
{
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	if (!lchan_t_module_loaded())
		LCHAN_T_SETUP_SKIP("lchan is not loaded");
	if (lchan_t_get_param("links", self->links, sizeof(self->links)))
		LCHAN_T_SETUP_SKIP("this lchan has no links");
	if (access(CHANS, F_OK))
		LCHAN_T_SETUP_SKIP("no %s", CHANS);
	if (geteuid())
		LCHAN_T_SETUP_SKIP("writing module parameters needs root");
	lchan_t_raise_memlock();
	self->rxe = !strcmp(variant->kind, "rxe");
	ASSERT_EQ(0, lchan_t_set_param("links", "1"))
		TH_LOG("links=1: %s", strerror(errno));
	self->on = 1;
}

FIXTURE_TEARDOWN(lchan)
{
	if (!self->on)
		return;
	lchan_t_set_param("links", "0");
	if (!strcmp(self->links, "Y"))
		lchan_t_set_param("links", "1");
}

/* A channel's setup attribute: "link", "cm", or "?" when unreadable. */
static const char *chan_setup(const struct lchan_chan *chan, char *buf,
			      size_t len)
{
	char path[128];

	snprintf(path, sizeof(path), CHANS "/%u/setup", chan->info.id);
	if (lchan_t_read_sysfs(path, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

/* The sum of every link's @name counter. */
static unsigned long long links_sum(const char *name)
{
	unsigned long long sum = 0;
	char path[320], buf[64];
	struct dirent *de;
	DIR *d;

	d = opendir(LINKS);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), LINKS "/%s/%s", de->d_name, name);
		if (!lchan_t_read_sysfs(path, buf, sizeof(buf)))
			sum += strtoull(buf, NULL, 10);
	}
	closedir(d);
	return sum;
}

/* What one end of a pair asks for. */
struct end {
	unsigned flags;			/* lchan_opts.flags */
	unsigned keepalive_ms;
	bool defer;			/* LCHAN_DEFER_ESTABLISH */
};

struct acceptor {
	struct lchan_listener *lst;
	struct lchan_t_ep *ep;
	struct lchan_opts opts;
	int cancel_fd;			/* eventfd: the connect failed */
	int ret;
};

static void end_opts(const struct end *e, struct lchan_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->flags = e->flags | (e->defer ? LCHAN_DEFER_ESTABLISH : 0);
	if (e->keepalive_ms) {
		o->flags |= LCHAN_OPTS_KEEPALIVE;
		o->keepalive_ms = e->keepalive_ms;
	}
}

/* Register the end's buffer and post its receives on @chan. */
static int ep_ready(struct lchan_t_ep *ep, struct lchan_ctx *ctx)
{
	return lchan_t_ep_prepare(ctx, &ep->chan, ep);
}

static void *accept_thread(void *p)
{
	struct acceptor *a = p;
	struct pollfd pfd[2] = {
		{ .fd = a->lst->fd, .events = POLLIN },
		{ .fd = a->cancel_fd, .events = POLLIN },
	};
	bool defer = a->opts.flags & LCHAN_DEFER_ESTABLISH;

	do {
		a->ret = poll(pfd, 2, 20000) > 0 ? 0 : -ETIMEDOUT;
		if (!a->ret && pfd[1].revents)
			a->ret = -ECANCELED;
		if (!a->ret)
			a->ret = lchan_accept(a->lst, &a->opts, &a->ep->chan);
	} while (a->ret == -EAGAIN || a->ret == -EINTR);
	if (a->ret)
		return NULL;
	a->ret = ep_ready(a->ep, &a->ep->ctx);
	if (!a->ret && defer)
		a->ret = lchan_establish(&a->ep->chan, 10000);
	if (a->ret)
		lchan_chan_close(&a->ep->chan);
	return NULL;
}

/*
 * Connect @cli to a new listener of @srv on @host and accept it, with
 * what @ce and @ae ask; both contexts are open already.  0 with both
 * channels connected and their receives posted, else the connecting
 * side's error (the accepting side's when the connect succeeded), and
 * no channel is left open.
 */
static int pair(const char *host, struct lchan_t_ep *srv, struct lchan_t_ep *cli,
		const struct end *ce, const struct end *ae)
{
	struct acceptor a = { .ep = srv };
	struct lchan_listener lst;
	struct lchan_opts copts;
	uint64_t one = 1;
	char port[16];
	pthread_t thr;
	int ret;

	ret = lchan_listen(&srv->ctx, host, "0", 4, LCHAN_FD_NONBLOCK, &lst);
	if (ret)
		return ret;
	snprintf(port, sizeof(port), "%u", lst.addr.port);
	a.lst = &lst;
	end_opts(ae, &a.opts);
	a.cancel_fd = eventfd(0, EFD_CLOEXEC);
	if (a.cancel_fd < 0) {
		lchan_listener_close(&lst);
		return -errno;
	}
	if (pthread_create(&thr, NULL, accept_thread, &a)) {
		close(a.cancel_fd);
		lchan_listener_close(&lst);
		return -EAGAIN;
	}
	end_opts(ce, &copts);
	ret = lchan_connect(&cli->ctx, host, port, &copts, &cli->chan);
	if (!ret) {
		ret = ep_ready(cli, &cli->ctx);
		if (!ret && ce->defer)
			ret = lchan_establish(&cli->chan, 10000);
		if (ret)
			lchan_chan_close(&cli->chan);
	}
	if (ret && write(a.cancel_fd, &one, sizeof(one)) < 0)
		ret = -errno;
	pthread_join(thr, NULL);
	if (!ret && a.ret) {
		lchan_chan_close(&cli->chan);
		ret = a.ret;
	} else if (ret && !a.ret) {
		lchan_chan_close(&srv->chan);
	}
	close(a.cancel_fd);
	lchan_listener_close(&lst);
	return ret;
}

static int open_eps(struct lchan_t_ep *srv, struct lchan_t_ep *cli)
{
	int ret;

	srv->slot = cli->slot = SLOT;
	srv->nrecv = cli->nrecv = 8;
	srv->nsend = cli->nsend = 8;
	srv->access = cli->access = LCHAN_ACCESS_LOCAL_WRITE |
		LCHAN_ACCESS_REMOTE_WRITE | LCHAN_ACCESS_REMOTE_READ;
	ret = lchan_ctx_open(&srv->ctx);
	return ret ? ret : lchan_ctx_open(&cli->ctx);
}

/* Close a pair's channels and free their buffers; contexts stay. */
static void close_chans(struct lchan_t_ep *srv, struct lchan_t_ep *cli)
{
	struct lchan_t_ep *ep[2] = { srv, cli };
	int i;

	for (i = 0; i < 2; i++) {
		if (ep[i]->chan.map || ep[i]->chan.fd > 0)
			lchan_chan_close(&ep[i]->chan);
		memset(&ep[i]->chan, 0, sizeof(ep[i]->chan));
		ep[i]->chan.fd = -1;
	}
}

/* Post one SQE of @ep and reap its CQE: 0 when it completed OK. */
static int one_op(struct lchan_t_ep *ep, struct lchan_sqe *sqe,
		  struct lchan_cqe *cqe)
{
	int ret;

	(void)sqe;
	ret = lchan_submit(&ep->chan);
	if (ret < 0)
		return ret;
	ret = lchan_t_reap(ep, cqe, 5000);
	if (ret)
		return ret;
	return cqe->status ? -EIO : 0;
}

/*
 * SENDs of every length class from @a to @b, each checked byte by byte
 * and its receive posted again; then an RDMA WRITE into @b's buffer and
 * a READ of it back into @a's, both checked.  0, or where it failed.
 */
static int traffic(struct __test_metadata *_metadata,
		   struct lchan_t_ep *a, struct lchan_t_ep *b, unsigned n)
{
	static const unsigned lens[] = { 1, 7, 64, 1000, SLOT };
	struct lchan_cqe cqe;
	struct lchan_sqe *sqe;
	uint8_t *src, *dst;
	unsigned i, len;
	long bad;

	for (i = 0; i < n; i++) {
		len = lens[i % (sizeof(lens) / sizeof(lens[0]))];
		src = lchan_t_send_slot(a, i);
		lchan_t_fill(src, i, len);
		sqe = lchan_get_sqe(&a->chan);
		if (!sqe)
			return -ENOSPC;
		lchan_prep_send(sqe, &a->mr, src, len, i);
		EXPECT_EQ(0, one_op(a, sqe, &cqe)) TH_LOG("send %u", i);
		EXPECT_EQ(0, lchan_t_reap(b, &cqe, 5000)) TH_LOG("recv %u", i);
		if (cqe.status || cqe.byte_len != len)
			return -EBADMSG;
		bad = lchan_t_check(lchan_t_recv_slot(b, cqe.user_data), i,
				    len);
		EXPECT_EQ(-1, bad) TH_LOG("send %u: byte %ld", i, bad);
		if (bad != -1)
			return -EBADMSG;
		EXPECT_EQ(0, lchan_t_post_recv(b, cqe.user_data));
		EXPECT_LE(0, lchan_submit(&b->chan));
	}

	/* WRITE a's send slot 0 into b's send slot 1, READ it back. */
	src = lchan_t_send_slot(a, 0);
	dst = lchan_t_send_slot(b, 1);
	lchan_t_fill(src, 1000, SLOT);
	memset(dst, 0, SLOT);
	sqe = lchan_get_sqe(&a->chan);
	if (!sqe)
		return -ENOSPC;
	lchan_prep_write(sqe, &a->mr, src, SLOT, (uintptr_t)dst, b->mr.rkey,
			 100);
	EXPECT_EQ(0, one_op(a, sqe, &cqe)) TH_LOG("write");
	bad = lchan_t_wait_check(dst, 1000, SLOT);
	EXPECT_EQ(-1, bad) TH_LOG("write: byte %ld", bad);
	if (bad != -1)
		return -EBADMSG;
	dst = lchan_t_send_slot(a, 2);
	memset(dst, 0, SLOT);
	sqe = lchan_get_sqe(&a->chan);
	if (!sqe)
		return -ENOSPC;
	lchan_prep_read(sqe, &a->mr, dst, SLOT,
			(uintptr_t)lchan_t_send_slot(b, 1), b->mr.rkey, 101);
	EXPECT_EQ(0, one_op(a, sqe, &cqe)) TH_LOG("read");
	bad = lchan_t_check(dst, 1000, SLOT);
	EXPECT_EQ(-1, bad) TH_LOG("read: byte %ld", bad);
	return bad == -1 ? 0 : -EBADMSG;
}

static const struct end deferred = { .defer = true };

/* The way a channel of this variant is set up when nothing is forced. */
static const char *expected_setup(bool rxe)
{
	return rxe ? "link" : "cm";
}

TEST_F(lchan, data_both_ways)
{
	struct lchan_t_ep srv = {}, cli = {};
	unsigned long long done = links_sum("setups_done");
	char buf[16];

	ASSERT_EQ(0, open_eps(&srv, &cli));
	ASSERT_EQ(0, pair(self->d.addr, &srv, &cli, &deferred, &deferred));
	EXPECT_STREQ(expected_setup(self->rxe),
		     chan_setup(&cli.chan, buf, sizeof(buf)));
	EXPECT_STREQ(expected_setup(self->rxe),
		     chan_setup(&srv.chan, buf, sizeof(buf)));
	/* Active and passive side each count the set-up. */
	EXPECT_EQ(done + (self->rxe ? 2 : 0), links_sum("setups_done"));
	EXPECT_EQ(0, traffic(_metadata, &cli, &srv, 10));
	EXPECT_EQ(0, traffic(_metadata, &srv, &cli, 10));
	EXPECT_EQ(LCHAN_STATE_CONNECTED, lchan_chan_state(&cli.chan));
	EXPECT_EQ(LCHAN_STATE_CONNECTED, lchan_chan_state(&srv.chan));
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
}

TEST_F(lchan, not_deferred)
{
	struct lchan_t_ep srv = {}, cli = {};
	struct end plain = {};
	char buf[16];

	ASSERT_EQ(0, open_eps(&srv, &cli));
	ASSERT_EQ(0, pair(self->d.addr, &srv, &cli, &plain, &plain));
	EXPECT_STREQ(expected_setup(self->rxe),
		     chan_setup(&cli.chan, buf, sizeof(buf)));
	EXPECT_STREQ(expected_setup(self->rxe),
		     chan_setup(&srv.chan, buf, sizeof(buf)));
	/* An establish after a connected connect or accept: as for cm. */
	EXPECT_EQ(-EISCONN, lchan_establish(&cli.chan, 1000));
	EXPECT_EQ(-EISCONN, lchan_establish(&srv.chan, 1000));
	EXPECT_EQ(0, traffic(_metadata, &cli, &srv, 5));
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
}

TEST_F(lchan, cm_only_flag)
{
	struct lchan_t_ep srv = {}, cli = {};
	struct end cm = { .flags = LCHAN_CONNECT_CM_ONLY, .defer = true };
	char buf[16];

	ASSERT_EQ(0, open_eps(&srv, &cli));
	ASSERT_EQ(0, pair(self->d.addr, &srv, &cli, &cm, &deferred));
	EXPECT_STREQ("cm", chan_setup(&cli.chan, buf, sizeof(buf)));
	EXPECT_STREQ("cm", chan_setup(&srv.chan, buf, sizeof(buf)));
	EXPECT_EQ(0, traffic(_metadata, &cli, &srv, 5));
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
}

/* ACCEPT with connect flag @flag, no request waiting: its result. */
static int accept_flag(struct lchan_ctx *ctx, const char *host,
		       unsigned flag)
{
	struct lchan_opts opts = { .flags = flag };
	struct lchan_listener lst;
	struct lchan_chan chan;
	int ret;

	ret = lchan_listen(ctx, host, "0", 1, LCHAN_FD_NONBLOCK, &lst);
	if (ret)
		return ret;
	/* Checked before the backlog: not EAGAIN. */
	ret = lchan_accept(&lst, &opts, &chan);
	if (!ret)
		lchan_chan_close(&chan);
	lchan_listener_close(&lst);
	return ret;
}

TEST_F(lchan, link_only_flag)
{
	struct lchan_t_ep srv = {}, cli = {};
	struct end only = { .flags = LCHAN_CONNECT_LINK_ONLY, .defer = true };
	struct end both = {
		.flags = LCHAN_CONNECT_LINK_ONLY | LCHAN_CONNECT_CM_ONLY,
	};
	char buf[16];
	int ret;

	ASSERT_EQ(0, open_eps(&srv, &cli));
	EXPECT_EQ(-EINVAL, pair(self->d.addr, &srv, &cli, &both, &deferred));
	EXPECT_EQ(-EINVAL, accept_flag(&srv.ctx, self->d.addr,
				       LCHAN_CONNECT_LINK_ONLY));
	EXPECT_EQ(-EINVAL, accept_flag(&srv.ctx, self->d.addr,
				       LCHAN_CONNECT_CM_ONLY));
	ret = pair(self->d.addr, &srv, &cli, &only, &deferred);
	if (!self->rxe) {
		/* iWARP: no link can serve. */
		EXPECT_EQ(-EOPNOTSUPP, ret);
	} else {
		ASSERT_EQ(0, ret);
		EXPECT_STREQ("link", chan_setup(&cli.chan, buf, sizeof(buf)));
		EXPECT_STREQ("link", chan_setup(&srv.chan, buf, sizeof(buf)));
		EXPECT_EQ(0, traffic(_metadata, &cli, &srv, 3));
		close_chans(&srv, &cli);
		/* links=0: none can serve. */
		ASSERT_EQ(0, lchan_t_set_param("links", "0"));
		EXPECT_EQ(-EOPNOTSUPP,
			  pair(self->d.addr, &srv, &cli, &only, &deferred));
	}
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
}

/* A port nobody listens on: one a listener had a moment ago. */
static int free_port(struct lchan_ctx *ctx, const char *host, char *port,
		     size_t len)
{
	struct lchan_listener lst;
	int ret;

	ret = lchan_listen(ctx, host, "0", 1, 0, &lst);
	if (ret)
		return ret;
	snprintf(port, len, "%u", lst.addr.port);
	return lchan_listener_close(&lst);
}

TEST_F(lchan, no_listener_as_cm)
{
	struct lchan_opts cm = { .flags = LCHAN_CONNECT_CM_ONLY,
				 .timeout_ms = 5000 };
	struct lchan_opts link = { .flags = LCHAN_CONNECT_LINK_ONLY,
				   .timeout_ms = 5000 };
	struct lchan_ctx ctx;
	struct lchan_chan chan;
	char port[16];
	int ret_cm, ret_link;

	if (!self->rxe)
		SKIP(return, "no link on iWARP");
	ASSERT_EQ(0, lchan_ctx_open(&ctx));
	ASSERT_EQ(0, free_port(&ctx, self->d.addr, port, sizeof(port)));
	ret_cm = lchan_connect(&ctx, self->d.addr, port, &cm, &chan);
	if (!ret_cm)
		lchan_chan_close(&chan);
	ret_link = lchan_connect(&ctx, self->d.addr, port, &link, &chan);
	if (!ret_link)
		lchan_chan_close(&chan);
	EXPECT_EQ(-ECONNREFUSED, ret_cm);
	EXPECT_EQ(ret_cm, ret_link);
	lchan_ctx_close(&ctx);
}

/*
 * A listener with a backlog of 1 holding one request nobody accepts;
 * the next connect with @flags: its result.  The first connect is
 * non-blocking: through rdma_cm it waits for an accept that never comes.
 */
static int backlog_full(const char *host, unsigned flags)
{
	struct lchan_opts first = { .flags = flags | LCHAN_FD_NONBLOCK,
				    .timeout_ms = 5000 };
	struct lchan_opts next = { .flags = flags, .timeout_ms = 5000 };
	struct lchan_ctx sctx, cctx;
	struct lchan_chan c1, c2;
	struct lchan_listener lst;
	struct pollfd pfd;
	char port[16];
	int ret;

	ret = lchan_ctx_open(&sctx);
	if (ret)
		return ret;
	ret = lchan_ctx_open(&cctx);
	if (ret)
		goto out_sctx;
	ret = lchan_listen(&sctx, host, "0", 1, LCHAN_FD_NONBLOCK, &lst);
	if (ret)
		goto out_cctx;
	snprintf(port, sizeof(port), "%u", lst.addr.port);
	/* Through rdma_cm it is still connecting: -EINPROGRESS. */
	ret = lchan_connect(&cctx, host, port, &first, &c1);
	if (ret && ret != -EINPROGRESS)
		goto out_lst;
	pfd.fd = lst.fd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 5000) != 1) {
		ret = -ETIMEDOUT;	/* not -ECONNREFUSED: the test fails */
		goto out_c1;
	}
	ret = lchan_connect(&cctx, host, port, &next, &c2);
	if (!ret) {
		lchan_chan_close(&c2);
		ret = 1;		/* a connect where none should be */
	}
out_c1:
	lchan_chan_close(&c1);
out_lst:
	lchan_listener_close(&lst);
out_cctx:
	lchan_ctx_close(&cctx);
out_sctx:
	lchan_ctx_close(&sctx);
	return ret;
}

TEST_F(lchan, backlog_full_as_cm)
{
	int ret_cm, ret_link;

	if (!self->rxe)
		SKIP(return, "no link on iWARP");
	ret_cm = backlog_full(self->d.addr, LCHAN_CONNECT_CM_ONLY);
	ret_link = backlog_full(self->d.addr, LCHAN_CONNECT_LINK_ONLY);
	EXPECT_EQ(-ECONNREFUSED, ret_cm);
	EXPECT_EQ(ret_cm, ret_link);
}

/* Close one end of a pair: the other's channel fails, within @secs. */
static double close_one(struct __test_metadata *_metadata, const char *host,
			bool client_closes, bool rxe)
{
	struct end ka = { .defer = true, .keepalive_ms = KEEPALIVE_MS };
	struct lchan_t_ep srv = {}, cli = {};
	struct lchan_t_ep *stay;
	char buf[16];
	double secs;

	EXPECT_EQ(0, open_eps(&srv, &cli));
	if (pair(host, &srv, &cli, &ka, &ka)) {
		EXPECT_TRUE(false) TH_LOG("no pair");
		return -1;
	}
	EXPECT_STREQ(expected_setup(rxe),
		     chan_setup(&cli.chan, buf, sizeof(buf)));
	stay = client_closes ? &srv : &cli;
	lchan_chan_close(client_closes ? &cli.chan : &srv.chan);
	/* Two keepalive periods and the timer's slack. */
	secs = lchan_t_wait_down(&stay->chan, 3);
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
	return secs;
}

TEST_F(lchan, close_either_end)
{
	double secs;

	secs = close_one(_metadata, self->d.addr, true, self->rxe);
	EXPECT_LE(0, secs) TH_LOG("the server's channel stayed up");
	TH_LOG("client closed: the server saw it in %.3f s", secs);
	secs = close_one(_metadata, self->d.addr, false, self->rxe);
	EXPECT_LE(0, secs) TH_LOG("the client's channel stayed up");
	TH_LOG("server closed: the client saw it in %.3f s", secs);
}

TEST_F(lchan, killed_process_leaves_nothing)
{
	struct lchan_t_ep srv = {}, cli = {};
	int chans, links, p[2];
	double t0;
	pid_t pid;
	char c;

	/* The link is made first: a kill leaves the links as they were. */
	ASSERT_EQ(0, open_eps(&srv, &cli));
	ASSERT_EQ(0, pair(self->d.addr, &srv, &cli, &deferred, &deferred));
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
	chans = lchan_t_count_dir(CHANS);
	links = lchan_t_count_dir(LINKS);
	ASSERT_LE(0, chans);
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct lchan_t_ep s[4] = {}, k[4] = {};
		int i;

		close(p[0]);
		for (i = 0; i < 4; i++) {
			if (open_eps(&s[i], &k[i]) ||
			    pair(self->d.addr, &s[i], &k[i], &deferred,
				 &deferred))
				_exit(lchan_t_child_fail(1, "pair %d", i));
		}
		if (write(p[1], "r", 1) != 1)
			_exit(2);
		pause();
		_exit(3);
	}
	close(p[1]);
	ASSERT_EQ(1, read(p[0], &c, 1)) TH_LOG("the child made no pairs");
	close(p[0]);
	EXPECT_EQ(chans + 8, lchan_t_count_dir(CHANS));
	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, lchan_t_wait_child(pid));
	t0 = lchan_t_now();
	while (lchan_t_count_dir(CHANS) != chans && lchan_t_now() - t0 < 5)
		usleep(20000);
	EXPECT_EQ(chans, lchan_t_count_dir(CHANS));
	EXPECT_EQ(links, lchan_t_count_dir(LINKS));
}

/* @n pairs one after the other with connect flags @flags: s per pair. */
static double sequential(struct __test_metadata *_metadata, const char *host,
			 unsigned n, unsigned flags, const char *setup)
{
	struct end ce = { .flags = flags, .defer = true };
	struct lchan_t_ep srv = {}, cli = {};
	unsigned i, wrong = 0;
	double t0, total = 0;
	char buf[16];

	EXPECT_EQ(0, open_eps(&srv, &cli));
	for (i = 0; i < n; i++) {
		t0 = lchan_t_now();
		if (pair(host, &srv, &cli, &ce, &deferred)) {
			EXPECT_TRUE(false) TH_LOG("pair %u failed", i);
			break;
		}
		total += lchan_t_now() - t0;
		if (strcmp(setup, chan_setup(&cli.chan, buf, sizeof(buf))))
			wrong++;
		close_chans(&srv, &cli);
		/* The next pair registers its buffer again. */
		lchan_mr_dereg(&srv.ctx, &srv.mr);
		lchan_mr_dereg(&cli.ctx, &cli.mr);
	}
	EXPECT_EQ(0, wrong) TH_LOG("%u of %u channels not set up by %s",
				   wrong, n, setup);
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
	return i ? total / i : -1;
}

TEST_F(lchan, sequential_connects)
{
	unsigned n = lchan_t_count(200);
	double link, cm;

	link = sequential(_metadata, self->d.addr, n, 0,
			  expected_setup(self->rxe));
	cm = sequential(_metadata, self->d.addr, n, LCHAN_CONNECT_CM_ONLY,
			"cm");
	TH_LOG("%u connect+accept pairs one after the other: %.0f us each %s, %.0f us each through rdma_cm",
	       n, link * 1e6, self->rxe ? "over a link" : "(iWARP: cm)",
	       cm * 1e6);
}

TEST_HARNESS_MAIN
