// SPDX-License-Identifier: GPL-2.0
/*
 * Poller mode: no system call in steady traffic, sleep and wake-up
 * through NEED_WAKEUP without losing work, one thread for many channels,
 * and the rules of LCHAN_IOC_CTX_SETUP.
 */
#include <dirent.h>
#include <sched.h>
#include <sys/ioctl.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

FIXTURE(poller) {
	struct lchan_t_dev d;
};

LCHAN_T_VARIANTS(poller);

FIXTURE_SETUP(poller)
{
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	lchan_t_raise_memlock();
}

FIXTURE_TEARDOWN(poller)
{
}

/* A pair whose client context is in poller mode. */
static int poller_pair(struct lchan_t_ep *srv, struct lchan_t_ep *cli,
		       const char *host, unsigned idle_ms,
		       const struct lchan_ctx *share)
{
	int ret;

	ret = lchan_ctx_open(&srv->ctx);
	if (!ret)
		ret = lchan_ctx_open(&cli->ctx);
	if (!ret)
		ret = lchan_ctx_setup_poller(&cli->ctx, idle_ms, -1, share);
	if (!ret)
		ret = lchan_t_pair(&srv->ctx, &cli->ctx, host, NULL, &srv->chan,
				   &cli->chan, lchan_t_ep_prepare, srv, cli);
	return ret;
}

/* @n SENDs from cli to srv, each checked, receives re-posted. */
static int exchange(struct __test_metadata *_metadata, struct lchan_t_ep *cli,
		    struct lchan_t_ep *srv, unsigned n, unsigned seed)
{
	struct lchan_cqe cqe;
	unsigned i;

	for (i = 0; i < n; i++) {
		struct lchan_sqe *sqe = lchan_get_sqe(&cli->chan);
		uint8_t *p = lchan_t_send_slot(cli, i);

		if (!sqe)
			return -ENOSPC;
		lchan_t_fill(p, seed + i, 200);
		lchan_prep_send(sqe, &cli->mr, p, 200, i);
		if (lchan_submit(&cli->chan) < 0)
			return -EIO;
		if (lchan_t_reap(srv, &cqe, 10000) || cqe.status ||
		    cqe.byte_len != 200)
			return -EIO;
		EXPECT_EQ(-1, lchan_t_check(lchan_t_recv_slot(srv,
				cqe.user_data), seed + i, 200));
		if (lchan_t_post_recv(srv, cqe.user_data) ||
		    lchan_submit(&srv->chan) < 0)
			return -EIO;
		if (lchan_t_reap(cli, &cqe, 10000) || cqe.status)
			return -EIO;
	}
	return 0;
}

TEST_F_TIMEOUT(poller, hundred_thousand_ops_no_syscall, 600)
{
	struct lchan_t_ep srv = { .slot = 4096, .nrecv = 4, .nsend = 4,
				  .access = LCHAN_ACCESS_ALL };
	struct lchan_t_ep cli = { .slot = 4096, .nrecv = 4, .nsend = 64 };
	const unsigned total = lchan_t_count(100000), every = 64;
	unsigned long long enters0;
	unsigned posted = 0, cqes = 0;
	uint8_t *dst;
	double stall;
	int ret;

	LCHAN_T_BODY();
	ret = poller_pair(&srv, &cli, self->d.addr, 5000, NULL);
	ASSERT_EQ(0, ret) TH_LOG("%s", strerror(-ret));
	ASSERT_NE(0, cli.chan.info.chan_flags & LCHAN_CHAN_POLLER);
	ASSERT_NE(0, srv.mr.rkey);
	dst = lchan_t_recv_slot(&srv, 0);
	enters0 = lchan_t_chan_attr(&cli.chan, "enters");
	stall = lchan_t_now();
	/* Busy-poll the CQ ring: the only way to the kernel is the ring. */
	while (cqes < total / every) {
		struct lchan_sqe *sqe;
		struct lchan_cqe *c;
		int n = 0;

		while (posted < total && (sqe = lchan_get_sqe(&cli.chan))) {
			uint8_t *p = lchan_t_send_slot(&cli, posted);

			*(uint32_t *)p = posted;
			lchan_prep_write(sqe, &cli.mr, p, 64,
					 (uintptr_t)(dst + (posted % 64) * 64),
					 srv.mr.rkey, posted);
			if ((posted + 1) % every)
				sqe->flags |= LCHAN_SQE_UNSIGNALED;
			posted++;
			n++;
		}
		if (n) {
			ASSERT_LE(0, lchan_submit(&cli.chan));
			stall = lchan_t_now();
		}
		while (!lchan_peek_cqe(&cli.chan, &c)) {
			ASSERT_EQ(LCHAN_CQE_OK, c->status);
			lchan_cqe_seen(&cli.chan);
			cqes++;
			stall = lchan_t_now();
		}
		ASSERT_LT(lchan_t_now() - stall, 20.0)
			TH_LOG("stalled: %u posted, %u CQEs", posted, cqes);
	}
	/* Not one ENTER between set-up and the end. */
	EXPECT_EQ(enters0, lchan_t_chan_attr(&cli.chan, "enters"));
	EXPECT_EQ(total - 1, lchan_t_wait_u32((uint32_t *)(dst +
					((total - 1) % 64) * 64), total - 1));
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
}

