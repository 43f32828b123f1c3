// SPDX-License-Identifier: GPL-2.0
/*
 * A program built against liblchan's LCHAN_1.1 message accept, which took
 * the caller's context, a listener of lchan_listen() and the options: it
 * must keep running against today's library.  The symbol is bound to that
 * version as a program linked then would have it.  One process: a thread
 * connects, the main thread accepts the old way, one message each way.
 *   msg_accept_1_1 ADDR PORT
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <liblchan.h>
#include <liblchan_msg.h>

int accept_1_1(struct lchan_ctx *ctx, struct lchan_listener *lst,
	       const struct lchan_msg_opts *opts, struct lchan_msg **m);
__asm__(".symver accept_1_1, lchan_msg_accept@LCHAN_1.1");

struct client {
	struct lchan_ctx ctx;
	const char *addr, *port;
	int ret;
};

static void *client(void *p)
{
	struct client *c = p;
	struct lchan_msg *m;
	char buf[16];
	ssize_t n;

	c->ret = lchan_msg_connect(&c->ctx, c->addr, c->port, NULL, &m);
	if (c->ret)
		return NULL;
	n = lchan_msg_send(m, "ping", 5, 0);
	if (n == 5)
		n = lchan_msg_recv(m, buf, sizeof(buf), 0, 10000);
	c->ret = n == 5 && !strcmp(buf, "pong") ? 0 : n < 0 ? (int)n : -1;
	lchan_msg_close(m);
	return NULL;
}

int main(int argc, char **argv)
{
	struct lchan_listener lst;
	struct client c = { .ret = -1 };
	struct lchan_ctx ctx;
	struct lchan_msg *m;
	pthread_t thr;
	char buf[16];
	ssize_t n;
	int ret;

	if (argc != 3)
		return 2;
	c.addr = argv[1];
	c.port = argv[2];
	ret = lchan_ctx_open(&ctx);
	if (!ret)
		ret = lchan_ctx_open(&c.ctx);
	if (!ret)
		ret = lchan_listen(&ctx, argv[1], argv[2], 1, 0, &lst);
	if (ret || pthread_create(&thr, NULL, client, &c)) {
		fprintf(stderr, "set-up: %s\n", strerror(-ret));
		return 1;
	}
	ret = accept_1_1(&ctx, &lst, NULL, &m);
	if (!ret) {
		n = lchan_msg_recv(m, buf, sizeof(buf), 0, 10000);
		if (n == 5 && !strcmp(buf, "ping"))
			n = lchan_msg_send(m, "pong", 5, 0);
		ret = n == 5 ? 0 : n < 0 ? (int)n : -1;
	}
	pthread_join(thr, NULL);
	lchan_msg_close(m);
	lchan_listener_close(&lst);
	printf("accept of LCHAN_1.1: %s, client: %s\n",
	       ret ? strerror(-ret) : "success",
	       c.ret ? strerror(-c.ret) : "success");
	return ret || c.ret;
}
