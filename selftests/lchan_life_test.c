// SPDX-License-Identifier: GPL-2.0
/*
 * Channel lifetime: close and exit with work outstanding, munmap/close in
 * either order, the peer going away, waiting, and the sysfs view.
 */
#include <sys/mman.h>
#include <sys/wait.h>
#include <poll.h>
#include <sys/epoll.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define NRECV 8

FIXTURE(life) {
	struct lchan_t_dev d;
	struct lchan_t_ep srv, cli;
};

LCHAN_T_VARIANTS(life);

FIXTURE_SETUP(life)
{
	int ret;

	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	lchan_t_raise_memlock();
	self->srv.slot = self->cli.slot = 4096;
	self->srv.nrecv = self->cli.nrecv = NRECV;
	self->srv.nsend = self->cli.nsend = 8;
	ret = lchan_t_ep_pair(&self->srv, &self->cli, self->d.addr, NULL);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
}

FIXTURE_TEARDOWN(life)
{
	lchan_t_ep_close(&self->cli);
	lchan_t_ep_close(&self->srv);
}

static void chan_dir(char *buf, size_t len, const struct lchan_chan *chan)
{
	snprintf(buf, len, "/sys/kernel/lchan/channels/%u", chan->info.id);
}

/* Collect @n CQEs: how many were OK and how many flushed. */
static int drain(struct lchan_t_ep *ep, unsigned n, unsigned *ok,
		 unsigned *flushed)
{
	struct lchan_cqe cqe;
	unsigned i;
	int ret;

	*ok = *flushed = 0;
	for (i = 0; i < n; i++) {
		ret = lchan_t_reap(ep, &cqe, 10000);
		if (ret)
			return ret;
		if (cqe.status == LCHAN_CQE_OK)
			(*ok)++;
		else if (cqe.status == LCHAN_CQE_WR_FLUSH_ERR)
			(*flushed)++;
		else
			return -EIO;
	}
	return 0;
}

static void send_some(struct __test_metadata *_metadata,
		      struct lchan_t_ep *ep, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		struct lchan_sqe *sqe = lchan_get_sqe(&ep->chan);

		ASSERT_NE(NULL, sqe);
		lchan_t_fill(lchan_t_send_slot(ep, i), i, 256);
		lchan_prep_send(sqe, &ep->mr, lchan_t_send_slot(ep, i), 256, i);
	}
	ASSERT_LE(0, lchan_submit(&ep->chan));
}

TEST_F_TIMEOUT(life, close_with_work_outstanding, 60)
{
	unsigned ok, flushed;
	char dir[160];
	double took;

	chan_dir(dir, sizeof(dir), &self->cli.chan);
	send_some(_metadata, &self->cli, 3);
	/* Receives still posted on the client, sends maybe in flight. */
	ASSERT_EQ(0, lchan_chan_close(&self->cli.chan));
	ASSERT_EQ(0, lchan_t_wait_path(dir, 0, 10));
	took = lchan_t_wait_down(&self->srv.chan, 10);
	ASSERT_GE(took, 0);
	TH_LOG("server saw the disconnect after %.2f s", took);
	/* Every receive the server posted completes: data or flush. */
	ASSERT_EQ(0, drain(&self->srv, NRECV, &ok, &flushed));
	EXPECT_LE(ok, 3);
	EXPECT_EQ(NRECV, ok + flushed);
	EXPECT_EQ(LCHAN_STATE_DISCONNECTED, lchan_chan_state(&self->srv.chan));
}

TEST_F_TIMEOUT(life, peer_close_flushes_and_refuses_new_work, 60)
{
	struct lchan_cqe cqe;
	unsigned ok, flushed;
	char path[200], buf[32];

	ASSERT_EQ(0, lchan_chan_close(&self->srv.chan));
	ASSERT_GE(lchan_t_wait_down(&self->cli.chan, 10), 0);
	ASSERT_EQ(0, drain(&self->cli, NRECV, &ok, &flushed));
	EXPECT_EQ(0, ok);
	EXPECT_EQ(NRECV, flushed);
	/* Work submitted after the disconnect is answered, not lost. */
	send_some(_metadata, &self->cli, 2);
	ASSERT_EQ(0, lchan_t_reap(&self->cli, &cqe, 5000));
	EXPECT_EQ(LCHAN_CQE_WR_FLUSH_ERR, cqe.status);
	ASSERT_EQ(0, lchan_t_reap(&self->cli, &cqe, 5000));
	EXPECT_EQ(LCHAN_CQE_WR_FLUSH_ERR, cqe.status);
	EXPECT_EQ(LCHAN_STATE_DISCONNECTED, lchan_chan_state(&self->cli.chan));
	chan_dir(path, sizeof(path), &self->cli.chan);
	strcat(path, "/state");
	ASSERT_EQ(0, lchan_t_read_sysfs(path, buf, sizeof(buf)));
	EXPECT_STREQ("disconnected", buf);
	/* Waiting for more than can come returns instead of hanging. */
	EXPECT_EQ(-ENOTCONN, lchan_submit_and_wait(&self->cli.chan, 1,
						   -1LL));
}

