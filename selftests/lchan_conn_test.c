// SPDX-License-Identifier: GPL-2.0
/*
 * Connections: IPv4 and IPv6, refused and unreachable peers reported
 * promptly, receives posted at establish, many channels between two
 * processes, the RC timing asked for (lchan_rc_params) in force; the
 * library's address conversion (no device needed).
 */
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

FIXTURE(conn) {
	struct lchan_t_dev d;
};

LCHAN_T_VARIANTS(conn);

FIXTURE_SETUP(conn)
{
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	lchan_t_raise_memlock();
}

FIXTURE_TEARDOWN(conn)
{
}

/* Connect a pair over @host and check what both ends report. */
static void check_pair(struct __test_metadata *_metadata, const char *host,
		       int family, const char *dev)
{
	struct lchan_t_ep srv = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	struct lchan_t_ep cli = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	char path[200], buf[64];
	int ret;

	ret = lchan_t_ep_pair(&srv, &cli, host, NULL);
	ASSERT_EQ(0, ret) TH_LOG("pair over %s: %s", host, strerror(-ret));
	EXPECT_EQ(LCHAN_STATE_CONNECTED, lchan_chan_state(&cli.chan));
	EXPECT_EQ(LCHAN_STATE_CONNECTED, lchan_chan_state(&srv.chan));
	EXPECT_EQ(family, cli.chan.info.remote.family);
	EXPECT_EQ(family, srv.chan.info.local.family);
	EXPECT_EQ(0, memcmp(cli.chan.info.remote.addr, srv.chan.info.local.addr,
			    16));
	EXPECT_EQ(cli.chan.info.remote.port, srv.chan.info.local.port);
	EXPECT_EQ(cli.chan.info.local.port, srv.chan.info.remote.port);
	if (cli.chan.info.features & LCHAN_FEATURE_SEND_IMM) {
		EXPECT_EQ(cli.chan.info.remote_qpn, srv.chan.info.local_qpn);
		EXPECT_EQ(srv.chan.info.remote_qpn, cli.chan.info.local_qpn);
	} else {
		/* iWARP peers are TCP connections: no QP number is sent. */
		EXPECT_EQ(0, cli.chan.info.remote_qpn);
		EXPECT_EQ(0, srv.chan.info.remote_qpn);
	}
	snprintf(path, sizeof(path), "/sys/kernel/lchan/channels/%u/device",
		 cli.chan.info.id);
	ASSERT_EQ(0, lchan_t_read_sysfs(path, buf, sizeof(buf)));
	EXPECT_STREQ(dev, buf);
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
}

TEST_F_TIMEOUT(conn, ipv4, 60)
{
	check_pair(_metadata, self->d.addr, AF_INET, self->d.dev);
}

TEST_F_TIMEOUT(conn, ipv6, 60)
{
	if (!*self->d.addr6)
		SKIP(return, "no IPv6 address for %s", self->d.dev);
	check_pair(_metadata, self->d.addr6, AF_INET6, self->d.dev);
}

TEST_F_TIMEOUT(conn, refused_promptly, 60)
{
	struct lchan_opts opts = { .timeout_ms = 8000 };
	struct lchan_ctx ctx;
	struct lchan_chan chan;
	char port[16];
	double t0;
	int ret;

	ASSERT_EQ(0, lchan_ctx_open(&ctx));
	snprintf(port, sizeof(port), "%u", lchan_t_port());
	t0 = lchan_t_now();
	ret = lchan_connect(&ctx, self->d.addr, port, &opts, &chan);
	EXPECT_EQ(-ECONNREFUSED, ret) TH_LOG("got %s", strerror(-ret));
	/* Well before the timeout: a refusal is an answer, not silence. */
	EXPECT_LT(lchan_t_now() - t0, 4.0);
	lchan_ctx_close(&ctx);
}

/* The id of the channel whose remote port is @port and state @state, or -1. */
static long sysfs_chan_with(unsigned port, const char *state)
{
	DIR *d = opendir("/sys/kernel/lchan/channels");
	char path[300], buf[64];
	struct dirent *de;
	long id = -1;

	if (!d)
		return -1;
	while (id < 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path),
			 "/sys/kernel/lchan/channels/%s/remote_port",
			 de->d_name);
		if (lchan_t_read_sysfs(path, buf, sizeof(buf)) ||
		    strtoul(buf, NULL, 10) != port)
			continue;
		snprintf(path, sizeof(path),
			 "/sys/kernel/lchan/channels/%s/state", de->d_name);
		if (!lchan_t_read_sysfs(path, buf, sizeof(buf)) &&
		    !strcmp(buf, state))
			id = strtol(de->d_name, NULL, 10);
	}
	closedir(d);
	return id;
}

/*
 * A channel shows in sysfs while its connect waits for the peer, and a
 * connect that fails takes its directory away: the listener here never
 * accepts, so the connect times out.
 */
TEST_F_TIMEOUT(conn, connecting_channel_in_sysfs_until_it_fails, 60)
{
	struct lchan_t_peer peer = { .host = self->d.addr, .timeout_ms = 3000 };
	struct lchan_listener lst;
	struct lchan_ctx ctx;
	char dir[64];
	pthread_t thr;
	unsigned port;
	double end;
	long id = -1;

	ASSERT_EQ(0, lchan_ctx_open(&ctx));
	port = lchan_t_port();
	snprintf(peer.port, sizeof(peer.port), "%u", port);
	ASSERT_EQ(0, lchan_listen(&ctx, self->d.addr, peer.port, 4, 0, &lst));
	ASSERT_EQ(0, lchan_ctx_open(&peer.ctx));
	ASSERT_EQ(0, pthread_create(&thr, NULL, lchan_t_peer_connect, &peer));
	for (end = lchan_t_now() + 2.5; id < 0 && lchan_t_now() < end;
	     usleep(10000))
		id = sysfs_chan_with(port, "connecting");
	pthread_join(thr, NULL);
	EXPECT_LE(0, id) TH_LOG("no channel to port %u in sysfs while it connected",
				port);
	EXPECT_NE(0, peer.ret) TH_LOG("connected without an accept");
	if (id >= 0) {
		snprintf(dir, sizeof(dir), "/sys/kernel/lchan/channels/%ld",
			 id);
		EXPECT_NE(0, access(dir, F_OK)) TH_LOG("%s is still there after "
						       "the connect failed (%s)",
						       dir, strerror(-peer.ret));
	}
	lchan_ctx_close(&peer.ctx);
	lchan_listener_close(&lst);
	lchan_ctx_close(&ctx);
}

TEST_F_TIMEOUT(conn, unreachable_bounded, 60)
{
	struct lchan_opts opts = { .timeout_ms = 3000 };
	struct lchan_ctx ctx;
	struct lchan_chan chan;
	double t0, took;
	int ret;

	ASSERT_EQ(0, lchan_ctx_open(&ctx));
	t0 = lchan_t_now();
	/* TEST-NET-2: no route and no RDMA device owns it. */
	ret = lchan_connect(&ctx, "198.18.7.7", "4791", &opts, &chan);
	took = lchan_t_now() - t0;
	EXPECT_TRUE(ret == -ENETUNREACH || ret == -EHOSTUNREACH ||
		    ret == -ETIMEDOUT || ret == -EADDRNOTAVAIL ||
		    ret == -ENODEV) TH_LOG("got %d %s", ret, strerror(-ret));
	EXPECT_LT(took, 5.0) TH_LOG("took %.1f s", took);
	lchan_ctx_close(&ctx);
}

