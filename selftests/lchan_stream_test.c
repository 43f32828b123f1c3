// SPDX-License-Identifier: GPL-2.0
/*
 * Stream channels (LCHAN_FD_STREAM): the fd is a socket, a byte stream
 * that the kernel carries over the channel.  Bytes arrive whole and in
 * order both ways at once, through write sizes that do not match the
 * kernel's messages; the socket calls answer as TCP's do (names, options,
 * MSG_PEEK, MSG_WAITALL, MSG_DONTWAIT, non-blocking fds, poll and epoll,
 * shutdown and half-close, close with bytes in flight, an abortive close,
 * SIGPIPE, SIOCINQ, sendfile and splice, a child after fork); and what a
 * stream cannot be asked for is refused.  Every wait is bounded
 * (SO_RCVTIMEO and SO_SNDTIMEO, poll timeouts).
 */
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <signal.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define WAIT_MS		10000	/* for what must happen */
#define QUIET_MS	100	/* for what must not */

FIXTURE(stream) {
	struct lchan_t_dev d;
	struct lchan_ctx sctx, cctx;
	int srv, cli;		/* the pair's two sockets */
};

LCHAN_T_VARIANTS(stream);

FIXTURE_SETUP(stream)
{
	struct lchan_info info;
	int ret;

	self->srv = self->cli = -1;
	self->sctx.fd = self->cctx.fd = -1;
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	lchan_t_raise_memlock();
	ASSERT_EQ(0, lchan_ctx_open(&self->sctx));
	ASSERT_EQ(0, lchan_ctx_open(&self->cctx));
	ASSERT_EQ(0, lchan_query(&self->sctx, &info));
	if (!(info.features & LCHAN_FEATURE_STREAM))
		LCHAN_T_SETUP_SKIP("the module has no stream channels");
	ret = lchan_t_stream_pair(&self->sctx, &self->cctx, self->d.addr,
				  &self->srv, &self->cli, WAIT_MS);
	ASSERT_EQ(0, ret) TH_LOG("stream pair over %s: %s", self->d.addr,
				 strerror(-ret));
}

FIXTURE_TEARDOWN(stream)
{
	if (self->cli >= 0)
		close(self->cli);
	if (self->srv >= 0)
		close(self->srv);
	if (self->cctx.fd >= 0)
		lchan_ctx_close(&self->cctx);
	if (self->sctx.fd >= 0)
		lchan_ctx_close(&self->sctx);
}

/* The byte at offset @off of a test stream; @seed tells streams apart. */
static uint8_t pat(size_t off, unsigned seed)
{
	return (uint8_t)(off * 7 + (off >> 8) * 31 + (off >> 16) * 101 + seed);
}

struct pump {
	int fd;
	size_t total;
	unsigned seed;
	size_t done;
	int err;		/* errno of a failed call, 0 */
	size_t bad_at;		/* reader: first wrong byte + 1, or 0 */
};

/* Writes of sizes that cross the kernel's message size every way. */
static void *pump_write(void *p)
{
	static const size_t sizes[] = { 1, 4087, 4088, 4089, 100000, 13,
					65536, 8177 };
	struct pump *w = p;
	uint8_t *buf = malloc(100000);
	unsigned i = 0;

	while (buf && w->done < w->total) {
		size_t n = sizes[i++ % 8], j;
		ssize_t r;

		if (n > w->total - w->done)
			n = w->total - w->done;
		for (j = 0; j < n; j++)
			buf[j] = pat(w->done + j, w->seed);
		r = write(w->fd, buf, n);
		if (r <= 0) {
			w->err = r < 0 ? errno : EIO;
			break;
		}
		w->done += r;
	}
	if (!buf)
		w->err = ENOMEM;
	free(buf);
	return NULL;
}

static void *pump_read(void *p)
{
	struct pump *r = p;
	static const size_t sizes[] = { 7, 65536, 4088, 1, 30000 };
	uint8_t *buf = malloc(65536);
	unsigned i = 0;

	while (buf && r->done < r->total) {
		ssize_t n = read(r->fd, buf, sizes[i++ % 5]), j;

		if (n <= 0) {
			r->err = n < 0 ? errno : EPIPE;
			break;
		}
		for (j = 0; j < n && !r->bad_at; j++)
			if (buf[j] != pat(r->done + j, r->seed))
				r->bad_at = r->done + j + 1;
		r->done += n;
	}
	if (!buf)
		r->err = ENOMEM;
	free(buf);
	return NULL;
}

/* @total bytes from @wfd to @rfd, checked; the writer in a thread. */
static void transfer(struct __test_metadata *_metadata, int wfd, int rfd,
		     size_t total, unsigned seed)
{
	struct pump w = { .fd = wfd, .total = total, .seed = seed };
	struct pump r = { .fd = rfd, .total = total, .seed = seed };
	pthread_t thr;

	ASSERT_EQ(0, pthread_create(&thr, NULL, pump_write, &w));
	pump_read(&r);
	pthread_join(thr, NULL);
	EXPECT_EQ(0, w.err) TH_LOG("write: %s", strerror(w.err));
	EXPECT_EQ(0, r.err) TH_LOG("read: %s after %zu", strerror(r.err),
				   r.done);
	EXPECT_EQ(total, r.done);
	EXPECT_EQ(0, r.bad_at) TH_LOG("stream byte %zu is wrong",
				      r.bad_at - 1);
}

static short poll_one(int fd, short events, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = events };

	return poll(&pfd, 1, ms) == 1 ? pfd.revents : 0;
}

/* Channels in sysfs that sent and received at least @bytes each. */
static int channels_that_moved(unsigned long long bytes)
{
	DIR *dir = opendir("/sys/kernel/lchan/channels");
	struct dirent *e;
	char path[300], buf[32];
	int n = 0;

	while (dir && (e = readdir(dir))) {
		unsigned long long sent, got;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path),
			 "/sys/kernel/lchan/channels/%s/send_bytes", e->d_name);
		if (lchan_t_read_sysfs(path, buf, sizeof(buf)))
			continue;
		sent = strtoull(buf, NULL, 10);
		snprintf(path, sizeof(path),
			 "/sys/kernel/lchan/channels/%s/recv_bytes", e->d_name);
		if (lchan_t_read_sysfs(path, buf, sizeof(buf)))
			continue;
		got = strtoull(buf, NULL, 10);
		n += sent >= bytes && got >= bytes;
	}
	if (dir)
		closedir(dir);
	return n;
}

TEST_F_TIMEOUT(stream, bytes_both_ways, 120)
{
	struct pump w = { .fd = self->srv, .total = 6 << 20, .seed = 2 };
	struct pump r = { .fd = self->cli, .total = 6 << 20, .seed = 2 };
	pthread_t tw, tr;
	int i;

	/* Both directions at once, each with its own reader and writer. */
	ASSERT_EQ(0, pthread_create(&tw, NULL, pump_write, &w));
	ASSERT_EQ(0, pthread_create(&tr, NULL, pump_read, &r));
	transfer(_metadata, self->cli, self->srv, 6 << 20, 1);
	pthread_join(tw, NULL);
	pthread_join(tr, NULL);
	EXPECT_EQ(0, w.err);
	EXPECT_EQ(0, r.err);
	EXPECT_EQ(w.total, r.done);
	EXPECT_EQ(0, r.bad_at);
	/*
	 * sysfs counts both ends' payload, each way; a send is counted at
	 * its completion, which may come after the peer read its bytes.
	 */
	for (i = 0; i < 100 && channels_that_moved(6 << 20) < 2; i++)
		usleep(50000);
	EXPECT_LE(2, channels_that_moved(6 << 20));
}

