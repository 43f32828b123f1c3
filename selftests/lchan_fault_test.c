// SPDX-License-Identifier: GPL-2.0
/*
 * Faults: a process killed with channels, pinned memory and work in
 * flight; the RDMA device deleted (and its driver unloaded) under busy
 * channels, direct polling ones too, and under stream channels; close,
 * munmap and fork while the channel is in use.  The
 * survivor must see a disconnect and its work flushed in bounded time,
 * blocked waiters must return, and a device added afterwards must work.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <stdarg.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

FIXTURE(fault) {
	struct lchan_t_dev d;
	char netdev[32];
};

LCHAN_T_VARIANTS(fault);

FIXTURE_SETUP(fault)
{
	char name[64];

	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	lchan_t_raise_memlock();
	snprintf(name, sizeof(name), "LCHAN_%s_NETDEV",
		 strcmp(variant->kind, "siw") ? "RXE" : "SIW");
	snprintf(self->netdev, sizeof(self->netdev), "%s",
		 getenv(name) ? getenv(name) : "");
}

FIXTURE_TEARDOWN(fault)
{
}

static int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/*
 * Every CQE until the ring is quiet; returns the receives' and counts the
 * flushed ones among them (all of them when @recvs_only is false).
 */
static unsigned drain_all(struct lchan_t_ep *ep, unsigned *flushed,
			  bool recvs_only)
{
	struct lchan_cqe cqe;
	unsigned n = 0;

	*flushed = 0;
	while (!lchan_t_reap(ep, &cqe, 500)) {
		if (recvs_only && cqe.opcode != LCHAN_CQE_RECV)
			continue;
		n++;
		if (cqe.status == LCHAN_CQE_WR_FLUSH_ERR)
			(*flushed)++;
	}
	return n;
}

/*
 * The busy peer keeps at most this many SENDs unanswered: the survivor
 * answers each once it has posted a receive in its place, so a SEND never
 * finds the receives used up (on iWARP that would end the connection).
 */
#define KILL_WINDOW	16

/* Child: connect, register 1 MiB, keep sends going until killed. */
static void busy_child(const char *host, const char *port, int ready_fd)
{
	struct lchan_t_ep ep = { .slot = 4096, .nrecv = KILL_WINDOW,
				 .nsend = 8 };
	struct lchan_opts opts = { .flags = LCHAN_DEFER_ESTABLISH };
	void *big = aligned_alloc(4096, 1 << 20);
	struct lchan_mr mr;
	unsigned i = 0, answered = 0;

	if (!big || lchan_ctx_open(&ep.ctx) ||
	    lchan_connect(&ep.ctx, host, port, &opts, &ep.chan) ||
	    lchan_t_ep_prepare(&ep.ctx, &ep.chan, &ep) ||
	    lchan_mr_reg(&ep.ctx, &ep.chan, big, 1 << 20,
			 LCHAN_ACCESS_LOCAL_WRITE, &mr) ||
	    lchan_establish(&ep.chan, 10000))
		_exit(1);
	if (write(ready_fd, &ep.chan.info.id, 4) != 4)
		_exit(2);
	for (;;) {
		struct lchan_sqe *sqe = NULL;
		struct lchan_cqe *c;

		/* Answers first: their receives go back before a new SEND. */
		while (!lchan_peek_cqe(&ep.chan, &c)) {
			if (c->opcode == LCHAN_CQE_RECV) {
				answered++;
				if (lchan_t_post_recv(&ep, c->user_data))
					_exit(3);
			}
			lchan_cqe_seen(&ep.chan);
		}
		if (i - answered < KILL_WINDOW)
			sqe = lchan_get_sqe(&ep.chan);
		if (sqe) {
			lchan_prep_send(sqe, &ep.mr, lchan_t_send_slot(&ep, i),
					1000, i);
			i++;
		}
		lchan_submit(&ep.chan);
		usleep(1000);
	}
}

static void kill_peer(struct __test_metadata *_metadata,
		      struct lchan_t_dev *d)
{
	struct lchan_t_ep srv = { .slot = 4096, .nrecv = KILL_WINDOW,
				  .nsend = 1 };
	struct lchan_opts opts = { .flags = LCHAN_DEFER_ESTABLISH };
	struct lchan_listener lst;
	char port[16], dir[160];
	unsigned id, flushed, n, got = 0;
	int sync[2], status;
	double t0, took;
	pid_t pid;

