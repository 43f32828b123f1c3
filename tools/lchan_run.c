// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * liblchan-run.so, the library lchan-run(1) preloads: a program's TCP
 * connections carried by lchan stream channels where the peer serves
 * lchan, plain TCP everywhere else.
 *
 * Two calls are intercepted, and each ends with the program's descriptor
 * being a kernel socket, so that every other call (read, write, poll,
 * epoll, accept, close, fork, exec, descriptor passing) is the kernel's
 * own and needs no interception:
 *   listen()   listens, then puts a stream listener for the TCP socket in
 *              its place (lchan_stream_listen(3)): accept(2) on it returns
 *              TCP connections and stream channels alike;
 *   connect()  tries a stream channel to the address first (never over
 *              iWARP, whose connect request a plain TCP server would read)
 *              and puts it in the socket's place; else connects over TCP.
 * Where lchan cannot serve (no module, no RDMA device on the route, a
 * peer that does not serve lchan on the port), the program's socket is
 * left as it was, untouched.
 *
 * A preload is process state by nature: the context (one per process,
 * opened again in a child, whose inherited one is its parent's) and the
 * addresses that did not serve lchan are kept here, under one lock.
 */
/* dup3() and RTLD_NEXT. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "liblchan.h"

#define LCHAN_RUN_EXPORT __attribute__((visibility("default")))

/* How long a connect may try lchan before TCP is tried instead. */
#define LCHAN_RUN_CONNECT_MS	1000
/* How long an address that did not serve lchan is not tried again. */
#define LCHAN_RUN_MISS_SEC	30
#define LCHAN_RUN_MISSES	64
/* Where the context's descriptor goes: above the ones programs use. */
#define LCHAN_RUN_CTX_FD	900

struct lchan_run_miss {
	struct lchan_addr addr;
	time_t until;
};

static struct {
	pthread_mutex_t lock;
	pid_t pid;			/* the process the context is for */
	struct lchan_ctx ctx;
	int ctx_err;			/* why there is none: -errno, or 0 */
	int verbose;			/* LCHAN_RUN_DEBUG */
	unsigned connect_ms;
	struct lchan_run_miss miss[LCHAN_RUN_MISSES];
	unsigned next_miss;
	int (*connect)(int, const struct sockaddr *, socklen_t);
	int (*listen)(int, int);
} lchan_run = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.ctx = { .fd = -1 },
};