TEST_F(stream, socket_identity)
{
	struct sockaddr_storage a, b;
	socklen_t la = sizeof(a), lb = sizeof(b);
	int v;
	socklen_t lv = sizeof(v);

	ASSERT_EQ(0, getsockopt(self->cli, SOL_SOCKET, SO_TYPE, &v, &lv));
	EXPECT_EQ(SOCK_STREAM, v);
	ASSERT_EQ(0, getsockopt(self->cli, SOL_SOCKET, SO_DOMAIN, &v, &lv));
	EXPECT_EQ(AF_INET, v);
	ASSERT_EQ(0, getsockopt(self->cli, SOL_SOCKET, SO_PROTOCOL, &v, &lv));
	EXPECT_EQ(IPPROTO_TCP, v);
	/* Each end's name is the other's peer. */
	ASSERT_EQ(0, getsockname(self->cli, (struct sockaddr *)&a, &la));
	ASSERT_EQ(0, getpeername(self->srv, (struct sockaddr *)&b, &lb));
	ASSERT_EQ(sizeof(struct sockaddr_in), la);
	ASSERT_EQ(la, lb);
	EXPECT_EQ(0, memcmp(&a, &b, la));
	la = lb = sizeof(a);
	ASSERT_EQ(0, getpeername(self->cli, (struct sockaddr *)&a, &la));
	ASSERT_EQ(0, getsockname(self->srv, (struct sockaddr *)&b, &lb));
	EXPECT_EQ(0, memcmp(&a, &b, la));
	EXPECT_NE(0, ((struct sockaddr_in *)&a)->sin_port);
}

TEST_F(stream, tcp_options)
{
	int v = 1;
	socklen_t lv = sizeof(v);

	ASSERT_EQ(0, setsockopt(self->cli, IPPROTO_TCP, TCP_NODELAY, &v,
				sizeof(v)));
	v = 0;
	ASSERT_EQ(0, getsockopt(self->cli, IPPROTO_TCP, TCP_NODELAY, &v, &lv));
	EXPECT_EQ(1, v);
	v = 30;
	ASSERT_EQ(0, setsockopt(self->cli, IPPROTO_TCP, TCP_KEEPIDLE, &v,
				sizeof(v)));
	v = 1;
	ASSERT_EQ(0, setsockopt(self->cli, SOL_SOCKET, SO_KEEPALIVE, &v,
				sizeof(v)));
	/* What no option of TCP's means is refused as TCP refuses it. */
	EXPECT_EQ(-1, setsockopt(self->cli, IPPROTO_TCP, 9999, &v, sizeof(v)));
	EXPECT_EQ(ENOPROTOOPT, errno);
	EXPECT_EQ(-1, setsockopt(self->cli, IPPROTO_TCP, TCP_NODELAY, &v, 1));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(stream, peek_waitall_dontwait)
{
	char buf[64];
	ssize_t n;

	EXPECT_EQ(-1, recv(self->srv, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(5, write(self->cli, "hello", 5));
	ASSERT_EQ(6, write(self->cli, " world", 6));
	ASSERT_NE(0, poll_one(self->srv, POLLIN, WAIT_MS) & POLLIN);
	/* Give the second message time to come: PEEK must then see both. */
	usleep(QUIET_MS * 1000);
	n = recv(self->srv, buf, sizeof(buf), MSG_PEEK);
	ASSERT_EQ(11, n);
	EXPECT_EQ(0, memcmp(buf, "hello world", 11));
	n = recv(self->srv, buf, 3, MSG_PEEK);
	EXPECT_EQ(3, n);
	n = recv(self->srv, buf, 8, 0);
	ASSERT_EQ(8, n);
	EXPECT_EQ(0, memcmp(buf, "hello wo", 8));
	/* WAITALL waits for bytes that are not there yet. */
	ASSERT_EQ(4, write(self->cli, "1234", 4));
	n = recv(self->srv, buf, 7, MSG_WAITALL);
	ASSERT_EQ(7, n);
	EXPECT_EQ(0, memcmp(buf, "rld1234", 7));
	EXPECT_EQ(-1, recv(self->srv, buf, 1, MSG_OOB));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(stream, siocinq_and_readv)
{
	char a[3], b[4];
	struct iovec iov[2] = { { a, 3 }, { b, 4 } };
	int inq = -1;

	ASSERT_EQ(7, write(self->cli, "abcdefg", 7));
	ASSERT_NE(0, poll_one(self->srv, POLLIN, WAIT_MS) & POLLIN);
	ASSERT_EQ(0, ioctl(self->srv, SIOCINQ, &inq));
	EXPECT_EQ(7, inq);
	ASSERT_EQ(7, readv(self->srv, iov, 2));
	EXPECT_EQ(0, memcmp(a, "abc", 3));
	EXPECT_EQ(0, memcmp(b, "defg", 4));
	ASSERT_EQ(0, ioctl(self->srv, SIOCINQ, &inq));
	EXPECT_EQ(0, inq);
}

TEST_F_TIMEOUT(stream, nonblocking_fills_and_drains, 60)
{
	static char buf[65536];
	size_t sent = 0, got = 0;
	int fl = fcntl(self->cli, F_GETFL);
	ssize_t n;

	ASSERT_EQ(0, fcntl(self->cli, F_SETFL, fl | O_NONBLOCK));
	EXPECT_NE(0, poll_one(self->cli, POLLOUT, WAIT_MS) & POLLOUT);
	/* The peer reads nothing: its credits run out, writes stop. */
	for (;;) {
		n = write(self->cli, buf, sizeof(buf));
		if (n < 0)
			break;
		sent += n;
		ASSERT_LT(sent, 64 << 20);
	}
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_GT(sent, 0);
	EXPECT_EQ(0, poll_one(self->cli, POLLOUT, QUIET_MS) & POLLOUT);
	while (got < sent) {
		n = read(self->srv, buf, sizeof(buf));
		ASSERT_GT(n, 0) TH_LOG("read after %zu of %zu: %s", got, sent,
				       strerror(errno));
		got += n;
	}
	/* Read, the credits came back. */
	EXPECT_NE(0, poll_one(self->cli, POLLOUT, WAIT_MS) & POLLOUT);
	EXPECT_GT(write(self->cli, buf, 1), 0);
}

TEST_F(stream, epoll_edge_and_level)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET }, out;
	int ep = epoll_create1(0);
	char c;

	ASSERT_GE(ep, 0);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->srv, &ev));
	EXPECT_EQ(0, epoll_wait(ep, &out, 1, QUIET_MS));
	ASSERT_EQ(2, write(self->cli, "xy", 2));
	EXPECT_EQ(1, epoll_wait(ep, &out, 1, WAIT_MS));
	/* Edge: no new bytes, no new event. */
	EXPECT_EQ(0, epoll_wait(ep, &out, 1, QUIET_MS));
	ASSERT_EQ(1, read(self->srv, &c, 1));
	ev.events = EPOLLIN;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_MOD, self->srv, &ev));
	EXPECT_EQ(1, epoll_wait(ep, &out, 1, WAIT_MS));
	EXPECT_EQ(1, epoll_wait(ep, &out, 1, WAIT_MS));
	close(ep);
}