TEST_F_TIMEOUT(poller, sleep_and_wake_lose_nothing, 120)
{
	struct lchan_t_ep srv = { .slot = 4096, .nrecv = 16, .nsend = 4 };
	struct lchan_t_ep cli = { .slot = 4096, .nrecv = 4, .nsend = 16 };
	unsigned long long enters;
	int cycle, ret;

	LCHAN_T_BODY();
	ret = poller_pair(&srv, &cli, self->d.addr, 30, NULL);
	ASSERT_EQ(0, ret) TH_LOG("%s", strerror(-ret));
	for (cycle = 0; cycle < 6; cycle++) {
		/* Idle well past the poller's 30 ms: it must be asleep. */
		usleep(300000);
		ASSERT_NE(0, *cli.chan.sq.kflags & LCHAN_SQ_NEED_WAKEUP)
			TH_LOG("cycle %d: poller not asleep", cycle);
		enters = lchan_t_chan_attr(&cli.chan, "enters");
		ASSERT_EQ(0, exchange(_metadata, &cli, &srv, 50, cycle * 100));
		/* The first submit after the sleep rang the doorbell. */
		EXPECT_LT(enters, lchan_t_chan_attr(&cli.chan, "enters"));
	}
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
}

static int count_pollers(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], comm[64];

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (!lchan_t_read_sysfs(path, comm, sizeof(comm)) &&
		    !strncmp(comm, "lchan-poll", 10))
			n++;
	}
	closedir(d);
	return n;
}

TEST_F_TIMEOUT(poller, eight_channels_one_thread, 300)
{
	struct lchan_t_ep srv[8], cli[8];
	int before, i, ret;

	LCHAN_T_BODY();
	memset(srv, 0, sizeof(srv));
	memset(cli, 0, sizeof(cli));
	before = count_pollers();
	for (i = 0; i < 8; i++) {
		srv[i] = (struct lchan_t_ep){ .slot = 4096, .nrecv = 8,
					      .nsend = 2 };
		cli[i] = (struct lchan_t_ep){ .slot = 4096, .nrecv = 2,
					      .nsend = 8 };
		/* Eight contexts; the seven after the first share its thread. */
		ret = poller_pair(&srv[i], &cli[i], self->d.addr, 2000,
				  i ? &cli[0].ctx : NULL);
		ASSERT_EQ(0, ret) TH_LOG("pair %d: %s", i, strerror(-ret));
	}
	EXPECT_EQ(before + 1, count_pollers());
	for (i = 0; i < 8; i++) {
		char path[160], buf[32];

		snprintf(path, sizeof(path),
			 "/sys/kernel/lchan/channels/%u/mode",
			 cli[i].chan.info.id);
		ASSERT_EQ(0, lchan_t_read_sysfs(path, buf, sizeof(buf)));
		EXPECT_STREQ("poller", buf);
	}
	/* Interleaved traffic on all eight. */
	for (ret = 0; ret < 20; ret++)
		for (i = 0; i < 8; i++)
			ASSERT_EQ(0, exchange(_metadata, &cli[i], &srv[i], 10,
					      i * 1000 + ret * 10));
	for (i = 7; i >= 0; i--) {
		lchan_t_ep_close(&cli[i]);
		lchan_t_ep_close(&srv[i]);
	}
	/* The last context gone, the thread is gone. */
	usleep(200000);
	EXPECT_EQ(before, count_pollers());
}