/* The device's channels count (devices/<dev>/channels). */
static long dev_channels(const char *dev)
{
	char path[160], buf[32];

	snprintf(path, sizeof(path), "/sys/kernel/lchan/devices/%s/channels",
		 dev);
	if (lchan_t_read_sysfs(path, buf, sizeof(buf)))
		return -1;
	return strtol(buf, NULL, 10);
}

/*
 * A listener that never accepts: the connect's timeout ends the call and
 * a close of a channel still connecting returns at once, although on
 * iWARP the request stays out until the provider's own timeout or the
 * peer's answer.  The channels end once answered.
 */
TEST_F_TIMEOUT(conn, timeout_and_close_do_not_wait_for_an_answer, 90)
{
	struct lchan_opts opts = { .timeout_ms = 1000 };
	struct lchan_opts nb = { .flags = LCHAN_FD_NONBLOCK };
	struct lchan_listener lst;
	struct lchan_ctx ctx, sctx;
	struct lchan_chan chan;
	long before, now = -1;
	double t0, took, end;
	char port[16];
	int ret;

	ASSERT_EQ(0, lchan_ctx_open(&sctx));
	ASSERT_EQ(0, lchan_ctx_open(&ctx));
	snprintf(port, sizeof(port), "%u", lchan_t_port());
	ASSERT_EQ(0, lchan_listen(&sctx, self->d.addr, port, 4, 0, &lst));
	before = dev_channels(self->d.dev);
	ASSERT_LE(0, before);

	t0 = lchan_t_now();
	ret = lchan_connect(&ctx, self->d.addr, port, &opts, &chan);
	took = lchan_t_now() - t0;
	EXPECT_EQ(-ETIMEDOUT, ret) TH_LOG("got %d %s", ret, strerror(-ret));
	/* One second for timer ticks and emulation. */
	EXPECT_LT(took, 2.0) TH_LOG("a 1 s connect took %.1f s", took);

	ret = lchan_connect(&ctx, self->d.addr, port, &nb, &chan);
	ASSERT_EQ(-EINPROGRESS, ret) TH_LOG("got %d %s", ret, strerror(-ret));
	usleep(200000);
	t0 = lchan_t_now();
	EXPECT_EQ(0, lchan_chan_close(&chan));
	took = lchan_t_now() - t0;
	EXPECT_LT(took, 1.0) TH_LOG("closing a connecting channel took %.1f s",
				    took);

	/* Refused with the listener: both requests are answered. */
	lchan_listener_close(&lst);
	for (end = lchan_t_now() + 20; lchan_t_now() < end; usleep(20000)) {
		now = dev_channels(self->d.dev);
		if (now == before)
			break;
	}
	EXPECT_EQ(before, now) TH_LOG("%s still counts %ld channels, %ld before",
				      self->d.dev, now, before);
	lchan_ctx_close(&ctx);
	lchan_ctx_close(&sctx);
}

TEST_F_TIMEOUT(conn, connect_defaults_and_nonblocking_accept, 60)
{
	struct lchan_ctx ctx;
	struct lchan_listener lst;
	struct lchan_chan chan;
	char port[16];

	ASSERT_EQ(0, lchan_ctx_open(&ctx));
	snprintf(port, sizeof(port), "%u", lchan_t_port());
	ASSERT_EQ(0, lchan_listen(&ctx, self->d.addr, port, 0,
				  LCHAN_FD_NONBLOCK, &lst));
	EXPECT_EQ(atoi(port), lst.addr.port);
	/* Nobody connects: a non-blocking accept says so at once. */
	EXPECT_EQ(-EAGAIN, lchan_accept(&lst, NULL, &chan));
	/* A second listener on the same address and port is refused. */
	{
		struct lchan_listener dup;

		EXPECT_EQ(-EADDRINUSE, lchan_listen(&ctx, self->d.addr, port,
						    0, 0, &dup));
	}
	lchan_listener_close(&lst);
	lchan_ctx_close(&ctx);
}

/*
 * A connecting channel takes its local port from the ephemeral range
 * (rdma_cm shares it with TCP): a listener asking for that port is
 * refused.  Tests that pick their own ports stay below that range, and a
 * pair listens on port 0 and connects to the port read back.
 */
TEST_F_TIMEOUT(conn, listen_refused_on_a_connected_local_port, 60)
{
	struct lchan_t_ep srv = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	struct lchan_t_ep cli = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	struct lchan_listener lst;
	unsigned low, high, i;
	char port[16];
	int ret;

	ASSERT_EQ(0, lchan_t_ephemeral_range(&low, &high));
	for (i = 0; i < 64; i++)
		ASSERT_LT(lchan_t_port(), low);
	ret = lchan_t_ep_pair(&srv, &cli, self->d.addr, NULL);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
	EXPECT_GE(cli.chan.info.local.port, low);
	EXPECT_LE(cli.chan.info.local.port, high);
	EXPECT_GE(srv.chan.info.local.port, low) TH_LOG("pair listened on %u",
						       srv.chan.info.local.port);
	snprintf(port, sizeof(port), "%u", cli.chan.info.local.port);
	ret = lchan_listen(&srv.ctx, self->d.addr, port, 0, 0, &lst);
	EXPECT_EQ(-EADDRINUSE, ret) TH_LOG("got %s", strerror(-ret));
	if (!ret)
		lchan_listener_close(&lst);
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
}

/*
 * lchan_addr to and from socket addresses: every field lands where the
 * other side has it, in its byte order, the rest zero; a family that is
 * neither IPv4 nor IPv6 is refused and leaves nothing behind.
 */
TEST(addr_sockaddr_round_trip)
{
	static const uint8_t v6[16] = { 0xfe, 0x80, [14] = 0x12, [15] = 0x34 };
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(18515),
		.sin_addr.s_addr = htonl(0xc0000201),	/* 192.0.2.1 */
	};
	struct sockaddr_in6 sin6 = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(4791),
		.sin6_scope_id = 3,
	};
	struct sockaddr_storage ss, zero_ss = { 0 };
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct lchan_addr a, zero_a = { 0 };
	char text[64];

	ASSERT_EQ(0, lchan_addr_from_sockaddr((struct sockaddr *)&sin, &a));
	EXPECT_EQ(AF_INET, a.family);
	EXPECT_EQ(18515, a.port);
	EXPECT_EQ(0, a.scope_id);
	ASSERT_EQ(0, lchan_addr_format(&a, text, sizeof(text)));
	EXPECT_STREQ("192.0.2.1:18515", text);
	memset(&ss, 0xff, sizeof(ss));
	ASSERT_EQ((int)sizeof(sin), lchan_addr_to_sockaddr(&a, &ss));
	EXPECT_EQ(0, memcmp(&ss, &sin, sizeof(sin)));
	EXPECT_EQ(0, memcmp((char *)&ss + sizeof(sin),
			    (char *)&zero_ss + sizeof(sin),
			    sizeof(ss) - sizeof(sin)));

	memcpy(&sin6.sin6_addr, v6, 16);
	ASSERT_EQ(0, lchan_addr_from_sockaddr((struct sockaddr *)&sin6, &a));
	EXPECT_EQ(AF_INET6, a.family);
	EXPECT_EQ(4791, a.port);
	EXPECT_EQ(3, a.scope_id);
	EXPECT_EQ(0, memcmp(a.addr, v6, 16));
	memset(&ss, 0xff, sizeof(ss));
	ASSERT_EQ((int)sizeof(sin6), lchan_addr_to_sockaddr(&a, &ss));
	EXPECT_EQ(0, memcmp(&ss, &sin6, sizeof(sin6)));

	memset(&a, 0xff, sizeof(a));
	EXPECT_EQ(-EAFNOSUPPORT,
		  lchan_addr_from_sockaddr((struct sockaddr *)&sun, &a));
	EXPECT_EQ(0, memcmp(&a, &zero_a, sizeof(a)));
	memset(&ss, 0xff, sizeof(ss));
	EXPECT_EQ(-EAFNOSUPPORT, lchan_addr_to_sockaddr(&zero_a, &ss));
	EXPECT_EQ(0, memcmp(&ss, &zero_ss, sizeof(ss)));
}

