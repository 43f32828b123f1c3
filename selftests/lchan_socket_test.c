// SPDX-License-Identifier: GPL-2.0
/*
 * The TCP socket semantics that a layer carrying a program's connections
 * must keep.
 *
 * lchan-run PROGRAM, a preload library, carries a program's TCP
 * connections over lchan stream channels and falls back to plain TCP.
 * The program must not be able to tell: every call below has to answer
 * as the kernel's TCP answers it, with the same byte counts, errno values
 * and poll bits.  This program writes those answers down against plain
 * TCP on loopback (127.0.0.1, and ::1 where the machine has it, else that
 * variant SKIPs), through the libc socket API alone: it does not use
 * liblchan, needs neither the module nor a device, and is run unchanged
 * under lchan-run on an RDMA device's addresses (LCHAN_SOCKET_TEST_ADDR,
 * lchan_run_test.sh), where it must give the same verdicts.
 *
 * Every wait is bounded (poll timeouts, SO_RCVTIMEO and SO_SNDTIMEO,
 * timed joins, timed child waits): a hang fails with a message instead
 * of stalling the run.  Started as "PROGRAM --helper ..." it is the
 * program the exec tests run (helper_main()).
 */
#include "kselftest_harness.h"
#include "lchan_ksft.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS		3000	/* for what must happen */
#define QUIET_MS	50	/* for what must not */
#define MIB		(1024 * 1024)

/* ---------------------------------------------------------------- data */

/*
 * The byte at offset @off of a test stream: a write checked by offset
 * shows a byte lost, doubled or moved anywhere in the stream.
 */
static uint8_t pat(size_t off)
{
	return (uint8_t)(off * 7 + (off >> 8) * 31 + (off >> 16) * 101 + 1);
}

static void fill(uint8_t *p, size_t off, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(off + i);
}

/* Whether @p holds the stream's bytes from @off; says where not. */
static bool same(const uint8_t *p, size_t off, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (p[i] != pat(off + i)) {
			fprintf(stderr, "# stream byte %zu: 0x%02x, not 0x%02x\n",
				off + i, p[i], pat(off + i));
			return false;
		}
	}
	return true;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ---------------------------------------------------------------- sockets */

/*
 * The address of @family the tests listen and connect on, with @port:
 * loopback, or LCHAN_SOCKET_TEST_ADDR (IPv4) and LCHAN_SOCKET_TEST_ADDR6
 * where a layer under test carries connections to a device's address
 * (lchan-run over an RDMA device).
 */
static socklen_t test_addr(int family, uint16_t port,
			   struct sockaddr_storage *ss)
{
	const char *env = getenv(family == AF_INET6 ? "LCHAN_SOCKET_TEST_ADDR6" :
				 "LCHAN_SOCKET_TEST_ADDR");

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		if (env && *env && inet_pton(AF_INET6, env, &a->sin6_addr) != 1)
			a->sin6_family = AF_UNSPEC;
		a->sin6_port = htons(port);
		return sizeof(*a);
	}
	struct sockaddr_in *a = (struct sockaddr_in *)ss;

	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (env && *env && inet_pton(AF_INET, env, &a->sin_addr) != 1)
		a->sin_family = AF_UNSPEC;
	a->sin_port = htons(port);
	return sizeof(*a);
}

static uint16_t port_of(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

/* Same family, address and port. */
static bool same_addr(const struct sockaddr_storage *a,
		      const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family || port_of(a) != port_of(b))
		return false;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr,
			       sizeof(struct in6_addr));
	return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
	       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
}

/* Blocking calls on @fd give up after @ms (EAGAIN): a hang fails. */
static int bound(int fd, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		return -errno;
	return 0;
}

static int int_opt(int fd, int level, int name)
{
	socklen_t len = sizeof(int);
	int v;

	if (getsockopt(fd, level, name, &v, &len))
		return -errno;
	return len == sizeof(int) ? v : -EMSGSIZE;
}

static int set_int_opt(int fd, int level, int name, int v)
{
	return setsockopt(fd, level, name, &v, sizeof(v)) ? -errno : 0;
}

/*
 * A socket of @family bound to its test address (port @port, 0 for
 * an ephemeral one) with SO_REUSEADDR/SO_REUSEPORT from @reuse (0 or
 * the option), listening unless @backlog < 0; the address in @ss.
 * Returns the fd or -errno.
 */
static int bind_on(int family, uint16_t port, int reuse, int backlog,
		   struct sockaddr_storage *ss, socklen_t *len)
{
	int fd, ret;

	fd = socket(family, SOCK_STREAM, 0);
	if (fd < 0)
		return -errno;
	*len = test_addr(family, port, ss);
	if ((reuse && set_int_opt(fd, SOL_SOCKET, reuse, 1)) ||
	    bind(fd, (struct sockaddr *)ss, *len) ||
	    (backlog >= 0 && listen(fd, backlog)) ||
	    getsockname(fd, (struct sockaddr *)ss, len) || bound(fd, WAIT_MS))
		goto err_close;
	return fd;

err_close:
	ret = -errno;
	close(fd);
	return ret;
}

/* A blocking, bounded socket connected to @ss; the fd or -errno. */
static int connect_to(const struct sockaddr_storage *ss, socklen_t len,
		      int type_flags)
{
	int fd, ret;

	fd = socket(ss->ss_family, SOCK_STREAM | type_flags, 0);
	if (fd < 0)
		return -errno;
	if (bound(fd, WAIT_MS) ||
	    connect(fd, (const struct sockaddr *)ss, len))
		goto err_close;
	return fd;

err_close:
	ret = -errno;
	close(fd);
	return ret;
}

/* @fd's revents for @events after at most @ms; 0 on timeout, -errno. */
static int wait_ev(int fd, short events, int ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r = poll(&p, 1, ms);

	return r < 0 ? -errno : r ? p.revents : 0;
}

/* Until FIONREAD says @fd holds @n bytes or @ms went by; what it holds. */
static int wait_inq(int fd, int n, int ms)
{
	double end = now_ms() + ms;
	int have = 0;

	for (;;) {
		if (ioctl(fd, FIONREAD, &have))
			return -errno;
		if (have >= n || now_ms() > end)
			return have;
		sleep_ms(1);
	}
}

/*
 * @len bytes of the stream from @off read from @fd, at most @chunk a
 * call, each wait bounded: the bytes read (fewer at EOF), -ETIMEDOUT,
 * -EBADMSG for a wrong byte, -errno.  *@calls counts the reads.
 */
static ssize_t read_stream(int fd, size_t off, size_t len, size_t chunk,
			   unsigned *calls)
{
	uint8_t *buf = malloc(chunk);
	size_t got = 0;
	ssize_t n = 0, ret;

	if (!buf)
		return -ENOMEM;
	while (got < len) {
		n = wait_ev(fd, POLLIN, WAIT_MS);
		if (n <= 0) {
			n = n ? n : -ETIMEDOUT;
			break;
		}
		n = read(fd, buf, len - got < chunk ? len - got : chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			n = n ? -errno : 0;
			break;
		}
		if (calls)
			(*calls)++;
		if (!same(buf, off + got, n)) {
			n = -EBADMSG;
			break;
		}
		got += n;
	}
	free(buf);
	ret = n < 0 ? n : (ssize_t)got;
	if (n < 0)
		fprintf(stderr, "# read_stream: %zu of %zu bytes, then %s\n",
			got, len, strerror((int)-n));
	return ret;
}

/* @len bytes of the stream from @off written to @fd: bytes or -errno. */
static ssize_t write_stream(int fd, size_t off, size_t len, size_t chunk)
{
	uint8_t *buf = malloc(chunk);
	size_t put = 0;
	ssize_t n = 0;

	if (!buf)
		return -ENOMEM;
	while (put < len) {
		size_t want = len - put < chunk ? len - put : chunk;

		fill(buf, off + put, want);
		n = write(fd, buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			n = n ? -errno : -EIO;
			break;
		}
		put += n;
	}
	free(buf);
	return n < 0 ? n : (ssize_t)put;
}

/* 0 when @fd reads EOF within the bound; -EPROTO if data came instead. */
static int wait_eof(int fd)
{
	char c;
	int r = wait_ev(fd, POLLIN, WAIT_MS);

	if (r <= 0)
		return r ? r : -ETIMEDOUT;
	r = read(fd, &c, 1);
	return r < 0 ? -errno : r ? -EPROTO : 0;
}

/* A child's exit status or 128 + its signal; -ETIMEDOUT (killed). */
static int wait_child(pid_t pid, int ms)
{
	double end = now_ms() + ms;
	int status;
	pid_t r;

	while ((r = waitpid(pid, &status, WNOHANG)) == 0 && now_ms() < end)
		sleep_ms(1);
	if (r == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return -ETIMEDOUT;
	}
	if (r < 0)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) :
	       128 + WTERMSIG(status);
}

static int join(pthread_t t, int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return -pthread_timedjoin_np(t, NULL, &ts);
}

/* A stream to write or read in a thread. */
struct xfer {
	int fd;
	size_t off, len, chunk;
	int delay_ms;		/* before it starts */
	bool shut_wr;		/* shutdown(SHUT_WR) after writing */
	bool close;		/* close(fd) after writing */
	ssize_t ret;		/* bytes, or -errno */
};

static void *writer(void *p)
{
	struct xfer *x = p;

	sleep_ms(x->delay_ms);
	x->ret = write_stream(x->fd, x->off, x->len, x->chunk);
	if (x->shut_wr && shutdown(x->fd, SHUT_WR))
		x->ret = -errno;
	if (x->close && close(x->fd))
		x->ret = -errno;
	return NULL;
}

static void *reader(void *p)
{
	struct xfer *x = p;

	sleep_ms(x->delay_ms);
	x->ret = read_stream(x->fd, x->off, x->len, x->chunk, NULL);
	return NULL;
}

/* Counts a signal's deliveries. */
static volatile sig_atomic_t signals_seen;

static void count_signal(int sig)
{
	(void)sig;
	signals_seen++;
}

static int catch_signal(int sig)
{
	struct sigaction sa = { .sa_handler = count_signal };

	sigemptyset(&sa.sa_mask);
	signals_seen = 0;
	return sigaction(sig, &sa, NULL) ? -errno : 0;
}

/* ---------------------------------------------------------------- exec */

