// SPDX-License-Identifier: GPL-2.0
/*
 * lchan-run(1): lchan_socket_test, the TCP socket semantics written down
 * against plain TCP, run unchanged under lchan-run on a device's
 * addresses must give the same verdicts, every test passing.  How its
 * connections went is checked too, from the decisions LCHAN_RUN_DEBUG
 * prints: on rxe its listeners serve TCP and lchan and its connects go
 * over stream channels; on siw (iWARP listens in TCP's own port space)
 * its listeners stay TCP and its connects fall back to TCP without a
 * byte of iWARP reaching the TCP server.
 *
 * Then real programs, unmodified, both ends under lchan-run: sockperf's
 * TCP ping-pong, qperf's TCP latency and bandwidth, redis-server with
 * redis-benchmark (with and without pipelining) and iperf3 (one stream
 * and four), each checked by its own report (no error; iperf3's bytes
 * received short of those sent by no more than were in flight) and by
 * how its connections went.  A
 * program the machine lacks SKIPs its test.
 */
#include <sys/wait.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define OUT_LEN	(512 * 1024)

FIXTURE(run) {
	struct lchan_t_dev d;
	char tool[512];
	char prog[512];
	char *out;
};

LCHAN_T_VARIANTS(run);

/* @name in LCHAN_TOOLS (the rig's), else in the build tree beside. */
static void find_in(char *buf, size_t len, const char *env, const char *rel,
		    const char *name)
{
	const char *dir = getenv(env);

	if (dir && *dir)
		snprintf(buf, len, "%s/%s", dir, name);
	else
		lchan_t_beside_me(buf, len, rel);
}

FIXTURE_SETUP(run)
{
	struct lchan_ctx ctx;
	struct lchan_info info;

	self->out = NULL;
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	if (lchan_ctx_open(&ctx))
		LCHAN_T_SETUP_SKIP("lchan is not loaded");
	ASSERT_EQ(0, lchan_query(&ctx, &info));
	lchan_ctx_close(&ctx);
	if (!(info.features & LCHAN_FEATURE_STREAM))
		LCHAN_T_SETUP_SKIP("the module has no stream channels");
	find_in(self->tool, sizeof(self->tool), "LCHAN_TOOLS",
		"../tools/lchan-run", "lchan-run");
	find_in(self->prog, sizeof(self->prog), "LCHAN_SELFTESTS",
		"lchan_socket_test", "lchan_socket_test");
	if (access(self->tool, X_OK))
		LCHAN_T_SETUP_SKIP("no lchan-run (%.400s)", self->tool);
	ASSERT_EQ(0, access(self->prog, X_OK)) TH_LOG("no %s", self->prog);
	self->out = malloc(OUT_LEN);
	ASSERT_NE(NULL, self->out);
}

FIXTURE_TEARDOWN(run)
{
	free(self->out);
}

/* Lines of @out that contain @what. */
static unsigned count_lines(const char *out, const char *what)
{
	unsigned n = 0;
	const char *p = out;

	while ((p = strstr(p, what))) {
		n++;
		p += strlen(what);
	}
	return n;
}