TEST_F(stream, half_close_both_ways)
{
	char buf[16];

	ASSERT_EQ(3, write(self->cli, "end", 3));
	ASSERT_EQ(0, shutdown(self->cli, SHUT_WR));
	ASSERT_EQ(3, read(self->srv, buf, sizeof(buf)));
	EXPECT_EQ(0, read(self->srv, buf, sizeof(buf)));
	EXPECT_NE(0, poll_one(self->srv, POLLRDHUP, WAIT_MS) & POLLRDHUP);
	/* The other way still carries bytes. */
	ASSERT_EQ(5, write(self->srv, "reply", 5));
	ASSERT_EQ(5, read(self->cli, buf, sizeof(buf)));
	EXPECT_EQ(0, memcmp(buf, "reply", 5));
	/* Writing after SHUT_WR: EPIPE (without SIGPIPE here). */
	EXPECT_EQ(-1, send(self->cli, "x", 1, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
	ASSERT_EQ(0, shutdown(self->srv, SHUT_WR));
	EXPECT_EQ(0, read(self->cli, buf, sizeof(buf)));
	EXPECT_NE(0, poll_one(self->cli, POLLHUP, WAIT_MS) & POLLHUP);
	EXPECT_EQ(-1, shutdown(self->cli, 7));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(stream, sigpipe_without_nosignal)
{
	sigset_t set, old;
	struct timespec ts = { 0, 0 };

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	ASSERT_EQ(0, pthread_sigmask(SIG_BLOCK, &set, &old));
	ASSERT_EQ(0, shutdown(self->cli, SHUT_WR));
	EXPECT_EQ(-1, write(self->cli, "x", 1));
	EXPECT_EQ(EPIPE, errno);
	EXPECT_EQ(SIGPIPE, sigtimedwait(&set, NULL, &ts));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

TEST_F_TIMEOUT(stream, close_with_bytes_in_flight, 60)
{
	struct pump w = { .fd = self->cli, .total = 4 << 20, .seed = 5 };
	struct pump r = { .fd = self->srv, .total = 4 << 20, .seed = 5 };
	pthread_t thr;
	char c;

	/* The writer closes the moment its last write returns. */
	ASSERT_EQ(0, pthread_create(&thr, NULL, pump_read, &r));
	pump_write(&w);
	ASSERT_EQ(0, w.err);
	close(self->cli);
	self->cli = -1;
	pthread_join(thr, NULL);
	EXPECT_EQ(0, r.err) TH_LOG("%s after %zu", strerror(r.err), r.done);
	EXPECT_EQ(r.total, r.done);
	EXPECT_EQ(0, r.bad_at);
	EXPECT_EQ(0, read(self->srv, &c, 1));
}

TEST_F(stream, abortive_close_resets)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	char c;

	ASSERT_EQ(0, setsockopt(self->cli, SOL_SOCKET, SO_LINGER, &lg,
				sizeof(lg)));
	close(self->cli);
	self->cli = -1;
	/*
	 * The reset is the first read's answer also when nothing looked at
	 * the stream since it ended (a read that waits for it is the next
	 * test's).
	 */
	usleep(3 * QUIET_MS * 1000);
	EXPECT_EQ(-1, read(self->srv, &c, 1));
	EXPECT_EQ(ECONNRESET, errno);
	/* Told once; then the stream reads as ended, and is hung up. */
	EXPECT_EQ(0, read(self->srv, &c, 1));
	EXPECT_EQ(POLLIN | POLLHUP, poll_one(self->srv, POLLIN, WAIT_MS) &
				    (POLLIN | POLLHUP));
}

/* The same with a reader that waits for the reset. */
TEST_F(stream, abortive_close_wakes_a_reader)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct pump r = { .fd = self->srv, .total = 1 };

	ASSERT_EQ(0, setsockopt(self->cli, SOL_SOCKET, SO_LINGER, &lg,
				sizeof(lg)));
	{
		pthread_t thr;

		ASSERT_EQ(0, pthread_create(&thr, NULL, pump_read, &r));
		usleep(QUIET_MS * 1000);
		close(self->cli);
		self->cli = -1;
		pthread_join(thr, NULL);
	}
	EXPECT_EQ(ECONNRESET, r.err);
	EXPECT_EQ(0, r.done);
}

struct splicer {
	int fd;
	uint8_t *buf;
	size_t total, got;
	int err;
};

/* splice() out of the stream into a pipe, and from it into buf. */
static void *splice_out(void *p)
{
	struct splicer *sp = p;
	int pipefd[2];

	if (pipe(pipefd)) {
		sp->err = errno;
		return NULL;
	}
	while (sp->got < sp->total) {
		ssize_t m = splice(sp->fd, NULL, pipefd[1], NULL, 65536, 0);

		if (m <= 0 || read(pipefd[0], sp->buf + sp->got, m) != m) {
			sp->err = m < 0 ? errno : EIO;
			break;
		}
		sp->got += m;
	}
	close(pipefd[0]);
	close(pipefd[1]);
	return NULL;
}

TEST_F_TIMEOUT(stream, sendfile_and_splice, 60)
{
	char path[] = "/tmp/lchan_stream_XXXXXX";
	int file = mkstemp(path);
	size_t total = 300000, i;
	struct splicer sp = { .fd = self->srv, .total = total };
	uint8_t *buf = malloc(total);
	pthread_t thr;
	off_t off = 0;

	ASSERT_GE(file, 0);
	ASSERT_NE(NULL, buf);
	unlink(path);
	for (i = 0; i < total; i++)
		buf[i] = pat(i, 9);
	ASSERT_EQ((ssize_t)total, write(file, buf, total));
	memset(buf, 0, total);
	sp.buf = buf;
	/* sendfile() into the stream, splice() out of it into a pipe. */
	ASSERT_EQ(0, pthread_create(&thr, NULL, splice_out, &sp));
	while ((size_t)off < total) {
		ssize_t n = sendfile(self->cli, file, &off, total - off);

		if (n <= 0) {
			TH_LOG("sendfile at %lld: %s", (long long)off,
			       strerror(errno));
			break;
		}
	}
	pthread_join(thr, NULL);
	EXPECT_EQ(total, (size_t)off);
	EXPECT_EQ(0, sp.err) TH_LOG("splice: %s", strerror(sp.err));
	EXPECT_EQ(total, sp.got);
	for (i = 0; i < total; i++)
		if (buf[i] != pat(i, 9))
			break;
	EXPECT_EQ(total, i);
	close(file);
	free(buf);
}

TEST_F_TIMEOUT(stream, fork_child_uses_it, 60)
{
	pid_t pid = fork();
	char buf[8];

	ASSERT_GE(pid, 0);
	if (!pid) {
		/* The child: another process, the same stream. */
		if (read(self->srv, buf, 4) != 4 || memcmp(buf, "ping", 4) ||
		    write(self->srv, "pong", 4) != 4)
			_exit(1);
		_exit(0);
	}
	ASSERT_EQ(4, write(self->cli, "ping", 4));
	ASSERT_EQ(4, read(self->cli, buf, sizeof(buf)));
	EXPECT_EQ(0, memcmp(buf, "pong", 4));
	EXPECT_EQ(0, lchan_t_wait_child(pid));
}

/* What a stream cannot be asked for, whatever the device. */
FIXTURE(stream_args) {
	struct lchan_t_dev d;
	struct lchan_ctx ctx;
};

LCHAN_T_VARIANTS(stream_args);

FIXTURE_SETUP(stream_args)
{
	self->ctx.fd = -1;
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	ASSERT_EQ(0, lchan_ctx_open(&self->ctx));
}

FIXTURE_TEARDOWN(stream_args)
{
	if (self->ctx.fd >= 0)
		lchan_ctx_close(&self->ctx);
}

TEST_F(stream_args, refused_flags_and_sizes)
{
	static const unsigned bad[] = {
		LCHAN_DEFER_ESTABLISH, LCHAN_DIRECT_POLL,
		LCHAN_CONNECT_LINK_ONLY,
	};
	struct lchan_connect_args req = { .size = sizeof(req) };
	struct lchan_listener lst;
	struct lchan_accept_args acc = { .size = sizeof(acc) };
	unsigned i;

	ASSERT_EQ(0, lchan_addr_parse(self->d.addr, "1", &req.dst));
	for (i = 0; i < 3; i++) {
		req.flags = LCHAN_FD_STREAM | bad[i];
		EXPECT_EQ(-1, ioctl(self->ctx.fd, LCHAN_IOC_CONNECT, &req));
		EXPECT_EQ(EINVAL, errno) TH_LOG("flag %#x", bad[i]);
	}
	req.flags = LCHAN_FD_STREAM;
	req.rings.sq_entries = 16;
	EXPECT_EQ(-1, ioctl(self->ctx.fd, LCHAN_IOC_CONNECT, &req));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, lchan_listen(&self->ctx, self->d.addr, "0", 4,
				  LCHAN_FD_NONBLOCK, &lst));
	acc.flags = LCHAN_FD_STREAM;
	acc.rings.cq_entries = 64;
	EXPECT_EQ(-1, ioctl(lst.fd, LCHAN_IOC_ACCEPT, &acc));
	EXPECT_EQ(EINVAL, errno);
	acc.rings.cq_entries = 0;
	acc.flags = LCHAN_FD_STREAM | LCHAN_DEFER_ESTABLISH;
	EXPECT_EQ(-1, ioctl(lst.fd, LCHAN_IOC_ACCEPT, &acc));
	EXPECT_EQ(EINVAL, errno);
	/* Valid, but no request waits. */
	acc.flags = LCHAN_FD_STREAM;
	EXPECT_EQ(-1, ioctl(lst.fd, LCHAN_IOC_ACCEPT, &acc));
	EXPECT_EQ(EAGAIN, errno);
	lchan_listener_close(&lst);
}

TEST_F(stream_args, poller_context_refused)
{
	struct lchan_addr dst;
	struct lchan_ctx pctx;

	ASSERT_EQ(0, lchan_ctx_open(&pctx));
	ASSERT_EQ(0, lchan_ctx_setup_poller(&pctx, 0, -1, NULL));
	ASSERT_EQ(0, lchan_addr_parse(self->d.addr, "1", &dst));
	EXPECT_EQ(-EINVAL, lchan_stream_connect(&pctx, &dst, NULL));
	lchan_ctx_close(&pctx);
}

/*
 * A listening TCP socket on the device's address, port chosen by TCP, with
 * every wait of its accept bounded by SO_RCVTIMEO.
 */
static int tcp_listener(const char *host, int family, int ms)
{
	struct sockaddr_storage ss = { 0 };
	struct lchan_addr a;
	int one = 1, fd;

	if (lchan_addr_parse(host, "0", &a) ||
	    lchan_addr_to_sockaddr(&a, &ss) < 0)
		return -1;
	fd = socket(family, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	lchan_t_sock_timeouts(fd, ms);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss, sizeof(ss)) || listen(fd, 16)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int tcp_connect_to(const struct lchan_addr *a)
{
	struct sockaddr_storage ss;
	int fd;

	if (lchan_addr_to_sockaddr(a, &ss) < 0)
		return -1;
	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	lchan_t_sock_timeouts(fd, WAIT_MS);
	if (connect(fd, (struct sockaddr *)&ss, sizeof(ss))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A stream connect from a thread: it returns once accepted. */
struct stream_dial {
	struct lchan_ctx *ctx;
	struct lchan_addr dst;
	unsigned flags;
	int fd;
};

static void *stream_dial(void *p)
{
	struct stream_dial *d = p;
	struct lchan_opts opts = { .flags = d->flags, .timeout_ms = WAIT_MS };

	d->fd = lchan_stream_connect(d->ctx, &d->dst, &opts);
	if (d->fd >= 0)
		lchan_t_sock_timeouts(d->fd, WAIT_MS);
	return NULL;
}

/* A line each way between two connected sockets. */
static bool ping_pong(int a, int b)
{
	char buf[8] = { 0 };

	return write(a, "ping", 4) == 4 &&
	       recv(b, buf, 4, MSG_WAITALL) == 4 && !memcmp(buf, "ping", 4) &&
	       write(b, "pong", 4) == 4 &&
	       recv(a, buf, 4, MSG_WAITALL) == 4 && !memcmp(buf, "pong", 4);
}

static int sock_int(int fd, int level, int name)
{
	socklen_t len = sizeof(int);
	int val = -1;

	if (getsockopt(fd, level, name, &val, &len))
		return -errno;
	return val;
}

#define CHANNELS	"/sys/kernel/lchan/channels"

/* Attribute @name of channel @id, in @val, if it is a stream channel. */
static int stream_attr(const char *id, const char *name, char *val,
		       size_t len)
{
	char path[300], kind[16];

	snprintf(path, sizeof(path), CHANNELS "/%s/kind", id);
	if (lchan_t_read_sysfs(path, kind, sizeof(kind)) ||
	    strcmp(kind, "stream"))
		return -ENOENT;
	snprintf(path, sizeof(path), CHANNELS "/%s/%s", id, name);
	return lchan_t_read_sysfs(path, val, len);
}

/*
 * The stream channels whose attribute @name reads @want: how many, and
 * attribute @get of the first in @val (when @get is not NULL).
 */
static int streams_where(const char *name, const char *want,
			 const char *get, char *val, size_t len)
{
	DIR *d = opendir(CHANNELS);
	struct dirent *e;
	char buf[32];
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' ||
		    stream_attr(e->d_name, name, buf, sizeof(buf)) ||
		    strcmp(buf, want))
			continue;
		if (!n++ && get && stream_attr(e->d_name, get, val, len))
			n--;
	}
	closedir(d);
	return n;
}

/*
 * Attribute @name, in @val, of the stream channel whose local port is
 * @port (the accepting end of a stream to a listener there); -ENOENT when
 * there is none.
 */
static int stream_chan_attr(unsigned port, const char *name, char *val,
			    size_t len)
{
	char want[16];

	snprintf(want, sizeof(want), "%u", port);
	return streams_where("local_port", want, name, val, len) > 0 ? 0 :
	       -ENOENT;
}

/*
 * Stream listeners (LISTEN with LCHAN_FD_STREAM): one socket that accepts
 * TCP connections and stream channels on the TCP socket's port.  An iWARP
 * device listens in TCP's own port space, so there the listener cannot
 * be made beside the TCP socket: the setup checks the error and SKIPs.
 */
FIXTURE(stream_listen) {
	struct lchan_t_dev d;
	struct lchan_ctx sctx, cctx;
	struct lchan_addr addr;	/* where both listen */
	int tcp, lst;
};

LCHAN_T_VARIANTS(stream_listen);

FIXTURE_SETUP(stream_listen)
{
	struct lchan_info info;
	int ret;

	self->tcp = self->lst = -1;
	self->sctx.fd = self->cctx.fd = -1;
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	lchan_t_raise_memlock();
	ASSERT_EQ(0, lchan_ctx_open(&self->sctx));
	ASSERT_EQ(0, lchan_ctx_open(&self->cctx));
	ASSERT_EQ(0, lchan_query(&self->sctx, &info));
	if (!(info.features & LCHAN_FEATURE_STREAM))
		LCHAN_T_SETUP_SKIP("the module has no stream channels");
	self->tcp = tcp_listener(self->d.addr, strchr(self->d.addr, ':') ?
				 AF_INET6 : AF_INET, WAIT_MS);
	ASSERT_LE(0, self->tcp) TH_LOG("TCP listener on %s: %s",
				       self->d.addr, strerror(errno));
	ret = lchan_stream_listen(&self->sctx, self->tcp, 0, &self->addr);
	if (!strcmp(variant->kind, "siw")) {
		ASSERT_EQ(-EADDRINUSE, ret);
		LCHAN_T_SETUP_SKIP("iWARP listens in TCP's port space");
	}
	ASSERT_LE(0, ret) TH_LOG("stream listener: %s", strerror(-ret));
	self->lst = ret;
}

FIXTURE_TEARDOWN(stream_listen)
{
	if (self->lst >= 0)
		close(self->lst);
	if (self->tcp >= 0)
		close(self->tcp);
	if (self->cctx.fd >= 0)
		lchan_ctx_close(&self->cctx);
	if (self->sctx.fd >= 0)
		lchan_ctx_close(&self->sctx);
}

TEST_F(stream_listen, tcp_and_stream_on_one_port)
{
	struct stream_dial d = { .ctx = &self->cctx, .dst = self->addr };
	struct sockaddr_storage tcp_name, lst_name, peer, cli_name;
	socklen_t len = sizeof(tcp_name);
	char val[32];
	pthread_t thr;
	int cli, srv;

	/* The listener is the TCP socket's address and port. */
	ASSERT_EQ(0, getsockname(self->tcp, (struct sockaddr *)&tcp_name,
				 &len));
	len = sizeof(lst_name);
	ASSERT_EQ(0, getsockname(self->lst, (struct sockaddr *)&lst_name,
				 &len));
	EXPECT_EQ(0, memcmp(&tcp_name, &lst_name, len));
	EXPECT_EQ(1, sock_int(self->lst, SOL_SOCKET, SO_ACCEPTCONN));
	EXPECT_EQ(SOCK_STREAM, sock_int(self->lst, SOL_SOCKET, SO_TYPE));
	EXPECT_EQ(IPPROTO_TCP, sock_int(self->lst, SOL_SOCKET, SO_PROTOCOL));
	/* It holds the TCP socket: the program's fd may go. */
	close(self->tcp);
	self->tcp = -1;

	/* A TCP client gets the TCP socket's own connection. */
	cli = tcp_connect_to(&self->addr);
	ASSERT_LE(0, cli);
	len = sizeof(peer);
	srv = accept(self->lst, (struct sockaddr *)&peer, &len);
	ASSERT_LE(0, srv) TH_LOG("accept: %s", strerror(errno));
	len = sizeof(cli_name);
	ASSERT_EQ(0, getsockname(cli, (struct sockaddr *)&cli_name, &len));
	EXPECT_EQ(0, memcmp(&cli_name, &peer, len));
	EXPECT_TRUE(ping_pong(cli, srv));
	close(cli);
	close(srv);

	/* A stream client gets a stream channel on the same port. */
	ASSERT_EQ(0, pthread_create(&thr, NULL, stream_dial, &d));
	srv = accept(self->lst, NULL, NULL);
	pthread_join(thr, NULL);
	ASSERT_LE(0, srv) TH_LOG("accept: %s", strerror(errno));
	ASSERT_LE(0, d.fd) TH_LOG("stream connect: %s", strerror(-d.fd));
	lchan_t_sock_timeouts(srv, WAIT_MS);
	EXPECT_TRUE(ping_pong(d.fd, srv));
	EXPECT_EQ(IPPROTO_TCP, sock_int(srv, SOL_SOCKET, SO_PROTOCOL));
	/* The listener's work set it up: it is the listener's maker's. */
	ASSERT_EQ(0, stream_chan_attr(self->addr.port, "pid", val,
				      sizeof(val)));
	EXPECT_EQ(getpid(), atoi(val));
	ASSERT_EQ(0, stream_chan_attr(self->addr.port, "comm", val,
				      sizeof(val)));
	EXPECT_EQ(0, strncmp(val, program_invocation_short_name, 15))
		TH_LOG("comm %s", val);
	close(d.fd);
	close(srv);
}

TEST_F(stream_listen, nonblocking_epoll_sees_both)
{
	struct stream_dial d = { .ctx = &self->cctx, .dst = self->addr };
	struct epoll_event ev = { .events = EPOLLIN };
	pthread_t thr;
	int ep, cli, srv;

	ASSERT_EQ(0, fcntl(self->lst, F_SETFL, O_NONBLOCK));
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->lst, &ev));
	EXPECT_EQ(-1, accept4(self->lst, NULL, NULL, 0));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, QUIET_MS));

	cli = tcp_connect_to(&self->addr);
	ASSERT_LE(0, cli);
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, WAIT_MS));
	srv = accept4(self->lst, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	ASSERT_LE(0, srv);
	EXPECT_TRUE(fcntl(srv, F_GETFL) & O_NONBLOCK);
	EXPECT_TRUE(fcntl(srv, F_GETFD) & FD_CLOEXEC);
	close(srv);
	close(cli);
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, QUIET_MS));

	ASSERT_EQ(0, pthread_create(&thr, NULL, stream_dial, &d));
	EXPECT_EQ(1, epoll_wait(ep, &ev, 1, WAIT_MS));
	srv = accept4(self->lst, NULL, NULL, SOCK_NONBLOCK);
	pthread_join(thr, NULL);
	ASSERT_LE(0, srv) TH_LOG("accept: %s", strerror(errno));
	ASSERT_LE(0, d.fd) TH_LOG("stream connect: %s", strerror(-d.fd));
	EXPECT_TRUE(fcntl(srv, F_GETFL) & O_NONBLOCK);
	EXPECT_EQ(4, write(d.fd, "ping", 4));
	ev.events = EPOLLIN;
	ev.data.fd = srv;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, srv, &ev));
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, WAIT_MS));
	EXPECT_EQ(srv, ev.data.fd);
	close(srv);
	close(d.fd);
	EXPECT_EQ(-1, accept4(self->lst, NULL, NULL, 0));
	EXPECT_EQ(EAGAIN, errno);
	close(ep);
}