static void lchan_run_say(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void lchan_run_say(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	if (!lchan_run.verbose)
		return;
	n = snprintf(line, sizeof(line), "lchan-run[%d]: ", (int)getpid());
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	/* One write per line: lines of several processes do not mix. */
	if (write(STDERR_FILENO, line, strlen(line)) < 0)
		return;
}

__attribute__((constructor)) static void lchan_run_init(void)
{
	const char *v = getenv("LCHAN_RUN_DEBUG");
	const char *ms = getenv("LCHAN_RUN_CONNECT_MS");

	lchan_run.verbose = v && *v && strcmp(v, "0");
	lchan_run.connect_ms = ms && atoi(ms) > 0 ? (unsigned)atoi(ms) :
			       LCHAN_RUN_CONNECT_MS;
	lchan_run.connect = (int (*)(int, const struct sockaddr *,
				     socklen_t))dlsym(RTLD_NEXT, "connect");
	lchan_run.listen = (int (*)(int, int))dlsym(RTLD_NEXT, "listen");
}

/*
 * The process's context, opened on first use and again in a child (a
 * context serves the process that opened it).  Under the lock.
 */
static struct lchan_ctx *lchan_run_ctx(void)
{
	pid_t pid = getpid();
	int fd;

	if (lchan_run.pid == pid)
		return lchan_run.ctx_err ? NULL : &lchan_run.ctx;
	/* The parent's descriptor, inherited: this process's copy goes. */
	if (lchan_run.ctx.fd >= 0)
		close(lchan_run.ctx.fd);
	lchan_run.ctx.fd = -1;
	lchan_run.pid = pid;
	lchan_run.ctx_err = lchan_ctx_open(&lchan_run.ctx);
	if (lchan_run.ctx_err) {
		lchan_run_say("no lchan context (%s): TCP only\n",
			      strerror(-lchan_run.ctx_err));
		return NULL;
	}
	fd = fcntl(lchan_run.ctx.fd, F_DUPFD_CLOEXEC, LCHAN_RUN_CTX_FD);
	if (fd >= 0) {
		close(lchan_run.ctx.fd);
		lchan_run.ctx.fd = fd;
	}
	return &lchan_run.ctx;
}

static bool lchan_run_same_addr(const struct lchan_addr *a,
				const struct lchan_addr *b)
{
	return a->family == b->family && a->port == b->port &&
	       !memcmp(a->addr, b->addr, sizeof(a->addr));
}

/* Whether @addr did not serve lchan lately.  Under the lock. */
static bool lchan_run_missed(const struct lchan_addr *addr)
{
	time_t now = time(NULL);
	unsigned i;

	for (i = 0; i < LCHAN_RUN_MISSES; i++)
		if (lchan_run.miss[i].until > now &&
		    lchan_run_same_addr(&lchan_run.miss[i].addr, addr))
			return true;
	return false;
}

static void lchan_run_miss(const struct lchan_addr *addr)
{
	struct lchan_run_miss *m;

	pthread_mutex_lock(&lchan_run.lock);
	m = &lchan_run.miss[lchan_run.next_miss++ % LCHAN_RUN_MISSES];
	m->addr = *addr;
	m->until = time(NULL) + LCHAN_RUN_MISS_SEC;
	pthread_mutex_unlock(&lchan_run.lock);
}

static const char *lchan_run_fmt(const struct lchan_addr *addr, char *buf,
				 size_t len)
{
	if (lchan_addr_format(addr, buf, len) < 0)
		snprintf(buf, len, "?");
	return buf;
}

/* Loopback stays TCP: the kernel's loopback is faster than any device. */
static bool lchan_run_loopback(const struct lchan_addr *addr)
{
	static const unsigned char v6_loop[16] = { [15] = 1 };
	static const unsigned char v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (addr->family == AF_INET)
		return addr->addr[0] == 127;
	if (!memcmp(addr->addr, v6_loop, 16))
		return true;
	return !memcmp(addr->addr, v4_mapped, 12) && addr->addr[12] == 127;
}

/*
 * Whether @fd is a TCP socket lchan could carry, with @sa's address in
 * @addr: an IPv4 or IPv6 TCP socket (not one of lchan's: those answer
 * getsockopt too, but are never handed to listen or connect unbound).
 */
static bool lchan_run_tcp(int fd, const struct sockaddr *sa, socklen_t len,
			  struct lchan_addr *addr)
{
	socklen_t olen = sizeof(int);
	int type = 0, proto = 0;

	if (!sa || len < sizeof(sa_family_t) ||
	    (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
		return false;
	if ((sa->sa_family == AF_INET && len < sizeof(struct sockaddr_in)) ||
	    (sa->sa_family == AF_INET6 && len < sizeof(struct sockaddr_in6)))
		return false;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &olen) ||
	    type != SOCK_STREAM)
		return false;
	olen = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &olen) ||
	    proto != IPPROTO_TCP)
		return false;
	return !lchan_addr_from_sockaddr(sa, addr);
}

/*
 * @nfd takes @fd's place: the same descriptor number, close-on-exec and
 * status flags (O_NONBLOCK).
 */
static int lchan_run_replace(int fd, int nfd)
{
	int fl = fcntl(fd, F_GETFL), fdfl = fcntl(fd, F_GETFD);

	if (fl < 0 || fdfl < 0 ||
	    dup3(nfd, fd, fdfl & FD_CLOEXEC ? O_CLOEXEC : 0) < 0 ||
	    fcntl(fd, F_SETFL, fl) < 0) {
		close(nfd);
		return -1;
	}
	close(nfd);
	return 0;
}

/* The options a program set before connect, kept on the stream. */
static void lchan_run_copy_opts(int from, int to)
{
	static const struct { int level, name; socklen_t len; } opts[] = {
		{ SOL_SOCKET, SO_KEEPALIVE, sizeof(int) },
		{ SOL_SOCKET, SO_LINGER, sizeof(struct linger) },
		{ SOL_SOCKET, SO_RCVTIMEO, sizeof(struct timeval) },
		{ SOL_SOCKET, SO_SNDTIMEO, sizeof(struct timeval) },
		{ SOL_SOCKET, SO_PRIORITY, sizeof(int) },
		{ IPPROTO_TCP, TCP_NODELAY, sizeof(int) },
		{ IPPROTO_TCP, TCP_CORK, sizeof(int) },
		{ IPPROTO_TCP, TCP_KEEPIDLE, sizeof(int) },
		{ IPPROTO_TCP, TCP_KEEPINTVL, sizeof(int) },
		{ IPPROTO_TCP, TCP_KEEPCNT, sizeof(int) },
		{ IPPROTO_TCP, TCP_USER_TIMEOUT, sizeof(int) },
		{ IPPROTO_TCP, TCP_NOTSENT_LOWAT, sizeof(int) },
	};
	unsigned char val[sizeof(struct timeval) + sizeof(struct linger)];
	unsigned i;

	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		socklen_t len = opts[i].len;

		if (!getsockopt(from, opts[i].level, opts[i].name, val, &len))
			setsockopt(to, opts[i].level, opts[i].name, val, len);
	}
}