TEST_F_TIMEOUT(run, socket_semantics_unchanged, 900)
{
	char *argv[] = { "/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1",
			 self->tool, self->prog, NULL };
	bool iwarp = !strcmp(variant->kind, "siw");
	unsigned over_lchan, over_tcp, listen_both, listen_tcp;
	struct lchan_t_child c;
	int rc;

	setenv("LCHAN_RUN_DEBUG", "1", 1);
	setenv("LCHAN_SOCKET_TEST_ADDR", self->d.addr, 1);
	if (self->d.addr6[0])
		setenv("LCHAN_SOCKET_TEST_ADDR6", self->d.addr6, 1);
	else
		unsetenv("LCHAN_SOCKET_TEST_ADDR6");
	ASSERT_EQ(0, lchan_t_spawn(&c, argv, NULL));
	rc = lchan_t_collect(&c, self->out, OUT_LEN);

	over_lchan = count_lines(self->out, ": lchan\n");
	over_tcp = count_lines(self->out, ": TCP (");
	listen_both = count_lines(self->out, ": TCP and lchan\n");
	listen_tcp = count_lines(self->out, ": TCP only (");
	if (rc || count_lines(self->out, "\nnot ok "))
		lchan_t_show_lines(self->out);
	EXPECT_EQ(0, rc);
	EXPECT_NE(NULL, strstr(self->out, "# PASSED:"));
	EXPECT_EQ(0, count_lines(self->out, "\nnot ok "));
	if (iwarp) {
		EXPECT_EQ(0, over_lchan);
		EXPECT_EQ(0, listen_both);
		EXPECT_LT(0, listen_tcp);
		EXPECT_LT(0, count_lines(self->out,
					 ": TCP (Protocol not supported)"));
	} else {
		EXPECT_LT(0, over_lchan);
		EXPECT_LT(0, listen_both);
	}
	printf("# %s: %u connects over lchan, %u over TCP; %u listeners "
	       "with lchan, %u TCP only\n", variant->kind, over_lchan,
	       over_tcp, listen_both, listen_tcp);
	fflush(stdout);
}

/* A port TCP had free just now, for a server to listen on. */
static int free_port(const char *host)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct lchan_addr a;
	int fd, port = -1;

	if (lchan_addr_parse(host, "0", &a) || lchan_addr_to_sockaddr(&a, &ss) < 0)
		return -1;
	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	if (!bind(fd, (struct sockaddr *)&ss, sizeof(ss)) &&
	    !getsockname(fd, (struct sockaddr *)&ss, &len) &&
	    !lchan_addr_from_sockaddr((struct sockaddr *)&ss, &a))
		port = a.port;
	close(fd);
	return port;
}

/*
 * Read @c's output into @out (from @*got on) until it holds @what, for at
 * most @ms: true when it does.
 */
static bool wait_output(struct lchan_t_child *c, char *out, size_t len,
			size_t *got, const char *what, int ms)
{
	struct pollfd p = { .fd = c->out_fd, .events = POLLIN };
	ssize_t n;

	while (!strstr(out, what)) {
		if (poll(&p, 1, ms) <= 0)
			return false;
		n = read(c->out_fd, out + *got, len - 1 - *got);
		if (n <= 0)
			return false;
		*got += n;
		out[*got] = 0;
	}
	return true;
}

/*
 * @server_args started under lchan-run and listening (it says so), then
 * @client_args run to its end under lchan-run; both outputs (with the
 * decisions LCHAN_RUN_DEBUG prints) checked by the caller.  The server
 * ends with SIGTERM.  The client's exit status, or -1.
 */
static int run_pair(struct __test_metadata *_metadata, FIXTURE_DATA(run) *self,
		    char *const server_args[], char *const client_args[],
		    char *server_out, char *client_out, size_t len)
{
	char *argv[24] = { "/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1",
			   self->tool };
	struct lchan_t_child srv, cli;
	size_t got = 0;
	int i, rc;

	setenv("LCHAN_RUN_DEBUG", "1", 1);
	for (i = 0; server_args[i] && i < 19; i++)
		argv[4 + i] = server_args[i];
	argv[4 + i] = NULL;
	server_out[0] = 0;
	if (lchan_t_spawn(&srv, argv, NULL))
		return -1;
	if (!wait_output(&srv, server_out, len, &got, "listen fd", 10000)) {
		kill(srv.pid, SIGKILL);
		lchan_t_collect(&srv, server_out + got, len - got);
		TH_LOG("the server did not listen");
		lchan_t_show_lines(server_out);
		return -1;
	}
	for (i = 0; client_args[i] && i < 19; i++)
		argv[4 + i] = client_args[i];
	argv[4 + i] = NULL;
	rc = lchan_t_spawn(&cli, argv, NULL) ? -1 :
	     lchan_t_collect(&cli, client_out, len);
	kill(srv.pid, SIGTERM);
	lchan_t_collect(&srv, server_out + got, len - got);
	return rc;
}