/* The device's transport is iWARP: RC timing belongs to TCP there. */
static bool dev_is_iwarp(struct __test_metadata *_metadata, const char *dev)
{
	char path[200], buf[32];

	snprintf(path, sizeof(path), "/sys/kernel/lchan/devices/%s/transport",
		 dev);
	EXPECT_EQ(0, lchan_t_read_sysfs(path, buf, sizeof(buf)));
	return !strcmp(buf, "iWARP");
}

/* A TCP socket bound to @port without reuse, as most programs bind. */
static int hold_tcp_port(unsigned port)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
	};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/*
 * Hold @n consecutive ports of [@low, @high] that no TCP socket has, in
 * @fds, and return the first (or -EADDRINUSE).  A connection closed less
 * than a minute ago (by an earlier run of the same test, say) keeps its
 * port in TIME_WAIT, which a bind without reuse cannot share.
 */
static int hold_free_ports(unsigned low, unsigned high, int *fds, unsigned n)
{
	unsigned start = low, i;

	while (start + n - 1 <= high) {
		for (i = 0; i < n; i++) {
			fds[i] = hold_tcp_port(start + i);
			if (fds[i] < 0)
				break;
		}
		if (i == n)
			return start;
		/* Past the port that is taken. */
		start += i + 1;
		while (i--)
			close(fds[i]);
	}
	return -EADDRINUSE;
}

static int write_port_range(unsigned low, unsigned high)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "w");
	int ret;

	if (!f)
		return -errno;
	ret = fprintf(f, "%u %u\n", low, high) < 0 ? -EIO : 0;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

#define RANGE_PORTS	20
#define HELD_PORTS	12
#define HOLD_CHANNELS	3

/*
 * rdma_cm chooses a connecting channel's local port, and a listener's
 * asked as port 0, in its own port space, and an iWARP device binds a TCP
 * socket to it.  With twelve of twenty ephemeral ports held by TCP sockets
 * that do not allow reuse, three pairs (a listener and a connect each, six
 * ports) all connect, on ports TCP lets the device have.  (Other devices
 * do not use TCP's ports: the same pairs connect there too.)  The twenty
 * are twenty no socket has when the test begins.
 * Only EXPECTs until the range is restored: it is the whole guest's.
 */
TEST_F_TIMEOUT(conn, connect_avoids_ports_tcp_holds, 120)
{
	struct lchan_t_ep srv[HOLD_CHANNELS] = { 0 }, cli[HOLD_CHANNELS] = { 0 };
	bool iwarp = dev_is_iwarp(_metadata, self->d.dev);
	int held[RANGE_PORTS];
	unsigned low, high, i, port;
	int ret, first;

	ASSERT_EQ(0, lchan_t_ephemeral_range(&low, &high));
	first = hold_free_ports(low, high, held, RANGE_PORTS);
	ASSERT_LE(0, first) TH_LOG("no %u free ports in %u-%u", RANGE_PORTS,
				   low, high);
	for (i = HELD_PORTS; i < RANGE_PORTS; i++)
		close(held[i]);
	ret = write_port_range(first, first + RANGE_PORTS - 1);
	EXPECT_EQ(0, ret) TH_LOG("ip_local_port_range: %s", strerror(-ret));
	for (i = 0; !ret && i < HOLD_CHANNELS; i++) {
		srv[i] = (struct lchan_t_ep){ .slot = 4096, .nrecv = 4, .nsend = 4 };
		cli[i] = srv[i];
		ret = lchan_t_ep_pair(&srv[i], &cli[i], self->d.addr, NULL);
		EXPECT_EQ(0, ret) TH_LOG("connect %u of %u: %s", i + 1,
					 HOLD_CHANNELS, strerror(-ret));
		if (ret) {
			TH_LOG("range %u-%u, %u held from %u; TCP's sockets:",
			       first, first + RANGE_PORTS - 1, HELD_PORTS,
			       first);
			lchan_t_dump_tcp();
			break;
		}
		port = cli[i].chan.info.local.port;
		EXPECT_GE(port, first);
		EXPECT_LT(port, first + RANGE_PORTS);
		if (iwarp) {
			EXPECT_GE(port, first + HELD_PORTS)
				TH_LOG("connect %u on port %u, which TCP holds",
				       i + 1, port);
			port = srv[i].chan.info.local.port;
			EXPECT_GE(port, first + HELD_PORTS)
				TH_LOG("listener %u on port %u, which TCP holds",
				       i + 1, port);
		}
	}
	ret = write_port_range(low, high);
	EXPECT_EQ(0, ret) TH_LOG("restore ip_local_port_range %u %u: %s",
				 low, high, strerror(-ret));
	for (i = 0; i < HOLD_CHANNELS; i++) {
		lchan_t_ep_close(&cli[i]);
		lchan_t_ep_close(&srv[i]);
	}
	for (i = 0; i < HELD_PORTS; i++)
		close(held[i]);
}

/* Connect and accept both ask; sysfs shows it on both ends. */
TEST_F_TIMEOUT(conn, rc_timing_in_force, 60)
{
	struct lchan_opts opts = { .flags = LCHAN_OPTS_RC, .ack_timeout = 14,
				   .retry_count = 3 };
	struct lchan_t_ep srv = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	struct lchan_t_ep cli = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	bool iwarp;
	int ret;

	iwarp = dev_is_iwarp(_metadata, self->d.dev);
	ret = lchan_t_ep_pair(&srv, &cli, self->d.addr, &opts);
	if (iwarp) {
		/* The connecting side refuses before it sends a request. */
		EXPECT_EQ(-EOPNOTSUPP, ret) TH_LOG("got %s", strerror(-ret));
	} else {
		ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
		EXPECT_EQ(14, lchan_t_chan_attr(&cli.chan, "ack_timeout"));
		EXPECT_EQ(3, lchan_t_chan_attr(&cli.chan, "retry_count"));
		EXPECT_EQ(14, lchan_t_chan_attr(&srv.chan, "ack_timeout"));
		EXPECT_EQ(3, lchan_t_chan_attr(&srv.chan, "retry_count"));
	}
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);

	/* Without the option: the defaults, or nothing on iWARP. */
	memset(&srv, 0, sizeof(srv));
	memset(&cli, 0, sizeof(cli));
	srv = (struct lchan_t_ep){ .slot = 4096, .nrecv = 4, .nsend = 4 };
	cli = (struct lchan_t_ep){ .slot = 4096, .nrecv = 4, .nsend = 4 };
	ret = lchan_t_ep_pair(&srv, &cli, self->d.addr, NULL);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
	EXPECT_EQ(iwarp ? 0 : 18, lchan_t_chan_attr(&cli.chan, "ack_timeout"));
	EXPECT_EQ(iwarp ? 0 : 6, lchan_t_chan_attr(&cli.chan, "retry_count"));
	EXPECT_EQ(iwarp ? 0 : 18, lchan_t_chan_attr(&srv.chan, "ack_timeout"));
	EXPECT_EQ(iwarp ? 0 : 6, lchan_t_chan_attr(&srv.chan, "retry_count"));
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
}

