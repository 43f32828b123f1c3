// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * lchan_echo: a message echo over liblchan's message layer.  tcp_echo.c is
 * the same program on TCP sockets; diff the two to see what changes.
 *
 *   lchan_echo -s [-a ADDR] [-p PORT]              serve one client
 *   lchan_echo -c HOST [-p PORT] [-n COUNT] [-S SIZE]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "liblchan.h"
#include "liblchan_msg.h"

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
	fprintf(stderr, "lchan_echo: %s: %s\n", what,
		ret ? strerror((int)-ret) : "bad data");
	return 1;
}

int main(int argc, char **argv)
{
	const char *host = NULL, *addr = NULL, *port = "18516";
	size_t size = 0;
	unsigned count = 1000;
	int server = 0, opt;
	unsigned char *out, *in;
	struct lchan_ctx ctx;
	struct lchan_msg *m;
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
		fprintf(stderr, "usage: lchan_echo -s [-a ADDR] [-p PORT] | -c HOST [-p PORT] [-n COUNT] [-S SIZE]\n");
		return 2;
	}
	out = malloc(size);
	in = malloc(size);
	if (!out || !in)
		return die("malloc", -ENOMEM);

	/* Set-up: a context, then listen + accept, or connect. */
	ret = lchan_ctx_open(&ctx);
	if (ret)
		return die("open /dev/lchan", ret);
	if (server) {
		struct lchan_listener lst;

		ret = lchan_listen(&ctx, addr, port, 1, 0, &lst);
		if (ret)
			return die("listen", ret);
		ret = lchan_msg_accept(&ctx, &lst, NULL, &m);
		lchan_listener_close(&lst);
		if (ret)
			return die("accept", ret);
		/* Echo every message until the client closes. */
		while ((ret = lchan_msg_recv(m, in, size, 0, -1)) > 0) {
			ret = lchan_msg_send(m, in, ret, 0);
			if (ret < 0)
				return die("send", ret);
		}
		if (ret < 0)
			return die("recv", ret);
		lchan_msg_close(m);
		lchan_ctx_close(&ctx);
		return 0;
	}

	ret = lchan_msg_connect(&ctx, host, port, NULL, &m);
	if (ret)
		return die("connect", ret);
	double t0 = now();

	for (unsigned i = 0; i < count; i++) {
		fill(out, i, size);
		ret = lchan_msg_send(m, out, size, 0);
		if (ret < 0)
			return die("send", ret);
		ret = lchan_msg_recv(m, in, size, 0, -1);
		if (ret < 0)
			return die("recv", ret);
		if ((size_t)ret != size || memcmp(in, out, size))
			return die("echo differs", 0);
	}
	double secs = now() - t0;

	printf("%u echoes of %zu bytes: %.2f us round trip, %.1f MB/s each way\n",
	       count, size, secs * 1e6 / count, count * (double)size / secs / 1e6);
	lchan_msg_close(m);
	lchan_ctx_close(&ctx);
	return 0;
}