/*
 * The exec tests' other side: this program run again as
 *   PROGRAM --helper echo FD LEN
 *	FD is an open TCP socket: read LEN bytes from it, write them back;
 *   PROGRAM --helper closed GATE FD...
 *	every FD is closed; then wait for a byte on GATE (a pipe) so the
 *	test can look at the peers while this process lives.
 * Exit status: 0 as described, 1 when an fd is not as expected, 2 on
 * a usage error or a timeout.
 */
static int helper_main(int argc, char **argv)
{
	char buf[4096];
	int fd, i, len, got = 0, n;

	if (argc >= 3 && !strcmp(argv[0], "echo")) {
		fd = atoi(argv[1]);
		len = atoi(argv[2]);
		if (len <= 0 || len > (int)sizeof(buf))
			return 2;
		if (int_opt(fd, SOL_SOCKET, SO_TYPE) != SOCK_STREAM ||
		    int_opt(fd, SOL_SOCKET, SO_PROTOCOL) != IPPROTO_TCP) {
			fprintf(stderr, "# helper: fd %d is no TCP socket\n", fd);
			return 1;
		}
		while (got < len) {
			if (wait_ev(fd, POLLIN, WAIT_MS) <= 0)
				return 2;
			n = read(fd, buf + got, len - got);
			if (n <= 0)
				return 1;
			got += n;
		}
		return write(fd, buf, len) == len ? 0 : 1;
	}
	if (argc >= 3 && !strcmp(argv[0], "closed")) {
		for (i = 2; i < argc; i++) {
			fd = atoi(argv[i]);
			if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) {
				fprintf(stderr, "# helper: fd %d is open\n", fd);
				return 1;
			}
		}
		fd = atoi(argv[1]);
		if (wait_ev(fd, POLLIN, WAIT_MS) <= 0)
			return 2;
		return read(fd, buf, 1) == 1 ? 0 : 2;
	}
	fprintf(stderr, "usage: lchan_socket_test --helper echo FD LEN | closed GATE FD...\n");
	return 2;
}

