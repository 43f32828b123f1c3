/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <liblchan.h>
#include <liblchan_msg.h>

int main(int argc, char **argv)		/* msg_server ADDR PORT */
{
	static char buf[65536];
	struct lchan_msg_listener *l = NULL;
	struct lchan_msg *m = NULL;
	struct lchan_ctx ctx;
	ssize_t n = -EINVAL;

	if (argc == 3 && !(n = lchan_ctx_open(&ctx))) {
		n = lchan_msg_listen(&ctx, argv[1], argv[2], 1, NULL, &l);
		lchan_ctx_close(&ctx);		/* l keeps what it needs */
	}
	if (!n)
		n = lchan_msg_accept(l, 30000, &m);
	if (!n)		/* one message; 0 if the client closed instead */
		n = lchan_msg_recv(m, buf, sizeof(buf), 0, 10000);
	if (n > 0)	/* echo it: returns once the client has taken it */
		n = lchan_msg_send(m, buf, (size_t)n, 0);
	lchan_msg_close(m);
	lchan_msg_listener_close(l);
	fprintf(n > 0 ? stdout : stderr, "msg_server: %s\n",
		n > 0 ? "echoed a message" : strerror(n ? (int)-n : ENODATA));
	return n <= 0;
}