/* A blocking accept waits for either kind and ends at SO_RCVTIMEO. */
TEST_F(stream_listen, blocking_accept_times_out)
{
	struct timeval tv = { 0, 200000 };
	struct timespec t0, t1;
	long ms;

	/* The TCP socket's timeout when the listener was made is its own. */
	ASSERT_EQ(0, setsockopt(self->lst, SOL_SOCKET, SO_RCVTIMEO, &tv,
				sizeof(tv)));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	EXPECT_EQ(-1, accept(self->lst, NULL, NULL));
	EXPECT_EQ(EAGAIN, errno);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 +
	     (t1.tv_nsec - t0.tv_nsec) / 1000000;
	EXPECT_LE(150, ms);
	EXPECT_GT(WAIT_MS, ms);
}

/* Options of the listening socket are the TCP socket's. */
TEST_F(stream_listen, tcp_level_options_reach_tcp)
{
	int secs = 7;

	ASSERT_EQ(0, setsockopt(self->lst, SOL_TCP, TCP_DEFER_ACCEPT, &secs,
				sizeof(secs)));
	EXPECT_LT(0, sock_int(self->tcp, SOL_TCP, TCP_DEFER_ACCEPT));
	EXPECT_EQ(sock_int(self->tcp, SOL_TCP, TCP_DEFER_ACCEPT),
		  sock_int(self->lst, SOL_TCP, TCP_DEFER_ACCEPT));
	EXPECT_EQ(1, sock_int(self->lst, SOL_SOCKET, SO_REUSEADDR));
}

