// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * tcp_echo: lchan_echo.c on plain TCP sockets, line for line where it can
 * be.  TCP is a byte stream, so this one frames messages itself (a 4-byte
 * length before each), which the lchan message layer does for you.
 *
 *   tcp_echo -s [-a ADDR] [-p PORT] [-L]           serve one client
 *   tcp_echo -c HOST [-p PORT] [-n COUNT] [-S SIZE] [-L]
 *
 * -L carries the same byte stream over an lchan stream channel
 * (LCHAN_FD_STREAM): only the set-up differs, every call on the
 * connection is the same socket call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "cli.h"
#include "echo_util.h"
#include "liblchan.h"

/* The framing TCP needs: all of [p, p + len) or an error. */
static long io_all(int fd, void *p, size_t len, int out)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = out ? send(fd, (char *)p + done, len - done, MSG_NOSIGNAL)
				: recv(fd, (char *)p + done, len - done, 0);
		if (n == 0)
			return done ? -EPROTO : 0;
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0)
			done += n;
	}
	return 1;
}

static long msg_send(int fd, const void *buf, size_t len)
{
	uint32_t hdr = htonl((uint32_t)len);
	long ret = io_all(fd, &hdr, sizeof(hdr), 1);

	if (ret > 0)
		ret = io_all(fd, (void *)buf, len, 1);
	return ret < 0 ? ret : (long)len;
}

static long msg_recv(int fd, void *buf, size_t cap)
{
	uint32_t hdr;
	long ret = io_all(fd, &hdr, sizeof(hdr), 0);

	if (ret <= 0)
		return ret;			/* 0: end of stream */
	if (ntohl(hdr) > cap)
		return -EMSGSIZE;
	ret = io_all(fd, buf, ntohl(hdr), 0);
	return ret < 0 ? ret : (long)ntohl(hdr);
}

static int tcp_socket(const char *host, const char *port, int server)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = server ? AI_PASSIVE : 0,
	}, *ai;
	int fd, one = 1;

	if (getaddrinfo(host, port, &hints, &ai))
		return -EHOSTUNREACH;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (server ? bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 1)
			   : connect(fd, ai->ai_addr, ai->ai_addrlen)) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(ai);
	return fd < 0 ? -errno : fd;
}

/*
 * The connection: the server's accepted one, or the client's, over TCP
 * or, with -L, a stream channel of @ctx; an fd, or -errno with the step
 * that failed in @what.
 */
static int echo_connection(struct lchan_ctx *ctx, const struct echo_opts *o,
			   const char **what)
{
	struct lchan_listener lst;
	struct lchan_addr dst;
	int fd, lfd;

	*what = o->server ? "listen" : "connect";
	if (o->stream && !o->server) {
		fd = lchan_addr_parse(o->addr, o->port, &dst);
		return fd ? fd : lchan_stream_connect(ctx, &dst, NULL);
	}
	if (o->stream) {
		fd = lchan_listen(ctx, o->addr, o->port, 1, 0, &lst);
		if (fd)
			return fd;
		*what = "accept";
		fd = lchan_stream_accept(&lst, NULL, NULL);
		lchan_listener_close(&lst);
		return fd;
	}
	if (!o->server)
		return tcp_socket(o->addr, o->port, 0);
	lfd = tcp_socket(o->addr, o->port, 1);
	if (lfd < 0)
		return lfd;
	*what = "accept";
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		fd = -errno;
	close(lfd);
	return fd;
}

int main(int argc, char **argv)
{
	struct echo_opts o;
	struct lchan_ctx ctx;
	unsigned char *out, *in;
	const char *what;
	int fd, one = 1;
	long ret;

	echo_opts_parse(&o, "tcp_echo", "18517", false, argc, argv);
	ret = echo_buffers(&o, &out, &in);
	if (ret)
		return ret;
	if (o.stream) {
		ret = lchan_ctx_open(&ctx);
		if (ret)
			return cli_open_failed(LCHAN_DEVICE_PATH, ret);
	}
	fd = echo_connection(&ctx, &o, &what);
	if (fd < 0)
		return echo_die(&o, what, fd);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

	if (o.server) {
		/* Echo every message until the client closes. */
		while ((ret = msg_recv(fd, in, o.size)) > 0) {
			ret = msg_send(fd, in, ret);
			if (ret < 0)
				return echo_die(&o, "send", ret);
		}
		if (ret < 0)
			return echo_die(&o, "recv", ret);
		close(fd);
		return 0;
	}

	double t0 = now_s();

	for (unsigned i = 0; i < o.count; i++) {
		echo_fill(out, i, o.size);
		ret = msg_send(fd, out, o.size);
		if (ret < 0)
			return echo_die(&o, "send", ret);
		ret = echo_check(&o, out, in, msg_recv(fd, in, o.size));
		if (ret)
			return ret;
	}
	echo_report(&o, t0);
	close(fd);
	return 0;
}