	ASSERT_EQ(0, lchan_ctx_open(&srv.ctx));
	snprintf(port, sizeof(port), "%u", lchan_t_port());
	ASSERT_EQ(0, lchan_listen(&srv.ctx, d->addr, port, 1, 0, &lst));
	ASSERT_EQ(0, pipe(sync));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0)
		busy_child(d->addr, port, sync[1]);
	ASSERT_EQ(0, lchan_accept(&lst, &opts, &srv.chan));
	ASSERT_EQ(0, lchan_t_ep_prepare(&srv.ctx, &srv.chan, &srv));
	ASSERT_EQ(0, lchan_establish(&srv.chan, 10000));
	ASSERT_EQ(4, read(sync[0], &id, 4));
	snprintf(dir, sizeof(dir), "/sys/kernel/lchan/channels/%u", id);

	/* Let traffic flow, re-posting receives, then kill the sender. */
	t0 = lchan_t_now();
	while (lchan_t_now() - t0 < 0.5) {
		struct lchan_cqe cqe;

		struct lchan_sqe *sqe;

		if (lchan_t_reap(&srv, &cqe, 100))
			continue;
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status)
			TH_LOG("opcode %u", cqe.opcode);
		if (cqe.opcode != LCHAN_CQE_RECV)
			continue;	/* an answer was sent */
		got++;
		ASSERT_EQ(0, lchan_t_post_recv(&srv, cqe.user_data));
		/* Posted with the receive, after it: the peer may send again. */
		sqe = lchan_get_sqe(&srv.chan);
		ASSERT_NE(NULL, sqe);
		lchan_prep_send(sqe, &srv.mr, lchan_t_send_slot(&srv, 0), 0,
				cqe.user_data);
		lchan_submit(&srv.chan);
	}
	EXPECT_LT(0, got);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	t0 = lchan_t_now();
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	took = lchan_t_wait_down(&srv.chan, 15);
	ASSERT_GE(took, 0) TH_LOG("no disconnect seen");
	TH_LOG("survivor saw the disconnect %.2f s after the kill", took);
	/* The dead process's channel is gone: pins released with it. */
	ASSERT_EQ(0, lchan_t_wait_path(dir, 0, 10));
	TH_LOG("its channel was gone %.2f s after the kill",
	       lchan_t_now() - t0);
	n = drain_all(&srv, &flushed, true);
	/* Every posted receive completes: data still in flight, or flushed. */
	EXPECT_EQ(KILL_WINDOW, n) TH_LOG("%u receive CQEs, %u flushed", n,
					 flushed);
	lchan_listener_close(&lst);
	lchan_t_ep_close(&srv);
}

TEST_F_TIMEOUT(fault, kill9_of_a_busy_peer, 120)
{
	kill_peer(_metadata, &self->d);
	/* And again: nothing was left behind by the first. */
	kill_peer(_metadata, &self->d);
}

/* A thread parked in ENTER with no timeout. */
struct waiter {
	struct lchan_chan *chan;
	int ret;
	double took;
};

static void *wait_forever(void *arg)
{
	struct waiter *w = arg;
	double t0 = lchan_t_now();

	w->ret = lchan_submit_and_wait(w->chan, w->chan->cq.entries, -1);
	w->took = lchan_t_now() - t0;
	return NULL;
}

static void restore_device(struct __test_metadata *_metadata,
			   struct lchan_t_dev *d, const char *netdev,
			   int reload)
{
	char dir[160];

	if (reload && strcmp(d->kind, "siw"))
		sh("modprobe rdma_rxe");
	else if (reload)
		sh("insmod %s/siw.ko", getenv("LCHAN_SHARE") ?: "/mnt/host");
	ASSERT_EQ(0, sh("rdma link add %s type %s netdev %s", d->dev, d->kind,
			netdev));
	snprintf(dir, sizeof(dir), "/sys/kernel/lchan/devices/%s", d->dev);
	ASSERT_EQ(0, lchan_t_wait_path(dir, 1, 10));
}