/* A child that inherits the listener accepts on it, as a forked worker. */
TEST_F_TIMEOUT(stream_listen, child_accepts_both_kinds, 60)
{
	struct stream_dial d = { .ctx = &self->cctx, .dst = self->addr };
	pthread_t thr;
	pid_t pid;
	int cli;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int i, srv, ok = 1;

		for (i = 0; i < 2; i++) {
			char buf[4];

			srv = accept(self->lst, NULL, NULL);
			if (srv < 0 || recv(srv, buf, 4, MSG_WAITALL) != 4 ||
			    write(srv, buf, 4) != 4)
				ok = 0;
			if (srv >= 0)
				close(srv);
		}
		_exit(ok ? 0 : 1);
	}
	cli = tcp_connect_to(&self->addr);
	ASSERT_LE(0, cli);
	EXPECT_TRUE(write(cli, "abcd", 4) == 4);
	{
		char buf[4];

		EXPECT_EQ(4, recv(cli, buf, 4, MSG_WAITALL));
	}
	close(cli);
	ASSERT_EQ(0, pthread_create(&thr, NULL, stream_dial, &d));
	pthread_join(thr, NULL);
	ASSERT_LE(0, d.fd) TH_LOG("stream connect: %s", strerror(-d.fd));
	EXPECT_TRUE(write(d.fd, "efgh", 4) == 4);
	{
		char buf[4];

		EXPECT_EQ(4, recv(d.fd, buf, 4, MSG_WAITALL));
	}
	close(d.fd);
	EXPECT_EQ(0, lchan_t_wait_child(pid));
}