/* What a pair's connections should have done on this device. */
static void check_ways(struct __test_metadata *_metadata, bool iwarp,
		       const char *server_out, const char *client_out)
{
	/* A wildcard server listens with lchan on rxe's address even then. */
	if (iwarp) {
		EXPECT_EQ(0, count_lines(client_out, ": lchan\n"));
		EXPECT_LT(0, count_lines(client_out,
					 ": TCP (Protocol not supported)"));
	} else {
		EXPECT_LT(0, count_lines(server_out, ": TCP and lchan\n"));
		EXPECT_LT(0, count_lines(client_out, ": lchan\n"));
		EXPECT_EQ(0, count_lines(client_out, ": TCP ("));
	}
}

/* Throughput is qperf's and iperf3's to prove. */
TEST_F_TIMEOUT(run, sockperf_ping_pong, 300)
{
	static const char sockperf[] = "/usr/bin/sockperf";
	bool iwarp = !strcmp(variant->kind, "siw");
	char port[16], *cli_out;
	int p, rc;

	if (access(sockperf, X_OK))
		SKIP(return, "no %s", sockperf);
	p = free_port(self->d.addr);
	ASSERT_LT(0, p);
	snprintf(port, sizeof(port), "%d", p);
	cli_out = malloc(OUT_LEN);
	ASSERT_NE(NULL, cli_out);
	{
		char *srv[] = { (char *)sockperf, "server", "--tcp", "-i",
				self->d.addr, "-p", port, NULL };
		char *pp[] = { (char *)sockperf, "ping-pong", "--tcp", "-i",
			       self->d.addr, "-p", port, "-m", "64", "-t",
			       "1", NULL };

		rc = run_pair(_metadata, self, srv, pp, self->out, cli_out,
			      OUT_LEN);
		if (rc || !strstr(cli_out, "Summary: Latency is"))
			lchan_t_show_lines(cli_out);
		EXPECT_EQ(0, rc);
		EXPECT_NE(NULL, strstr(cli_out, "Summary: Latency is"));
		check_ways(_metadata, iwarp, self->out, cli_out);
	}
	free(cli_out);
}

TEST_F_TIMEOUT(run, qperf_tcp_latency_and_bandwidth, 300)
{
	static const char qperf[] = "/usr/bin/qperf";
	bool iwarp = !strcmp(variant->kind, "siw");
	char port[16], *cli_out;
	int p, rc;

	if (access(qperf, X_OK))
		SKIP(return, "no %s", qperf);
	p = free_port(self->d.addr);
	ASSERT_LT(0, p);
	snprintf(port, sizeof(port), "%d", p);
	cli_out = malloc(OUT_LEN);
	ASSERT_NE(NULL, cli_out);
	{
		char *srv[] = { (char *)qperf, "-lp", port, NULL };
		char *cli[] = { (char *)qperf, "-lp", port, "-t", "1",
				self->d.addr, "tcp_lat", "tcp_bw", NULL };

		rc = run_pair(_metadata, self, srv, cli, self->out, cli_out,
			      OUT_LEN);
		if (rc || !strstr(cli_out, "tcp_bw:"))
			lchan_t_show_lines(cli_out);
		EXPECT_EQ(0, rc);
		EXPECT_NE(NULL, strstr(cli_out, "tcp_lat:"));
		EXPECT_NE(NULL, strstr(cli_out, "tcp_bw:"));
		check_ways(_metadata, iwarp, self->out, cli_out);
	}
	free(cli_out);
}