static void device_goes(struct __test_metadata *_metadata,
			struct lchan_t_dev *d, const char *netdev,
			int unload_driver, const struct lchan_opts *opts)
{
	struct lchan_t_ep srv = { .slot = 4096, .nrecv = 16, .nsend = 16 };
	struct lchan_t_ep cli = { .slot = 4096, .nrecv = 16, .nsend = 16 };
	struct lchan_t_ep s2 = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	struct lchan_t_ep c2 = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	struct waiter w = { .chan = &cli.chan };
	struct lchan_cqe cqe;
	char path[200], buf[32];
	unsigned flushed, i;
	pthread_t thr;
	double t0, took;

	if (!*netdev)
		SKIP(return, "netdev of %s unknown", d->dev);
	ASSERT_EQ(0, lchan_t_ep_pair(&srv, &cli, d->addr, opts));
	/* Work in flight both ways, and a waiter that would never wake. */
	for (i = 0; i < 8; i++) {
		struct lchan_sqe *sqe = lchan_get_sqe(&cli.chan);

		lchan_prep_send(sqe, &cli.mr, lchan_t_send_slot(&cli, i), 512,
				i);
	}
	ASSERT_LE(0, lchan_submit(&cli.chan));
	ASSERT_EQ(0, pthread_create(&thr, NULL, wait_forever, &w));
	usleep(100000);

	t0 = lchan_t_now();
	if (unload_driver) {
		ASSERT_EQ(0, sh("rmmod %s", strcmp(d->kind, "siw") ?
				"rdma_rxe" : "siw"));
	} else {
		ASSERT_EQ(0, sh("rdma link delete %s", d->dev));
	}
	took = lchan_t_now() - t0;
	TH_LOG("device removal took %.2f s with live channels", took);
	EXPECT_LT(took, 20.0);

	/* The waiter returns; both ends are in the error state. */
	ASSERT_EQ(0, pthread_join(thr, NULL));
	EXPECT_EQ(-ENOTCONN, w.ret);
	TH_LOG("the waiter returned after %.2f s", w.took);
	snprintf(path, sizeof(path), "/sys/kernel/lchan/channels/%u/state",
		 cli.chan.info.id);
	ASSERT_EQ(0, lchan_t_read_sysfs(path, buf, sizeof(buf)));
	EXPECT_STREQ("error", buf);
	EXPECT_LE(0, lchan_t_wait_down(&srv.chan, 5));
	/* Everything posted came back, as data or flushed. */
	drain_all(&srv, &flushed, false);
	EXPECT_LE(8, flushed);
	/* Work submitted now is answered, not lost. */
	{
		struct lchan_sqe *sqe = lchan_get_sqe(&cli.chan);

		drain_all(&cli, &flushed, false);
		ASSERT_NE(NULL, sqe);
		lchan_prep_send(sqe, &cli.mr, lchan_t_send_slot(&cli, 0), 8, 77);
		ASSERT_LE(0, lchan_submit(&cli.chan));
		ASSERT_EQ(0, lchan_t_reap(&cli, &cqe, 2000));
		EXPECT_EQ(77, cqe.user_data);
		EXPECT_EQ(LCHAN_CQE_WR_FLUSH_ERR, cqe.status);
	}
	/* Deregistration after the device went is harmless. */
	EXPECT_EQ(0, lchan_mr_dereg(&cli.ctx, &cli.mr));
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);

	/* A device added afterwards works. */
	restore_device(_metadata, d, netdev, unload_driver);
	ASSERT_EQ(0, lchan_t_ep_pair(&s2, &c2, d->addr, NULL));
	{
		struct lchan_sqe *sqe = lchan_get_sqe(&c2.chan);

		lchan_t_fill(lchan_t_send_slot(&c2, 0), 5, 100);
		lchan_prep_send(sqe, &c2.mr, lchan_t_send_slot(&c2, 0), 100, 1);
		ASSERT_LE(0, lchan_submit(&c2.chan));
		ASSERT_EQ(0, lchan_t_reap(&s2, &cqe, 10000));
		EXPECT_EQ(LCHAN_CQE_OK, cqe.status);
		EXPECT_EQ(-1, lchan_t_check(lchan_t_recv_slot(&s2,
				cqe.user_data), 5, 100));
	}
	lchan_t_ep_close(&c2);
	lchan_t_ep_close(&s2);
}