/* A TCP wildcard listener of @family on @port (0: any), v6only if asked. */
static int tcp_wildcard(int family, unsigned short port, int v6only)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(port) };
	struct sockaddr_in a4 = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	int fd = socket(family, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	lchan_t_sock_timeouts(fd, WAIT_MS);
	if ((family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only,
			sizeof(v6only))) ||
	    (family == AF_INET6 ?
	     bind(fd, (struct sockaddr *)&a6, sizeof(a6)) :
	     bind(fd, (struct sockaddr *)&a4, sizeof(a4))) ||
	    listen(fd, 8)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A stream to @dst accepted on @lst, and a line each way. */
static void stream_through(struct __test_metadata *_metadata,
			   FIXTURE_DATA(stream_listen) *self,
			   const struct lchan_addr *dst, int lst)
{
	struct stream_dial d = { .ctx = &self->cctx, .dst = *dst };
	int srv;

	stream_dial(&d);
	ASSERT_LE(0, d.fd) TH_LOG("stream connect: %s", strerror(-d.fd));
	ASSERT_EQ(POLLIN, poll_one(lst, POLLIN, WAIT_MS));
	srv = accept(lst, NULL, NULL);
	ASSERT_LE(0, srv) TH_LOG("accept: %s", strerror(errno));
	lchan_t_sock_timeouts(srv, WAIT_MS);
	EXPECT_TRUE(ping_pong(d.fd, srv));
	close(srv);
	close(d.fd);
}

/*
 * A wildcard TCP listener: lchan listens on the RDMA devices' addresses
 * (on each but iWARP's where an iWARP device is there), and a stream to
 * one of them is accepted on the same port as TCP's connections.
 */
TEST_F(stream_listen, wildcard_listener)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct lchan_addr a;
	char port[8];
	int tcp, lst;

	if (strchr(self->d.addr, ':'))
		SKIP(return, "an IPv4 device address is needed");
	tcp = tcp_wildcard(AF_INET, 0, 0);
	ASSERT_LE(0, tcp) TH_LOG("TCP 0.0.0.0: %s", strerror(errno));
	ASSERT_EQ(0, getsockname(tcp, (struct sockaddr *)&ss, &len));
	ASSERT_EQ(0, lchan_addr_from_sockaddr((struct sockaddr *)&ss, &a));
	lst = lchan_stream_listen(&self->sctx, tcp, 0, NULL);
	ASSERT_LE(0, lst) TH_LOG("wildcard stream listener: %s",
				 strerror(-lst));
	snprintf(port, sizeof(port), "%u", a.port);
	ASSERT_EQ(0, lchan_addr_parse(self->d.addr, port, &a));
	stream_through(_metadata, self, &a, lst);
	close(lst);
	close(tcp);
}

/*
 * An IPv6 wildcard with IPV6_V6ONLY hears IPv6 only, as its TCP socket
 * does, and leaves IPv4 on its port to an IPv4 wildcard beside it: a
 * server's "listen PORT" and "listen [::]:PORT" (nginx's way).
 */