/*
 * A receive published in poller mode must be at the queue pair when
 * lchan_submit() returns: the peer may be told to send by a path the
 * poller does not see.  Here the test thread shares the receiver's poller
 * CPU, so the SEND right after each re-post leaves before that thread can
 * run.  Losing that race ends the connection on iWARP and costs a
 * receiver-not-ready wait (655 ms by default) on IB/RoCE.
 */
TEST_F_TIMEOUT(poller, receive_at_qp_when_submit_returns, 300)
{
	struct lchan_t_ep srv = { .slot = 256, .nrecv = 1, .nsend = 1 };
	struct lchan_t_ep cli = { .slot = 256, .nrecv = 1, .nsend = 1 };
	const unsigned rounds = lchan_t_count(2000);
	struct lchan_cqe cqe;
	cpu_set_t cpus;
	unsigned i;
	int ret;

	LCHAN_T_BODY();
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpus), &cpus));
	ret = lchan_ctx_open(&srv.ctx);
	if (!ret)
		ret = lchan_ctx_open(&cli.ctx);
	if (!ret)
		ret = lchan_ctx_setup_poller(&srv.ctx, 5000, 0, NULL);
	if (!ret)
		ret = lchan_t_pair(&srv.ctx, &cli.ctx, self->d.addr, NULL,
				   &srv.chan, &cli.chan, lchan_t_ep_prepare,
				   &srv, &cli);
	ASSERT_EQ(0, ret) TH_LOG("%s", strerror(-ret));
	ASSERT_NE(0, srv.chan.info.chan_flags & LCHAN_CHAN_POLLER);
	ASSERT_NE(0, srv.chan.info.rq_off.posted);
	EXPECT_EQ(0, srv.chan.info.sq_off.posted);
	EXPECT_EQ(0, srv.chan.info.cq_off.posted);
	for (i = 0; i < rounds; i++) {
		struct lchan_sqe *sqe = lchan_get_sqe(&cli.chan);
		uint8_t *p = lchan_t_send_slot(&cli, 0);

		ASSERT_NE(NULL, sqe);
		lchan_t_fill(p, i, 64);
		lchan_prep_send(sqe, &cli.mr, p, 64, i);
		ASSERT_LE(0, lchan_submit(&cli.chan));
		ret = lchan_t_reap(&srv, &cqe, 10000);
		ASSERT_EQ(0, ret) TH_LOG("round %u: receiver: %s, state %d", i,
					 strerror(-ret),
					 lchan_chan_state(&srv.chan));
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status)
			TH_LOG("round %u: receive %s", i,
			       lchan_cqe_status_str(cqe.status));
		ASSERT_EQ(64, cqe.byte_len);
		ASSERT_EQ(-1, lchan_t_check(lchan_t_recv_slot(&srv, 0), i, 64));
		/* Re-posted, and the SEND of the next round follows at once. */
		ASSERT_EQ(0, lchan_t_post_recv(&srv, 0));
		ASSERT_LE(0, lchan_submit(&srv.chan));
		ASSERT_EQ((unsigned)srv.recv_posted,
			  lchan_load_acquire(srv.chan.rq.kposted));
		ret = lchan_t_reap(&cli, &cqe, 10000);
		ASSERT_EQ(0, ret) TH_LOG("round %u: sender: %s", i,
					 strerror(-ret));
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status)
			TH_LOG("round %u: send %s", i,
			       lchan_cqe_status_str(cqe.status));
	}
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
}