TEST_F_TIMEOUT(fault, link_delete_under_busy_channels, 120)
{
	device_goes(_metadata, &self->d, self->netdev, 0, NULL);
}

/* The same with direct polling: the waiter spins in ENTER, polling. */
TEST_F_TIMEOUT(fault, link_delete_under_busy_direct_channels, 120)
{
	static const struct lchan_opts direct = { .flags = LCHAN_DIRECT_POLL };

	if (!strcmp(variant->kind, "siw"))
		SKIP(return, "iWARP has no direct polling");
	device_goes(_metadata, &self->d, self->netdev, 0, &direct);
}

TEST_F_TIMEOUT(fault, driver_unload_under_busy_channels, 120)
{
	device_goes(_metadata, &self->d, self->netdev, 1, NULL);
}

struct stream_io {
	int fd;
	bool write;
	int err;		/* errno that ended it, or 0 for EOF */
	double took;
};

/* Read or write until the stream fails or ends. */
static void *stream_io_until_end(void *p)
{
	struct stream_io *io = p;
	static char buf[65536];
	double t0 = lchan_t_now();
	ssize_t n;

	do {
		n = io->write ? send(io->fd, buf, sizeof(buf), MSG_NOSIGNAL) :
				read(io->fd, buf, sizeof(buf));
	} while (n > 0);
	io->err = n < 0 ? errno : 0;
	io->took = lchan_t_now() - t0;
	return NULL;
}

/*
 * The device goes under stream channels, a writer blocked for credits
 * (the peer's reader is not reading) and a reader blocked for bytes:
 * both return in bounded time, one of them with ECONNRESET, and the
 * sockets close cleanly; a stream after the device is back works.
 */
TEST_F_TIMEOUT(fault, link_delete_under_streams, 120)
{
	struct lchan_ctx sctx, cctx;
	struct stream_io w = { .write = true }, r = { .write = false };
	pthread_t tw, tr;
	int srv, cli;
	char c = 'x';

	if (!*self->netdev)
		SKIP(return, "netdev of %s unknown", self->d.dev);
	ASSERT_EQ(0, lchan_ctx_open(&sctx));
	ASSERT_EQ(0, lchan_ctx_open(&cctx));
	ASSERT_EQ(0, lchan_t_stream_pair(&sctx, &cctx, self->d.addr, &srv, &cli,
					 20000));
	w.fd = cli;
	r.fd = cli;
	ASSERT_EQ(0, pthread_create(&tw, NULL, stream_io_until_end, &w));
	ASSERT_EQ(0, pthread_create(&tr, NULL, stream_io_until_end, &r));
	usleep(300000);
	ASSERT_EQ(0, sh("rdma link delete %s", self->d.dev));
	ASSERT_EQ(0, pthread_join(tw, NULL));
	ASSERT_EQ(0, pthread_join(tr, NULL));
	TH_LOG("writer: %s after %.2f s; reader: %s after %.2f s",
	       strerror(w.err), w.took, strerror(r.err), r.took);
	/*
	 * The reset is told once, to whichever call comes first, as TCP's
	 * error is; then a write fails with EPIPE and a read ends at EOF.
	 */
	EXPECT_EQ(1, (w.err == ECONNRESET) + (r.err == ECONNRESET));
	EXPECT_EQ(w.err == ECONNRESET ? ECONNRESET : EPIPE, w.err);
	EXPECT_EQ(r.err == ECONNRESET ? ECONNRESET : 0, r.err);
	EXPECT_EQ(-1, send(srv, &c, 1, MSG_NOSIGNAL));
	close(cli);
	close(srv);

	restore_device(_metadata, &self->d, self->netdev, 0);
	ASSERT_EQ(0, lchan_t_stream_pair(&sctx, &cctx, self->d.addr, &srv, &cli,
					 20000));
	ASSERT_EQ(1, write(cli, &c, 1));
	EXPECT_EQ(1, read(srv, &c, 1));
	close(cli);
	close(srv);
	lchan_ctx_close(&cctx);
	lchan_ctx_close(&sctx);
}