TEST_F(stream_listen, v6only_wildcard_beside_ipv4)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct lchan_addr a;
	int tcp6, tcp4, lst6, lst4;
	char port[8];

	if (strchr(self->d.addr, ':') || !self->d.addr6[0])
		SKIP(return, "an IPv4 and an IPv6 device address are needed");
	tcp6 = tcp_wildcard(AF_INET6, 0, 1);
	ASSERT_LE(0, tcp6) TH_LOG("TCP [::]: %s", strerror(errno));
	ASSERT_EQ(0, getsockname(tcp6, (struct sockaddr *)&ss, &len));
	ASSERT_EQ(0, lchan_addr_from_sockaddr((struct sockaddr *)&ss, &a));
	snprintf(port, sizeof(port), "%u", a.port);
	tcp4 = tcp_wildcard(AF_INET, a.port, 0);
	ASSERT_LE(0, tcp4) TH_LOG("TCP 0.0.0.0:%s: %s", port, strerror(errno));
	lst6 = lchan_stream_listen(&self->sctx, tcp6, 0, NULL);
	ASSERT_LE(0, lst6) TH_LOG("[::] listener: %s", strerror(-lst6));
	lst4 = lchan_stream_listen(&self->sctx, tcp4, 0, NULL);
	ASSERT_LE(0, lst4) TH_LOG("0.0.0.0 listener beside it: %s",
				  strerror(-lst4));
	ASSERT_EQ(0, fcntl(lst6, F_SETFL, O_NONBLOCK));
	ASSERT_EQ(0, fcntl(lst4, F_SETFL, O_NONBLOCK));

	ASSERT_EQ(0, lchan_addr_parse(self->d.addr6, port, &a));
	stream_through(_metadata, self, &a, lst6);
	EXPECT_EQ(-1, accept(lst4, NULL, NULL));
	ASSERT_EQ(0, lchan_addr_parse(self->d.addr, port, &a));
	stream_through(_metadata, self, &a, lst4);
	EXPECT_EQ(-1, accept(lst6, NULL, NULL));
	close(lst4);
	close(lst6);
	close(tcp4);
	close(tcp6);
}

/* A stream connect returns before the accept, as a TCP connect does. */
TEST_F(stream_listen, connect_before_accept)
{
	struct stream_dial d = { .ctx = &self->cctx, .dst = self->addr };
	char buf[4];
	int srv;

	stream_dial(&d);
	ASSERT_LE(0, d.fd) TH_LOG("stream connect: %s", strerror(-d.fd));
	EXPECT_EQ(4, write(d.fd, "ping", 4));
	srv = accept(self->lst, NULL, NULL);
	ASSERT_LE(0, srv) TH_LOG("accept: %s", strerror(errno));
	lchan_t_sock_timeouts(srv, WAIT_MS);
	EXPECT_EQ(4, recv(srv, buf, 4, MSG_WAITALL));
	EXPECT_EQ(0, memcmp(buf, "ping", 4));
	/* A stream listener is no TCP socket to make another from. */
	EXPECT_EQ(-EINVAL, lchan_stream_listen(&self->sctx, self->lst, 0,
					       NULL));
	close(srv);
	close(d.fd);
}

/*
 * A peer that sends a stream's request and leaves the accept's reply
 * unanswered: an rdma_cm program without a QP, which gets the reply as
 * RDMA_CM_EVENT_CONNECT_RESPONSE and never sends the RTU.
 */
struct silent_peer {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
};