TEST_F_TIMEOUT(life, munmap_after_close, 60)
{
	char dir[160];

	chan_dir(dir, sizeof(dir), &self->cli.chan);
	ASSERT_EQ(0, close(self->cli.chan.fd));
	self->cli.chan.fd = -1;
	/* The mapping keeps the channel alive and its ring readable. */
	usleep(200000);
	EXPECT_EQ(0, access(dir, F_OK));
	EXPECT_EQ(0, *self->cli.chan.cq.ktail);
	ASSERT_EQ(0, munmap(self->cli.chan.map, self->cli.chan.map_size));
	self->cli.chan.map = NULL;
	ASSERT_EQ(0, lchan_t_wait_path(dir, 0, 10));
	ASSERT_GE(lchan_t_wait_down(&self->srv.chan, 10), 0);
}

TEST_F_TIMEOUT(life, close_after_munmap, 60)
{
	char dir[160];

	chan_dir(dir, sizeof(dir), &self->cli.chan);
	ASSERT_EQ(0, munmap(self->cli.chan.map, self->cli.chan.map_size));
	self->cli.chan.map = NULL;
	EXPECT_EQ(0, access(dir, F_OK));
	ASSERT_EQ(0, close(self->cli.chan.fd));
	self->cli.chan.fd = -1;
	ASSERT_EQ(0, lchan_t_wait_path(dir, 0, 10));
	ASSERT_GE(lchan_t_wait_down(&self->srv.chan, 10), 0);
}

TEST_F_TIMEOUT(life, exit_without_close, 90)
{
	struct lchan_t_ep child = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	struct lchan_t_ep srv = { .slot = 4096, .nrecv = NRECV, .nsend = 1 };
	struct lchan_listener lst;
	struct lchan_opts opts = { .flags = LCHAN_DEFER_ESTABLISH };
	char port[16], dir[160];
	int status, sync[2];
	unsigned ok, flushed, id;
	double took;
	pid_t pid;

	ASSERT_EQ(0, lchan_ctx_open(&srv.ctx));
	snprintf(port, sizeof(port), "%u", lchan_t_port());
	ASSERT_EQ(0, lchan_listen(&srv.ctx, self->d.addr, port, 1, 0, &lst));
	ASSERT_EQ(0, pipe(sync));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		/* Connect, leave work posted, then die without cleaning up. */
		if (lchan_ctx_open(&child.ctx) ||
		    lchan_connect(&child.ctx, self->d.addr, port, NULL,
				  &child.chan) ||
		    lchan_t_ep_prepare(&child.ctx, &child.chan, &child))
			_exit(1);
		id = child.chan.info.id;
		if (write(sync[1], &id, sizeof(id)) != sizeof(id))
			_exit(2);
		usleep(300000);
		_exit(0);
	}
	ASSERT_EQ(0, lchan_accept(&lst, &opts, &srv.chan));
	ASSERT_EQ(0, lchan_t_ep_prepare(&srv.ctx, &srv.chan, &srv));
	ASSERT_EQ(0, lchan_establish(&srv.chan, 10000));
	ASSERT_EQ(sizeof(id), read(sync[0], &id, sizeof(id)));
	snprintf(dir, sizeof(dir), "/sys/kernel/lchan/channels/%u", id);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, lchan_t_wait_path(dir, 0, 10));
	took = lchan_t_wait_down(&srv.chan, 10);
	ASSERT_GE(took, 0);
	TH_LOG("survivor saw the disconnect %.2f s after the exit", took);
	ASSERT_EQ(0, drain(&srv, NRECV, &ok, &flushed));
	EXPECT_EQ(NRECV, flushed);
	lchan_listener_close(&lst);
	lchan_t_ep_close(&srv);
}

/* 0 when the output of @cmd contains @want. */
static int rdma_says(const char *cmd, char *buf, size_t len, const char *want)
{
	FILE *f = popen(cmd, "r");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	pclose(f);
	if (strstr(buf, want))
		return 0;
	fprintf(stderr, "# %s: no \"%s\" in: %s\n", cmd, want, buf);
	return -ENOENT;
}