/* Runs this program as the helper with @args in a child; its pid. */
static pid_t spawn_helper(char *const args[])
{
	char *argv[16] = { "lchan_socket_test", "--helper" };
	pid_t pid;
	int i;

	for (i = 0; args[i] && i < 13; i++)
		argv[i + 2] = args[i];
	pid = fork();
	if (pid == 0) {
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	return pid;
}

/* ---------------------------------------------------------------- fixture */

/*
 * A listener on the variant's test address, one connection to it,
 * and a pipe: the ordinary fd that readiness tests mix with sockets.
 */
FIXTURE(tcp) {
	int lfd, cli, srv;
	int pp[2];
	struct sockaddr_storage addr;	/* the listener's */
	socklen_t alen;
};

FIXTURE_VARIANT(tcp) {
	int family;
};

FIXTURE_VARIANT_ADD(tcp, ipv4) {
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(tcp, ipv6) {
	.family = AF_INET6,
};

FIXTURE_SETUP(tcp)
{
	int ret;

	self->cli = self->srv = self->lfd = -1;
	ASSERT_EQ(0, pipe(self->pp));
	ret = bind_on(variant->family, 0, 0, 16, &self->addr, &self->alen);
	/* IPv6 may be missing; IPv4's address never is. */
	if (variant->family == AF_INET6 &&
	    (ret == -EAFNOSUPPORT || ret == -EADDRNOTAVAIL))
		LCHAN_T_SETUP_SKIP("no ::1: %s", strerror(-ret));
	ASSERT_LE(0, ret) TH_LOG("listen: %s", strerror(-ret));
	self->lfd = ret;
	self->cli = connect_to(&self->addr, self->alen, 0);
	ASSERT_LE(0, self->cli) TH_LOG("connect: %s", strerror(-self->cli));
	self->srv = accept(self->lfd, NULL, NULL);
	ASSERT_LE(0, self->srv) TH_LOG("accept: %s", strerror(errno));
	ASSERT_EQ(0, bound(self->srv, WAIT_MS));
}

FIXTURE_TEARDOWN(tcp)
{
	int fds[] = { self->cli, self->srv, self->lfd, self->pp[0], self->pp[1] };
	unsigned i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* ---------------------------------------------------------------- tests */

TEST_F(tcp, blocking_read_waits)
{
	struct xfer w = { .fd = self->cli, .len = 100, .chunk = 100,
			  .delay_ms = QUIET_MS };
	struct timeval tv = { 0, 100 * 1000 };
	uint8_t buf[256];
	pthread_t t;
	double t0;

	/* The data comes after read() started: read() waits for it. */
	t0 = now_ms();
	ASSERT_EQ(0, pthread_create(&t, NULL, writer, &w));
	ASSERT_EQ(100, read(self->srv, buf, sizeof(buf))) TH_LOG("%s", strerror(errno));
	EXPECT_LE(QUIET_MS, now_ms() - t0);
	EXPECT_TRUE(same(buf, 0, 100));
	ASSERT_EQ(0, join(t, WAIT_MS));
	ASSERT_EQ(100, w.ret);

	/* Nothing comes: read() blocks for SO_RCVTIMEO, then EAGAIN. */
	ASSERT_EQ(0, setsockopt(self->srv, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	t0 = now_ms();
	EXPECT_EQ(-1, read(self->srv, buf, sizeof(buf)));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_LE(80, now_ms() - t0);
	EXPECT_EQ(0, fcntl(self->srv, F_GETFL) & O_NONBLOCK);
}

TEST_F(tcp, nonblocking_modes)
{
	struct timeval tv = { WAIT_MS / 1000, 0 };
	char buf[16];
	double t0;
	int s, fl, on = 1, off = 0;

	/* SOCK_NONBLOCK at socket() is O_NONBLOCK; fcntl and FIONBIO flip it. */
	s = socket(variant->family, SOCK_STREAM | SOCK_NONBLOCK, 0);
	ASSERT_LE(0, s);
	fl = fcntl(s, F_GETFL);
	EXPECT_EQ(O_RDWR | O_NONBLOCK, fl & (O_ACCMODE | O_NONBLOCK));
	ASSERT_EQ(0, fcntl(s, F_SETFL, fl & ~O_NONBLOCK));
	EXPECT_EQ(0, fcntl(s, F_GETFL) & O_NONBLOCK);
	ASSERT_EQ(0, ioctl(s, FIONBIO, &on));
	EXPECT_EQ(O_NONBLOCK, fcntl(s, F_GETFL) & O_NONBLOCK);
	ASSERT_EQ(0, ioctl(s, FIONBIO, &off));
	EXPECT_EQ(0, fcntl(s, F_GETFL) & O_NONBLOCK);
	close(s);

	/* A non-blocking read of nothing fails at once, not after SO_RCVTIMEO. */
	ASSERT_EQ(0, setsockopt(self->srv, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	fl = fcntl(self->srv, F_GETFL);
	ASSERT_EQ(0, fcntl(self->srv, F_SETFL, fl | O_NONBLOCK));
	t0 = now_ms();
	EXPECT_EQ(-1, read(self->srv, buf, sizeof(buf)));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(-1, recv(self->srv, buf, sizeof(buf), 0));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_GT(WAIT_MS / 2, now_ms() - t0);

	/* It still reads what is there, and writes. */
	ASSERT_EQ(5, write(self->cli, "hello", 5));
	ASSERT_EQ(POLLIN, wait_ev(self->srv, POLLIN, WAIT_MS));
	EXPECT_EQ(5, read(self->srv, buf, sizeof(buf)));
	EXPECT_EQ(0, memcmp(buf, "hello", 5));
	EXPECT_EQ(2, write(self->srv, "ok", 2));
	ASSERT_EQ(POLLIN, wait_ev(self->cli, POLLIN, WAIT_MS));
	EXPECT_EQ(2, read(self->cli, buf, sizeof(buf)));

	/* A non-blocking listener with nothing pending. */
	ASSERT_EQ(0, fcntl(self->lfd, F_SETFL, O_NONBLOCK));
	EXPECT_EQ(-1, accept(self->lfd, NULL, NULL));
	EXPECT_EQ(EAGAIN, errno);
}

TEST_F(tcp, connect_in_progress)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);
	char c;
	int s, a;

	s = socket(variant->family, SOCK_STREAM | SOCK_NONBLOCK, 0);
	ASSERT_LE(0, s);
	ASSERT_EQ(-1, connect(s, (struct sockaddr *)&self->addr, self->alen));
	ASSERT_EQ(EINPROGRESS, errno);
	/* Writable once connected, with no error pending. */
	ASSERT_EQ(POLLOUT, wait_ev(s, POLLOUT, WAIT_MS));
	EXPECT_EQ(0, int_opt(s, SOL_SOCKET, SO_ERROR));
	/* connect() again says how it went, once; then EISCONN. */
	EXPECT_EQ(0, connect(s, (struct sockaddr *)&self->addr, self->alen));
	EXPECT_EQ(-1, connect(s, (struct sockaddr *)&self->addr, self->alen));
	EXPECT_EQ(EISCONN, errno);
	ASSERT_EQ(0, getpeername(s, (struct sockaddr *)&peer, &len));
	EXPECT_EQ(self->alen, len);
	EXPECT_TRUE(same_addr(&self->addr, &peer));

	a = accept(self->lfd, NULL, NULL);
	ASSERT_LE(0, a) TH_LOG("accept: %s", strerror(errno));
	ASSERT_EQ(1, write(s, "x", 1));
	ASSERT_EQ(POLLIN, wait_ev(a, POLLIN, WAIT_MS));
	EXPECT_EQ(1, read(a, &c, 1));
	EXPECT_EQ('x', c);
	close(a);
	close(s);
}

TEST_F(tcp, connect_refused)
{
	struct sockaddr_storage none;
	socklen_t len;
	int q, s;

	/* A port bound by nobody listening: connects to it are refused. */
	q = bind_on(variant->family, 0, 0, -1, &none, &len);
	ASSERT_LE(0, q);

	s = socket(variant->family, SOCK_STREAM, 0);
	ASSERT_LE(0, s);
	EXPECT_EQ(-1, connect(s, (struct sockaddr *)&none, len));
	EXPECT_EQ(ECONNREFUSED, errno);
	close(s);

	s = socket(variant->family, SOCK_STREAM | SOCK_NONBLOCK, 0);
	ASSERT_LE(0, s);
	ASSERT_EQ(-1, connect(s, (struct sockaddr *)&none, len));
	ASSERT_EQ(EINPROGRESS, errno);
	EXPECT_EQ(POLLOUT | POLLERR | POLLHUP, wait_ev(s, POLLOUT, WAIT_MS));
	/* SO_ERROR says why, once. */
	EXPECT_EQ(ECONNREFUSED, int_opt(s, SOL_SOCKET, SO_ERROR));
	EXPECT_EQ(0, int_opt(s, SOL_SOCKET, SO_ERROR));
	close(s);
	close(q);
}

/* Whether @a is one of @n addresses not @seen yet; marks it seen. */
static bool one_of(const struct sockaddr_storage *a,
		   const struct sockaddr_storage *names, bool *seen, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (!seen[i] && same_addr(a, &names[i])) {
			seen[i] = true;
			return true;
		}
	}
	return false;
}

TEST_F(tcp, accept_and_accept4_flags)
{
	struct sockaddr_storage name[3], from;
	bool seen[3] = { false };
	socklen_t len;
	int c[3], a, i;

	for (i = 0; i < 3; i++) {
		c[i] = connect_to(&self->addr, self->alen, 0);
		ASSERT_LE(0, c[i]) TH_LOG("connect: %s", strerror(-c[i]));
		len = sizeof(name[i]);
		ASSERT_EQ(0, getsockname(c[i], (struct sockaddr *)&name[i], &len));
	}
	ASSERT_EQ(POLLIN, wait_ev(self->lfd, POLLIN, WAIT_MS));

	/* accept(): blocking, kept across exec; the peer's address. */
	len = sizeof(from);
	a = accept(self->lfd, (struct sockaddr *)&from, &len);
	ASSERT_LE(0, a);
	EXPECT_EQ(self->alen, len);
	EXPECT_TRUE(one_of(&from, name, seen, 3));
	EXPECT_EQ(0, fcntl(a, F_GETFL) & O_NONBLOCK);
	EXPECT_EQ(0, fcntl(a, F_GETFD));
	close(a);

	/* accept4() sets what its flags say. */
	len = sizeof(from);
	a = accept4(self->lfd, (struct sockaddr *)&from, &len,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
	ASSERT_LE(0, a);
	EXPECT_EQ(self->alen, len);
	EXPECT_TRUE(one_of(&from, name, seen, 3));
	EXPECT_EQ(O_NONBLOCK, fcntl(a, F_GETFL) & O_NONBLOCK);
	EXPECT_EQ(FD_CLOEXEC, fcntl(a, F_GETFD));
	close(a);
	EXPECT_EQ(-1, accept4(self->lfd, NULL, NULL, 0x1));
	EXPECT_EQ(EINVAL, errno);

	/* A non-blocking listener's sockets do not inherit O_NONBLOCK. */
	ASSERT_EQ(0, fcntl(self->lfd, F_SETFL, O_NONBLOCK));
	ASSERT_EQ(POLLIN, wait_ev(self->lfd, POLLIN, WAIT_MS));
	len = sizeof(from);
	a = accept(self->lfd, (struct sockaddr *)&from, &len);
	ASSERT_LE(0, a);
	EXPECT_TRUE(one_of(&from, name, seen, 3));
	EXPECT_EQ(0, fcntl(a, F_GETFL) & O_NONBLOCK);
	close(a);
	EXPECT_EQ(-1, accept4(self->lfd, NULL, NULL, SOCK_CLOEXEC));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(0, wait_ev(self->lfd, POLLIN, 0));
	for (i = 0; i < 3; i++)
		close(c[i]);
}

/*
 * Every way to write and to read, each one call moving an exact count:
 * the reader waits until all of it arrived, so one call takes it all.
 */
TEST_F(tcp, read_write_vectors)
{
	uint8_t out[8192], in[8192], a[3], b[1000], c[5000], d[8192];
	struct iovec wv[4] = { { out, 1 }, { out + 1, 999 }, { out + 1000, 0 },
			       { out + 1000, 2000 } };
	struct iovec rv[3] = { { a, sizeof(a) }, { b, sizeof(b) },
			       { c, sizeof(c) } };
	struct sockaddr_storage name;
	struct msghdr m;
	size_t off = 0;
	int dir, from, to;

	for (dir = 0; dir < 2; dir++) {
		from = dir ? self->srv : self->cli;
		to = dir ? self->cli : self->srv;
		off = 0;

		/* write() / read(), and the empty ones. */
		fill(out, off, 700);
		EXPECT_EQ(0, write(from, out, 0));
		ASSERT_EQ(700, write(from, out, 700));
		ASSERT_EQ(700, wait_inq(to, 700, WAIT_MS));
		EXPECT_EQ(0, read(to, in, 0));
		ASSERT_EQ(700, read(to, in, sizeof(in)));
		EXPECT_TRUE(same(in, off, 700));
		off += 700;

		/* writev() / readv() of 3003 bytes into 3 + 1000 + 5000. */
		fill(out, off, 3000);
		ASSERT_EQ(3000, writev(from, wv, 4));
		ASSERT_EQ(3000, wait_inq(to, 3000, WAIT_MS));
		ASSERT_EQ(3000, readv(to, rv, 3));
		EXPECT_TRUE(same(a, off, 3));
		EXPECT_TRUE(same(b, off + 3, 1000));
		EXPECT_TRUE(same(c, off + 1003, 1997));
		off += 3000;

		/* send() / recv(). */
		fill(out, off, 4321);
		ASSERT_EQ(4321, send(from, out, 4321, 0));
		ASSERT_EQ(4321, wait_inq(to, 4321, WAIT_MS));
		ASSERT_EQ(4321, recv(to, in, sizeof(in), 0));
		EXPECT_TRUE(same(in, off, 4321));
		off += 4321;

		/* sendmsg() / recvmsg(): no address, no flags on a stream. */
		fill(out, off, 3000);
		memset(&m, 0, sizeof(m));
		m.msg_iov = wv;
		m.msg_iovlen = 4;
		ASSERT_EQ(3000, sendmsg(from, &m, 0));
		ASSERT_EQ(3000, wait_inq(to, 3000, WAIT_MS));
		memset(&m, 0, sizeof(m));
		rv[0] = (struct iovec){ d, 10 };
		rv[1] = (struct iovec){ d + 10, sizeof(d) - 10 };
		m.msg_iov = rv;
		m.msg_iovlen = 2;
		m.msg_name = &name;
		m.msg_namelen = sizeof(name);
		m.msg_flags = -1;
		ASSERT_EQ(3000, recvmsg(to, &m, 0));
		EXPECT_TRUE(same(d, off, 3000));
		EXPECT_EQ(0, m.msg_flags);
		EXPECT_EQ(0, m.msg_namelen);
		EXPECT_EQ(0, m.msg_controllen);
		rv[0] = (struct iovec){ a, sizeof(a) };
		rv[1] = (struct iovec){ b, sizeof(b) };
		EXPECT_EQ(0, wait_inq(to, 1, 0));
	}
}

TEST_F(tcp, peek_dontwait_waitall)
{
	struct xfer w = { .fd = self->cli, .chunk = 1000, .delay_ms = 10 };
	uint8_t buf[4096];
	pthread_t t;

	/* MSG_DONTWAIT makes one call on a blocking socket non-blocking. */
	EXPECT_EQ(-1, recv(self->srv, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(-1, recv(self->srv, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);

	/* MSG_PEEK shows the bytes and leaves them. */
	fill(buf, 0, 100);
	ASSERT_EQ(100, write(self->cli, buf, 100));
	ASSERT_EQ(100, wait_inq(self->srv, 100, WAIT_MS));
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(40, recv(self->srv, buf, 40, MSG_PEEK));
	EXPECT_TRUE(same(buf, 0, 40));
	ASSERT_EQ(100, recv(self->srv, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT));
	EXPECT_TRUE(same(buf, 0, 100));
	ASSERT_EQ(30, recv(self->srv, buf, 30, 0));
	EXPECT_TRUE(same(buf, 0, 30));
	ASSERT_EQ(70, recv(self->srv, buf, sizeof(buf), MSG_PEEK));
	EXPECT_TRUE(same(buf, 30, 70));
	EXPECT_EQ(70, wait_inq(self->srv, 70, 0));
	ASSERT_EQ(70, recv(self->srv, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_TRUE(same(buf, 30, 70));

	/* MSG_WAITALL waits for all of three writes that come apart. */
	w.off = 100;
	w.len = 3000;
	w.chunk = 1000;
	ASSERT_EQ(0, pthread_create(&t, NULL, writer, &w));
	ASSERT_EQ(3000, recv(self->srv, buf, 3000, MSG_WAITALL)) TH_LOG("%s", strerror(errno));
	EXPECT_TRUE(same(buf, 100, 3000));
	ASSERT_EQ(0, join(t, WAIT_MS));
	ASSERT_EQ(3000, w.ret);

	/* ... and returns what came when the stream ends first. */
	w.off = 3100;
	w.len = 500;
	w.shut_wr = true;
	ASSERT_EQ(0, pthread_create(&t, NULL, writer, &w));
	ASSERT_EQ(500, recv(self->srv, buf, 3000, MSG_WAITALL)) TH_LOG("%s", strerror(errno));
	EXPECT_TRUE(same(buf, 3100, 500));
	EXPECT_EQ(0, recv(self->srv, buf, 3000, MSG_WAITALL));
	ASSERT_EQ(0, join(t, WAIT_MS));
	ASSERT_EQ(500, w.ret);
}

/*
 * Writes to @fd (write(), or send() with MSG_DONTWAIT) from stream
 * offset @off until EAGAIN: the bytes it took, -EFBIG past 64 MiB (it
 * never filled), -errno.
 */
static ssize_t fill_up(int fd, bool dontwait, size_t off, uint8_t *buf,
		       size_t chunk)
{
	size_t total = 0;
	ssize_t n;

	for (;;) {
		fill(buf, off + total, chunk);
		n = dontwait ? send(fd, buf, chunk, MSG_DONTWAIT) :
			       write(fd, buf, chunk);
		if (n < 0)
			return errno == EAGAIN ? (ssize_t)total : -errno;
		total += n;
		if (total > 64 * MIB)
			return -EFBIG;
	}
}

TEST_F(tcp, partial_reads_and_writes)
{
	size_t chunk = 4 * MIB, total = 0;
	uint8_t *buf;
	ssize_t n;

	buf = malloc(chunk);
	ASSERT_NE(NULL, buf);

	/* A read takes what is there, up to its size. */
	fill(buf, 0, 100);
	ASSERT_EQ(100, write(self->cli, buf, 100));
	ASSERT_EQ(100, wait_inq(self->srv, 100, WAIT_MS));
	ASSERT_EQ(10, read(self->srv, buf, 10));
	EXPECT_TRUE(same(buf, 0, 10));
	EXPECT_EQ(90, wait_inq(self->srv, 0, 0));
	ASSERT_EQ(90, read(self->srv, buf, chunk));
	EXPECT_TRUE(same(buf, 10, 90));

	/*
	 * A non-blocking write larger than the connection holds takes part
	 * of its bytes; more writes, until EAGAIN.  Then MSG_DONTWAIT on
	 * the socket made blocking again, until EAGAIN too.
	 */
	ASSERT_EQ(0, set_int_opt(self->cli, SOL_SOCKET, SO_SNDBUF, 32768));
	ASSERT_EQ(0, fcntl(self->cli, F_SETFL, O_NONBLOCK));
	fill(buf, 100, chunk);
	n = write(self->cli, buf, chunk);
	ASSERT_LT(0, n) TH_LOG("%s", strerror(errno));
	EXPECT_GT(chunk, n);
	total = n;
	n = fill_up(self->cli, false, 100 + total, buf, chunk);
	ASSERT_LE(0, n) TH_LOG("%s", strerror(-n));
	total += n;
	ASSERT_EQ(0, fcntl(self->cli, F_SETFL, 0));
	n = fill_up(self->cli, true, 100 + total, buf, chunk);
	ASSERT_LE(0, n) TH_LOG("%s", strerror(-n));
	total += n;

	/* The reader gets every byte written, no more; the writer its room back. */
	ASSERT_EQ(total, read_stream(self->srv, 100, total, 65536, NULL));
	EXPECT_EQ(POLLOUT, wait_ev(self->cli, POLLOUT, WAIT_MS));
	EXPECT_EQ(-1, recv(self->srv, buf, 1, MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	free(buf);
}

TEST_F(tcp, large_write_small_reads)
{
	struct xfer w = { .fd = self->cli, .len = MIB, .chunk = MIB };
	unsigned calls = 0;
	pthread_t t;

	/* One blocking write of 1 MiB against reads of 1000 bytes. */
	ASSERT_EQ(0, pthread_create(&t, NULL, writer, &w));
	EXPECT_EQ(MIB, read_stream(self->srv, 0, MIB, 1000, &calls));
	EXPECT_LE((MIB + 999) / 1000, calls);
	ASSERT_EQ(0, join(t, WAIT_MS));
	EXPECT_EQ(MIB, w.ret);
}

/*
 * A stream has no message boundaries: 150 writes of 1 to 150 bytes are
 * one read, and one write is 150 reads of 1 to 150 bytes.
 */
TEST_F(tcp, byte_stream_no_boundaries)
{
	size_t total = 150 * 151 / 2, off = 0, i;
	uint8_t buf[16384];

	for (i = 1; i <= 150; i++) {
		fill(buf, off, i);
		ASSERT_EQ(i, write(self->cli, buf, i));
		off += i;
	}
	ASSERT_EQ(total, wait_inq(self->srv, total, WAIT_MS));
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(total, read(self->srv, buf, sizeof(buf)));
	EXPECT_TRUE(same(buf, 0, total));

	fill(buf, total, total);
	ASSERT_EQ(total, write(self->cli, buf, total));
	ASSERT_EQ(total, wait_inq(self->srv, total, WAIT_MS));
	off = total;
	for (i = 1; i <= 150; i++) {
		memset(buf, 0, i);
		ASSERT_EQ(i, read(self->srv, buf, i));
		ASSERT_TRUE(same(buf, off, i));
		off += i;
	}
	EXPECT_EQ(0, wait_inq(self->srv, 1, 0));
}

TEST_F(tcp, shutdown_wr_half_close)
{
	uint8_t buf[64];

	fill(buf, 0, 10);
	ASSERT_EQ(10, write(self->cli, buf, 10));
	ASSERT_EQ(0, shutdown(self->cli, SHUT_WR));

	/* The peer reads the data, then EOF for good. */
	ASSERT_EQ(10, wait_inq(self->srv, 10, WAIT_MS));
	ASSERT_EQ(10, read(self->srv, buf, sizeof(buf)));
	EXPECT_TRUE(same(buf, 0, 10));
	EXPECT_EQ(POLLIN | POLLRDHUP, wait_ev(self->srv, POLLIN | POLLRDHUP, WAIT_MS));
	EXPECT_EQ(0, read(self->srv, buf, sizeof(buf)));
	EXPECT_EQ(0, read(self->srv, buf, sizeof(buf)));

	/* The other way still works. */
	EXPECT_EQ(POLLOUT, wait_ev(self->srv, POLLOUT, 0));
	fill(buf, 10, 20);
	ASSERT_EQ(20, write(self->srv, buf, 20));
	ASSERT_EQ(20, wait_inq(self->cli, 20, WAIT_MS));
	ASSERT_EQ(20, read(self->cli, buf, sizeof(buf)));
	EXPECT_TRUE(same(buf, 10, 20));

	/* Writing after SHUT_WR: EPIPE, and SIGPIPE unless MSG_NOSIGNAL. */
	ASSERT_EQ(0, catch_signal(SIGPIPE));
	EXPECT_EQ(-1, send(self->cli, buf, 1, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
	EXPECT_EQ(0, signals_seen);
	EXPECT_EQ(-1, write(self->cli, buf, 1));
	EXPECT_EQ(EPIPE, errno);
	EXPECT_EQ(1, signals_seen);

	/* Both ways shut: EOF and a hang-up. */
	ASSERT_EQ(0, shutdown(self->srv, SHUT_WR));
	EXPECT_EQ(POLLIN | POLLRDHUP | POLLHUP,
		  wait_ev(self->cli, POLLIN | POLLRDHUP, WAIT_MS));
	EXPECT_EQ(0, read(self->cli, buf, sizeof(buf)));
}

TEST_F(tcp, shutdown_rd)
{
	uint8_t buf[64];
	int s;

	/* After SHUT_RD a read returns 0 at once; writing goes on. */
	ASSERT_EQ(0, shutdown(self->cli, SHUT_RD));
	EXPECT_EQ(0, read(self->cli, buf, sizeof(buf)));
	EXPECT_EQ(POLLIN | POLLRDHUP, wait_ev(self->cli, POLLIN | POLLRDHUP, 0));
	fill(buf, 0, 30);
	ASSERT_EQ(30, write(self->cli, buf, 30));
	ASSERT_EQ(30, read_stream(self->srv, 0, 30, 64, NULL));

	EXPECT_EQ(-1, shutdown(self->cli, 3));
	EXPECT_EQ(EINVAL, errno);
	s = socket(variant->family, SOCK_STREAM, 0);
	ASSERT_LE(0, s);
	EXPECT_EQ(-1, shutdown(s, SHUT_RDWR));
	EXPECT_EQ(ENOTCONN, errno);
	close(s);
}

/* A 4 MiB write and close at once: the peer gets all of it, then EOF. */
TEST_F(tcp, close_with_data_in_flight)
{
	struct xfer w = { .fd = self->cli, .len = 4 * MIB, .chunk = 4 * MIB,
			  .close = true };
	pthread_t t;

	ASSERT_EQ(0, pthread_create(&t, NULL, writer, &w));
	EXPECT_EQ(4 * MIB, read_stream(self->srv, 0, 4 * MIB, 65536, NULL));
	ASSERT_EQ(0, join(t, WAIT_MS));
	self->cli = -1;
	EXPECT_EQ(4 * MIB, w.ret);
	EXPECT_EQ(0, wait_eof(self->srv));
}

TEST_F(tcp, dup_and_fcntl)
{
	int d, d2, d3, d4, p[2], fl;
	char buf[8];

	ASSERT_EQ(0, pipe(p));
	d = dup(self->cli);
	ASSERT_LE(0, d);
	/* dup2() onto the pipe's write end closes that: its reader sees EOF. */
	d2 = dup2(self->cli, p[1]);
	ASSERT_EQ(p[1], d2);
	ASSERT_EQ(POLLHUP, wait_ev(p[0], POLLIN, WAIT_MS));
	EXPECT_EQ(SOCK_STREAM, int_opt(d2, SOL_SOCKET, SO_TYPE));
	d3 = dup3(self->cli, p[0], O_CLOEXEC);
	ASSERT_EQ(p[0], d3);
	EXPECT_EQ(self->cli, dup2(self->cli, self->cli));
	EXPECT_EQ(-1, dup3(self->cli, self->cli, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, dup3(self->cli, 100, 0x4));
	EXPECT_EQ(EINVAL, errno);
	d4 = fcntl(self->cli, F_DUPFD_CLOEXEC, 100);
	ASSERT_LE(100, d4);

	/* Descriptor flags are per fd. */
	EXPECT_EQ(0, fcntl(d, F_GETFD));
	EXPECT_EQ(0, fcntl(d2, F_GETFD));
	EXPECT_EQ(FD_CLOEXEC, fcntl(d3, F_GETFD));
	EXPECT_EQ(FD_CLOEXEC, fcntl(d4, F_GETFD));
	ASSERT_EQ(0, fcntl(d, F_SETFD, FD_CLOEXEC));
	EXPECT_EQ(FD_CLOEXEC, fcntl(d, F_GETFD));
	EXPECT_EQ(0, fcntl(self->cli, F_GETFD));

	/* Status flags belong to the open socket, shared by its fds. */
	fl = fcntl(d3, F_GETFL);
	EXPECT_EQ(O_RDWR, fl & (O_ACCMODE | O_NONBLOCK));
	ASSERT_EQ(0, fcntl(d3, F_SETFL, fl | O_NONBLOCK));
	EXPECT_EQ(O_NONBLOCK, fcntl(self->cli, F_GETFL) & O_NONBLOCK);
	EXPECT_EQ(O_NONBLOCK, fcntl(d, F_GETFL) & O_NONBLOCK);
	ASSERT_EQ(0, fcntl(self->cli, F_SETFL, fl));
	EXPECT_EQ(0, fcntl(d4, F_GETFL) & O_NONBLOCK);

	/* One stream whichever fd writes. */
	ASSERT_EQ(1, write(self->cli, "a", 1));
	ASSERT_EQ(1, write(d, "b", 1));
	ASSERT_EQ(1, send(d2, "c", 1, 0));
	ASSERT_EQ(1, write(d3, "d", 1));
	ASSERT_EQ(1, write(d4, "e", 1));
	ASSERT_EQ(5, wait_inq(self->srv, 5, WAIT_MS));
	ASSERT_EQ(5, read(self->srv, buf, sizeof(buf)));
	EXPECT_EQ(0, memcmp(buf, "abcde", 5));

	/* The connection ends with the last fd. */
	close(self->cli);
	self->cli = -1;
	close(d);
	close(d2);
	close(d3);
	EXPECT_EQ(0, wait_ev(self->srv, POLLIN, QUIET_MS));
	close(d4);
	EXPECT_EQ(0, wait_eof(self->srv));
}

TEST_F(tcp, names)
{
	socklen_t want = variant->family == AF_INET6 ?
		sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	struct sockaddr_storage a, b;
	socklen_t len;
	int s;

	len = sizeof(a);
	ASSERT_EQ(0, getsockname(self->lfd, (struct sockaddr *)&a, &len));
	EXPECT_EQ(want, len);
	EXPECT_TRUE(same_addr(&self->addr, &a));
	EXPECT_NE(0, port_of(&a));

	/* The client's peer is the listener; the server's, the client. */
	len = sizeof(a);
	ASSERT_EQ(0, getpeername(self->cli, (struct sockaddr *)&a, &len));
	EXPECT_EQ(want, len);
	EXPECT_TRUE(same_addr(&self->addr, &a));
	len = sizeof(a);
	ASSERT_EQ(0, getsockname(self->srv, (struct sockaddr *)&a, &len));
	EXPECT_EQ(want, len);
	EXPECT_TRUE(same_addr(&self->addr, &a));
	len = sizeof(a);
	ASSERT_EQ(0, getsockname(self->cli, (struct sockaddr *)&a, &len));
	EXPECT_EQ(want, len);
	len = sizeof(b);
	ASSERT_EQ(0, getpeername(self->srv, (struct sockaddr *)&b, &len));
	EXPECT_EQ(want, len);
	EXPECT_TRUE(same_addr(&a, &b));
	EXPECT_NE(port_of(&self->addr), port_of(&a));

	/* A short buffer gets the start; the length says the whole. */
	memset(&b, 0xa5, sizeof(b));
	len = 4;
	ASSERT_EQ(0, getpeername(self->srv, (struct sockaddr *)&b, &len));
	EXPECT_EQ(want, len);
	EXPECT_EQ(0, memcmp(&a, &b, 4));
	EXPECT_EQ(0xa5, ((uint8_t *)&b)[4]);

	len = sizeof(a);
	EXPECT_EQ(-1, getpeername(self->lfd, (struct sockaddr *)&a, &len));
	EXPECT_EQ(ENOTCONN, errno);
	s = socket(variant->family, SOCK_STREAM, 0);
	ASSERT_LE(0, s);
	len = sizeof(a);
	EXPECT_EQ(-1, getpeername(s, (struct sockaddr *)&a, &len));
	EXPECT_EQ(ENOTCONN, errno);
	close(s);

	/* What the socket is. */
	EXPECT_EQ(SOCK_STREAM, int_opt(self->cli, SOL_SOCKET, SO_TYPE));
	EXPECT_EQ(variant->family, int_opt(self->cli, SOL_SOCKET, SO_DOMAIN));
	EXPECT_EQ(IPPROTO_TCP, int_opt(self->cli, SOL_SOCKET, SO_PROTOCOL));
	EXPECT_EQ(1, int_opt(self->lfd, SOL_SOCKET, SO_ACCEPTCONN));
	EXPECT_EQ(0, int_opt(self->srv, SOL_SOCKET, SO_ACCEPTCONN));
}

TEST_F(tcp, sockopt_flags)
{
	static const struct { int level, name; } opts[] = {
		{ IPPROTO_TCP, TCP_NODELAY }, { SOL_SOCKET, SO_KEEPALIVE },
		{ SOL_SOCKET, SO_REUSEADDR }, { SOL_SOCKET, SO_REUSEPORT },
	};
	unsigned i;
	int lv, nm;

	/* Off by default, on and off again as set. */
	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		lv = opts[i].level;
		nm = opts[i].name;
		EXPECT_EQ(0, int_opt(self->cli, lv, nm)) TH_LOG("option %u", i);
		ASSERT_EQ(0, set_int_opt(self->cli, lv, nm, 1));
		EXPECT_EQ(1, int_opt(self->cli, lv, nm)) TH_LOG("option %u", i);
		ASSERT_EQ(0, set_int_opt(self->cli, lv, nm, 0));
		EXPECT_EQ(0, int_opt(self->cli, lv, nm)) TH_LOG("option %u", i);
	}
	EXPECT_EQ(0, int_opt(self->cli, SOL_SOCKET, SO_ERROR));
	EXPECT_EQ(0, int_opt(self->srv, SOL_SOCKET, SO_ERROR));

	/* With TCP_NODELAY on, data still flows. */
	ASSERT_EQ(0, set_int_opt(self->cli, IPPROTO_TCP, TCP_NODELAY, 1));
	ASSERT_EQ(3, write(self->cli, "abc", 3));
	EXPECT_EQ(3, wait_inq(self->srv, 3, WAIT_MS));
}

/*
 * SO_REUSEADDR, on the old listener and the new: a server's port is free
 * again while its last connection lingers in TIME_WAIT.
 */
TEST_F(tcp, sockopt_reuseaddr_rebinds)
{
	struct sockaddr_storage ss;
	socklen_t len;
	uint16_t port;
	int l, c, a, s;

	l = bind_on(variant->family, 0, SO_REUSEADDR, 4, &ss, &len);
	ASSERT_LE(0, l);
	port = port_of(&ss);
	c = connect_to(&ss, len, 0);
	ASSERT_LE(0, c);
	a = accept(l, NULL, NULL);
	ASSERT_LE(0, a);
	close(l);
	/* The server's side closes first: its end waits in TIME_WAIT. */
	close(a);
	EXPECT_EQ(0, wait_eof(c));
	close(c);

	s = bind_on(variant->family, port, 0, 4, &ss, &len);
	EXPECT_EQ(-EADDRINUSE, s);
	s = bind_on(variant->family, port, SO_REUSEADDR, 4, &ss, &len);
	ASSERT_LE(0, s) TH_LOG("%s", strerror(-s));
	EXPECT_EQ(port, port_of(&ss));
	c = connect_to(&ss, len, 0);
	EXPECT_LE(0, c);
	close(c);
	close(s);
}

/* SO_REUSEPORT: two listeners on one port, a connection reaches one. */
TEST_F(tcp, sockopt_reuseport)
{
	struct sockaddr_storage ss, ss2;
	struct pollfd p[2];
	socklen_t len;
	int l1, l2, c, a, i;

	l1 = bind_on(variant->family, 0, SO_REUSEPORT, 4, &ss, &len);
	ASSERT_LE(0, l1);
	l2 = bind_on(variant->family, port_of(&ss), SO_REUSEPORT, 4, &ss2, &len);
	ASSERT_LE(0, l2) TH_LOG("%s", strerror(-l2));
	EXPECT_EQ(-EADDRINUSE, bind_on(variant->family, port_of(&ss), 0, 4, &ss2, &len));

	c = connect_to(&ss, len, 0);
	ASSERT_LE(0, c);
	p[0] = (struct pollfd){ .fd = l1, .events = POLLIN };
	p[1] = (struct pollfd){ .fd = l2, .events = POLLIN };
	ASSERT_EQ(1, poll(p, 2, WAIT_MS));
	i = p[0].revents ? 0 : 1;
	EXPECT_EQ(POLLIN, p[i].revents);
	EXPECT_EQ(0, p[!i].revents);
	a = accept(p[i].fd, NULL, NULL);
	ASSERT_LE(0, a);
	ASSERT_EQ(2, write(a, "hi", 2));
	EXPECT_EQ(2, wait_inq(c, 2, WAIT_MS));
	close(a);
	close(c);
	close(l2);
	close(l1);
}

TEST_F(tcp, sockopt_buffers)
{
	int v = 65536, max;
	FILE *f;

	/* The kernel doubles the size asked for (bookkeeping), up to its maximum. */
	f = fopen("/proc/sys/net/core/rmem_max", "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%d", &max));
	fclose(f);
	ASSERT_EQ(0, set_int_opt(self->cli, SOL_SOCKET, SO_RCVBUF, v));
	EXPECT_EQ(2 * (v < max ? v : max), int_opt(self->cli, SOL_SOCKET, SO_RCVBUF));
	f = fopen("/proc/sys/net/core/wmem_max", "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%d", &max));
	fclose(f);
	ASSERT_EQ(0, set_int_opt(self->cli, SOL_SOCKET, SO_SNDBUF, v));
	EXPECT_EQ(2 * (v < max ? v : max), int_opt(self->cli, SOL_SOCKET, SO_SNDBUF));

	/* Data flows through the smaller buffers. */
	struct xfer w = { .fd = self->cli, .len = MIB, .chunk = 65536 };
	pthread_t t;

	ASSERT_EQ(0, pthread_create(&t, NULL, writer, &w));
	EXPECT_EQ(MIB, read_stream(self->srv, 0, MIB, 65536, NULL));
	ASSERT_EQ(0, join(t, WAIT_MS));
	EXPECT_EQ(MIB, w.ret);
}

TEST_F(tcp, sockopt_linger)
{
	struct linger lg = { 1, 5 };
	socklen_t len = sizeof(lg);
	char buf[8];

	memset(&lg, 0xff, sizeof(lg));
	ASSERT_EQ(0, getsockopt(self->cli, SOL_SOCKET, SO_LINGER, &lg, &len));
	EXPECT_EQ(sizeof(lg), len);
	EXPECT_EQ(0, lg.l_onoff);
	EXPECT_EQ(0, lg.l_linger);
	lg = (struct linger){ 1, 5 };
	ASSERT_EQ(0, setsockopt(self->cli, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
	memset(&lg, 0, sizeof(lg));
	ASSERT_EQ(0, getsockopt(self->cli, SOL_SOCKET, SO_LINGER, &lg, &len));
	EXPECT_EQ(1, lg.l_onoff);
	EXPECT_EQ(5, lg.l_linger);

	/* Linger on with no time: close() resets the connection. */
	lg = (struct linger){ 1, 0 };
	ASSERT_EQ(0, setsockopt(self->cli, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
	ASSERT_EQ(0, close(self->cli));
	self->cli = -1;
	ASSERT_NE(0, wait_ev(self->srv, POLLIN, WAIT_MS));
	EXPECT_EQ(POLLIN | POLLOUT | POLLERR | POLLHUP | POLLRDHUP,
		  wait_ev(self->srv, POLLIN | POLLOUT | POLLRDHUP, 0));
	EXPECT_EQ(ECONNRESET, int_opt(self->srv, SOL_SOCKET, SO_ERROR));
	EXPECT_EQ(0, read(self->srv, buf, sizeof(buf)));
	EXPECT_EQ(-1, send(self->srv, "x", 1, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
}

/* A reset reaches the reader as ECONNRESET, once. */
TEST_F(tcp, reset_read_error)
{
	struct linger lg = { 1, 0 };
	char buf[8];

	ASSERT_EQ(0, setsockopt(self->cli, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
	ASSERT_EQ(0, close(self->cli));
	self->cli = -1;
	ASSERT_NE(0, wait_ev(self->srv, POLLIN, WAIT_MS));
	EXPECT_EQ(-1, read(self->srv, buf, sizeof(buf)));
	EXPECT_EQ(ECONNRESET, errno);
	EXPECT_EQ(0, read(self->srv, buf, sizeof(buf)));
}

TEST_F(tcp, poll_and_ppoll_mixed)
{
	struct timespec ts = { 0, QUIET_MS * 1000000L };
	struct pollfd p[5];
	sigset_t block, unblock;
	int gone;
	char c;

	gone = dup(self->pp[0]);
	ASSERT_LE(0, gone);
	close(gone);
	p[0] = (struct pollfd){ .fd = self->srv, .events = POLLIN };
	p[1] = (struct pollfd){ .fd = self->pp[0], .events = POLLIN };
	p[2] = (struct pollfd){ .fd = self->lfd, .events = POLLIN };
	p[3] = (struct pollfd){ .fd = -1, .events = POLLIN };
	p[4] = (struct pollfd){ .fd = self->cli, .events = POLLIN };

	/* Nothing ready: the timeout. */
	EXPECT_EQ(0, poll(p, 5, QUIET_MS));
	EXPECT_EQ(0, p[0].revents | p[1].revents | p[2].revents | p[3].revents | p[4].revents);
	EXPECT_EQ(0, ppoll(p, 5, &ts, NULL));

	/* The pipe alone. */
	ASSERT_EQ(1, write(self->pp[1], "x", 1));
	ASSERT_EQ(1, poll(p, 5, WAIT_MS));
	EXPECT_EQ(0, p[0].revents);
	EXPECT_EQ(POLLIN, p[1].revents);
	EXPECT_EQ(0, p[2].revents | p[3].revents | p[4].revents);

	/* The socket and the pipe; a writable socket. */
	ASSERT_EQ(3, write(self->cli, "abc", 3));
	ASSERT_EQ(3, wait_inq(self->srv, 3, WAIT_MS));
	p[4].events = POLLOUT;
	ASSERT_EQ(3, ppoll(p, 5, &ts, NULL));
	EXPECT_EQ(POLLIN, p[0].revents);
	EXPECT_EQ(POLLIN, p[1].revents);
	EXPECT_EQ(0, p[2].revents | p[3].revents);
	EXPECT_EQ(POLLOUT, p[4].revents);
	ASSERT_EQ(1, read(self->pp[0], &c, 1));

	/* A closed fd in the set: POLLNVAL. */
	p[3].fd = gone;
	ASSERT_EQ(3, poll(p, 5, 0));
	EXPECT_EQ(0, p[1].revents);
	EXPECT_EQ(POLLNVAL, p[3].revents);

	/* ppoll() lets a blocked signal in for its wait. */
	ASSERT_EQ(0, catch_signal(SIGUSR1));
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	ASSERT_EQ(0, sigprocmask(SIG_BLOCK, &block, &unblock));
	sigdelset(&unblock, SIGUSR1);
	ASSERT_EQ(0, raise(SIGUSR1));
	EXPECT_EQ(0, signals_seen);
	ts.tv_sec = WAIT_MS / 1000;
	EXPECT_EQ(-1, ppoll(p + 1, 2, &ts, &unblock));
	EXPECT_EQ(EINTR, errno);
	EXPECT_EQ(1, signals_seen);
}

TEST_F(tcp, select_and_pselect_mixed)
{
	struct timespec ts = { 0, QUIET_MS * 1000000L };
	struct timeval tv;
	sigset_t block, unblock;
	fd_set r, w;
	int nfds, gone;

	nfds = (self->pp[0] > self->srv ? self->pp[0] : self->srv) + 1;
	nfds = (self->cli >= nfds ? self->cli + 1 : nfds);

	/* Nothing readable: the timeout, the sets emptied. */
	FD_ZERO(&r);
	FD_SET(self->srv, &r);
	FD_SET(self->pp[0], &r);
	tv = (struct timeval){ 0, QUIET_MS * 1000 };
	EXPECT_EQ(0, select(nfds, &r, NULL, NULL, &tv));
	EXPECT_FALSE(FD_ISSET(self->srv, &r));
	EXPECT_FALSE(FD_ISSET(self->pp[0], &r));

	/* The pipe readable, the client writable. */
	ASSERT_EQ(1, write(self->pp[1], "x", 1));
	FD_ZERO(&r);
	FD_SET(self->srv, &r);
	FD_SET(self->pp[0], &r);
	FD_ZERO(&w);
	FD_SET(self->cli, &w);
	tv = (struct timeval){ WAIT_MS / 1000, 0 };
	ASSERT_EQ(2, select(nfds, &r, &w, NULL, &tv));
	EXPECT_FALSE(FD_ISSET(self->srv, &r));
	EXPECT_TRUE(FD_ISSET(self->pp[0], &r));
	EXPECT_TRUE(FD_ISSET(self->cli, &w));

	/* And the socket readable, by pselect(). */
	ASSERT_EQ(3, write(self->cli, "abc", 3));
	ASSERT_EQ(3, wait_inq(self->srv, 3, WAIT_MS));
	FD_ZERO(&r);
	FD_SET(self->srv, &r);
	FD_SET(self->pp[0], &r);
	ASSERT_EQ(2, pselect(nfds, &r, NULL, NULL, &ts, NULL));
	EXPECT_TRUE(FD_ISSET(self->srv, &r));
	EXPECT_TRUE(FD_ISSET(self->pp[0], &r));

	/* A closed fd: EBADF. */
	gone = dup(self->pp[1]);
	ASSERT_LE(0, gone);
	close(gone);
	FD_ZERO(&r);
	FD_SET(gone, &r);
	FD_SET(self->srv, &r);
	tv = (struct timeval){ 0, 0 };
	EXPECT_EQ(-1, select((gone > nfds - 1 ? gone : nfds - 1) + 1, &r, NULL, NULL, &tv));
	EXPECT_EQ(EBADF, errno);

	/* pselect() lets a blocked signal in for its wait. */
	ASSERT_EQ(0, catch_signal(SIGUSR1));
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	ASSERT_EQ(0, sigprocmask(SIG_BLOCK, &block, &unblock));
	sigdelset(&unblock, SIGUSR1);
	ASSERT_EQ(0, raise(SIGUSR1));
	FD_ZERO(&r);
	FD_SET(self->lfd, &r);
	ts.tv_sec = WAIT_MS / 1000;
	EXPECT_EQ(-1, pselect(self->lfd + 1, &r, NULL, NULL, &ts, &unblock));
	EXPECT_EQ(EINTR, errno);
	EXPECT_EQ(1, signals_seen);
}

/* An epoll set of the server socket (tag 1) and a pipe (tag 2). */
static int epoll_pair(int sock, uint32_t sock_ev, int pipe_rd, uint32_t pipe_ev)
{
	struct epoll_event e;
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0)
		return -errno;
	e = (struct epoll_event){ .events = sock_ev, .data.u64 = 1 };
	if (epoll_ctl(ep, EPOLL_CTL_ADD, sock, &e))
		goto err_close;
	e = (struct epoll_event){ .events = pipe_ev, .data.u64 = 2 };
	if (pipe_rd >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, pipe_rd, &e))
		goto err_close;
	return ep;

err_close:
	sock = -errno;
	close(ep);
	return sock;
}

/* The events of @ep within @ms as "tag:events" pairs, tag order; their count. */
static int epoll_events(int ep, int ms, uint32_t got[3])
{
	struct epoll_event e[4];
	int n, i;

	got[0] = got[1] = got[2] = 0;
	n = epoll_wait(ep, e, 4, ms);
	if (n < 0)
		return -errno;
	for (i = 0; i < n; i++)
		if (e[i].data.u64 < 3)
			got[e[i].data.u64] |= e[i].events;
	return n;
}

TEST_F(tcp, epoll_level)
{
	uint32_t got[3];
	int ep;
	char buf[16];

	ep = epoll_pair(self->srv, EPOLLIN, self->pp[0], EPOLLIN);
	ASSERT_LE(0, ep);
	EXPECT_EQ(FD_CLOEXEC, fcntl(ep, F_GETFD));
	EXPECT_EQ(0, epoll_events(ep, QUIET_MS, got));

	ASSERT_EQ(10, write(self->cli, "0123456789", 10));
	ASSERT_EQ(1, epoll_events(ep, WAIT_MS, got));
	EXPECT_EQ(EPOLLIN, got[1]);
	/* Level: reported again while data is left. */
	ASSERT_EQ(10, wait_inq(self->srv, 10, WAIT_MS));
	ASSERT_EQ(1, epoll_events(ep, 0, got));
	EXPECT_EQ(EPOLLIN, got[1]);
	ASSERT_EQ(1, write(self->pp[1], "x", 1));
	ASSERT_EQ(2, epoll_events(ep, WAIT_MS, got));
	EXPECT_EQ(EPOLLIN, got[1]);
	EXPECT_EQ(EPOLLIN, got[2]);
	ASSERT_EQ(5, read(self->srv, buf, 5));
	ASSERT_EQ(2, epoll_events(ep, 0, got));
	ASSERT_EQ(5, read(self->srv, buf, 16));
	ASSERT_EQ(1, epoll_events(ep, 0, got));
	EXPECT_EQ(0, got[1]);
	EXPECT_EQ(EPOLLIN, got[2]);
	ASSERT_EQ(1, read(self->pp[0], buf, 1));
	EXPECT_EQ(0, epoll_events(ep, QUIET_MS, got));
	close(ep);
}

TEST_F(tcp, epoll_edge)
{
	struct epoll_event e = { .events = EPOLLOUT | EPOLLET, .data.u64 = 0 };
	uint32_t got[3];
	int ep;

	ep = epoll_pair(self->srv, EPOLLIN | EPOLLET, self->pp[0], EPOLLIN | EPOLLET);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->cli, &e));
	/* A writable socket: one report. */
	ASSERT_EQ(1, epoll_events(ep, WAIT_MS, got));
	EXPECT_EQ(EPOLLOUT, got[0]);
	EXPECT_EQ(0, epoll_events(ep, QUIET_MS, got));

	/* New data is one report, however much is left unread. */
	ASSERT_EQ(4, write(self->cli, "abcd", 4));
	ASSERT_EQ(1, write(self->pp[1], "x", 1));
	ASSERT_EQ(4, wait_inq(self->srv, 4, WAIT_MS));
	ASSERT_EQ(2, epoll_events(ep, WAIT_MS, got));
	EXPECT_EQ(EPOLLIN, got[1]);
	EXPECT_EQ(EPOLLIN, got[2]);
	EXPECT_EQ(0, epoll_events(ep, QUIET_MS, got));
	ASSERT_EQ(4, write(self->cli, "efgh", 4));
	ASSERT_EQ(1, epoll_events(ep, WAIT_MS, got));
	EXPECT_EQ(EPOLLIN, got[1]);
	EXPECT_EQ(0, epoll_events(ep, QUIET_MS, got));
	EXPECT_EQ(8, wait_inq(self->srv, 8, WAIT_MS));
	close(ep);
}

TEST_F(tcp, epoll_oneshot)
{
	struct epoll_event e = { .events = EPOLLIN | EPOLLONESHOT, .data.u64 = 1 };
	uint32_t got[3];
	int ep;

	ep = epoll_pair(self->srv, EPOLLIN | EPOLLONESHOT, self->pp[0], EPOLLIN | EPOLLONESHOT);
	ASSERT_LE(0, ep);
	ASSERT_EQ(3, write(self->cli, "abc", 3));
	ASSERT_EQ(1, epoll_events(ep, WAIT_MS, got));
	EXPECT_EQ(EPOLLIN, got[1]);
	/* Off after one report, whatever comes. */
	ASSERT_EQ(3, write(self->cli, "def", 3));
	ASSERT_EQ(6, wait_inq(self->srv, 6, WAIT_MS));
	EXPECT_EQ(0, epoll_events(ep, QUIET_MS, got));
	/* Re-armed, it reports what is there. */
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_MOD, self->srv, &e));
	ASSERT_EQ(1, epoll_events(ep, 0, got));
	EXPECT_EQ(EPOLLIN, got[1]);
	EXPECT_EQ(0, epoll_events(ep, 0, got));

	ASSERT_EQ(1, write(self->pp[1], "x", 1));
	ASSERT_EQ(1, epoll_events(ep, WAIT_MS, got));
	EXPECT_EQ(EPOLLIN, got[2]);
	ASSERT_EQ(1, write(self->pp[1], "x", 1));
	EXPECT_EQ(0, epoll_events(ep, QUIET_MS, got));
	close(ep);
}

TEST_F(tcp, epoll_rdhup)
{
	uint32_t got[3];
	int ep;

	ep = epoll_pair(self->srv, EPOLLIN | EPOLLRDHUP, self->pp[0], EPOLLIN);
	ASSERT_LE(0, ep);
	EXPECT_EQ(0, epoll_events(ep, QUIET_MS, got));
	/* The peer's SHUT_WR: readable (EOF) and EPOLLRDHUP. */
	ASSERT_EQ(0, shutdown(self->cli, SHUT_WR));
	ASSERT_EQ(1, epoll_events(ep, WAIT_MS, got));
	EXPECT_EQ(EPOLLIN | EPOLLRDHUP, got[1]);
	/* Both ways shut: EPOLLHUP too, asked for or not; the pipe apart. */
	ASSERT_EQ(0, shutdown(self->srv, SHUT_WR));
	ASSERT_EQ(1, write(self->pp[1], "x", 1));
	ASSERT_EQ(2, epoll_events(ep, WAIT_MS, got));
	EXPECT_EQ(EPOLLIN | EPOLLRDHUP | EPOLLHUP, got[1]);
	EXPECT_EQ(EPOLLIN, got[2]);
	/* The pipe's writer gone: EPOLLHUP there too. */
	close(self->pp[1]);
	self->pp[1] = -1;
	ASSERT_EQ(2, epoll_events(ep, WAIT_MS, got));
	EXPECT_EQ(EPOLLIN | EPOLLHUP, got[2]);
	close(ep);
}

struct waiter {
	int ep, lfd;
	int woke;		/* epoll_wait()'s count, or -errno */
	bool listener;		/* the listener was among its events */
	bool accepted;		/* and its accept() got the connection */
};

/* One epoll_wait(): accept on a listener event; a pipe event ends it. */
static void *exclusive_waiter(void *p)
{
	struct epoll_event e[4];
	struct waiter *w = p;
	int a, i;

	w->woke = epoll_wait(w->ep, e, 4, WAIT_MS);
	if (w->woke < 0)
		w->woke = -errno;
	for (i = 0; i < w->woke; i++) {
		if (e[i].data.u64 != 1)
			continue;
		w->listener = true;
		a = accept(w->lfd, NULL, NULL);
		w->accepted = a >= 0;
		if (a >= 0)
			close(a);
	}
	return NULL;
}

TEST_F(tcp, epoll_exclusive)
{
	struct epoll_event e = { .events = EPOLLIN | EPOLLEXCLUSIVE, .data.u64 = 1 };
	struct waiter w[2];
	uint32_t got[3];
	pthread_t t[2];
	int ep[2], c, i;

	ASSERT_EQ(0, fcntl(self->lfd, F_SETFL, O_NONBLOCK));
	for (i = 0; i < 2; i++) {
		ep[i] = epoll_pair(self->lfd, EPOLLIN | EPOLLEXCLUSIVE, self->pp[0],
				   EPOLLIN | EPOLLEXCLUSIVE);
		ASSERT_LE(0, ep[i]) TH_LOG("%s", strerror(-ep[i]));
	}
	/* An exclusive entry cannot change, nor be one-shot. */
	EXPECT_EQ(-1, epoll_ctl(ep[0], EPOLL_CTL_MOD, self->lfd, &e));
	EXPECT_EQ(EINVAL, errno);
	e.events |= EPOLLONESHOT;
	EXPECT_EQ(-1, epoll_ctl(ep[0], EPOLL_CTL_ADD, self->srv, &e));
	EXPECT_EQ(EINVAL, errno);

	/* Nobody waiting: each set has the event to report. */
	c = connect_to(&self->addr, self->alen, 0);
	ASSERT_LE(0, c);
	ASSERT_EQ(POLLIN, wait_ev(self->lfd, POLLIN, WAIT_MS));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(1, epoll_events(ep[i], 0, got));
		EXPECT_EQ(EPOLLIN, got[1]);
	}
	ASSERT_EQ(1, write(self->pp[1], "x", 1));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(2, epoll_events(ep[i], WAIT_MS, got));
		EXPECT_EQ(EPOLLIN, got[2]);
	}
	close(accept(self->lfd, NULL, NULL));
	close(c);
	ASSERT_EQ(1, read(self->pp[0], got, 1));

	/*
	 * Two waiters, one connection: one or more wake (epoll(7) promises
	 * no fewer), one accepts it.  Once it has (the client reads EOF),
	 * the pipe wakes whoever still waits.
	 */
	for (i = 0; i < 2; i++) {
		w[i] = (struct waiter){ .ep = ep[i], .lfd = self->lfd };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, exclusive_waiter, &w[i]));
	}
	sleep_ms(QUIET_MS);
	c = connect_to(&self->addr, self->alen, 0);
	ASSERT_LE(0, c);
	EXPECT_EQ(0, wait_eof(c));
	ASSERT_EQ(1, write(self->pp[1], "x", 1));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, join(t[i], WAIT_MS));
	EXPECT_LE(1, w[0].woke);
	EXPECT_LE(1, w[1].woke);
	EXPECT_LE(1, w[0].listener + w[1].listener);
	EXPECT_EQ(1, w[0].accepted + w[1].accepted);
	close(c);
	close(ep[0]);
	close(ep[1]);
}

/* A file of @len stream bytes, unlinked; its fd or -errno. */
static int stream_file(size_t len)
{
	char path[] = "/tmp/lchan_socket_test.XXXXXX";
	uint8_t *buf = malloc(len);
	int fd, ret = 0;

	if (!buf)
		return -ENOMEM;
	fd = mkstemp(path);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	unlink(path);
	fill(buf, 0, len);
	if (write(fd, buf, len) != (ssize_t)len || lseek(fd, 0, SEEK_SET)) {
		ret = -EIO;
		close(fd);
	}
out:
	free(buf);
	return ret ? ret : fd;
}

TEST_F(tcp, sendfile_from_file)
{
	struct xfer r = { .fd = self->srv, .len = MIB, .chunk = 65536 };
	off_t off = 0;
	pthread_t t;
	ssize_t n;
	int f;

	f = stream_file(MIB);
	ASSERT_LE(0, f) TH_LOG("%s", strerror(-f));
	/* With an offset: it moves, the file's position does not. */
	ASSERT_EQ(0, pthread_create(&t, NULL, reader, &r));
	while (off < MIB) {
		n = sendfile(self->cli, f, &off, MIB - off);
		ASSERT_LT(0, n) TH_LOG("sendfile at %ld: %s", (long)off, strerror(errno));
	}
	ASSERT_EQ(0, join(t, WAIT_MS));
	EXPECT_EQ(MIB, r.ret);
	EXPECT_EQ(MIB, off);
	EXPECT_EQ(0, lseek(f, 0, SEEK_CUR));

	/* Without: the file's position moves. */
	ASSERT_EQ(1000, lseek(f, 1000, SEEK_SET));
	ASSERT_EQ(3000, sendfile(self->cli, f, NULL, 3000));
	EXPECT_EQ(4000, lseek(f, 0, SEEK_CUR));
	EXPECT_EQ(3000, read_stream(self->srv, 1000, 3000, 65536, NULL));

	/* Past the end: what there is. */
	off = MIB - 10;
	EXPECT_EQ(10, sendfile(self->cli, f, &off, 100));
	EXPECT_EQ(MIB, off);
	EXPECT_EQ(0, sendfile(self->cli, f, &off, 100));
	EXPECT_EQ(10, read_stream(self->srv, MIB - 10, 10, 65536, NULL));
	EXPECT_EQ(0, wait_inq(self->srv, 1, QUIET_MS));
	close(f);
}

struct splicer {
	int file, sock;
	size_t len;
	ssize_t ret;
};

/* The file into the socket through a pipe, then SHUT_WR. */
static void *splice_writer(void *p)
{
	struct splicer *s = p;
	loff_t off = 0;
	ssize_t n, k;
	size_t done = 0, moved;
	int pp[2] = { -1, -1 };

	s->ret = pipe(pp) ? -errno : 0;
	while (!s->ret && done < s->len) {
		n = splice(s->file, &off, pp[1], NULL, s->len - done, 0);
		if (n <= 0) {
			s->ret = n ? -errno : -EIO;
			break;
		}
		for (moved = 0; moved < (size_t)n; moved += k) {
			k = splice(pp[0], NULL, s->sock, NULL, n - moved, 0);
			if (k <= 0) {
				s->ret = k ? -errno : -EIO;
				break;
			}
		}
		done += n;
	}
	if (!s->ret) {
		s->ret = done;
		shutdown(s->sock, SHUT_WR);
	}
	if (pp[0] >= 0) {
		close(pp[0]);
		close(pp[1]);
	}
	return NULL;
}

TEST_F(tcp, splice_file_and_socket)
{
	struct splicer s = { .sock = self->cli, .len = MIB };
	struct timeval tv = { 0, QUIET_MS * 1000 };
	uint8_t *buf = malloc(65536);
	double t0;
	size_t total = 0, got;
	pthread_t t;
	ssize_t n, k;

	ASSERT_NE(NULL, buf);
	s.file = stream_file(MIB);
	ASSERT_LE(0, s.file) TH_LOG("%s", strerror(-s.file));
	/*
	 * Nothing to take: a non-blocking socket says so at once;
	 * SPLICE_F_NONBLOCK is the pipe's, a blocking socket still waits.
	 */
	ASSERT_EQ(0, fcntl(self->srv, F_SETFL, O_NONBLOCK));
	EXPECT_EQ(-1, splice(self->srv, NULL, self->pp[1], NULL, 4096, 0));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, fcntl(self->srv, F_SETFL, 0));
	ASSERT_EQ(0, setsockopt(self->srv, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	t0 = now_ms();
	EXPECT_EQ(-1, splice(self->srv, NULL, self->pp[1], NULL, 4096, SPLICE_F_NONBLOCK));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_LE(QUIET_MS * 4 / 5, now_ms() - t0);
	ASSERT_EQ(0, bound(self->srv, WAIT_MS));

	/* file -> pipe -> socket, socket -> pipe -> memory. */
	ASSERT_EQ(0, pthread_create(&t, NULL, splice_writer, &s));
	while (total < MIB) {
		ASSERT_NE(0, wait_ev(self->srv, POLLIN, WAIT_MS)) TH_LOG("at %zu", total);
		n = splice(self->srv, NULL, self->pp[1], NULL, 65536, 0);
		ASSERT_LT(0, n) TH_LOG("at %zu: %s", total, n ? strerror(errno) : "EOF");
		for (got = 0; got < (size_t)n; got += k) {
			k = read(self->pp[0], buf + got, n - got);
			ASSERT_LT(0, k);
		}
		ASSERT_TRUE(same(buf, total, n));
		total += n;
	}
	ASSERT_EQ(0, join(t, WAIT_MS));
	EXPECT_EQ(MIB, s.ret);
	EXPECT_EQ(MIB, total);
	ASSERT_NE(0, wait_ev(self->srv, POLLIN, WAIT_MS));
	EXPECT_EQ(0, splice(self->srv, NULL, self->pp[1], NULL, 65536, 0));
	close(s.file);
	free(buf);
}

/* A child inheriting the listener accepts on it; the parent's still works. */
TEST_F(tcp, fork_child_accepts)
{
	pid_t pid;
	int c, a;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (wait_ev(self->lfd, POLLIN, WAIT_MS) != POLLIN)
			_exit(2);
		a = accept(self->lfd, NULL, NULL);
		if (a < 0 || bound(a, WAIT_MS))
			_exit(3);
		if (read_stream(a, 0, 100, 100, NULL) != 100 ||
		    write_stream(a, 100, 100, 100) != 100)
			_exit(4);
		_exit(0);
	}
	c = connect_to(&self->addr, self->alen, 0);
	ASSERT_LE(0, c);
	ASSERT_EQ(100, write_stream(c, 0, 100, 100));
	EXPECT_EQ(100, read_stream(c, 100, 100, 100, NULL));
	EXPECT_EQ(0, wait_child(pid, WAIT_MS));
	EXPECT_EQ(0, wait_eof(c));
	close(c);

	c = connect_to(&self->addr, self->alen, 0);
	ASSERT_LE(0, c);
	a = accept(self->lfd, NULL, NULL);
	ASSERT_LE(0, a);
	ASSERT_EQ(1, write(c, "x", 1));
	EXPECT_EQ(1, wait_inq(a, 1, WAIT_MS));
	close(a);
	close(c);
}

/* A child keeps using an inherited connection the parent closed. */
TEST_F(tcp, fork_child_keeps_connection)
{
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(self->srv);
		if (read_stream(self->cli, 0, 100, 100, NULL) != 100 ||
		    write_stream(self->cli, 100, 100, 100) != 100)
			_exit(1);
		_exit(0);
	}
	close(self->cli);
	self->cli = -1;
	/* The child's copy holds the connection open. */
	EXPECT_EQ(0, wait_ev(self->srv, POLLIN, QUIET_MS));
	ASSERT_EQ(100, write_stream(self->srv, 0, 100, 100));
	EXPECT_EQ(100, read_stream(self->srv, 100, 100, 100, NULL));
	EXPECT_EQ(0, wait_child(pid, WAIT_MS));
	EXPECT_EQ(0, wait_eof(self->srv));
}

/* exec keeps a socket without FD_CLOEXEC: the new program echoes on it. */
TEST_F(tcp, exec_keeps_socket)
{
	char fd[16], *args[] = { "echo", fd, "100", NULL };
	pid_t pid;

	ASSERT_EQ(0, fcntl(self->cli, F_GETFD));
	snprintf(fd, sizeof(fd), "%d", self->cli);
	pid = spawn_helper(args);
	ASSERT_LT(0, pid);
	close(self->cli);
	self->cli = -1;
	ASSERT_EQ(100, write_stream(self->srv, 0, 100, 100));
	EXPECT_EQ(100, read_stream(self->srv, 0, 100, 100, NULL));
	EXPECT_EQ(0, wait_child(pid, WAIT_MS));
	EXPECT_EQ(0, wait_eof(self->srv));
}

/*
 * exec closes sockets with FD_CLOEXEC (set by F_SETFD, or SOCK_CLOEXEC at
 * socket()): the peers see EOF while the new program still runs.
 */
TEST_F(tcp, exec_closes_cloexec_socket)
{
	char fds[3][16], *args[] = { "closed", fds[0], fds[1], fds[2], NULL };
	int c2, a2, gate[2], status;
	pid_t pid;

	c2 = connect_to(&self->addr, self->alen, SOCK_CLOEXEC);
	ASSERT_LE(0, c2);
	a2 = accept(self->lfd, NULL, NULL);
	ASSERT_LE(0, a2);
	ASSERT_EQ(0, bound(a2, WAIT_MS));
	EXPECT_EQ(FD_CLOEXEC, fcntl(c2, F_GETFD));
	ASSERT_EQ(0, fcntl(self->cli, F_SETFD, FD_CLOEXEC));
	ASSERT_EQ(0, pipe(gate));
	snprintf(fds[0], sizeof(fds[0]), "%d", gate[0]);
	snprintf(fds[1], sizeof(fds[1]), "%d", self->cli);
	snprintf(fds[2], sizeof(fds[2]), "%d", c2);
	pid = spawn_helper(args);
	ASSERT_LT(0, pid);
	close(self->cli);
	self->cli = -1;
	close(c2);
	close(gate[0]);

	EXPECT_EQ(0, wait_eof(self->srv));
	EXPECT_EQ(0, wait_eof(a2));
	EXPECT_EQ(0, waitpid(pid, &status, WNOHANG));
	ASSERT_EQ(1, write(gate[1], "x", 1));
	EXPECT_EQ(0, wait_child(pid, WAIT_MS));
	close(gate[1]);
	close(a2);
}

/* One socket, a thread reading and a thread writing it, both ends. */
TEST_F(tcp, threads_read_and_write)
{
	size_t len = 2 * MIB;
	struct xfer x[4] = {
		{ .fd = self->cli, .off = 0, .len = len, .chunk = 65536 },
		{ .fd = self->cli, .off = 16 * MIB, .len = len, .chunk = 4096 },
		{ .fd = self->srv, .off = 16 * MIB, .len = len, .chunk = 65536 },
		{ .fd = self->srv, .off = 0, .len = len, .chunk = 4096 },
	};
	pthread_t t[4];
	int i;

	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, i % 2 ? reader : writer, &x[i]));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, join(t[i], 2 * WAIT_MS));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(len, x[i].ret) TH_LOG("thread %d", i);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--helper"))
		return helper_main(argc - 2, argv + 2);
	return test_harness_run(argc, argv);
}