/*
 * Each end's timing is its own, not negotiated: a server that asks gets
 * it while its client keeps the defaults.  On iWARP the asking accept is
 * refused and so is the client.
 */
TEST_F_TIMEOUT(conn, rc_timing_accept_side, 60)
{
	struct lchan_opts opts = { .flags = LCHAN_OPTS_RC, .ack_timeout = 20,
				   .retry_count = 7 };
	struct lchan_opts copts = { .timeout_ms = 8000 };
	struct lchan_listener lst;
	struct lchan_chan chan;
	struct lchan_ctx ctx;
	struct pollfd pfd;
	char port[16];
	int sync[2];
	bool iwarp;
	pid_t pid;
	int ret;

	iwarp = dev_is_iwarp(_metadata, self->d.dev);
	ASSERT_EQ(0, pipe(sync));
	ASSERT_EQ(0, lchan_ctx_open(&ctx));
	snprintf(port, sizeof(port), "%u", lchan_t_port());
	ASSERT_EQ(0, lchan_listen(&ctx, self->d.addr, port, 1,
				  LCHAN_FD_NONBLOCK, &lst));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct lchan_ctx cctx;
		struct lchan_chan cchan;
		char b;

		close(sync[1]);
		if (lchan_ctx_open(&cctx))
			_exit(lchan_t_child_fail(1, "ctx"));
		ret = lchan_connect(&cctx, self->d.addr, port, &copts, &cchan);
		if (iwarp)
			_exit(ret ? 0 : lchan_t_child_fail(2, "connected"));
		if (ret)
			_exit(lchan_t_child_fail(3, "connect: %d", ret));
		if (lchan_t_chan_attr(&cchan, "ack_timeout") != 18 ||
		    lchan_t_chan_attr(&cchan, "retry_count") != 6)
			_exit(lchan_t_child_fail(4, "client's not the defaults"));
		/* Until the server has looked at its end. */
		if (read(sync[0], &b, 1) < 0)
			_exit(lchan_t_child_fail(5, "read"));
		lchan_chan_close(&cchan);
		_exit(0);
	}
	close(sync[0]);
	pfd = (struct pollfd){ .fd = lst.fd, .events = POLLIN };
	EXPECT_EQ(1, poll(&pfd, 1, 10000));
	ret = lchan_accept(&lst, &opts, &chan);
	if (iwarp) {
		EXPECT_EQ(-EOPNOTSUPP, ret) TH_LOG("got %s", strerror(-ret));
	} else {
		EXPECT_EQ(0, ret) TH_LOG("accept: %s", strerror(-ret));
		if (!ret) {
			EXPECT_EQ(20, lchan_t_chan_attr(&chan, "ack_timeout"));
			EXPECT_EQ(7, lchan_t_chan_attr(&chan, "retry_count"));
		}
	}
	close(sync[1]);
	EXPECT_EQ(0, lchan_t_wait_child(pid));
	if (!iwarp && !ret)
		lchan_chan_close(&chan);
	lchan_listener_close(&lst);
	lchan_ctx_close(&ctx);
}

#define NCHAN 16

/* Child: connect NCHAN channels, send one message on each, wait. */
static int many_client(const char *host, const char *port, int go_fd)
{
	struct lchan_t_ep ep[NCHAN];
	struct lchan_opts opts = { .sq_entries = 4, .rq_entries = 4 };
	struct lchan_cqe cqe;
	struct lchan_ctx ctx;
	char c;
	int i;

	memset(ep, 0, sizeof(ep));
	if (lchan_ctx_open(&ctx))
		return 1;
	for (i = 0; i < NCHAN; i++) {
		struct lchan_sqe *sqe;

		ep[i].slot = 4096;
		ep[i].nrecv = 1;
		ep[i].nsend = 1;
		if (lchan_connect(&ctx, host, port, &opts, &ep[i].chan))
			return 2;
		if (lchan_t_ep_prepare(&ctx, &ep[i].chan, &ep[i]))
			return 3;
		sqe = lchan_get_sqe(&ep[i].chan);
		if (!sqe)
			return 4;
		lchan_t_fill(lchan_t_send_slot(&ep[i], 0), i, 1000 + i);
		lchan_prep_send(sqe, &ep[i].mr, lchan_t_send_slot(&ep[i], 0),
				1000 + i, i);
		if (lchan_submit(&ep[i].chan) < 0)
			return 5;
	}
	for (i = 0; i < NCHAN; i++) {
		ep[i].ctx.fd = -1;
		if (lchan_t_reap(&ep[i], &cqe, 20000) || cqe.status)
			return 6;
	}
	/* Stay connected until the parent has looked. */
	if (read(go_fd, &c, 1) != 1)
		return 7;
	return 0;
}

/* One SEND from @cli that @srv receives, its receive posted again. */
static int keepalive_round(struct lchan_t_ep *srv, struct lchan_t_ep *cli,
			   unsigned i)
{
	struct lchan_sqe *sqe = lchan_get_sqe(&cli->chan);
	struct lchan_cqe cqe;
	int ret;

	if (!sqe)
		return -ENOSPC;
	lchan_prep_send(sqe, &cli->mr, lchan_t_send_slot(cli, 0), 64, i);
	ret = lchan_submit(&cli->chan);
	if (ret < 0)
		return ret;
	ret = lchan_t_reap(cli, &cqe, 5000);
	if (ret || cqe.status)
		return ret ?: -EIO;
	ret = lchan_t_reap(srv, &cqe, 5000);
	if (ret || cqe.status)
		return ret ?: -EIO;
	ret = lchan_t_post_recv(srv, i);
	if (ret)
		return ret;
	ret = lchan_submit(&srv->chan);
	return ret < 0 ? ret : 0;
}

/*
 * A keepalive on both ends: sysfs shows it; an idle channel is probed
 * every period, the live peer answers, and it stays connected with no CQE
 * (no false alarm); while traffic flows no probe is sent.
 */