TEST_F_TIMEOUT(life, sysfs_matches_traffic, 60)
{
	struct lchan_cqe cqe;
	char dir[160], path[240], buf[4096];
	unsigned i;

	for (i = 0; i < 50; i++) {
		send_some(_metadata, &self->cli, 1);
		ASSERT_EQ(0, lchan_t_reap(&self->cli, &cqe, 5000));
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
		ASSERT_EQ(0, lchan_t_reap(&self->srv, &cqe, 5000));
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
		ASSERT_EQ(0, lchan_t_post_recv(&self->srv, cqe.user_data));
		ASSERT_LE(0, lchan_submit(&self->srv.chan));
	}
#define EXPECT_ATTR(ep, name, fmt, val) do {				\
	chan_dir(dir, sizeof(dir), &(ep)->chan);			\
	snprintf(path, sizeof(path), "%s/%s", dir, name);		\
	ASSERT_EQ(0, lchan_t_read_sysfs(path, buf, sizeof(buf)))	\
		TH_LOG("%s", path);					\
	{ char want[64]; snprintf(want, sizeof(want), fmt, val);	\
	  EXPECT_STREQ(want, buf) TH_LOG("%s", path); }		\
} while (0)
	EXPECT_ATTR(&self->cli, "state", "%s", "connected");
	EXPECT_ATTR(&self->cli, "device", "%s", self->d.dev);
	EXPECT_ATTR(&self->cli, "send_ops", "%u", 50);
	EXPECT_ATTR(&self->cli, "send_bytes", "%u", 50 * 256);
	EXPECT_ATTR(&self->cli, "recv_ops", "%u", 0);
	EXPECT_ATTR(&self->srv, "recv_ops", "%u", 50);
	EXPECT_ATTR(&self->srv, "recv_bytes", "%u", 50 * 256);
	EXPECT_ATTR(&self->srv, "rq_outstanding", "%u", NRECV);
	EXPECT_ATTR(&self->cli, "sq_outstanding", "%u", 0);
	EXPECT_ATTR(&self->cli, "errors", "%u", 0);
	EXPECT_ATTR(&self->cli, "pid", "%d", getpid());
	EXPECT_ATTR(&self->cli, "local_qpn", "%u",
		    self->cli.chan.info.local_qpn);
	EXPECT_ATTR(&self->cli, "remote_qpn", "%u",
		    strcmp(variant->kind, "siw") ?
		    self->srv.chan.info.local_qpn : 0);
	EXPECT_ATTR(&self->cli, "local_addr", "%s", self->d.addr);
	EXPECT_ATTR(&self->cli, "remote_port", "%u",
		    self->srv.chan.info.local.port);
	EXPECT_ATTR(&self->srv, "local_port", "%u",
		    self->srv.chan.info.local.port);
	EXPECT_ATTR(&self->cli, "sq_entries", "%u", self->cli.chan.sq.entries);
	EXPECT_ATTR(&self->cli, "rq_entries", "%u", self->cli.chan.rq.entries);
	EXPECT_ATTR(&self->cli, "cq_entries", "%u", self->cli.chan.cq.entries);

	/*
	 * rdma's view: the QP (created through rdma_cm, which names itself
	 * as its owner), and lchan's CQ and connection id.
	 */
	snprintf(path, sizeof(path), "rdma resource show qp lqpn %u 2>&1",
		 self->cli.chan.info.local_qpn);
	EXPECT_EQ(0, rdma_says(path, buf, sizeof(buf), self->d.dev));
	snprintf(path, sizeof(path), "rdma resource show cq 2>&1 | grep '%s'",
		 self->d.dev);
	EXPECT_EQ(0, rdma_says(path, buf, sizeof(buf), "comm [lchan]"));
	snprintf(path, sizeof(path),
		 "rdma resource show cm_id 2>&1 | grep '%s/'", self->d.dev);
	EXPECT_EQ(0, rdma_says(path, buf, sizeof(buf), "comm [lchan]"));

	chan_dir(dir, sizeof(dir), &self->cli.chan);
	lchan_chan_close(&self->cli.chan);
	ASSERT_EQ(0, lchan_t_wait_path(dir, 0, 10));
}

TEST_F_TIMEOUT(life, enter_waits_with_timeout, 60)
{
	double t0;
	int ret;

	t0 = lchan_t_now();
	ret = lchan_submit_and_wait(&self->cli.chan, 1, 200000000LL);
	EXPECT_EQ(-ETIME, ret);
	EXPECT_GE(lchan_t_now() - t0, 0.15);
	send_some(_metadata, &self->cli, 1);
	EXPECT_EQ(0, lchan_submit_and_wait(&self->cli.chan, 1, 5000000000LL));
	EXPECT_EQ(1, lchan_cq_ready(&self->cli.chan));
}

