// SPDX-License-Identifier: GPL-2.0
/*
 * Poller mode: no system call in steady traffic, sleep and wake-up
 * through NEED_WAKEUP without losing work, the administrator's pool of
 * threads serving many channels (resized and moved while they run, idle
 * once they are gone), the rule that places channels on its threads, and
 * the rules of LCHAN_IOC_CTX_SETUP.
 */
#include <dirent.h>
#include <sched.h>
#include <sys/ioctl.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

FIXTURE(poller) {
	struct lchan_t_dev d;
	char pool_cpus[256];		/* poller_cpus to restore, or "" */
};

LCHAN_T_VARIANTS(poller);

FIXTURE_SETUP(poller)
{
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	lchan_t_raise_memlock();
}

FIXTURE_TEARDOWN(poller)
{
	if (self->pool_cpus[0])
		lchan_t_set_param("poller_cpus", self->pool_cpus);
}

/* A line of the pool's sleep counters, for a failure's report. */
static const char *pool_sleeps(char *buf, size_t len)
{
	if (lchan_t_get_param("poller_sleeps", buf, len))
		snprintf(buf, len, "unknown");
	return buf;
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
	/* Every 64th and the last signal: the loop ends once all landed. */
	const unsigned signals = (total + every - 1) / every;
	char sleeps0[64], sleeps1[64];
	unsigned long long enters0;
	unsigned posted = 0, cqes = 0;
	uint8_t *dst;
	double stall;
	int ret;

	/* The promise holds where the pool has a CPU to itself. */
	LCHAN_T_POOL_OWN_CPU(self->pool_cpus);
	ret = poller_pair(&srv, &cli, self->d.addr, 5000, NULL);
	ASSERT_EQ(0, ret) TH_LOG("%s", strerror(-ret));
	ASSERT_NE(0, cli.chan.info.chan_flags & LCHAN_CHAN_POLLER);
	ASSERT_NE(0, srv.mr.rkey);
	dst = lchan_t_recv_slot(&srv, 0);
	enters0 = lchan_t_chan_attr(&cli.chan, "enters");
	pool_sleeps(sleeps0, sizeof(sleeps0));
	stall = lchan_t_now();
	/* Busy-poll the CQ ring: the only way to the kernel is the ring. */
	while (cqes < signals) {
		struct lchan_sqe *sqe;
		struct lchan_cqe *c;
		int n = 0;

		while (posted < total && (sqe = lchan_get_sqe(&cli.chan))) {
			uint8_t *p = lchan_t_send_slot(&cli, posted);

			*(uint32_t *)p = posted;
			lchan_prep_write(sqe, &cli.mr, p, 64,
					 (uintptr_t)(dst + (posted % 64) * 64),
					 srv.mr.rkey, posted);
			if ((posted + 1) % every && posted + 1 < total)
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
	EXPECT_EQ(enters0, lchan_t_chan_attr(&cli.chan, "enters"))
		TH_LOG("pool sleeps before: %s; after: %s", sleeps0,
		       pool_sleeps(sleeps1, sizeof(sleeps1)));
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

/* CPU ticks of all pool threads together, or -1. */
static long long pool_ticks(void)
{
	pid_t pids[32];
	long long sum = 0, t;
	int i, n = lchan_t_poller_pids(pids, 32);

	if (n <= 0 || n > 32)
		return -1;
	for (i = 0; i < n; i++) {
		t = lchan_t_task_ticks(pids[i]);
		if (t < 0)
			return -1;
		sum += t;
	}
	return sum;
}

/*
 * The pool's threads spend no CPU time over one second (at most two clock
 * ticks: a thread that spins would spend about all of them).
 */
static void expect_pool_idle(struct __test_metadata *_metadata)
{
	long long t0, t1;
	long hz = sysconf(_SC_CLK_TCK);

	usleep(100000);
	t0 = pool_ticks();
	sleep(1);
	t1 = pool_ticks();
	ASSERT_LE(0, t0);
	EXPECT_GE(2, t1 - t0) TH_LOG("pool threads used %lld of %ld ticks",
				     t1 - t0, hz);
}

/*
 * Eight poller contexts, half of them lending their settings to the next:
 * no thread is made for any of them, and when the last channel is gone
 * the pool's threads use no CPU.
 */
TEST_F_TIMEOUT(poller, eight_channels_no_new_thread, 300)
{
	struct lchan_t_ep srv[8], cli[8];
	int before, i, ret;

	memset(srv, 0, sizeof(srv));
	memset(cli, 0, sizeof(cli));
	before = lchan_t_poller_pids(NULL, 0);
	ASSERT_LE(1, before);
	for (i = 0; i < 8; i++) {
		srv[i] = (struct lchan_t_ep){ .slot = 4096, .nrecv = 8,
					      .nsend = 2 };
		cli[i] = (struct lchan_t_ep){ .slot = 4096, .nrecv = 2,
					      .nsend = 8 };
		ret = poller_pair(&srv[i], &cli[i], self->d.addr, 2000,
				  i % 2 ? &cli[i - 1].ctx : NULL);
		ASSERT_EQ(0, ret) TH_LOG("pair %d: %s", i, strerror(-ret));
	}
	EXPECT_EQ(before, lchan_t_poller_pids(NULL, 0));
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
	/* The pool's time is charged to the channels it served. */
	for (i = 0; i < 8; i++) {
		EXPECT_LT(0, lchan_t_chan_attr(&cli[i].chan, "poller_ns"));
		EXPECT_EQ(0, lchan_t_chan_attr(&srv[i].chan, "poller_ns"));
	}
	for (i = 7; i >= 0; i--) {
		lchan_t_ep_close(&cli[i]);
		lchan_t_ep_close(&srv[i]);
	}
	EXPECT_EQ(before, lchan_t_poller_pids(NULL, 0));
	expect_pool_idle(_metadata);
}

/* Every pool thread may run on @cpus exactly. */
static void expect_pool_cpus(struct __test_metadata *_metadata,
			     const char *cpus)
{
	pid_t pids[32];
	char buf[256];
	int i, n = lchan_t_poller_pids(pids, 32);

	ASSERT_LE(1, n);
	for (i = 0; i < n && i < 32; i++) {
		ASSERT_EQ(0, lchan_t_task_cpus(pids[i], buf, sizeof(buf)));
		EXPECT_STREQ(cpus, buf);
	}
}

/*
 * The administrator resizes the pool and moves it to other CPUs while
 * four poller channels carry traffic; bad values are refused.
 */
TEST_F_TIMEOUT(poller, pool_resized_with_live_channels, 300)
{
	struct lchan_t_ep srv[4], cli[4];
	char size0[16], cpus0[64], all[256];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int i, round;

	if (geteuid())
		SKIP(return, "needs root to set module parameters");
	ASSERT_EQ(0, lchan_t_get_param("pollers", size0, sizeof(size0)));
	ASSERT_EQ(0, lchan_t_get_param("poller_cpus", cpus0, sizeof(cpus0)));
	ASSERT_EQ(0, lchan_t_task_cpus(getpid(), all, sizeof(all)));
	memset(srv, 0, sizeof(srv));
	memset(cli, 0, sizeof(cli));
	for (i = 0; i < 4; i++) {
		srv[i] = (struct lchan_t_ep){ .slot = 4096, .nrecv = 8,
					      .nsend = 2 };
		cli[i] = (struct lchan_t_ep){ .slot = 4096, .nrecv = 2,
					      .nsend = 8 };
		ASSERT_EQ(0, poller_pair(&srv[i], &cli[i], self->d.addr, 50,
					 NULL));
	}
	EXPECT_EQ(-EINVAL, lchan_t_set_param("pollers", "0"));
	EXPECT_EQ(-EINVAL, lchan_t_set_param("pollers", "17"));
	EXPECT_EQ(-EINVAL, lchan_t_set_param("pollers", "two"));
	EXPECT_GT(0, lchan_t_set_param("poller_cpus", "100000"));
	EXPECT_GT(0, lchan_t_set_param("poller_cpus", "zero"));
	expect_pool_cpus(_metadata, all);

	for (round = 0; round < 4; round++) {
		static const char *const sizes[] = { "3", "1", "2", "1" };
		char want[24];

		ASSERT_EQ(0, lchan_t_set_param("pollers", sizes[round]));
		ASSERT_EQ(0, lchan_t_get_param("pollers", want, sizeof(want)));
		EXPECT_STREQ(sizes[round], want);
		EXPECT_EQ(atoi(sizes[round]), lchan_t_poller_pids(NULL, 0));
		/* The last CPU only, then every CPU again. */
		if (round == 1 && ncpu > 1) {
			snprintf(want, sizeof(want), "%ld", ncpu - 1);
			ASSERT_EQ(0, lchan_t_set_param("poller_cpus", want));
			expect_pool_cpus(_metadata, want);
		}
		if (round == 3) {
			ASSERT_EQ(0, lchan_t_set_param("poller_cpus", "all"));
			ASSERT_EQ(0, lchan_t_get_param("poller_cpus", want,
						       sizeof(want)));
			EXPECT_STREQ("all", want);
			expect_pool_cpus(_metadata, all);
		}
		for (i = 0; i < 4; i++)
			ASSERT_EQ(0, exchange(_metadata, &cli[i], &srv[i], 10,
					      round * 100 + i * 10))
				TH_LOG("round %d channel %d", round, i);
	}
	for (i = 0; i < 4; i++) {
		lchan_t_ep_close(&cli[i]);
		lchan_t_ep_close(&srv[i]);
	}
	EXPECT_EQ(0, lchan_t_set_param("poller_cpus", cpus0));
	EXPECT_EQ(0, lchan_t_set_param("pollers", size0));
	expect_pool_idle(_metadata);
}

/* The pool thread that serves @chan (sysfs poller), -2 when unreadable. */
static int chan_poller(const struct lchan_chan *chan)
{
	char path[160], buf[32];

	snprintf(path, sizeof(path), "/sys/kernel/lchan/channels/%u/poller",
		 chan->info.id);
	if (lchan_t_read_sysfs(path, buf, sizeof(buf)))
		return -2;
	return atoi(buf);
}

/* How many of @n client channels each of the first 4 threads serves. */
static void count_pollers(struct lchan_t_ep *cli, int n, int counts[4])
{
	int i, t;

	memset(counts, 0, 4 * sizeof(int));
	for (i = 0; i < n; i++) {
		t = chan_poller(&cli[i].chan);
		if (t >= 0 && t < 4)
			counts[t]++;
	}
}

/*
 * The rule poller_assign: by load the channels of one device spread over
 * the threads, by device they share one, and two devices take two
 * threads; changed and resized while the channels carry traffic, every
 * channel keeps working.  Doorbell channels name no thread.
 */
TEST_F_TIMEOUT(poller, pool_assigns_by_load_and_by_device, 300)
{
	struct lchan_t_ep srv[6], cli[6];
	struct lchan_t_dev other;
	char size0[16], rule0[16], buf[32];
	int counts[4], i, n, round;
	bool two_devs;

	if (geteuid())
		SKIP(return, "needs root to set module parameters");
	ASSERT_EQ(0, lchan_t_get_param("pollers", size0, sizeof(size0)));
	ASSERT_EQ(0, lchan_t_get_param("poller_assign", rule0, sizeof(rule0)));
	EXPECT_STREQ("load", rule0);
	EXPECT_EQ(-EINVAL, lchan_t_set_param("poller_assign", "numa"));
	EXPECT_EQ(-EINVAL, lchan_t_set_param("poller_assign", "loads"));
	ASSERT_EQ(0, lchan_t_set_param("pollers", "2"));
	ASSERT_EQ(0, lchan_t_set_param("poller_assign", "load"));

	two_devs = !lchan_t_dev_lookup(strcmp(variant->kind, "rxe") ?
				       "rxe" : "siw", &other);
	if (!two_devs)
		TH_LOG("one device only: the two-device grouping is not checked");
	memset(srv, 0, sizeof(srv));
	memset(cli, 0, sizeof(cli));
	for (i = 0; i < (two_devs ? 6 : 4); i++) {
		srv[i] = (struct lchan_t_ep){ .slot = 4096, .nrecv = 8,
					      .nsend = 2 };
		cli[i] = (struct lchan_t_ep){ .slot = 4096, .nrecv = 2,
					      .nsend = 8 };
		ASSERT_EQ(0, poller_pair(&srv[i], &cli[i],
					 i < 4 ? self->d.addr : other.addr,
					 50, NULL)) TH_LOG("pair %d", i);
		EXPECT_EQ(-1, chan_poller(&srv[i].chan));
	}
	n = two_devs ? 6 : 4;

	/* By load, the four of one device: two on each thread. */
	count_pollers(cli, 4, counts);
	EXPECT_EQ(2, counts[0]);
	EXPECT_EQ(2, counts[1]);

	for (round = 0; round < 4; round++) {
		static const char *const rules[] = { "device", "device",
						     "load", "device" };
		static const char *const sizes[] = { "2", "3", "3", "2" };

		ASSERT_EQ(0, lchan_t_set_param("poller_assign", rules[round]));
		ASSERT_EQ(0, lchan_t_set_param("pollers", sizes[round]));
		ASSERT_EQ(0, lchan_t_get_param("poller_assign", buf,
					       sizeof(buf)));
		EXPECT_STREQ(rules[round], buf);
		count_pollers(cli, 4, counts);
		if (!strcmp(rules[round], "device")) {
			EXPECT_LE(0, chan_poller(&cli[0].chan));
			for (i = 1; i < 4; i++)
				EXPECT_EQ(chan_poller(&cli[0].chan),
					  chan_poller(&cli[i].chan))
					TH_LOG("round %d channel %d", round, i);
			for (i = 4; i < n; i++) {
				EXPECT_NE(chan_poller(&cli[0].chan),
					  chan_poller(&cli[i].chan));
				EXPECT_EQ(chan_poller(&cli[4].chan),
					  chan_poller(&cli[i].chan));
			}
		} else {
			/* Six on three threads, or four (and two more). */
			for (i = 0; i < 3; i++)
				EXPECT_GE(2, counts[i]) TH_LOG("thread %d", i);
		}
		for (i = 0; i < n; i++)
			ASSERT_EQ(0, exchange(_metadata, &cli[i], &srv[i], 10,
					      round * 100 + i * 10))
				TH_LOG("round %d channel %d", round, i);
	}
	for (i = 0; i < n; i++) {
		lchan_t_ep_close(&cli[i]);
		lchan_t_ep_close(&srv[i]);
	}
	EXPECT_EQ(0, lchan_t_set_param("poller_assign", rule0));
	EXPECT_EQ(0, lchan_t_set_param("pollers", size0));
	expect_pool_idle(_metadata);
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
	unsigned i;
	int ret;

	LCHAN_T_POOL_PLACE(self->pool_cpus, 0, 0);
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

/* The pool's sleeps for a busy CPU so far, or -1. */
static long long pool_pressure_sleeps(void)
{
	char buf[64];
	long long idle, pressure;

	if (lchan_t_get_param("poller_sleeps", buf, sizeof(buf)) ||
	    sscanf(buf, "idle %lld pressure %lld", &idle, &pressure) != 2)
		return -1;
	return pressure;
}

/*
 * For a failure's report: the first pool thread's schedstat (ns on the
 * CPU, ns waiting for it, slices) and CPU 0's user ticks.
 */
static const char *pool_cpu0(char *buf, size_t len)
{
	char path[64], stat[128] = "?", line[256];
	unsigned long long user = 0;
	pid_t pid;
	FILE *f;

	if (lchan_t_poller_pids(&pid, 1) >= 1) {
		snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
		lchan_t_read_sysfs(path, stat, sizeof(stat));
	}
	f = fopen("/proc/stat", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "cpu0 %llu", &user) == 1)
			break;
	if (f)
		fclose(f);
	snprintf(buf, len, "pool schedstat %s, cpu0 user %llu", stat, user);
	return buf;
}

/*
 * A user task that keeps this CPU busy for @secs, then exits.  It spins in
 * user mode: the clock is a system call in the guest (its TSC is marked
 * unstable), so it is read only now and then.
 */
static pid_t spin_child(double secs)
{
	pid_t pid = fork();

	if (!pid) {
		double end = lchan_t_now() + secs;
		volatile unsigned long n = 0;

		while (lchan_t_now() < end)
			for (unsigned i = 0; i < 1000000; i++)
				n++;
		_exit(0);
	}
	return pid;
}

/*
 * Whether the pool thread serving @ep spins (NEED_WAKEUP down) within
 * @secs.  Asleep for a busy CPU it looks for a free one every few ms.
 */
static bool pool_spins_within(struct lchan_t_ep *ep, double secs)
{
	double until = lchan_t_now() + secs;

	while (*ep->chan.sq.kflags & LCHAN_SQ_NEED_WAKEUP) {
		if (lchan_t_now() >= until)
			return false;
		usleep(5000);
	}
	return true;
}

/*
 * A pool thread that shares its CPU with a busy user task gives the CPU
 * up: it sleeps (the applications' ENTER posts, as in doorbell mode),
 * spends next to no CPU time while the task runs, traffic still flows,
 * and once the CPU is its own again (the task gone, this process moved
 * away) the thread spins again without being kicked.
 */
TEST_F_TIMEOUT(poller, busy_cpu_given_up_and_taken_back, 120)
{
	struct lchan_t_ep srv = { .slot = 4096, .nrecv = 16, .nsend = 4 };
	struct lchan_t_ep cli = { .slot = 4096, .nrecv = 4, .nsend = 16 };
	long hz = sysconf(_SC_CLK_TCK);
	long long pressure0, t0, t1;
	char snap0[256], snap1[256];
	unsigned long long enters;
	cpu_set_t other;
	pid_t child;
	int ret;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs a CPU to give back to the pool");
	LCHAN_T_POOL_PLACE(self->pool_cpus, 0, 0);
	ret = poller_pair(&srv, &cli, self->d.addr, 5000, NULL);
	ASSERT_EQ(0, ret) TH_LOG("%s", strerror(-ret));
	/*
	 * Whatever the thread did while the pair was set up on its CPU (it
	 * may have gone to sleep for it), it is first made to give the CPU
	 * up, and must take it back while this process only sleeps there.
	 */
	child = spin_child(0.5);
	ASSERT_LT(0, child);
	ASSERT_EQ(0, exchange(_metadata, &cli, &srv, 10, 0));
	ASSERT_EQ(child, waitpid(child, NULL, 0));
	ASSERT_TRUE(pool_spins_within(&cli, 2.0))
		TH_LOG("the pool did not take back a CPU where only a sleeper"
		       " runs; sleeps: %s", pool_sleeps(snap0, sizeof(snap0)));
	/* It spins now: its next sleep is the one the busy task causes. */
	pressure0 = pool_pressure_sleeps();
	ASSERT_LE(0, pressure0);

	child = spin_child(6.0);
	ASSERT_LT(0, child);
	ASSERT_EQ(0, exchange(_metadata, &cli, &srv, 50, 0));
	usleep(300000);
	EXPECT_NE(0, *cli.chan.sq.kflags & LCHAN_SQ_NEED_WAKEUP)
		TH_LOG("the pool still spins beside a busy task");
	EXPECT_LT(pressure0, pool_pressure_sleeps())
		TH_LOG("no sleep for a busy CPU since the pool spun (%lld);"
		       " sleeps: %s", pressure0,
		       pool_sleeps(snap0, sizeof(snap0)));
	/* A thread that kept spinning would take about half the ticks. */
	t0 = pool_ticks();
	pool_cpu0(snap0, sizeof(snap0));
	sleep(1);
	t1 = pool_ticks();
	ASSERT_LE(0, t0);
	EXPECT_GE(hz / 10, t1 - t0) TH_LOG("pool threads used %lld of %ld ticks"
					   " beside a busy task; before: %s;"
					   " after: %s", t1 - t0, hz, snap0,
					   pool_cpu0(snap1, sizeof(snap1)));
	enters = lchan_t_chan_attr(&cli.chan, "enters");
	ASSERT_EQ(0, exchange(_metadata, &cli, &srv, 50, 1000));
	EXPECT_LT(enters, lchan_t_chan_attr(&cli.chan, "enters"));

	kill(child, SIGKILL);
	ASSERT_EQ(child, waitpid(child, NULL, 0));
	/* This process leaves too: the CPU is the pool's alone. */
	CPU_ZERO(&other);
	CPU_SET(1, &other);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(other), &other));
	/* Its CPU free, the thread finds it within a few looks. */
	EXPECT_TRUE(pool_spins_within(&cli, 2.0))
		TH_LOG("the pool did not take its free CPU back");
	enters = lchan_t_chan_attr(&cli.chan, "enters");
	ASSERT_EQ(0, exchange(_metadata, &cli, &srv, 50, 2000));
	EXPECT_EQ(enters, lchan_t_chan_attr(&cli.chan, "enters"));
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
}

static int setup_ioctl(int fd, struct lchan_ctx_setup_args *req, unsigned size)
{
	req->size = size;
	return ioctl(fd, LCHAN_IOC_CTX_SETUP, req) ? -errno : 0;
}

TEST_F_TIMEOUT(poller, ctx_setup_rules, 120)
{
	struct lchan_t_ep srv = { .slot = 4096, .nrecv = 2, .nsend = 2 };
	struct lchan_t_ep cli = { .slot = 4096, .nrecv = 2, .nsend = 2 };
	struct lchan_ctx_setup_args req;
	struct lchan_ctx a, b;
	char big[sizeof(req) + 8];

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
	((struct lchan_ctx_setup_args *)big)->size = sizeof(big);
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
	/* CPU 0 (a CPU the caller may use), then once only. */
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