/* The next event of @p: 0 when it is @want, else what came, or -errno. */
static int silent_event(struct silent_peer *p, int want)
{
	struct pollfd pfd = { .fd = p->ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int type;

	if (poll(&pfd, 1, WAIT_MS) <= 0)
		return -ETIMEDOUT;
	if (rdma_get_cm_event(p->ec, &ev))
		return -errno;
	type = ev->event;
	rdma_ack_cm_event(ev);
	return type == want ? 0 : type;
}

/*
 * @qpn is the QP number the request names: the connection manager refuses
 * a second request naming the same one from the same port, as stale.
 */
static int silent_connect(struct silent_peer *p, const struct lchan_addr *a,
			  uint32_t qpn)
{
	/* A stream's hello (the wire's): "lchn", version 1, stream. */
	static const uint8_t hello[8] = { 'l', 'c', 'h', 'n', 1, 1, 0, 0 };
	struct rdma_conn_param param = {
		.private_data = hello,
		.private_data_len = sizeof(hello),
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 6,
		.rnr_retry_count = 7,
		.qp_num = qpn,
	};
	struct sockaddr_storage ss;
	int ret;

	p->ec = rdma_create_event_channel();
	if (!p->ec)
		return -errno;
	if (rdma_create_id(p->ec, &p->id, NULL, RDMA_PS_TCP))
		return -errno;
	if (lchan_addr_to_sockaddr(a, &ss) < 0)
		return -EINVAL;
	if (rdma_resolve_addr(p->id, NULL, (struct sockaddr *)&ss, 2000))
		return -errno;
	ret = silent_event(p, RDMA_CM_EVENT_ADDR_RESOLVED);
	if (ret)
		return ret;
	if (rdma_resolve_route(p->id, 2000))
		return -errno;
	ret = silent_event(p, RDMA_CM_EVENT_ROUTE_RESOLVED);
	if (ret)
		return ret;
	if (rdma_connect(p->id, &param))
		return -errno;
	return silent_event(p, RDMA_CM_EVENT_CONNECT_RESPONSE);
}

static void silent_close(struct silent_peer *p)
{
	if (p->id)
		rdma_destroy_id(p->id);
	if (p->ec)
		rdma_destroy_event_channel(p->ec);
}

/* How many stream channels are in @state (sysfs). */
static int streams_in_state(const char *state)
{
	return streams_where("state", state, NULL, NULL, 0);
}

/*
 * Peers that never finish the handshake hold no one up: a stream behind
 * them is set up and accepted while their requests still wait, the
 * listener gives them up after the connect timeout (their channels go),
 * and its close ends one that still waits.
 */
TEST_F_TIMEOUT(stream_listen, silent_peers_hold_no_one_up, 90)
{
	struct silent_peer quiet[3] = { 0 };
	struct stream_dial d = { .ctx = &self->cctx, .dst = self->addr };
	double end;
	int srv, i, ret;

	for (i = 0; i < 2; i++) {
		ret = silent_connect(&quiet[i], &self->addr, 0x4240 + i);
		ASSERT_EQ(0, ret) TH_LOG("silent peer %d: %d (%s)", i, ret,
					 ret < 0 ? strerror(-ret) :
					 rdma_event_str(ret));
	}
	EXPECT_EQ(2, streams_in_state("connecting"));

	stream_dial(&d);
	ASSERT_LE(0, d.fd) TH_LOG("stream connect: %s", strerror(-d.fd));
	srv = accept(self->lst, NULL, NULL);
	ASSERT_LE(0, srv) TH_LOG("accept: %s", strerror(errno));
	lchan_t_sock_timeouts(srv, WAIT_MS);
	EXPECT_TRUE(ping_pong(d.fd, srv));
	/* It went past them: they still wait. */
	EXPECT_EQ(2, streams_in_state("connecting"));

	end = lchan_t_now() + WAIT_MS / 1000.0 + 5;
	while (streams_in_state("connecting") > 0 && lchan_t_now() < end)
		usleep(100 * 1000);
	EXPECT_EQ(0, streams_in_state("connecting"));
	ASSERT_EQ(0, fcntl(self->lst, F_SETFL, O_NONBLOCK));
	EXPECT_EQ(-1, accept(self->lst, NULL, NULL));
	EXPECT_EQ(EAGAIN, errno);

	ret = silent_connect(&quiet[2], &self->addr, 0x4242);
	ASSERT_EQ(0, ret) TH_LOG("silent peer 2: %d", ret);
	EXPECT_EQ(1, streams_in_state("connecting"));
	close(self->lst);
	self->lst = -1;
	EXPECT_EQ(0, streams_in_state("connecting"));

	close(srv);
	close(d.fd);
	for (i = 0; i < 3; i++)
		silent_close(&quiet[i]);
}

/* A channel's connect, from a thread. */
struct chan_dial {
	struct lchan_ctx *ctx;
	struct lchan_addr dst;
	int ret;
};

static void *chan_dial(void *p)
{
	struct chan_dial *d = p;
	struct lchan_opts opts = { .timeout_ms = WAIT_MS };
	struct lchan_chan chan;

	d->ret = lchan_connect_addr(d->ctx, &d->dst, &opts, &chan);
	if (!d->ret)
		lchan_chan_close(&chan);
	return NULL;
}

/*
 * A channel's connect to a stream listener's port is refused (its program
 * would read the stream's bytes as its own protocol's), and the listener
 * goes on serving streams.
 */
TEST_F(stream_listen, channel_connect_refused)
{
	struct chan_dial c = { .ctx = &self->cctx, .dst = self->addr };

	chan_dial(&c);
	EXPECT_EQ(-ECONNREFUSED, c.ret) TH_LOG("channel connect: %s",
					       strerror(-c.ret));
	ASSERT_EQ(0, fcntl(self->lst, F_SETFL, O_NONBLOCK));
	EXPECT_EQ(-1, accept(self->lst, NULL, NULL));
	EXPECT_EQ(EAGAIN, errno);
	stream_through(_metadata, self, &self->addr, self->lst);
}

/* What a stream listener cannot be made from, whatever the device. */
TEST_F(stream_args, stream_listener_refusals)
{
	struct lchan_listen_args req = { .size = sizeof(req) };
	int fds[2], udp, tcp;

	ASSERT_EQ(0, pipe(fds));
	EXPECT_EQ(-ENOTSOCK, lchan_stream_listen(&self->ctx, fds[0], 0, NULL));
	EXPECT_EQ(-EBADF, lchan_stream_listen(&self->ctx, 999999, 0, NULL));
	udp = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_LE(0, udp);
	EXPECT_EQ(-EINVAL, lchan_stream_listen(&self->ctx, udp, 0, NULL));
	/* A TCP socket that does not listen. */
	tcp = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_LE(0, tcp);
	EXPECT_EQ(-EINVAL, lchan_stream_listen(&self->ctx, tcp, 0, NULL));
	/* An address beside the socket's, or a socket without the flag. */
	ASSERT_EQ(0, listen(tcp, 1));
	req.flags = LCHAN_FD_STREAM;
	req.sock_fd = tcp;
	req.addr.family = AF_INET;
	EXPECT_EQ(-1, ioctl(self->ctx.fd, LCHAN_IOC_LISTEN, &req));
	EXPECT_EQ(EINVAL, errno);
	req.flags = 0;
	req.addr.family = 0;
	EXPECT_EQ(-1, ioctl(self->ctx.fd, LCHAN_IOC_LISTEN, &req));
	EXPECT_EQ(EINVAL, errno);
	close(tcp);
	close(udp);
	close(fds[0]);
	close(fds[1]);
}

/*
 * LCHAN_CONNECT_NO_IWARP: over iWARP the connect fails before a byte
 * reaches the TCP server on the port; elsewhere it is a connect.
 */
TEST_F(stream_args, no_iwarp_connect)
{
	struct lchan_opts opts = {
		.flags = LCHAN_CONNECT_NO_IWARP, .timeout_ms = WAIT_MS,
	};
	struct lchan_addr a;
	socklen_t len;
	struct sockaddr_storage ss;
	int tcp, fd;

	tcp = tcp_listener(self->d.addr, strchr(self->d.addr, ':') ?
			   AF_INET6 : AF_INET, QUIET_MS);
	ASSERT_LE(0, tcp);
	len = sizeof(ss);
	ASSERT_EQ(0, getsockname(tcp, (struct sockaddr *)&ss, &len));
	ASSERT_EQ(0, lchan_addr_from_sockaddr((struct sockaddr *)&ss, &a));
	fd = lchan_stream_connect(&self->ctx, &a, &opts);
	/* Elsewhere nobody serves lchan there. */
	EXPECT_EQ(strcmp(variant->kind, "siw") ? -ECONNREFUSED :
		  -EPROTONOSUPPORT, fd);
	if (fd >= 0)
		close(fd);
	/* The TCP server saw no connection. */
	EXPECT_EQ(-1, accept(tcp, NULL, NULL));
	EXPECT_EQ(EAGAIN, errno);
	close(tcp);
}


/*
 * A listener's accept takes requests of its own kind: a stream's accept
 * only a stream's connect, a channel's only a channel's.  The other kind
 * is refused on the way (its connect fails with ECONNREFUSED), so
 * neither end of a stream ever meets a peer that is not one.
 */
TEST_F(stream_args, accept_takes_its_own_kind)
{
	struct lchan_ctx cctx = { .fd = -1 };
	struct lchan_listener lst;
	struct stream_dial d = { .ctx = &cctx };
	struct chan_dial c = { .ctx = &cctx };
	struct lchan_chan chan;
	pthread_t thr;

	ASSERT_EQ(0, lchan_ctx_open(&cctx));
	ASSERT_EQ(0, lchan_listen(&self->ctx, self->d.addr, "0", 4,
				  LCHAN_FD_NONBLOCK, &lst));
	d.dst = c.dst = lst.addr;

	/* A stream's connect, a channel's accept. */
	ASSERT_EQ(0, pthread_create(&thr, NULL, stream_dial, &d));
	EXPECT_EQ(POLLIN, poll_one(lst.fd, POLLIN, WAIT_MS));
	EXPECT_EQ(-EAGAIN, lchan_accept(&lst, NULL, &chan));
	pthread_join(thr, NULL);
	EXPECT_EQ(-ECONNREFUSED, d.fd) TH_LOG("stream connect: %s",
					      strerror(-d.fd));
	if (d.fd >= 0)
		close(d.fd);

	/* A channel's connect, a stream's accept. */
	ASSERT_EQ(0, pthread_create(&thr, NULL, chan_dial, &c));
	EXPECT_EQ(POLLIN, poll_one(lst.fd, POLLIN, WAIT_MS));
	EXPECT_EQ(-EAGAIN, lchan_stream_accept(&lst, NULL, NULL));
	pthread_join(thr, NULL);
	EXPECT_EQ(-ECONNREFUSED, c.ret) TH_LOG("channel connect: %s",
					       strerror(-c.ret));

	lchan_listener_close(&lst);
	lchan_ctx_close(&cctx);
}

TEST_HARNESS_MAIN