TEST_F_TIMEOUT(fault, close_while_another_thread_waits, 60)
{
	struct lchan_t_ep srv = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	struct lchan_t_ep cli = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	struct waiter w = { .chan = &cli.chan };
	char dir[160];
	pthread_t thr;

	ASSERT_EQ(0, lchan_t_ep_pair(&srv, &cli, self->d.addr, NULL));
	snprintf(dir, sizeof(dir), "/sys/kernel/lchan/channels/%u",
		 cli.chan.info.id);
	ASSERT_EQ(0, pthread_create(&thr, NULL, wait_forever, &w));
	usleep(100000);
	/*
	 * close() does not cut a running ioctl short: the channel lives
	 * until the waiter leaves, here because the peer goes away.
	 */
	ASSERT_EQ(0, munmap(cli.chan.map, cli.chan.map_size));
	cli.chan.map = NULL;
	ASSERT_EQ(0, close(cli.chan.fd));
	EXPECT_EQ(0, access(dir, F_OK));
	lchan_t_ep_close(&srv);
	ASSERT_EQ(0, pthread_join(thr, NULL));
	EXPECT_EQ(-ENOTCONN, w.ret);
	EXPECT_LT(w.took, 15.0);
	ASSERT_EQ(0, lchan_t_wait_path(dir, 0, 10));
	cli.chan.fd = -1;
	lchan_t_ep_close(&cli);
}

TEST_F_TIMEOUT(fault, munmap_while_the_poller_runs, 60)
{
	struct lchan_t_ep srv = { .slot = 4096, .nrecv = 8, .nsend = 8 };
	struct lchan_t_ep cli = { .slot = 4096, .nrecv = 8, .nsend = 8 };
	struct lchan_cqe cqe;
	unsigned i;

	ASSERT_EQ(0, lchan_ctx_open(&srv.ctx));
	ASSERT_EQ(0, lchan_ctx_open(&cli.ctx));
	ASSERT_EQ(0, lchan_ctx_setup_poller(&cli.ctx, 5000, -1, NULL));
	ASSERT_EQ(0, lchan_t_pair(&srv.ctx, &cli.ctx, self->d.addr, NULL,
				  &srv.chan, &cli.chan, lchan_t_ep_prepare,
				  &srv, &cli));
	for (i = 0; i < 8; i++) {
		struct lchan_sqe *sqe = lchan_get_sqe(&cli.chan);

		lchan_prep_send(sqe, &cli.mr, lchan_t_send_slot(&cli, i), 64,
				i);
	}
	lchan_publish(&cli.chan);
	/* Gone from our address space; the kernel side is not affected. */
	ASSERT_EQ(0, munmap(cli.chan.map, cli.chan.map_size));
	cli.chan.map = NULL;
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, lchan_t_reap(&srv, &cqe, 10000));
		EXPECT_EQ(LCHAN_CQE_OK, cqe.status);
	}
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
}

TEST_F_TIMEOUT(fault, fork_with_mapped_rings, 60)
{
	struct lchan_t_ep srv = { .slot = 4096, .nrecv = 8, .nsend = 8 };
	struct lchan_t_ep cli = { .slot = 4096, .nrecv = 8, .nsend = 8 };
	struct lchan_cqe cqe;
	int status;
	pid_t pid;

	ASSERT_EQ(0, lchan_t_ep_pair(&srv, &cli, self->d.addr, NULL));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		unsigned char vec;
		struct lchan_mr mr;
		char page[64];

		/* The rings are not inherited ... */
		if (mincore(cli.chan.map, 4096, &vec) != -1 || errno != ENOMEM)
			_exit(1);
		/* ... and the parent's context refuses the child. */
		if (lchan_mr_reg(&cli.ctx, &cli.chan, page, sizeof(page), 0,
				 &mr) != -EPERM)
			_exit(2);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* The parent goes on as before. */
	{
		struct lchan_sqe *sqe = lchan_get_sqe(&cli.chan);

		lchan_t_fill(lchan_t_send_slot(&cli, 0), 8, 99);
		lchan_prep_send(sqe, &cli.mr, lchan_t_send_slot(&cli, 0), 99, 1);
		ASSERT_LE(0, lchan_submit(&cli.chan));
		ASSERT_EQ(0, lchan_t_reap(&srv, &cqe, 10000));
		EXPECT_EQ(LCHAN_CQE_OK, cqe.status);
		EXPECT_EQ(-1, lchan_t_check(lchan_t_recv_slot(&srv,
				cqe.user_data), 8, 99));
	}
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
}

TEST_HARNESS_MAIN