TEST_F_TIMEOUT(conn, keepalive_idle_live_peer, 60)
{
	struct lchan_opts opts = { .flags = LCHAN_OPTS_KEEPALIVE,
				   .keepalive_ms = 500 };
	struct lchan_t_ep srv = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	struct lchan_t_ep cli = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	unsigned long long cli_probes, srv_probes;
	struct lchan_cqe *cqe;
	unsigned i;
	double t0;
	int ret;

	ret = lchan_t_ep_pair(&srv, &cli, self->d.addr, &opts);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
	EXPECT_EQ(500, lchan_t_chan_attr(&cli.chan, "keepalive_ms"));
	EXPECT_EQ(500, lchan_t_chan_attr(&srv.chan, "keepalive_ms"));

	/* Eight periods idle: a probe each, answered. */
	usleep(4000 * 1000);
	EXPECT_EQ(LCHAN_STATE_CONNECTED, lchan_chan_state(&cli.chan));
	EXPECT_EQ(LCHAN_STATE_CONNECTED, lchan_chan_state(&srv.chan));
	EXPECT_NE(0, lchan_peek_cqe(&cli.chan, &cqe));
	EXPECT_NE(0, lchan_peek_cqe(&srv.chan, &cqe));
	cli_probes = lchan_t_chan_attr(&cli.chan, "keepalive_probes");
	srv_probes = lchan_t_chan_attr(&srv.chan, "keepalive_probes");
	EXPECT_LE(3, cli_probes);
	EXPECT_LE(3, srv_probes);
	TH_LOG("idle 4 s: %llu and %llu probes", cli_probes, srv_probes);

	/* Five periods of traffic: not one probe more after the first. */
	ASSERT_EQ(0, keepalive_round(&srv, &cli, 0));
	cli_probes = lchan_t_chan_attr(&cli.chan, "keepalive_probes");
	srv_probes = lchan_t_chan_attr(&srv.chan, "keepalive_probes");
	t0 = lchan_t_now();
	for (i = 1; lchan_t_now() - t0 < 2.5; i++)
		ASSERT_EQ(0, keepalive_round(&srv, &cli, i)) TH_LOG("round %u", i);
	EXPECT_EQ(cli_probes, lchan_t_chan_attr(&cli.chan, "keepalive_probes"));
	EXPECT_EQ(srv_probes, lchan_t_chan_attr(&srv.chan, "keepalive_probes"));
	TH_LOG("traffic 2.5 s: %u rounds", i);
	EXPECT_EQ(LCHAN_STATE_CONNECTED, lchan_chan_state(&cli.chan));
	EXPECT_EQ(LCHAN_STATE_CONNECTED, lchan_chan_state(&srv.chan));
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);

	/* Without the option: off. */
	srv = (struct lchan_t_ep){ .slot = 4096, .nrecv = 4, .nsend = 4 };
	cli = (struct lchan_t_ep){ .slot = 4096, .nrecv = 4, .nsend = 4 };
	ret = lchan_t_ep_pair(&srv, &cli, self->d.addr, NULL);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
	EXPECT_EQ(0, lchan_t_chan_attr(&cli.chan, "keepalive_ms"));
	EXPECT_EQ(0, lchan_t_chan_attr(&srv.chan, "keepalive_ms"));
	usleep(1000 * 1000);
	EXPECT_EQ(0, lchan_t_chan_attr(&cli.chan, "keepalive_probes"));
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
}
/*
 * Receives published before ESTABLISH (lchan_publish, no ENTER) are posted
 * by it, before the connection exists: the peer's first SENDs land with no
 * ENTER on this side.  Were they left in the ring, iWARP would end the
 * connection at the first SEND and RoCE would retry it receiver-not-ready.
 */
TEST_F_TIMEOUT(conn, establish_posts_published_receives, 60)
{
	struct lchan_t_ep srv = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	struct lchan_t_ep cli = { .slot = 4096, .nrecv = 4, .nsend = 4,
				  .publish_only = true };
	struct lchan_cqe *cqe;
	unsigned i;
	double t0;
	int ret;

	ret = lchan_t_ep_pair(&srv, &cli, self->d.addr, NULL);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
	for (i = 0; i < 4; i++) {
		struct lchan_sqe *sqe = lchan_get_sqe(&srv.chan);

		ASSERT_NE(NULL, sqe);
		lchan_t_fill(lchan_t_send_slot(&srv, i), i, 100 + i);
		lchan_prep_send(sqe, &srv.mr, lchan_t_send_slot(&srv, i),
				100 + i, i);
	}
	ASSERT_LE(0, lchan_submit(&srv.chan));
	/* The client only reads its ring and sysfs from here on. */
	t0 = lchan_t_now();
	while (lchan_t_chan_attr(&cli.chan, "recv_ops") < 4 &&
	       lchan_t_now() - t0 < 10)
		usleep(10000);
	EXPECT_EQ(4, lchan_t_chan_attr(&cli.chan, "recv_ops"));
	EXPECT_EQ(0, lchan_t_chan_attr(&cli.chan, "enters"));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, lchan_peek_cqe(&cli.chan, &cqe)) TH_LOG("CQE %u", i);
		EXPECT_EQ(LCHAN_CQE_OK, cqe->status)
			TH_LOG("%s", lchan_cqe_status_str(cqe->status));
		EXPECT_EQ(100 + i, cqe->byte_len);
		EXPECT_EQ(-1, lchan_t_check(lchan_t_recv_slot(&cli, i), i,
					    100 + i));
		lchan_cqe_seen(&cli.chan);
	}
	EXPECT_EQ(LCHAN_STATE_CONNECTED, lchan_chan_state(&cli.chan));
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
}