TEST_F_TIMEOUT(life, epoll_reports_completion_and_hangup, 60)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
	struct lchan_cqe cqe;
	int ep, n;

	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_GE(ep, 0);
	ev.data.fd = self->srv.chan.fd;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->srv.chan.fd, &ev));
	/* Nothing yet. */
	ASSERT_EQ(0, epoll_wait(ep, &ev, 1, 100));
	send_some(_metadata, &self->cli, 1);
	n = epoll_wait(ep, &ev, 1, 5000);
	ASSERT_EQ(1, n);
	EXPECT_TRUE(ev.events & EPOLLIN);
	EXPECT_FALSE(ev.events & EPOLLRDHUP);
	ASSERT_EQ(0, lchan_t_reap(&self->srv, &cqe, 1000));
	ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
	/* The peer goes: readable (flushes), then hung up. */
	lchan_chan_close(&self->cli.chan);
	n = epoll_wait(ep, &ev, 1, 10000);
	ASSERT_EQ(1, n);
	EXPECT_TRUE(ev.events & (EPOLLRDHUP | EPOLLIN));
	close(ep);
}

/*
 * One round on a new pair: the server sends NRECV messages, sees each
 * complete and closes at once, while the client reposts receives and
 * submits in a tight loop.  Every message completes before any flush of
 * the client's receives (lchan_t_reap() checks a queue's order).
 * @direct: both ends poll in ENTER, and the client waits for the
 * disconnect before its first ENTER, so the messages' completions still
 * wait in the device's CQ when a new receive on the down channel is
 * answered: an answer written at once would come before them.
 */
static void order_round(struct __test_metadata *_metadata,
			struct lchan_t_ep *srv, struct lchan_t_ep *cli,
			const char *host, bool direct)
{
	struct lchan_opts opts = { .flags = direct ? LCHAN_DIRECT_POLL : 0 };
	unsigned ok = 0, flushed = 0, next = NRECV, i;
	char path[200], buf[32] = "";
	struct lchan_cqe cqe;
	double end;
	int ret;

	lchan_t_ep_close(cli);
	lchan_t_ep_close(srv);
	ret = lchan_t_ep_pair(srv, cli, host, &opts);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
	send_some(_metadata, srv, NRECV);
	for (i = 0; i < NRECV; i++) {
		ASSERT_EQ(0, lchan_t_reap(srv, &cqe, 10000));
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
	}
	ASSERT_EQ(0, lchan_chan_close(&srv->chan));
	if (direct) {
		/* sysfs, not ENTER: ENTER would poll the CQ. */
		chan_dir(path, sizeof(path), &cli->chan);
		strcat(path, "/state");
		end = lchan_t_now() + 10;
		while (!lchan_t_read_sysfs(path, buf, sizeof(buf)) &&
		       strcmp(buf, "disconnected") && lchan_t_now() < end)
			usleep(1000);
		ASSERT_STREQ("disconnected", buf);
	}
	end = lchan_t_now() + 20;
	while (ok < NRECV || !flushed) {
		ASSERT_LT(lchan_t_now(), end)
			TH_LOG("%u of %u messages, %u flushes", ok, NRECV,
			       flushed);
		if (!lchan_t_post_recv(cli, next))
			next++;
		ASSERT_LE(0, lchan_submit(&cli->chan));
		ret = lchan_t_reap(cli, &cqe, direct ? 1000 : 0);
		if (ret == -ETIMEDOUT)
			continue;
		ASSERT_EQ(0, ret) TH_LOG("message %u: %s", ok, strerror(-ret));
		if (cqe.status == LCHAN_CQE_WR_FLUSH_ERR) {
			flushed++;
			continue;
		}
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
		ASSERT_EQ(ok, cqe.user_data);
		ASSERT_EQ(-1, lchan_t_check(lchan_t_recv_slot(cli, ok), ok,
					    256));
		ok++;
	}
}

TEST_F_TIMEOUT(life, peer_close_completes_before_flushing, 300)
{
	unsigned rounds = lchan_t_count(40), r;

	for (r = 0; r < rounds; r++) {
		order_round(_metadata, &self->srv, &self->cli, self->d.addr,
			    false);
	}
	TH_LOG("%u rounds", r);
}

TEST_F_TIMEOUT(life, peer_close_completes_before_flushing_direct, 300)
{
	unsigned rounds = lchan_t_count(10), r;

	if (!strcmp(variant->kind, "siw"))
		SKIP(return, "iWARP has no direct polling");
	for (r = 0; r < rounds; r++) {
		order_round(_metadata, &self->srv, &self->cli, self->d.addr,
			    true);
	}
	TH_LOG("%u rounds", r);
}

TEST_HARNESS_MAIN
