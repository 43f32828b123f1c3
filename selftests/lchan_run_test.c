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
 * and four), nginx with wrk, each checked by its own report (no error;
 * iperf3's bytes received short of those sent by no more than were in
 * flight; nothing in nginx's error log) and by how its connections went,
 * and nginx's bytes once more over a stream channel of the test's own.  A
 * program the machine lacks SKIPs its test.
 */
#include <sys/wait.h>
#include <ftw.h>
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
	char port[16];		/* free for a server, just now */
	char *out;		/* the server's output */
	char *cli_out;		/* the client's */
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

FIXTURE_SETUP(run)
{
	struct lchan_ctx ctx;
	struct lchan_info info;

	int port;

	self->out = self->cli_out = NULL;
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
	self->cli_out = malloc(OUT_LEN);
	ASSERT_NE(NULL, self->out);
	ASSERT_NE(NULL, self->cli_out);
	port = free_port(self->d.addr);
	ASSERT_LT(0, port);
	snprintf(self->port, sizeof(self->port), "%d", port);
}

FIXTURE_TEARDOWN(run)
{
	free(self->out);
	free(self->cli_out);
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

/* @args under lchan-run, its stderr with its stdout: into @argv. */
static void under_run(FIXTURE_DATA(run) *self, char *argv[24],
		      char *const args[])
{
	int i;

	argv[0] = "/bin/sh";
	argv[1] = "-c";
	argv[2] = "exec \"$0\" \"$@\" 2>&1";
	argv[3] = self->tool;
	for (i = 0; args[i] && i < 19; i++)
		argv[4 + i] = args[i];
	argv[4 + i] = NULL;
}

/*
 * @server_args started under lchan-run as @srv and listening (it says
 * so, with the decisions LCHAN_RUN_DEBUG prints): 0, with its output so
 * far in self->out, @*got bytes; else -1.
 */
static int server_start(struct __test_metadata *_metadata,
			FIXTURE_DATA(run) *self, char *const server_args[],
			struct lchan_t_child *srv, size_t *got)
{
	char *argv[24];

	setenv("LCHAN_RUN_DEBUG", "1", 1);
	under_run(self, argv, server_args);
	self->out[0] = 0;
	*got = 0;
	if (lchan_t_spawn(srv, argv, NULL))
		return -1;
	if (!wait_output(srv, self->out, OUT_LEN, got, "listen fd", 10000)) {
		kill(srv->pid, SIGKILL);
		lchan_t_collect(srv, self->out + *got, OUT_LEN - *got);
		TH_LOG("the server did not listen");
		lchan_t_show_lines(self->out);
		return -1;
	}
	return 0;
}

/* The server ends with SIGTERM; the rest of its output to self->out. */
static void server_stop(FIXTURE_DATA(run) *self, struct lchan_t_child *srv,
			size_t got)
{
	kill(srv->pid, SIGTERM);
	lchan_t_collect(srv, self->out + got, OUT_LEN - got);
}

/*
 * @client_args run to its end under lchan-run, its output in
 * self->cli_out: its exit status, or -1.
 */
static int client_run(FIXTURE_DATA(run) *self, char *const client_args[])
{
	struct lchan_t_child cli;
	char *argv[24];

	under_run(self, argv, client_args);
	self->cli_out[0] = 0;
	return lchan_t_spawn(&cli, argv, NULL) ? -1 :
	       lchan_t_collect(&cli, self->cli_out, OUT_LEN);
}

/* A server and a client run against it: the client's exit status, or -1. */
static int run_pair(struct __test_metadata *_metadata, FIXTURE_DATA(run) *self,
		    char *const server_args[], char *const client_args[])
{
	struct lchan_t_child srv;
	size_t got;
	int rc;

	if (server_start(_metadata, self, server_args, &srv, &got))
		return -1;
	rc = client_run(self, client_args);
	server_stop(self, &srv, got);
	return rc;
}

/*
 * A client's exit status @rc is 0, and its report @out says each of
 * @want and none of @unwanted (NULL-ended); if not, the report is shown.
 */
static void expect_report(struct __test_metadata *_metadata, int rc,
			  const char *out, const char *const want[],
			  const char *const unwanted[])
{
	bool bad = rc != 0;
	unsigned i;

	EXPECT_EQ(0, rc);
	for (i = 0; want[i]; i++) {
		EXPECT_NE(NULL, strstr(out, want[i]))
			TH_LOG("no \"%s\" in its report", want[i]);
		bad |= !strstr(out, want[i]);
	}
	for (i = 0; unwanted && unwanted[i]; i++) {
		EXPECT_EQ(NULL, strstr(out, unwanted[i]))
			TH_LOG("\"%s\" in its report", unwanted[i]);
		bad |= strstr(out, unwanted[i]) != NULL;
	}
	if (bad)
		lchan_t_show_lines(out);
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
	int rc;

	if (access(sockperf, X_OK))
		SKIP(return, "no %s", sockperf);
	{
		char *srv[] = { (char *)sockperf, "server", "--tcp", "-i",
				self->d.addr, "-p", self->port, NULL };
		char *pp[] = { (char *)sockperf, "ping-pong", "--tcp", "-i",
			       self->d.addr, "-p", self->port, "-m", "64", "-t",
			       "1", NULL };
		static const char *const want[] = { "Summary: Latency is",
						    NULL };

		rc = run_pair(_metadata, self, srv, pp);
		expect_report(_metadata, rc, self->cli_out, want, NULL);
		check_ways(_metadata, iwarp, self->out, self->cli_out);
	}
}

TEST_F_TIMEOUT(run, qperf_tcp_latency_and_bandwidth, 300)
{
	static const char qperf[] = "/usr/bin/qperf";
	bool iwarp = !strcmp(variant->kind, "siw");
	int rc;

	if (access(qperf, X_OK))
		SKIP(return, "no %s", qperf);
	{
		char *srv[] = { (char *)qperf, "-lp", self->port, NULL };
		char *cli[] = { (char *)qperf, "-lp", self->port, "-t", "1",
				self->d.addr, "tcp_lat", "tcp_bw", NULL };
		static const char *const want[] = { "tcp_lat:", "tcp_bw:",
						    NULL };

		rc = run_pair(_metadata, self, srv, cli);
		expect_report(_metadata, rc, self->cli_out, want, NULL);
		check_ways(_metadata, iwarp, self->out, self->cli_out);
	}
}

TEST_F_TIMEOUT(run, redis_benchmark_get_set, 300)
{
	static const char rdb[] = "/usr/bin/redis-check-rdb";
	static const char bench[] = "/usr/bin/redis-benchmark";
	bool iwarp = !strcmp(variant->kind, "siw");
	char dir[] = "/tmp/lchan_run_redis.XXXXXX", server[64];
	int rc, i;

	/* Debian's redis-server is redis-check-rdb by that name. */
	if (access(rdb, X_OK) || access(bench, X_OK))
		SKIP(return, "no redis (redis-tools)");
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(server, sizeof(server), "%s/redis-server", dir);
	ASSERT_EQ(0, symlink(rdb, server));
	for (i = 0; i < 2; i++) {
		char *srv[] = { server, "--port", self->port, "--bind", self->d.addr,
				"--save", "", "--appendonly", "no",
				"--protected-mode", "no", NULL };
		char *cli[] = { (char *)bench, "-h", self->d.addr, "-p", self->port,
				"-n", "2000", "-c", "10", "-d", "64", "-t",
				"get,set", "-q", i ? "-P" : NULL, "16", NULL };
		static const char *const want[] = { "SET: ", "GET: ", NULL };
		static const char *const unwanted[] = { "rror", NULL };

		rc = run_pair(_metadata, self, srv, cli);
		expect_report(_metadata, rc, self->cli_out, want, unwanted);
		check_ways(_metadata, iwarp, self->out, self->cli_out);
	}
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
	long long sent, received;
	int rc, i;

	if (access(iperf, X_OK))
		SKIP(return, "no %s", iperf);
	for (i = 0; i < 2; i++) {
		char *srv[] = { (char *)iperf, "-s", "-B", self->d.addr, "-p",
				self->port, "-1", NULL };
		char *cli[] = { (char *)iperf, "-c", self->d.addr, "-p", self->port,
				"-t", "1", "-J", i ? "-P" : NULL, "4", NULL };

		rc = run_pair(_metadata, self, srv, cli);
		sent = iperf_bytes(self->cli_out, "\"sum_sent\"");
		received = iperf_bytes(self->cli_out, "\"sum_received\"");
		if (rc || received <= 0 || received > sent ||
		    sent - received > (i ? 4 : 1) * IPERF_IN_FLIGHT)
			lchan_t_show_lines(self->cli_out);
		EXPECT_EQ(0, rc);
		EXPECT_LT(0, received);
		EXPECT_LE(received, sent);
		EXPECT_GE((i ? 4 : 1) * IPERF_IN_FLIGHT, sent - received);
		check_ways(_metadata, iwarp, self->out, self->cli_out);
		printf("# iperf3 -P %d: %lld bytes sent, %lld received\n",
		       i ? 4 : 1, sent, received);
		fflush(stdout);
	}
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* @dir and everything under it. */
static void rm_tree(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* @len bytes of @buf as the file @path; 0 or -errno. */
static int write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "w");
	size_t n;

	if (!f)
		return -errno;
	n = fwrite(buf, 1, len, f);
	if (fclose(f) || n != len)
		return -EIO;
	return 0;
}

/*
 * HTTP/1.0 GET of @path from the server at @fd: 0 when the answer is 200
 * with a body of exactly @len bytes equal to @want; else why not, logged.
 */
static int http_get(struct __test_metadata *_metadata, int fd,
		    const char *path, const uint8_t *want, size_t len)
{
	size_t cap = len + 4096, got = 0;
	char req[128], *buf = malloc(cap + 1), *body;
	ssize_t n;
	int ret = -EBADMSG;

	if (!buf)
		return -ENOMEM;
	n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\n\r\n", path);
	if (write(fd, req, n) != n) {
		ret = -errno;
		goto out;
	}
	/* HTTP/1.0: the server closes after the body. */
	while (got < cap && (n = read(fd, buf + got, cap - got)) > 0)
		got += n;
	buf[got] = 0;
	body = strstr(buf, "\r\n\r\n");
	if (strncmp(buf, "HTTP/1.1 200 ", 13) || !body) {
		TH_LOG("answer: %.200s", buf);
		goto out;
	}
	body += 4;
	if (got - (body - buf) != len || memcmp(body, want, len)) {
		TH_LOG("a body of %zu bytes, %zu wanted, or other bytes",
		       got - (body - buf), len);
		goto out;
	}
	ret = 0;
out:
	free(buf);
	return ret;
}

#define NGINX_FILE	(1 << 20)

/*
 * nginx, whose two workers accept on the listening socket they inherit,
 * and wrk, both under lchan-run: every request answered (no socket
 * error, no status but 2xx), nothing in nginx's error log, and on rxe a
 * 1 MiB file that nginx sends with sendfile(2) read back byte for byte
 * over a stream channel of the test's own.
 */
TEST_F_TIMEOUT(run, nginx_and_wrk, 300)
{
	static const char nginx[] = "/usr/sbin/nginx", wrk[] = "/usr/bin/wrk";
	static const char *const wrk_want[] = { "Requests/sec:", NULL };
	static const char *const wrk_unwanted[] = { "Socket errors", "Non-2xx",
						    NULL };
	bool iwarp = !strcmp(variant->kind, "siw");
	char dir[] = "/tmp/lchan_run_nginx.XXXXXX", conf[256], path[256];
	char host[80], url[160], log[4096];
	struct lchan_t_child srv;
	struct lchan_ctx ctx;
	struct lchan_addr dst;
	uint8_t *body;
	size_t got;
	FILE *f;
	int rc, fd;

	if (access(nginx, X_OK) || access(wrk, X_OK))
		SKIP(return, "no %s or no %s", nginx, wrk);
	ASSERT_NE(NULL, mkdtemp(dir));
	body = malloc(NGINX_FILE);
	ASSERT_NE(NULL, body);
	lchan_t_fill(body, 7, NGINX_FILE);
	snprintf(path, sizeof(path), "%s/f1m", dir);
	ASSERT_EQ(0, write_file(path, body, NGINX_FILE));
	snprintf(path, sizeof(path), "%s/f4k", dir);
	ASSERT_EQ(0, write_file(path, body, 4096));
	snprintf(host, sizeof(host), strchr(self->d.addr, ':') ? "[%s]" : "%s",
		 self->d.addr);
	snprintf(conf, sizeof(conf), "%s/nginx.conf", dir);
	f = fopen(conf, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "daemon off;\nworker_processes 2;\n%s"
		"pid %s/nginx.pid;\nerror_log %s/error.log warn;\n"
		"events { worker_connections 256; }\nhttp {\n"
		"  access_log off; sendfile on; tcp_nodelay on;\n"
		"  client_body_temp_path %s/tb; proxy_temp_path %s/tp;\n"
		"  fastcgi_temp_path %s/tf; uwsgi_temp_path %s/tu;\n"
		"  scgi_temp_path %s/ts;\n"
		"  server { listen %s:%s; root %s; }\n}\n",
		geteuid() ? "" : "user root root;\n", dir, dir, dir, dir, dir,
		dir, dir, host, self->port, dir);
	ASSERT_EQ(0, fclose(f));
	snprintf(url, sizeof(url), "http://%s:%s/f4k", host, self->port);
	{
		char *srv_args[] = { (char *)nginx, "-e", "stderr", "-c", conf,
				     NULL };
		char *cli[] = { (char *)wrk, "-t1", "-c4", "-d1s", url, NULL };

		ASSERT_EQ(0, server_start(_metadata, self, srv_args, &srv,
					  &got));
		rc = client_run(self, cli);
		/* nginx's own bytes, read by the test over a stream. */
		if (!iwarp) {
			ASSERT_EQ(0, lchan_ctx_open(&ctx));
			ASSERT_EQ(0, lchan_addr_parse(self->d.addr, self->port,
						      &dst));
			fd = lchan_stream_connect(&ctx, &dst, NULL);
			EXPECT_LE(0, fd) TH_LOG("stream connect: %s",
						strerror(-fd));
			if (fd >= 0) {
				lchan_t_sock_timeouts(fd, 10000);
				EXPECT_EQ(0, http_get(_metadata, fd, "/f1m",
						      body, NGINX_FILE));
				close(fd);
			}
			lchan_ctx_close(&ctx);
		}
		server_stop(self, &srv, got);
	}
	expect_report(_metadata, rc, self->cli_out, wrk_want, wrk_unwanted);
	check_ways(_metadata, iwarp, self->out, self->cli_out);
	{
		const char *rps = strstr(self->cli_out, "Requests/sec:");

		if (rps)
			printf("# wrk over nginx, 4 KiB: %.*s\n",
			       (int)strcspn(rps, "\n"), rps);
		fflush(stdout);
	}
	/* Warnings and worse; an empty log is a quiet run. */
	snprintf(path, sizeof(path), "%s/error.log", dir);
	log[0] = 0;
	f = fopen(path, "r");
	if (f) {
		log[fread(log, 1, sizeof(log) - 1, f)] = 0;
		fclose(f);
	}
	EXPECT_EQ(0, log[0]) TH_LOG("nginx's error log: %s", log);
	free(body);
	rm_tree(dir);
}

TEST_HARNESS_MAIN