TEST_F_TIMEOUT(run, redis_benchmark_get_set, 300)
{
	static const char rdb[] = "/usr/bin/redis-check-rdb";
	static const char bench[] = "/usr/bin/redis-benchmark";
	bool iwarp = !strcmp(variant->kind, "siw");
	char dir[] = "/tmp/lchan_run_redis.XXXXXX", server[64];
	char port[16], *cli_out;
	int p, rc, i;

	/* Debian's redis-server is redis-check-rdb by that name. */
	if (access(rdb, X_OK) || access(bench, X_OK))
		SKIP(return, "no redis (redis-tools)");
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(server, sizeof(server), "%s/redis-server", dir);
	ASSERT_EQ(0, symlink(rdb, server));
	p = free_port(self->d.addr);
	ASSERT_LT(0, p);
	snprintf(port, sizeof(port), "%d", p);
	cli_out = malloc(OUT_LEN);
	ASSERT_NE(NULL, cli_out);
	for (i = 0; i < 2; i++) {
		char *srv[] = { server, "--port", port, "--bind", self->d.addr,
				"--save", "", "--appendonly", "no",
				"--protected-mode", "no", NULL };
		char *cli[] = { (char *)bench, "-h", self->d.addr, "-p", port,
				"-n", "2000", "-c", "10", "-d", "64", "-t",
				"get,set", "-q", i ? "-P" : NULL, "16", NULL };

		rc = run_pair(_metadata, self, srv, cli, self->out, cli_out,
			      OUT_LEN);
		if (rc || !strstr(cli_out, "GET: ") || strstr(cli_out, "rror"))
			lchan_t_show_lines(cli_out);
		EXPECT_EQ(0, rc);
		EXPECT_NE(NULL, strstr(cli_out, "SET: "));
		EXPECT_NE(NULL, strstr(cli_out, "GET: "));
		EXPECT_EQ(NULL, strstr(cli_out, "rror"));
		check_ways(_metadata, iwarp, self->out, cli_out);
	}
	free(cli_out);
	unlink(server);
	rmdir(dir);
}

/*
 * iperf3 stops counting what it receives when the sender's "test end"
 * comes on the control connection, so bytes still in flight on a data
 * connection then are sent and not counted as received: with plain TCP
 * too.  Received can so fall short of sent by at most what a stream can
 * have in flight, its send buffer and the peer's receive buffer (Linux's
 * largest defaults: 4 MiB and 6 MiB); more is bytes lost.
 */
#define IPERF_IN_FLIGHT	(10LL << 20)

/* The "bytes" of iperf3's JSON object @key (its first), or -1. */
static long long iperf_bytes(const char *out, const char *key)
{
	const char *p = strstr(out, key);

	p = p ? strstr(p, "\"bytes\":") : NULL;
	return p ? strtoll(p + strlen("\"bytes\":"), NULL, 10) : -1;
}

TEST_F_TIMEOUT(run, iperf3_bytes_arrive, 300)
{
	static const char iperf[] = "/usr/bin/iperf3";
	bool iwarp = !strcmp(variant->kind, "siw");
	char port[16], *cli_out;
	long long sent, received;
	int p, rc, i;

	if (access(iperf, X_OK))
		SKIP(return, "no %s", iperf);
	p = free_port(self->d.addr);
	ASSERT_LT(0, p);
	snprintf(port, sizeof(port), "%d", p);
	cli_out = malloc(OUT_LEN);
	ASSERT_NE(NULL, cli_out);
	for (i = 0; i < 2; i++) {
		char *srv[] = { (char *)iperf, "-s", "-B", self->d.addr, "-p",
				port, "-1", NULL };
		char *cli[] = { (char *)iperf, "-c", self->d.addr, "-p", port,
				"-t", "1", "-J", i ? "-P" : NULL, "4", NULL };

		rc = run_pair(_metadata, self, srv, cli, self->out, cli_out,
			      OUT_LEN);
		sent = iperf_bytes(cli_out, "\"sum_sent\"");
		received = iperf_bytes(cli_out, "\"sum_received\"");
		if (rc || received <= 0 || received > sent ||
		    sent - received > (i ? 4 : 1) * IPERF_IN_FLIGHT)
			lchan_t_show_lines(cli_out);
		EXPECT_EQ(0, rc);
		EXPECT_LT(0, received);
		EXPECT_LE(received, sent);
		EXPECT_GE((i ? 4 : 1) * IPERF_IN_FLIGHT, sent - received);
		check_ways(_metadata, iwarp, self->out, cli_out);
		printf("# iperf3 -P %d: %lld bytes sent, %lld received\n",
		       i ? 4 : 1, sent, received);
		fflush(stdout);
	}
	free(cli_out);
}

TEST_HARNESS_MAIN