TEST_F_TIMEOUT(conn, sixteen_channels_two_processes, 240)
{
	struct lchan_t_ep ep[NCHAN];
	struct lchan_listener lst;
	struct lchan_ctx ctx;
	struct lchan_cqe cqe;
	int go[2], status, i, ret;
	char port[16], path[200], buf[32];
	pid_t pid;

	memset(ep, 0, sizeof(ep));
	ASSERT_EQ(0, lchan_ctx_open(&ctx));
	snprintf(port, sizeof(port), "%u", lchan_t_port());
	ASSERT_EQ(0, lchan_listen(&ctx, self->d.addr, port, NCHAN, 0, &lst));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		close(go[1]);
		_exit(many_client(self->d.addr, port, go[0]));
	}
	close(go[0]);

	for (i = 0; i < NCHAN; i++) {
		struct lchan_opts opts = {
			.sq_entries = 4, .rq_entries = 4,
			.flags = LCHAN_DEFER_ESTABLISH,
		};

		ep[i].slot = 4096;
		ep[i].nrecv = 1;
		ep[i].nsend = 1;
		ASSERT_EQ(0, lchan_accept(&lst, &opts, &ep[i].chan))
			TH_LOG("accept %d", i);
		/* The receive is posted before the peer can send. */
		ASSERT_EQ(0, lchan_t_ep_prepare(&ctx, &ep[i].chan, &ep[i]));
		ASSERT_EQ(0, lchan_establish(&ep[i].chan, 10000));
	}
	for (i = 0; i < NCHAN; i++) {
		ret = lchan_t_reap(&ep[i], &cqe, 20000);
		if (ret) {
			/* Where the message is: siw's socket, or nowhere. */
			lchan_t_dump_chan("server", &ep[i].chan);
			lchan_t_dump_tcp();
		}
		ASSERT_EQ(0, ret) TH_LOG("channel %d of %d", i, NCHAN);
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
		/* Channels are accepted in the order the child connected. */
		ASSERT_EQ(1000 + i, cqe.byte_len);
		ASSERT_EQ(-1, lchan_t_check(lchan_t_recv_slot(&ep[i], 0), i,
					    1000 + i));
	}
	snprintf(path, sizeof(path), "/sys/kernel/lchan/devices/%s/channels",
		 self->d.dev);
	ASSERT_EQ(0, lchan_t_read_sysfs(path, buf, sizeof(buf)));
	EXPECT_EQ(2 * NCHAN, atoi(buf));

	ASSERT_EQ(1, write(go[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	for (i = 0; i < NCHAN; i++) {
		ep[i].ctx.fd = -1;
		lchan_t_ep_close(&ep[i]);
	}
	lchan_listener_close(&lst);
	lchan_ctx_close(&ctx);
}

/*
 * Channel after channel between two contexts of one process: the
 * connecting side in the test, the accepting side in first_server(),
 * which sends the moment each channel is up (server_sends_first) or,
 * @quiet, only receives (client_sends_once).
 */
enum { FIRST_N = 32 };

struct first {
	struct lchan_t_ep srv[FIRST_N], cli[FIRST_N];
	struct lchan_listener lst;
	struct lchan_ctx sctx, cctx;
	char port[16];
	pthread_t thr;
	bool quiet;
	int ret;
	char why[96];
};

static void *first_server(void *arg)
{
	struct first *f = arg;
	struct pollfd pfd = { .fd = f->lst.fd, .events = POLLIN };
	struct lchan_opts o = { .flags = LCHAN_DEFER_ESTABLISH };
	unsigned i;

	for (i = 0; i < FIRST_N && !f->ret; i++) {
		struct lchan_t_ep *ep = &f->srv[i];
		struct lchan_sqe *sqe;

		if (poll(&pfd, 1, 20000) != 1) {
			f->ret = -ETIMEDOUT;
			break;
		}
		f->ret = lchan_accept(&f->lst, &o, &ep->chan);
		if (!f->ret)
			f->ret = lchan_t_ep_prepare(&ep->ctx, &ep->chan, ep);
		if (!f->ret)
			f->ret = lchan_establish(&ep->chan, 10000);
		if (f->ret)
			break;
		if (f->quiet)
			continue;
		/* Nothing from the peer yet: on iWARP this SEND must wait. */
		sqe = lchan_get_sqe(&ep->chan);
		lchan_t_fill(lchan_t_send_slot(ep, 0), i, 64);
		lchan_prep_send(sqe, &ep->mr, lchan_t_send_slot(ep, 0), 64, i);
		f->ret = lchan_submit(&ep->chan);
		f->ret = f->ret < 0 ? f->ret : 0;
	}
	if (f->ret)
		snprintf(f->why, sizeof(f->why), "accept %u: %s", i,
			 strerror(-f->ret));
	return NULL;
}

/* Both contexts, the endpoints, a listener, and the accepting thread. */
static int first_start(struct first *f, const char *addr)
{
	unsigned i;
	int ret;

	ret = lchan_ctx_open(&f->sctx);
	if (ret)
		return ret;
	ret = lchan_ctx_open(&f->cctx);
	if (ret)
		return ret;
	for (i = 0; i < FIRST_N; i++) {
		f->srv[i] = (struct lchan_t_ep){ .slot = 64, .nrecv = 2,
						 .nsend = 2, .ctx = f->sctx };
		f->cli[i] = f->srv[i];
		f->cli[i].ctx = f->cctx;
	}
	snprintf(f->port, sizeof(f->port), "%u", lchan_t_port());
	ret = lchan_listen(&f->sctx, addr, f->port, FIRST_N,
			   LCHAN_FD_NONBLOCK, &f->lst);
	if (ret)
		return ret;
	return -pthread_create(&f->thr, NULL, first_server, f);
}

/* What the pair of channel @i looks like, for a wait that ran out. */
static void first_dump(struct first *f, unsigned i)
{
	lchan_t_dump_chan("client", &f->cli[i].chan);
	lchan_t_dump_chan("server", &f->srv[i].chan);
	lchan_t_dump_tcp();
}

/* The accepting sides that found the peer's first SEND in the socket. */
static unsigned first_read(struct __test_metadata *_metadata,
			   struct first *f)
{
	unsigned i, read = 0;

	for (i = 0; i < FIRST_N; i++) {
		EXPECT_EQ(0, lchan_t_chan_attr(&f->srv[i].chan,
					       "peer_first_wait"));
		read += lchan_t_chan_attr(&f->srv[i].chan,
					  "peer_first_reads") > 0;
	}
	return read;
}

static void first_close(struct first *f)
{
	unsigned i;

	for (i = 0; i < FIRST_N; i++) {
		if (f->cli[i].chan.map)
			lchan_chan_close(&f->cli[i].chan);
		if (f->srv[i].chan.map)
			lchan_chan_close(&f->srv[i].chan);
		free(f->cli[i].buf);
		free(f->srv[i].buf);
	}
	lchan_listener_close(&f->lst);
	lchan_ctx_close(&f->cctx);
	lchan_ctx_close(&f->sctx);
	free(f);
}

/*
 * The accepting side sends the moment its connection is up, before the
 * connecting side has sent anything, channel after channel.  On iWARP
 * without a ready-to-receive exchange that SEND can reach the initiator
 * before it has read the MPA reply, and siw then fails the connect with
 * EINVAL while the acceptor believes it is connected.  Both ends are
 * lchan and the connect asks for the opening exchange: every connect must
 * succeed and every first message arrive.
 */
TEST_F_TIMEOUT(conn, server_sends_first, 300)
{
	struct first *f = calloc(1, sizeof(*f));
	unsigned i, ok = 0, read = 0;
	int ret = 0;

	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, first_start(f, self->d.addr));
	for (i = 0; i < FIRST_N; i++) {
		struct lchan_opts o = { .flags = LCHAN_DEFER_ESTABLISH |
						 LCHAN_OPEN_EXCHANGE };
		struct lchan_t_ep *cli = &f->cli[i];
		struct lchan_cqe c;

		ret = lchan_connect(&f->cctx, self->d.addr, f->port, &o,
				    &cli->chan);
		if (!ret)
			ret = lchan_t_ep_prepare(&f->cctx, &cli->chan, cli);
		if (!ret)
			ret = lchan_establish(&cli->chan, 10000);
		if (ret) {
			TH_LOG("connect %u of %u: %s", i, FIRST_N,
			       strerror(-ret));
			break;
		}
		/* The client only receives: its kernel's first SEND frees it. */
		ret = lchan_t_reap(cli, &c, 10000);
		if (ret) {
			TH_LOG("channel %u: no first message: %s", i,
			       strerror(-ret));
			first_dump(f, i);
			break;
		}
		EXPECT_EQ(LCHAN_CQE_OK, c.status);
		EXPECT_EQ(LCHAN_CQE_RECV, c.opcode);
		EXPECT_EQ(64, c.byte_len);
		EXPECT_EQ(-1, lchan_t_check(lchan_t_recv_slot(cli, 0), i, 64));
		ok++;
	}
	pthread_join(f->thr, NULL);
	EXPECT_EQ(0, f->ret) TH_LOG("%s", f->why);
	EXPECT_EQ(FIRST_N, ok);
	if (!f->ret && ok == FIRST_N)
		read = first_read(_metadata, f);
	first_close(f);
	TH_LOG("%u of %u channels connected and got the first message; %u "
	       "acceptors found the peer's first SEND waiting in the socket",
	       ok, FIRST_N, read);
}

/*
 * The connecting side sends one message the moment connect returns and
 * then only waits; the accepting side only receives, channel after
 * channel.  siw's accepting side can leave what arrives right behind its
 * MPA reply in the socket until more data comes, and here none would
 * come: every message must arrive all the same.  The connect asks for no
 * opening exchange, as a plain rdma_cm client would not: the accepting
 * kernel's look at the socket alone must find the message.
 */
TEST_F_TIMEOUT(conn, client_sends_once, 300)
{
	struct first *f = calloc(1, sizeof(*f));
	unsigned i, ok = 0, read = 0;
	int ret = 0;

	ASSERT_NE(NULL, f);
	f->quiet = true;
	ASSERT_EQ(0, first_start(f, self->d.addr));
	for (i = 0; i < FIRST_N; i++) {
		struct lchan_t_ep *cli = &f->cli[i];
		struct lchan_sqe *sqe;

		ret = lchan_connect(&f->cctx, self->d.addr, f->port, NULL,
				    &cli->chan);
		if (!ret)
			ret = lchan_t_ep_prepare(&f->cctx, &cli->chan, cli);
		if (ret) {
			TH_LOG("connect %u of %u: %s", i, FIRST_N,
			       strerror(-ret));
			break;
		}
		/* The connecting side is open at once: all of it is taken. */
		EXPECT_EQ(0, lchan_t_chan_attr(&cli->chan, "peer_first_wait"));
		sqe = lchan_get_sqe(&cli->chan);
		lchan_t_fill(lchan_t_send_slot(cli, 0), i, 64);
		lchan_prep_send(sqe, &cli->mr, lchan_t_send_slot(cli, 0), 64, i);
		EXPECT_EQ(1, lchan_submit(&cli->chan));
	}
	pthread_join(f->thr, NULL);
	EXPECT_EQ(0, f->ret) TH_LOG("%s", f->why);
	for (i = 0; i < FIRST_N && !f->ret && !ret; i++) {
		struct lchan_cqe c;

		if (lchan_t_reap(&f->srv[i], &c, 10000)) {
			TH_LOG("channel %u: the message never came", i);
			first_dump(f, i);
			break;
		}
		EXPECT_EQ(LCHAN_CQE_OK, c.status);
		EXPECT_EQ(LCHAN_CQE_RECV, c.opcode);
		EXPECT_EQ(64, c.byte_len);
		EXPECT_EQ(-1, lchan_t_check(lchan_t_recv_slot(&f->srv[i], 0),
					    i, 64));
		ok++;
	}
	EXPECT_EQ(FIRST_N, ok);
	if (ok == FIRST_N)
		read = first_read(_metadata, f);
	first_close(f);
	TH_LOG("%u of %u messages arrived; %u acceptors found the peer's "
	       "first SEND waiting in the socket", ok, FIRST_N, read);
}

/*
 * lchan's own iWARP opening exchange runs only when the connecting
 * application asks for it, and then on both ends; never on IB and RoCE,
 * which do not need it.  ACCEPT cannot ask: the request says.
 */
TEST_F_TIMEOUT(conn, open_exchange_only_when_asked, 60)
{
	bool iwarp = dev_is_iwarp(_metadata, self->d.dev);
	struct lchan_opts ask = { .flags = LCHAN_OPEN_EXCHANGE };
	struct lchan_listener lst;
	struct lchan_chan chan;
	struct lchan_ctx ctx;
	char port[16];
	int asked, status, sync[2];
	pid_t pid;

	ASSERT_EQ(0, lchan_ctx_open(&ctx));
	snprintf(port, sizeof(port), "%u", lchan_t_port());
	ASSERT_EQ(0, lchan_listen(&ctx, self->d.addr, port, 1, 0, &lst));
	EXPECT_EQ(-EINVAL, lchan_accept(&lst, &ask, &chan));
	for (asked = 0; asked < 2; asked++) {
		unsigned long long want = iwarp && asked;

		ASSERT_EQ(0, pipe(sync));
		pid = fork();
		ASSERT_GE(pid, 0);
		if (pid == 0) {
			struct lchan_ctx cctx;
			struct lchan_chan cchan;
			unsigned long long got;
			int ret;

			if (lchan_ctx_open(&cctx))
				_exit(lchan_t_child_fail(1, "ctx"));
			ret = lchan_connect(&cctx, self->d.addr, port,
					    asked ? &ask : NULL, &cchan);
			if (ret)
				_exit(lchan_t_child_fail(2, "connect: %s",
							 strerror(-ret)));
			got = lchan_t_chan_attr(&cchan, "open_exchange");
			if (got != want)
				_exit(lchan_t_child_fail(3, "open_exchange %llu",
							 got));
			/* Open until the accepting side has its channel. */
			close(sync[1]);
			if (read(sync[0], &got, 1) < 0)
				_exit(lchan_t_child_fail(4, "read"));
			lchan_chan_close(&cchan);
			_exit(0);
		}
		close(sync[0]);
		ASSERT_EQ(0, lchan_accept(&lst, NULL, &chan));
		EXPECT_EQ(want, lchan_t_chan_attr(&chan, "open_exchange"))
			TH_LOG("accepting side, connect %s the exchange",
			       asked ? "asked for" : "without");
		close(sync[1]);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status));
		lchan_chan_close(&chan);
	}
	lchan_listener_close(&lst);
	lchan_ctx_close(&ctx);
}

