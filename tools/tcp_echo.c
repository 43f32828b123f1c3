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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

static void fill(unsigned char *p, unsigned i, size_t len)
{
	for (size_t j = 0; j < len; j++)
		p[j] = (unsigned char)(i * 31 + j * 7 + 1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int die(const char *what, long ret)
{
	fprintf(stderr, "tcp_echo: %s: %s\n", what,
		ret ? strerror((int)-ret) : "bad data");
	return 1;
}

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
	const char *host = NULL, *addr = NULL, *port = "18517";
	size_t size = 0;
	unsigned count = 1000;
	int server = 0, opt;
	unsigned char *out, *in;
	int fd, one = 1;
	long ret;

	while ((opt = getopt(argc, argv, "sc:a:p:n:S:")) != -1) {
		switch (opt) {
		case 's': server = 1; break;
		case 'c': host = optarg; break;
		case 'a': addr = optarg; break;
		case 'p': port = optarg; break;
		case 'n': count = strtoul(optarg, NULL, 0); break;
		case 'S': size = strtoul(optarg, NULL, 0); break;
		default: return 2;
		}
	}
	if (!size)	/* the server takes any message up to 4 MiB */
		size = server ? 4u << 20 : 64;
	if (server == !!host) {
		fprintf(stderr, "usage: tcp_echo -s [-a ADDR] [-p PORT] | -c HOST [-p PORT] [-n COUNT] [-S SIZE]\n");
		return 2;
	}
	out = malloc(size);
	in = malloc(size);
	if (!out || !in)
		return die("malloc", -ENOMEM);

	/* Set-up: listen + accept, or connect. */
	if (server) {
		int lst = tcp_socket(addr, port, 1);

		if (lst < 0)
			return die("listen", lst);
		fd = accept(lst, NULL, NULL);
		close(lst);
		if (fd < 0)
			return die("accept", -errno);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		/* Echo every message until the client closes. */
		while ((ret = msg_recv(fd, in, size)) > 0) {
			ret = msg_send(fd, in, ret);
			if (ret < 0)
				return die("send", ret);
		}
		if (ret < 0)
			return die("recv", ret);
		close(fd);
		return 0;
	}

	fd = tcp_socket(host, port, 0);
	if (fd < 0)
		return die("connect", fd);
	double t0 = now();

	for (unsigned i = 0; i < count; i++) {
		fill(out, i, size);
		ret = msg_send(fd, out, size);
		if (ret < 0)
			return die("send", ret);
		ret = msg_recv(fd, in, size);
		if (ret < 0)
			return die("recv", ret);
		if ((size_t)ret != size || memcmp(in, out, size))
			return die("echo differs", 0);
	}
	double secs = now() - t0;

	printf("%u echoes of %zu bytes: %.2f us round trip, %.1f MB/s each way\n",
	       count, size, secs * 1e6 / count, count * (double)size / secs / 1e6);
	close(fd);
	return 0;
}
