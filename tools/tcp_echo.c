// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * tcp_echo: lchan_echo.c on plain TCP sockets, line for line where it can
 * be.  TCP is a byte stream, so this one frames messages itself (a 4-byte
 * length before each), which the lchan message layer does for you.
 *
 *   tcp_echo -s [-a ADDR] [-p PORT]                serve one client
 *   tcp_echo -c HOST [-p PORT] [-n COUNT] [-S SIZE]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "echo_util.h"

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

int main(int argc, char **argv)
{
	struct echo_opts o;
	unsigned char *out, *in;
	int fd, one = 1;
	long ret;

	echo_opts_parse(&o, "tcp_echo", "18517", false, argc, argv);
	ret = echo_buffers(&o, &out, &in);
	if (ret)
		return ret;

	/* Set-up: listen + accept, or connect. */
	if (o.server) {
		int lst = tcp_socket(o.addr, o.port, 1);

		if (lst < 0)
			return echo_die(&o, "listen", lst);
		fd = accept(lst, NULL, NULL);
		close(lst);
		if (fd < 0)
			return echo_die(&o, "accept", -errno);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
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

	fd = tcp_socket(o.addr, o.port, 0);
	if (fd < 0)
		return echo_die(&o, "connect", fd);
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