struct nb_accept {
	struct lchan_listener *lst;
	struct lchan_chan chan;
	int delay_ms;
	int ret;
};

/* Accept one channel, after a pause the connecting side must not wait. */
static void *nb_acceptor(void *p)
{
	struct nb_accept *a = p;

	usleep(a->delay_ms * 1000);
	a->ret = lchan_accept(a->lst, NULL, &a->chan);
	return NULL;
}

/*
 * A non-blocking connect refused by the peer: whoever sees its end
 * (POLLHUP) finds why in the result, every time.  The end used to show
 * before the reason (-ENOTCONN); repeated to catch the window.
 */
TEST_F_TIMEOUT(conn, nonblocking_refused_says_why, 120)
{
	struct lchan_opts o = { .flags = LCHAN_FD_NONBLOCK };
	struct lchan_chan chan;
	struct lchan_ctx ctx;
	struct pollfd pfd;
	unsigned i, polled = 0;
	char port[16];
	int ret;

	ASSERT_EQ(0, lchan_ctx_open(&ctx));
	snprintf(port, sizeof(port), "%u", lchan_t_port());
	for (i = 0; i < 200; i++) {
		ret = lchan_connect(&ctx, self->d.addr, port, &o, &chan);
		if (ret != -EINPROGRESS) {
			ASSERT_EQ(-ECONNREFUSED, ret) TH_LOG("connect %u", i);
			continue;
		}
		pfd = (struct pollfd){ .fd = chan.fd, .events = POLLOUT };
		ASSERT_EQ(1, poll(&pfd, 1, 20000)) TH_LOG("connect %u", i);
		ASSERT_TRUE(pfd.revents & POLLHUP) TH_LOG("connect %u", i);
		ret = lchan_connect_result(&chan);
		ASSERT_EQ(-ECONNREFUSED, ret)
			TH_LOG("connect %u: %s", i, strerror(-ret));
		lchan_chan_close(&chan);
		polled++;
	}
	TH_LOG("200 refused connects, %u seen through poll", polled);
	lchan_ctx_close(&ctx);
}

/*
 * A non-blocking connect, as sockets have it: connect returns
 * -EINPROGRESS with a valid channel before the peer accepted; POLLOUT
 * once connected, and the result says 0; data flows.  Against a port
 * nobody serves: POLLHUP, and the result is ECONNREFUSED (or connect
 * says so at once and leaves no channel).
 */