/* The socket's own local address, if the program bound one. */
static bool lchan_run_bound(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct lchan_addr a;

	if (getsockname(fd, (struct sockaddr *)&ss, &len) ||
	    lchan_addr_from_sockaddr((struct sockaddr *)&ss, &a))
		return false;
	return a.port != 0;
}

/* Connected already (a stream, or TCP's): the kernel answers connect. */
static bool lchan_run_connected(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	return !getpeername(fd, (struct sockaddr *)&ss, &len);
}

/*
 * A stream channel to @dst in @fd's place: 0, or -errno and @fd as it
 * was.  Under no lock: the connect waits on the wire.
 */
static int lchan_run_stream(int fd, const struct lchan_addr *dst,
			    bool nonblock)
{
	/* Non-blocking, it answers the next connect() as TCP's would. */
	struct lchan_opts opts = {
		.flags = LCHAN_CONNECT_NO_IWARP |
			 (nonblock ? LCHAN_FD_NONBLOCK : 0),
		.timeout_ms = lchan_run.connect_ms,
	};
	struct lchan_ctx ctx;
	int sfd;

	pthread_mutex_lock(&lchan_run.lock);
	if (lchan_run_missed(dst)) {
		pthread_mutex_unlock(&lchan_run.lock);
		return -ECONNREFUSED;
	}
	if (!lchan_run_ctx()) {
		pthread_mutex_unlock(&lchan_run.lock);
		return -ENODEV;
	}
	ctx = lchan_run.ctx;
	pthread_mutex_unlock(&lchan_run.lock);

	sfd = lchan_stream_connect(&ctx, dst, &opts);
	if (sfd < 0) {
		lchan_run_miss(dst);
		return sfd;
	}
	lchan_run_copy_opts(fd, sfd);
	if (lchan_run_replace(fd, sfd))
		return -errno;
	return 0;
}

LCHAN_RUN_EXPORT int connect(int fd, const struct sockaddr *sa,
			     socklen_t len)
{
	struct lchan_addr dst;
	char name[80];
	int ret, saved = errno;
	bool nonblock;

	if (!lchan_run_tcp(fd, sa, len, &dst) || lchan_run_loopback(&dst) ||
	    lchan_run_bound(fd) || lchan_run_connected(fd))
		return lchan_run.connect(fd, sa, len);
	nonblock = fcntl(fd, F_GETFL) & O_NONBLOCK;
	ret = lchan_run_stream(fd, &dst, nonblock);
	lchan_run_say("connect fd %d to %s: %s%s%s\n", fd,
		      lchan_run_fmt(&dst, name, sizeof(name)),
		      ret ? "TCP (" : "lchan", ret ? strerror(-ret) : "",
		      ret ? ")" : "");
	if (ret)
		return lchan_run.connect(fd, sa, len);
	/*
	 * Connected already; a non-blocking socket's program expects a
	 * connect in progress, then POLLOUT and SO_ERROR 0, which it gets.
	 */
	if (nonblock) {
		errno = EINPROGRESS;
		return -1;
	}
	errno = saved;
	return 0;
}

LCHAN_RUN_EXPORT int listen(int fd, int backlog)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct lchan_addr addr;
	struct lchan_ctx *ctx;
	char name[80];
	int ret, sfd, saved;

	ret = lchan_run.listen(fd, backlog);
	if (ret)
		return ret;
	saved = errno;
	if (getsockname(fd, (struct sockaddr *)&ss, &len) ||
	    !lchan_run_tcp(fd, (struct sockaddr *)&ss, len, &addr) ||
	    lchan_run_loopback(&addr))
		goto out;
	pthread_mutex_lock(&lchan_run.lock);
	ctx = lchan_run_ctx();
	sfd = ctx ? lchan_stream_listen(ctx, fd, 0, NULL) : -ENODEV;
	pthread_mutex_unlock(&lchan_run.lock);
	/* A listener already (listen again): nothing to do. */
	if (sfd == -EINVAL)
		goto out;
	if (sfd >= 0 && lchan_run_replace(fd, sfd))
		sfd = -errno;
	lchan_run_say("listen fd %d on %s: %s%s%s\n", fd,
		      lchan_run_fmt(&addr, name, sizeof(name)),
		      sfd < 0 ? "TCP only (" : "TCP and lchan",
		      sfd < 0 ? strerror(-sfd) : "", sfd < 0 ? ")" : "");
out:
	errno = saved;
	return 0;
}