static int setup_ioctl(int fd, struct lchan_ctx_setup *req, unsigned size)
{
	req->size = size;
	return ioctl(fd, LCHAN_IOC_CTX_SETUP, req) ? -errno : 0;
}

TEST_F_TIMEOUT(poller, ctx_setup_rules, 120)
{
	struct lchan_t_ep srv = { .slot = 4096, .nrecv = 2, .nsend = 2 };
	struct lchan_t_ep cli = { .slot = 4096, .nrecv = 2, .nsend = 2 };
	struct lchan_ctx_setup req;
	struct lchan_ctx a, b;
	char big[sizeof(req) + 8];

	LCHAN_T_BODY();
	ASSERT_EQ(0, lchan_ctx_open(&a));
	ASSERT_EQ(0, lchan_ctx_open(&b));
#define FRESH() (memset(&req, 0, sizeof(req)), req.cpu = -1, \
		 req.attach_fd = -1, req.flags = LCHAN_CTX_POLLER)
	FRESH();
	EXPECT_EQ(-EINVAL, setup_ioctl(a.fd, &req, sizeof(req) - 1));
	EXPECT_EQ(-EFAULT, ioctl(a.fd, LCHAN_IOC_CTX_SETUP, NULL) ? -errno : 0);
	memset(big, 0, sizeof(big));
	FRESH();
	memcpy(big, &req, sizeof(req));
	big[sizeof(req) + 3] = 1;
	((struct lchan_ctx_setup *)big)->size = sizeof(big);
	EXPECT_EQ(-E2BIG, ioctl(a.fd, LCHAN_IOC_CTX_SETUP, big) ? -errno : 0);
	FRESH();
	req.flags |= 1u << 7;
	EXPECT_EQ(-EINVAL, setup_ioctl(a.fd, &req, sizeof(req)));
	FRESH();
	req.resv = 1;
	EXPECT_EQ(-EINVAL, setup_ioctl(a.fd, &req, sizeof(req)));
	FRESH();
	req.cpu = 100000;
	EXPECT_EQ(-EINVAL, setup_ioctl(a.fd, &req, sizeof(req)));
	FRESH();
	req.cpu = -2;
	EXPECT_EQ(-EINVAL, setup_ioctl(a.fd, &req, sizeof(req)));
	/* Sharing needs a poller context on the other side. */
	FRESH();
	req.attach_fd = b.fd;
	EXPECT_EQ(-EINVAL, setup_ioctl(a.fd, &req, sizeof(req)));
	FRESH();
	req.attach_fd = 0;
	EXPECT_EQ(-EINVAL, setup_ioctl(a.fd, &req, sizeof(req)));
	FRESH();
	req.attach_fd = 10000;
	EXPECT_EQ(-EBADF, setup_ioctl(a.fd, &req, sizeof(req)));
	FRESH();
	req.flags = 0;
	req.attach_fd = b.fd;
	EXPECT_EQ(-EINVAL, setup_ioctl(a.fd, &req, sizeof(req)));
	/* Pinned to CPU 0, then once only. */
	FRESH();
	req.cpu = 0;
	EXPECT_EQ(0, setup_ioctl(a.fd, &req, sizeof(req)));
	FRESH();
	EXPECT_EQ(-EBUSY, setup_ioctl(a.fd, &req, sizeof(req)));
	FRESH();
	req.attach_fd = a.fd;
	EXPECT_EQ(0, setup_ioctl(b.fd, &req, sizeof(req)));
	lchan_ctx_close(&a);
	lchan_ctx_close(&b);

	/* Too late once a channel exists. */
	ASSERT_EQ(0, lchan_t_ep_pair(&srv, &cli, self->d.addr, NULL));
	FRESH();
	EXPECT_EQ(-EBUSY, setup_ioctl(cli.ctx.fd, &req, sizeof(req)));
	EXPECT_EQ(0, cli.chan.info.chan_flags & LCHAN_CHAN_POLLER);
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
}

TEST_HARNESS_MAIN