TEST_F_TIMEOUT(conn, nonblocking_connect, 60)
{
	struct lchan_opts o = { .flags = LCHAN_FD_NONBLOCK };
	struct lchan_listener lst;
	struct nb_accept a = { &lst, { .fd = -1 }, 500, 0 };
	struct lchan_chan chan;
	struct lchan_ctx sctx, cctx;
	struct pollfd pfd;
	char port[16];
	pthread_t thr;
	double t0;
	int ret;

	ASSERT_EQ(0, lchan_ctx_open(&sctx));
	ASSERT_EQ(0, lchan_ctx_open(&cctx));
	snprintf(port, sizeof(port), "%u", lchan_t_port());
	ASSERT_EQ(0, lchan_listen(&sctx, self->d.addr, port, 1, 0, &lst));
	ASSERT_EQ(0, pthread_create(&thr, NULL, nb_acceptor, &a));
	t0 = lchan_t_now();
	ret = lchan_connect(&cctx, self->d.addr, port, &o, &chan);
	EXPECT_EQ(-EINPROGRESS, ret) TH_LOG("connect: %s", strerror(-ret));
	EXPECT_GT(0.4, lchan_t_now() - t0);
	ASSERT_LE(0, chan.fd);
	EXPECT_EQ(-EINPROGRESS, lchan_connect_result(&chan));
	pfd = (struct pollfd){ .fd = chan.fd, .events = POLLOUT };
	EXPECT_EQ(1, poll(&pfd, 1, 20000));
	EXPECT_TRUE(pfd.revents & POLLOUT);
	EXPECT_EQ(0, lchan_connect_result(&chan));
	EXPECT_EQ(LCHAN_STATE_CONNECTED, lchan_chan_state(&chan));
	pthread_join(thr, NULL);
	ASSERT_EQ(0, a.ret);
	lchan_chan_close(&a.chan);
	lchan_chan_close(&chan);
	lchan_listener_close(&lst);

	/* Nobody serves the port any more. */
	ret = lchan_connect(&cctx, self->d.addr, port, &o, &chan);
	if (ret == -EINPROGRESS) {
		pfd = (struct pollfd){ .fd = chan.fd, .events = POLLOUT };
		EXPECT_EQ(1, poll(&pfd, 1, 20000));
		EXPECT_TRUE(pfd.revents & POLLHUP);
		EXPECT_FALSE(pfd.revents & POLLOUT);
		EXPECT_EQ(-ECONNREFUSED, lchan_connect_result(&chan));
	} else {
		EXPECT_EQ(-ECONNREFUSED, ret);
		EXPECT_EQ(-1, chan.fd);
	}
	lchan_chan_close(&chan);
	lchan_ctx_close(&cctx);
	lchan_ctx_close(&sctx);
}

/* Which side saw what, and both channels as the kernel has them. */
static int late_failed(struct lchan_t_ep *from, struct lchan_t_ep *to,
		       unsigned i, const char *who, const struct lchan_cqe *c,
		       int ret)
{
	if (c)
		fprintf(stderr, "# message %u: the %s's CQE: opcode %u status "
			"%u (%s) vendor_err %u\n", i, who, c->opcode, c->status,
			lchan_cqe_status_str(c->status), c->vendor_err);
	else
		fprintf(stderr, "# message %u: the %s's reap: %s\n", i, who,
			strerror(-ret));
	lchan_t_dump_chan("sender", &from->chan);
	lchan_t_dump_chan("receiver", &to->chan);
	return ret;
}

/* Send message @i of 64 B from @from; @to must receive it whole. */
static int late_message(struct lchan_t_ep *from, struct lchan_t_ep *to,
			unsigned i)
{
	struct lchan_sqe *sqe = lchan_get_sqe(&from->chan);
	struct lchan_cqe c;
	int ret;

	if (!sqe)
		return -ENOSPC;
	lchan_t_fill(lchan_t_send_slot(from, 0), i, 64);
	lchan_prep_send(sqe, &from->mr, lchan_t_send_slot(from, 0), 64, i);
	ret = lchan_submit(&from->chan);
	if (ret != 1) {
		fprintf(stderr, "# message %u: the sender's submit took %d "
			"entries, not 1\n", i, ret);
		lchan_t_dump_chan("sender", &from->chan);
		lchan_t_dump_chan("receiver", &to->chan);
		return ret < 0 ? ret : -EIO;
	}
	do {
		ret = lchan_t_reap(to, &c, 30000);
		if (ret)
			return late_failed(from, to, i, "receiver", NULL, ret);
		if (c.status)
			return late_failed(from, to, i, "receiver", &c, -EIO);
	} while (c.opcode != LCHAN_CQE_RECV);
	if (c.byte_len != 64 ||
	    lchan_t_check(lchan_t_recv_slot(to, c.user_data), i, 64) != -1)
		return -EBADMSG;
	/* The sender's own completion, so the next SEND has its slot. */
	do {
		ret = lchan_t_reap(from, &c, 30000);
	} while (!ret && c.opcode != LCHAN_CQE_SEND);
	if (ret || c.status)
		return late_failed(from, to, i, "sender", ret ? NULL : &c,
				   ret ?: -EIO);
	return 0;
}

#define LATE_PAIRS	16

/*
 * On lo (which carries the guest's own traffic), packets whose TCP payload
 * begins with siw's MPA reply go through a 300 ms netem delay, everything
 * else straight: a prio qdisc, its third band delayed, u32 filters on the
 * key at both TCP header lengths (with timestamps, and without).
 */
static const char *const late_reply_tc[] = {
	"/usr/sbin/tc qdisc replace dev lo root handle 1: prio",
	"/usr/sbin/tc qdisc add dev lo parent 1:3 handle 30: netem delay 300ms",
	"/usr/sbin/tc filter add dev lo parent 1: protocol ip prio 1 u32 "
	"match u32 0x4d504120 0xffffffff at 52 "
	"match u32 0x49442052 0xffffffff at 56 "
	"match u32 0x65702046 0xffffffff at 60 flowid 1:3",
	"/usr/sbin/tc filter add dev lo parent 1: protocol ip prio 2 u32 "
	"match u32 0x4d504120 0xffffffff at 40 "
	"match u32 0x49442052 0xffffffff at 44 "
	"match u32 0x65702046 0xffffffff at 48 flowid 1:3",
};

/*
 * Channels opened while every MPA reply comes 300 ms late, as a lost one
 * does when TCP resends it.  siw's initiator fails the connection when
 * anything arrives right behind the reply, before it has read it, so the
 * accepting side must send nothing before the peer's first SEND, however
 * long that takes.  Every pair must connect and carry a message each way.
 */
TEST_F_TIMEOUT(conn, mpa_reply_late, 300)
{
	unsigned i, ok = 0, read = 0;
	unsigned pairs = lchan_t_env_uint("LCHAN_T_LATE_PAIRS", LATE_PAIRS);
	int ret = 0;

	if (!dev_is_iwarp(_metadata, self->d.dev))
		SKIP(return, "the MPA reply is iWARP's");
	for (i = 0; !ret && i < ARRAY_SIZE(late_reply_tc); i++)
		ret = system(late_reply_tc[i]);
	if (ret) {
		/* Past the first command the prio qdisc is there: remove it. */
		if (i > 1 && system("/usr/sbin/tc qdisc del dev lo root"))
			TH_LOG("could not remove the qdisc from lo");
		SKIP(return, "no prio, netem or u32 on lo (tc: %d)", ret);
	}
	for (i = 0; i < pairs; i++) {
		struct lchan_t_ep srv = { .slot = 4096, .nrecv = 4, .nsend = 4 };
		struct lchan_t_ep cli = srv;
		double t0 = lchan_t_now();

		ret = lchan_t_ep_pair(&srv, &cli, self->d.addr, NULL);
		if (ret)
			TH_LOG("pair %u: connecting failed", i + 1);
		if (!ret)
			ret = late_message(&cli, &srv, 2 * i);
		if (!ret)
			ret = late_message(&srv, &cli, 2 * i + 1);
		EXPECT_EQ(0, ret) TH_LOG("pair %u of %u after %.3f s: %s", i + 1,
					 pairs, lchan_t_now() - t0,
					 strerror(-ret));
		if (!ret) {
			ok++;
			read += lchan_t_chan_attr(&srv.chan,
						  "peer_first_reads") > 0;
		}
		lchan_t_ep_close(&cli);
		lchan_t_ep_close(&srv);
	}
	EXPECT_EQ(0, system("/usr/sbin/tc qdisc del dev lo root"));
	TH_LOG("%u of %u pairs connected and carried both messages; %u "
	       "acceptors found the peer's first SEND waiting in the socket",
	       ok, pairs, read);
}

TEST_HARNESS_MAIN
