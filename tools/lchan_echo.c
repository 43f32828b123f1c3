// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * lchan_echo: a message echo over liblchan's message layer.  tcp_echo.c is
 * the same program on TCP sockets; diff the two to see what changes
 * (what they share is in echo_util.c).
 *
 *   lchan_echo -s [-a ADDR] [-p PORT]              serve one client
 *   lchan_echo -c HOST [-p PORT] [-n COUNT] [-S SIZE]
 */
#define _GNU_SOURCE

#include "cli.h"
#include "echo_util.h"
#include "liblchan.h"
#include "liblchan_msg.h"

int main(int argc, char **argv)
{
	struct echo_opts o;
	unsigned char *out, *in;
	struct lchan_ctx ctx;
	struct lchan_msg *m;
	long ret;

	echo_opts_parse(&o, "lchan_echo", "18516", true, argc, argv);
	ret = echo_buffers(&o, &out, &in);
	if (ret)
		return ret;

	/* Set-up: a context, then listen + accept, or connect. */
	ret = lchan_ctx_open(&ctx);
	if (ret)
		return cli_open_failed(LCHAN_DEVICE_PATH, ret);
	if (o.server) {
		struct lchan_msg_listener *lst;

		ret = lchan_msg_listen(&ctx, o.addr, o.port, 1, NULL, &lst);
		if (ret)
			return echo_die(&o, "listen", ret);
		ret = lchan_msg_accept(lst, -1, &m);
		lchan_msg_listener_close(lst);
		if (ret)
			return echo_die(&o, "accept", ret);
		/* Echo every message until the client closes. */
		while ((ret = lchan_msg_recv(m, in, o.size, 0, -1)) > 0) {
			ret = lchan_msg_send(m, in, ret, 0);
			if (ret < 0)
				return echo_die(&o, "send", ret);
		}
		if (ret < 0)
			return echo_die(&o, "recv", ret);
		lchan_msg_close(m);
		lchan_ctx_close(&ctx);
		return 0;
	}

	ret = lchan_msg_connect(&ctx, o.addr, o.port, NULL, &m);
	if (ret)
		return echo_die(&o, "connect", ret);
	double t0 = now_s();

	for (unsigned i = 0; i < o.count; i++) {
		echo_fill(out, i, o.size);
		ret = lchan_msg_send(m, out, o.size, 0);
		if (ret < 0)
			return echo_die(&o, "send", ret);
		ret = echo_check(&o, out, in, lchan_msg_recv(m, in, o.size, 0, -1));
		if (ret)
			return ret;
	}
	echo_report(&o, t0);
	lchan_msg_close(m);
	lchan_ctx_close(&ctx);
	return 0;
}
